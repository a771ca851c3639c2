/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arm64 probe targets of uprobe_frontend written in assembly, with the
 * names, labels and results of uprobe_frontend.S, so that stack layouts,
 * return addresses and the probed instructions are exact.
 */

#include "uprobe_asm.inc"

	.text

/*
 * void fe_stack(uint64_t *sp): below its frame record stores 0x5a5a, then
 * 0x6b6b, then 0x7c7c, each below the last (x86's two pushes, and a word
 * where x86's call pushes the return address: arm64's bl leaves that in
 * x30), and calls fe_stack_callee(sp) from fe_stack_ret - 4, which stores
 * sp as its first instruction sees it. At fe_stack_callee the stack holds
 * 0x7c7c, 0x6b6b, 0x5a5a, 0; x30 holds fe_stack_ret.
 */
FUNC(fe_stack)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	mov	x9, #0x5a5a
	stp	x9, xzr, [sp, #-16]!
	mov	x9, #0x7c7c
	mov	x10, #0x6b6b
	stp	x9, x10, [sp, #-16]!
	bl	fe_stack_callee
LABEL(fe_stack_ret)
	add	sp, sp, #32
	ldp	x29, x30, [sp], #16
	ret
END(fe_stack)

FUNC(fe_stack_callee)
	mov	x1, sp
	str	x1, [x0]
	ret
END(fe_stack_callee)

/*
 * long fe_retcall(long x): fe_retfunc(x), called from fe_retcall_ret - 4;
 * long fe_retfunc(long x): 3 * x + 1.
 */
FUNC(fe_retcall)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	fe_retfunc
LABEL(fe_retcall_ret)
	ldp	x29, x30, [sp], #16
	ret
END(fe_retcall)

FUNC(fe_retfunc)
	add	x0, x0, x0, lsl #1
	add	x0, x0, #1
	ret
END(fe_retfunc)

/*
 * const void *fe_passcall(const void *p): fe_pass(p), which returns to
 * fe_passcall_ret; const void *fe_pass(const void *p): p, through x9 --
 * the probe on its entry is on a mov between registers, as on x86.
 */
FUNC(fe_passcall)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	fe_pass
LABEL(fe_passcall_ret)
	ldp	x29, x30, [sp], #16
	ret
END(fe_passcall)

FUNC(fe_pass)
	mov	x9, x0
	mov	x0, x9
	ret
END(fe_pass)

/* long fe_nop(long x): x + 1 -- the probe is on a nop (emulated) */
FUNC(fe_nop)
LABEL(fe_nop_insn)
	nop
	add	x0, x0, #1
	ret
END(fe_nop)

/*
 * long fe_add(long x): x + 1 -- the probe is on an add with an extended
 * register, which is not emulated: stepped out of line (arm64 does not
 * boost)
 */
FUNC(fe_add)
	mov	x1, #1
LABEL(fe_add_insn)
	add	x0, x0, x1, uxtx
	ret
END(fe_add)

/*
 * long fe_ripadd(long x): x + fe_data -- fe_ripadd_insn is a pc-relative
 * literal load of fe_data, arm64's nearest kind to x86's add from a
 * RIP-relative operand (the test of that, about boosting it, runs on
 * x86 only)
 */
FUNC(fe_ripadd)
LABEL(fe_ripadd_insn)
	ldr	x1, fe_data
	add	x0, x0, x1
	ret
END(fe_ripadd)

	.section .note.GNU-stack, "", %progbits
