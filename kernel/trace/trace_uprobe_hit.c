// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based dynamic events: the hit path, and the records it writes.
 *
 * The core calls tu_entry_handler() and tu_return_handler() in the probed
 * task, preemptible, with its user registers, in the core's global SRCU
 * read section: they may sleep, but must never wait for the task's memory
 * (a process can make such a wait last for ever). A handler measures the
 * strings among the arguments, reserves the record in each enabled trace
 * instance's ring buffer, or in perf's buffer, and fetches the arguments
 * straight into it, all with page faults disabled. When a read misses a
 * page (not yet touched, swapped out, or one the process makes wait for
 * ever), that record is dropped and the hit is finished on the task's way
 * back to user mode, out of the read section (struct tu_deferred, a task
 * work holding its registration): fetched once more, faults allowed, into
 * a scratch record (on the stack when small, else kmalloc()ed) that is
 * then copied. Such arguments are read, not lost, and recorded a little
 * later. Nothing is fetched when no instance records (tracing off,
 * soft-disabled) and no perf event wants the hit.
 *
 * The trace_probe library runs the fetch program; this file supplies its
 * stage-1 operations on user registers and memory.
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
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/wait_bit.h>

#include "trace_uprobe.h"
#include "trace_probe_tmpl.h"

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

static struct trace_uprobe *uc_to_tu(struct uprobe_consumer *uc)
{
	return container_of(uc, struct tu_reg, consumer)->tu;
}

/* ------------------------------------------------------------ fetching */

/*
 * Set by a read of user memory that failed while page faults were
 * disabled, in fetch_nofault(), which clears it before and tests it after
 * the fetch; both run with preemption disabled, so on one CPU.
 */
static DEFINE_PER_CPU(bool, fetch_missed);

/* A user read failed: a miss of fetch_nofault(), or a real fault. */
static nokprobe_inline void fetch_failed(void)
{
	if (pagefault_disabled())
		__this_cpu_write(fetch_missed, true);
}

/*
 * The fetch program runs in the probed task and reads user memory with the
 * ordinary user accessors: with page faults disabled straight into a
 * reserved record (fetch_nofault()), and when that misses a page once more
 * with faults allowed. A read that fails leaves zeroes (fixed-size values)
 * or "(fault)" (strings).
 */
static nokprobe_inline int probe_mem_read(void *dest, void *src, size_t size)
{
	if (copy_from_user(dest, (void __force __user *)src, size)) {
		memset(dest, 0, size);
		fetch_failed();
		return -EFAULT;
	}
	return 0;
}

static nokprobe_inline int probe_mem_read_user(void *dest, void *src,
					       size_t size)
{
	return probe_mem_read(dest, src, size);
}

/* Length of the string at @addr with its NUL (0 on a fault), capped. */
static nokprobe_inline int fetch_store_strlen(unsigned long addr)
{
	long len;

	if (addr == FETCH_TOKEN_COMM)
		return strlen(current->comm) + 1;
	len = strnlen_user((const char __user *)addr, MAX_STRING_SIZE);
	if (!len)
		fetch_failed();
	return min_t(long, len, MAX_STRING_SIZE);
}

static nokprobe_inline int fetch_store_strlen_user(unsigned long addr)
{
	return fetch_store_strlen(addr);
}

/*
 * Copy the string at @addr into the dynamic area that *@dest (a data_loc)
 * points to, cut to its length, NUL terminated, and record the length.
 */
static nokprobe_inline int fetch_store_string(unsigned long addr, void *dest,
					      void *base)
{
	int maxlen = get_loc_len(*(u32 *)dest);
	char *dst = get_loc_data(dest, base);
	long len;

	if (unlikely(!maxlen))
		return -ENOMEM;
	if (addr == FETCH_TOKEN_COMM) {
		len = strscpy(dst, current->comm, maxlen);
		len = len < 0 ? maxlen : len + 1;
	} else {
		len = strncpy_from_user(dst, (const char __user *)addr, maxlen);
		if (len < 0) {
			fetch_failed();
			*(u32 *)dest = make_data_loc(0, dst - (char *)base);
			return len;
		}
		if (len == maxlen)
			dst[maxlen - 1] = '\0';	/* it grew since measured */
		else
			len++;
	}
	*(u32 *)dest = make_data_loc(len, dst - (char *)base);
	return len;
}

