/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of ubench: each ub_<name> is a function whose probed
 * instruction is at ub_<name>_at (its first instruction unless said
 * otherwise), followed by what returns to the caller.
 */
	.data
	.balign	8
	.globl	ub_var
ub_var:	.quad	1

	.text
	.macro	target name
	.globl	ub_\name, ub_\name\()_at
	.type	ub_\name, @function
	.balign	16
ub_\name:
	.endm

	.macro	at name
ub_\name\()_at:
	.endm

	target	nop
	at	nop
	nop
	ret

	/* called with a string pointer in %rdi */
	target	strarg
	at	strarg
	nop
	ret

	target	push
	at	push
	push	%rbp
	pop	%rbp
	ret

	target	pop
	push	%rbp
	at	pop
	pop	%rbp
	ret

	target	mov
	at	mov
	mov	%rdi, %rax
	ret

	target	add
	at	add
	add	$1, %rax
	ret

	target	rip_load
	at	rip_load
	mov	ub_var(%rip), %rax
	ret

	target	rip_store
	at	rip_store
	mov	%rax, ub_var(%rip)
	ret

	target	call
	at	call
	call	ub_leaf
	ret

	target	jmp
	at	jmp
	jmp	ub_leaf

	target	jcc
	xor	%eax, %eax
	at	jcc
	jz	ub_leaf
	ret

	target	ret
	at	ret
	ret

	/* probe + return probe on a small function */
	target	retfn
	at	retfn
	nop
	ret

	/* called by call and jmp */
	.globl	ub_leaf
ub_leaf:
	ret

	/*
	 * Called around each timed loop: make bench's QEMU plugin
	 * (exccount.c) writes its counts when it runs.
	 */
	.globl	ub_mark
	.type	ub_mark, @function
	.balign	16
ub_mark:
	ret

	/* an SDT-style marker guarded by the semaphore ub_sem */
	target	sdt
	cmpw	$0, ub_sem(%rip)
	je	1f
	at	sdt
	nop
1:	ret

	/* a 5-byte nop: a site that can become a jump site */
	target	nop5
	at	nop5
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00	/* nopl 0x0(%rax,%rax,1) */
	ret

	/* a 5-byte mov of an immediate (boosted) */
	target	mov5
	at	mov5
	.byte	0xb9, 0x78, 0x56, 0x34, 0x12	/* mov $0x12345678,%ecx */
	ret

	/* the SDT marker above, its marker a 5-byte nop */
	target	sdt5
	cmpw	$0, ub_sem5(%rip)
	je	1f
	at	sdt5
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
1:	ret

	/* UB_MANY probe sites in a row, for the registration rows */
	target	many
	at	many
	.rept	10000
	nop
	.endr
	ret

	.data
	.globl	ub_sem
	.balign	2
ub_sem:	.short	0
	.globl	ub_sem5
	.balign	2
ub_sem5:	.short	0

	.section .note.GNU-stack, "", @progbits
