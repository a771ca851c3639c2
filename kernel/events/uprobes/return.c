// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: return probes: a probed call's return address taken over, the
 * return it comes back with, and uprobes' own system calls (the
 * trampoline's and the jump-site stubs'), which tracers do not see.
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

/**
 * struct stack_span - the stack a frame is on, as far as the kernel can tell
 * @lo: start of its mapping (0 if unmapped)
 * @hi: end of its mapping
 * @alt: it is on the task's alternate signal stack
 * @known: the fields above are filled in (lazily: most returns need none)
 * @nowait: they cannot be now (the lookup takes the mmap_lock)
 * @wanted: with @nowait, they were needed: the question was not answered
 *
 * The main stack, a thread's stack (glibc gives each a guard page) and an
 * alternate signal stack are normally mappings of their own; the
 * sigaltstack range also tells an alternate stack apart from a stack whose
 * mapping it was merged with.
 */
struct stack_span {
	unsigned long lo, hi;
	bool alt;
	bool known;
	bool nowait;
	bool wanted;
};

static void get_stack_span(struct stack_span *span, unsigned long sp)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	span->lo = 0;
	span->hi = 0;
	span->alt = __on_sig_stack(sp);
	span->known = true;
	if (mmap_read_lock_killable(mm))
		return;
	vma = vma_lookup(mm, sp);
	if (vma) {
		span->lo = vma->vm_start;
		span->hi = vma->vm_end;
	}
	mmap_read_unlock(mm);
}

/*
 * Is @older, a pending frame below @frame, on @frame's stack (so unwound,
 * since @frame is calling or returning)? @span: @frame's stack, looked up
 * on first use; false if it cannot be (@span->nowait).
 */
static bool unwound_below(struct stack_span *span, unsigned long frame,
			  unsigned long older)
{
	if (!span->known) {
		if (span->nowait) {
			span->wanted = true;
			return false;
		}
		get_stack_span(span, frame);
	}
	return older >= span->lo && older < span->hi &&
	       __on_sig_stack(older) == span->alt;
}

/*
 * A probed call with its return address at @frame is starting: pending
 * instances of frames at or below @frame on the same stack belong to calls
 * that were unwound without returning (longjmp, siglongjmp, an exception)
 * and are dropped, newest first. An instance at @frame itself is alive
 * only for a tail call from its function (@ctx RP_CHECK_CHAIN_CALL, our
 * return address is still the return address); arch_uretprobe_is_alive()
 * tells which are at or below @frame. Instances of other stacks (a signal
 * handler on its alternate stack, another coroutine) are left alone, and
 * so is everything older than them. @span: @frame's stack, shared by the
 * passes of one call.
 */
static void drop_dead_at_call(struct uprobe_task *utask, struct pt_regs *regs,
			      unsigned long frame, enum rp_check ctx,
			      struct stack_span *span)
{
	struct return_instance *ri;

	while ((ri = utask->return_instances) &&
	       !arch_uretprobe_is_alive(ri, ctx, regs)) {
		/* At @frame itself its return address was overwritten. */
		if (ri->stack != frame && !unwound_below(span, frame, ri->stack))
			return;
		drop_return_instance(utask, &utask->return_instances);
	}
}

/*
 * Where the call at @regs will return now: the architecture's return stub
 * of a table slot taken for it (*@stub; *@slot, the slot, is for the real
 * return address), which unwinders can see through, or else the XOL
 * trampoline (*@stub = -1); 0 if the task's mode has neither; -1UL if
 * the table is still to be allocated and @nowait forbids it.
 */
static unsigned long return_addr_for(struct xol_area *area,
				     struct pt_regs *regs, bool nowait,
				     int *stub, unsigned long **slot)
{
	unsigned long *table = NULL, addr;
	int i;

	*stub = -1;
	i = get_return_stub(area);
	if (i < 0)
		goto trampoline;
	addr = arch_uretprobe_stub(regs, i);
	if (addr && nowait) {
		table = return_table_of(area);
		if (!table) {
			release_return_stub(area, i);
			return -1UL;
		}
	} else if (addr) {
		table = get_return_table(area);
	}
	if (!table) {
		release_return_stub(area, i);
		goto trampoline;
	}
	*stub = i;
	*slot = &table[i];
	return addr;

trampoline:
	return arch_uretprobe_trampoline(trampoline_vaddr(area), regs);
}

