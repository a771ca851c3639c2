// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: the hit path: sites found, consumers run, the instruction carried out.
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

/*
 * Boosting (the default): a copy the architecture can run without a step
 * trap runs that way. Off, every copy is stepped, as where the
 * architecture does not boost.
 */
static bool uprobe_boost = true;
module_param_named(boost, uprobe_boost, bool, 0644);
MODULE_PARM_DESC(boost, "Run out-of-line copies that allow it without a single-step trap");

/*
 * Is the breakpoint at @bp one that a return of current reaches (the
 * trampoline's or the architecture's)? Only a task with pending returns can get there
 * legitimately, which keeps the check off the path of plain hits (without
 * any, that breakpoint is not taken for a return). *@slot: the user address of
 * the trampoline slot, 0 if the mm has no XOL area.
 */
static bool is_return_trap(struct mm_struct *mm, unsigned long bp,
			   unsigned long *slot)
{
	struct uprobe_task *utask = current->utask;

	if (!utask || !utask->return_instances)
		return false;
	*slot = trampoline_vaddr(xol_area_of(mm));
	return arch_uretprobe_is_trap(*slot, bp);
}

static bool handle_hit(struct pt_regs *regs);

/* Can a breakpoint of current's be ours (a probe's, or a return's)? */
static bool may_be_ours(void)
{
	struct uprobe_task *utask = current->utask;
	struct mm_struct *mm = current->mm;

	return mm && (uprobes_mm_of(mm) ||
		      (utask && utask->return_instances));
}

/**
 * uprobe_hit_in_trap - a breakpoint trapped in user mode: handle it now
 * @regs: the user registers of the trap
 *
 * For an architecture whose user-mode breakpoint trap is process context
 * that may sleep once interrupts are enabled: called with interrupts off,
 * before the die notifiers. If the breakpoint can be ours,
 * the hit is handled right here with interrupts on (the handlers may fault
 * and sleep, as the trap of a user fault may), and the task goes back to
 * user mode wherever the hit sent it: no second pass on the way out.
 *
 * Return: true if the trap was ours; false leaves it to the kernel (the
 * program's own breakpoint gets its SIGTRAP).
 */
bool uprobe_hit_in_trap(struct pt_regs *regs)
{
	bool ours;

	if (!may_be_ours())
		return false;
	local_irq_enable();
	ours = handle_hit(regs);
	local_irq_disable();
	return ours;
}

/**
 * uprobe_pre_sstep_notifier - a breakpoint trapped in user mode
 * @regs: the user registers of the trap
 *
 * Called by the architecture's breakpoint handler, in the trap's context.
 * If the breakpoint can be ours, the hit is handled on the way back to
 * user mode (uprobe_notify_resume()), which sends a SIGTRAP if it was not.
 *
 * Return: 1 if the trap is taken care of, 0 to leave it to the kernel.
 */
int uprobe_pre_sstep_notifier(struct pt_regs *regs)
{
	if (!may_be_ours())
		return 0;
	set_thread_flag(TIF_UPROBE);
	return 1;
}

NOKPROBE_SYMBOL(uprobe_pre_sstep_notifier);

/**
 * uprobe_post_sstep_notifier - a single-step trap in user mode: ours?
 * @regs: the user registers after the step
 *
 * Called by the architecture's step trap handler, in the trap's context.
 * The step's fix-ups run on the way back to user mode. Any step trap also
 * ends the wait for a debugger to resume current at a probed instruction
 * (&struct uprobe_task.debugger_vaddr): it stepped a copy of its own.
 *
 * Return: 1 if current was stepping an instruction copy for us, else 0.
 */
int uprobe_post_sstep_notifier(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (!utask)
		return 0;
	utask->debugger_vaddr = 0;
	if (utask->state != UTASK_SSTEP)
		return 0;
	utask->state = UTASK_SSTEP_ACK;
	set_thread_flag(TIF_UPROBE);
	return 1;
}

NOKPROBE_SYMBOL(uprobe_post_sstep_notifier);

/*
 * If @ip is in a probe's slot of @mm (not the trampoline's), the probed
 * address that slot stands for, else 0; *@slot gets the slot. The slot
 * cannot be reused under a task whose saved ip is in it: @ip must be
 * current's saved user ip.
 */
static unsigned long boosted_vaddr(struct mm_struct *mm, unsigned long ip,
				   unsigned int *slot)
{
	struct xol_area *area = xol_area_of(mm);
	struct xol_owner *owner;
	unsigned long off;

	if (!area)
		return 0;
	off = ip - area->vaddr;
	if (off >= XOL_AREA_BYTES ||
	    off / UPROBE_XOL_SLOT_BYTES == XOL_TRAMPOLINE_SLOT)
		return 0;
	owner = slot_owner(area, off / UPROBE_XOL_SLOT_BYTES);
	if (!owner)
		return 0;
	if (slot)
		*slot = off / UPROBE_XOL_SLOT_BYTES;
	return READ_ONCE(owner->vaddr);
}

