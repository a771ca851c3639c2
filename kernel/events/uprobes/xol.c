// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: the XOL area: its slots, boosted copies, and their reuse (xol_area->lock).
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

/* The owner of @slot, NULL if its page is not backed. */
struct xol_owner *slot_owner(struct xol_area *area, unsigned int slot)
{
	struct xol_owner *owners;

	if (slot >= XOL_SLOTS)
		return NULL;
	/* Pairs with smp_store_release() in grow_xol_area(). */
	owners = smp_load_acquire(&area->owners[slot / XOL_SLOTS_PER_PAGE]);
	return owners ? &owners[slot % XOL_SLOTS_PER_PAGE] : NULL;
}

/* Does @slot hold the recipe of @uprobe at @vaddr? */
bool slot_is(struct xol_area *area, unsigned int slot,
	     struct uprobe *uprobe, unsigned long vaddr)
{
	struct xol_owner *owner = slot ? slot_owner(area, slot) : NULL;

	return owner && READ_ONCE(owner->id) == uprobe->id &&
	       READ_ONCE(owner->vaddr) == vaddr;
}

/*
 * Back one more page of @area (zeroed, with its owners); false at the
 * limit or without memory. Called with @area->lock held, or before the
 * area is published.
 */
static bool grow_xol_area(struct xol_area *area)
{
	unsigned int n = area->nr_pages;
	struct xol_owner *owners;
	struct page *page;

	if (n >= XOL_MAX_PAGES)
		return false;
	owners = kcalloc(XOL_SLOTS_PER_PAGE, sizeof(*owners), GFP_KERNEL);
	page = alloc_page(GFP_HIGHUSER | __GFP_ZERO);
	if (!owners || !page) {
		kfree(owners);
		if (page)
			__free_page(page);
		return false;
	}
	/* Zeroed owners first: pairs with smp_load_acquire() in slot_owner(). */
	smp_store_release(&area->owners[n], owners);
	/*
	 * Zeroed page first, for xol_fault(); a task gets there only through
	 * a slot published later (the smp_wmb() in get_slot()).
	 */
	smp_store_release(&area->pages[n], page);
	area->nr_pages = n + 1;
	return true;
}

void free_xol_area(struct xol_area *area)
{
	int i;

	for (i = 0; i < area->nr_pages; i++) {
		put_page(area->pages[i]);
		kfree(area->owners[i]);
	}
	if (area->ret_table)
		__free_page(area->ret_table);
	xa_destroy(&area->slots);
	kfree(area);
}

/*
 * The XOL area does not move: tasks' saved ips, slots and hijacked return
 * addresses point into it, and the core keeps its address. mremap() of it
 * fails (EINVAL) and leaves it where it was.
 */
static int xol_mremap(const struct vm_special_mapping *sm,
		      struct vm_area_struct *new_vma)
{
	return -EINVAL;
}

/*
 * A page of the faulting mm's XOL area. The area is published before its
 * mapping can be faulted on (both under the mmap_lock), and it outlives
 * every fault: it is freed when the mm is torn down.
 */
static vm_fault_t xol_fault(const struct vm_special_mapping *sm,
			    struct vm_area_struct *vma, struct vm_fault *vmf)
{
	struct mm_struct *mm = vma->vm_mm;
	struct xol_area *area;
	struct page *page;

	area = xol_area_of(mm);
	if (!area || vmf->pgoff >= XOL_MAX_PAGES)
		return VM_FAULT_SIGBUS;
	/* Pairs with the smp_store_release() of a page in grow_xol_area(). */
	page = smp_load_acquire(&area->pages[vmf->pgoff]);
	if (!page)
		return VM_FAULT_SIGBUS;
	get_page(page);
	vmf->page = page;
	return 0;
}

/*
 * One special mapping for every mm's XOL area: its pages are found through
 * the mm (xol_fault()), and nothing of it is freed with an area, so the
 * mapping's vma never outlives what it points to.
 */
static const struct vm_special_mapping xol_mapping = {
	.name = "[uprobes]",
	.fault = xol_fault,
	.mremap = xol_mremap,
};

/*
 * The top of the region where current's own mmap() places mappings: the
 * mm's mmap base, or its compat one when the mm has one and current's
 * address space ends below the native base.
 */