/*
 * The return address of the call at @regs, replaced by @ret: -1UL if the
 * stack cannot be read or written (@nowait: without a page fault).
 */
static unsigned long swap_return_addr(unsigned long ret, struct pt_regs *regs,
				      bool nowait)
{
	unsigned long old;

	if (!nowait)
		return arch_uretprobe_hijack_return_addr(ret, regs);
	pagefault_disable();
	old = arch_uretprobe_hijack_return_addr(ret, regs);
	pagefault_enable();
	return old;
}

/**
 * prepare_return - take over the return address of a probed call
 * @uprobe: the probe hit, with return consumers
 * @regs: the user registers at its first instruction
 * @utask: current's uprobe_task
 * @nowait: called in the hit's uprobes_srcu read section: nothing may
 *	fault, sleep or wait for a lock
 *
 * One arch_uretprobe_hijack_return_addr() reads the return address and
 * writes ours. What has to know the old one comes after it, and a call
 * that goes no further writes the old one back. With @nowait, whatever
 * would have to wait (the stack word not present, the XOL area or the
 * return table still to be made, no spare instance, the stack of an
 * unwound frame to be looked up) makes it give up with nothing changed
 * but dead instances dropped, to be called again out of the section.
 *
 * Return: false if @nowait made it give up, else true (the return is
 * taken over, or the hit counted as missed).
 */
bool prepare_return(struct uprobe *uprobe, struct pt_regs *regs,
		    struct uprobe_task *utask, bool nowait)
{
	struct mm_struct *mm = current->mm;
	struct xol_area *area = nowait ? xol_area_of(mm) :
				 get_xol_area(mm, instruction_pointer(regs));
	unsigned long ret, old, orig, *slot = NULL;
	unsigned long frame = user_stack_pointer(regs);
	struct stack_span span = { .nowait = nowait };
	struct return_instance *ri, *top = NULL;
	/* 0: the return consumer is being registered (key_uprobe_locked()) */
	u32 key = READ_ONCE(uprobe->key);
	bool pending, chained;
	int stub;

	if (unlikely(!key))
		goto missed;
	if (!area)
		return false;	/* @nowait: still to be mapped */
	if (IS_ERR(area))
		goto missed;
	/*
	 * Calls unwound below @frame have ended whatever this call is: their
	 * stubs are free before this call takes one. An instance dead to a
	 * tail call is dead to any call.
	 */
	pending = utask->return_instances;
	if (pending) {
		drop_dead_at_call(utask, regs, frame, RP_CHECK_CHAIN_CALL, &span);
		if (span.wanted)
			return false;
	}
	ret = return_addr_for(area, regs, nowait, &stub, &slot);
	if (ret == -1UL)
		return false;
	if (!ret)
		goto missed;
	old = swap_return_addr(ret, regs, nowait);
	if (old == -1UL)
		goto release;
	/*
	 * One of our return addresses as the return address of this call
	 * means a tail call from a return-probed function of this task, so
	 * an instance is pending. With none (a frame that came from another
	 * task's stack, whose return cannot be matched either way), it is
	 * taken as a plain return address, and the arch check is spared.
	 */
	chained = pending &&
		  arch_uretprobe_is_return_addr(trampoline_vaddr(area), old);
	if (chained) {
		/* A tail call of a probed function: same return as its caller. */
		top = utask->return_instances;
		if (!top || top->stack != frame)
			goto restore;	/* not our caller's: leave the stack be */
	} else if (utask->return_instances) {
		drop_dead_at_call(utask, regs, frame, RP_CHECK_CALL, &span);
		if (span.wanted)
			goto restore;
	}
	if (utask->depth >= UPROBE_MAX_RETURN_DEPTH) {
		if (nowait)
			goto restore;	/* said once, out of the section */
		pr_notice_ratelimited("uprobes: %s[%d]: return probes nested deeper than %d: not probing this return\n",
				      current->comm, task_pid_nr(current),
				      UPROBE_MAX_RETURN_DEPTH);
		goto restore;
	}
	ri = alloc_return_instance(utask, nowait);
	if (!ri)
		goto restore;
	orig = old;
	if (chained) {
		orig = top->orig_ret;
		/*
		 * Our return address was there already: it stays, and the
		 * stub goes unused, unless the stack can no longer be written
		 * (then the stub is on it, and is this call's).
		 */
		if (swap_return_addr(old, regs, nowait) != -1UL && stub >= 0) {
			release_return_stub(area, stub);
			stub = -1;
		}
	}
	/* Read by unwinders of this task only, after they find the stub. */
	if (stub >= 0)
		WRITE_ONCE(*slot, orig);
	ri->id = uprobe->id;
	ri->key = key;
	ri->stub = stub;
	ri->func = instruction_pointer(regs);
	ri->orig_ret = orig;
	ri->stack = frame;
	ri->chained = chained;
	ri->next = utask->return_instances;
	utask->return_instances = ri;
	utask->depth++;
	return true;

restore:
	/* The word just written: this fails only if the stack went away. */
	swap_return_addr(old, regs, nowait);
release:
	if (stub >= 0)
		release_return_stub(area, stub);
	/* Waiting may do what could not be done now. */
	if (nowait)
		return false;
missed:
	this_cpu_inc(probe_stats(uprobe)->missed);
	return true;
}

