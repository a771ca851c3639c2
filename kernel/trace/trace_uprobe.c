// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based dynamic events: the tracefs and perf front end of uprobes.
 *
 * A user defines an event with a line in uprobe_events or dynamic_events,
 *
 *	p|r[:[GRP/][EVENT]] PATH:OFFSET[%return][(REF_CTR_OFFSET)] [FETCHARGS]
 *	-:[GRP/]EVENT [PATH:OFFSET... [FETCHARGS]]
 *
 * or perf creates a local one with perf_event_open(type=uprobe). Parsing
 * of the fetch arguments, their types and printing, the event call and its
 * files, and the error log belong to the trace_probe library; this file
 * supplies the uprobe parts: the place syntax, the fetch program's stage-1
 * operations on user registers and memory, the handlers, the perf target
 * filter and the tracefs files uprobe_events, uprobe_profile and
 * uprobe_stats.
 *
 * Objects
 *   struct trace_uprobe	one probe: a file (pinned path), an offset, an
 *				SDT counter offset, its registration with the
 *				uprobes core, per-CPU hit counts. Embeds its
 *				struct trace_probe (last member).
 *   struct tu_reg		one registration: the consumer the core calls,
 *				and where its counts started.
 *   struct trace_probe_event	the event (library object): one or more
 *				trace_uprobes ("siblings", same arguments)
 *				share it, its files and its perf filter.
 *   struct trace_uprobe_filter	the event's perf targets (library type, in
 *				the event): an RCU list of struct
 *				tu_target, plus a count of system-wide
 *				perf events.
 *   struct tu_target		one perf event with a target task: the event
 *				and a reference of its own on the task, so
 *				that handlers can look at the task under RCU
 *				alone; freed by RCU.
 *   struct uprobe_fetch	one hit's context for the fetch program: the
 *				user registers and the probed address.
 *   struct uprobe_list	one tracefs file (uprobe_events, uprobe_profile,
 *				uprobe_stats): all three are one seq_file walk
 *				of the dynamic events with a per-file line.
 *
 * Lifetimes
 *   - A trace_uprobe lives from its definition until its deletion (or, for
 *     perf's local ones, destroy_local_trace_uprobe()). It is registered
 *     with the core only while the event is enabled (by a trace file or by
 *     perf), each time with a new tu_reg. Nothing waits for the handlers
 *     of a registration under event_mutex: disabling unregisters without
 *     waiting (uprobe_unregister_nosync()) and retires the tu_reg, which
 *     is freed once its handlers have returned and the fetches they
 *     deferred have run (polled whenever the trace_uprobe is used, or
 *     waited for by the deferred free; a read of uprobe_profile waits for
 *     the handlers only, whose counts are then final). The handlers
 *     still running find no trace file left and record nothing, and use
 *     perf's per-CPU event lists (call->perf_events, which perf frees an
 *     RCU grace period after disabling the event) only inside an RCU
 *     section that finds TP_FLAG_PROFILE still set. perf's local
 *     trace_uprobes are freed by the same deferred free as deleted ones.
 *   - A retired tu_reg holds the core's probe (uprobe_stats_hold()): the
 *     handlers still running count their hits there; its counts are final
 *     once they have returned, and then move to the trace_uprobe's.
 *   - Deletion is refused (-EBUSY) while the event is enabled or perf holds
 *     it; a sibling of an enabled event is unregistered first. The deleted
 *     trace_uprobe leaves the lists at once and is freed (with its event,
 *     if it was the last probe of it) by a work item that waits for its
 *     handlers, outside event_mutex.
 *   - Trace file links are freed by RCU; handlers use them and their files
 *     under rcu_read_lock() only, around the (non-sleeping) copy into the
 *     buffer. An event's files go with the event once an RCU grace period
 *     has passed since the last one left (files_gp).

 * Locks
 *   dyn_event_ops_mutex  held by dyn_event_create() around parsing: it
 *			guards the library's error log.
 *   event_mutex	held (by our callers or by us) around every definition,
 *			deletion, enable and disable, and every perf open and
 *			close; it orders them all. Core locks nest inside it.
 *   filter->rwlock	taken for write (under event_mutex) to change the
 *			event's perf target list; a leaf lock. Readers (the
 *			core's filter calls, handlers) take no lock: they
 *			walk the list under RCU.
 *   Handlers run in the core's global SRCU read section: they may sleep,
 *   but never wait for the task's memory (see the hit path below).
 *
 * The hit path
 *   A handler runs in the probed task, preemptible, with the user registers.
 *   It measures the strings among the arguments, reserves the record in
 *   each enabled trace instance's ring buffer, or in perf's buffer, and
 *   fetches the arguments straight into it, all with page faults disabled.
 *   When a read misses a page (not yet touched, swapped out, or one the
 *   process makes wait for ever), that record is dropped and the hit is
 *   finished on the task's way back to user mode, out of the read section
 *   (struct tu_deferred, a task work holding its registration): fetched
 *   once more, faults allowed, into a scratch record (on the stack when
 *   small, else kmalloc()ed) that is then copied: such arguments are read,
 *   not lost, and recorded a little later.
 *   Nothing is fetched when no instance records (tracing off,
 *   soft-disabled) and no perf event wants the hit.
 *
 * Design rules
 *   - No per-CPU fetch buffers and no mutex on the hit path: records are
 *     fetched where they go, or into a scratch record of the hit's own, so
 *     tasks never wait for each other, and a record too big for its buffer
 *     has its strings cut rather than being dropped.
 *   - Trace files and perf may use one event at the same time; the core
 *     filter is "any trace file, or a perf target in this mm".
 *   - Perf targets are matched per process (mm); a target whose mm is gone
 *     (an exited thread-group leader) is matched through its live threads.
 *     That match decides where breakpoints go and whether BPF programs
 *     run; perf's per-CPU event lists decide which events count a hit, as
 *     they hold the running task's events even when perf has swapped its
 *     context with its parent's or child's (inherited events, each on its
 *     own local event, with the other's target).
 *   - uprobe_stats reports, per probe, how the core handled its hits.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/bpf.h>
#include <linux/ctype.h>
#include <linux/filter.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/security.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/wait_bit.h>

#include "trace_dynevent.h"
#include "trace_probe.h"
#include "trace_probe_tmpl.h"

#define UPROBE_EVENT_SYSTEM	"uprobes"

/*
 * Longest records, headers included: strings are cut to fit. A trace
 * record must fit a ring-buffer page with its headers; perf's buffer is
 * larger.
 */
#define UPROBE_MAX_TRACE_RECORD	(PAGE_SIZE - 96)
#define UPROBE_MAX_PERF_RECORD	(PERF_MAX_TRACE_SIZE - sizeof(u64))
/* Records up to this size are fetched on the stack. */
#define UPROBE_STACK_RECORD	256

/*
 * RCU state when a trace file last left a uprobe event (event_mutex):
 * handlers use the files they find only inside rcu_read_lock(), so the
 * files may be freed once this grace period has passed.
 */
static unsigned long files_gp;

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

static int dyn_define(const char *raw_command);
static int dyn_show_definition(struct seq_file *m, struct dyn_event *ev);
static int dyn_delete(struct dyn_event *ev);
static bool dyn_in_use(struct dyn_event *ev);
static bool dyn_matches(const char *system, const char *event,
			int argc, const char **argv,
			struct dyn_event *ev);

static struct dyn_event_operations uprobe_dyn_ops = {
	.create = dyn_define,
	.show = dyn_show_definition,
	.is_busy = dyn_in_use,
	.free = dyn_delete,
	.match = dyn_matches,
};

static bool dyn_is_uprobe(struct dyn_event *ev)
{
	return ev->ops == &uprobe_dyn_ops;
}

static struct trace_uprobe *dyn_to_tu(struct dyn_event *ev)
{
	return container_of(ev, struct trace_uprobe, devent);
}

static struct trace_uprobe *tp_to_tu(struct trace_probe *tp)
{
	return container_of(tp, struct trace_uprobe, tp);
}

static struct trace_uprobe *uc_to_tu(struct uprobe_consumer *uc)
{
	return container_of(uc, struct tu_reg, consumer)->tu;
}

static bool is_ret_probe(struct trace_uprobe *tu)
{
	return tu->is_ret;
}

static int head_size(struct trace_uprobe *tu)
{
	return sizeof(struct uprobe_record_head) +
	       (is_ret_probe(tu) ? 2 : 1) * sizeof(unsigned long);
}

static struct trace_uprobe_filter *event_filter(struct trace_uprobe *tu)
{
	return tu->tp.event->filter;
}

static unsigned long tu_hits(struct trace_uprobe *tu)
{
	unsigned long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *per_cpu_ptr(tu->nhits, cpu);
	return n;
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
	u8 *base = data - head_size(tu), *dyn = data + tu->tp.size;
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

/* Bytes of dynamic data (strings) this hit needs, within @limit. */
static int dynamic_size(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			int limit)
{
	int i, len, room, total = 0;

	room = limit - head_size(tu) - tu->tp.size;
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
	return head_size(tu) + tu->tp.size + dsize;
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
 * @data: head_size() bytes left for the header, then the arguments and
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
	int hsize = head_size(tu), dsize = dynamic_size(tu, uf, limit);

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
	if (is_ret_probe(tu))
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
	int hsize = head_size(tu);

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
	int hsize = head_size(tu);

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

/*
 * Does a perf event of the event want hits in @mm? Lock-free: the count of
 * system-wide events, then the targets under RCU (no shared cache line is
 * written, however many CPUs hit the probe).
 */
static bool perf_wants(struct trace_uprobe *tu, struct mm_struct *mm)
{
	struct trace_uprobe_filter *filter = event_filter(tu);
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
static bool perf_wants(struct trace_uprobe *tu, struct mm_struct *mm)
{
	return false;
}

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

/* The core's filter: any trace file wants every mm, perf only its targets. */
static bool tu_filter(struct uprobe_consumer *uc,
		      enum uprobe_filter_ctx ctx, struct mm_struct *mm)
{
	struct trace_uprobe *tu = uc_to_tu(uc);
	unsigned int flags = trace_probe_load_flag(&tu->tp);

	if (flags & TP_FLAG_TRACE)
		return true;
	return (flags & TP_FLAG_PROFILE) && perf_wants(tu, mm);
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
		targeted = perf_wants(tu, current->mm);
		on_cpu = perf_on_this_cpu(tu);
	}
	*unwanted = !(flags & TP_FLAG_TRACE) && !targeted && !on_cpu;
	if (flags & TP_FLAG_TRACE)
		trace_hit(tu, uf);
	if (targeted || on_cpu)
		perf_hit(tu, uf, targeted, on_cpu);
}

static int entry_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
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
	if (is_ret_probe(tu)) {
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

static int return_handler(struct uprobe_consumer *uc,
			  unsigned long func, struct pt_regs *regs)
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

/* ------------------------------------------------- registering the probes */

/* @sum += @now - @start, field by field. */
static void stats_add_delta(struct uprobe_stats *sum,
			    const struct uprobe_stats *now,
			    const struct uprobe_stats *start)
{
	sum->hits += now->hits - start->hits;
	sum->emulated += now->emulated - start->emulated;
	sum->stepped += now->stepped - start->stepped;
	sum->boosted += now->boosted - start->boosted;
	sum->missed += now->missed - start->missed;
}

/*
 * A retired registration's handlers have all returned: its counts are final.
 * Caller holds event_mutex or owns @tu (deleted).
 */
static void reg_done(struct trace_uprobe *tu, struct tu_reg *reg)
{
	struct uprobe_stats now;

	uprobe_stats_release(reg->held, &now);
	if (!reg->folded)
		stats_add_delta(&tu->stats_done, &now, &reg->stats_start);
	list_del(&reg->node);
	kfree(reg);
}

/*
 * Free the retired registrations whose handlers have returned, and whose
 * deferred fetches too; never waits.
 */
static void reap_retired(struct trace_uprobe *tu)
{
	struct tu_reg *reg, *next;

	list_for_each_entry_safe(reg, next, &tu->retired, node)
		if (uprobe_unregister_done(reg->cookie) &&
		    uprobe_stats_settled(reg->held) &&
		    !atomic_read_acquire(&reg->deferred))
			reg_done(tu, reg);
}

/*
 * The core's counts for @tu's probe while @tu used it, the hits of
 * handlers still running after a disable included as far as they got.
 * Caller holds event_mutex (registration state).
 *
 * Return: true while those handlers may still add to the counts.
 */
static bool tu_stats(struct trace_uprobe *tu, struct uprobe_stats *st)
{
	struct uprobe_stats now;
	struct tu_reg *reg;
	bool settling = false;

	lockdep_assert_held(&event_mutex);
	reap_retired(tu);
	*st = tu->stats_done;
	list_for_each_entry(reg, &tu->retired, node) {
		if (reg->folded)
			continue;
		uprobe_stats_peek(reg->held, &now);
		stats_add_delta(st, &now, &reg->stats_start);
		settling = true;
	}
	if (tu->reg && !uprobe_get_stats(tu->inode, tu->offset, &now))
		stats_add_delta(st, &now, &tu->reg->stats_start);
	return settling;
}

/*
 * Wait for the handlers of @tu's retired registrations (their hits are
 * counted then), and with @deferred for the fetches they deferred too,
 * which a process can keep waiting for ever: only the free of a deleted
 * @tu waits for those, outside event_mutex. A registration is freed once
 * both are done. Caller holds event_mutex or owns @tu (deleted).
 */
static void wait_retired(struct trace_uprobe *tu, bool deferred)
{
	struct tu_reg *reg, *next;

	list_for_each_entry_safe(reg, next, &tu->retired, node) {
		uprobe_unregister_wait(reg->cookie);
		if (deferred)
			wait_var_event(&reg->deferred,
				       !atomic_read(&reg->deferred));
		if (!atomic_read_acquire(&reg->deferred))
			reg_done(tu, reg);
	}
}

/*
 * Register @tu with a new consumer. A retired registration on the same
 * core probe (held, so the core uses it again) ends its counts here, where
 * the new one starts. Caller holds event_mutex.
 */
static int register_probe(struct trace_uprobe *tu)
{
	struct tu_reg *reg, *old;
	struct uprobe_stats now;
	struct uprobe *cur;
	int ret;

	lockdep_assert_held(&event_mutex);
	if (tu->reg)
		return 0;
	reap_retired(tu);
	reg = kzalloc(sizeof(*reg), GFP_KERNEL);
	if (!reg)
		return -ENOMEM;
	reg->tu = tu;
	reg->consumer.handler = entry_handler;
	if (tu->is_ret)
		reg->consumer.ret_handler = return_handler;
	reg->consumer.filter = tu_filter;
	cur = uprobe_stats_hold(tu->inode, tu->offset);
	/* zeroes when the core creates the probe for us */
	uprobe_stats_peek(cur, &reg->stats_start);
	list_for_each_entry(old, &tu->retired, node) {
		if (old->folded || !cur || old->held != cur)
			continue;
		stats_add_delta(&tu->stats_done, &reg->stats_start,
				&old->stats_start);
		uprobe_stats_release(old->held, &now);
		old->held = NULL;
		old->folded = true;
	}
	ret = uprobe_register_refctr(tu->inode, tu->offset, tu->ref_ctr_offset,
				     &reg->consumer);
	uprobe_stats_release(cur, &now);
	if (ret) {
		kfree(reg);
		return ret;
	}
	tu->reg = reg;
	return 0;
}

/*
 * Unregister @tu without waiting for its handlers: the registration is
 * retired, its consumer freed once they have returned. Caller holds
 * event_mutex.
 */
static void unregister_probe(struct trace_uprobe *tu)
{
	struct tu_reg *reg = tu->reg;

	lockdep_assert_held(&event_mutex);
	if (!reg)
		return;
	/* the core frees the probe with its last consumer: keep its counts */
	reg->held = uprobe_stats_hold(tu->inode, tu->offset);
	reg->cookie = uprobe_unregister_nosync(tu->inode, tu->offset,
					       &reg->consumer);
	list_add(&reg->node, &tu->retired);
	tu->reg = NULL;
}

/* Register every probe of @tp's event; all or none. */
static int register_event_probes(struct trace_probe *tp)
{
	struct trace_uprobe *tu, *undo;
	int ret;

	list_for_each_entry(tu, trace_probe_probe_list(tp), tp.list) {
		ret = register_probe(tu);
		if (ret)
			goto unregister_done;
	}
	return 0;

unregister_done:
	list_for_each_entry(undo, trace_probe_probe_list(tp), tp.list) {
		if (undo == tu)
			break;
		unregister_probe(undo);
	}
	return ret;
}

static void unregister_event_probes(struct trace_probe *tp)
{
	struct trace_uprobe *tu;

	list_for_each_entry(tu, trace_probe_probe_list(tp), tp.list)
		unregister_probe(tu);
}

/* The filter changed: install (@add) or remove breakpoints to match it. */
static int apply_event_probes(struct trace_probe *tp, bool add)
{
	struct trace_uprobe *tu;
	int ret, err = 0;

	list_for_each_entry(tu, trace_probe_probe_list(tp), tp.list) {
		if (!tu->reg)
			continue;
		ret = uprobe_apply(tu->inode, tu->offset, &tu->reg->consumer,
				   add);
		if (ret && !err)
			err = ret;
	}
	return err;
}

/*
 * Enable the event for trace @file, or for perf (@file NULL). Registering
 * the probes happens on the first user; a trace file added to a perf-only
 * event widens the filter to every mm.
 */
static int event_enable(struct trace_event_call *call,
			struct trace_event_file *file)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);
	bool was_enabled, had_trace;
	int ret;

	lockdep_assert_held(&event_mutex);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	was_enabled = trace_probe_is_enabled(tp);
	had_trace = trace_probe_test_flag(tp, TP_FLAG_TRACE);
	if (file) {
		ret = trace_probe_add_file(tp, file);
		if (ret)
			return ret;
	} else {
		/*
		 * perf allocated call->perf_events before this call: the
		 * flag's release store publishes it. Pairs with the acquire
		 * load of the flags in perf_on_this_cpu() and
		 * record_to_perf().
		 */
		trace_probe_set_flag(tp, TP_FLAG_PROFILE);
	}

	if (!was_enabled)
		ret = register_event_probes(tp);
	else if (file && !had_trace)
		ret = apply_event_probes(tp, true);
	else
		ret = 0;
	if (!ret)
		return 0;

	if (file)
		trace_probe_remove_file(tp, file);
	else
		trace_probe_clear_flag(tp, TP_FLAG_PROFILE);
	if (was_enabled && !had_trace)
		apply_event_probes(tp, false);
	return ret;
}

static int event_disable(struct trace_event_call *call,
			 struct trace_event_file *file)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);

	lockdep_assert_held(&event_mutex);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	if (file) {
		if (!trace_probe_get_file_link(tp, file))
			return -ENOENT;
		/* Clears TP_FLAG_TRACE with the last file. */
		trace_probe_remove_file(tp, file);
		files_gp = get_state_synchronize_rcu();
		if (trace_probe_test_flag(tp, TP_FLAG_TRACE))
			return 0;
	} else {
		/*
		 * perf frees call->perf_events after an RCU grace period
		 * (tracepoint_synchronize_unregister()): handlers use it only
		 * in an RCU section that finds this flag still set, so none
		 * needs waiting for here.
		 */
		trace_probe_clear_flag(tp, TP_FLAG_PROFILE);
		if (trace_probe_test_flag(tp, TP_FLAG_TRACE))
			return 0;	/* the probes stay for the trace files */
	}
	if (trace_probe_is_enabled(tp))
		apply_event_probes(tp, false);	/* perf targets only now */
	else
		unregister_event_probes(tp);
	return 0;
}

