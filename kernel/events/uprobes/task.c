// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: the per-task state and return instances.
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

/**
 * uprobe_free_utask - @t drops its mm (exit or exec): free its uprobes state
 * @t: the task, which is current
 */
void uprobe_free_utask(struct task_struct *t)
{
	struct uprobe_task *utask = t->utask;
	struct return_instance *ri;

	if (!utask)
		return;
	/* The perf callchain code reads current->utask from NMI. */
	WRITE_ONCE(t->utask, NULL);
	/* Pairs with that NMI read on this CPU: the store lands before the free. */
	barrier();
	if (utask->active)
		put_uprobe(utask->active);
	while (utask->return_instances)
		drop_return_instance(utask, &utask->return_instances);
	while ((ri = utask->spare_instances)) {
		utask->spare_instances = ri->next;
		kfree(ri);
	}
	kfree(utask);
}

/**
 * uprobe_fixup_user_callchain - put real return addresses in a user callchain
 * @regs: the user registers the callchain was walked from
 * @ips: the user part of current's callchain, innermost first (@ips[0] is
 *	the user ip)
 * @nr: the number of entries in @ips
 *
 * A user ip inside a stub (an interrupt came between a jump site's jump
 * and its system call) becomes the site's address. A pending return probe
 * replaced its function's return address with the
 * trampoline or a return stub, which is what a walk of the user stack
 * (perf callchains, bpf_get_stack()) reads there. Each such entry after
 * @ips[0] gets the saved return address of the pending instance it stands
 * for: the live instances (arch_uretprobe_is_alive(), as for a tail call:
 * a sample at a function's first instruction still has its frame), newest
 * first, one per return address on the stack (a chain of tail calls
 * shares one).
 *
 * Runs in any context, NMI included, on current: the task cannot change
 * its instances while this runs on top of it, uprobe_free_utask() clears
 * current->utask before it frees them, and the walk is bounded.
 */
void uprobe_fixup_user_callchain(struct pt_regs *regs, u64 *ips,
				 unsigned int nr)
{
	struct uprobe_task *utask = READ_ONCE(current->utask);
	unsigned int i, steps = 0;
	struct return_instance *ri;
	struct xol_area *area;
	unsigned long slot;

	if (nr && ips[0] == instruction_pointer(regs)) {
		slot = stub_site_at(ips[0]);
		if (slot)
			ips[0] = slot;
	}
	if (!utask || !current->mm || nr < 2)
		return;
	area = xol_area_of(current->mm);
	if (!area)
		return;
	slot = trampoline_vaddr(area);
	ri = READ_ONCE(utask->return_instances);
	for (i = 1; i < nr && ri; i++) {
		if (!arch_uretprobe_is_return_addr(slot, ips[i]))
			continue;
		/* skip the instances whose frames are gone */
		while (ri && !arch_uretprobe_is_alive(ri, RP_CHECK_CHAIN_CALL,
						      regs) &&
		       ++steps <= UPROBE_MAX_RETURN_DEPTH)
			ri = READ_ONCE(ri->next);
		if (!ri || steps > UPROBE_MAX_RETURN_DEPTH)
			return;
		ips[i] = ri->orig_ret;
		/* one return address for a chain of tail calls */
		while (ri && ri->chained && ++steps <= UPROBE_MAX_RETURN_DEPTH)
			ri = READ_ONCE(ri->next);
		if (ri)
			ri = READ_ONCE(ri->next);
	}
}

/*
 * The user address of the highest @len-byte word in [@lo, @hi) of current's
 * stack that holds a return address into @tramp (arch_uretprobe_is_return_addr()),
 * or 0 if none does or the stack cannot be read without a fault. No more
 * than @hi - @lo bytes are read, with page faults disabled.
 */
