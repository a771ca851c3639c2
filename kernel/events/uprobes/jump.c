// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: jump sites, their stub page and per-mm stub areas (stub_lock).
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

/*
 * One page of code, filled once by the architecture with identical stubs
 * (arch_uprobe_fill_stubs()), mapped read-only by every stub area of every
 * mm; NULL-terminated for the special mapping. NULL (no jump sites) if it
 * could not be made.
 */
static struct page *stub_pages[2];

/* Jump sites are made only while this is set (the default). */
bool uprobe_jump_sites = true;
module_param_named(jump_sites, uprobe_jump_sites, bool, 0644);
MODULE_PARM_DESC(jump_sites, "Enter probed instructions that allow it through a jump to a stub, not a breakpoint");

/* Fill the page of stubs that every stub area maps. */
void __init init_stub_page(void)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

	if (!page)
		return;
	if (arch_uprobe_fill_stubs(page_address(page)))
		stub_pages[0] = page;
	else
		__free_page(page);
}

/* A stub area does not move: the jumps of the mm's sites lead into it. */
static int stub_mremap(const struct vm_special_mapping *sm,
		       struct vm_area_struct *new_vma)
{
	return -EINVAL;
}

/*
 * @vma, a stub area, is unmapped (munmap(), under the mmap_lock held for
 * read or write, or the mm's exit, when the table is gone already): the
 * area stands for no site from now on. A site whose jump leads there
 * faults at its next execution (the program unmapped our code), as a task
 * of an mm that unmapped its XOL area does, until its jump is undone:
 * before another area can be mapped, at that address or any other
 * (reap_closed_areas()), so that no jump ever leads to a stub of
 * another site.
 */
static void stub_close(const struct vm_special_mapping *sm,
		       struct vm_area_struct *vma)
{
	struct uprobes_mm *um = uprobes_mm_of(vma->vm_mm);
	struct uprobe_stub_area *area;
	unsigned int i;

	if (!um)
		return;
	spin_lock(&um->stub_lock);
	for (i = 0; i < UPROBE_STUB_AREAS; i++) {
		area = rcu_dereference_protected(um->stubs[i],
						 lockdep_is_held(&um->stub_lock));
		if (area && area->start == vma->vm_start)
			WRITE_ONCE(area->closed, true);
	}
	spin_unlock(&um->stub_lock);
}

static const struct vm_special_mapping stub_mapping = {
	.name = "[uprobes-stubs]",
	.pages = stub_pages,
	.mremap = stub_mremap,
	.close = stub_close,
};

/*
 * Area @i of @um, for a caller that holds the mm's mmap_lock (no area is
 * added without it held for write) or @um->stub_lock.
 */
static struct uprobe_stub_area *stub_area(struct mm_struct *mm,
					  struct uprobes_mm *um, unsigned int i)
{
	return rcu_dereference_protected(um->stubs[i],
					 lockdep_is_held(&um->stub_lock) ||
					 rwsem_is_locked(&mm->mmap_lock));
}

/* The probed address the stub at @stub of @um stands for, or 0. RCU. */
static __always_inline unsigned long
stub_site(struct uprobes_mm *um, unsigned long stub)
{
	struct uprobe_stub_area *area;
	unsigned long off;
	unsigned int i;

	for (i = 0; i < UPROBE_STUB_AREAS; i++) {
		area = rcu_dereference(um->stubs[i]);
		if (!area || stub - area->start >= PAGE_SIZE)
			continue;
		off = stub - area->start;
		if (off % UPROBE_STUB_BYTES || READ_ONCE(area->closed))
			return 0;
		return READ_ONCE(area->vaddr[off / UPROBE_STUB_BYTES]);
	}
	return 0;
}

/**
 * uprobe_stub_site - the probed address a stub of current's mm stands for
 * @stub: a user address, where the stub would start
 *
 * Context: any; interrupts may be off.
 *
 * Return: the address of the site whose jump leads to the stub at @stub,
 * or 0 if @stub is not the start of a stub of current's mm in use.
 */