#ifdef CONFIG_PERF_EVENTS
/*
 * Does anything but perf event @event want the event in @event's process?
 * Then @event coming or going changes no breakpoint.
 */
static bool target_covered(struct trace_uprobe *tu, struct perf_event *event)
{
	struct mm_struct *mm;

	if (trace_probe_test_flag(&tu->tp, TP_FLAG_TRACE))
		return true;
	mm = event->hw.target ? READ_ONCE(event->hw.target->mm) : NULL;
	return mm && perf_wants(tu, mm);
}

static void free_tu_target(struct rcu_head *head)
{
	struct tu_target *pt = container_of(head, struct tu_target, rcu);

	put_task_struct(pt->task);
	kfree(pt);
}

/*
 * Add @event's target to the event's filter (@join), or take it out. Only
 * a join can fail (-ENOMEM).
 */
static int update_targets(struct trace_uprobe *tu, struct perf_event *event,
			  bool join)
{
	struct trace_uprobe_filter *filter = event_filter(tu);
	struct tu_target *pt, *found = NULL;

	lockdep_assert_held(&event_mutex);
	if (!event->hw.target) {
		write_lock(&filter->rwlock);
		WRITE_ONCE(filter->nr_systemwide,
			   filter->nr_systemwide + (join ? 1 : -1));
		write_unlock(&filter->rwlock);
		return 0;
	}
	if (join) {
		pt = kmalloc(sizeof(*pt), GFP_KERNEL);
		if (!pt)
			return -ENOMEM;
		pt->event = event;
		pt->task = get_task_struct(event->hw.target);
		write_lock(&filter->rwlock);
		list_add_rcu(&pt->node, &filter->perf_events);
		write_unlock(&filter->rwlock);
		return 0;
	}
	write_lock(&filter->rwlock);
	list_for_each_entry(pt, &filter->perf_events, node) {
		if (pt->event == event) {
			found = pt;
			list_del_rcu(&pt->node);
			break;
		}
	}
	write_unlock(&filter->rwlock);
	if (!WARN_ON_ONCE(!found))
		call_rcu(&found->rcu, free_tu_target);
	return 0;
}

