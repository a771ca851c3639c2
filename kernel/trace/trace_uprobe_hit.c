// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based dynamic events: the hit path, and where its records go.
 *
 * The core calls tu_entry_handler() and tu_return_handler() in the probed
 * task, preemptible, with its user registers, in the core's global SRCU
 * read section: they may sleep, but must never wait for the task's memory
 * (a process can make such a wait last for ever). A handler measures the
 * strings among the arguments, reserves the record in each enabled trace
 * instance's ring buffer, or in perf's buffer, and fetches the arguments
 * straight into it (trace_uprobe_fetch.c), all with page faults disabled. When a read misses a
 * page (not yet touched, swapped out, or one the process makes wait for
 * ever), that record is dropped and the hit is finished on the task's way
 * back to user mode, out of the read section (struct tu_deferred, a task
 * work holding its registration): fetched once more, faults allowed, into
 * a scratch record (on the stack when small, else kmalloc()ed) that is
 * then copied. Such arguments are read, not lost, and recorded a little
 * later. Nothing is fetched when no instance records (tracing off,
 * soft-disabled) and no perf event wants the hit.
 *
 * Design rules
 *   - No per-CPU fetch buffers and no mutex on the hit path: records are
 *     fetched where they go, or into a scratch record of the hit's own, so
 *     tasks never wait for each other, and a record too big for its buffer
 *     has its strings cut rather than being dropped.
 *   - Trace files and perf may use one event at the same time; the core's
 *     filter (tu_filter()) is "any trace file, or a perf target in this
 *     mm".
 *   - Perf targets are matched per process (mm); a target whose mm is gone
 *     (an exited thread-group leader) is matched through its live threads.
 *     That match decides where breakpoints go and whether BPF programs
 *     run; perf's per-CPU event lists decide which events count a hit, as
 *     they hold the running task's events even when perf has swapped its
 *     context with its parent's or child's (inherited events, each on its
 *     own local event, with the other's target).
 */
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/task_work.h>
#include <linux/uprobes.h>
#include <linux/wait_bit.h>

#include "trace_uprobe.h"

static struct trace_uprobe *uc_to_tu(struct uprobe_consumer *uc)
{
	return container_of(uc, struct tu_reg, consumer)->tu;
}

/* ------------------------------------------------------- ftrace output */

/*
 * Would a hit be recorded (or seen by a trigger) in @file? Tracing on or
 * off is read from buffer_disabled, the mirror of the ring buffer's state
 * that tracing_is_enabled() reads for fast paths too: racy, and blind to
 * the buffer's internal pauses (a resize), when the reserve then fails.
 */
static bool file_records(struct trace_event_file *file)
{
	return !READ_ONCE(file->tr->buffer_disabled) ||
	       (file->flags & EVENT_FILE_FL_TRIGGER_COND);
}

/*
 * Record the hit in @file's ring buffer: a copy of @rec, or with no @rec
 * the arguments fetched into the reserved event. False when that fetch
 * missed a page: nothing is recorded. Caller is in an RCU read section.
 */
static __always_inline bool record_to_file(struct trace_uprobe *tu,
					   struct uprobe_fetch *uf,
					   struct uprobe_record *rec, int dsize,
					   struct trace_event_file *file)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	struct trace_event_buffer fbuffer = {};
	int size = rec ? rec->size : tu_record_size(tu, dsize);

	fbuffer.trace_file = file;
	fbuffer.trace_ctx = tracing_gen_ctx();
	fbuffer.event = trace_event_buffer_lock_reserve(&fbuffer.buffer, file,
							call->event.type, size,
							fbuffer.trace_ctx);
	if (!fbuffer.event)
		return true;	/* not recording after all: nothing to fetch */
	fbuffer.entry = ring_buffer_event_data(fbuffer.event);
	if (!tu_fill_record(tu, uf, fbuffer.entry, rec, dsize)) {
		__trace_event_discard_commit(fbuffer.buffer, fbuffer.event);
		return false;
	}
	trace_event_buffer_commit(&fbuffer);
	return true;
}