unsigned long uprobe_stub_site(unsigned long stub)
{
	struct mm_struct *mm = current->mm;
	unsigned long vaddr = 0;
	struct uprobes_mm *um;

	if (!mm || !stub_pages[0])
		return 0;
	rcu_read_lock();
	um = uprobes_mm_of(mm);
	if (um)
		vaddr = stub_site(um, stub);
	rcu_read_unlock();
	return vaddr;
}

/* Where the stub that @ip would be inside of starts. */
unsigned long stub_start(unsigned long ip)
{
	BUILD_BUG_ON(!is_power_of_2(UPROBE_STUB_BYTES));
	return ip & ~(UPROBE_STUB_BYTES - 1UL);
}

/* The site of the stub that current's @ip is inside of, or 0. Any context. */
unsigned long stub_site_at(unsigned long ip)
{
	return uprobe_stub_site(stub_start(ip));
}

/* Can a jump at @vaddr reach every stub of an area at @start? */
static bool area_in_reach(unsigned long start, unsigned long vaddr)
{
	return (start > vaddr ? start - vaddr : vaddr - start) <
	       UPROBE_JUMP_REACH - PAGE_SIZE;
}

/*
 * Map a new stub area into @mm within the jump's reach of @vaddr, as near
 * it as there is room: below it first, else above it.
 */
static struct uprobe_stub_area *map_stub_area(struct mm_struct *mm,
					      unsigned long vaddr)
{
	const unsigned long reach = UPROBE_JUMP_REACH - 2 * PAGE_SIZE;
	struct vm_unmapped_area_info info = { .length = PAGE_SIZE };
	unsigned long floor = max_t(unsigned long, PAGE_SIZE, mmap_min_addr);
	struct uprobe_stub_area *area;
	struct vm_area_struct *vma;
	unsigned long addr;

	mmap_assert_write_locked(mm);
	area = kzalloc(sizeof(*area), GFP_KERNEL);
	if (!area)
		return NULL;
	info.flags = VM_UNMAPPED_AREA_TOPDOWN;
	info.low_limit = max(floor, vaddr > reach ? vaddr - reach : 0);
	info.high_limit = vaddr & PAGE_MASK;
	addr = info.high_limit > info.low_limit ? vm_unmapped_area(&info) :
						  -ENOMEM;
	if (IS_ERR_VALUE(addr)) {
		info.flags = 0;
		info.low_limit = max(floor, PAGE_ALIGN(vaddr + 1));
		info.high_limit = TASK_SIZE - vaddr > reach ? vaddr + reach :
							     TASK_SIZE;
		addr = info.high_limit > info.low_limit ?
		       vm_unmapped_area(&info) : -ENOMEM;
	}
	if (IS_ERR_VALUE(addr) || !area_in_reach(addr, vaddr))
		goto free_area;
	vma = _install_special_mapping(mm, addr, PAGE_SIZE,
				       VM_READ | VM_EXEC | VM_MAYREAD |
				       VM_MAYEXEC, &stub_mapping);
	if (IS_ERR(vma))
		goto free_area;
	area->start = addr;
	return area;

free_area:
	kfree(area);
	return NULL;
}

/*
 * Undo the jumps that lead into the areas of @um that the program
 * unmapped, and free those areas. Caller holds @mm's mmap_lock for write.
 *
 * Return: true if no closed area is left; false if a jump could not be
 * undone (no memory): then no new area may be mapped, as it could land
 * where the closed one was.
 */
static bool reap_closed_areas(struct mm_struct *mm, struct uprobes_mm *um)
{
	struct uprobe_stub_area *area;
	struct uprobe_site *site;
	unsigned long stub;
	unsigned int i, j;
	bool left = false;

	mmap_assert_write_locked(mm);
	for (i = 0; i < UPROBE_STUB_AREAS; i++) {
		area = stub_area(mm, um, i);
		if (!area || !READ_ONCE(area->closed))
			continue;
		for (j = 0; j < UPROBE_STUBS_PER_AREA; j++) {
			if (!area->vaddr[j])
				continue;
			stub = area->start + j * UPROBE_STUB_BYTES;
			site = xa_load(&um->sites, area->vaddr[j]);
			if (!site || site->stub != stub)
				continue;
			if (undo_jump(mm, site)) {
				left = true;
				break;
			}
		}
		if (j < UPROBE_STUBS_PER_AREA)
			continue;
		spin_lock(&um->stub_lock);
		RCU_INIT_POINTER(um->stubs[i], NULL);
		spin_unlock(&um->stub_lock);
		kfree_rcu(area, rcu);
	}
	return !left;
}

