/* SPDX-License-Identifier: GPL-2.0 */
/* The probed functions of hitcost, in hitcost_targets.S. */
#ifndef HITCOST_H
#define HITCOST_H
void hc_nop(void);		/* nop; ret: emulated */
void hc_push(void);		/* push %rbp; pop %rbp; ret: emulated */
void hc_add(void);		/* add $1,%rax; ret: single-stepped */
void hc_rip(void);		/* mov hc_var(%rip),%rax; ret: stepped */
void hc_retfn(void);		/* nop; ret: entry + return probe */
#endif