/* Does @file run triggers, or filter, before it records a hit? */
static bool file_checks_first(struct trace_event_file *file)
{
	return file->flags & (EVENT_FILE_FL_TRIGGER_MODE |
			      EVENT_FILE_FL_SOFT_DISABLED |
			      EVENT_FILE_FL_PID_FILTER);
}

/* Is @file soft-disabled, or is this task filtered out? Runs no trigger. */
static bool file_skips(struct trace_event_file *file)
{
	unsigned long flags = file->flags;

	if (flags & EVENT_FILE_FL_SOFT_DISABLED)
		return true;
	return (flags & EVENT_FILE_FL_PID_FILTER) &&
	       trace_event_ignore_this_pid(file);
}

static void defer_hit(struct uprobe_fetch *uf, int from, bool perf);

/*
 * A fetch into a reserved event missed a page: fetch the hit again with
 * faults allowed, into a scratch record, and copy that into the files from
 * the @from-th link of the event on, whose triggers have run already. A
 * file enabled or disabled in between may shift the count, and get one
 * hit more or less around its enable or disable. Runs from the task's way
 * back to user mode (tu_deferred_run()).
 */
static noinline void trace_hit_faulting(struct trace_uprobe *tu,
					struct uprobe_fetch *uf, int from)
{
	struct event_file_link *link;
	struct uprobe_record rec;
	int n = 0;

	if (tu_fetch_record(tu, uf, &rec, UPROBE_MAX_TRACE_RECORD))
		return;
	rcu_read_lock();
	trace_probe_for_each_link_rcu(link, &tu->tp) {
		if (n++ < from)
			continue;
		if (!file_skips(link->file) && file_records(link->file))
			record_to_file(tu, uf, &rec, 0, link->file);
	}
	rcu_read_unlock();
	tu_free_record(&rec);
}

/* trace_hit() with a file to record in or to run the triggers of. */
static noinline void trace_hit_files(struct trace_uprobe *tu,
				     struct uprobe_fetch *uf, bool wanted)
{
	struct event_file_link *link;
	int n = 0, missed = -1, dsize = 0;

	/* A string that needs a page fault: every record waits (defer_hit()). */
	if (wanted && tu->dynamic &&
	    !tu_dynamic_size_nofault(tu, uf, UPROBE_MAX_TRACE_RECORD, &dsize))
		missed = 0;

	rcu_read_lock();
	trace_probe_for_each_link_rcu(link, &tu->tp) {
		n++;
		/* Runs unconditional triggers; true when soft-disabled. */
		if (trace_trigger_soft_disabled(link->file))
			continue;
		if (wanted && missed < 0 && file_records(link->file) &&
		    !record_to_file(tu, uf, NULL, dsize, link->file))
			missed = n - 1;
	}
	rcu_read_unlock();
	if (missed >= 0)
		defer_hit(uf, missed, false);
}

/*
 * Record a hit in every trace instance where the event is enabled. With
 * tracing off and no triggers that is nothing, and costs one look at the
 * files: the record (a few hundred bytes the compiler may zero) stays
 * off this path.
 */
static __always_inline void trace_hit(struct trace_uprobe *tu,
				      struct uprobe_fetch *uf)
{
	struct event_file_link *link;
	bool wanted = false, checks = false;

	rcu_read_lock();
	trace_probe_for_each_link_rcu(link, &tu->tp) {
		wanted |= file_records(link->file);
		checks |= file_checks_first(link->file);
	}
	rcu_read_unlock();
	if (wanted || checks)
		trace_hit_files(tu, uf, wanted);
}

/* --------------------------------------------------------- perf output */

