/* SPDX-License-Identifier: GPL-2.0+ */
/*
 * uprobes, x86: what the files of this directory share.
 *
 *   decode.c	analysis at registration: one plan per CPU mode
 *   emulate.c	carrying out an emulated instruction on the saved registers
 *   xol.c	the out-of-line copy: slot contents, boosting, the step and
 *		its fix-ups, the int3 and #DB notifiers
 *   return.c	return probes: return address, trampoline, vDSO stubs and
 *		the return table, sys_uretprobe()
 *   jump.c	jump sites (64-bit only): the jump, the stubs, sys_uprobe()
 *
 * Data: struct arch_uprobe (asm/uprobes.h) holds the probed bytes and one
 * struct arch_uprobe_plan per mode; a plan says whether the instruction is
 * emulated, stepped or boosted and holds all either needs, so a hit never
 * decodes. struct arch_uprobe_task is the state a step keeps.
 *
 * Lifetimes and locking: a plan is written once, by
 * arch_uprobe_analyze_insn() before the probe can be hit, and then only
 * read; everything else is the current task's own state, used in its
 * process context or in its own trap handlers (no sleeping, no user
 * memory access there). No lock is taken here.
 *
 * Design: Documentation/trace/uprobes.rst, "The x86 implementation".
 */
#ifndef _ARCH_X86_KERNEL_UPROBES_INTERNAL_H
#define _ARCH_X86_KERNEL_UPROBES_INTERNAL_H

#include <linux/jump_label.h>
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/mmu_context.h>
#include <linux/processor.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/debugreg.h>
#include <asm/hw_breakpoint.h>
#include <asm/insn.h>
#include <asm/traps.h>
#include <asm/unaligned.h>
#include <asm/vdso.h>

/* How an emulated instruction is carried out (arch_uprobe_plan.emul). */
enum aup_emul {
	AUP_EM_NONE,
	AUP_EM_NOP,		/* 0x90 with prefixes (pause): ip += len */
	AUP_EM_NOPL,		/* 0f 1f /0 of any length, endbr: ip += len */
	AUP_EM_PUSH,		/* push reg */
	AUP_EM_PUSH_IMM,	/* push sign-extended rel */
	AUP_EM_PUSHF,		/* push flags */
	AUP_EM_MOV,		/* reg = src, opnd bytes */
	AUP_EM_LEA,		/* reg = src + (index << scale) + rel */
	AUP_EM_JMP,		/* ip = next + rel */
	AUP_EM_JCC,		/* if (cond) ip = next + rel */
	AUP_EM_CALL,		/* push next; ip = next + rel */
	AUP_EM_LOOP,		/* loopne/loope/loop/jrcxz: cond = opcode & 3 */
	AUP_EM_JMP_MEM,		/* ip = *(next + rel) */
	AUP_EM_CALL_MEM,	/* push next; ip = *(next + rel) */
	AUP_EM_CALL_REG,	/* push next; ip = src */
	AUP_EM_CALL_IND,	/* push next; ip = *(lea), a word */
	AUP_EM_LOAD,		/* reg = *(next + rel), opnd bytes */
	AUP_EM_STORE,		/* *(next + rel) = src, opnd bytes */
};

/* What post_xol corrects after a step (arch_uprobe_plan.fixups). */
#define AUP_FIX_IP	0x01	/* straight-line: ip = vaddr + len */
#define AUP_FIX_RELBR	0x02	/* relative branch: not taken or target */
#define AUP_FIX_CALL	0x08	/* a call: rewrite the pushed return address */
#define AUP_FIX_BRANCH	0x10	/* a control transfer (block-step reports) */
#define AUP_FIX_SCRATCH	0x20	/* RIP-relative: restore the scratch reg */
#define AUP_FIX_PUSHF	0x40	/* pushf: hide our TF in the pushed word */
#define AUP_FIX_REP	0x80	/* rep string: may stop after an iteration */

/* arch_uprobe_plan.boostable */
#define AUP_BOOST_PLAIN		1	/* the copy, then the jump back */
#define AUP_BOOST_SCRATCH	2	/* also the scratch register restored */

/*
 * Where an AUP_BOOST_SCRATCH boost keeps the program's scratch register
 * for the slot to restore: the word just below the red zone, which the
 * program may not count on (signal frames go there); the kernel keeps its
 * own copy for a task it moves out of the slot.
 */
