/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prototypes of the assembly probe targets in uprobe_targets.S, and of
 * those uprobe_targets_arm64.S has for arm64 (the same names, labels and
 * results; core_ld() saves arm64's registers and flags; the ui_ targets
 * of arm64's own instruction kinds).
 */
#ifndef UPROBE_TARGETS_H
#define UPROBE_TARGETS_H

#include <stdint.h>

/* uprobe_insn: one probed instruction each, at label ui_<name>_insn */
long ui_nop(long x);
long ui_nopl(long x);
long ui_push(long x);
long ui_push_on(long x, long *top);
long ui_pop_from(long *top);
long ui_pop(long x);
long ui_mov(long x, long y);
long ui_call_mem(long (*fn)(long), long x);
long ui_add(long x, long y);
long ui_riprel_load(void);
long ui_riprel_store(long x);
long ui_rip_add(long x);
long ui_rip_add_rexb(long x);
long ui_rip_cmpxchg(long old, long new);
long ui_rip_mulx(long x);
long ui_rip_pcmpestri(const char *needle, long len);
void ui_rip_cmpxchg16b(uint64_t out[6], long lo, long hi, long nlo, long nhi);
long ui_rip_shl_cl(long n);
extern uint64_t ui_pair[2], ui_pair_guard_lo[2], ui_pair_guard_hi[2];
extern char ui_hay[16];
long ui_tf_region(long x);
void ui_refused(void);
extern char ui_tf_region_end[];
extern char ui_tf_add_insn[];
long ui_riprel_lea(void);
long ui_call(long x);
long ui_call_ind(long (*fn)(long), long x);
long ui_jmp(long x);
long ui_jmp32(long x);
long ui_jcc(long x, long y);
long ui_ret(long x);
long ui_fault(long *p);
extern char ui_call_ret[], ui_fault_insn[], ui_fault_fixup[];
extern char ui_push_on_insn[], ui_pop_from_insn[];
extern long ui_data, ui_store_word, ui_store_guard_lo, ui_store_guard_hi;
/* arm64 only (uprobe_targets_arm64.S) */
long ui_stp(long x, long y);
long ui_ldp(long x, long y);
long ui_ldr_literal(void);
extern char ui_ldr_literal_insn[], ui_add_insn[];
long ui_adr(void);
long ui_adrp(void);
long ui_cbz(long x);
long ui_tbnz(long x);
long ui_frame(long x, long y);
long ui_alu(long x);
long ui_a_cmp(long x, long y);
long ui_a_cmn_w(long x, long y);
long ui_a_sub_asr(long x, long y);
long ui_a_and_lsl(long x, long y);
long ui_a_eor_w_ror(long x, long y);
long ui_a_orn_asr(long x, long y);
long ui_a_tst(long x, long y);
long ui_a_bics_w(long x, long y);
long ui_a_lsr(long x, long y);
long ui_a_asr_w(long x, long y);
long ui_a_lsl(long x, long y);
long ui_a_sbfx(long x, long y);
long ui_a_sxtw(long x, long y);
long ui_a_uxtb(long x, long y);
long ui_a_bfi(long x, long y);
long ui_a_sbfiz(long x, long y);
long ui_a_madd(long x, long y);
long ui_a_msub_w(long x, long y);
long ui_a_csel(long x, long y);
long ui_a_cset(long x, long y);
long ui_a_csneg(long x, long y);
long ui_a_csinv_w(long x, long y);
long ui_a_ldr_reg(long x, long y);
long ui_a_ldrb_sxtw(long x, long y);
long ui_a_str_reg(long x, long y);
long *ui_stp_far(long *p, long x);

/* uprobe_tracefs */
uint64_t tfs_get_sp(void);
long tfs_stackn(long a, long b);

/* uprobe_failmodes */
long fm_pure(long x);

/*
 * uprobe_core: the registers core_ld() saves are rbx, rcx, rdx, rsi, rdi,
 * rbp, r8 ... r15 on x86-64 and x1 ... x14 on arm64; regs[CORE_LD_RDI]
 * holds p (rdi; x5).
 */
#define CORE_LD_NREGS		15
#define CORE_LD_RDI		4
#define CORE_LD_FLAGS_IDX	14
/* the value core_ld() leaves in regs[@i], except rdi (regs[4]) and flags */
#define CORE_LD_REG(i)		(0x1111111111111100ULL + (i))
#if defined(__x86_64__)
/* CF, PF, ZF and IF (and the reserved bit 1) set, the others clear */
#define CORE_LD_FLAGS		0x247UL
/* the status, control and trap flags the test compares */
#define CORE_FLAGS_MASK		0xfd5UL
#else
/* NZCV: Z and C set, N and V clear */
#define CORE_LD_FLAGS		0x60000000UL
/* the condition flags, NZCV's only bits */
#define CORE_FLAGS_MASK		0xf0000000UL
#endif
long core_ld(long *p, uint64_t regs[CORE_LD_NREGS]);
extern char core_ld_insn[], core_ld_next[];
/* x + CORE_RUN_INSNS * y, by that many adds, core_run_step bytes apart */
#define CORE_RUN_INSNS		72
long core_run(long x, long y);
extern char core_run_insns[];
extern const long core_run_step;
/* the program's own breakpoint instruction at core_own_bp_insn */
void core_own_bp(void);
extern char core_own_bp_insn[];
/* x86-64 only */
long core_getpid(void);
unsigned long core_pushf(void);
extern char core_syscall_insn[], core_pushf_insn[];

/*
 * uprobe_stall's, in that file (x86: naked functions; arm64: top-level
 * assembly)
 */
void stall_target(void);
void stall_call(void *top);
void stall_jump(void *sp);

#endif /* UPROBE_TARGETS_H */
