// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_sdt_info BIN: print one line per SDT marker of BIN:
 *   PROVIDER NAME PC_FILE_OFFSET_HEX SEMAPHORE_FILE_OFFSET_HEX
 * The semaphore offset is 0 when the marker has no semaphore.
 */
#include <stdio.h>

#include "uprobe_util.h"

int main(int argc, char **argv)
{
	struct ut_sdt_note notes[256];
	int i, n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s BINARY\n", argv[0]);
		return 2;
	}
	n = ut_sdt_notes(argv[1], notes, 256);
	if (n < 0) {
		fprintf(stderr, "%s: cannot parse ELF file\n", argv[1]);
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%s %s 0x%lx 0x%lx\n", notes[i].provider, notes[i].name,
		       (unsigned long)notes[i].pc_off,
		       (unsigned long)notes[i].sem_off);
	return 0;
}