/* The probe of pending return @ri if it is still there. In uprobes_srcu. */
static struct uprobe *return_uprobe(struct return_instance *ri)
{
	struct uprobe *uprobe = xa_load(&uprobes_by_key, ri->key);

	return uprobe && uprobe->id == ri->id ? uprobe : NULL;
}

/**
 * uprobe_handle_return - a probed function returned through the trampoline
 * @regs: the user registers as the function left them (the architecture
 *	has undone what its trampoline saved); its ip is set to where the
 *	function really returns
 * @frame: the stack pointer the function had at its entry, where its
 *	return address was; 0 if the architecture could not tell
 *
 * The call is found by @frame, normally the newest instance; a function
 * that popped its caller's arguments as it returned reports a frame up to
 * UPROBE_MAX_POPPED bytes above its instance's. Newer ones below the call's
 * frame on the same stack were unwound without a return and are dropped on
 * the way. The return handlers of the instance (and of the
 * instances it tail-called: same frame) run, newest first, with the ip
 * at the real return address. A return that matches no instance cannot be
 * completed (the real return address is unknown): SIGILL.
 *
 * Context: process context, on the way back to user mode (the breakpoint of the
 * trampoline) or in its system call.
 */
void uprobe_handle_return(struct pt_regs *regs, unsigned long frame)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance **link, *ri, *target = NULL;
	struct stack_span span = {};
	struct uprobe_consumer *uc;
	struct uprobe *uprobe;
	unsigned long stack;
	bool chained, many;
	int idx;

	if (!utask || !frame)
		goto lost;
	/*
	 * The call returning: the instance at @frame or, for a function that
	 * popped its caller's arguments as it returned, the nearest one below
	 * @frame on its stack.
	 */
	for (ri = utask->return_instances; ri; ri = ri->next) {
		if (ri->stack > frame || frame - ri->stack > UPROBE_MAX_POPPED)
			continue;
		if (ri->stack != frame && !unwound_below(&span, frame, ri->stack))
			continue;	/* another stack's */
		if (!target || ri->stack > target->stack)
			target = ri;
		if (ri->stack == frame)
			break;
	}
	if (!target)
		goto lost;
	/* Newer instances below it on its stack were unwound. */
	stack = target->stack;
	link = &utask->return_instances;
	while ((ri = *link) != target) {
		if (ri->stack < stack && unwound_below(&span, frame, ri->stack))
			drop_return_instance(utask, link);
		else
			link = &ri->next;	/* another stack's: alive */
	}

	idx = srcu_read_lock(&uprobes_srcu);
	instruction_pointer_set(regs, ri->orig_ret);
	uprobe = return_uprobe(ri);
	/* One CPU for all return handlers of a return, as in run_handlers(). */
	many = ri->chained ||
	       (uprobe && test_bit(UPROBE_RETURNS_MANY, &uprobe->flags));
	if (many)
		migrate_disable();
	for (;;) {
		/* A probe gone since the call has no handler left to run. */
		if (uprobe) {
			list_for_each_entry_srcu(uc, &uprobe->consumers, node,
						 srcu_read_lock_held(&uprobes_srcu)) {
				if (uc->ret_handler)
					uc->ret_handler(uc, ri->func, regs);
			}
		}
		chained = ri->chained;
		drop_return_instance(utask, link);
		ri = *link;
		if (!chained || !ri || ri->stack != stack)
			break;
		uprobe = return_uprobe(ri);
	}
	if (many)
		migrate_enable();
	srcu_read_unlock(&uprobes_srcu, idx);
	return;

