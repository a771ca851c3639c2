/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arm64 probe targets: those of uprobe_targets.S that the suites built
 * for arm64 use, with the same names, labels and results, and uprobe_insn's
 * arm64 instruction kinds (ui_stp ... ui_tbnz). Prototypes are in
 * uprobe_targets.h.
 */

#include "uprobe_asm.inc"

	.data
	.balign 8
	.globl ui_data
ui_data:
.Lui_data:
	.quad 0
	.globl core_run_step
core_run_step:
	.quad 4

	.text

/* long ui_nop(long x): x + 1 -- probe on a nop */
FUNC(ui_nop)
LABEL(ui_nop_insn)
	nop
	add	x0, x0, #1
	ret
END(ui_nop)

/*
 * long ui_add(long x, long y): x + y plus the carry of that addition; the
 * add in its extended-register form, which is not emulated: run out of
 * line, as the tests of the XOL area need.
 */
FUNC(ui_add)
LABEL(ui_add_insn)
	adds	x0, x0, x1, uxtx
	adc	x0, x0, xzr
	ret
END(ui_add)

/* long ui_ret(long x): x + 1 -- probe on the ret */
FUNC(ui_ret)
	add	x0, x0, #1
LABEL(ui_ret_insn)
	ret
END(ui_ret)

/* long ui_mov(long x, long y): y -- probe on a register move */
FUNC(ui_mov)
LABEL(ui_mov_insn)
	mov	x0, x1
	ret
END(ui_mov)

/*
 * long ui_stp(long x, long y): x - y + 16, the 16 being how far the
 * probed store pair with pre-index writeback moved sp.
 */
FUNC(ui_stp)
	mov	x2, sp