static unsigned long find_ret_word(unsigned long tramp, unsigned long lo,
				   unsigned long hi, int len)
{
	unsigned long at, n, i;
	u8 buf[64];
	u32 ret32;
	u64 ret64;

	lo = ALIGN(lo, len);
	hi = ALIGN_DOWN(hi, len);
	while (hi > lo) {
		n = min_t(unsigned long, hi - lo, sizeof(buf));
		at = hi - n;
		if (copy_from_user_nofault(buf, (void __user *)at, n))
			return 0;
		for (i = n; i >= len; i -= len) {
			if (len == sizeof(ret32)) {
				memcpy(&ret32, buf + i - len, len);
				ret64 = ret32;
			} else {
				memcpy(&ret64, buf + i - len, len);
			}
			if (arch_uretprobe_is_return_addr(tramp, ret64))
				return at + i - len;
		}
		hi = at;
	}
	return 0;
}

/**
 * uprobe_user_stack_fixups - the real return addresses in a user stack copy
 * @regs: current's user registers
 * @sp: the user address where the copy starts
 * @size: its length
 * @fix: filled with up to @max fix-ups, by ascending address
 * @max: how many @fix has room for
 *
 * A copy of current's user stack (perf's PERF_SAMPLE_STACK_USER, which a
 * DWARF unwinder walks later, away from the task) holds our return address
 * wherever a pending return probe replaced one that is in memory. For each
 * live instance, newest first as for uprobe_fixup_user_callchain(), the
 * architecture says where that word is (arch_uretprobe_ret_slot()): at a
 * known address, or somewhere in a range of the instance's frame, where
 * the highest word holding our return address is it. Each range starts
 * above the newer instances' words and frames, so that no word is given
 * two instances' addresses. This gives the bytes the copy should hold
 * there instead: the real return address.
 *
 * Runs in any context, NMI included, on current (see
 * uprobe_fixup_user_callchain()); reads at most @size bytes of the stack,
 * with page faults disabled, and only where a range holds more than one
 * word.
 *
 * Return: how many of @fix were filled.
 */
int uprobe_user_stack_fixups(struct pt_regs *regs, unsigned long sp,
			     unsigned long size, struct uprobe_stack_fixup *fix,
			     int max)
{
	struct uprobe_task *utask = READ_ONCE(current->utask);
	unsigned long lo, hi, slot, next = sp, end = sp + size;
	struct return_instance *ri;
	unsigned int steps = 0;
	struct xol_area *area;
	int nr = 0, len;
	bool exact;
	u32 ret32;
	u64 ret64;

	if (!utask || !current->mm || end < sp)
		return 0;
	area = xol_area_of(current->mm);
	for (ri = READ_ONCE(utask->return_instances);
	     ri && nr < max && ++steps <= UPROBE_MAX_RETURN_DEPTH;
	     ri = READ_ONCE(ri->next)) {
		if (!arch_uretprobe_is_alive(ri, RP_CHECK_CHAIN_CALL, regs))
			continue;
		len = arch_uretprobe_ret_slot(ri, regs, &lo, &hi);
		if (len != sizeof(ret32) && len != sizeof(ret64))
			goto older;
		exact = hi > lo && hi - lo == len;
		/* in order, once per word (a chain of tail calls shares one) */
		lo = max(lo, next);
		hi = min(hi, end);
		if (hi < lo || hi - lo < len)
			goto older;
		if (exact)
			slot = lo;
		else if (area)
			slot = find_ret_word(trampoline_vaddr(area), lo, hi, len);
		else
			slot = 0;
		if (!slot)
			goto older;
		fix[nr].addr = slot;
		fix[nr].size = len;
		ret32 = ri->orig_ret;
		ret64 = ri->orig_ret;
		if (len == sizeof(ret32))
			memcpy(fix[nr].bytes, &ret32, len);
		else
			memcpy(fix[nr].bytes, &ret64, len);
		next = slot + len;
		nr++;
older:
		/* an older instance's frame is above this one's entry */
		next = max(next, ri->stack);
	}
	return nr;
}

/* Give @t (a forked child) a copy of current's pending return probes. */
static int dup_return_instances(struct task_struct *t,
				struct uprobe_task *utask)
{
	struct return_instance *ri, *copy, **tail;
	struct uprobe_task *child;