#ifdef CONFIG_PERF_EVENTS
/* Is @task, or (its mm gone) a live thread of its group, using @mm? */
static bool task_uses_mm(struct task_struct *task, struct mm_struct *mm)
{
	struct task_struct *t;
	bool found = false;

	if (READ_ONCE(task->mm) == mm)
		return true;
	if (READ_ONCE(task->mm))
		return false;
	/* An exited leader: its threads still run in the process's mm. */
	rcu_read_lock();
	for_each_thread(task, t) {
		if (READ_ONCE(t->mm) == mm) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * tu_perf_wants - does a perf event of @tu's event want hits in @mm?
 * @tu: the probe
 * @mm: the process's mm
 *
 * Lock-free: the count of system-wide events, then the targets under RCU
 * (no shared cache line is written, however many CPUs hit the probe).
 *
 * Return: true if a system-wide perf event or a target in @mm wants them.
 */
bool tu_perf_wants(struct trace_uprobe *tu, struct mm_struct *mm)
{
	struct trace_uprobe_filter *filter = tu_event_filter(tu);
	struct tu_target *pt;
	bool ret = false;

	if (READ_ONCE(filter->nr_systemwide))
		return true;
	rcu_read_lock();
	list_for_each_entry_rcu(pt, &filter->perf_events, node) {
		if (task_uses_mm(pt->task, mm)) {
			ret = true;
			break;
		}
	}
	rcu_read_unlock();
	return ret;
}

/*
 * Is an event of @tu's on this CPU's list? Only the events of the running
 * task's context and of CPU-wide contexts are there. perf swaps the
 * contexts of a parent and its child when their inherited events match, so
 * the running task's event may be one whose target is another process.
 */
static bool perf_on_this_cpu(struct trace_uprobe *tu)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	bool on_cpu = false;

	/* A hint. call->perf_events exists while TP_FLAG_PROFILE is set. */
	rcu_read_lock();
	if (trace_probe_load_flag(&tu->tp) & TP_FLAG_PROFILE)
		on_cpu = !hlist_empty(raw_cpu_ptr(call->perf_events));
	rcu_read_unlock();
	return on_cpu;
}

/*
 * Hand the hit to the perf events on this CPU: a copy of @rec, or with no
 * @rec the arguments fetched into perf's buffer. False when that fetch
 * missed a page: nothing was handed over.
 */
static bool record_to_perf(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			   struct uprobe_record *rec, int dsize)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	int rsize = rec ? rec->size : tu_record_size(tu, dsize);
	int size = ALIGN(rsize + sizeof(u32), sizeof(u64)) - sizeof(u32);
	struct hlist_head *head;
	bool done = true;
	void *entry;
	int rctx;

	/* An RCU section: perf frees call->perf_events after a grace period. */
	preempt_disable();
	if (!(trace_probe_load_flag(&tu->tp) & TP_FLAG_PROFILE))
		goto enable_preempt;
	head = this_cpu_ptr(call->perf_events);
	if (hlist_empty(head))
		goto enable_preempt;
	entry = perf_trace_buf_alloc(size, NULL, &rctx);
	if (!entry)
		goto enable_preempt;
	if (!tu_fill_record(tu, uf, entry, rec, dsize)) {
		perf_swevent_put_recursion_context(rctx);
		done = false;
		goto enable_preempt;
	}
	perf_trace_buf_submit(entry, size, rctx, call->event.type, 1, uf->regs,
			      head, NULL);
enable_preempt:
	preempt_enable();
	return done;
}

/*
 * Hand a hit to BPF programs if a target of the event wants this process
 * (@bpf), then to the perf events on this CPU if perf_on_this_cpu() found
 * any (@on_cpu, a hint: record_to_perf() looks again).
 */
static void perf_hit(struct trace_uprobe *tu, struct uprobe_fetch *uf,
		     bool bpf, bool on_cpu)
{
	int dsize = 0;

#ifdef CONFIG_BPF_EVENTS
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);

	/* Sleepable programs are allowed on uprobes: we may sleep here. */
	if (bpf && bpf_prog_array_valid(call) &&
	    !bpf_prog_run_array_sleepable(call->prog_array, uf->regs,
					  bpf_prog_run))
		return;
