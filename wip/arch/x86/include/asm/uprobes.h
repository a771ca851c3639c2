/* SPDX-License-Identifier: GPL-2.0+ */
#ifndef _ASM_X86_UPROBES_H
#define _ASM_X86_UPROBES_H
/*
 * x86 part of uprobes: what the core keeps per probe and per task. How an
 * instruction is analysed, emulated or run out of line is described at the
 * top of arch/x86/kernel/uprobes.c.
 *
 * Included unconditionally by arch/x86/events/core.c, so it must stand
 * alone in every configuration.
 */
#include <linux/types.h>

typedef u8 uprobe_opcode_t;

#define MAX_UINSN_BYTES			16
#define UPROBE_SWBP_INSN		0xcc
#define UPROBE_SWBP_INSN_SIZE		1
/* An XOL slot: the relocated copy plus, when boosted, a jump back. */
#define UPROBE_XOL_SLOT_BYTES		64

/**
 * enum arch_uprobe_exec - how a hit runs the probed instruction
 * @AUP_STEP: single-step a copy in an XOL slot
 * @AUP_EMULATE: update the registers in the kernel; no second trap
 */
enum arch_uprobe_exec {
	AUP_STEP,
	AUP_EMULATE,
};

/**
 * struct arch_uprobe - decoded probed instruction
 * @insn: the original instruction bytes (the perf callchain code looks at
 *	the first ones to recognise a function entry)
 * @len: length of @insn
 * @exec: &enum arch_uprobe_exec
 * @emul: which emulation, for AUP_EMULATE
 * @fixups: what to correct after a step (return address of a call, the
 *	scratch register of a RIP-relative form, the instruction pointer)
 * @reg: register operand of an emulated push/mov, or the scratch register
 *	that replaces %rip in the out-of-line copy
 * @cond: condition code of an emulated jcc
 * @rel: displacement of an emulated relative branch
 * @xol: the instruction as run out of line (RIP-relative operand rewritten)
 * @xol_len: length of @xol
 */
struct arch_uprobe {
	u8 insn[MAX_UINSN_BYTES];
	u8 len;
	u8 exec;
	u8 emul;
	u8 fixups;
	u8 reg;
	u8 cond;
	s32 rel;
	u8 xol[MAX_UINSN_BYTES];
	u8 xol_len;
};

/**
 * struct arch_uprobe_task - per-task state kept across a step
 * @saved_scratch: user value of the scratch register during a RIP-relative
 *	step
 * @saved_trap_nr: thread.trap_nr before the step, restored after it
 * @tf_was_set: the program itself had TF set (or was being single-stepped
 *	by ptrace): report the step to it afterwards and keep TF
 */
struct arch_uprobe_task {
	unsigned long saved_scratch;
	unsigned int saved_trap_nr;
	bool tf_was_set;
};

#endif /* _ASM_X86_UPROBES_H */