	child = kzalloc(sizeof(*child), GFP_KERNEL);
	if (!child)
		return -ENOMEM;
	t->utask = child;
	tail = &child->return_instances;
	for (ri = utask->return_instances; ri; ri = ri->next) {
		copy = kmemdup(ri, sizeof(*ri), GFP_KERNEL);
		if (!copy)
			return -ENOMEM;
		copy->next = NULL;
		*tail = copy;
		tail = &copy->next;
		child->depth++;
	}
	return 0;
}

/*
 * Give @child (the area of a forked child, not running yet) the return
 * table slots of its copied instances @utask, with the parent's contents
 * (@area): the child's stack returns through the same stubs. Without
 * memory the instances keep their returns but give up their stubs.
 */
static int dup_return_table(struct xol_area *area, struct xol_area *child,
			    struct uprobe_task *utask)
{
	/* Pairs with the cmpxchg() in alloc_return_table(). */
	struct page *from = smp_load_acquire(&area->ret_table), *page = NULL;
	struct return_instance *ri;
	bool owned = false;

	for (ri = utask->return_instances; ri; ri = ri->next)
		owned |= ri->stub >= 0;
	if (!owned)
		return 0;
	if (from)
		page = alloc_page(GFP_KERNEL_ACCOUNT);
	for (ri = utask->return_instances; ri; ri = ri->next) {
		if (ri->stub < 0)
			continue;
		if (page)
			__set_bit(ri->stub, child->ret_used);
		else
			ri->stub = -1;
	}
	if (!page)
		return -ENOMEM;
	copy_page(page_address(page), page_address(from));
	/* Pairs with uprobe_return_table(); the child runs later anyway. */
	smp_store_release(&child->ret_table, page);
	/* Pairs with the smp_load_acquire() in return_table_of(). */
	smp_store_release(&child->ret_slots, page_address(page));
	return 0;
}

/**
 * uprobe_copy_process - set up a new task's uprobes state
 * @t: the new task, a bytewise copy of its parent so far
 * @flags: its clone flags
 *
 * A new task starts with none, except a child made inside functions whose
 * returns are probed that returns through them:
 *  - a forked child: its stack returns through the trampoline or the
 *    stubs, so it gets the parent's pending return probes and an XOL
 *    area at the same address (the area itself is not inherited:
 *    VM_DONTCOPY), with its own return table;
 *  - a vfork() child (CLONE_VM | CLONE_VFORK): it runs on the parent's
 *    stack in the parent's mm until it execs or exits, and returns from
 *    vfork() itself, and so from a probed function, through the same
 *    addresses: it gets copies of the pending returns, which own no stub
 *    (the parent's instances keep theirs, and the table slots they fill
 *    are the mm's);
 *  - any other CLONE_VM child (a thread, a clone() with a stack of its
 *    own) gets none: two tasks cannot run on one stack at once, so it
 *    starts on a stack of its own and never returns through the parent's
 *    frames.
 */
void uprobe_copy_process(struct task_struct *t, unsigned long flags)
{
	struct uprobe_task *utask = current->utask;
	struct xol_area *area, *child;
	struct return_instance *ri;

	t->utask = NULL;
	if (!utask || !utask->return_instances || !t->mm || !current->mm)
		return;
	if (flags & CLONE_VM) {
		if (!(flags & CLONE_VFORK))
			return;
		if (dup_return_instances(t, utask))
			goto notice;
		for (ri = t->utask->return_instances; ri; ri = ri->next)
			ri->stub = -1;
		return;
	}
	area = xol_area_of(current->mm);
	if (!area || dup_return_instances(t, utask))
		goto notice;
	child = map_xol_area(t->mm, area->vaddr, 0);
	if (IS_ERR(child))
		goto notice;
	if (dup_return_table(area, child, t->utask))
		pr_notice_ratelimited("uprobes: %s[%d]: the forked child %d cannot unwind through its return-probed calls\n",
				      current->comm, task_pid_nr(current),
				      task_pid_nr(t));
	return;

notice:
	/* What was copied keeps no stub: the child has no table for it. */
	for (ri = t->utask ? t->utask->return_instances : NULL; ri; ri = ri->next)
		ri->stub = -1;
	pr_notice_ratelimited("uprobes: %s[%d]: no return probes for the forked child %d\n",
			      current->comm, task_pid_nr(current),
			      task_pid_nr(t));
}
