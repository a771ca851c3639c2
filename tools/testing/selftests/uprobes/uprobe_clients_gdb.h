/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe targets of uprobe_clients_gdb (uprobe_clients_gdb.S), shared
 * by the suite and by uprobe_clients_gdb_target, the program its gdb runs.
 */
#ifndef UPROBE_CLIENTS_GDB_H
#define UPROBE_CLIENTS_GDB_H

/* ug_data: ug_body(x) = x + 1 + UG_DATA */
#define UG_DATA		100

extern long ug_data;

long ug_body(long x);
long ug_caller(long x);
extern char ug_nop_insn[], ug_push_insn[], ug_pop_insn[], ug_add_insn[];
extern char ug_rip_insn[], ug_mov_insn[], ug_body_ret[], ug_body_end[];
extern char ug_caller_ret[], ug_caller_next[], ug_caller_last[];
extern char ug_caller_end[];

/* What the target prints for @n calls of ug_body() or of ug_caller(). */
static inline long ug_body_sum(long n)
{
	return n * (n - 1) / 2 + n * (1 + UG_DATA);
}

static inline long ug_caller_sum(long n)
{
	return 2 * ug_body_sum(n);
}

#endif /* UPROBE_CLIENTS_GDB_H */