static unsigned long mmap_top(struct mm_struct *mm)
{
	unsigned long top = mm->mmap_base;

#ifdef CONFIG_HAVE_ARCH_COMPAT_MMAP_BASES
	if (top > TASK_SIZE)
		top = mm->mmap_compat_base;
#endif
	return min(top, TASK_SIZE);
}

/*
 * Room for @len bytes within UPROBE_XOL_REACH of @near, at most @top: the
 * closest below @near's page, else the closest above it; an error value
 * if there is none.
 */
static unsigned long xol_area_near(unsigned long near, unsigned long len,
				   unsigned long top)
{
	unsigned long bottom = max_t(unsigned long, PAGE_SIZE, mmap_min_addr);
	unsigned long reach = UPROBE_XOL_REACH - PAGE_SIZE;
	struct vm_unmapped_area_info info = { .length = len };
	unsigned long addr;

	near &= PAGE_MASK;
	if (near >= top || reach < len)
		return -ENOMEM;
	info.flags = VM_UNMAPPED_AREA_TOPDOWN;
	info.low_limit = near > bottom + reach ? near - reach : bottom;
	info.high_limit = near;
	addr = vm_unmapped_area(&info);
	if (!IS_ERR_VALUE(addr))
		return addr;
	info.flags = 0;
	info.low_limit = near + PAGE_SIZE;
	info.high_limit = min(top, near + reach);
	return vm_unmapped_area(&info);
}

/*
 * Where a new XOL area of @len bytes goes in current's @mm: within the
 * reach of @near (xol_area_near()) for an architecture whose jump back
 * has one, else at the top of current's address space if that is free
 * (above the stack), else at the highest room below mmap_top(). The
 * searches are done here: from a breakpoint trap, get_unmapped_area() may
 * search the range of another ABI than current's (one picked by the
 * system call in progress), and fail. Caller holds @mm's mmap_lock for
 * writing.
 */
static unsigned long xol_area_vaddr(struct mm_struct *mm, unsigned long len,
				    unsigned long near)
{
	struct vm_unmapped_area_info info = {
		.flags = VM_UNMAPPED_AREA_TOPDOWN,
		.length = len,
		.low_limit = max_t(unsigned long, PAGE_SIZE, mmap_min_addr),
		.high_limit = mmap_top(mm),
	};
	unsigned long addr;

	mmap_assert_write_locked(mm);
	if (UPROBE_XOL_REACH && near) {
		addr = xol_area_near(near, len, mmap_top(mm));
		if (!IS_ERR_VALUE(addr))
			return addr;
	}
	addr = get_unmapped_area(NULL, TASK_SIZE - len, len, 0, 0);
	if (!IS_ERR_VALUE(addr))
		return addr;
	return vm_unmapped_area(&info);
}

/*
 * Map a new XOL area into current's @mm, at @addr if non-zero, else where
 * xol_area_vaddr() finds room (near @near, a hit's ip, or 0); returns
 * @mm's area (another thread may have been first).
 */
struct xol_area *map_xol_area(struct mm_struct *mm, unsigned long addr,
			      unsigned long near)
{
	u8 trampoline[UPROBE_XOL_SLOT_BYTES] = {};
	unsigned long len = XOL_AREA_BYTES;
	struct xol_area *area, *other;
	struct vm_area_struct *vma;
	int err = -ENOMEM;

	area = kzalloc(sizeof(*area), GFP_KERNEL);
	if (!area)
		return ERR_PTR(-ENOMEM);
	if (!grow_xol_area(area))
		goto free_area;
	mutex_init(&area->lock);
	area->next = XOL_TRAMPOLINE_SLOT + 1;
	xa_init(&area->slots);

	if (mmap_write_lock_killable(mm)) {
		err = -EINTR;
		goto free_area;
	}
	other = xol_area_locked(mm);
	if (other) {			/* another thread was first */
		mmap_write_unlock(mm);
		free_xol_area(area);
		return other;
	}
	if (!addr)
		addr = xol_area_vaddr(mm, len, near);
	if (IS_ERR_VALUE(addr)) {
		err = addr;
		goto unlock;
	}
	area->vaddr = addr;
	/* Written where it will be seen, before anybody can run it. */
	arch_uretprobe_fill_trampoline(trampoline);
	arch_uprobe_copy_ixol(area->pages[0], trampoline_vaddr(area), trampoline,
			      UPROBE_XOL_SLOT_BYTES);
	vma = _install_special_mapping(mm, addr, len,
				       VM_EXEC | VM_MAYEXEC | VM_DONTCOPY | VM_IO,
				       &xol_mapping);
	if (IS_ERR(vma)) {
		err = PTR_ERR(vma);
		goto unlock;
	}
	/* Pairs with smp_load_acquire() in xol_area_of(). */
	smp_store_release(&mm->uprobes_state.xol_area, area);
	mmap_write_unlock(mm);
	return area;

unlock:
	mmap_write_unlock(mm);
free_area:
	free_xol_area(area);
	return ERR_PTR(err);
}

