/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prototypes of the assembly probe targets in uprobe_targets.S.
 */
#ifndef UPROBE_TARGETS_H
#define UPROBE_TARGETS_H

#include <stdint.h>

/* uprobe_insn: one probed instruction each, at label ui_<name>_insn */
long ui_nop(long x);
long ui_nopl(long x);
long ui_push(long x);
long ui_pop(long x);
long ui_mov(long x, long y);
long ui_add(long x, long y);
long ui_riprel_load(void);
long ui_riprel_store(long x);
long ui_riprel_lea(void);
long ui_call(long x);
long ui_call_ind(long (*fn)(long), long x);
long ui_jmp(long x);
long ui_jmp32(long x);
long ui_jcc(long x, long y);
long ui_ret(long x);
long ui_fault(long *p);
extern char ui_call_ret[], ui_fault_insn[], ui_fault_fixup[];
extern long ui_data, ui_store_word, ui_store_guard_lo, ui_store_guard_hi;

/* uprobe_tracefs */
uint64_t tfs_get_sp(void);
long tfs_stackn(long a, long b);

/* uprobe_failmodes */
long fm_pure(long x);

#endif /* UPROBE_TARGETS_H */