/*
 * A perf event starts (@open) or stops using the event: change the filter
 * and, unless another user already covers its process, the breakpoints.
 */
static int perf_target(struct trace_event_call *call, struct perf_event *event,
		       bool open)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);
	struct trace_uprobe *tu;
	bool covered;
	int ret;

	lockdep_assert_held(&event_mutex);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	tu = tp_to_tu(tp);
	if (open) {
		covered = target_covered(tu, event);
		ret = update_targets(tu, event, true);
		if (ret)
			return ret;
	} else {
		update_targets(tu, event, false);
		covered = target_covered(tu, event);
	}
	if (covered)
		return 0;
	ret = apply_event_probes(tp, open);
	if (ret && open) {
		/* perf calls no PERF_CLOSE for an event whose open failed */
		update_targets(tu, event, false);
		apply_event_probes(tp, false);
	}
	return ret;
}
#endif

static int event_reg(struct trace_event_call *call,
		     enum trace_reg type, void *data)
{
	switch (type) {
	case TRACE_REG_REGISTER:
		return event_enable(call, data);
	case TRACE_REG_UNREGISTER:
		return event_disable(call, data);
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
		return event_enable(call, NULL);
	case TRACE_REG_PERF_UNREGISTER:
		return event_disable(call, NULL);
	case TRACE_REG_PERF_OPEN:
		return perf_target(call, data, true);
	case TRACE_REG_PERF_CLOSE:
		return perf_target(call, data, false);
#endif
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ the event */

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
	tu = tp_to_tu(tp);
	if (is_ret_probe(tu))
		trace_seq_printf(s, "%s: (0x%lx <- 0x%lx)",
				 trace_probe_name(tp), entry->vaddr[1],
				 entry->vaddr[0]);
	else
		trace_seq_printf(s, "%s: (0x%lx)", trace_probe_name(tp),
				 entry->vaddr[0]);
	if (print_probe_args(s, tp->args, tp->nr_args,
			     (u8 *)entry + head_size(tu), entry) < 0)
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
	tu = tp_to_tu(tp);
	if (is_ret_probe(tu)) {
		DEFINE_FIELD(unsigned long, vaddr[0], FIELD_STRING_FUNC, 0);
		DEFINE_FIELD(unsigned long, vaddr[1], FIELD_STRING_RETIP, 0);
	} else {
		DEFINE_FIELD(unsigned long, vaddr[0], FIELD_STRING_IP, 0);
	}
	return traceprobe_define_arg_fields(event_call, head_size(tu), tp);
}

static struct trace_event_fields record_fields[] = {
	{ .type = TRACE_FUNCTION_TYPE,
	  .define_fields = define_record_fields },
	{}
};

static void init_event_call(struct trace_uprobe *tu)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);

	call->event.funcs = &record_funcs;
	call->class->fields_array = record_fields;
	call->flags = TRACE_EVENT_FL_UPROBE | TRACE_EVENT_FL_CAP_ANY;
	call->class->reg = event_reg;
}