/* get_return_table() found none: allocate @area's table; NULL without memory. */
unsigned long *alloc_return_table(struct xol_area *area)
{
	unsigned long *slots;
	struct page *page, *old;

	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page)
		return NULL;
	/* Pairs with the smp_load_acquire()s of @ret_table. */
	old = cmpxchg(&area->ret_table, NULL, page);
	if (old) {			/* another thread was first */
		__free_page(page);
		page = old;
	}
	slots = page_address(page);
	/* The zeroed table first: pairs with the smp_load_acquire() above. */
	smp_store_release(&area->ret_slots, slots);
	return slots;
}

/* get_return_stub()'s search of the whole bitmap: a free stub, or -1. */
int find_return_stub(struct xol_area *area)
{
	unsigned long i;

	do {
		i = find_first_zero_bit(area->ret_used, UPROBE_RETURN_STUBS);
		if (i >= UPROBE_RETURN_STUBS)
			return -1;
	} while (test_and_set_bit_lock(i, area->ret_used));
	return i;
}

/*
 * @mm (its mmap_lock held for write) is being forked: its return table must
 * not be mapped, or the child's copy of the mapping would keep a page that
 * is neither its own nor refcounted (arch_uretprobe_unmap_table()). Faults
 * wait for the lock, so nothing maps it again before the copy is done.
 */
void unmap_return_table(struct mm_struct *mm)
{
	struct xol_area *area = xol_area_locked(mm);

	mmap_assert_write_locked(mm);
	/* Pairs with the cmpxchg() in alloc_return_table(). */
	if (area && smp_load_acquire(&area->ret_table))
		arch_uretprobe_unmap_table(mm);
}

/**
 * uprobe_return_table - the page an mm's return stubs read, for its vDSO
 * @mm: the faulting mm, whose mmap_lock is held
 *
 * Slot i holds the real return address of the call whose return address
 * is the architecture's return stub i; unwinders read it there.
 *
 * Return: the page, or NULL if no return probe of @mm has used a stub.
 */
struct page *uprobe_return_table(struct mm_struct *mm)
{
	struct xol_area *area = xol_area_of(mm);

	/* Pairs with the cmpxchg() in alloc_return_table(). */
	return area ? smp_load_acquire(&area->ret_table) : NULL;
}

/* Where slot @slot lives in the kernel's view: page index and offset. */
void *map_slot(struct xol_area *area, unsigned int slot,
	       unsigned int *page)
{
	*page = slot / (PAGE_SIZE / UPROBE_XOL_SLOT_BYTES);
	return kmap_local_page(area->pages[*page]) +
	       (slot * UPROBE_XOL_SLOT_BYTES) % PAGE_SIZE;
}

/* Slot @slot is no longer anybody's: reuse it once nobody can be in it. */
static void retire_slot_locked(struct xol_area *area, unsigned int slot)
{
	struct xol_owner *owner = slot ? slot_owner(area, slot) : NULL;

	lockdep_assert_held(&area->lock);
	if (WARN_ON_ONCE(!owner))
		return;
	WRITE_ONCE(owner->id, 0);	/* hints stop matching */
	__set_bit(slot, area->retired);
	area->retired_gp = start_poll_synchronize_srcu(&uprobes_srcu);
}

