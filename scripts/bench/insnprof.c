// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU TCG plugin that counts the guest instructions executed
 * at each guest pc, for make profile (scripts/harness.sh, insnprof.py).
 *
 * Each translation block gets a record of its instructions' pcs and a
 * counter that an inline add bumps on every execution of the block. At
 * exit the plugin writes "pc count" lines (hex, decimal) to the file of its
 * argument out=FILE. A block left early (a fault part way) still counts
 * whole: kernel code rarely does that on the paths profiled. The plugin
 * API's symbols it uses are declared in qemu_plugin_min.h; build with gcc
 * -shared -fPIC.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_min.h"

struct rec {
	uint64_t count;
	size_t n;
	uint64_t pc[];
};

static struct rec **recs;
static size_t nrecs, cap;
static char *out = "insnprof.out";

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct rec *r = calloc(1, sizeof(*r) + n * sizeof(uint64_t));

	r->n = n;
	for (i = 0; i < n; i++)
		r->pc[i] = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i));
	if (nrecs == cap) {
		cap = cap ? cap * 2 : 65536;
		recs = realloc(recs, cap * sizeof(*recs));
	}
	recs[nrecs++] = r;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &r->count, 1);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	FILE *f = fopen(out, "w");
	size_t i, j;

	if (!f)
		return;
	for (i = 0; i < nrecs; i++)
		if (recs[i]->count)
			for (j = 0; j < recs[i]->n; j++)
				fprintf(f, "%llx %llu\n",
					(unsigned long long)recs[i]->pc[j],
					(unsigned long long)recs[i]->count);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