/* Signals a fault of an instruction sends to the faulting thread. */
#define UPROBE_FAULT_SIGNALS	(sigmask(SIGSEGV) | sigmask(SIGBUS) | \
				 sigmask(SIGILL) | sigmask(SIGTRAP) | \
				 sigmask(SIGFPE) | sigmask(SIGSYS))

/*
 * Current is at the start of the boosted copy in @slot, which has not run:
 * make that a step of the same copy (as if the hit had been stepped), so
 * that a signal waits until the instruction is done. False if the probe
 * is gone (the breakpoint too: the instruction itself can run) or the step
 * cannot be set up.
 */
static bool step_from_slot(struct uprobe_task *utask, struct pt_regs *regs,
			   struct xol_area *area, unsigned int slot,
			   unsigned long vaddr)
{
	struct uprobes_mm *um = uprobes_mm_of(current->mm);
	struct uprobe *uprobe = NULL;
	struct uprobe_site *site;
	int idx;

	/*
	 * A fault of the copy queued its signal already: stepping it again
	 * would fault again with nothing new to deliver. It goes back to the
	 * probed address instead, as an aborted step does.
	 */
	if (!um || __fatal_signal_pending(current) ||
	    (current->pending.signal.sig[0] & UPROBE_FAULT_SIGNALS))
		return false;
	idx = srcu_read_lock(&uprobes_srcu);
	rcu_read_lock();
	site = site_lookup(um, vaddr);
	if (site && !READ_ONCE(site->pending) &&
	    site->uprobe->id == READ_ONCE(slot_owner(area, slot)->id))
		uprobe = get_uprobe(site->uprobe);
	rcu_read_unlock();
	srcu_read_unlock(&uprobes_srcu, idx);
	if (!uprobe)
		return false;
	instruction_pointer_set(regs, vaddr);
	utask->active = uprobe;
	utask->auprobe = &uprobe->arch;
	utask->vaddr = vaddr;
	utask->xol_vaddr = slot_vaddr(area, slot);
	if (arch_uprobe_pre_xol(&uprobe->arch, regs)) {
		utask->active = NULL;
		utask->auprobe = NULL;
		put_uprobe(uprobe);
		return false;
	}
	utask->state = UTASK_SSTEP;
	return true;
}

/*
 * Where a task whose ip @ip is in a boosted copy of @mm stands in its
 * program: the probed address (*@vaddr) while the copy has not run, where
 * its jump back goes once it has; 0 if @ip is in no probe's slot. *@slot
 * gets the slot. @ip must be current's saved user ip (boosted_vaddr()).
 */
static __always_inline unsigned long boosted_resume(struct mm_struct *mm,
						    unsigned long ip,
						    unsigned long *vaddr,
						    unsigned int *slot)
{
	struct xol_area *area;
	unsigned int page;
	void *kaddr;

	*vaddr = boosted_vaddr(mm, ip, slot);
	if (!*vaddr)
		return 0;
	area = xol_area_of(mm);	/* found by boosted_vaddr() */
	kaddr = map_slot(area, *slot, &page);
	ip = arch_uprobe_boost_resume(kaddr, slot_vaddr(area, *slot), ip,
				      *vaddr);
	kunmap_local(kaddr);
	return ip;
}

/*
 * A signal is about to be delivered to current, which may be inside a
 * boosted slot (a fault of the copy, or an interrupt, caught it there):
 * the signal frame must hold no slot address. Past the copy, the task is
 * moved to where the jump back goes. Before it, the hit becomes a step of
 * the copy (step_from_slot()), so that the signal is held until the
 * instruction ran, as for a stepped hit (a fault of the copy then aborts
 * the step as usual); failing that, the task goes back to the probed
 * address.
 *
 * Return: true if current now steps the copy (the signal must wait).
 */
static bool leave_boosted_slot(struct uprobe_task *utask,
			       struct pt_regs *regs)
{
	unsigned long vaddr, ip;
	unsigned int slot;

	ip = boosted_resume(current->mm, instruction_pointer(regs), &vaddr,
			    &slot);
	if (!ip)
		return false;
	arch_uprobe_boost_leave(regs);
	if (ip == vaddr &&
	    step_from_slot(utask, regs, xol_area_of(current->mm),
			   slot, vaddr))
		return true;
	instruction_pointer_set(regs, ip);
	return false;
}

/**
 * uprobe_get_trap_addr - the address to report for a trap at @regs
 * @regs: registers of the trap
 *
 * Return: the probed address while its copy runs out of line (stepped or
 * boosted), else the instruction pointer.
 */