/*
 * The stub for the site at @vaddr of @mm: the one that stands for it
 * already, else a free one in an area within reach, mapped now if need
 * be. Returns its user address, or 0: no room within reach, @mm has
 * UPROBE_STUB_AREAS areas already, all full or out of reach, or the jumps
 * into an area the program unmapped could not be undone.
 */
static unsigned long get_stub(struct mm_struct *mm, struct uprobes_mm *um,
			      unsigned long vaddr)
{
	struct uprobe_stub_area *area, *found = NULL;
	unsigned int i, j, hole = UPROBE_STUB_AREAS, free = 0;

	mmap_assert_write_locked(mm);
	if (!reap_closed_areas(mm, um))
		return 0;
	for (i = 0; i < UPROBE_STUB_AREAS; i++) {
		area = stub_area(mm, um, i);
		if (!area) {
			hole = min(hole, i);
			continue;
		}
		if (!area_in_reach(area->start, vaddr))
			continue;
		for (j = 0; j < UPROBE_STUBS_PER_AREA; j++) {
			if (area->vaddr[j] == vaddr)
				return area->start + j * UPROBE_STUB_BYTES;
			if (!found && !area->vaddr[j]) {
				found = area;
				free = j;
			}
		}
	}
	if (!found) {
		if (hole == UPROBE_STUB_AREAS)
			return 0;
		found = map_stub_area(mm, vaddr);
		if (!found)
			return 0;
		free = 0;
		spin_lock(&um->stub_lock);
		rcu_assign_pointer(um->stubs[hole], found);
		spin_unlock(&um->stub_lock);
	}
	/* Read by stub_site() under RCU; the stub's code is in place already. */
	WRITE_ONCE(found->vaddr[free], vaddr);
	return found->start + free * UPROBE_STUB_BYTES;
}

/*
 * The page @vma maps at @vaddr, with a reference, or NULL. Caller holds
 * the mmap_lock.
 */
static struct page *site_page(struct vm_area_struct *vma, unsigned long vaddr)
{
	struct page *page = follow_page(vma, vaddr, FOLL_GET);

	if (IS_ERR_OR_NULL(page)) {
		if (get_user_pages_remote(vma->vm_mm, vaddr, 1, FOLL_FORCE,
					  &page, NULL, NULL) != 1)
			return NULL;
	}
	return page;
}

/*
 * Does @vma at @site's address hold the jump of @site? *@page gets the
 * page, with a reference, when it does. Caller holds the mmap_lock.
 */
bool jump_there(struct uprobe_site *site, struct vm_area_struct *vma,
		struct page **page)
{
	u8 jump[UPROBE_JUMP_MAX], cur[UPROBE_JUMP_MAX];
	struct uprobe *uprobe = site->uprobe;
	struct page *p;

	if (!vma_maps_offset(vma, uprobe->ui->inode, uprobe->offset) ||
	    offset_to_vaddr(vma, uprobe->offset) != site->vaddr ||
	    !arch_uprobe_fill_jump(site->vaddr, site->stub, jump))
		return false;
	p = site_page(vma, site->vaddr);
	if (!p)
		return false;
	memcpy_from_page(cur, p, offset_in_page(site->vaddr), site->jump_len);
	if (!PageAnon(p) || memcmp(cur, jump, site->jump_len)) {
		put_page(p);
		return false;
	}
	if (page)
		*page = p;
	else
		put_page(p);
	return true;
}

/*
 * No memory for a copy of @page: take @site's jump out of it in place, as a
 * debugger's write over the jump does (restore_jump_locked()), if the page is
 * this mm's alone (as for write_in_place()). Caller holds the mmap_lock
 * for write and a reference on @page, which @vma maps at the site.
 *
 * Return: 0; -EAGAIN if @page is no longer mapped there; @err if the page
 * must be copied.
 */
