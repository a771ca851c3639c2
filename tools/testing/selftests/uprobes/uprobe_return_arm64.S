/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arm64 probe targets of uprobe_return written in assembly, with the
 * names and results of uprobe_return.S: a function that leaves a known
 * value in x0 ... x29 and known condition flags, and a caller that
 * records all of them (and the stack at its sp) right after the call
 * returns; a function that tail-calls another.
 */

#include "uprobe_asm.inc"
#include "uprobe_return.h"

	.section .rodata
	.balign 8
/*
 * The values ur_regs_fn() leaves in x0 ... x29, in the order of struct
 * ur_regs; then the four words ur_regs_call() keeps at its sp across the
 * call.
 */
	.globl ur_regs_want, ur_regs_canary
ur_regs_want:
	.quad 0x8a1d3b5c7e902401, 0x8b2e4c6d8fa13512, 0x8c3f5d7e90b24623
	.quad 0x8d406e8fa1c35734, 0x8e517f90b2d46845, 0x8f6280a1c3e57956
	.quad 0x907391b2d4f68a67, 0x9184a2c3e5079b78, 0x9295b3d4f618ac89
	.quad 0x93a6c4e50729bd9a, 0x94b7d5f6183acea0, 0x95c8e607294bdfb1
	.quad 0x96d9f7183a5ce0c2, 0x97ea08294b6df1d3, 0x98fb193a5c7e02e4
	.quad 0x990c2a4b6d8f13f5, 0x9a1d3b5c7ea02406, 0x9b2e4c6d8fb13517
	.quad 0x9c3f5d7e90c24628, 0x9d406e8fa1d35739, 0x9e517f90b2e4684a
	.quad 0x9f6280a1c3f5795b, 0xa07391b2d4068a6c, 0xa184a2c3e5179b7d
	.quad 0xa295b3d4f628ac8e, 0xa3a6c4e50739bd9f, 0xa4b7d5f6184aceb0
	.quad 0xa5c8e607295bdfc1, 0xa6d9f7183a6ce0d2, 0xa7ea08294b7df1e3
ur_regs_canary:
	.quad 0x5afec0de00000000, 0x5afec0de11111111
	.quad 0x5afec0de22222222, 0x5afec0de33333333

	.bss
	.balign 8
/* struct ur_regs filled by ur_regs_call(); its sp before the call */
	.globl ur_regs_out, ur_regs_sp
ur_regs_out:
	.skip UR_REGS_SIZE
ur_regs_sp:
	.skip 8

	.text

/*
 * void ur_regs_fn(void): the return-probed function.  Sets N, C and V and
 * clears Z, then loads ur_regs_want[i] into x0 ... x29, x29 last (it
 * points at the table until then).
 */
FUNC(ur_regs_fn)
	mov	x16, #0xb0000000		/* UR_FLAGS_WANT: N, C, V */
	msr	nzcv, x16
	adrp	x29, ur_regs_want
	add	x29, x29, :lo12:ur_regs_want
	ldp	x0, x1, [x29, #8 * 0]
	ldp	x2, x3, [x29, #8 * 2]
	ldp	x4, x5, [x29, #8 * 4]
	ldp	x6, x7, [x29, #8 * 6]
	ldp	x8, x9, [x29, #8 * 8]
	ldp	x10, x11, [x29, #8 * 10]
	ldp	x12, x13, [x29, #8 * 12]
	ldp	x14, x15, [x29, #8 * 14]
	ldp	x16, x17, [x29, #8 * 16]
	ldp	x18, x19, [x29, #8 * 18]
	ldp	x20, x21, [x29, #8 * 20]
	ldp	x22, x23, [x29, #8 * 22]
	ldp	x24, x25, [x29, #8 * 24]
	ldp	x26, x27, [x29, #8 * 26]
	ldr	x28, [x29, #8 * 28]
	ldr	x29, [x29, #8 * 29]
	ret
END(ur_regs_fn)

/*
 * void ur_regs_call(void): puts ur_regs_canary[0..3] at [sp, #0..31],
 * notes sp in ur_regs_sp, calls ur_regs_fn() from ur_regs_ret - 4 and
 * then, touching only x30 (the return address, not in struct ur_regs)
 * before, stores x0 ... x29 in ur_regs_out; then sp, nzcv and the four
 * words at sp.  Preserves the callee-saved registers.
 */
FUNC(ur_regs_call)
	stp	x29, x30, [sp, #-96]!
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	sub	sp, sp, #32
	adrp	x9, ur_regs_canary
	add	x9, x9, :lo12:ur_regs_canary
	ldp	x10, x11, [x9]
	stp	x10, x11, [sp]
	ldp	x10, x11, [x9, #16]
	stp	x10, x11, [sp, #16]
	adrp	x9, ur_regs_sp
	mov	x10, sp
	str	x10, [x9, :lo12:ur_regs_sp]
	bl	ur_regs_fn
LABEL(ur_regs_ret)
	adrp	x30, ur_regs_out
	add	x30, x30, :lo12:ur_regs_out
	stp	x0, x1, [x30, #8 * 0]
	stp	x2, x3, [x30, #8 * 2]
	stp	x4, x5, [x30, #8 * 4]
	stp	x6, x7, [x30, #8 * 6]
	stp	x8, x9, [x30, #8 * 8]
	stp	x10, x11, [x30, #8 * 10]
	stp	x12, x13, [x30, #8 * 12]
	stp	x14, x15, [x30, #8 * 14]
	stp	x16, x17, [x30, #8 * 16]
	stp	x18, x19, [x30, #8 * 18]
	stp	x20, x21, [x30, #8 * 20]
	stp	x22, x23, [x30, #8 * 22]
	stp	x24, x25, [x30, #8 * 24]
	stp	x26, x27, [x30, #8 * 26]
	stp	x28, x29, [x30, #8 * 28]
	mov	x0, sp
	mrs	x1, nzcv
	stp	x0, x1, [x30, #UR_SP]
	ldp	x0, x1, [sp]
	stp	x0, x1, [x30, #UR_CANARY]
	ldp	x0, x1, [sp, #16]
	stp	x0, x1, [x30, #UR_CANARY + 16]
	add	sp, sp, #32
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	x29, x30, [sp], #96
	ret
END(ur_regs_call)

/* long ur_tail_inner(long x): 2 * x + 1 */
FUNC(ur_tail_inner)
	add	x0, x0, x0
	add	x0, x0, #1
	ret
END(ur_tail_inner)

/* long ur_tail_outer(long x): ur_tail_inner(x + 10), by a tail call */
FUNC(ur_tail_outer)
	add	x0, x0, #10
	b	ur_tail_inner
END(ur_tail_outer)

	.section .note.GNU-stack, "", %progbits