/* ------------------------------------------------ definition and deletion */

/* @name, when it names a regular file: -ENOENT, -EINVAL or 0 and @path. */
static int lookup_file(const char *name, struct path *path)
{
	int ret = kern_path(name, LOOKUP_FOLLOW, path);

	if (ret)
		return ret;
	if (d_is_reg(path->dentry))
		return 0;
	path_put(path);
	return -EINVAL;
}

/*
 * A probe of @path:@offset (counter at @ref_ctr_offset) with room for
 * @nargs arguments, in a new event @group/@event. It takes over @path and
 * @filename, also when it fails.
 */
static struct trace_uprobe *tu_alloc(const char *group, const char *event,
				     int nargs, bool is_ret, struct path *path,
				     char *filename, unsigned long offset,
				     unsigned long ref_ctr_offset)
{
	struct trace_uprobe *tu;
	int ret = -ENOMEM;

	tu = kzalloc(struct_size(tu, tp.args, nargs), GFP_KERNEL);
	if (!tu)
		goto put_path;
	tu->nhits = alloc_percpu(unsigned long);
	if (!tu->nhits)
		goto free_tu;
	ret = trace_probe_init(&tu->tp, event, group, true);
	if (ret)
		goto free_nhits;
	rwlock_init(&event_filter(tu)->rwlock);
	INIT_LIST_HEAD(&event_filter(tu)->perf_events);
	tu->is_ret = is_ret;
	INIT_LIST_HEAD(&tu->retired);
	dyn_event_init(&tu->devent, &uprobe_dyn_ops);
	tu->path = *path;
	tu->inode = d_real_inode(path->dentry);
	tu->filename = filename;
	tu->offset = offset;
	tu->ref_ctr_offset = ref_ctr_offset;
	return tu;

free_nhits:
	free_percpu(tu->nhits);
free_tu:
	kfree(tu);
put_path:
	path_put(path);
	kfree(filename);
	return ERR_PTR(ret);
}

