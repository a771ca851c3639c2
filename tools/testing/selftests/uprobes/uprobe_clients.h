/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Slots of the "counts" map shared by uprobe_clients.bpf.c and
 * uprobe_clients.c: each program's hit count, then the sum of the values
 * it saw.
 */
#ifndef UPROBE_CLIENTS_H
#define UPROBE_CLIENTS_H

enum {
	UC_ENTRY_HITS,
	UC_ENTRY_SUM,
	UC_RETURN_HITS,
	UC_RETURN_SUM,
	UC_MARK_HITS,
	UC_MARK_SUM,
	UC_NR
};

#endif /* UPROBE_CLIENTS_H */