unsigned long uprobe_get_trap_addr(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	unsigned long vaddr;

	if (!user_mode(regs) || !utask)
		return instruction_pointer(regs);
	if (utask->state == UTASK_SSTEP)
		return utask->vaddr;
	vaddr = boosted_vaddr(current->mm, instruction_pointer(regs), NULL);
	return vaddr ? vaddr : instruction_pointer(regs);
}

/**
 * uprobe_leave_boosted_copy - a trap taken just after a boosted copy ran
 * @regs: current's user registers, as saved by the trap
 *
 * A trap that the copy of a boosted instruction raised after it completed
 * (a data breakpoint it hit) finds the task still in the slot, with only
 * the jump back left to run. The trap handler calls this before it reports
 * the trap, so that the program, its signal and its debugger see the
 * address where the instruction itself would have left the task.
 *
 * Context: the trap of current, any context, no sleeping.
 *
 * Return: true if the task was moved out of a slot.
 */
bool uprobe_leave_boosted_copy(struct pt_regs *regs)
{
	unsigned long vaddr, ip;
	unsigned int slot;

	if (!user_mode(regs) || !current->mm ||
	    (current->utask && current->utask->state != UTASK_RUNNING))
		return false;
	ip = boosted_resume(current->mm, instruction_pointer(regs), &vaddr,
			    &slot);
	if (!ip || ip == vaddr)
		return false;
	arch_uprobe_boost_leave(regs);
	instruction_pointer_set(regs, ip);
	return true;
}

NOKPROBE_SYMBOL(uprobe_leave_boosted_copy);

/*
 * Has the SRCU list @head at most one entry? Read without a lock, under
 * uprobes_srcu: the answer may be stale by one consumer joining or leaving.
 */
static bool consumers_single(struct list_head *head)
{
	struct list_head *first = srcu_dereference(list_next_rcu(head),
						   &uprobes_srcu);

	return first == head ||
	       srcu_dereference(list_next_rcu(first), &uprobes_srcu) == head;
}

/*
 * Run the handlers of @uprobe; true if they all asked to be removed, or if
 * there are none (a removal that failed earlier, for lack of memory, is
 * retried here; remove_current_site() re-checks under mmap_lock).
 */
static __always_inline bool run_handlers(struct uprobe *uprobe,
					 struct pt_regs *regs,
					 bool *want_return, bool *seen)
{
	struct uprobe_consumer *uc;
	bool remove = true, many;
	int rc;

	*want_return = false;
	*seen = false;
	/*
	 * A hit happens on one CPU: consumers that count per CPU (perf
	 * events bound to a CPU, each with its own consumer) must all see
	 * the same one, or a migration between two of them counts the hit
	 * twice or not at all. The handlers may still sleep. A lone
	 * consumer needs no such care (one that joins meanwhile may or may
	 * not see this hit, as with any hit racing a registration).
	 */
	many = !consumers_single(&uprobe->consumers);
	if (many)
		migrate_disable();
	list_for_each_entry_srcu(uc, &uprobe->consumers, node,
				 srcu_read_lock_held(&uprobes_srcu)) {
		rc = uc->handler ? uc->handler(uc, regs) : 0;
		WARN_ON_ONCE(rc & ~UPROBE_HANDLER_MASK);
		remove &= rc == UPROBE_HANDLER_REMOVE;
		*want_return |= !!uc->ret_handler;
		*seen = true;
	}
	if (many)
		migrate_enable();
	return remove;
}

/*
 * Where a hit that no consumer saw is counted: nowhere visible. Such a hit
 * raced with the last unregister; counting it in the probe would make its
 * statistics disagree with its consumers' own counts.
 */
static DEFINE_PER_CPU(struct uprobe_stats, unseen_hits);

/*
 * Allocate @uprobe's counters at its first hit; without memory, that hit
 * goes uncounted.
 */
noinline struct uprobe_stats __percpu *alloc_stats(struct uprobe *uprobe)
{
	struct uprobe_stats __percpu *counts, *old;

	counts = alloc_percpu(struct uprobe_stats);
	if (!counts)
		return &unseen_hits;
	/* Zeroed counters first: pairs with READ_ONCE() in probe_stats(). */
	old = cmpxchg(&uprobe->stats, NULL, counts);
	if (old) {		/* another hit was first */
		free_percpu(counts);
		return old;
	}
	return counts;
}

/*
 * Remove the site at @vaddr from current's mm: all handlers asked (unless
 * a consumer still wants the mm), or, @force, the probed instruction
 * cannot run in this task (no slot, or no plan for its CPU mode), where
 * keeping the breakpoint would trap for ever.
 */