/* Once the arguments are parsed: the print format and the text bound. */
static int tu_finish(struct trace_uprobe *tu)
{
	int i;

	tu->text_room = trace_text_room(tu);
	tu->simple = true;
	for (i = 0; i < tu->tp.nr_args; i++) {
		tu->dynamic |= tu->tp.args[i].dynamic;
		tu->simple &= arg_is_simple(&tu->tp.args[i]);
	}
	return traceprobe_set_print_fmt(&tu->tp, is_ret_probe(tu) ?
					PROBE_PRINT_RETURN : PROBE_PRINT_NORMAL);
}

/*
 * Free @tu, which no handler uses any more (the wait for retired
 * registrations is for perf's local events, whose last disable waited).
 * Caller holds event_mutex or owns @tu.
 */
static void tu_free(struct trace_uprobe *tu)
{
	if (!tu)
		return;
	wait_retired(tu, true);
	path_put(&tu->path);
	trace_probe_cleanup(&tu->tp);
	kfree(tu->filename);
	free_percpu(tu->nhits);
	kfree(tu);
}

/*
 * A deleted probe: once the handlers of its registrations have returned,
 * free it, and its event if it was the last probe of it. Runs without
 * event_mutex while it waits, so that a handler that takes long (a fetch
 * waiting for a page) holds up nothing else.
 */
static void tu_free_work(struct work_struct *work)
{
	struct trace_uprobe *tu = container_of(work, struct trace_uprobe,
					       free_work);

	wait_retired(tu, true);
	mutex_lock(&event_mutex);
	/* The event lives on with its other probes, or goes with this one. */
	if (!tu->owns_event)
		tu->tp.event = NULL;
	tu_free(tu);
	mutex_unlock(&event_mutex);
}

static struct trace_uprobe *find_event(const char *event,
				       const char *group)
{
	struct trace_uprobe *tu;
	struct dyn_event *pos;

	for_each_dyn_event(pos) {
		if (!dyn_is_uprobe(pos))
			continue;
		tu = dyn_to_tu(pos);
		if (!strcmp(trace_probe_name(&tu->tp), event) &&
		    !strcmp(trace_probe_group_name(&tu->tp), group))
			return tu;
	}
	return NULL;
}

/* One instruction drives one counter: refuse another counter offset. */
static bool ref_ctr_conflicts(struct trace_uprobe *new)
{
	struct trace_uprobe *tu;
	struct dyn_event *pos;

	for_each_dyn_event(pos) {
		if (!dyn_is_uprobe(pos))
			continue;
		tu = dyn_to_tu(pos);
		if (tu->inode == new->inode && tu->offset == new->offset &&
		    tu->ref_ctr_offset != new->ref_ctr_offset)
			return true;
	}
	return false;
}

static bool same_probe(struct trace_uprobe *a, struct trace_uprobe *b)
{
	int i;

	if (a->inode != b->inode || a->offset != b->offset ||
	    a->ref_ctr_offset != b->ref_ctr_offset ||
	    a->tp.nr_args != b->tp.nr_args)
		return false;
	for (i = 0; i < a->tp.nr_args; i++)
		if (strcmp(a->tp.args[i].comm, b->tp.args[i].comm))
			return false;
	return true;
}

/* An error about the whole definition (caret at its start). */
static void log_at_head(int err)
{
	trace_probe_log_set_index(0);
	__trace_probe_log_err(0, err);
}

/* Add @tu to the existing event of @to; registered now if it is enabled. */
static int join_event(struct trace_uprobe *tu, struct trace_uprobe *to)
{
	struct trace_probe *pos;
	int ret;

	ret = trace_probe_compare_arg_type(&tu->tp, &to->tp);
	if (ret) {
		/* the arguments start at index 2 */
		trace_probe_log_set_index(ret + 1);
		trace_probe_log_err(0, DIFF_ARG_TYPE);
		return -EEXIST;
	}
	list_for_each_entry(pos, trace_probe_probe_list(&to->tp), list) {
		if (same_probe(tp_to_tu(pos), tu)) {
			log_at_head(TP_ERR_SAME_PROBE);
			return -EEXIST;
		}
	}
	ret = trace_probe_append(&tu->tp, &to->tp);
	if (ret)
		return ret;
	if (trace_probe_is_enabled(&tu->tp)) {
		/* the core installs it where the event's filter wants it */
		ret = register_probe(tu);
		if (ret) {
			trace_probe_unlink(&tu->tp);
			return ret;
		}
	}
	dyn_event_add(&tu->devent, trace_probe_event_call(&tu->tp));
	return 0;
}

static int add_definition(struct trace_uprobe *tu)
{
	struct trace_uprobe *old;
	int ret;

	mutex_lock(&event_mutex);
	if (ref_ctr_conflicts(tu)) {
		ret = -EINVAL;
		goto unlock;
	}
	old = find_event(trace_probe_name(&tu->tp),
			 trace_probe_group_name(&tu->tp));
	if (old) {
		if (is_ret_probe(tu) != is_ret_probe(old)) {
			log_at_head(TP_ERR_DIFF_PROBE_TYPE);
			ret = -EEXIST;
		} else {
			ret = join_event(tu, old);
		}
		goto unlock;
	}
	init_event_call(tu);
	ret = trace_probe_register_event_call(&tu->tp);
	if (ret == -EEXIST)
		log_at_head(TP_ERR_EVENT_EXIST);
	else if (ret)
		pr_warn("cannot register event %s/%s: %d\n",
			trace_probe_group_name(&tu->tp),
			trace_probe_name(&tu->tp), ret);
	if (ret)
		goto unlock;
	dyn_event_add(&tu->devent, trace_probe_event_call(&tu->tp));
unlock:
	mutex_unlock(&event_mutex);
	return ret;
}

/*
 * Delete @tu; refused while its event is in use (unless it has siblings).
 * Nothing here waits for handlers: @tu (and its event, with the last probe)
 * is freed by tu_free_work() once they have returned.
 */
