// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_sym_offset BIN SYMBOL: print the file offset of SYMBOL in BIN in
 * hex, i.e. the OFFSET to use in a uprobe_events "PATH:OFFSET" spec.
 */
#include <stdio.h>

#include "uprobe_util.h"

int main(int argc, char **argv)
{
	int64_t off;

	if (argc != 3) {
		fprintf(stderr, "usage: %s BINARY SYMBOL\n", argv[0]);
		return 2;
	}
	off = ut_elf_sym_offset(argv[1], argv[2]);
	if (off < 0) {
		fprintf(stderr, "%s: symbol %s not found\n", argv[1], argv[2]);
		return 1;
	}
	printf("0x%lx\n", (unsigned long)off);
	return 0;
}
