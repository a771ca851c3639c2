/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of uprobe_return written in assembly (uprobe_return.S)
 * and in C++ (uprobe_return_cxx.cc).
 */
#ifndef UPROBE_RETURN_H
#define UPROBE_RETURN_H

/* struct ur_regs: the registers, %rsp, the flags, the words above %rsp */
#define UR_NREGS	15
#define UR_NCANARY	4
#define UR_RSP		(8 * UR_NREGS)
#define UR_FLAGS	(UR_RSP + 8)
#define UR_CANARY	(UR_FLAGS + 8)
#define UR_REGS_SIZE	(UR_CANARY + 8 * UR_NCANARY)

#ifndef __ASSEMBLER__
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* what ur_regs_call() saw right after ur_regs_fn() returned */
struct ur_regs {
	uint64_t r[UR_NREGS];	/* rax rbx rcx rdx rsi rdi rbp r8 ... r15 */
	uint64_t rsp;
	uint64_t flags;
	uint64_t canary[UR_NCANARY];	/* 0..31(%rsp) after the return */
};

/*
 * ur_regs_fn() sets CF, PF, AF, SF and OF, leaves ZF, TF and DF clear
 * (IF is always set), and loads ur_regs_want[i] into every general
 * purpose register but %rsp, in the order of struct ur_regs.
 */
void ur_regs_fn(void);
#define UR_FLAGS_WANT	0xa95UL
#define UR_FLAGS_MASK	0xfd5UL
extern const uint64_t ur_regs_want[UR_NREGS];

/*
 * ur_regs_call() puts ur_regs_canary[] at 0..31(%rsp), notes %rsp in
 * ur_regs_sp, calls ur_regs_fn() (which returns to ur_regs_ret), and
 * fills ur_regs_out before it touches any register.
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

#ifdef __cplusplus
}
#endif
#endif /* __ASSEMBLER__ */

#endif /* UPROBE_RETURN_H */