static void remove_current_site(struct uprobe *uprobe, unsigned long vaddr,
				bool force)
{
	struct mm_struct *mm = current->mm;
	struct uprobe_site *site;
	int idx;

	mmap_write_lock(mm);
	idx = srcu_read_lock(&uprobes_srcu);
	if (force || !consumers_want_mm(uprobe, UPROBE_FILTER_UNREGISTER, mm)) {
		site = xa_load(&uprobes_mm_locked(mm)->sites, vaddr);
		if (site && site->uprobe == uprobe)
			remove_site(mm, site);
	}
	srcu_read_unlock(&uprobes_srcu, idx);
	mmap_write_unlock(mm);
}

/*
 * The slow path of finding the probe behind the breakpoint at @bp, after VMA
 * changes: re-validate a detached site, settle one whose text is gone, or
 * adopt a breakpoint whose page mremap() moved (its detached site moves along).
 * Returns the probe with a reference, *@debugger set if a debugger's
 * breakpoint is over ours, or NULL; then *@foreign says whether a
 * breakpoint that is not ours is still there. Called outside uprobes_srcu:
 * it waits for the mmap_lock.
 */
static struct uprobe *find_hit_slow(struct mm_struct *mm,
				    struct uprobes_mm *um, unsigned long bp,
				    bool *foreign, bool *debugger)
{
	struct uprobe *uprobe = NULL, *found;
	struct vm_area_struct *vma;
	struct uprobe_site *site;
	unsigned long index;
	loff_t off;

	mmap_write_lock(mm);
	vma = vma_lookup(mm, bp);
	site = xa_load(&um->sites, bp);
	if (site) {
		if (!site->detached || (vma && site_still_there(site, vma))) {
			WRITE_ONCE(site->detached, false);
			*debugger = debugger_bp(site);
			uprobe = site->uprobe;
			goto unlock;
		}
		forget_site(mm, site, true);	/* its text went away */
	}
	if (!vma || !vma->vm_file)
		goto not_ours;
	off = ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + (bp - vma->vm_start);
	found = find_uprobe(file_inode(vma->vm_file), off);
	if (!found)
		goto not_ours;
	if (bp_still_there(found, vma, bp)) {
		xa_for_each(&um->sites, index, site) {
			if (site->uprobe != found || !site->detached)
				continue;
			if (xa_reserve(&um->sites, bp, GFP_KERNEL)) {
				/* No memory: the task traps here again. */
				put_uprobe(found);
				goto unlock;
			}
			hot_del(mm, um, site);
			xa_erase(&um->sites, index);
			retire_slot(mm, index);
			WRITE_ONCE(site->vaddr, bp);
			site->xol_slot = 0;
			site->detached = false;
			/* Into the reserved entry: cannot fail. */
			xa_store(&um->sites, bp, site, GFP_KERNEL);
			hot_add(mm, um, site);
			uprobe = found;	/* the site holds a reference */
			*debugger = debugger_bp(site);
			break;
		}
	}
	put_uprobe(found);
	if (uprobe)
		goto unlock;
not_ours:
	/* Unreadable: let the kernel decide (SIGTRAP), never trap again. */
	*foreign = trap_at(mm, bp, is_trap_insn) != 0;
unlock:
	/* A site holds a reference while we hold the mmap_lock. */
	if (uprobe)
		get_uprobe(uprobe);
	mmap_write_unlock(mm);
	return uprobe;
}

/*
 * Leave @g's read section for a reference on @uprobe. False if the probe
 * is going away (no site holds it any more, so its breakpoint is gone).
 */
bool hit_hold(struct uprobe *uprobe, struct hit_guard *g)
{
	if (!g->ref) {
		if (!get_uprobe(uprobe))
			return false;
		g->ref = true;
	}
	if (g->srcu) {
		/* Seen by uprobe_stats_settled() once the grace period ends. */
		if (!g->counting) {
			atomic_inc(&uprobe->held_hits);
			g->counting = true;
		}
		srcu_read_unlock(&uprobes_srcu, g->idx);
		g->srcu = false;
	}
	return true;
}

/* Enter a read section again, for what must not outlive one (slots). */
static void hit_enter(struct hit_guard *g)
{
	if (!g->srcu) {
		g->idx = srcu_read_lock(&uprobes_srcu);
		g->srcu = true;
	}
}

/* The hit is over: leave the read section, drop the reference. */
static __always_inline void hit_end(struct uprobe *uprobe, struct hit_guard *g)
{
	if (g->srcu)
		srcu_read_unlock(&uprobes_srcu, g->idx);
	/* Its counts before: pairs with uprobe_stats_settled(). */
	if (g->counting)
		atomic_dec_return_release(&uprobe->held_hits);
	if (g->ref)
		put_uprobe(uprobe);
	g->srcu = false;
	g->ref = false;
	g->counting = false;
}

