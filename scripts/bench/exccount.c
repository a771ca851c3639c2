// SPDX-License-Identifier: GPL-2.0
/*
 * exccount: a QEMU TCG plugin that counts how often the guest enters the
 * kernel by each way a uprobe hit can take, for make bench
 * (scripts/harness.sh cmd_bench, scripts/bench/ubench.c).
 *
 * Arguments: bp=, db=, sys=, pf= give the guest addresses of the first
 * instruction of the int3 (#BP), debug (#DB: single-steps), 64-bit system
 * call and page fault entries (from System.map); mark= the address of
 * ubench's ub_mark(); out=FILE. Every execution of a watched instruction
 * bumps its counter (an inline add); every execution of ub_mark() writes
 * one line "bp db sys pf" of the counters so far to FILE. ubench calls
 * ub_mark() right before and right after each timed loop, so the
 * difference of two lines is what that loop cost in exceptions and system
 * calls; the harness divides it by the calls. The plugin API's symbols
 * it uses are declared in qemu_plugin_min.h; build with gcc -shared
 * -fPIC.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_min.h"

enum { BP, DB, SYS, PF, NR_WATCH };
static const char *const names[NR_WATCH] = { "bp", "db", "sys", "pf" };
static uint64_t watch[NR_WATCH], mark;
static uint64_t count[NR_WATCH];
static FILE *out;

static void on_mark(unsigned int vcpu, void *udata)
{
	fprintf(out, "%llu %llu %llu %llu\n", (unsigned long long)count[BP],
		(unsigned long long)count[DB], (unsigned long long)count[SYS],
		(unsigned long long)count[PF]);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	int k;

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);

		if (pc == mark)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark,
							       CB_NO_REGS, NULL);
		for (k = 0; k < NR_WATCH; k++)
			if (pc == watch[k])
				qemu_plugin_register_vcpu_insn_exec_inline(insn,
					INLINE_ADD_U64, &count[k], 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	fclose(out);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info *info,
			int argc, char **argv)
{
	const char *file = "exccount.out";
	int i, k;

	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			return -1;
		if (!strncmp(argv[i], "out=", 4))
			file = eq + 1;
		else if (!strncmp(argv[i], "mark=", 5))
			mark = strtoull(eq + 1, NULL, 0);
		for (k = 0; k < NR_WATCH; k++)
			if ((size_t)(eq - argv[i]) == strlen(names[k]) &&
			    !strncmp(argv[i], names[k], eq - argv[i]))
				watch[k] = strtoull(eq + 1, NULL, 0);
	}
	for (k = 0; k < NR_WATCH; k++)
		if (!watch[k])
			return -1;
	out = fopen(file, "w");
	if (!mark || !out)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
