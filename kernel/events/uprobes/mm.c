// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: the mm hooks: mmap, munmap, mremap, fork, exec and exit.
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

/*
 * Detached sites of @mm: re-attach those whose breakpoint is still where their
 * mapping shows their offset (the VMA was split or merged), forget the
 * others (their text went away: unmapped, truncated, replaced) and drop
 * their counters, so that a dead site neither holds a +1 for a copy of
 * the data that is gone nor pins its probe. Runs before anything in @mm
 * raises a counter (install_site(), uprobe_mmap()).
 */
void settle_dead(struct mm_struct *mm)
{
	struct uprobes_mm *um = uprobes_mm_locked(mm);
	struct vm_area_struct *vma;
	struct uprobe_site *site;
	unsigned long index;

	mmap_assert_write_locked(mm);
	if (!um || !READ_ONCE(um->vmas_changed) || um->moving)
		return;
	xa_for_each(&um->sites, index, site) {
		if (!site->detached)
			continue;
		vma = vma_lookup(mm, site->vaddr);
		if (vma && site_still_there(site, vma))
			WRITE_ONCE(site->detached, false);
		else
			forget_site(mm, site, true);
	}
}

/* Why a mapping, or (@err) an install, refused a breakpoint. */
static const char *refusal_reason(struct vm_area_struct *vma, int err)
{
	switch (err) {
	case 0:
		return vma->vm_flags & VM_MAYSHARE ? "shared mapping" :
		       vma->vm_flags & VM_WRITE ? "writable mapping" :
		       is_vm_hugetlb_page(vma) ? "hugetlb mapping" :
						 "special mapping";
	case -EBUSY:
		return "its copy of the instruction was changed";
	case -ERANGE:
		return "its SDT counter is full";
	case -EXDEV:
		return "its page is not the file's";
	case -ENOSPC:
		return "its memory cgroup is full";
	case -EFAULT:
		return "its text cannot be read";
	case -EOPNOTSUPP:
		return "the probe cannot run in its CPU mode";
	case -ENOMEM:
		return "out of memory";
	default:
		return "cannot patch it";
	}
}

/*
 * Say why @uprobe stays out of @vma (@err: the install's error, 0 for
 * the mapping itself), naming the process that owns the mm (a
 * registration walk runs in another task). Rate-limited.
 */
void report_refused(struct vm_area_struct *vma, struct uprobe *uprobe,
		    int err)
{
	static DEFINE_RATELIMIT_STATE(rs, DEFAULT_RATELIMIT_INTERVAL,
				      DEFAULT_RATELIMIT_BURST);
	struct task_struct *p, *t;
	char comm[TASK_COMM_LEN] = "?";
	pid_t pid = 0;

	if (!__ratelimit(&rs))
		return;
	rcu_read_lock();
	if (current->mm == vma->vm_mm) {	/* mmap(): the usual case */
		t = current;
		goto found;
	}
	for_each_process_thread(p, t) {
		if (READ_ONCE(t->mm) == vma->vm_mm)
			goto found;
	}
	t = NULL;
found:
	if (t) {
		get_task_comm(comm, t);
		pid = task_tgid_nr(t);
	}
	rcu_read_unlock();
	pr_notice("uprobes: %s[%d]: not probing %pD at %#llx: %s (%d)\n",
		  comm, pid, vma->vm_file, uprobe->offset, refusal_reason(vma, err),
		  err);
}

/* Install the probes of @ui that fall inside @vma and are wanted there. */
static void install_wanted(struct uprobe_inode *ui, struct vm_area_struct *vma)
{
	loff_t first = (loff_t)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long last = first + (vma->vm_end - vma->vm_start) - 1;
	unsigned long index = first;
	struct uprobe *uprobe, *found;
	bool want;
	int idx, err;

	for (;;) {
		rcu_read_lock();
		/* Moves @index to the probe found; leaves it alone if none. */
		found = xa_find(&ui->probes, &index, last, XA_PRESENT);
		uprobe = found ? get_uprobe(found) : NULL;
		rcu_read_unlock();
		if (!found)
			break;
		if (uprobe) {
			idx = srcu_read_lock(&uprobes_srcu);
			want = consumers_want_mm(uprobe, UPROBE_FILTER_MMAP, vma->vm_mm);
			srcu_read_unlock(&uprobes_srcu, idx);
			/*
			 * Pairs with list_add_rcu() of the consumer seen: the
			 * counter offset it was registered with is visible.
			 */
			smp_rmb();
			if (want && !vma_can_probe(vma)) {
				if (vma->vm_flags & VM_EXEC)
					report_refused(vma, uprobe, 0);
			} else if (want) {
				err = install_site(uprobe, vma,
						   offset_to_vaddr(vma,
								   uprobe->offset));
				if (err)
					report_refused(vma, uprobe, err);
			}
			put_uprobe(uprobe);
		}
		if (index >= last)
			break;
		index++;
	}
}

