/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets written in assembly so that instruction boundaries are
 * exact.  For uprobe_insn: small functions, each with a global label
 * ui_<name>_insn at the one instruction the test probes.  For
 * uprobe_tracefs: functions whose stack layout at the probe is known.
 * Prototypes are in uprobe_targets.h.
 */

#include "uprobe_asm.inc"

	.data
	.balign 8
	.globl ui_data, ui_store_guard_lo, ui_store_word, ui_store_guard_hi
ui_data:		.quad 0
ui_store_guard_lo:	.quad 0x5555555555555555
ui_store_word:		.quad 0
ui_store_guard_hi:	.quad 0xaaaaaaaaaaaaaaaa
	.balign 16
	.globl ui_hay
ui_hay:			.ascii "hello uprobes!!!"
	.balign 8
	.globl core_run_step
core_run_step:		.quad 3
	.balign 16
	.globl ui_pair_guard_lo, ui_pair, ui_pair_guard_hi
ui_pair_guard_lo:	.quad 0x5555555555555555, 0x5555555555555555
ui_pair:		.quad 0, 0
ui_pair_guard_hi:	.quad 0xaaaaaaaaaaaaaaaa, 0xaaaaaaaaaaaaaaaa

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

/*
 * long ui_push_on(long x, long *top): pushes x on a stack whose top is
 * @top (so into top[-1]) and returns what it finds there
 */
FUNC(ui_push_on)
	mov	%rsp, %rcx
	mov	%rsi, %rsp
LABEL(ui_push_on_insn)
	push	%rdi
	mov	(%rsp), %rax
	mov	%rcx, %rsp
	ret
END(ui_push_on)

/*
 * long ui_pop_from(long *top): pops top[-1] off a stack whose top is @top
 * and returns it
 */
FUNC(ui_pop_from)
	mov	%rsp, %rcx
	lea	-8(%rdi), %rsp
LABEL(ui_pop_from_insn)
	pop	%rax
	mov	%rcx, %rsp
	ret
END(ui_pop_from)

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

/*
 * long ui_call_mem(long (*fn)(long), long x): fn(x) + 1 -- @fn stored at
 * the top of the stack, so the call reads it at the %rsp it then moves:
 * call *(%rsp)
 */
FUNC(ui_call_mem)
	sub	$8, %rsp
	mov	%rdi, (%rsp)
	mov	%rsi, %rdi
LABEL(ui_call_mem_insn)
	call	*(%rsp)
	add	$8, %rsp
	add	$1, %rax
	ret
END(ui_call_mem)

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

/*
 * RIP-relative forms run out of line with a scratch register holding the
 * address: each function also adds %rbx (3), %rsi and %rdi as the
 * instruction left them, so a scratch register not restored shows.
 */

/* long ui_rip_add(long x): 2x + ui_data + 8 -- add ui_data(%rip),%rax */
FUNC(ui_rip_add)
	push	%rbx
	mov	$3, %ebx
	mov	%rdi, %rax
	mov	$5, %esi
LABEL(ui_rip_add_insn)
	add	ui_data(%rip), %rax
	add	%rbx, %rax
	add	%rsi, %rax
	add	%rdi, %rax
	pop	%rbx
	ret
END(ui_rip_add)

/* long ui_rip_add_rexb(long x): the same, encoded with a (meaningless) REX.B */
FUNC(ui_rip_add_rexb)
	push	%rbx
	mov	$3, %ebx
	mov	%rdi, %rax
	mov	$5, %esi
LABEL(ui_rip_add_rexb_insn)
	.byte	0x49, 0x03, 0x05	/* add disp32(%rip),%rax; REX.WB */
	.long	ui_data - 1f
1:	add	%rbx, %rax
	add	%rsi, %rax
	add	%rdi, %rax
	pop	%rbx
	ret
END(ui_rip_add_rexb)

/*
 * long ui_rip_cmpxchg(long old, long new): cmpxchg %rsi,ui_store_word(%rip)
 * with %rax = old; returns %rax after it + 3 + new + old
 */
FUNC(ui_rip_cmpxchg)
	push	%rbx
	mov	$3, %ebx
	mov	%rdi, %rax
LABEL(ui_rip_cmpxchg_insn)
	cmpxchg	%rsi, ui_store_word(%rip)
	add	%rbx, %rax
	add	%rsi, %rax
	add	%rdi, %rax
	pop	%rbx
	ret
END(ui_rip_cmpxchg)

/*
 * long ui_rip_mulx(long x): x * ui_data with mulx (VEX; %rdx implicit, the
 * low half in %rsi through VEX.vvvv, the high half in %rdi through
 * ModRM.reg): low + 7 * high + 3
 */
