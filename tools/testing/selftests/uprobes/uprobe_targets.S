/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets written in assembly so that instruction boundaries are
 * exact.  For uprobe_insn: small functions, each with a global label
 * ui_<name>_insn at the one instruction the test probes.  For
 * uprobe_tracefs: functions whose stack layout at the probe is known.
 * Prototypes are in uprobe_targets.h.
 */

#define FUNC(name)		\
	.globl name;		\
	.type name, @function;	\
name:

#define LABEL(name)		\
	.globl name;		\
name:

#define END(name)		\
	.size name, .-name

	.data
	.balign 8
	.globl ui_data, ui_store_guard_lo, ui_store_word, ui_store_guard_hi
ui_data:		.quad 0
ui_store_guard_lo:	.quad 0x5555555555555555
ui_store_word:		.quad 0
ui_store_guard_hi:	.quad 0xaaaaaaaaaaaaaaaa

	.text

/* long ui_nop(long x): x + 1 -- probe on a one byte nop */
FUNC(ui_nop)
	mov	%rdi, %rax
LABEL(ui_nop_insn)
	nop
	inc	%rax
	ret
END(ui_nop)

/* long ui_nopl(long x): x + 2 -- probe on a multi-byte nopl */
FUNC(ui_nopl)
	mov	%rdi, %rax
LABEL(ui_nopl_insn)
	nopl	0x0(%rax,%rax,1)
	add	$2, %rax
	ret
END(ui_nopl)

/* long ui_push(long x): x + 8 -- the pushed value plus the %rsp change */
FUNC(ui_push)
	mov	%rsp, %rcx
LABEL(ui_push_insn)
	push	%rdi
	sub	%rsp, %rcx
	mov	(%rsp), %rax
	add	$8, %rsp
	add	%rcx, %rax
	ret
END(ui_push)

/* long ui_pop(long x): x + 8 -- the popped value plus the %rsp change */
FUNC(ui_pop)
	push	%rdi
	mov	%rsp, %rcx
LABEL(ui_pop_insn)
	pop	%rax
	neg	%rcx
	add	%rsp, %rcx
	add	%rcx, %rax
	ret
END(ui_pop)

/* long ui_mov(long x, long y): y -- probe on mov %rsi, %rax */
FUNC(ui_mov)
	mov	%rdi, %rax
LABEL(ui_mov_insn)
	mov	%rsi, %rax
	ret
END(ui_mov)

/* long ui_add(long x, long y): x + y plus the carry of that addition */
FUNC(ui_add)
	mov	%rdi, %rax
LABEL(ui_add_insn)
	add	%rsi, %rax
	adc	$0, %rax
	ret
END(ui_add)

/* long ui_riprel_load(void): ui_data */
FUNC(ui_riprel_load)
	xor	%eax, %eax
LABEL(ui_riprel_load_insn)
	mov	ui_data(%rip), %rax
	ret
END(ui_riprel_load)

/* long ui_riprel_store(long x): stores x to ui_store_word, returns it */
FUNC(ui_riprel_store)
LABEL(ui_riprel_store_insn)
	mov	%rdi, ui_store_word(%rip)
	mov	ui_store_word(%rip), %rax
	ret
END(ui_riprel_store)

/* long ui_riprel_lea(void): &ui_data */
FUNC(ui_riprel_lea)
	xor	%eax, %eax
LABEL(ui_riprel_lea_insn)
	lea	ui_data(%rip), %rax
	ret
END(ui_riprel_lea)

/* long ui_call(long x): the return address seen by the callee (ui_call_ret) */
FUNC(ui_call)
LABEL(ui_call_insn)
	call	ui_call_callee
LABEL(ui_call_ret)
	ret
END(ui_call)

FUNC(ui_call_callee)
	mov	(%rsp), %rax
	ret
END(ui_call_callee)

/* long ui_call_ind(long (*fn)(long), long x): fn(x) through call *%rdi */
FUNC(ui_call_ind)
	push	%rbx
	mov	%rdi, %rax
	mov	%rsi, %rdi
LABEL(ui_call_ind_insn)
	call	*%rax
	pop	%rbx
	ret
END(ui_call_ind)

/* long ui_jmp(long x): x + 1 -- the short jmp skips an "xor %eax, %eax" */
FUNC(ui_jmp)
	mov	%rdi, %rax
LABEL(ui_jmp_insn)
	jmp	1f
	xor	%eax, %eax
1:	inc	%rax
	ret
END(ui_jmp)

/* long ui_jmp32(long x): x + 3 -- a jmp with a 32-bit displacement */
FUNC(ui_jmp32)
	mov	%rdi, %rax
LABEL(ui_jmp32_insn)
	jmp.d32	1f
	xor	%eax, %eax
1:	add	$3, %rax
	ret
END(ui_jmp32)

/* long ui_jcc(long x, long y): x == y ? 100 : 200 -- probe on je */
FUNC(ui_jcc)
	cmp	%rsi, %rdi
LABEL(ui_jcc_insn)
	je	1f
	mov	$200, %eax
	ret
1:	mov	$100, %eax
	ret
END(ui_jcc)

/* long ui_ret(long x): x + 1 -- probe on the ret */
FUNC(ui_ret)
	lea	1(%rdi), %rax
LABEL(ui_ret_insn)
	ret
END(ui_ret)

/*
 * long ui_fault(long *p): *p -- probe on the load.  The test's SIGSEGV
 * handler resumes at ui_fault_fixup, which returns 0x5ee.
 */
FUNC(ui_fault)
LABEL(ui_fault_insn)
	mov	(%rdi), %rax
	ret
END(ui_fault)

FUNC(ui_fault_fixup)
	mov	$0x5ee, %eax
	ret
END(ui_fault_fixup)

/* uint64_t tfs_get_sp(void): %rsp as seen by its first instruction */
FUNC(tfs_get_sp)
	mov	%rsp, %rax
	ret
END(tfs_get_sp)

/*
 * long tfs_stackn(long a, long b): a + b.  At tfs_stackn_probe the stack
 * holds b, a, 0x1234 (from the top).
 */
FUNC(tfs_stackn)
	push	$0x1234
	push	%rdi
	push	%rsi
LABEL(tfs_stackn_probe)
	lea	(%rdi,%rsi), %rax
	add	$24, %rsp
	ret
END(tfs_stackn)

/*
 * uprobe_failmodes: fm_pure uses no memory and no %rip relative operand,
 * so it also runs from another mapping of this file.
 */

/* long fm_pure(long x): 3 * x + 1 -- probe on its first instruction */
	.balign 64
FUNC(fm_pure)
	lea	1(%rdi,%rdi,2), %rax
	ret
END(fm_pure)

	.section .note.GNU-stack, "", @progbits