static nokprobe_inline int fetch_store_string_user(unsigned long addr,
						   void *dest, void *base)
{
	return fetch_store_string(addr, dest, base);
}

/* An immediate string (\"...") lives in the kernel, in the fetch program. */
static int fetch_imm_string(struct fetch_insn *code, void *dest, void *base)
{
	const char *str = code->data;
	int maxlen, len = strlen(str) + 1;
	char *dst;

	code++;
	if (code->op != FETCH_OP_ST_STRING && code->op != FETCH_OP_ST_USTRING)
		return -EILSEQ;
	if (code[1].op != FETCH_OP_END)
		return -EILSEQ;
	if (!dest)
		return len;
	maxlen = get_loc_len(*(u32 *)dest);
	if (unlikely(!maxlen))
		return -ENOMEM;
	dst = get_loc_data(dest, base);
	len = min(len, maxlen);
	memcpy(dst, str, len);
	dst[len - 1] = '\0';
	*(u32 *)dest = make_data_loc(len, dst - (char *)base);
	return len;
}

/* The @n-th word on the user stack. */
static unsigned long user_stack_nth(struct pt_regs *regs, unsigned int n)
{
	unsigned long __user *sp = (unsigned long __user *)
				   user_stack_pointer(regs);
	unsigned long val;

	if (get_user(val, sp + n)) {
		fetch_failed();
		return 0;
	}
	return val;
}

/*
 * @+OFFSET: OFFSET from where the probed segment's mapping puts file offset
 * 0. For the usual ELF layout (each segment's file offsets equal its link
 * addresses up to one bias) that is the object at link address OFFSET, in
 * any segment; users' offsets rely on this rule (part of the ABI).
 */
static unsigned long foffs_to_vaddr(struct uprobe_fetch *uf,
				    unsigned long foffs)
{
	return uf->vaddr - uf->tu->offset + foffs;
}

/* The value stage 1 of the fetch program starts from; false if none. */
static __always_inline bool fetch_base(struct fetch_insn *code,
				       struct uprobe_fetch *uf,
				       unsigned long *val)
{
	struct pt_regs *regs = uf->regs;

	switch (code->op) {
	case FETCH_OP_REG:
		*val = regs_get_register(regs, code->param);
		return true;
	case FETCH_OP_STACK:
		*val = user_stack_nth(regs, code->param);
		return true;
	case FETCH_OP_STACKP:
		*val = user_stack_pointer(regs);
		return true;
	case FETCH_OP_RETVAL:
		*val = regs_return_value(regs);
		return true;
	case FETCH_OP_IMM:
		*val = code->immediate;
		return true;
	case FETCH_OP_COMM:
		*val = FETCH_TOKEN_COMM;
		return true;
	case FETCH_OP_FOFFS:
		*val = foffs_to_vaddr(uf, code->immediate);
		return true;
	default:
		return false;
	}
}

/* Stage 1 of the fetch program; the library runs the rest. */
static int process_fetch_insn(struct fetch_insn *code, void *rec, void *dest,
			      void *base)
{
	unsigned long val;

	if (code->op == FETCH_OP_DATA)
		return fetch_imm_string(code, dest, base);
	if (!fetch_base(code, rec, &val))
		return -EILSEQ;
	return process_fetch_insn_bottom(code + 1, val, dest, base);
}

/*
 * Is @arg a value stored as it is, or a number or string read from user
 * memory at a value plus an offset: a fetch program of a stage 1, one
 * store and nothing else (no dereference chain, bitfield or array)?
 */
static bool arg_is_simple(struct probe_arg *arg)
{
	struct fetch_insn *code = arg->code;

	if (arg->count || code[0].op == FETCH_OP_DATA)
		return false;
	switch (code[1].op) {
	case FETCH_OP_ST_RAW:
	case FETCH_OP_ST_MEM:
	case FETCH_OP_ST_UMEM:
		if (arg->dynamic || code[0].op == FETCH_OP_COMM)
			return false;
		break;
	case FETCH_OP_ST_STRING:
	case FETCH_OP_ST_USTRING:
		break;
	default:
		return false;
	}
	return code[2].op == FETCH_OP_END;
}

