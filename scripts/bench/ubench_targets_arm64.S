/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of ubench on arm64, under the names of the x86-64 ones
 * (ubench_targets.S) so that ubench.c is one program: each ub_<name> is a
 * function whose probed instruction is at ub_<name>_at. The rows' labels
 * (ubench.c, UB_L_*) say which instruction each one is here: push and pop
 * are the stp and ldp of a frame record, rip_load an adrp, rip_store an
 * add of an extended register (not emulated: it runs out of line), call a
 * bl, jmp a b, jcc a taken cbz. arm64 has no jump sites: nop5, mov5 and
 * sdt5 exist only so that ubench links.
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

	/* called with a string pointer in x0 */
	target	strarg
	at	strarg
	nop
	ret

	target	push
	at	push
	stp	x29, x30, [sp, #-16]!
	ldp	x29, x30, [sp], #16
	ret

	target	pop
	stp	x29, x30, [sp, #-16]!
	at	pop
	ldp	x29, x30, [sp], #16
	ret

	target	mov
	at	mov
	mov	x0, x1
	ret

	target	add
	at	add
	add	x0, x0, #1
	ret

	target	rip_load
	at	rip_load
	adrp	x0, ub_var
	ret

	target	rip_store
	at	rip_store
	add	x0, x0, x0, uxtx
	ret

	target	call
	stp	x29, x30, [sp, #-16]!
	at	call
	bl	ub_leaf
	ldp	x29, x30, [sp], #16
	ret

	target	jmp
	at	jmp
	b	ub_leaf

	target	jcc
	mov	x0, #0
	at	jcc
	cbz	x0, ub_leaf
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
	adrp	x1, ub_sem
	ldrh	w1, [x1, :lo12:ub_sem]
	cbz	w1, 1f
	at	sdt
	nop
1:	ret

	/* no jump sites on arm64: plain nops */
	target	nop5
	at	nop5
	nop
	ret

	target	mov5
	at	mov5
	nop
	ret

	target	sdt5
	at	sdt5
	nop
	ret

	/* UB_MANY probe sites in a row, for the registration rows */
	target	many
	at	many
	.rept	10000
	nop
	.endr
	ret

	.data
	.balign	2
	.globl	ub_sem, ub_sem5
ub_sem:	.short	0
ub_sem5: .short	0

	.section .note.GNU-stack, "", @progbits
