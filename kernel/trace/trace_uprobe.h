/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uprobe-based dynamic events: what the front end's files share.
 *
 * trace_uprobe.c defines and deletes the events, registers their probes
 * with the uprobes core and serves the tracefs files; trace_uprobe_hit.c
 * is the hit path and where its records go; trace_uprobe_fetch.c fetches
 * a hit's arguments into a record and gives the records their format.
 * The user interface is described in Documentation/trace/uprobetracer.rst,
 * the core in Documentation/trace/uprobes.rst.
 *
 * Objects
 *   struct trace_uprobe	one probe: a file (pinned path), an offset, an
 *				SDT counter offset, per-CPU hit counts, its
 *				registrations; embeds its struct trace_probe.
 *   struct tu_reg		one registration with the core: the consumer
 *				the core calls, where its counts started.
 *   struct trace_probe_event	the event (library object), shared by its
 *				trace_uprobes ("siblings", same arguments),
 *				with its files and its perf filter.
 *   struct trace_uprobe_filter	the event's perf targets (library type): an
 *				RCU list of struct tu_target (a perf event,
 *				with a reference of its own on its target
 *				task), and a count of system-wide perf events.
 *   struct uprobe_fetch	one hit: the user registers and the probed
 *				address.
 *   struct uprobe_record	one hit's record fetched with page faults
 *				allowed (the hit path's deferred fetch).
 *   struct uprobe_list	one tracefs file; all three are one seq_file
 *				walk of the dynamic events (trace_uprobe.c).
 *
 * Lifetimes
 *   - A trace_uprobe lives from its definition to its deletion (perf's
 *     local ones: to destroy_local_trace_uprobe()). It is registered with
 *     the core while its event is enabled, by a trace file or by perf, each
 *     time with a new tu_reg.
 *   - A disable waits for no handler: it unregisters with
 *     uprobe_unregister_nosync() and retires the tu_reg, which holds the
 *     core's probe (uprobe_stats_hold()) where the handlers still running
 *     count their hits. Once they have returned and the fetches they
 *     deferred have run, the tu_reg is freed and its final counts move to
 *     the trace_uprobe: checked whenever the trace_uprobe is used; a read
 *     of uprobe_profile waits for the handlers, the free of a trace_uprobe
 *     for both.
 *   - Handlers still running find no trace file left and record nothing:
 *     they use trace file links (freed by RCU) and their files only under
 *     rcu_read_lock(), around the (non-sleeping) copy into the buffer, and
 *     an event's files go with the event a grace period after the last one
 *     left (files_gp). perf frees its per-CPU event lists
 *     (call->perf_events) a grace period after the disable; handlers use
 *     them only in an RCU section that finds TP_FLAG_PROFILE still set.
 *   - Deletion is refused (-EBUSY) while the event is enabled or perf holds
 *     it; a sibling of an enabled event is unregistered first. A deleted
 *     trace_uprobe leaves the lists at once; a work item frees it (and its
 *     event, with the last probe) once its handlers are done, waiting
 *     outside event_mutex. perf's local ones are freed the same way.
 *
 * Lock order (outermost first; in parentheses, where each is taken inside
 * the one above)
 *
 *   dyn_event_ops_mutex	(dyn_event_create(), around parsing: guards the
 *				 library's error log)
 *     event_mutex		(add_definition())
 *       filter->rwlock		(update_targets(), for write; a leaf)
 *       the core's locks	(register_probe(), unregister_probe(),
 *				 apply_event_probes(), tu_stats(),
 *				 wait_retired())
 *
 * event_mutex, held by our callers or taken by us (add_definition(),
 * tu_free_work(), the tracefs walk), orders every definition, deletion,
 * enable, disable, perf open and close. Handlers take none of these locks:
 * they read the files, perf's lists and the perf targets under RCU.
 */
#ifndef _TRACE_UPROBE_H
#define _TRACE_UPROBE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/path.h>
#include <linux/uprobes.h>
#include <linux/workqueue.h>

#include "trace_dynevent.h"
#include "trace_probe.h"

/**
 * struct uprobe_record_head - the fixed part of a record
 * @ent: the common trace entry header
 * @vaddr: the probed address; for a return probe the function's address
 *	(__probe_func) then the return address (__probe_ret_ip)
 */
struct uprobe_record_head {
	struct trace_entry ent;
	unsigned long vaddr[];
};

/**
 * struct trace_uprobe - one uprobe of a uprobe event
 * @devent: link in the dynamic event list (not for perf's local events)
 * @path: the probed file (a reference is held)
 * @inode: the inode the core probes (the real one under overlayfs)
 * @filename: the path as the user wrote it
 * @offset: file offset of the probed instruction
 * @ref_ctr_offset: file offset of the SDT counter, 0 for none
 * @nhits: per-CPU count of handler calls
 * @is_ret: a return probe
 * @owns_event: deleted as the last probe of its event, which its
 *	deferred free frees too
 * @reg: the registration with the core, NULL while not registered
 * @retired: earlier registrations whose handlers may still run
 *	(struct tu_reg.node)
 * @stats_done: the core's counts over the earlier registrations that
 *	are final
 * @free_work: deferred free after deletion (tu_free_work())
 * @text_room: most bytes of strings a trace record may hold and still
 *	print as one line of text (trace_text_room())
 * @dynamic: an argument has dynamic data (a string): records vary in size
 * @simple: every argument is simple (arg_is_simple()): fetch_simple()
 *	fetches them
 * @tp: the library's probe: event, arguments (must be last)
 */
struct trace_uprobe {
	struct dyn_event devent;
	struct path path;
	struct inode *inode;
	char *filename;
	unsigned long offset;
	unsigned long ref_ctr_offset;
	unsigned long __percpu *nhits;
	bool is_ret;
	bool owns_event;
	struct tu_reg *reg;
	struct list_head retired;
	struct uprobe_stats stats_done;
	struct work_struct free_work;
	int text_room;
	bool dynamic;
	bool simple;
	struct trace_probe tp;
};

/**
 * struct tu_reg - one registration of a trace_uprobe with the core
 * @consumer: the consumer registered
 * @tu: the probe it serves
 * @stats_start: the core's counts for the probe at registration (the
 *	core's probe may serve other consumers too)
 * @held: from unregistration, the core's probe, held for its counts
 * @cookie: from unregistration, the core's cookie for its handlers
 * @folded: its counts are in @tu's stats_done already: a later
 *	registration took the same core probe and counts from there on
 * @deferred: hits of its handlers whose fetch waits for the task's way
 *	back to user mode (struct tu_deferred); it is freed once none is left
 * @node: link in @tu's retired list from unregistration
 *
 * A new registration gets a new consumer, so that it never waits for the
 * handlers of an old one, which may still walk the old consumer's links.
 */
struct tu_reg {
	struct uprobe_consumer consumer;
	struct trace_uprobe *tu;
	struct uprobe_stats stats_start;
	struct uprobe *held;
	unsigned long cookie;
	bool folded;
	atomic_t deferred;
	struct list_head node;
};

#ifdef CONFIG_PERF_EVENTS
/**
 * struct tu_target - a perf event of a uprobe event that has a target task
 * @node: in the event's filter->perf_events, an RCU list
 * @event: the perf event
 * @task: its target, with a reference of ours: perf drops its own as soon as
 *	the event closes, while handlers may still be looking at this entry
 * @rcu: frees the entry and drops the reference after readers are done
 */
struct tu_target {
	struct list_head node;
	struct perf_event *event;
	struct task_struct *task;
	struct rcu_head rcu;
};
#endif

/*
 * Longest records, headers included: strings are cut to fit. A trace
 * record must fit a ring-buffer page with its headers; perf's buffer is
 * larger.
 */
#define UPROBE_MAX_TRACE_RECORD	(PAGE_SIZE - 96)
#define UPROBE_MAX_PERF_RECORD	(PERF_MAX_TRACE_SIZE - sizeof(u64))
/* Records up to this size are fetched on the stack. */
#define UPROBE_STACK_RECORD	256

/**
 * struct uprobe_fetch - what the fetch program of one hit reads
 * @regs: the task's user registers at the hit
 * @tu: the probe that was hit
 * @reg: the registration whose handler runs
 * @vaddr: user address of the probed instruction (entry) or function
 *	(return)
 */
struct uprobe_fetch {
	struct pt_regs *regs;
	struct trace_uprobe *tu;
	struct tu_reg *reg;
	unsigned long vaddr;
};

/**
 * struct uprobe_record - a scratch record: one hit's arguments, fetched
 *	with page faults allowed
 * @data: tu_head_size() bytes left for the header, then the arguments and
 *	their dynamic data
 * @size: bytes in @data, header included
 * @onstack: the buffer used when it is big enough
 */
struct uprobe_record {
	u8 *data;
	int size;
	u64 onstack[UPROBE_STACK_RECORD / sizeof(u64)];
};

static inline struct trace_uprobe *tu_from_tp(struct trace_probe *tp)
{
	return container_of(tp, struct trace_uprobe, tp);
}

static inline bool tu_is_ret(struct trace_uprobe *tu)
{
	return tu->is_ret;
}

/* Bytes of a record's head: the probed address, or two for a return probe. */
static inline int tu_head_size(struct trace_uprobe *tu)
{
	return sizeof(struct uprobe_record_head) +
	       (tu_is_ret(tu) ? 2 : 1) * sizeof(unsigned long);
}

/* Bytes of a record with @dsize bytes of dynamic data, header included. */
static inline int tu_record_size(struct trace_uprobe *tu, int dsize)
{
	return tu_head_size(tu) + tu->tp.size + dsize;
}

/* The perf targets of @tu's event. */
static inline struct trace_uprobe_filter *
tu_event_filter(struct trace_uprobe *tu)
{
	return tu->tp.event->filter;
}

/* The hit path: trace_uprobe_hit.c */
bool tu_filter(struct uprobe_consumer *uc, enum uprobe_filter_ctx ctx,
	       struct mm_struct *mm);
int tu_entry_handler(struct uprobe_consumer *uc, struct pt_regs *regs);
int tu_return_handler(struct uprobe_consumer *uc, unsigned long func,
		      struct pt_regs *regs);
#ifdef CONFIG_PERF_EVENTS
bool tu_perf_wants(struct trace_uprobe *tu, struct mm_struct *mm);
#else
static inline bool tu_perf_wants(struct trace_uprobe *tu,
				 struct mm_struct *mm)
{
	return false;
}
#endif

/* The arguments and the record format: trace_uprobe_fetch.c */
void tu_prepare_fetch(struct trace_uprobe *tu);
bool tu_dynamic_size_nofault(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			     int limit, int *dsize);
int tu_fetch_record(struct trace_uprobe *tu, struct uprobe_fetch *uf,
		    struct uprobe_record *rec, int limit);
void tu_free_record(struct uprobe_record *rec);
bool tu_fetch_nofault(struct trace_uprobe *tu, struct uprobe_fetch *uf,
		      void *entry, int dsize);
void tu_set_record_format(struct trace_event_call *call);

/**
 * tu_fill_record - fill a record reserved in an output buffer
 * @tu: the probe that was hit
 * @uf: the hit
 * @entry: the record, tu_record_size(@tu, @dsize) bytes or @rec->size
 * @rec: a scratch record to copy, or NULL to fetch the arguments straight
 *	into @entry without a page fault (preemption disabled)
 * @dsize: with no @rec, the bytes of dynamic data measured for @entry
 *
 * Inline: a hit of a probe without arguments, the most common, only
 * writes the head.
 *
 * Return: false when a read needed a page fault: @entry is incomplete, and
 * the hit must be fetched again with faults allowed (tu_fetch_record()).
 */
static __always_inline bool tu_fill_record(struct trace_uprobe *tu,
					   struct uprobe_fetch *uf,
					   void *entry,
					   struct uprobe_record *rec,
					   int dsize)
{
	struct uprobe_record_head *head = entry;
	int hsize = tu_head_size(tu);

	head->vaddr[0] = uf->vaddr;
	if (tu_is_ret(tu))
		head->vaddr[1] = instruction_pointer(uf->regs);
	if (rec) {
		memcpy((u8 *)entry + hsize, rec->data + hsize,
		       rec->size - hsize);
		return true;
	}
	return !tu->tp.nr_args || tu_fetch_nofault(tu, uf, entry, dsize);
}

#endif /* _TRACE_UPROBE_H */