static int undo_jump_in_place(struct vm_area_struct *vma, struct page *page,
			      struct uprobe_site *site, int err)
{
	DEFINE_PAGE_VMA_WALK(pvmw, page, vma, site->vaddr, 0);
	struct uprobes_mm *um = uprobes_mm_locked(vma->vm_mm);
	void *kaddr;
	int ret = err;

	mmap_assert_write_locked(vma->vm_mm);
	if (!PageAnon(page) || PageKsm(page) || PageCompound(page))
		return err;
	mutex_lock(&um->remote_lock);
	lock_page(page);
	if (!page_vma_mapped_walk(&pvmw)) {
		ret = -EAGAIN;
		goto unlock_page;
	}
	/* The page lock and the mmap_lock keep the mapping from here on. */
	page_vma_mapped_walk_done(&pvmw);
	if (PageAnonExclusive(page)) {
		kaddr = kmap_local_page(page);
		restore_jump_locked(um, vma, page, kaddr, site->vaddr & PAGE_MASK,
				    site);
		kunmap_local(kaddr);
		set_page_dirty(page);
		ret = 0;
	}
unlock_page:
	unlock_page(page);
	mutex_unlock(&um->remote_lock);
	return ret;
}

/*
 * Put our breakpoint back at @site in place of its jump, with the rest of
 * the original instruction after it. A site whose jump is no longer there
 * (its text went away) just forgets its stub. Caller holds @mm's
 * mmap_lock for write.
 *
 * Return: 0, or -ENOMEM/-ENOSPC with the jump still there (no memory for
 * a copy of a page that another mm shares).
 */
int undo_jump(struct mm_struct *mm, struct uprobe_site *site)
{
	struct vm_area_struct *vma;
	struct page *page;
	int ret = 0;

	mmap_assert_write_locked(mm);
	if (!site->stub)
		return 0;
	do {
		vma = vma_lookup(mm, site->vaddr);
		if (!vma || !jump_there(site, vma, &page))
			break;
		ret = patch_page(vma, site->vaddr, page, site->saved,
				 site->jump_len);
		if (ret == -ENOMEM || ret == -ENOSPC)
			ret = undo_jump_in_place(vma, page, site, ret);
		put_page(page);
	} while (ret == -EAGAIN);
	if (ret)
		return ret;
	WRITE_ONCE(site->stub, 0);
	return 0;
}

struct hit_guard;

/*
 * Make the site of @uprobe at @vaddr of current's mm a jump site (see
 * "Jump sites") after a breakpoint hit there, which left @regs, if the
 * architecture allows it (arch_uprobe_jump_len()). Called by the hit,
 * whose guard @g keeps @uprobe, under no lock; leaves the read section
 * for a reference before it waits for the mmap_lock. Does nothing if
 * anything changed since the hit.
 */
noinline void make_jump_site(struct uprobe *uprobe,
				    unsigned long vaddr, struct pt_regs *regs,
				    struct hit_guard *g)
{
	u8 jump[UPROBE_JUMP_MAX], cur[UPROBE_JUMP_MAX];
	const unsigned int bp = UPROBE_SWBP_INSN_SIZE;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct uprobe_site *site;
	unsigned long stub, last, index = vaddr;
	uprobe_opcode_t orig, head;
	struct page *page;
	struct uprobes_mm *um;
	unsigned int len;