/* Counters of this mm's sites that live in @vma and were not raised yet. */
static void apply_pending_ref_ctrs(struct mm_struct *mm,
				   struct vm_area_struct *vma)
{
	struct uprobes_mm *um = uprobes_mm_locked(mm);
	struct inode *inode = file_inode(vma->vm_file);
	struct uprobe_site *site;
	unsigned long index;

	if (!um || !(vma->vm_flags & VM_WRITE) || (vma->vm_flags & VM_MAYSHARE))
		return;
	xa_for_each(&um->sites, index, site) {
		struct uprobe *uprobe = site->uprobe;

		if (site->ref_ctr_done || site->detached || site->pending ||
		    !uprobe->ref_ctr_offset ||
		    !vma_maps_offset(vma, inode, uprobe->ref_ctr_offset) ||
		    ctr_holder_site(mm, uprobe, site, true))
			continue;
		if (!update_ref_ctr(uprobe, mm, 1, false))
			site->ref_ctr_done = true;
	}
}

/**
 * uprobe_mmap - a file-backed VMA appeared or changed its bounds
 * @vma: the VMA; its mm's mmap_lock is held for write
 *
 * Installs the wanted probes of the file that fall inside @vma, raises the
 * counters of existing sites that now became reachable, and re-attaches
 * or settles sites that uprobe_munmap() detached. Safe to call any number
 * of times for the same range.
 *
 * Return: 0 (errors only leave a probe out of this mapping).
 */
int uprobe_mmap(struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_inode *ui;
	struct uprobes_mm *um;

	if (!vma->vm_file)
		return 0;
	mmap_assert_write_locked(mm);
	um = uprobes_mm_locked(mm);
	if (um && um->moving)
		return 0;	/* uprobe_end_move() does it */
	settle_dead(mm);
	ui = find_uprobe_inode(file_inode(vma->vm_file));
	if (!ui)
		return 0;
	install_wanted(ui, vma);
	apply_pending_ref_ctrs(mm, vma);
	put_uprobe_inode(ui);
	return 0;
}

/**
 * uprobe_start_move - mremap() is about to move part of @vma
 * @vma: the source VMA; its mm's mmap_lock is held for write
 *
 * mremap() creates (or merges) the destination VMA, which calls
 * uprobe_mmap(), before it moves the page tables there. Patching or
 * reading the destination then would fault pages in that the moved page
 * table entries overwrite: an orphaned page ("Bad rss-counter state") and
 * a lost breakpoint or counter. So uprobe_mmap() waits for uprobe_end_move().
 * The jumps of the range are taken out first: a relative jump moved
 * elsewhere would lead astray.
 *
 * Return: 0, or -ENOMEM if a jump could not be taken out (no memory for a
 * copy of a page that another mm shares): mremap() fails, nothing moved.
 */
int uprobe_start_move(struct vm_area_struct *vma)
{
	struct uprobe_inode *ui;
	struct uprobes_mm *um;

	mmap_assert_write_locked(vma->vm_mm);
	if (!vma->vm_file)
		return 0;
	um = uprobes_mm_locked(vma->vm_mm);
	if (!um) {
		ui = find_uprobe_inode(file_inode(vma->vm_file));
		if (!ui)
			return 0;	/* nothing of this file is probed */
		put_uprobe_inode(ui);
		um = get_uprobes_mm(vma->vm_mm);
		if (!um)
			return 0;
	}
	if (undo_jumps(vma->vm_mm, um, vma->vm_start, vma->vm_end))
		return -ENOMEM;
	um->moving = true;
	return 0;
}

/*
 * mremap() moved [@old_addr, @old_addr + @len) of @mm to @new_addr with its
 * page tables: our breakpoints there went along, and so do their sites, before
 * the source is unmapped. Nothing is without its site in between, and a
 * removal that runs after the move finds each site where its breakpoint is.
 * A site that cannot be moved (no memory for its new slot) stays behind,
 * detached, and the hit path adopts the breakpoint it left (find_hit_slow()).
 */