/*
 * The probe behind the breakpoint at @bp: an attached site, else the slow path
 * (after VMA changes), with *@debugger set if a debugger's breakpoint is over
 * ours; NULL if none, and then *@foreign says whether a breakpoint that is not
 * ours is there. Called in @g's read section; a probe found by the slow path
 * is held by a reference, and the read section entered again.
 *
 * A site still pending (install_site() holds the mmap_lock for write) or
 * a miss is looked at again with the writers out, outside the read
 * section: the install is then done or undone, and a miss is a probe
 * removed since the trap (the task restarts at the restored instruction)
 * or a foreign breakpoint (it is still there, or the text cannot be read:
 * the kernel decides, SIGTRAP).
 */
static __always_inline struct uprobe *find_hit(struct mm_struct *mm,
					       struct uprobes_mm *um,
					       unsigned long bp, bool *foreign,
					       unsigned int *slot,
					       bool *debugger,
					       struct hit_guard *g)
{
	struct uprobe *uprobe = NULL;
	struct uprobe_site *site;

	*foreign = false;
	*debugger = false;
	*slot = 0;
	rcu_read_lock();
	site = site_lookup(um, bp);
	if (site && !READ_ONCE(site->detached) && !READ_ONCE(site->pending)) {
		uprobe = site->uprobe;	/* freed only after uprobes_srcu */
		*slot = READ_ONCE(site->xol_slot);
		*debugger = debugger_bp(site);
	}
	rcu_read_unlock();
	if (uprobe)
		return uprobe;

	srcu_read_unlock(&uprobes_srcu, g->idx);
	g->srcu = false;
	if (READ_ONCE(um->vmas_changed)) {
		uprobe = find_hit_slow(mm, um, bp, foreign, debugger);
		goto found;
	}
	mmap_read_lock(mm);
	if (READ_ONCE(um->vmas_changed)) {
		mmap_read_unlock(mm);
		uprobe = find_hit_slow(mm, um, bp, foreign, debugger);
		goto found;
	}
	rcu_read_lock();
	site = site_lookup(um, bp);
	if (site && !site->detached && !site->pending) {
		/* The site holds a reference while we hold the mmap_lock. */
		uprobe = get_uprobe(site->uprobe);
		*slot = site->xol_slot;
		*debugger = debugger_bp(site);
	}
	rcu_read_unlock();
	if (!uprobe)
		*foreign = trap_at(mm, bp, is_trap_insn) != 0;
	mmap_read_unlock(mm);
found:
	if (uprobe) {
		g->ref = true;
		hit_enter(g);
	}
	return uprobe;
}

/*
 * The user address of the XOL slot for @uprobe at @vaddr, filled, in
 * @g's read section, with *@slot its index (a hint on entry), or 0 if
 * there is none. A slot that the hint finds needs no wait; anything else
 * (mapping the XOL area, filling a slot, waiting for retired slots' grace
 * period) is done holding a reference instead, and the slot is then
 * checked again in a new read section: a slot is reused only a grace
 * period after it was retired, and only if no task's ip is in it, so a
 * task must find it and have its ip set to it in one read section.
 */
static unsigned long hit_slot(struct mm_struct *mm, struct uprobe *uprobe,
			      unsigned long vaddr, unsigned int *slot,
			      struct hit_guard *g)
{
	struct xol_area *area = xol_area_of(mm);
	unsigned int hint = *slot;
	unsigned long slot_addr;
	bool wait;

	if (g->srcu && area && slot_is(area, *slot, uprobe, vaddr)) {
		smp_rmb();	/* the recipe after its owner: see smp_wmb() */
		return slot_vaddr(area, *slot);
	}
	for (;;) {
		if (!hit_hold(uprobe, g))
			return 0;
		slot_addr = get_slot(mm, uprobe, vaddr, slot, &wait);
		if (unlikely(wait)) {
			synchronize_srcu(&uprobes_srcu);
			continue;
		}
		if (!slot_addr)
			return 0;
		hit_enter(g);
		area = xol_area_of(mm);
		if (slot_is(area, *slot, uprobe, vaddr))
			break;
	}
	smp_rmb();	/* the recipe after its owner: see smp_wmb() */
	if (*slot != hint)
		cache_slot(mm, uprobe, vaddr, *slot);
	return slot_addr;
}

/*
 * Carry out an emulated instruction for a hit (arch_uprobe_skip_sstep()).
 * In the read section a fault on user memory is not taken: the emulation
 * then declines, and the instruction runs from its slot (every emulated
 * instruction can), where the fault is the program's own, in user mode.
 */
static __always_inline bool hit_emulate(struct uprobe *uprobe,
					struct pt_regs *regs,
					struct hit_guard *g)
{
	bool done;

	if (!g->srcu)
		return arch_uprobe_skip_sstep(&uprobe->arch, regs);
	pagefault_disable();
	done = arch_uprobe_skip_sstep(&uprobe->arch, regs);
	pagefault_enable();
	return done;
}