LABEL(ui_stp_insn)
	stp	x0, x1, [sp, #-16]!
	mov	x3, sp
	sub	x2, x2, x3
	ldp	x3, x4, [sp], #16
	sub	x0, x3, x4
	add	x0, x0, x2
	ret
END(ui_stp)

/*
 * long ui_ldp(long x, long y): x - y + 16, the pair read back by the
 * probed load pair with post-index writeback, the 16 how far it moved sp.
 */
FUNC(ui_ldp)
	stp	x0, x1, [sp, #-16]!
	mov	x2, sp
LABEL(ui_ldp_insn)
	ldp	x3, x4, [sp], #16
	mov	x5, sp
	sub	x2, x5, x2
	sub	x0, x3, x4
	add	x0, x0, x2
	ret
END(ui_ldp)

/*
 * long ui_frame(long x, long y): x + y + (u32)y + 1, through a function entry
 * and exit as compilers write them, each instruction labelled: bti,
 * stp/ldp of the frame record, mov from sp, str/ldr of a callee-saved
 * register, sub/add of sp, stur/ldur below the frame pointer, a register
 * move, a 32-bit store and load. x19 is the caller's again at the end.
 */
FUNC(ui_frame)
LABEL(ui_frame_bti_insn)
	hint	#34
LABEL(ui_frame_stp_insn)
	stp	x29, x30, [sp, #-48]!
LABEL(ui_frame_mov_fp_insn)
	mov	x29, sp
LABEL(ui_frame_str_insn)
	str	x19, [sp, #16]
LABEL(ui_frame_sub_insn)
	sub	sp, sp, #32
LABEL(ui_frame_stur_insn)
	stur	x0, [x29, #-8]
LABEL(ui_frame_mov_insn)
	mov	x19, x1
LABEL(ui_frame_str_w_insn)
	str	w19, [sp, #4]
LABEL(ui_frame_ldur_insn)
	ldur	x2, [x29, #-8]
LABEL(ui_frame_ldr_w_insn)
	ldr	w3, [sp, #4]
	add	x0, x2, x19
	add	x0, x0, x3
	add	x0, x0, #1
LABEL(ui_frame_add_insn)
	add	sp, sp, #32
LABEL(ui_frame_ldr_insn)
	ldr	x19, [sp, #16]
LABEL(ui_frame_ldp_insn)
	ldp	x29, x30, [sp], #48
	ret
END(ui_frame)

/*
 * long ui_alu(long x): the move-wide immediates and flag-setting compares
 * and additions of function bodies, each labelled, the flags read back:
 * 0x12345678 ^ 0xffffffff ^ ((u32)x + 1) << 8 ^ the C flag of cmp x, #1
 * ("lo") << 40 ^ its "lt" << 41 ^ the V flag of adds w, w(x), #1 << 42 ^
 * its C flag << 43. uprobe_insn.c's alu_ref() computes the same.
 */
FUNC(ui_alu)
LABEL(ui_alu_movz_insn)
	movz	x2, #0x1234, lsl #16
LABEL(ui_alu_movk_insn)
	movk	x2, #0x5678
LABEL(ui_alu_movn_insn)
	movn	w3, #0
LABEL(ui_alu_cmp_insn)
	cmp	x0, #1
	cset	x4, lo
	cset	x5, lt
LABEL(ui_alu_adds_insn)
	adds	w6, w0, #1
	cset	x7, vs
	cset	x8, cs
	eor	x0, x2, x3
	eor	x0, x0, x6, lsl #8
	eor	x0, x0, x4, lsl #40
	eor	x0, x0, x5, lsl #41
	eor	x0, x0, x7, lsl #42
	eor	x0, x0, x8, lsl #43
	ret
END(ui_alu)

/*
 * long ui_a_NAME(long x, long y): one register-only instruction each
 * (ui_a_NAME_insn: data processing with a shifted register, bitfield
 * moves, multiply-add, conditional selects, loads and stores with a
 * register offset), its flags read back with mrs where it sets them.
 * uprobe_insn.c's alu_reg_ref() computes the same in C.
 */
FUNC(ui_a_cmp)
LABEL(ui_a_cmp_insn)
	cmp	x0, x1
	mrs	x0, nzcv
	ret
END(ui_a_cmp)

FUNC(ui_a_cmn_w)
LABEL(ui_a_cmn_w_insn)
	cmn	w0, w1, lsl #3
	mrs	x0, nzcv
	ret
END(ui_a_cmn_w)

FUNC(ui_a_sub_asr)
LABEL(ui_a_sub_asr_insn)
	sub	x0, x0, x1, asr #4
	ret
END(ui_a_sub_asr)

FUNC(ui_a_and_lsl)
LABEL(ui_a_and_lsl_insn)
	and	x0, x0, x1, lsl #3
	ret
END(ui_a_and_lsl)

FUNC(ui_a_eor_w_ror)
LABEL(ui_a_eor_w_ror_insn)
	eor	w0, w0, w1, ror #7
	ret
END(ui_a_eor_w_ror)

FUNC(ui_a_orn_asr)
LABEL(ui_a_orn_asr_insn)
	orn	x0, x0, x1, asr #5
	ret
END(ui_a_orn_asr)

FUNC(ui_a_tst)
LABEL(ui_a_tst_insn)
	tst	x0, x1
	mrs	x0, nzcv
	ret
END(ui_a_tst)

FUNC(ui_a_bics_w)
LABEL(ui_a_bics_w_insn)
	bics	w0, w0, w1
	mrs	x1, nzcv
	orr	x0, x0, x1, lsl #32
	ret
END(ui_a_bics_w)

FUNC(ui_a_lsr)
LABEL(ui_a_lsr_insn)
	lsr	x0, x0, #13
	ret
END(ui_a_lsr)

FUNC(ui_a_asr_w)
LABEL(ui_a_asr_w_insn)
	asr	w0, w0, #3
	ret
END(ui_a_asr_w)

FUNC(ui_a_lsl)
LABEL(ui_a_lsl_insn)
	lsl	x0, x0, #9
	ret
END(ui_a_lsl)

FUNC(ui_a_sbfx)
LABEL(ui_a_sbfx_insn)
	sbfx	x0, x0, #4, #8
	ret
END(ui_a_sbfx)

FUNC(ui_a_sxtw)
LABEL(ui_a_sxtw_insn)
	sxtw	x0, w0
	ret
END(ui_a_sxtw)

FUNC(ui_a_uxtb)
LABEL(ui_a_uxtb_insn)
	uxtb	w0, w0
	ret
END(ui_a_uxtb)

FUNC(ui_a_bfi)
LABEL(ui_a_bfi_insn)
	bfi	x0, x1, #8, #16
	ret
END(ui_a_bfi)

FUNC(ui_a_sbfiz)
LABEL(ui_a_sbfiz_insn)
	sbfiz	x0, x0, #40, #10
	ret
END(ui_a_sbfiz)

FUNC(ui_a_madd)
LABEL(ui_a_madd_insn)
	madd	x0, x0, x1, x1
	ret
END(ui_a_madd)

FUNC(ui_a_msub_w)
LABEL(ui_a_msub_w_insn)
	msub	w0, w0, w1, w1
	ret
END(ui_a_msub_w)

FUNC(ui_a_csel)
	cmp	x0, x1
LABEL(ui_a_csel_insn)
	csel	x0, x0, x1, hi
	ret
END(ui_a_csel)

FUNC(ui_a_cset)
	cmp	x0, x1
LABEL(ui_a_cset_insn)
	cset	x0, lt
	ret
END(ui_a_cset)

FUNC(ui_a_csneg)
	cmp	x0, x1
LABEL(ui_a_csneg_insn)
	csneg	x0, x0, x1, eq
	ret
END(ui_a_csneg)

FUNC(ui_a_csinv_w)
	cmp	w0, w1
LABEL(ui_a_csinv_w_insn)
	csinv	w0, w0, w1, ge
	ret
END(ui_a_csinv_w)

FUNC(ui_a_ldr_reg)
LABEL(ui_a_ldr_reg_insn)
	ldr	x0, [x1, x0, lsl #3]
	ret
END(ui_a_ldr_reg)

FUNC(ui_a_ldrb_sxtw)
LABEL(ui_a_ldrb_sxtw_insn)
	ldrb	w0, [x1, w0, sxtw]
	ret
END(ui_a_ldrb_sxtw)

FUNC(ui_a_str_reg)
LABEL(ui_a_str_reg_insn)
	str	x0, [x1, x0, lsl #3]
	ret
END(ui_a_str_reg)

/*
 * long ui_stp_far(long *p, long x): a pre-index stp of x and x + 1 to
 * p - 2 and p - 1 (p may point into a page not touched yet), returning the
 * address it moved x0 to.
 */
FUNC(ui_stp_far)
	add	x2, x1, #1
LABEL(ui_stp_far_insn)
	stp	x1, x2, [x0, #-16]!
	ret
END(ui_stp_far)

/*
 * long ui_tf_region(long x): x + 1 + ui_data, through probed instructions
 * stepped out of line (a prefetch, which does nothing the program sees, in
 * the place of x86-64's nop), emulated (add) and simulated (adr, b),
 * named as the x86-64 ones; ui_tf_region_end follows it
 */
FUNC(ui_tf_region)
LABEL(ui_tf_nop_insn)
	prfm	pldl1keep, [sp]
LABEL(ui_tf_add_insn)
	add	x0, x0, #1
LABEL(ui_tf_push_insn)
	adr	x1, .Lui_data
LABEL(ui_tf_rip_insn)
	b	1f
1:	ldr	x1, [x1]
	add	x0, x0, x1
	ret
LABEL(ui_tf_region_end)
END(ui_tf_region)

/* long ui_ldr_literal(void): ui_data, by a pc-relative literal load */
FUNC(ui_ldr_literal)
LABEL(ui_ldr_literal_insn)
	ldr	x0, .Lui_data
	ret
END(ui_ldr_literal)

/* long ui_adr(void): &ui_data */
FUNC(ui_adr)
LABEL(ui_adr_insn)
	adr	x0, .Lui_data
	ret
END(ui_adr)

/* long ui_adrp(void): the address of ui_data's 4 KiB page */
FUNC(ui_adrp)
LABEL(ui_adrp_insn)
	adrp	x0, .Lui_data
	ret
END(ui_adrp)

/* long ui_call(long x): the return address ui_call_callee() gets */
FUNC(ui_call)
	stp	x29, x30, [sp, #-16]!
LABEL(ui_call_insn)
	bl	ui_call_callee
LABEL(ui_call_ret)
	ldp	x29, x30, [sp], #16
	ret
END(ui_call)

/* its return address */
FUNC(ui_call_callee)
	mov	x0, x30
	ret
END(ui_call_callee)

/* long ui_call_ind(long (*fn)(long), long x): fn(x), by blr */
FUNC(ui_call_ind)
	stp	x29, x30, [sp, #-16]!
	mov	x2, x0
	mov	x0, x1
LABEL(ui_call_ind_insn)
	blr	x2
	ldp	x29, x30, [sp], #16
	ret
END(ui_call_ind)

/* long ui_jmp(long x): x + 1, past code the probed branch skips */
FUNC(ui_jmp)
LABEL(ui_jmp_insn)
	b	1f
	mov	x0, #-1000
1:	add	x0, x0, #1
	ret
END(ui_jmp)

/* long ui_jcc(long x, long y): 100 when x == y, else 200 (b.eq) */
FUNC(ui_jcc)
	cmp	x0, x1
LABEL(ui_jcc_insn)
	b.eq	1f
	mov	x0, #200
	ret
1:	mov	x0, #100
	ret
END(ui_jcc)

/* long ui_cbz(long x): 100 when x is 0, else 200 */
FUNC(ui_cbz)
LABEL(ui_cbz_insn)
	cbz	x0, 1f
	mov	x0, #200
	ret
1:	mov	x0, #100
	ret
END(ui_cbz)

/* long ui_tbnz(long x): 100 when bit 33 of x is set, else 200 */
FUNC(ui_tbnz)
LABEL(ui_tbnz_insn)
	tbnz	x0, #33, 1f
	mov	x0, #200
	ret
1:	mov	x0, #100
	ret
END(ui_tbnz)

/*
 * long ui_fault(long *p): *p, by the load at ui_fault_insn; a SIGSEGV
 * handler that sends the fault to ui_fault_fixup makes it 0x5ee.
 */
FUNC(ui_fault)
LABEL(ui_fault_insn)
	ldr	x0, [x0]
	ret
LABEL(ui_fault_fixup)
	mov	x0, #0x5ee
	ret
END(ui_fault)

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

/*
 * uprobe_core: a probed memory load that is stepped out of line, with
 * every other register and the flags set to known values around it.
 *
 * long core_ld(long *p, uint64_t regs[CORE_LD_NREGS]): *p, loaded by the
 * instruction at core_ld_insn.  After the load regs[] receives x1 ... x14
 * and NZCV, which must be CORE_LD_REG(0) ... CORE_LD_REG(13) (x5: p) and
 * CORE_LD_FLAGS.
 */
FUNC(core_ld)
	str	x1, [sp, #-16]!
	mov	x5, x0
	movz	x16, #0x1100
	movk	x16, #0x1111, lsl #16
	movk	x16, #0x1111, lsl #32
	movk	x16, #0x1111, lsl #48
	add	x1, x16, #0x0
	add	x2, x16, #0x1
	add	x3, x16, #0x2
	add	x4, x16, #0x3
	add	x6, x16, #0x5
	add	x7, x16, #0x6
	add	x8, x16, #0x7
	add	x9, x16, #0x8
	add	x10, x16, #0x9
	add	x11, x16, #0xa
	add	x12, x16, #0xb
	add	x13, x16, #0xc
	add	x14, x16, #0xd
	cmp	x5, x5			/* Z, C; N, V clear */
LABEL(core_ld_insn)
	ldr	x0, [x5]
LABEL(core_ld_next)
	mrs	x16, nzcv
	ldr	x17, [sp], #16		/* regs */
	stp	x1, x2, [x17, #0x00]
	stp	x3, x4, [x17, #0x10]
	stp	x5, x6, [x17, #0x20]
	stp	x7, x8, [x17, #0x30]
	stp	x9, x10, [x17, #0x40]
	stp	x11, x12, [x17, #0x50]
	stp	x13, x14, [x17, #0x60]
	str	x16, [x17, #0x70]
	ret
END(core_ld)

/*
 * long core_run(long x, long y): as in uprobe_targets.S, each add in its
 * extended-register form, which is not emulated: each hit is stepped.
 */
FUNC(core_run)
LABEL(core_run_insns)
	.rept	72
	add	x0, x0, x1, uxtx
	.endr
	ret
END(core_run)

/* void core_own_bp(void): as in uprobe_targets.S, with BRK #5 */
FUNC(core_own_bp)
LABEL(core_own_bp_insn)
	brk	#0x5
	ret
END(core_own_bp)

	.section .note.GNU-stack, "", %progbits