#endif
	if (!on_cpu)
		return;		/* only skips work nobody wants */
	/* A page was missed: once more, with faults allowed, later. */
	if ((tu->dynamic &&
	     !tu_dynamic_size_nofault(tu, uf, UPROBE_MAX_PERF_RECORD, &dsize)) ||
	    !record_to_perf(tu, uf, NULL, dsize))
		defer_hit(uf, -1, true);
}

/* perf_hit() once more, with page faults allowed (tu_deferred_run()). */
static void perf_hit_faulting(struct trace_uprobe *tu, struct uprobe_fetch *uf)
{
	struct uprobe_record rec;

	if (tu_fetch_record(tu, uf, &rec, UPROBE_MAX_PERF_RECORD))
		return;
	record_to_perf(tu, uf, &rec, 0);
	tu_free_record(&rec);
}
#else
static bool perf_on_this_cpu(struct trace_uprobe *tu)
{
	return false;
}

static void perf_hit(struct trace_uprobe *tu, struct uprobe_fetch *uf,
		     bool bpf, bool on_cpu)
{
}

static void perf_hit_faulting(struct trace_uprobe *tu, struct uprobe_fetch *uf)
{
}
#endif

/* ------------------------------------------------------ deferred fetches */

/**
 * struct tu_deferred - a hit whose arguments need a page fault to fetch
 * @work: run on the task's way back to user mode (tu_deferred_run())
 * @reg: the registration whose handler deferred it; its @deferred counts
 *	this, so that it and its trace_uprobe stay
 * @regs: a copy of the task's user registers at the hit
 * @vaddr: the hit's struct uprobe_fetch.vaddr
 * @from: record in the trace files from this link of the event on (as
 *	trace_hit_faulting()), -1 for none
 * @perf: hand the hit to the perf events on the CPU
 *
 * Handlers run in the core's global SRCU read section, where nothing may
 * wait for user memory: a process can make such a wait last for ever.
 */
struct tu_deferred {
	struct callback_head work;
	struct tu_reg *reg;
	struct pt_regs regs;
	unsigned long vaddr;
	int from;
	bool perf;
};

static void put_deferred(struct tu_reg *reg)
{
	/* Pairs with atomic_read_acquire() in wait_retired(), reap_retired(). */
	if (atomic_dec_and_test(&reg->deferred))
		wake_up_var(&reg->deferred);
}

static void tu_deferred_run(struct callback_head *work)
{
	struct tu_deferred *d = container_of(work, struct tu_deferred, work);
	struct trace_uprobe *tu = d->reg->tu;
	struct uprobe_fetch uf = {
		.regs = &d->regs,
		.tu = tu,
		.reg = d->reg,
		.vaddr = d->vaddr,
	};

	/* From do_exit() the memory is gone: nothing to fetch. */
	if (current->mm && !(current->flags & PF_EXITING)) {
		if (d->from >= 0)
			trace_hit_faulting(tu, &uf, d->from);
		if (d->perf)
			perf_hit_faulting(tu, &uf);
	}
	put_deferred(d->reg);
	kfree(d);
}

/*
 * Finish a hit whose fetch missed a page on current's way back to user
 * mode, out of the core's read section, with page faults allowed; the
 * memory it reads is the same until then. Without memory for that, the
 * hit (counted) goes unrecorded.
 */
static void defer_hit(struct uprobe_fetch *uf, int from, bool perf)
{
	struct tu_deferred *d;

	d = kmalloc(sizeof(*d), GFP_NOWAIT | __GFP_NOWARN);
	if (!d)
		return;
	d->reg = uf->reg;
	d->regs = *uf->regs;
	d->vaddr = uf->vaddr;
	d->from = from;
	d->perf = perf;
	init_task_work(&d->work, tu_deferred_run);
	atomic_inc(&d->reg->deferred);
	if (task_work_add(current, &d->work, TWA_RESUME)) {
		put_deferred(d->reg);	/* current is exiting */
		kfree(d);
	}
}

/* ------------------------------------------------------------- handlers */