/*
 * The site at @bp was hit: through its breakpoint (@stub false: the trap's
 * ip is in @regs), or through its jump and stub (@stub true). Handle it if
 * it is ours (a probe, or for a breakpoint, a return through the XOL
 * trampoline). Process context, interrupts on; may sleep, but not in the
 * read section of uprobes_srcu (see "The hit path and uprobes_srcu").
 */
static __always_inline bool hit_at(struct pt_regs *regs,
				   unsigned long bp, bool stub)
{
	unsigned long slot_addr, trap_ip;
	struct mm_struct *mm = current->mm;
	struct uprobes_mm *um;
	unsigned int slot, hint;
	struct uprobe_stats __percpu *stats;
	struct uprobe_task *utask;
	struct uprobe *uprobe;
	struct hit_guard g = { .srcu = true };
	bool remove, want_return, foreign, seen, debugger;

	if (!stub && is_return_trap(mm, bp, &slot_addr)) {
		uprobe_handle_return(regs, arch_uretprobe_trap(slot_addr, regs));
		return true;
	}
	um = uprobes_mm_of(mm);	/* ours: freed only once mm has no users */
	if (!um)
		return false;
	utask = get_utask();	/* allocated outside the read section */

	g.idx = srcu_read_lock(&uprobes_srcu);
	uprobe = find_hit(mm, um, bp, &foreign, &hint, &debugger, &g);
	if (!uprobe || (stub && debugger)) {
		if (uprobe)
			hit_end(uprobe, &g);
		else if (g.srcu)
			srcu_read_unlock(&uprobes_srcu, g.idx);
		if (foreign && !stub)
			return false;	/* somebody else's breakpoint */
		/*
		 * Gone meanwhile: run what is there now. From a stub, that is
		 * also how a debugger's breakpoint written since is reached.
		 */
		instruction_pointer_set(regs, bp);
		return true;
	}
	/* Whatever happens next starts at the probed instruction. */
	trap_ip = instruction_pointer(regs);
	instruction_pointer_set(regs, bp);
	/* A conditional instruction whose condition fails: skipped. */
	if (!debugger && arch_uprobe_ignore(&uprobe->arch, regs))
		goto out;
	if (!utask) {
		this_cpu_inc(probe_stats(uprobe)->missed);
		goto out_debugger;
	}
	/*
	 * The debugger that was told of this hit resumes the task at the
	 * instruction: it runs without the handlers, which ran then.
	 */
	if (unlikely(utask->debugger_vaddr)) {
		bool again = !debugger && utask->debugger_vaddr == bp;

		utask->debugger_vaddr = 0;
		if (again) {
			stats = &unseen_hits;
			goto run_insn;
		}
	}

	utask->auprobe = &uprobe->arch;
	remove = run_handlers(uprobe, regs, &want_return, &seen);
	/*
	 * The instruction runs next: ip and sp move, and the perf callchain
	 * code, which reads ->auprobe from interrupts on this CPU to find a
	 * function's caller at [sp] while its first instruction waits, must
	 * not see it then. It is set again for a step.
	 */
	WRITE_ONCE(utask->auprobe, NULL);
	barrier();
	/*
	 * The hit is counted in the read section, so counts read after
	 * uprobe_unregister()'s wait are complete; how it was carried out
	 * (emulated, boosted, stepped) is counted later for a hit that left
	 * the read section for a reference.
	 */
	stats = seen ? probe_stats(uprobe) : &unseen_hits;
	this_cpu_inc(stats->hits);
	/*
	 * Taking over the return address is done here if it needs neither a
	 * fault nor a wait; what does, and removing the site, which waits for
	 * the mmap_lock, are done out of the read section.
	 */
	if (remove || (want_return &&
		       !prepare_return(uprobe, regs, utask, true))) {
		if (!hit_hold(uprobe, &g))
			goto gone;
		if (remove)
			remove_current_site(uprobe, bp, false);
		if (want_return)
			prepare_return(uprobe, regs, utask, false);
	}
	if (instruction_pointer(regs) != bp)
		goto done;		/* a handler moved the task on */
	if (unlikely(debugger)) {
		/* The debugger steps the instruction, or has us run it. */
		this_cpu_inc(stats->stepped);
		utask->debugger_vaddr = bp;
		goto out_debugger;
	}
run_insn:
	if (hit_emulate(uprobe, regs, &g)) {
		this_cpu_inc(stats->emulated);
		goto done;
	}

	slot = hint;
	slot_addr = hit_slot(mm, uprobe, bp, &slot, &g);
	/* From here to the return to user mode: in the read section. */
	/* A pending signal waits for the step: it must see the insn done. */
	if (slot_addr && READ_ONCE(uprobe_boost) && !task_sigpending(current) &&
	    arch_uprobe_boost(&uprobe->arch, regs, slot_addr)) {
		this_cpu_inc(stats->boosted);
		goto done;
	}
	if (!slot_addr || !get_uprobe(uprobe)) {
		if (!g.ref)
			goto gone;	/* no reference to be had: it is going */
		this_cpu_inc(stats->missed);
		pr_notice_ratelimited("uprobes: %s[%d]: no XOL slot for %#lx: removing the probe from this process\n",
				      current->comm, task_pid_nr(current), bp);
		if (hit_hold(uprobe, &g))
			remove_current_site(uprobe, bp, true);
		goto done;
	}
	utask->active = uprobe;
	utask->auprobe = &uprobe->arch;
	utask->vaddr = bp;
	utask->xol_vaddr = slot_addr;
	/* Its user accesses, if any, must not fault in the read section. */
	pagefault_disable();
	if (arch_uprobe_pre_xol(&uprobe->arch, regs)) {
		pagefault_enable();
		utask->active = NULL;
		utask->auprobe = NULL;
		this_cpu_inc(stats->missed);
		put_uprobe(uprobe);
		pr_notice_ratelimited("uprobes: %s[%d]: cannot step the instruction at %#lx in this mode: removing the probe from this process\n",
				      current->comm, task_pid_nr(current), bp);
		if (hit_hold(uprobe, &g))
			remove_current_site(uprobe, bp, true);
		goto done;
	}
	pagefault_enable();
	utask->state = UTASK_SSTEP;
	this_cpu_inc(stats->stepped);
	hit_end(uprobe, &g);
	return true;

done:
	utask->auprobe = NULL;
out:
	if (!stub && unlikely(jump_sites_on()))
		make_jump_site(uprobe, bp, regs, &g);
	hit_end(uprobe, &g);
	return true;

gone:
	/* No site holds the probe: its breakpoint is gone, run what is there. */
	utask->auprobe = NULL;
	instruction_pointer_set(regs, bp);
	hit_end(uprobe, &g);
	return true;

out_debugger:
	hit_end(uprobe, &g);
	if (!debugger)
		return true;
	/* The debugger's breakpoint: its SIGTRAP, as if ours were not there. */
	instruction_pointer_set(regs, trap_ip);
	return false;
}