static int delete_definition(struct trace_uprobe *tu)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	int ret;

	lockdep_assert_held(&event_mutex);
	if (!trace_probe_has_sibling(&tu->tp)) {
		if (trace_probe_is_enabled(&tu->tp))
			return -EBUSY;
		if (trace_event_dyn_busy(call))
			return -EBUSY;
		/*
		 * A handler may still be in trace_hit()'s RCU section with a
		 * trace file it found before the disable; the files go next.
		 */
		cond_synchronize_rcu(files_gp);
		ret = trace_probe_unregister_event_call(&tu->tp);
		if (ret)
			return ret;
	}
	unregister_probe(tu);
	dyn_event_remove(&tu->devent);
	/* Off the event's probe list now; still pointing at the event. */
	tu->owns_event = list_is_singular(trace_probe_probe_list(&tu->tp));
	list_del_init(&tu->tp.list);
	INIT_WORK(&tu->free_work, tu_free_work);
	queue_work(system_long_wq, &tu->free_work);
	return 0;
}

/*
 * Parse "PATH:OFFSET[%return][(REF_CTR_OFFSET)]" (argv[1], in @spec, which
 * is modified) into @tu's offsets; *@is_ret is set by "%return". The path
 * part is left NUL-terminated at @spec. Error carets point into argv[1].
 */
static int parse_place(char *spec, unsigned long *offset,
		       unsigned long *ref_ctr_offset, bool *is_ret)
{
	char *colon, *open, *close, *pct;
	int ret;

	colon = strrchr(spec, ':');
	if (!colon || !isdigit(colon[1]))
		return -EINVAL;		/* not PATH:OFFSET: no log entry */
	*colon = '\0';

	open = strchr(colon + 1, '(');
	if (open) {
		close = strchr(open + 1, ')');
		if (!close) {
			trace_probe_log_err(colon + 1 - spec + strlen(colon + 1),
					    REFCNT_OPEN_BRACE);
			return -EINVAL;
		}
		*close = '\0';
		ret = kstrtoul(open + 1, 0, ref_ctr_offset);
		if (ret) {
			trace_probe_log_err(open + 1 - spec, BAD_REFCNT);
			return ret;
		}
		if (close[1] != '\0') {
			trace_probe_log_err(close + 1 - spec, BAD_REFCNT_SUFFIX);
			return -EINVAL;
		}
		*open = '\0';
	}

	pct = strchr(colon + 1, '%');
	if (pct) {
		if (strcmp(pct, "%return")) {
			trace_probe_log_err(pct - spec, BAD_ADDR_SUFFIX);
			return -EINVAL;
		}
		*pct = '\0';
		*is_ret = true;
	}

	ret = kstrtoul(colon + 1, 0, offset);
	if (ret) {
		trace_probe_log_err(colon + 1 - spec, BAD_UPROBE_OFFS);
		return ret;
	}
	return 0;
}

/*
 * Are @offset and the counter at @ref_ctr_offset inside the file at @path,
 * the counter 2-byte aligned? Checked when the probe is defined, so that
 * the error comes with its place; @offs_pos is the offset's position in
 * @spec (argv[1], unmodified), for the caret. The core checks again
 * whenever it registers (the file may have been truncated since).
 */
static int check_place(const struct path *path, const char *spec,
		       int offs_pos, unsigned long offset,
		       unsigned long ref_ctr_offset)
{
	loff_t size = i_size_read(d_inode(path->dentry));
	const char *ref = strchr(spec + offs_pos, '(');

	if (offset >= size) {
		trace_probe_log_err(offs_pos, BAD_UPROBE_OFFS);
		return -EINVAL;
	}
	if (ref && ((ref_ctr_offset & 1) || ref_ctr_offset + 2 > size)) {
		trace_probe_log_err(ref + 1 - spec, BAD_REFCNT);
		return -EINVAL;
	}
	return 0;
}

/*
 * "p_bash_0x4245c0": the name of an event defined without one, for return
 * probes too; the file's name is cut at its first '.', '-' or '_'
 * ("p_libc_0x29d90" for libc.so.6), as tracefs has always named them.
 */
static void default_event_name(char *buf, const char *path,
			       unsigned long offset)
{
	const char *base = kbasename(path);
	char *p;

	snprintf(buf, MAX_EVENT_NAME_LEN, "p_%.*s_0x%lx",
		 (int)strcspn(base, ".-_"), base, offset);
	for (p = buf; *p; p++)
		if (!isalnum(*p) && *p != '_')
			*p = '_';
}

static int define_from_argv(int argc, const char **argv)
{
	const char *event = NULL, *group = UPROBE_EVENT_SYSTEM;
	unsigned long offset = 0, ref_ctr_offset = 0;
	char buf[MAX_EVENT_NAME_LEN], gbuf[MAX_EVENT_NAME_LEN];
	struct trace_uprobe *tu;
	bool is_ret = false;
	struct path path;
	char *spec;
	int i, ret;

	switch (argv[0][0]) {
	case 'r':
		is_ret = true;
		break;
	case 'p':
		break;
	default:
		return -ECANCELED;
	}
	if (argc < 2 || (argv[0][1] != '\0' && argv[0][1] != ':'))
		return -ECANCELED;
	/* PATH:OFFSET has a '/' in PATH; else it is a kprobe's ("MOD:SYM") */
	if (argv[1][strcspn(argv[1], "/")] == '\0')
		return -ECANCELED;

	trace_probe_log_init("trace_uprobe", argc, argv);
	if (argc - 2 > MAX_TRACE_ARGS) {
		trace_probe_log_set_index(MAX_TRACE_ARGS + 2);
		trace_probe_log_err(0, EVENT_TOO_BIG);
		ret = -E2BIG;
		goto out;
	}
	trace_probe_log_set_index(1);
	spec = kstrdup(argv[1], GFP_KERNEL);
	if (!spec) {
		ret = -ENOMEM;
		goto out;
	}
	ret = parse_place(spec, &offset, &ref_ctr_offset, &is_ret);
	if (ret)
		goto free_spec;

	ret = lookup_file(spec, &path);
	if (ret == -EINVAL)
		trace_probe_log_err(0, NO_REGULAR_FILE);
	else if (ret)
		trace_probe_log_err(0, FILE_NOT_FOUND);
	if (ret)
		goto free_spec;
	ret = check_place(&path, argv[1], strlen(spec) + 1, offset,
			  ref_ctr_offset);
	if (ret)
		goto put_path;

	trace_probe_log_set_index(0);
	if (argv[0][1] == ':') {
		event = &argv[0][2];
		ret = traceprobe_parse_event_name(&event, &group, gbuf,
						  event - argv[0]);
		if (ret)
			goto put_path;
	}
	if (!event) {
		default_event_name(buf, spec, offset);
		event = buf;
	}

	tu = tu_alloc(group, event, argc - 2, is_ret, &path, spec, offset,
		      ref_ctr_offset);
	if (IS_ERR(tu)) {
		ret = PTR_ERR(tu);
		goto out;
	}

	for (i = 0; i < argc - 2; i++) {
		trace_probe_log_set_index(i + 2);
		ret = traceprobe_parse_probe_arg(&tu->tp, i, argv[i + 2],
						 is_ret ? TPARG_FL_RETURN : 0);
		if (ret)
			goto free_tu;
	}
	ret = tu_finish(tu);
	if (ret < 0)
		goto free_tu;
	ret = add_definition(tu);
	if (!ret)
		goto out;

free_tu:
	tu_free(tu);
	goto out;
put_path:
	path_put(&path);
free_spec:
	kfree(spec);
out:
	trace_probe_log_clear();
	return ret;
}