#define AUP_RED_ZONE		128	/* the x86-64 ABI's, below the sp */
#define AUP_BOOST_SAVE_OFF	(AUP_RED_ZONE + 8)
#define AUP_RESTORE_LEN		8	/* mov -AUP_BOOST_SAVE_OFF(%rsp),%reg */

#define AUP_REG_SP	4	/* %rsp, %esp */
#define AUP_REG_NONE	0xff	/* no base / no index */
#define AUP_REG_RIP	0x10	/* base is the address of the next insn */

/* thread.trap_nr while a step is running: no fault happened yet. */
#define AUP_TRAP_NR	(~0UL)

#define AUP_REX_B	0x01
#define AUP_REX_X	0x02
#define AUP_REX_R	0x04
#define AUP_REX_W	0x08

#ifdef CONFIG_X86_64
#define AUP_NR_REGS	16
#else
#define AUP_NR_REGS	8
#endif

/* pt_regs offset of each general register, in encoding order. */
extern const u8 aup_reg_off[AUP_NR_REGS];

/* uprobes.emulate (emulate.c): every class of enum aup_emul emulated */
DECLARE_STATIC_KEY_TRUE(aup_emulate_all);

/*
 * Does a hit emulate the instruction of @p? With uprobes.emulate=0 only
 * the base set is: relative jmp, call and jcc, the 0x90 nops and push of
 * a register; the others run from their slot.
 */
static inline bool aup_emulates(const struct arch_uprobe_plan *p)
{
	if (p->exec != AUP_EMULATE)
		return false;
	if (static_branch_likely(&aup_emulate_all))
		return true;
	switch (p->emul) {
	case AUP_EM_NOP:
	case AUP_EM_PUSH:
	case AUP_EM_JMP:
	case AUP_EM_JCC:
	case AUP_EM_CALL:
		return true;
	default:
		return false;
	}
}

static inline unsigned long *aup_regp(struct pt_regs *regs, unsigned int reg)
{
	return (unsigned long *)((u8 *)regs +
				 aup_reg_off[reg % ARRAY_SIZE(aup_reg_off)]);
}

/*
 * The mode the task runs in, if a plan can run there: 64-bit code, or
 * 32-bit code with the flat user code and stack segments (the emulations
 * and fix-ups address the stack as flat memory).
 */
static inline int aup_mode(struct pt_regs *regs)
{
#ifdef CONFIG_X86_64
	if (user_64bit_mode(regs))
		return AUP_MODE_64;
	if (regs->cs == __USER32_CS && regs->ss == __USER_DS)
		return AUP_MODE_32;
#else
	if (regs->cs == __USER_CS && regs->ss == __USER_DS &&
	    !v8086_mode(regs))
		return AUP_MODE_32;
#endif
	return -1;
}

/* The plan for the task's mode, or NULL if there is none it can run. */
static inline const struct arch_uprobe_plan *
aup_plan(const struct arch_uprobe *au, struct pt_regs *regs)
{
	int mode = aup_mode(regs);

	if (mode < 0 || au->plan[mode].err || !au->plan[mode].len)
		return NULL;
	return &au->plan[mode];
}

/* An address computation in the plan's mode. */
static inline unsigned long aup_trunc(const struct arch_uprobe_plan *p,
				      unsigned long v)
{
	return p->ia32 ? (u32)v : v;
}

/*
 * Where the copy of each mode's plan sits in a slot: the 64-bit one first,
 * with room for the restore of a scratch register and a 14-byte jump back,
 * then the 32-bit one.
 */
#define AUP_COPY32	40

static inline unsigned int aup_copy_off(unsigned int mode)
{
	return mode == AUP_MODE_32 ? AUP_COPY32 : 0;
}

/* The user address of the copy the current task steps (or will). */
static inline unsigned long aup_copy_vaddr(const struct uprobe_task *ut)
{
	return ut->xol_vaddr + aup_copy_off(ut->autask.mode);
}

#define AUP_JMP64_LEN	14	/* jmp *0(%rip); .quad target */
#define AUP_JMP32_LEN	5	/* jmp rel32 */

#endif /* _ARCH_X86_KERNEL_UPROBES_INTERNAL_H */
