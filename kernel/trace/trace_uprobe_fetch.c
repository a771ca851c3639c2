// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based dynamic events: a hit's arguments, and the format of the
 * records they go into.
 *
 * The trace_probe library runs the fetch program; this file supplies its
 * stage-1 operations on the task's user registers and memory, and runs
 * arguments that need no interpreter (a register, stack slot or return
 * value, or a number or string at one of those plus an offset) itself.
 * Reads go through the ordinary user accessors: with page faults disabled
 * straight into a record reserved in an output buffer, and, when such a
 * read misses a page, once more into a scratch record with faults allowed
 * (the hit path's deferred fetch, trace_uprobe_hit.c). The design is in
 * trace_uprobe.h and Documentation/trace/uprobes.rst.
 */
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "trace_uprobe.h"
#include "trace_probe_tmpl.h"

/* ------------------------------------------------------------ fetching */

/*
 * Set by a read of user memory that failed while page faults were
 * disabled, in tu_fetch_nofault(), which clears it before and tests it after
 * the fetch; both run with preemption disabled, so on one CPU.
 */
static DEFINE_PER_CPU(bool, fetch_missed);

/* A user read failed: a miss of tu_fetch_nofault(), or a real fault. */
static nokprobe_inline void fetch_failed(void)
{
	if (pagefault_disabled())
		__this_cpu_write(fetch_missed, true);
}

/*
 * The fetch program runs in the probed task and reads user memory with the
 * ordinary user accessors: with page faults disabled straight into a
 * reserved record (tu_fetch_nofault()), and when that misses a page once more
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

/**
 * tu_dynamic_size_nofault - measure a hit's strings without a page fault
 * @tu: the probe that was hit
 * @uf: the hit
 * @limit: the longest record the output takes (UPROBE_MAX_*_RECORD)
 * @dsize: set to the bytes of dynamic data the record needs, within @limit
 *
 * Nothing sleeps, so fetch_missed is read on the CPU that set it.
 *
 * Return: false when a string needed a page fault (*@dsize is then short).
 */
bool tu_dynamic_size_nofault(struct trace_uprobe *tu, struct uprobe_fetch *uf,
			     int limit, int *dsize)
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
 * tu_fetch_record - fetch a hit's arguments into a scratch record
 * @tu: the probe that was hit
 * @uf: the hit
 * @rec: the scratch record, freed with tu_free_record() after a success
 * @limit: the longest record the output takes (UPROBE_MAX_*_RECORD)
 *
 * Page faults are allowed: the caller may sleep and holds no section a
 * global update waits for.
 *
 * Return: 0, or -ENOMEM.
 */
int tu_fetch_record(struct trace_uprobe *tu, struct uprobe_fetch *uf,
		    struct uprobe_record *rec, int limit)
{
	int hsize = tu_head_size(tu), dsize = dynamic_size(tu, uf, limit);

	rec->size = tu_record_size(tu, dsize);
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

/**
 * tu_free_record - free what tu_fetch_record() allocated
 * @rec: a record tu_fetch_record() filled
 */
void tu_free_record(struct uprobe_record *rec)
{
	if (rec->data != (u8 *)rec->onstack)
		kfree(rec->data);
}

/**
 * tu_fetch_nofault - fetch a hit's arguments into a reserved record
 * @tu: the probe that was hit, with arguments
 * @uf: the hit
 * @entry: a record of tu_record_size(@tu, @dsize) bytes reserved in an
 *	output buffer (preemption disabled), its head filled
 * @dsize: the bytes of dynamic data measured for @entry
 *
 * Reads without taking a page fault.
 *
 * Return: false when a read needed one: @entry is incomplete, and the hit
 * must be fetched again with faults allowed (tu_fetch_record()).
 */
bool tu_fetch_nofault(struct trace_uprobe *tu, struct uprobe_fetch *uf,
		      void *entry, int dsize)
{
	int hsize = tu_head_size(tu);
	u8 *data = entry;

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