/*
 * The breakpoint at uprobe_get_swbp_addr() trapped: handle it if it is
 * ours (a probe, or a return through the XOL trampoline). Process context,
 * interrupts on; may sleep.
 */
static bool handle_hit(struct pt_regs *regs)
{
	return hit_at(regs, uprobe_get_swbp_addr(regs), false);
}

/**
 * uprobe_stub_hit - a task came to the kernel through a stub
 * @regs: the user registers as the breakpoint of the site would have
 *	shown them (but ip)
 * @vaddr: the site's address, from uprobe_stub_site()
 *
 * Called by the architecture's entry from a stub, in process context: runs
 * the hit as the breakpoint's trap would have, and leaves in @regs where
 * the task goes next (the instruction done, a slot to finish it in, a
 * handler's choice, or @vaddr itself if the probe went away meanwhile).
 */
void uprobe_stub_hit(struct pt_regs *regs, unsigned long vaddr)
{
	if (!hit_at(regs, vaddr, true))
		instruction_pointer_set(regs, vaddr);
}

/* Signals held back during the step may be delivered now. */
static void release_signals(void)
{
	spin_lock_irq(&current->sighand->siglock);
	recalc_sigpending();
	spin_unlock_irq(&current->sighand->siglock);
}

/* Leave the step: undo it if @abort, drop the stepping reference. */
static void end_step(struct uprobe_task *utask, struct pt_regs *regs,
		     bool abort)
{
	struct uprobe *uprobe = utask->active;

	if (abort)
		arch_uprobe_abort_xol(&uprobe->arch, regs);
	utask->state = UTASK_RUNNING;
	utask->active = NULL;
	utask->auprobe = NULL;
	put_uprobe(uprobe);
}

/* The step of the instruction copy ended: fix up, or abort after a fault. */
static void finish_step(struct uprobe_task *utask, struct pt_regs *regs)
{
	struct uprobe *uprobe = utask->active;
	int ret = -EFAULT;

	if (!arch_uprobe_xol_was_trapped(current))
		ret = arch_uprobe_post_xol(&uprobe->arch, regs);
	if (ret == -EAGAIN) {
		/* A rep string copy runs on untraced; its guard breakpoint ends it. */
		utask->state = UTASK_SSTEP;
		return;
	}
	end_step(utask, regs, ret != 0);
	if (utask->signals_held) {
		utask->signals_held = false;
		release_signals();
	}
}