/**
 * retire_slot - the site at @vaddr left @mm: retire its slot
 * @mm: the mm, whose mmap_lock is held for write
 * @vaddr: the site's address
 */
void retire_slot(struct mm_struct *mm, unsigned long vaddr)
{
	struct xol_area *area = xol_area_locked(mm);
	void *entry;

	mmap_assert_write_locked(mm);
	if (!area)
		return;
	mutex_lock(&area->lock);
	entry = xa_erase(&area->slots, vaddr);
	if (entry)
		retire_slot_locked(area, xa_to_value(entry));
	mutex_unlock(&area->lock);
}

/*
 * If @t runs in @mm, set in @busy the slot of @area its user ip is in, if
 * any, and return true.
 */
static bool task_in_slot(struct task_struct *t, struct mm_struct *mm,
			 struct xol_area *area, unsigned long *busy)
{
	unsigned long off;

	if (READ_ONCE(t->mm) != mm || (t->flags & PF_KTHREAD) ||
	    !try_get_task_stack(t))
		return false;
	/* Racy by design: see struct xol_area. */
	off = data_race(instruction_pointer(task_pt_regs(t)));
	off -= area->vaddr;
	put_task_stack(t);
	if (off < XOL_AREA_BYTES)
		__set_bit(off / UPROBE_XOL_SLOT_BYTES, busy);
	return true;
}

/*
 * Set in @busy the slots of @area that a task of @mm has its user ip in.
 *
 * Usually only current's thread group runs in @mm, and then only it is
 * looked at: each task in @mm holds a reference in mm_users from before
 * it could be seen (copy_mm() precedes the attach under tasklist_lock)
 * until after it left @mm, and with tasklist_lock held no task joins the
 * group, so if the group's tasks in @mm are as many as mm_users was, no
 * other task is in @mm. Otherwise (a vfork() or CLONE_VM child, or just a
 * passing reference) every task in the system is looked at.
 */
static void slots_in_use(struct mm_struct *mm, struct xol_area *area,
			 unsigned long *busy)
{
	struct task_struct *g, *t;
	int users, seen = 0;

	if (current->mm == mm) {
		read_lock(&tasklist_lock);
		users = atomic_read(&mm->mm_users);
		for_each_thread(current, t)
			seen += task_in_slot(t, mm, area, busy);
		read_unlock(&tasklist_lock);
		if (seen >= users)
			return;
	}
	rcu_read_lock();
	for_each_process_thread(g, t)
		task_in_slot(t, mm, area, busy);
	rcu_read_unlock();
}

/*
 * A retired slot of @area nobody can be in (see struct xol_area), taken
 * off the retired set; 0 if none, and then *@wait if one may be after a
 * grace period. Looks at the tasks in @mm (slots_in_use()): only once the
 * backed slots are used.
 */
static unsigned int reuse_slot_locked(struct mm_struct *mm, struct xol_area *area,
				      bool *wait)
{
	unsigned long *busy;
	unsigned int slot;

	lockdep_assert_held(&area->lock);
	if (bitmap_empty(area->retired, XOL_SLOTS))
		return 0;
	if (!poll_state_synchronize_srcu(&uprobes_srcu, area->retired_gp)) {
		*wait = true;
		return 0;
	}
	busy = bitmap_zalloc(XOL_SLOTS, GFP_KERNEL);
	if (!busy)
		return 0;
	slots_in_use(mm, area, busy);
	bitmap_andnot(busy, area->retired, busy, XOL_SLOTS);
	slot = find_first_bit(busy, XOL_SLOTS);
	bitmap_free(busy);
	if (slot >= XOL_SLOTS)
		return 0;
	__clear_bit(slot, area->retired);
	return slot;
}

static unsigned long get_slot_slow(struct mm_struct *mm,
				   struct xol_area *area,
				   struct uprobe *uprobe, unsigned long vaddr,
				   unsigned int *slot, bool *wait);