FUNC(ui_rip_mulx)
	push	%rbx
	mov	$3, %ebx
	mov	%rdi, %rdx
LABEL(ui_rip_mulx_insn)
	mulx	ui_data(%rip), %rsi, %rdi
	imul	$7, %rdi, %rax
	add	%rsi, %rax
	add	%rbx, %rax
	pop	%rbx
	ret
END(ui_rip_mulx)

/*
 * void ui_rip_cmpxchg16b(uint64_t out[6], long lo, long hi, long nlo,
 * long nhi): cmpxchg16b ui_pair(%rip) (no lock prefix) with %rdx:%rax =
 * hi:lo and %rcx:%rbx = nhi:nlo, all four implicit; out[] receives %rax,
 * %rdx, %rbx, %rcx, %rsi (0x5151, a bystander) and ZF after it, through
 * %rdi, which must survive too.
 */
FUNC(ui_rip_cmpxchg16b)
	push	%rbx
	mov	%rsi, %rax
	mov	%rcx, %rbx
	mov	%r8, %rcx
	mov	$0x5151, %esi
LABEL(ui_rip_cmpxchg16b_insn)
	cmpxchg16b ui_pair(%rip)
	setz	%r8b
	movzbl	%r8b, %r8d
	mov	%rax, 0x00(%rdi)
	mov	%rdx, 0x08(%rdi)
	mov	%rbx, 0x10(%rdi)
	mov	%rcx, 0x18(%rdi)
	mov	%rsi, 0x20(%rdi)
	mov	%r8, 0x28(%rdi)
	pop	%rbx
	ret
END(ui_rip_cmpxchg16b)

/*
 * long ui_rip_shl_cl(long n): shlq %cl, ui_data(%rip) with %cl = n (the
 * count implicit in %cl); returns 0x77 + 0x99 (bystanders in %rax and
 * %rdx) + %rcx after it
 */
FUNC(ui_rip_shl_cl)
	mov	%rdi, %rcx
	mov	$0x77, %eax
	mov	$0x99, %edx
LABEL(ui_rip_shl_cl_insn)
	shlq	%cl, ui_data(%rip)
	add	%rdx, %rax
	add	%rcx, %rax
	ret
END(ui_rip_shl_cl)

/*
 * long ui_rip_pcmpestri(const char *needle, long len): where the first
 * @len bytes of @needle start in ui_hay (16: nowhere), with pcmpestri
 * (%rax, %rdx implicit, result in %rcx; the needle in %xmm6) + 15
 */
FUNC(ui_rip_pcmpestri)
	push	%rbx
	mov	$3, %ebx
	movdqu	(%rdi), %xmm6
	mov	%rsi, %rax
	mov	$16, %edx
	mov	$5, %esi
	mov	$7, %edi
LABEL(ui_rip_pcmpestri_insn)
	pcmpestri $0x0c, ui_hay(%rip), %xmm6
	lea	(%rcx,%rbx), %rax
	add	%rsi, %rax
	add	%rdi, %rax
	pop	%rbx
	ret
END(ui_rip_pcmpestri)

/*
 * Instructions a uprobe must refuse (FAILURE-MODES 20), each at a global
 * label ui_ref_<name>; never executed.
 */
#define REFUSED(name, bytes...)	LABEL(ui_ref_##name); .byte bytes
FUNC(ui_refused)
	REFUSED(int3, 0xcc)
	REFUSED(int1, 0xf1)
	REFUSED(int80, 0xcd, 0x80)
	REFUSED(syscall, 0x0f, 0x05)
	REFUSED(sysenter, 0x0f, 0x34)
	REFUSED(hlt, 0xf4)
	REFUSED(cli, 0xfa)
	REFUSED(sti, 0xfb)
	REFUSED(in, 0xec)
	REFUSED(out, 0xee)
	REFUSED(insb, 0x6c)
	REFUSED(outsb, 0x6e)
	REFUSED(lock_add, 0xf0, 0x48, 0x01, 0x07)
	REFUSED(ud2, 0x0f, 0x0b)
	REFUSED(ud1, 0x0f, 0xb9, 0xc0)
	REFUSED(mov_ss, 0x8e, 0xd0)
	REFUSED(pop_fs, 0x0f, 0xa1)
	REFUSED(iretq, 0x48, 0xcf)
	REFUSED(popf, 0x9d)
	REFUSED(es_mov, 0x26, 0x48, 0x8b, 0x07)
	REFUSED(ljmp, 0xff, 0x28)
	REFUSED(lret, 0xcb)
	REFUSED(sgdt, 0x0f, 0x01, 0x00)
	REFUSED(xbegin, 0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00)
	REFUSED(mov_cr, 0x0f, 0x20, 0xc0)
	ret
