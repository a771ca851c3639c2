/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arm64 probe targets: those of uprobe_targets.S that the suites built
 * for arm64 use, with the same names, labels and results. Prototypes are
 * in uprobe_targets.h.
 */

#include "uprobe_asm.inc"

	.text

/* long ui_nop(long x): x + 1 -- probe on a nop */
FUNC(ui_nop)
LABEL(ui_nop_insn)
	nop
	add	x0, x0, #1
	ret
END(ui_nop)

/* long ui_add(long x, long y): x + y plus the carry of that addition */
FUNC(ui_add)
LABEL(ui_add_insn)
	adds	x0, x0, x1
	adc	x0, x0, xzr
	ret
END(ui_add)

/* long ui_ret(long x): x + 1 -- probe on the ret */
FUNC(ui_ret)
	add	x0, x0, #1
LABEL(ui_ret_insn)
	ret
END(ui_ret)

/* uint64_t tfs_get_sp(void): sp as seen by its first instruction */
FUNC(tfs_get_sp)
	mov	x0, sp
	ret
END(tfs_get_sp)

/*
 * long tfs_stackn(long a, long b): a + b.  At tfs_stackn_probe the stack
 * holds b, a, 0x1234 (from the top).
 */
FUNC(tfs_stackn)
	sub	sp, sp, #32
	mov	x2, #0x1234
	stp	x1, x0, [sp]
	str	x2, [sp, #16]
LABEL(tfs_stackn_probe)
	add	x0, x0, x1
	add	sp, sp, #32
	ret
END(tfs_stackn)

/*
 * long fm_pure(long x): 3 * x + 1 -- no memory and no pc-relative
 * operand, so it also runs from another mapping of this file.
 */
	.balign 64
FUNC(fm_pure)
	add	x0, x0, x0, lsl #1
	add	x0, x0, #1
	ret
END(fm_pure)

	.section .note.GNU-stack, "", %progbits
