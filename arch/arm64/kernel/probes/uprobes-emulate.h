/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uprobes, arm64: the emulation of function-entry instructions that
 * uprobes.c uses for a probe it would otherwise step out of line.
 */
#ifndef _ARM64_KERNEL_UPROBES_EMULATE_H
#define _ARM64_KERNEL_UPROBES_EMULATE_H

#include <linux/types.h>

struct pt_regs;

bool a64_uprobe_emulates(u32 insn);
bool a64_uprobe_emulate(u32 insn, struct pt_regs *regs);
u32 a64_uprobe_slot_insn(u32 insn);
void a64_uprobe_pre_xol(u32 insn, struct pt_regs *regs, unsigned long vaddr);

#endif /* _ARM64_KERNEL_UPROBES_EMULATE_H */