/* The length of simple string argument @code for this hit (dynamic_size()). */
static int simple_strlen(struct fetch_insn *code, struct uprobe_fetch *uf)
{
	unsigned long val;

	if (!fetch_base(code, uf, &val))
		return 0;	/* not reached: arg_is_simple() */
	return fetch_store_strlen(val + code[1].offset);
}

/*
 * Fetch arguments that are all simple (arg_is_simple()) into @data, the
 * record's argument area, and its @dsize bytes of dynamic data, which
 * they fill: the fetch program's work without its interpreter.
 */
static void fetch_simple(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			 u8 *data, int dsize)
{
	u8 *base = data - tu_head_size(tu), *dyn = data + tu->tp.size;
	struct fetch_insn *code;
	unsigned long val;
	void *dest;
	int i, len;

	for (i = 0; i < tu->tp.nr_args; i++) {
		code = tu->tp.args[i].code;
		dest = data + tu->tp.args[i].offset;
		if (!fetch_base(code, uf, &val))
			val = 0;	/* not reached: arg_is_simple() */
		switch (code[1].op) {
		case FETCH_OP_ST_RAW:
			fetch_store_raw(val, &code[1], dest);
			break;
		case FETCH_OP_ST_MEM:
		case FETCH_OP_ST_UMEM:
			probe_mem_read(dest, (void *)val + code[1].offset,
				       code[1].size);
			break;
		default:	/* a string */
			*(u32 *)dest = make_data_loc(dsize, dyn - base);
			len = fetch_store_string(val + code[1].offset, dest,
						 base);
			if (len > 0) {
				dyn += len;
				dsize -= len;
			}
		}
	}
	/* Strings shorter than measured leave bytes nothing wrote. */
	if (dsize > 0)
		memset(dyn, 0, dsize);
}

/*
 * A trace record must also print as one line of at most a page: a string
 * prints with quotes and a separator, a cut one as "(fault)", a number as
 * up to 19 characters. How many bytes of strings leave room for that.
 */
static int trace_text_room(struct trace_uprobe *tu)
{
	int i, n, room = PAGE_SIZE - 160 - MAX_EVENT_NAME_LEN;
	struct probe_arg *arg;

	for (i = 0; i < tu->tp.nr_args; i++) {
		arg = &tu->tp.args[i];
		n = arg->count ? arg->count : 1;
		room -= strlen(arg->name) + 2;
		room -= n * (arg->dynamic ? 10 : 20);
	}
	return max(room, 0);
}

/**
 * tu_prepare_fetch - what the hit path needs to know of parsed arguments
 * @tu: a probe whose arguments are parsed
 *
 * Sets @tu's text_room, dynamic and simple.
 */
void tu_prepare_fetch(struct trace_uprobe *tu)
{
	int i;

	tu->text_room = trace_text_room(tu);
	tu->simple = true;
	for (i = 0; i < tu->tp.nr_args; i++) {
		tu->dynamic |= tu->tp.args[i].dynamic;
		tu->simple &= arg_is_simple(&tu->tp.args[i]);
	}
}

/* Bytes of dynamic data (strings) this hit needs, within @limit. */
static int dynamic_size(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			int limit)
{
	int i, len, room, total = 0;

	room = limit - tu_head_size(tu) - tu->tp.size;
	if (limit == UPROBE_MAX_TRACE_RECORD)
		room = min(room, tu->text_room);
	for (i = 0; i < tu->tp.nr_args; i++) {
		if (!tu->tp.args[i].dynamic)
			continue;
		if (tu->simple)
			len = simple_strlen(tu->tp.args[i].code, uf);
		else
			len = process_fetch_insn(tu->tp.args[i].code, uf,
						 NULL, NULL);
		if (len > 0)
			total += len;
	}
	return clamp(total, 0, max(room, 0));
}

/* Bytes of a record with @dsize bytes of dynamic data, header included. */
static int record_size(struct trace_uprobe *tu, int dsize)
{
	return tu_head_size(tu) + tu->tp.size + dsize;
}

