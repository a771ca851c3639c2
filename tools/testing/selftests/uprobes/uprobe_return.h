/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of uprobe_return written in assembly (uprobe_return.S,
 * uprobe_return_arm64.S) and in C++ (uprobe_return_cxx.cc).
 */
#ifndef UPROBE_RETURN_H
#define UPROBE_RETURN_H

/*
 * struct ur_regs: the general purpose registers, the stack pointer, the
 * flags, the words above the stack pointer.  x86-64: rax ... r15, all but
 * %rsp; arm64: x0 ... x29 (x30, the link register, holds the return
 * address the call used, which a return probe replaces).
 */
#if defined(__aarch64__)
#define UR_NREGS	30
#else
#define UR_NREGS	15
#endif
#define UR_NCANARY	4
#define UR_SP		(8 * UR_NREGS)
#define UR_FLAGS	(UR_SP + 8)
#define UR_CANARY	(UR_FLAGS + 8)
#define UR_REGS_SIZE	(UR_CANARY + 8 * UR_NCANARY)

#ifndef __ASSEMBLER__
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* what ur_regs_call() saw right after ur_regs_fn() returned */
struct ur_regs {
	uint64_t r[UR_NREGS];	/* in the order of ur_regs_want[] */
	uint64_t sp;
	uint64_t flags;		/* x86-64: rflags; arm64: nzcv */
	uint64_t canary[UR_NCANARY];	/* the 4 words at the sp, after */
};

/*
 * ur_regs_fn() sets some arithmetic flags and clears the others (x86-64:
 * CF, PF, AF, SF and OF set, ZF, TF and DF clear; arm64: N, C and V set,
 * Z clear), and loads ur_regs_want[i] into every general purpose register
 * of struct ur_regs, in its order.
 */
void ur_regs_fn(void);
#if defined(__aarch64__)
#define UR_FLAGS_WANT	0xb0000000UL
#define UR_FLAGS_MASK	0xf0000000UL
#else
#define UR_FLAGS_WANT	0xa95UL
#define UR_FLAGS_MASK	0xfd5UL
#endif
extern const uint64_t ur_regs_want[UR_NREGS];

/*
 * ur_regs_call() puts ur_regs_canary[] in the 32 bytes at its stack
 * pointer, notes the stack pointer in ur_regs_sp, calls ur_regs_fn()
 * (which returns to ur_regs_ret) and fills ur_regs_out before it touches
 * any register of struct ur_regs.
 */
void ur_regs_call(void);
extern const uint64_t ur_regs_canary[UR_NCANARY];
extern char ur_regs_ret[];
extern struct ur_regs ur_regs_out;
extern uint64_t ur_regs_sp;

/*
 * The C++ chain: ur_cxx_f1(x) = ur_cxx_f2(x) + 100, ur_cxx_f2(x) =
 * ur_cxx_f3(x) + 10, ur_cxx_f3(x) = x + 1, or throws x + 1000 (a long).
 * ur_cxx_call() returns ur_cxx_f1(x), with ur_cxx_f3() throwing when
 * @do_throw: then minus the value caught, -(x + 1000). With @do_throw 2,
 * ur_cxx_f3() asks ur_cxx_f3_hook() (if set) whether to throw.
 */
extern int (*ur_cxx_f3_hook)(void);
long ur_cxx_f1(long x);
long ur_cxx_f2(long x);
long ur_cxx_f3(long x);
long ur_cxx_call(long x, int do_throw);

/*
 * ur_cxx_g1(x) = ur_cxx_g2(x) + 100, ur_cxx_g2(x) = ur_cxx_g3(x) + 10,
 * ur_cxx_g3(x) = x + 1, or throws x + 1000 when @do_throw, which
 * ur_cxx_g1() catches and returns negated.
 */
long ur_cxx_g1(long x, int do_throw);

/* ur_tail_outer(x) jumps to ur_tail_inner(x + 10) = 2 * (x + 10) + 1 */
long ur_tail_outer(long x);
long ur_tail_inner(long x);
#if defined(__x86_64__)
/* ur_pop_call(x) calls ur_pop16(x) = x + 5, which returns with ret $16 */
long ur_pop_call(long x);
long ur_pop16(long x);
#endif

#ifdef __cplusplus
}
#endif
#endif /* __ASSEMBLER__ */

#endif /* UPROBE_RETURN_H */
