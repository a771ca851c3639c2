/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arm64 probe targets of uprobe_clients_gdb: those of
 * uprobe_clients_gdb.S, with the same names, labels and results, linked
 * into the suite (for its ptrace tests) and into uprobe_clients_gdb_target
 * (the program its gdb runs). Every instruction has a label, so that the
 * test knows where each single-step must stop; call frame information lets
 * gdb unwind them. Prototypes are in uprobe_clients_gdb.h.
 */

#include "uprobe_asm.inc"

	.data
	.balign 8
	.globl ug_data
ug_data:
.Lug_data:
	.quad 100

	.text

/*
 * long ug_body(long x): x + 1 + ug_data, through one instruction of each
 * way ours runs a probed instruction: emulated (the nop, the stp and ldp
 * of a pair on sp, which ug_push_insn and ug_pop_insn name, the literal
 * load of ug_data at ug_rip_insn, which stock 6.1 refuses to probe) and
 * stepped out of line (the add of an extended register at ug_add_insn,
 * which ours does not emulate). ug_mov_insn, the instruction that makes
 * the result, is an add of two registers (emulated).
 */
FUNC(ug_body)
	.cfi_startproc
	mov	x1, #1
LABEL(ug_nop_insn)
	nop
LABEL(ug_push_insn)
	stp	x0, x1, [sp, #-16]!
	.cfi_adjust_cfa_offset 16
LABEL(ug_pop_insn)
	ldp	x2, x3, [sp], #16
	.cfi_adjust_cfa_offset -16
LABEL(ug_add_insn)
	add	x2, x2, x3, uxtx
LABEL(ug_rip_insn)
	ldr	x3, .Lug_data
LABEL(ug_mov_insn)
	add	x0, x2, x3
LABEL(ug_body_ret)
	ret
	.cfi_endproc
LABEL(ug_body_end)
END(ug_body)

/*
 * long ug_caller(long x): 2 * ug_body(x); ug_caller_ret follows the call,
 * ug_caller_next and ug_caller_last are the instructions after it.
 */
FUNC(ug_caller)
	.cfi_startproc
	stp	x29, x30, [sp, #-16]!
	.cfi_adjust_cfa_offset 16
	.cfi_rel_offset x29, 0
	.cfi_rel_offset x30, 8
	bl	ug_body
LABEL(ug_caller_ret)
	add	x0, x0, x0
LABEL(ug_caller_next)
	ldp	x29, x30, [sp], #16
	.cfi_adjust_cfa_offset -16
	.cfi_restore x29
	.cfi_restore x30
LABEL(ug_caller_last)
	ret
	.cfi_endproc
LABEL(ug_caller_end)
END(ug_caller)

	.section .note.GNU-stack, "", @progbits
