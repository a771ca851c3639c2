/* SPDX-License-Identifier: GPL-2.0+ */
#ifndef _ASM_X86_UPROBES_H
#define _ASM_X86_UPROBES_H
/*
 * x86 part of uprobes: what the core keeps per probe and per task. How an
 * instruction is analysed, emulated or run out of line:
 * Documentation/trace/uprobes.rst, "The x86 implementation"; the code is in
 * arch/x86/kernel/uprobes/.
 *
 * Included unconditionally by arch/x86/events/core.c, so it must stand
 * alone in every configuration.
 */
#include <linux/types.h>

typedef u8 uprobe_opcode_t;

#define MAX_UINSN_BYTES			16
#define UPROBE_SWBP_INSN		0xcc
#define UPROBE_SWBP_INSN_SIZE		1
/*
 * An XOL slot: the relocated copy for 64-bit code, then the one for 32-bit
 * code, each with room for what the booster adds after it.
 */
#define UPROBE_XOL_SLOT_BYTES		64
#ifdef CONFIG_UPROBE_JUMP_SITES
/* Jump sites: jmp rel32 reaches 2 GiB either way (arch/x86/kernel/uprobes/jump.c). */
#define UPROBE_JUMP_REACH		0x80000000UL
#endif

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
 * enum arch_uprobe_mode - the CPU mode a decoding of the instruction is for
 * @AUP_MODE_64: 64-bit mode (x86_64 and x32 tasks)
 * @AUP_MODE_32: 32-bit code: a compat (ia32) task on a 64-bit kernel, any
 *	task on a 32-bit kernel
 * @AUP_NR_MODES: number of modes
 */
enum arch_uprobe_mode {
	AUP_MODE_64,
	AUP_MODE_32,
	AUP_NR_MODES,
};

/**
 * struct arch_uprobe_plan - how the probed instruction runs in one mode
 * @err: 0 if the instruction can be run in this mode; -EINVAL if it does
 *	not decode, -ENOTSUPP if it is refused (arch/x86/kernel/uprobes/decode.c)
 * @len: length of the instruction
 * @exec: &enum arch_uprobe_exec
 * @emul: which emulation, for AUP_EMULATE
 * @fixups: what to correct after a step (return address of a call, the
 *	scratch register of a RIP-relative form, the instruction pointer)
 * @boostable: the copy in a slot followed by a jump back to the next
 *	instruction runs without TF (for the booster): AUP_BOOST_PLAIN, it
 *	is the instruction itself, no fix-up; AUP_BOOST_SCRATCH, a
 *	RIP-relative straight-line form whose scratch register the kernel
 *	loads and the slot restores before its jump back; 0, neither
 * @reg: register operand of an emulation: the pushed register, or the
 *	destination of a mov or lea
 * @cond: condition code of an emulated jcc, or which of loopne, loope,
 *	loop, jrcxz
 * @rel: displacement of a relative branch, of a lea or of a RIP-relative
 *	jmp/call pointer; the value of an emulated push imm
 * @xol: the instruction as run out of line (RIP-relative operand
 *	rewritten, relative branch retargeted inside the slot)
 * @xol_len: length of @xol
 * @scratch: the register that replaces %rip in @xol, loaded with the
 *	address of the next instruction during the step
 * @src: source register of an emulated mov; base register of a lea
 * @index: index register of an emulated lea
 * @scale: log2 of the index scale of an emulated lea
 * @opnd: operand size in bytes of an emulated mov or lea, or of a stepped
 *	pushf
 * @ia32: decoded for 32-bit mode
 */
struct arch_uprobe_plan {
	s16 err;
	u8 len;
	u8 exec;
	u8 emul;
	u8 fixups;
	u8 boostable;
	u8 reg;
	u8 cond;
	s32 rel;
	u8 xol[MAX_UINSN_BYTES];
	u8 xol_len;
	u8 scratch;
	u8 src;
	u8 index;
	u8 scale;
	u8 opnd;
	u8 ia32;
};

/**
 * struct arch_uprobe - decoded probed instruction
 * @insn: the original instruction bytes (the perf callchain code looks at
 *	the first ones to recognise a function entry)
 * @ixol: the same bytes, under the name the core's default slot filler
 *	uses; arch_uprobe_fill_slot() builds the slots from @plan instead
 * @plan: how it runs, per &enum arch_uprobe_mode: the same bytes are a
 *	different instruction in 32-bit code, and a file can be mapped by
 *	tasks of either mode (or one task can switch), so the mode of the
 *	task that hits the probe picks the plan
 */
struct arch_uprobe {
	union {
		u8 insn[MAX_UINSN_BYTES];
		u8 ixol[MAX_UINSN_BYTES];
	};
	struct arch_uprobe_plan plan[AUP_NR_MODES];
};

/**
 * struct arch_uprobe_task - per-task state kept across a step or a boost
 * @saved_scratch: user value of the scratch register during a RIP-relative
 *	step or boost
 * @saved_below_sp: during the step of a relative call to a non-canonical
 *	target, on a CPU that stores nothing before that call's #GP: the word
 *	below the stack pointer, which the copy's push overwrites
 * @saved_trap_nr: thread.trap_nr before the step, restored after it
 * @dr6: debug-trap bits (data breakpoints) of the #DB that ended the step,
 *	reported to the program once the step is fixed up
 * @mode: the &enum arch_uprobe_mode being stepped
 * @tf_was_set: the program itself had TF set (its own, or a ptrace single
 *	step): keep TF and report the step to it afterwards
 * @blockstep: ptrace block-step (BTF) was on; suspended during our step
 * @boost_copy: user address of the copy of the last AUP_BOOST_SCRATCH boost
 * @boost_restore: user address of its restore of the scratch register: in
 *	[@boost_copy, @boost_restore] the register is still the kernel's
 * @boost_reg: its scratch register; 0 (rax, never one) when there is none
 *	to restore
 */
struct arch_uprobe_task {
	union {
		unsigned long saved_scratch;
		unsigned long saved_below_sp;
	};
	unsigned long boost_copy;
	unsigned long boost_restore;
	unsigned long saved_trap_nr;
	unsigned long dr6;
	u8 mode;
	bool tf_was_set;
	bool blockstep;
	u8 boost_reg;
};

struct pt_regs;

/* Asked by do_int3_user() first: see arch/x86/kernel/uprobes/xol.c. */
bool uprobe_trap_int3(struct pt_regs *regs);

/* Asked by the user page fault handler before it signals: see uprobes/jump.c. */
#ifdef CONFIG_UPROBE_JUMP_SITES
bool uprobe_stub_fault(struct pt_regs *regs, unsigned long address);
#else
static inline bool uprobe_stub_fault(struct pt_regs *regs,
				     unsigned long address)
{
	return false;
}
#endif

#endif /* _ASM_X86_UPROBES_H */