static int dyn_define(const char *raw_command)
{
	return trace_probe_create(raw_command, define_from_argv);
}

static int run_uprobe_events_line(const char *raw_command)
{
	int ret;

	if (raw_command[0] == '-')
		return dyn_event_release(raw_command, &uprobe_dyn_ops);
	/* under dyn_event_ops_mutex, which guards the error log */
	ret = dyn_event_create(raw_command, &uprobe_dyn_ops);
	/* Only uprobes are defined here: "not mine" is just invalid. */
	if (ret == -ECANCELED)
		ret = -EINVAL;
	return ret;
}

static int dyn_delete(struct dyn_event *ev)
{
	return delete_definition(dyn_to_tu(ev));
}

static bool dyn_in_use(struct dyn_event *ev)
{
	return trace_probe_is_enabled(&dyn_to_tu(ev)->tp);
}

/*
 * Does "PATH:OFFSET[(REF)] ARGS..." of a deletion name @tu? The numbers
 * are compared as numbers, so any spelling of them matches.
 */
static bool match_command_head(struct trace_uprobe *tu, int argc,
			       const char **argv)
{
	unsigned long offset, ref = 0;
	char *spec, *open;
	bool match = false;
	size_t n;

	if (!argc)
		return true;
	/* PATH exactly, then ':' (a defined PATH is never empty) */
	n = str_has_prefix(argv[0], tu->filename);
	if (!n || argv[0][n] != ':')
		return false;
	spec = kstrdup(argv[0] + n + 1, GFP_KERNEL);
	if (!spec)
		return false;
	open = strchr(spec, '(');
	if (open) {
		*open++ = '\0';
		if (!strlen(open) || open[strlen(open) - 1] != ')')
			goto out;
		open[strlen(open) - 1] = '\0';
		if (kstrtoul(open, 0, &ref))
			goto out;
	}
	if (kstrtoul(spec, 0, &offset))
		goto out;
	match = offset == tu->offset && ref == tu->ref_ctr_offset &&
		trace_probe_match_command_args(&tu->tp, argc - 1, argv + 1);
out:
	kfree(spec);
	return match;
}

static bool dyn_matches(const char *system, const char *event,
			int argc, const char **argv,
			struct dyn_event *ev)
{
	struct trace_uprobe *tu = dyn_to_tu(ev);

	if (event[0] && strcmp(trace_probe_name(&tu->tp), event))
		return false;
	if (system && strcmp(trace_probe_group_name(&tu->tp), system))
		return false;
	return match_command_head(tu, argc, argv);
}

/* The canonical definition: "p:GRP/EVENT PATH:0x%016lx(0xREF) ARGS". */
static int dyn_show_definition(struct seq_file *m, struct dyn_event *ev)
{
	struct trace_uprobe *tu = dyn_to_tu(ev);
	int i;

	seq_printf(m, "%c:%s/%s %s:0x%0*lx", is_ret_probe(tu) ? 'r' : 'p',
		   trace_probe_group_name(&tu->tp), trace_probe_name(&tu->tp),
		   tu->filename, (int)(sizeof(void *) * 2), tu->offset);
	if (tu->ref_ctr_offset)
		seq_printf(m, "(0x%lx)", tu->ref_ctr_offset);
	for (i = 0; i < tu->tp.nr_args; i++)
		seq_printf(m, " %s=%s", tu->tp.args[i].name,
			   tu->tp.args[i].comm);
	seq_putc(m, '\n');
	return 0;
}

/* ------------------------------------------------------------ tracefs */

/*
 * The three tracefs files list the uprobe events, one probe per line; they
 * differ only in what a line shows and in whether writes define events. One
 * seq_file walk of dyn_event_list, under event_mutex, serves them all: a
 * file's &struct uprobe_list is its inode's private data.
 */

/**
 * struct uprobe_list - one tracefs file listing the probes
 * @name: the file's name in tracefs
 * @mode: its permissions
 * @defines: writes define and delete events (uprobe_events)
 * @header: printed before the probes, or NULL
 * @show: prints one probe
 */
struct uprobe_list {
	const char *name;
	umode_t mode;
	bool defines;
	const char *header;
	void (*show)(struct seq_file *m, struct trace_uprobe *tu);
};

static void list_definition(struct seq_file *m, struct trace_uprobe *tu)
{
	dyn_show_definition(m, &tu->devent);
}

/*
 * uprobe_profile, in its established format: "  PATH EVENT HITS". It shows
 * a disabled event's final count: it waits for the handlers that were
 * still running at the disable (hits that came before it, counted), as a
 * disable that waited for them would have.
 */
static void list_profile(struct seq_file *m, struct trace_uprobe *tu)
{
	wait_retired(tu, false);
	seq_printf(m, "  %s %-44s %15lu\n", tu->filename,
		   trace_probe_name(&tu->tp), tu_hits(tu));
}

/*
 * uprobe_stats: the event's hits and how the core handled the probed
 * instruction while the event was enabled (tu_stats()). A line ends in
 * " settling" while handlers that were running when the event was
 * disabled may still add to its counts; reads never wait for them.
 */
static void list_stats(struct seq_file *m, struct trace_uprobe *tu)
{
	struct uprobe_stats st;
	bool settling = tu_stats(tu, &st);

	seq_printf(m, "%s/%s %s:0x%lx %lu %llu %llu %llu %llu%s\n",
		   trace_probe_group_name(&tu->tp), trace_probe_name(&tu->tp),
		   tu->filename, tu->offset, tu_hits(tu),
		   st.emulated, st.stepped, st.boosted, st.missed,
		   settling ? " settling" : "");
}

