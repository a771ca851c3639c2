// SPDX-License-Identifier: GPL-2.0
/*
 * BPF side of uprobe_clients' libbpf tests: each program counts its hits
 * and sums the value it sees (the first argument, the return value or the
 * marker's argument) in the array map "counts", at the slots below
 * (uprobe_clients.h).
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "uprobe_clients.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UC_NR);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void account(__u32 hits, long value)
{
	__u32 sum = hits + 1;
	__u64 *p;

	p = bpf_map_lookup_elem(&counts, &hits);
	if (p)
		__sync_fetch_and_add(p, 1);
	p = bpf_map_lookup_elem(&counts, &sum);
	if (p)
		__sync_fetch_and_add(p, value);
}

SEC("uprobe")
int BPF_KPROBE(uc_entry, int x)
{
	account(UC_ENTRY_HITS, x);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(uc_return, int ret)
{
	account(UC_RETURN_HITS, ret);
	return 0;
}

SEC("usdt")
int BPF_USDT(uc_mark, int x)
{
	account(UC_MARK_HITS, x);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