/*
 * dynamic_size() into *@dsize without taking a page fault (nothing sleeps,
 * so on one CPU for fetch_missed). False when a string needed one.
 */
static bool dynamic_size_nofault(struct trace_uprobe *tu,
				 struct uprobe_fetch *uf, int limit, int *dsize)
{
	bool missed;

	preempt_disable();
	__this_cpu_write(fetch_missed, false);
	pagefault_disable();
	*dsize = dynamic_size(tu, uf, limit);
	pagefault_enable();
	missed = __this_cpu_read(fetch_missed);
	preempt_enable();
	return !missed;
}

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

/*
 * Fetch the arguments into @rec, a record of at most @limit bytes, with
 * page faults allowed.
 */
static int fetch_record(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			struct uprobe_record *rec, int limit)
{
	int hsize = tu_head_size(tu), dsize = dynamic_size(tu, uf, limit);

	rec->size = record_size(tu, dsize);
	rec->data = (u8 *)rec->onstack;
	if (rec->size > sizeof(rec->onstack)) {
		rec->data = kmalloc(rec->size, GFP_KERNEL);
		if (!rec->data)
			return -ENOMEM;
	}
	/* Nothing stale may reach user space through perf. */
	memset(rec->data, 0, rec->size);
	store_trace_args(rec->data + hsize, &tu->tp, uf, hsize, dsize);
	return 0;
}

static void free_record(struct uprobe_record *rec)
{
	if (rec->data != (u8 *)rec->onstack)
		kfree(rec->data);
}

/* Header of a record: the probed address(es). */
static void fill_head(struct uprobe_record_head *entry,
		      struct trace_uprobe *tu, struct uprobe_fetch *uf)
{
	entry->vaddr[0] = uf->vaddr;
	if (tu_is_ret(tu))
		entry->vaddr[1] = instruction_pointer(uf->regs);
}

/*
 * Fetch the arguments straight into @data, a record_size(@dsize) bytes
 * record reserved in an output buffer (preemption disabled), without
 * taking a page fault. False when a read needed one: the record is
 * incomplete, and the hit must be fetched again with faults allowed
 * (fetch_record()).
 */
static bool fetch_nofault(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			  u8 *data, int dsize)
{
	int hsize = tu_head_size(tu);

	__this_cpu_write(fetch_missed, false);
	pagefault_disable();
	if (tu->simple) {
		fetch_simple(tu, uf, data + hsize, dsize);
	} else {
		/* Nothing stale may reach user space: a fetch may stop short. */
		memset(data + hsize, 0, tu->tp.size + dsize);
		store_trace_args(data + hsize, &tu->tp, uf, hsize, dsize);
	}
	pagefault_enable();
	return !__this_cpu_read(fetch_missed);
}

/*
 * Fill the record at @entry: the header, then a copy of @rec, or with no
 * @rec the arguments fetched straight into it (fetch_nofault()).
 */
static __always_inline bool fill_record(struct trace_uprobe *tu,
					struct uprobe_fetch *uf, void *entry,
					struct uprobe_record *rec, int dsize)
{
	int hsize = tu_head_size(tu);

	fill_head(entry, tu, uf);
	if (!rec)
		return !tu->tp.nr_args || fetch_nofault(tu, uf, entry, dsize);
	memcpy((u8 *)entry + hsize, rec->data + hsize, rec->size - hsize);
	return true;
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
	int size = rec ? rec->size : record_size(tu, dsize);

	fbuffer.trace_file = file;
	fbuffer.trace_ctx = tracing_gen_ctx();
	fbuffer.event = trace_event_buffer_lock_reserve(&fbuffer.buffer, file,
							call->event.type, size,
							fbuffer.trace_ctx);
	if (!fbuffer.event)
		return true;	/* not recording after all: nothing to fetch */
	fbuffer.entry = ring_buffer_event_data(fbuffer.event);
	if (!fill_record(tu, uf, fbuffer.entry, rec, dsize)) {
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

	if (fetch_record(tu, uf, &rec, UPROBE_MAX_TRACE_RECORD))
		return;
	rcu_read_lock();
	trace_probe_for_each_link_rcu(link, &tu->tp) {
		if (n++ < from)
			continue;
		if (!file_skips(link->file) && file_records(link->file))
			record_to_file(tu, uf, &rec, 0, link->file);
	}
	rcu_read_unlock();
	free_record(&rec);
}

/* trace_hit() with a file to record in or to run the triggers of. */
static noinline void trace_hit_files(struct trace_uprobe *tu,
				     struct uprobe_fetch *uf, bool wanted)
{
	struct event_file_link *link;
	int n = 0, missed = -1, dsize = 0;

