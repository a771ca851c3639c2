/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of uprobe_clients_gdb, linked into the suite (for its
 * ptrace tests) and into uprobe_clients_gdb_target (the program its gdb
 * runs). Every instruction has a label, so that the test knows where each
 * single-step must stop; call frame information lets gdb unwind them.
 * Prototypes are in uprobe_clients_gdb.h.
 */

#include "uprobe_asm.inc"

	.data
	.balign 8
	.globl ug_data
ug_data:	.quad 100

	.text

/*
 * long ug_body(long x): x + 1 + ug_data, through one instruction of each
 * kind the kernel runs a probed instruction by: emulated (nop, push),
 * boosted (add $1), boosted with a scratch register (a RIP-relative add;
 * stepped by stock 6.1).
 */
FUNC(ug_body)
	.cfi_startproc
	mov	%rdi, %rax
LABEL(ug_nop_insn)
	nop
LABEL(ug_push_insn)
	push	%rax
	.cfi_adjust_cfa_offset 8
LABEL(ug_pop_insn)
	pop	%rcx
	.cfi_adjust_cfa_offset -8
LABEL(ug_add_insn)
	add	$1, %rcx
LABEL(ug_rip_insn)
	add	ug_data(%rip), %rcx
LABEL(ug_mov_insn)
	mov	%rcx, %rax
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
	sub	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	ug_body
LABEL(ug_caller_ret)
	add	%rax, %rax
LABEL(ug_caller_next)
	add	$8, %rsp
	.cfi_adjust_cfa_offset -8
LABEL(ug_caller_last)
	ret
	.cfi_endproc
LABEL(ug_caller_end)
END(ug_caller)

	.section .note.GNU-stack, "", @progbits