	if (!stub_pages[0])
		return;
	len = arch_uprobe_jump_len(&uprobe->arch, regs);
	if (!len || WARN_ON_ONCE(len > UPROBE_JUMP_MAX || len < bp))
		return;
	/* A site that is a jump already, or cannot be one: no lock taken. */
	rcu_read_lock();
	um = uprobes_mm_of(mm);
	site = um ? site_lookup(um, vaddr) : NULL;
	if (!site || READ_ONCE(site->stub) || READ_ONCE(site->no_jump)) {
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();
	if (!hit_hold(uprobe, g) || mmap_write_lock_killable(mm))
		return;
	um = uprobes_mm_locked(mm);
	site = um ? xa_load(&um->sites, vaddr) : NULL;
	if (!site || site->uprobe != uprobe || site->detached ||
	    site->pending || site->stub || site->no_jump)
		goto unlock;
	orig = orig_opcode(uprobe);
	/* Only our own breakpoint, over the original instruction, is moved. */
	if (memcmp(&site->shown, &orig, bp))
		goto unlock;
	site->no_jump = true;	/* unless all goes well below */
	last = vaddr + len - 1;
	vma = vma_lookup(mm, vaddr);
	if (!vma || last >= vma->vm_end ||
	    (vaddr & PAGE_MASK) != (last & PAGE_MASK) ||
	    xa_find_after(&um->sites, &index, last, XA_PRESENT))
		goto unlock;
	page = site_page(vma, vaddr);
	if (!page)
		goto unlock;
	memcpy_from_page(cur, page, offset_in_page(vaddr), len);
	memcpy(&head, cur, bp);
	if (!PageAnon(page) || !is_swbp_insn(&head) ||
	    memcmp(cur + bp, (u8 *)&uprobe->arch.insn + bp, len - bp))
		goto put_page;
	stub = get_stub(mm, um, vaddr);
	if (!stub || !arch_uprobe_fill_jump(vaddr, stub, jump))
		goto put_page;
	memcpy(site->saved, cur, len);
	site->jump_len = len;
	if (patch_page(vma, vaddr, page, jump, len)) {
		site->no_jump = false;	/* maybe at the next hit */
		goto put_page;
	}
	site->no_jump = false;
	WRITE_ONCE(site->stub, stub);
put_page:
	put_page(page);
unlock:
	mmap_write_unlock(mm);
}

/*
 * Undo the jumps of the sites of @mm in [@start, @end): mremap() is about
 * to move them, and a relative jump would lead elsewhere from there. They
 * move as breakpoints and become jumps again at their next hit.
 *
 * Return: 0, or the error of a jump still there.
 */
int undo_jumps(struct mm_struct *mm, struct uprobes_mm *um,
	       unsigned long start, unsigned long end)
{
	struct uprobe_site *site;
	unsigned long index;
	int ret;

	mmap_assert_write_locked(mm);
	xa_for_each_range(&um->sites, index, site, start, end - 1) {
		ret = undo_jump(mm, site);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Give @newmm, a fork child, its copies of the stub areas of @old_um that
 * fork copied (all but those a program marked MADV_DONTFORK). Caller
 * holds both mmap_locks for write.
 */
void dup_stub_areas(struct mm_struct *newmm, struct uprobes_mm *um,
		    struct uprobes_mm *old_um)
{
	struct uprobe_stub_area *area, *copy;
	struct vm_area_struct *vma;
	unsigned int i;

	for (i = 0; i < UPROBE_STUB_AREAS; i++) {
		area = rcu_dereference_protected(old_um->stubs[i], 1);
		if (!area || area->closed)
			continue;
		vma = vma_lookup(newmm, area->start);
		if (!vma || !vma_is_special_mapping(vma, &stub_mapping))
			continue;
		copy = kmemdup(area, sizeof(*area), GFP_KERNEL);
		if (copy)
			RCU_INIT_POINTER(um->stubs[i], copy);
	}
}

/*
 * If @copy, the child's copy of a jump site, is entered through a stub the
 * child does not have, put the breakpoint back in the child's page.
 * Return: 0, or -ENOMEM (the fork fails).
 */
int dup_undo_jump(struct mm_struct *newmm, struct uprobes_mm *um,
		  struct uprobe_site *copy)
{
	bool there;

	rcu_read_lock();
	there = stub_site(um, copy->stub) == copy->vaddr;
	rcu_read_unlock();
	return there ? 0 : undo_jump(newmm, copy);
}

/* Free the stub areas of @um, whose mm is gone. */
void free_stub_areas(struct uprobes_mm *um)
{
	struct uprobe_stub_area *area;
	unsigned int i;

	for (i = 0; i < UPROBE_STUB_AREAS; i++) {
		area = rcu_dereference_protected(um->stubs[i], 1);
		if (area)
			kfree_rcu(area, rcu);
	}
}