	/* A string that needs a page fault: every record waits (defer_hit()). */
	if (wanted && tu->dynamic &&
	    !dynamic_size_nofault(tu, uf, UPROBE_MAX_TRACE_RECORD, &dsize))
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
	int rsize = rec ? rec->size : record_size(tu, dsize);
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
	if (!fill_record(tu, uf, entry, rec, dsize)) {
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
	     !dynamic_size_nofault(tu, uf, UPROBE_MAX_PERF_RECORD, &dsize)) ||
	    !record_to_perf(tu, uf, NULL, dsize))
		defer_hit(uf, -1, true);
}

/* perf_hit() once more, with page faults allowed (tu_deferred_run()). */
static void perf_hit_faulting(struct trace_uprobe *tu, struct uprobe_fetch *uf)
{
	struct uprobe_record rec;

	if (fetch_record(tu, uf, &rec, UPROBE_MAX_PERF_RECORD))
		return;
	record_to_perf(tu, uf, &rec, 0);
	free_record(&rec);
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

/* --------------------------------------------------- the record format */

static enum print_line_t print_record(struct trace_iterator *iter,
				      int flags,
				      struct trace_event *event)
{
	struct uprobe_record_head *entry;
	struct trace_seq *s = &iter->seq;
	struct trace_event_call *call;
	struct trace_uprobe *tu;
	struct trace_probe *tp;

	entry = (struct uprobe_record_head *)iter->ent;
	call = container_of(event, struct trace_event_call, event);
	tp = trace_probe_primary_from_call(call);
	if (WARN_ON_ONCE(!tp))
		goto out;
	tu = tu_from_tp(tp);
	if (tu_is_ret(tu))
		trace_seq_printf(s, "%s: (0x%lx <- 0x%lx)",
				 trace_probe_name(tp), entry->vaddr[1],
				 entry->vaddr[0]);
	else
		trace_seq_printf(s, "%s: (0x%lx)", trace_probe_name(tp),
				 entry->vaddr[0]);
	if (print_probe_args(s, tp->args, tp->nr_args,
			     (u8 *)entry + tu_head_size(tu), entry) < 0)
		goto out;
	trace_seq_putc(s, '\n');
out:
	return trace_handle_return(s);
}

static struct trace_event_functions record_funcs = {
	.trace = print_record,
};

static int define_record_fields(struct trace_event_call *event_call)
{
	struct uprobe_record_head field;
	struct trace_uprobe *tu;
	struct trace_probe *tp;
	int ret;

	tp = trace_probe_primary_from_call(event_call);
	if (WARN_ON_ONCE(!tp))
		return -ENOENT;
	tu = tu_from_tp(tp);
	if (tu_is_ret(tu)) {
		DEFINE_FIELD(unsigned long, vaddr[0], FIELD_STRING_FUNC, 0);
		DEFINE_FIELD(unsigned long, vaddr[1], FIELD_STRING_RETIP, 0);
	} else {
		DEFINE_FIELD(unsigned long, vaddr[0], FIELD_STRING_IP, 0);
	}
	return traceprobe_define_arg_fields(event_call, tu_head_size(tu), tp);
}

static struct trace_event_fields record_fields[] = {
	{ .type = TRACE_FUNCTION_TYPE,
	  .define_fields = define_record_fields },
	{}
};

/**
 * tu_set_record_format - give an event the fields and printing of our records
 * @call: the event of a uprobe
 */
void tu_set_record_format(struct trace_event_call *call)
{
	call->event.funcs = &record_funcs;
	call->class->fields_array = record_fields;
}