static void move_sites(struct mm_struct *mm, struct uprobes_mm *um,
		       unsigned long old_addr, unsigned long new_addr,
		       unsigned long len)
{
	struct uprobe_site *site, *stale;
	unsigned long index, to;

	mmap_assert_write_locked(mm);
	xa_for_each_range(&um->sites, index, site, old_addr,
			  old_addr + len - 1) {
		to = new_addr + (index - old_addr);
		/* A site left at the destination lost its text to the move. */
		stale = xa_load(&um->sites, to);
		if (stale)
			forget_site(mm, stale, true);
		if (xa_reserve(&um->sites, to, GFP_KERNEL)) {
			WRITE_ONCE(site->detached, true);
			WRITE_ONCE(um->vmas_changed, true);
			continue;
		}
		hot_del(mm, um, site);
		xa_erase(&um->sites, index);
		retire_slot(mm, index);
		WRITE_ONCE(site->vaddr, to);
		site->xol_slot = 0;
		/* Into the reserved entry: cannot fail. */
		xa_store(&um->sites, to, site, GFP_KERNEL);
		hot_add(mm, um, site);
	}
}

/**
 * uprobe_end_move - mremap() moved the page tables (or gave up)
 * @vma: the source VMA
 * @new: the destination VMA, or NULL if the move failed and was undone
 * @old_addr: start of the moved range in @vma
 * @new_addr: where it is now, in @new
 * @len: its length
 *
 * Moves the sites of the range with their breakpoints, then does what
 * uprobe_mmap() left for now that the destination holds the moved entries.
 */
void uprobe_end_move(struct vm_area_struct *vma, struct vm_area_struct *new,
		     unsigned long old_addr, unsigned long new_addr,
		     unsigned long len)
{
	struct uprobes_mm *um = uprobes_mm_locked(vma->vm_mm);

	mmap_assert_write_locked(vma->vm_mm);
	if (!um || !um->moving)
		return;
	if (new && len)
		move_sites(vma->vm_mm, um, old_addr, new_addr, len);
	um->moving = false;
	if (new)
		uprobe_mmap(new);
}

/**
 * uprobe_munmap - [@start, @end) of @vma is going away or being redrawn
 * @vma: a file-backed VMA
 * @start: first address
 * @end: end of the range (exclusive)
 *
 * Called with various locks held (on truncation: only i_mmap_rwsem and a
 * page lock) and for splits whose page tables stay, so it only marks the
 * sites in the range detached; uprobe_mmap() or the next walk decides.
 */
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end)
{
	struct uprobe_site *site;
	struct uprobes_mm *um;
	unsigned long index;

	if (start >= end)
		return;
	/*
	 * Truncation gets here holding no lock of the mm, maybe while its
	 * last user frees the table (uprobe_clear_state()), and a site
	 * being removed concurrently is freed only after RCU.
	 */
	rcu_read_lock();
	um = uprobes_mm_of(vma->vm_mm);
	if (!um)
		goto unlock;
	xa_for_each_range(&um->sites, index, site, start, end - 1) {
		WRITE_ONCE(site->detached, true);
		WRITE_ONCE(um->vmas_changed, true);
	}
unlock:
	rcu_read_unlock();
}

/**
 * uprobe_start_dup_mmap - fork is about to copy an address space
 *
 * Keeps out a walk that gave up on optimistic passes (sync_maps_locked())
 * until uprobe_end_dup_mmap().
 */
void uprobe_start_dup_mmap(void)
{
	percpu_down_read(&dup_mmap_sem);
}

/**
 * uprobe_end_dup_mmap - the copy started by uprobe_start_dup_mmap() is done
 */
void uprobe_end_dup_mmap(void)
{
	percpu_up_read(&dup_mmap_sem);
}

/**
 * uprobe_dup_mmap_done - fork has copied @oldmm
 * @oldmm: the parent's mm, whose mmap_lock is still held for write
 *
 * The copy's mappings are in the files' mapping trees now: a walk that
 * collected @oldmm before that sees the count change when it takes the
 * mmap_lock, and goes again to reach the copy.
 */
void uprobe_dup_mmap_done(struct mm_struct *oldmm)
{
	mmap_assert_write_locked(oldmm);
	/* Pairs with the READ_ONCE() in collect_maps(); see "Walks and fork". */
	WRITE_ONCE(oldmm->uprobes_state.forks, oldmm->uprobes_state.forks + 1);
}

/**
 * uprobe_dup_mmap - fork is about to copy @oldmm into @newmm
 * @oldmm: the parent's mm, whose mmap_lock is held for write
 * @newmm: the child's mm, still empty
 *
 * The child starts with no sites (uprobe_dup_sites() gives it those its
 * copied mappings carry) and never maps the parent's return table.
 */
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	unmap_return_table(oldmm);
	newmm->uprobes_state.sites = NULL;
}

