/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 32-bit code of uprobe_compat32_target written in assembly
 * (uprobe_compat32_target.S), as its C part calls it.
 */
#ifndef UPROBE_COMPAT32_TARGET_H
#define UPROBE_COMPAT32_TARGET_H

/* c32_insns' running sum, its last value, and c32_call3's bad returns */
extern unsigned int c32_acc, c32_last, c32_bad_sp;

/* 3 * (x + 7) + c32_acc (after adding x + 7), + 1000 if x + 7 is odd */
int c32_insns(int x);
/* 2 * x + 4304 + 0x68676665 */
int c32_modes(int x);
/* @fn(@a, @b, @c), checking that it popped @popped bytes of them */
int c32_call3(void *fn, int a, int b, int c, int popped);

#endif /* UPROBE_COMPAT32_TARGET_H */
