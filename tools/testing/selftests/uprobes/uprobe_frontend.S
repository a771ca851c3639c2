/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of uprobe_frontend written in assembly, so that stack
 * layouts, return addresses and the probed instructions are exact.
 */

#include "uprobe_asm.inc"

	.text

/*
 * void fe_stack(uint64_t *sp): pushes 0x5a5a then 0x6b6b and calls
 * fe_stack_callee(sp), which stores %rsp as its first instruction sees it.
 * At fe_stack_callee the stack holds fe_stack_ret, 0x6b6b, 0x5a5a.
 */
FUNC(fe_stack)
	push	$0x5a5a
	push	$0x6b6b
	call	fe_stack_callee
LABEL(fe_stack_ret)
	add	$16, %rsp
	ret
END(fe_stack)

FUNC(fe_stack_callee)
	mov	%rsp, (%rdi)
	ret
END(fe_stack_callee)

/*
 * long fe_retcall(long x): fe_retfunc(x), called from fe_retcall_ret - 5;
 * long fe_retfunc(long x): 3 * x + 1.
 */
FUNC(fe_retcall)
	call	fe_retfunc
LABEL(fe_retcall_ret)
	ret
END(fe_retcall)

FUNC(fe_retfunc)
	lea	1(%rdi,%rdi,2), %rax
	ret
END(fe_retfunc)

/*
 * const void *fe_passcall(const void *p): fe_pass(p), which returns to
 * fe_passcall_ret; const void *fe_pass(const void *p): p.
 */
FUNC(fe_passcall)
	call	fe_pass
LABEL(fe_passcall_ret)
	ret
END(fe_passcall)

FUNC(fe_pass)
	mov	%rdi, %rax
	ret
END(fe_pass)

/* long fe_nop(long x): x + 1 -- the probe is on a one byte nop (emulated) */
FUNC(fe_nop)
LABEL(fe_nop_insn)
	nop
	lea	1(%rdi), %rax
	ret
END(fe_nop)

/* long fe_add(long x): x + 1 -- the probe is on add $1, %rax (stepped) */
FUNC(fe_add)
	mov	%rdi, %rax
LABEL(fe_add_insn)
	add	$1, %rax
	ret
END(fe_add)

/*
 * long fe_ripadd(long x): x + fe_data -- the probe is on an add from a
 * RIP-relative operand (boosted with a scratch register; stepped by
 * stock 6.1)
 */
FUNC(fe_ripadd)
	mov	%rdi, %rax
LABEL(fe_ripadd_insn)
	add	fe_data(%rip), %rax
	ret
END(fe_ripadd)

	.section .note.GNU-stack, "", @progbits