/*
 * The slot that runs @uprobe's instruction probed at @vaddr, filled on
 * first use; 0 when the area is full or unavailable. *@slot is a hint (the
 * site's last slot), checked and updated.
 *
 * A slot's recipe depends only on the probe (its decoded instruction, never
 * changed once analyzed), @vaddr and the slot's own address, and a used
 * slot is never rewritten while in use, so a slot whose owner is (@uprobe,
 * @vaddr) is reused without a lock: that is every hit after the first in
 * this mm. When every backed slot has been used, a retired one is taken,
 * else the area grows; *@wait says, when it cannot, that a retired slot
 * will be free after an SRCU grace period.
 *
 * Return: the slot's user address, or 0.
 */
unsigned long get_slot(struct mm_struct *mm, struct uprobe *uprobe,
		       unsigned long vaddr, unsigned int *slot,
			      bool *wait)
{
	struct xol_area *area = get_xol_area(mm, vaddr);

	*wait = false;
	if (IS_ERR(area))
		return 0;
	if (slot_is(area, *slot, uprobe, vaddr)) {
		smp_rmb();	/* the recipe after its owner: see smp_wmb() */
		return slot_vaddr(area, *slot);
	}
	return get_slot_slow(mm, area, uprobe, vaddr, slot, wait);
}

/*
 * get_slot() without a valid hint: look the slot up, or fill a new one,
 * under @area->lock, which this takes. Out of line: its recipe buffer
 * (which the kernel's stack initialisation zeroes) stays off the path of
 * hits that have their slot.
 */
static noinline unsigned long get_slot_slow(struct mm_struct *mm,
					    struct xol_area *area,
					    struct uprobe *uprobe,
					    unsigned long vaddr,
					    unsigned int *slot, bool *wait)
{
	u8 recipe[UPROBE_XOL_SLOT_BYTES];
	struct xol_owner *owner;
	unsigned int page, next;
	bool gp_pending = false;
	void *entry;
	int len;

	mutex_lock(&area->lock);
	entry = xa_load(&area->slots, vaddr);
	if (entry && slot_is(area, xa_to_value(entry), uprobe, vaddr)) {
		*slot = xa_to_value(entry);
		goto unlock;
	}
	/* New, or another instruction now at @vaddr: the old slot retires. */
	if (entry)
		retire_slot_locked(area, xa_to_value(entry));
	*slot = 0;
	next = area->next;
	if (next >= area->nr_pages * XOL_SLOTS_PER_PAGE) {
		next = reuse_slot_locked(mm, area, &gp_pending);
		if (!next && grow_xol_area(area))
			next = area->next;
		if (!next) {
			*wait = gp_pending;
			goto unlock;
		}
	}
	len = arch_uprobe_fill_slot(&uprobe->arch, recipe,
				    slot_vaddr(area, next), vaddr);
	if (len <= 0 || len > UPROBE_XOL_SLOT_BYTES) {
		if (next != area->next)
			__set_bit(next, area->retired);	/* still nobody's */
		goto unlock;
	}
	page = next / XOL_SLOTS_PER_PAGE;
	arch_uprobe_copy_ixol(area->pages[page], slot_vaddr(area, next),
			      recipe, len);
	/*
	 * Recipe, then owner, then publication: a reader that finds the
	 * owner (through @slots or a hint) finds the recipe written.
	 */
	smp_wmb();	/* pairs with the smp_rmb() in get_slot() */
	owner = slot_owner(area, next);
	WRITE_ONCE(owner->id, uprobe->id);
	WRITE_ONCE(owner->vaddr, vaddr);
	if (next == area->next)
		area->next++;
	if (xa_err(xa_store(&area->slots, vaddr, xa_mk_value(next),
			    GFP_KERNEL))) {
		retire_slot_locked(area, next);	/* nobody entered it */
		goto unlock;
	}
	*slot = next;
unlock:
	mutex_unlock(&area->lock);
	return *slot ? slot_vaddr(area, *slot) : 0;
}

/* Remember the slot of the site at @vaddr for its next hit. */
void cache_slot(struct mm_struct *mm, struct uprobe *uprobe,
		unsigned long vaddr, unsigned int slot)
{
	struct uprobes_mm *um = uprobes_mm_of(mm);
	struct uprobe_site *site;

	if (!um)
		return;
	rcu_read_lock();
	site = site_lookup(um, vaddr);
	if (site && site->uprobe == uprobe)
		WRITE_ONCE(site->xol_slot, slot);
	rcu_read_unlock();
}
