/* SPDX-License-Identifier: GPL-2.0+ */
/*
 * The 32-bit code of compat32.c, and call32(), which runs it: a far jump
 * to __USER32_CS on a stack below 4 GiB, and one back to __USER_CS (far
 * jumps, not a far call and return: QEMU's TCG does the stack accesses of
 * those as supervisor accesses, which SMAP refuses).
 *
 * c32_func(eax): push %ebp; mov %esp,%ebp; call c32_leaf; call c32_leaf2;
 * pop %ebp; ret. c32_leaf: inc %eax (0x40, a REX prefix in 64-bit mode);
 * jecxz (not taken); add $2,%eax; ret. c32_leaf2: nop; inc %eax; ret.
 * Returns eax + 4.
 */
	.text
	.code32
	.globl c32_func, c32_push, c32_mov, c32_call, c32_leaf, c32_inc
	.globl c32_jecxz, c32_add, c32_ret, c32_leaf2
c32_entry:
	movl	$0x2b, %ecx
	movl	%ecx, %ds
	movl	%ecx, %es
	call	c32_func
	ljmp	$0x33, $back64
c32_func:
c32_push:
	push	%ebp
c32_mov:
	mov	%esp, %ebp
c32_call:
	call	c32_leaf
	call	c32_leaf2
	pop	%ebp
	ret
c32_leaf:
c32_inc:
	inc	%eax
c32_jecxz:
	jecxz	1f
c32_add:
	add	$2, %eax
1:
c32_ret:
	ret
c32_leaf2:
	nop
	inc	%eax
	ret

	.code64
/* unsigned long call32(unsigned long eax, void *stack_top) */
	.globl call32
call32:
	push	%rbx
	push	%rbp
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	%rsp, saved_rsp(%rip)
	mov	%rdi, %rax
	mov	%rsi, %rsp
	ljmp	*farptr(%rip)
back64:
	mov	saved_rsp(%rip), %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbp
	pop	%rbx
	ret

	.data
saved_rsp:
	.quad	0
farptr:
	.long	c32_entry
	.word	0x23

	.section .note.GNU-stack, "", @progbits