/**
 * tu_filter - the consumer's filter: does the event want hits in @mm?
 * @uc: the consumer of one registration (struct tu_reg)
 * @ctx: why the core asks
 * @mm: the mm it asks about
 *
 * Return: true if a trace file has the event (every mm), or perf has it
 * for a system-wide event or a target in @mm.
 */
bool tu_filter(struct uprobe_consumer *uc, enum uprobe_filter_ctx ctx,
	       struct mm_struct *mm)
{
	struct trace_uprobe *tu = uc_to_tu(uc);
	unsigned int flags = trace_probe_load_flag(&tu->tp);

	if (flags & TP_FLAG_TRACE)
		return true;
	return (flags & TP_FLAG_PROFILE) && tu_perf_wants(tu, mm);
}

/*
 * Send a hit to the trace files and to perf and BPF, as the event's users
 * want it. *@unwanted: none of them wants hits in this process.
 */
static void trace_and_perf_hit(struct trace_uprobe *tu,
			       struct uprobe_fetch *uf, bool *unwanted)
{
	unsigned int flags = trace_probe_load_flag(&tu->tp);
	bool targeted = false, on_cpu = false;

	if (flags & TP_FLAG_PROFILE) {
		targeted = tu_perf_wants(tu, current->mm);
		on_cpu = perf_on_this_cpu(tu);
	}
	*unwanted = !(flags & TP_FLAG_TRACE) && !targeted && !on_cpu;
	if (flags & TP_FLAG_TRACE)
		trace_hit(tu, uf);
	if (targeted || on_cpu)
		perf_hit(tu, uf, targeted, on_cpu);
}

/**
 * tu_entry_handler - the consumer's handler: a hit at the probed address
 * @uc: the consumer of one registration (struct tu_reg)
 * @regs: the task's user registers
 *
 * Counts the hit, and records it for an entry probe; for a return probe
 * only tells whether the return is wanted.
 *
 * Return: UPROBE_HANDLER_REMOVE when nothing wants hits in this process
 * any more, else 0.
 */
int tu_entry_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct trace_uprobe *tu = uc_to_tu(uc);
	struct uprobe_fetch uf = {
		.regs = regs,
		.tu = tu,
		.reg = container_of(uc, struct tu_reg, consumer),
		/* the core runs handlers with the IP at the probed address */
		.vaddr = instruction_pointer(regs),
	};
	bool unwanted;

	this_cpu_inc(*tu->nhits);
	if (tu_is_ret(tu)) {
		/* Entry of a return probe: only say whether it is wanted. */
		if (!tu_filter(uc, UPROBE_FILTER_MMAP, current->mm) &&
		    !perf_on_this_cpu(tu))
			return UPROBE_HANDLER_REMOVE;
		return 0;
	}
	/* Trace files only: trace_hit()'s inline look may be all it costs. */
	if (trace_probe_load_flag(&tu->tp) == TP_FLAG_TRACE) {
		trace_hit(tu, &uf);
		return 0;
	}
	trace_and_perf_hit(tu, &uf, &unwanted);
	return unwanted ? UPROBE_HANDLER_REMOVE : 0;
}

/**
 * tu_return_handler - the consumer's handler at a probed function's return
 * @uc: the consumer of one registration (struct tu_reg)
 * @func: the function's address (the probed address)
 * @regs: the task's user registers at the return
 *
 * Records the return (counted at the entry).
 *
 * Return: 0.
 */
int tu_return_handler(struct uprobe_consumer *uc, unsigned long func,
		      struct pt_regs *regs)
{
	struct trace_uprobe *tu = uc_to_tu(uc);
	struct uprobe_fetch uf = {
		.regs = regs,
		.tu = tu,
		.reg = container_of(uc, struct tu_reg, consumer),
		.vaddr = func,
	};
	bool unwanted;

	if (trace_probe_load_flag(&tu->tp) == TP_FLAG_TRACE) {
		trace_hit(tu, &uf);
		return 0;
	}
	trace_and_perf_hit(tu, &uf, &unwanted);
	return 0;
}
