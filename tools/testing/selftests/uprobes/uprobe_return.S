/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of uprobe_return written in assembly: a function that
 * leaves a known value in every general purpose register and known
 * arithmetic flags, and a caller that records all of them (and the stack
 * above its %rsp) right after the call returns; a function that
 * tail-calls another.
 */

#include "uprobe_asm.inc"
#include "uprobe_return.h"

	.section .rodata
	.balign 8
/*
 * The values ur_regs_fn() leaves in rax, rbx, rcx, rdx, rsi, rdi, rbp,
 * r8 ... r15, in the order of struct ur_regs; then the four words
 * ur_regs_call() keeps right above its %rsp across the call.
 */
	.globl ur_regs_want, ur_regs_canary
ur_regs_want:
	.quad 0x8a1d3b5c7e902401, 0x8b2e4c6d8fa13512, 0x8c3f5d7e90b24623
	.quad 0x8d406e8fa1c35734, 0x8e517f90b2d46845, 0x8f6280a1c3e57956
	.quad 0x907391b2d4f68a67, 0x9184a2c3e5079b78, 0x9295b3d4f618ac89
	.quad 0x93a6c4e50729bd9a, 0x94b7d5f6183acea0, 0x95c8e607294bdfb1
	.quad 0x96d9f7183a5ce0c2, 0x97ea08294b6df1d3, 0x98fb193a5c7e02e4
ur_regs_canary:
	.quad 0x5afec0de00000000, 0x5afec0de11111111
	.quad 0x5afec0de22222222, 0x5afec0de33333333

	.bss
	.balign 8
/* struct ur_regs filled by ur_regs_call(); %rsp before its call */
	.globl ur_regs_out, ur_regs_sp
ur_regs_out:
	.skip UR_REGS_SIZE
ur_regs_sp:
	.skip 8

	.text

/*
 * void ur_regs_fn(void): the return-probed function.  Sets OF, SF, AF
 * and PF (0x7fffffff + 1) and CF (stc), leaves ZF, TF and DF clear, then
 * loads ur_regs_want[i] into every general purpose register but %rsp.
 */
FUNC(ur_regs_fn)
	mov	$0x7fffffff, %eax
	add	$1, %eax
	stc
	mov	ur_regs_want + 8 * 1(%rip), %rbx
	mov	ur_regs_want + 8 * 2(%rip), %rcx
	mov	ur_regs_want + 8 * 3(%rip), %rdx
	mov	ur_regs_want + 8 * 4(%rip), %rsi
	mov	ur_regs_want + 8 * 5(%rip), %rdi
	mov	ur_regs_want + 8 * 6(%rip), %rbp
	mov	ur_regs_want + 8 * 7(%rip), %r8
	mov	ur_regs_want + 8 * 8(%rip), %r9
	mov	ur_regs_want + 8 * 9(%rip), %r10
	mov	ur_regs_want + 8 * 10(%rip), %r11
	mov	ur_regs_want + 8 * 11(%rip), %r12
	mov	ur_regs_want + 8 * 12(%rip), %r13
	mov	ur_regs_want + 8 * 13(%rip), %r14
	mov	ur_regs_want + 8 * 14(%rip), %r15
	mov	ur_regs_want + 8 * 0(%rip), %rax
	ret
END(ur_regs_fn)

/*
 * void ur_regs_call(void): puts ur_regs_canary[0..3] at 0..31(%rsp),
 * notes %rsp in ur_regs_sp, calls ur_regs_fn() from ur_regs_ret - 5 and
 * then, touching no register first, stores every general purpose
 * register, %rsp, the flags and the four words above %rsp in
 * ur_regs_out.  Preserves the callee-saved registers.
 */
FUNC(ur_regs_call)
	push	%rbx
	push	%rbp
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	sub	$40, %rsp
	mov	ur_regs_canary + 0(%rip), %rax
	mov	%rax, 0(%rsp)
	mov	ur_regs_canary + 8(%rip), %rax
	mov	%rax, 8(%rsp)
	mov	ur_regs_canary + 16(%rip), %rax
	mov	%rax, 16(%rsp)
	mov	ur_regs_canary + 24(%rip), %rax
	mov	%rax, 24(%rsp)
	mov	%rsp, ur_regs_sp(%rip)
	call	ur_regs_fn
LABEL(ur_regs_ret)
	mov	%rax, ur_regs_out + 8 * 0(%rip)
	mov	%rbx, ur_regs_out + 8 * 1(%rip)
	mov	%rcx, ur_regs_out + 8 * 2(%rip)
	mov	%rdx, ur_regs_out + 8 * 3(%rip)
	mov	%rsi, ur_regs_out + 8 * 4(%rip)
	mov	%rdi, ur_regs_out + 8 * 5(%rip)
	mov	%rbp, ur_regs_out + 8 * 6(%rip)
	mov	%r8, ur_regs_out + 8 * 7(%rip)
	mov	%r9, ur_regs_out + 8 * 8(%rip)
	mov	%r10, ur_regs_out + 8 * 9(%rip)
	mov	%r11, ur_regs_out + 8 * 10(%rip)
	mov	%r12, ur_regs_out + 8 * 11(%rip)
	mov	%r13, ur_regs_out + 8 * 12(%rip)
	mov	%r14, ur_regs_out + 8 * 13(%rip)
	mov	%r15, ur_regs_out + 8 * 14(%rip)
	mov	%rsp, ur_regs_out + UR_SP(%rip)
	pushfq
	popq	ur_regs_out + UR_FLAGS(%rip)
	mov	0(%rsp), %rax
	mov	%rax, ur_regs_out + UR_CANARY + 0(%rip)
	mov	8(%rsp), %rax
	mov	%rax, ur_regs_out + UR_CANARY + 8(%rip)
	mov	16(%rsp), %rax
	mov	%rax, ur_regs_out + UR_CANARY + 16(%rip)
	mov	24(%rsp), %rax
	mov	%rax, ur_regs_out + UR_CANARY + 24(%rip)
	cld
	add	$40, %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbp
	pop	%rbx
	ret
END(ur_regs_call)

/* long ur_tail_inner(long x): 2 * x + 1 */
FUNC(ur_tail_inner)
	lea	1(%rdi, %rdi), %rax
	ret
END(ur_tail_inner)

/* long ur_tail_outer(long x): ur_tail_inner(x + 10), by a tail call */
FUNC(ur_tail_outer)
	add	$10, %rdi
	jmp	ur_tail_inner
END(ur_tail_outer)

/* long ur_pop16(long x): x + 5, returning with ret $16 (pops two words of its caller) */
FUNC(ur_pop16)
	lea	5(%rdi), %rax
	ret	$16
END(ur_pop16)

/*
 * long ur_pop_call(long x): pushes two words and calls ur_pop16(x), which
 * pops them: its result, or -1 if the stack pointer came back wrong.
 */
FUNC(ur_pop_call)
	push	%rbx
	mov	%rsp, %rbx
	push	$0
	push	$0
	call	ur_pop16
	cmp	%rsp, %rbx
	je	1f
	mov	$-1, %rax
	mov	%rbx, %rsp
1:	pop	%rbx
	ret
END(ur_pop_call)

	.section .note.GNU-stack, "", @progbits