/**
 * uprobe_notify_resume - the deferred part of a hit or of a step
 * @regs: the user registers about to be restored
 *
 * Runs on the way back to user mode with TIF_UPROBE set, in process
 * context: may sleep, fault and allocate. It ends a step
 * (uprobe_post_sstep_notifier()) or handles a breakpoint hit
 * (uprobe_pre_sstep_notifier()); a breakpoint that is not ours gets the
 * SIGTRAP it would have had.
 */
void uprobe_notify_resume(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	clear_thread_flag(TIF_UPROBE);
	if (utask && utask->state == UTASK_SSTEP_ACK)
		finish_step(utask, regs);
	else if ((!utask || utask->state == UTASK_RUNNING) &&
		 !handle_hit(regs))
		force_sig(SIGTRAP);
}

/*
 * A signal is about to be delivered to current: if it is inside a stub,
 * put it back at the site as the program had it (see "Jump sites").
 */
static void leave_stub(struct pt_regs *regs)
{
	unsigned long ip = instruction_pointer(regs);
	unsigned long vaddr;

	if (!user_mode(regs))	/* an io_uring worker's: it never returns */
		return;
	vaddr = stub_site_at(ip);
	if (vaddr)
		arch_uprobe_leave_stub(regs, stub_start(ip), vaddr);
}

/**
 * uprobe_rseq_ip - where current is in its program, for rseq
 * @regs: current's user registers, on the way back to user mode
 *
 * rseq aborts a critical section that a preemption, a migration or a
 * signal interrupted if the task's ip is inside it. A task running our
 * code for a probe in such a section is, for the program, at the probe:
 * one inside a stub is put back at its site first (leave_stub(), as
 * before a signal); one in a boosted copy stands at the probed instruction
 * while the copy has not run, at the next one once it has. Either may
 * then be sent to the section's abort handler: neither leaves state of
 * ours behind. A task stepping a copy is at the probed instruction too
 * (its step ends with a trap right after the copy ran; a rep string copy
 * running on untraced may have done part of its work, as the instruction
 * itself interrupted there would have); sending it elsewhere takes
 * uprobe_rseq_abort() first.
 *
 * Context: process context, on the way back to user mode, with a critical
 * section registered (rseq's resume work); may fault.
 *
 * Return: current's address in its program, for the critical-section
 * check.
 */
unsigned long uprobe_rseq_ip(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	unsigned long ip, vaddr, resume;
	unsigned int slot;

	leave_stub(regs);
	ip = instruction_pointer(regs);
	if (!current->mm)
		return ip;
	if (utask && utask->state == UTASK_SSTEP)
		return utask->vaddr;
	if (utask && utask->state != UTASK_RUNNING)
		return ip;
	resume = boosted_resume(current->mm, ip, &vaddr, &slot);
	return resume ? resume : ip;
}

/**
 * uprobe_rseq_abort - rseq sends current to a critical section's abort handler
 * @regs: current's user registers, on the way back to user mode
 *
 * Called after uprobe_rseq_ip() placed current inside the section, before
 * rseq moves it: a step of a copy in progress is undone and ended (as for
 * a fault of the copy), so that the task runs on from the handler without
 * our trap flag, and signals held back for the step are let through; a
 * task in a boosted copy gets back what the boost changed besides ip.
 *
 * Context: process context, on the way back to user mode.
 */
void uprobe_rseq_abort(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (!utask)
		return;
	if (utask->state == UTASK_RUNNING && current->mm &&
	    boosted_vaddr(current->mm, instruction_pointer(regs), NULL))
		arch_uprobe_boost_leave(regs);
	if (utask->state != UTASK_SSTEP)
		return;
	end_step(utask, regs, true);
	if (utask->signals_held) {
		utask->signals_held = false;
		release_signals();
	}
}

/**
 * uprobe_deny_signal - hold signals back while an instruction copy runs
 *
 * A signal frame must never capture the XOL slot's address or our TF. A
 * fault of the copy itself aborts the step so that the signal reports the
 * original address; fatal signals are never held. A task in a boosted slot
 * is moved out of it first (leave_boosted_slot()), one inside a stub back
 * to its site (leave_stub()).
 *
 * Return: true to postpone signal delivery.
 */
bool uprobe_deny_signal(void)
{
	struct uprobe_task *utask = current->utask;
	struct pt_regs *regs = task_pt_regs(current);

	leave_stub(regs);
	if (!utask)
		return false;
	if (utask->state != UTASK_SSTEP &&
	    (utask->state != UTASK_RUNNING || !leave_boosted_slot(utask, regs)))
		return false;
	if (arch_uprobe_xol_was_trapped(current) ||
	    __fatal_signal_pending(current)) {
		end_step(utask, regs, true);
		utask->signals_held = false;	/* get_signal() recalculates */
		return false;
	}
	clear_thread_flag(TIF_SIGPENDING);
	utask->signals_held = true;
	return true;
}