static const struct uprobe_list uprobe_lists[] = {
	{ "uprobe_events", TRACE_MODE_WRITE, true, NULL, list_definition },
	{ "uprobe_profile", TRACE_MODE_READ, false, NULL, list_profile },
	{ "uprobe_stats", TRACE_MODE_READ, false,
	  "# GROUP/EVENT PATH:OFFSET HITS EMULATED STEPPED BOOSTED MISSED [settling]\n",
	  list_stats },
};

/* Position 0 is the list head itself: it stands for the header line. */
static void *list_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&event_mutex);
	return *pos ? seq_list_start(&dyn_event_list, *pos - 1) :
		      &dyn_event_list;
}

static void *list_next(struct seq_file *m, void *v, loff_t *pos)
{
	return seq_list_next(v, &dyn_event_list, pos);
}

static void list_stop(struct seq_file *m, void *v)
{
	mutex_unlock(&event_mutex);
}

static int list_show(struct seq_file *m, void *v)
{
	const struct uprobe_list *list = m->private;
	struct dyn_event *ev = v;

	if (v == &dyn_event_list) {
		if (list->header)
			seq_puts(m, list->header);
	} else if (dyn_is_uprobe(ev)) {
		list->show(m, dyn_to_tu(ev));
	}
	return 0;
}

static const struct seq_operations list_seq_ops = {
	.start = list_start,
	.next = list_next,
	.stop = list_stop,
	.show = list_show,
};

static int list_open(struct inode *inode, struct file *file)
{
	const struct uprobe_list *list = inode->i_private;
	int ret;

	ret = security_locked_down(LOCKDOWN_TRACEFS);
	if (ret)
		return ret;
	/* "> uprobe_events" deletes every uprobe event first */
	if (list->defines && (file->f_mode & FMODE_WRITE) &&
	    (file->f_flags & O_TRUNC)) {
		ret = dyn_events_release_all(&uprobe_dyn_ops);
		if (ret)
			return ret;
	}
	ret = seq_open(file, &list_seq_ops);
	if (!ret)
		((struct seq_file *)file->private_data)->private =
			inode->i_private;
	return ret;
}

static ssize_t list_write(struct file *file, const char __user *buffer,
			  size_t count, loff_t *ppos)
{
	const struct uprobe_list *list = file_inode(file)->i_private;

	if (!list->defines)
		return -EINVAL;
	return trace_parse_run_command(file, buffer, count, ppos,
				       run_uprobe_events_line);
}

static const struct file_operations uprobe_list_fops = {
	.owner = THIS_MODULE,
	.open = list_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = seq_release,
	.write = list_write,
};

/* ------------------------------------------------ perf's local events */

#ifdef CONFIG_PERF_EVENTS
/**
 * create_local_trace_uprobe - an event for one perf_event_open(type=uprobe)
 * @name: path of the probed file
 * @offs: file offset of the probed instruction
 * @ref_ctr_offset: file offset of the SDT counter, 0 for none
 * @is_return: a return probe
 *
 * The event is not listed in tracefs; perf registers it and owns it until
 * destroy_local_trace_uprobe().
 *
 * Return: the event call, or an ERR_PTR().
 */
struct trace_event_call *
create_local_trace_uprobe(char *name, unsigned long offs,
			  unsigned long ref_ctr_offset, bool is_return)
{
	struct trace_uprobe *tu;
	struct path path;
	char *filename;
	int ret;

	ret = lookup_file(name, &path);
	if (ret)
		return ERR_PTR(ret);
	filename = kstrdup(name, GFP_KERNEL);
	if (!filename) {
		path_put(&path);
		return ERR_PTR(-ENOMEM);
	}
	tu = tu_alloc(UPROBE_EVENT_SYSTEM, "perf_local", 0, is_return, &path,
		      filename, offs, ref_ctr_offset);
	if (IS_ERR(tu))
		return ERR_CAST(tu);
	init_event_call(tu);
	ret = tu_finish(tu);
	if (ret < 0) {
		tu_free(tu);
		return ERR_PTR(ret);
	}
	return trace_probe_event_call(&tu->tp);
}

/**
 * destroy_local_trace_uprobe - free an event of create_local_trace_uprobe()
 * @event_call: the event, no longer registered by perf
 */
void destroy_local_trace_uprobe(struct trace_event_call *event_call)
{
	struct trace_probe *tp = trace_probe_primary_from_call(event_call);
	struct trace_uprobe *tu;

	if (WARN_ON_ONCE(!tp))
		return;
	/* Freed once its handlers have returned, without making perf wait. */
	tu = tp_to_tu(tp);
	tu->owns_event = true;
	INIT_WORK(&tu->free_work, tu_free_work);
	queue_work(system_long_wq, &tu->free_work);
}

/**
 * bpf_get_uprobe_info - describe the uprobe behind a perf event
 * @event: a perf event on a uprobe event (tracepoint or uprobe PMU)
 * @fd_type: BPF_FD_TYPE_UPROBE or BPF_FD_TYPE_URETPROBE
 * @filename: the probed file's path, as given
 * @probe_offset: the file offset
 * @probe_addr: 0: uprobes are placed by file offset
 * @perf_type_tracepoint: @event is a tracepoint-type perf event
 *
 * Return: 0, or -EINVAL when @event is not on a uprobe event.
 */
int bpf_get_uprobe_info(const struct perf_event *event, u32 *fd_type,
			const char **filename, u64 *probe_offset,
			u64 *probe_addr, bool perf_type_tracepoint)
{
	struct trace_probe *tp;
	struct trace_uprobe *tu;

	if (!event->tp_event || !(event->tp_event->flags & TRACE_EVENT_FL_UPROBE))
		return -EINVAL;
	tp = trace_probe_primary_from_call(event->tp_event);
	if (!tp)
		return -EINVAL;
	tu = tp_to_tu(tp);
	*fd_type = is_ret_probe(tu) ? BPF_FD_TYPE_URETPROBE :
				      BPF_FD_TYPE_UPROBE;
	*filename = tu->filename;
	*probe_offset = tu->offset;
	*probe_addr = 0;
	return 0;
}
#endif /* CONFIG_PERF_EVENTS */

static __init int uprobe_events_init(void)
{
	int i, ret;

	ret = dyn_event_register(&uprobe_dyn_ops);
	if (ret)
		return ret;
	ret = tracing_init_dentry();
	if (ret)
		return 0;
	for (i = 0; i < ARRAY_SIZE(uprobe_lists); i++)
		trace_create_file(uprobe_lists[i].name, uprobe_lists[i].mode,
				  NULL, (void *)&uprobe_lists[i],
				  &uprobe_list_fops);
	return 0;
}
fs_initcall(uprobe_events_init);