END(ui_refused)

/*
 * long ui_tf_region(long x): x + 1 + ui_data, through four kinds of
 * probed instruction: emulated (nop, push), boosted (add), stepped with a
 * scratch register (RIP-relative add); ui_tf_region_end follows it
 */
FUNC(ui_tf_region)
	mov	%rdi, %rax
LABEL(ui_tf_nop_insn)
	nop
LABEL(ui_tf_add_insn)
	add	$1, %rax
LABEL(ui_tf_push_insn)
	push	%rax
	pop	%rax
LABEL(ui_tf_rip_insn)
	add	ui_data(%rip), %rax
	ret
LABEL(ui_tf_region_end)
END(ui_tf_region)

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

/*
 * uprobe_core: a probed memory load that is stepped out of line, with
 * every other register and the flags set to known values around it.
 *
 * long core_ld(long *p, uint64_t regs[CORE_LD_NREGS]): *p, loaded by the
 * instruction at core_ld_insn.  After the load regs[] receives rbx, rcx,
 * rdx, rsi, rdi, rbp, r8 ... r15 and the flags, which must be
 * CORE_LD_REG(0) ... CORE_LD_REG(5) (rdi: p), CORE_LD_REG(6) ... and
 * CORE_LD_FLAGS.
 */
FUNC(core_ld)
	push	%rbx
	push	%rbp
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	push	%rsi
	movabs	$0x1111111111111100, %rbx
	movabs	$0x1111111111111101, %rcx
	movabs	$0x1111111111111102, %rdx
	movabs	$0x1111111111111103, %rsi
	movabs	$0x1111111111111105, %rbp
	movabs	$0x1111111111111106, %r8
	movabs	$0x1111111111111107, %r9
	movabs	$0x1111111111111108, %r10
	movabs	$0x1111111111111109, %r11
	movabs	$0x111111111111110a, %r12
	movabs	$0x111111111111110b, %r13
	movabs	$0x111111111111110c, %r14
	movabs	$0x111111111111110d, %r15
	xor	%eax, %eax		/* ZF, PF */
	stc				/* CF */
LABEL(core_ld_insn)
	mov	(%rdi), %rax
LABEL(core_ld_next)
	pushf
	push	%rax
	mov	16(%rsp), %rax		/* regs */
	mov	%rbx, 0x00(%rax)
	mov	%rcx, 0x08(%rax)
	mov	%rdx, 0x10(%rax)
	mov	%rsi, 0x18(%rax)
	mov	%rdi, 0x20(%rax)
	mov	%rbp, 0x28(%rax)
	mov	%r8, 0x30(%rax)
	mov	%r9, 0x38(%rax)
	mov	%r10, 0x40(%rax)
	mov	%r11, 0x48(%rax)
	mov	%r12, 0x50(%rax)
	mov	%r13, 0x58(%rax)
	mov	%r14, 0x60(%rax)
	mov	%r15, 0x68(%rax)
	pop	%rcx			/* the loaded value */
	pop	%rdx			/* the flags */
	mov	%rdx, 0x70(%rax)
	add	$8, %rsp
	mov	%rcx, %rax
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbp
	pop	%rbx
	ret
END(core_ld)

/* long core_getpid(void): getpid() through a probed syscall instruction */
FUNC(core_getpid)
	mov	$39, %eax		/* __NR_getpid */
LABEL(core_syscall_insn)
	syscall
	ret
END(core_getpid)

/* unsigned long core_pushf(void): the flags pushed by a probed pushf */
FUNC(core_pushf)
	xor	%eax, %eax		/* ZF, PF; CF, SF, OF clear */
LABEL(core_pushf_insn)
	pushf
	pop	%rax
	ret
END(core_pushf)

/*
 * long core_run(long x, long y): x + 72 * y, added by the 72 instructions
 * from core_run_insns on, core_run_step bytes apart: more probes than one
 * page of XOL slots holds.
 */
FUNC(core_run)
	mov	%rdi, %rax
LABEL(core_run_insns)
	.rept	72
	add	%rsi, %rax
	.endr
	ret
END(core_run)

/*
 * void core_own_bp(void): the program's own breakpoint instruction (int3,
 * uprobes' opcode where no probe is) at core_own_bp_insn, then a return.
 */
FUNC(core_own_bp)
LABEL(core_own_bp_insn)
	int3
	ret
END(core_own_bp)

	.section .note.GNU-stack, "", @progbits