lost:
	pr_notice_ratelimited("uprobes: %s[%d]: a return through the trampoline matches no pending return probe: SIGILL\n",
			      current->comm, task_pid_nr(current));
	force_sig(SIGILL);
}

/**
 * uprobe_syscall_from_trampoline - is this system call our trampoline's?
 * @regs: the user registers at system call entry
 *
 * Used by seccomp and syscall user dispatch, which must not filter a call
 * the program never made, and by the system call itself.
 *
 * Return: true if the call is the return-probe system call made by the
 * system call instruction of current's trampoline, and a return probe of
 * current is pending, or the stubs' system call made by a stub in use
 * (arch_uprobe_stub_syscall()). A program that calls into the trampoline
 * itself, with none pending, makes a system call like any other.
 */
bool uprobe_syscall_from_trampoline(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct mm_struct *mm = current->mm;
	unsigned long stub = arch_uprobe_stub_syscall(regs);
	struct xol_area *area;

	if (stub)
		return uprobe_stub_site(stub) != 0;
	if (!mm || !utask || !utask->return_instances)
		return false;
	area = xol_area_of(mm);
	return arch_uretprobe_is_syscall(trampoline_vaddr(area), regs);
}

/**
 * uprobe_syscall_enter_unseen - keep one of uprobes' system calls from tracers
 * @regs: the user registers at system call entry
 *
 * Called first by the system call entry work, before ptrace, seccomp,
 * syscall user dispatch, the tracepoint and audit: a call of uprobes'
 * trampoline or stubs (uprobe_syscall_from_trampoline()) is the kernel's,
 * made for a probe, and none of them sees it, on entry or, the task being
 * marked for uprobe_syscall_exit_unseen(), on exit.
 *
 * Return: true if the entry work is to be skipped for this call.
 */
bool uprobe_syscall_enter_unseen(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (!uprobe_syscall_from_trampoline(regs)) {
		if (unlikely(utask && utask->unseen_syscall))
			utask->unseen_syscall = false;	/* never exited */
		return false;
	}
	utask = get_utask();
	if (!utask)
		return false;	/* seen, then */
	utask->unseen_syscall = true;
	return true;
}

/**
 * uprobe_syscall_unseen - one of uprobes' system calls is running
 *
 * Called by the architecture's system calls for uprobes' trampoline and
 * stubs, once they know the call is one, so that its exit is kept from
 * the exit work and rseq's debug check even when its entry had no work
 * (uprobe_syscall_enter_unseen() not called). The mark is only set when
 * something will look at it on this call's exit.
 */
void uprobe_syscall_unseen(void)
{
	struct uprobe_task *utask = current->utask;

#ifdef CONFIG_GENERIC_ENTRY
	if (!IS_ENABLED(CONFIG_DEBUG_RSEQ) &&
	    !(READ_ONCE(current_thread_info()->syscall_work) &
	      SYSCALL_WORK_EXIT))
		return;
#endif
	utask = get_utask();
	if (utask)
		utask->unseen_syscall = true;
}

/**
 * uprobe_syscall_exit_unseen - is the system call ending one of uprobes'?
 *
 * Called by the system call exit path before its exit work (tracers,
 * audit, the tracepoint) and rseq's debug check, when either is to run;
 * of the exit work, a debugger's single-step over the call is still
 * reported.
 *
 * Return: true, once, if the call ending is one of uprobes' that no
 * tracer is to see.
 */
bool uprobe_syscall_exit_unseen(void)
{
	struct uprobe_task *utask = current->utask;

	if (likely(!utask || !utask->unseen_syscall))
		return false;
	utask->unseen_syscall = false;
	return true;
}