/* The site of @uprobe in @um that is not @except and not pending, if any. */
static struct uprobe_site *other_ctr_holder(struct uprobes_mm *um,
					    struct uprobe *uprobe,
				      struct uprobe_site *except)
{
	struct uprobe_site *site;
	unsigned long index;

	xa_for_each(&um->sites, index, site) {
		if (site != except && site->uprobe == uprobe && !site->pending)
			return site;
	}
	return NULL;
}

/**
 * uprobe_dup_sites - give a forked mm the sites of its copied mappings
 * @oldmm: the parent's mm, whose mmap_lock is held for write
 * @newmm: the child's mm, its mappings copied, its mmap_lock held for write
 *
 * The child's page tables copied the parent's private breakpoint pages and its
 * counters. It gets a copy of each site whose mapping it got (not those
 * of MADV_DONTFORK mappings, whose address the child may use for other
 * code), and the +1 on a counter it inherited from a site it did not get
 * is handed to another site of that probe or taken off.
 *
 * Return: 0, or -ENOMEM: fork fails rather than leave the child a breakpoint
 * without its site.
 */
int uprobe_dup_sites(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct uprobes_mm *old_um = uprobes_mm_locked(oldmm), *um;
	struct uprobe_site *site, *copy, *heir;
	struct vm_area_struct *vma;
	unsigned long index;

	mmap_assert_write_locked(oldmm);
	mmap_assert_write_locked(newmm);
	if (!old_um || xa_empty(&old_um->sites))
		return 0;
	um = kzalloc(sizeof(*um), GFP_KERNEL);
	if (!um)
		return -ENOMEM;
	xa_init(&um->sites);
	spin_lock_init(&um->stub_lock);
	mutex_init(&um->remote_lock);
	um->vmas_changed = old_um->vmas_changed;
	/* Freed with the child if the fork fails from here on. */
	smp_store_release(&newmm->uprobes_state.sites, um);
	dup_stub_areas(newmm, um, old_um);
	xa_for_each(&old_um->sites, index, site) {
		vma = vma_lookup(newmm, index);
		if (!vma ||
		    !vma_maps_offset(vma, site->uprobe->ui->inode,
				     site->uprobe->offset) ||
		    offset_to_vaddr(vma, site->uprobe->offset) != index)
			continue;	/* the child did not get this text */
		copy = kmemdup(site, sizeof(*site), GFP_KERNEL);
		if (!copy)
			return -ENOMEM;
		site_get_uprobe(site->uprobe);
		copy->xol_slot = 0;	/* the child maps its own area */
		if (sites_insert(um, copy)) {
			site_put_uprobe(copy);
			kfree(copy);
			return -ENOMEM;
		}
		hot_cache(um, copy);	/* nobody can see newmm yet */
		if (copy->stub && dup_undo_jump(newmm, um, copy))
			return -ENOMEM;
	}
	xa_for_each(&old_um->sites, index, site) {
		if (!site->ref_ctr_done || xa_load(&um->sites, index))
			continue;
		heir = other_ctr_holder(um, site->uprobe, NULL);
		if (heir)
			heir->ref_ctr_done = true;
		else
			update_ref_ctr(site->uprobe, newmm, -1, true);
	}
	return 0;
}

/**
 * uprobe_clear_state - @mm is gone: free its uprobes state
 * @mm: the mm, with no users left
 *
 * Takes only @mm's own mmap_lock (to unmap the return table before its
 * page is freed), as exit_mmap() does after it; nothing of ours calls
 * mmput() with an mmap_lock held.
 */
void uprobe_clear_state(struct mm_struct *mm)
{
	/* No lock: nothing else uses an mm whose last user is gone. */
	struct uprobes_mm *um = mm->uprobes_state.sites;
	struct uprobe_site *site;
	unsigned long index;

	if (mm->uprobes_state.xol_area) {
		/* exit_mmap() comes later: no mapping may outlive the page. */
		mmap_write_lock(mm);
		unmap_return_table(mm);
		mmap_write_unlock(mm);
		free_xol_area(mm->uprobes_state.xol_area);
		mm->uprobes_state.xol_area = NULL;
	}
	if (!um)
		return;
	/* uprobe_munmap() by truncation may still look: freed after RCU. */
	WRITE_ONCE(mm->uprobes_state.sites, NULL);
	xa_for_each(&um->sites, index, site) {
		site_put_uprobe(site);
		call_rcu(&site->rcu, free_site_rcu);
	}
	xa_destroy(&um->sites);
	free_stub_areas(um);
	kfree_rcu_mightsleep(um);
}
