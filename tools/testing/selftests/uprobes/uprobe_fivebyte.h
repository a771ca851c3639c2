/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe targets of uprobe_fivebyte.S: functions around five-byte
 * instructions, and the labels of those instructions.
 */
#ifndef UPROBE_FIVEBYTE_H
#define UPROBE_FIVEBYTE_H

/* 3 * seed + 3 + (seed < 1000), its red zone live across fb_nop5_at */
long fb_nop5_leaf(long seed);
/* fb_nop5_leaf()'s result + 0x12345678, across a mov at fb_mov5_at */
long fb_mov5_leaf(long seed);
/* x + 7, through fb_framed(), whose probed nop is at fb_framed_at */
long fb_framed_caller(long x);

struct rseq;
/*
 * 1 added to counts[rs->cpu_id] in a restartable sequence across a probed
 * nop (fb_rseq_nop5_at), mov $imm32,%edx (fb_rseq_mov5_at) or compare of
 * %rsp with a RIP-relative word (fb_rseq_step_at), or by a probed add from
 * a RIP-relative address (fb_rseq_riprel_at): 0, or 1 if aborted (2 if
 * the abort found the counts pointer in %rsi changed)
 */
long fb_rseq_nop5(struct rseq *rs, long *counts);
long fb_rseq_mov5(struct rseq *rs, long *counts);
long fb_rseq_step(struct rseq *rs, long *counts);
long fb_rseq_riprel(struct rseq *rs, long *counts);

extern char fb_nop5_at[], fb_nop5_end[], fb_mov5_at[], fb_framed_at[];
/* the return address of fb_framed_caller()'s call of fb_framed() */
extern char fb_framed_ret[];
extern char fb_rseq_nop5_at[], fb_rseq_mov5_at[], fb_rseq_step_at[];
extern char fb_rseq_riprel_at[];

#endif
