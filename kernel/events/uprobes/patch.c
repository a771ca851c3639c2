// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: writing into the text (page replacement, in place, back to the file), SDT counters.
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

/* A mapping a breakpoint may go into: private, file-backed, not writable. */
bool vma_can_probe(struct vm_area_struct *vma)
{
	if (!vma->vm_file || is_vm_hugetlb_page(vma))
		return false;
	if (vma->vm_flags & (VM_WRITE | VM_MAYSHARE | VM_IO | VM_PFNMAP))
		return false;
	return true;
}

unsigned long offset_to_vaddr(struct vm_area_struct *vma, loff_t off)
{
	return vma->vm_start + off - ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
}

bool vma_maps_offset(struct vm_area_struct *vma, struct inode *inode,
		     loff_t off)
{
	loff_t start = (loff_t)vma->vm_pgoff << PAGE_SHIFT;

	return vma->vm_file && file_inode(vma->vm_file) == inode &&
	       off >= start && off < start + (vma->vm_end - vma->vm_start);
}

/* Read @len bytes of @inode at @offset from the page cache. */
int read_file_bytes(struct inode *inode, loff_t offset, void *buf,
		    size_t len)
{
	struct address_space *mapping = inode->i_mapping;
	size_t done = 0;

	while (done < len) {
		loff_t pos = offset + done;
		size_t n = min_t(size_t, len - done,
				 PAGE_SIZE - offset_in_page(pos));
		struct page *page;

		if (shmem_mapping(mapping))
			page = shmem_read_mapping_page(mapping,
						       pos >> PAGE_SHIFT);
		else
			page = read_mapping_page(mapping, pos >> PAGE_SHIFT,
						 NULL);
		if (IS_ERR(page))
			return PTR_ERR(page);
		memcpy_from_page(buf + done, page, offset_in_page(pos), n);
		put_page(page);
		done += n;
	}
	return 0;
}

/*
 * Map @new, a fresh anonymous copy of @old, at @addr in place of @old,
 * which must be mapped there. A page-cache @old is locked while its
 * mapping is replaced, so that truncation and invalidation see it either
 * still mapped or already gone.
 *
 * Return: 0; -EAGAIN if @old is no longer mapped there; -ENOSPC if the
 * mm's memory cgroup cannot take the copy; -ENOMEM.
 */
static int replace_page(struct vm_area_struct *vma, unsigned long addr,
			struct page *old, struct page *new)
{
	struct mm_struct *mm = vma->vm_mm;
	DEFINE_PAGE_VMA_WALK(pvmw, old, vma, addr, 0);
	struct mmu_notifier_range range;
	int ret = 0;

	mmap_assert_write_locked(mm);
	ret = anon_vma_prepare(vma);
	if (ret)
		return ret;
	/* One mm's cgroup limit is that mm's problem, not the probe's. */
	if (mem_cgroup_charge(page_folio(new), mm, GFP_KERNEL))
		return -ENOSPC;

	mmu_notifier_range_init(&range, MMU_NOTIFY_CLEAR, 0, vma, mm, addr,
				addr + PAGE_SIZE);
	mmu_notifier_invalidate_range_start(&range);
	lock_page(old);
	if (!page_vma_mapped_walk(&pvmw)) {
		ret = -EAGAIN;
		goto unlock_old;
	}

	get_page(new);
	page_add_new_anon_rmap(new, vma, addr);
	lru_cache_add_inactive_or_unevictable(new, vma);
	inc_mm_counter(mm, MM_ANONPAGES);
	if (PageAnon(old))
		dec_mm_counter(mm, MM_ANONPAGES);
	else
		dec_mm_counter(mm, mm_counter_file(old));

	flush_cache_page(vma, addr, pte_pfn(*pvmw.pte));
	ptep_clear_flush_notify(vma, addr, pvmw.pte);
	set_pte_at_notify(mm, addr, pvmw.pte, mk_pte(new, vma->vm_page_prot));
	page_remove_rmap(old, vma, false);
	if (!page_mapped(old))
		folio_free_swap(page_folio(old));
	page_vma_mapped_walk_done(&pvmw);
	put_page(old);		/* the reference of the old mapping */
unlock_old:
	unlock_page(old);
	mmu_notifier_invalidate_range_end(&range);
	return ret;
}

/*
 * May a breakpoint be written into (or restored in) @page, which @vma maps
 * at @vaddr? Only if it is the file's own page-cache page for that offset,
 * or an anonymous copy of it (ours, or the process's private one). Never
 * the shared zero page (a private file mapping gets it from
 * UFFDIO_ZEROPAGE), nor any other page that is not the file's.
 */
static bool page_is_files(struct vm_area_struct *vma, unsigned long vaddr,
			  struct page *page)
{
	if (is_zero_page(page))
		return false;
	if (PageAnon(page))
		return true;
	return page_mapping(page) == vma->vm_file->f_mapping &&
	       page_to_pgoff(page) == linear_page_index(vma, vaddr);
}

/*
 * Is @page the same as @file except at @off, where @file holds @opcode?
 * Then restoring @opcode in @page gives @file's contents.
 */
static bool file_page_restores(struct page *page, struct page *file,
			       unsigned int off, uprobe_opcode_t opcode)
{
	const unsigned int n = UPROBE_SWBP_INSN_SIZE;
	u8 *a = kmap_local_page(page), *f = kmap_local_page(file);
	bool same = !memcmp(f + off, &opcode, n) && !memcmp(a, f, off) &&
		    !memcmp(a + off + n, f + off + n, PAGE_SIZE - off - n);

	kunmap_local(f);
	kunmap_local(a);
	return same;
}

/*
 * Map @file, the page-cache page for @vaddr, at @vaddr of @vma in place of
 * @old, our anonymous copy mapped there, if restoring @opcode at @vaddr in
 * @old gives @file's contents: the removal that leaves no breakpoint in the
 * page. It allocates nothing, so it cannot fail for lack of memory.
 *
 * @file is locked and its mapping checked, so truncation and invalidation
 * see it either still unmapped or mapped here (they unmap it again). The
 * contents are compared with @old's PTE cleared and the TLB flushed: no
 * thread can write into @old any more (a writable mapping lets the process
 * do that), so nothing it wrote is lost; @old's PTE goes back if they
 * differ. A PTE marked for userfaultfd write protection stays marked.
 *
 * Return: 0; -EAGAIN if @old is no longer mapped there; -EPERM if @old
 * must be patched instead (the contents differ, or @file left the file).
 */
static int map_file_page(struct vm_area_struct *vma, unsigned long vaddr,
			 struct page *old, struct page *file,
			 uprobe_opcode_t opcode)
{
	DEFINE_PAGE_VMA_WALK(pvmw, old, vma, vaddr, 0);
	unsigned long start = vaddr & PAGE_MASK;
	struct mm_struct *mm = vma->vm_mm;
	struct mmu_notifier_range range;
	pte_t pte, entry;
	int ret = 0;

	mmap_assert_write_locked(mm);
	mmu_notifier_range_init(&range, MMU_NOTIFY_CLEAR, 0, vma, mm, start,
				start + PAGE_SIZE);
	mmu_notifier_invalidate_range_start(&range);
	lock_page(file);
	if (page_folio(file)->mapping != vma->vm_file->f_mapping ||
	    !PageUptodate(file)) {
		ret = -EPERM;
		goto unlock_file;
	}
	if (!page_vma_mapped_walk(&pvmw)) {
		ret = -EAGAIN;
		goto unlock_file;
	}
	flush_cache_page(vma, start, pte_pfn(*pvmw.pte));
	pte = ptep_clear_flush_notify(vma, start, pvmw.pte);
	if (!file_page_restores(old, file, offset_in_page(vaddr), opcode)) {
		set_pte_at_notify(mm, start, pvmw.pte, pte);
		ret = -EPERM;
		goto walk_done;
	}

	get_page(file);
	page_add_file_rmap(file, vma, false);
	inc_mm_counter(mm, mm_counter_file(file));
	dec_mm_counter(mm, MM_ANONPAGES);
	entry = mk_pte(file, vma->vm_page_prot);
	if (pte_uffd_wp(pte))
		entry = pte_mkuffd_wp(entry);
	set_pte_at_notify(mm, start, pvmw.pte, entry);
	page_remove_rmap(old, vma, false);
	put_page(old);		/* the reference of the old mapping */
walk_done:
	page_vma_mapped_walk_done(&pvmw);
unlock_file:
	unlock_page(file);
	mmu_notifier_invalidate_range_end(&range);
	return ret;
}

/*
 * Write @len @bytes at @vaddr into @page, the anonymous page @vma maps there,
 * when @vma's mm is its only user: no fork child shares it (it is
 * PageAnonExclusive) and KSM does not. That is the page of an earlier
 * patch of ours, so a second probe in a page costs no copy.
 *
 * No CPU runs the page while it changes: its PTE is cleared and the TLB
 * flushed first (the flush's IPIs serialize every CPU that ran the mm), and
 * the page table lock, held until the PTE is back, keeps a fault on the page
 * waiting; the next fetch from the page, after the PTE is back, sees the new
 * bytes, as it would see a newly mapped copy. The page lock keeps reclaim,
 * migration and KSM away while the mapping is checked and the bytes written;
 * the page is dirtied for its swap copy. A thread that took the breakpoint
 * just before a removal finds the instruction restored and runs it again
 * (find_hit()), as with a replaced page.
 *
 * Return: 0; -EAGAIN if @page is no longer mapped there; -EPERM if it
 * must be copied instead.
 */
static int write_in_place(struct vm_area_struct *vma, unsigned long vaddr,
			  struct page *page, const void *bytes, size_t len)
{
	DEFINE_PAGE_VMA_WALK(pvmw, page, vma, vaddr, 0);
	struct mm_struct *mm = vma->vm_mm;
	struct mmu_notifier_range range;
	void *kaddr;
	pte_t pte;
	int ret = 0;

	if (!PageAnon(page) || PageKsm(page) || PageCompound(page))
		return -EPERM;
	mmu_notifier_range_init(&range, MMU_NOTIFY_CLEAR, 0, vma, mm,
				vaddr & PAGE_MASK, (vaddr & PAGE_MASK) + PAGE_SIZE);
	mmu_notifier_invalidate_range_start(&range);
	lock_page(page);
	if (!page_vma_mapped_walk(&pvmw)) {
		ret = -EAGAIN;
		goto unlock_page;
	}
	if (!PageAnonExclusive(page)) {
		ret = -EPERM;
		goto walk_done;
	}
	flush_cache_page(vma, vaddr, pte_pfn(*pvmw.pte));
	pte = ptep_clear_flush_notify(vma, vaddr, pvmw.pte);
	kaddr = kmap_local_page(page);
	copy_to_user_page(vma, page, vaddr, kaddr + offset_in_page(vaddr),
			  bytes, len);
	kunmap_local(kaddr);
	set_pte_at_notify(mm, vaddr, pvmw.pte, pte);
	set_page_dirty(page);
walk_done:
	page_vma_mapped_walk_done(&pvmw);
unlock_page:
	unlock_page(page);
	mmu_notifier_invalidate_range_end(&range);
	return ret;
}

/*
 * Put @len @bytes at @vaddr into @old, the page @vma maps there, or rather
 * into a new copy of it mapped in its place: in place if @old is this mm's
 * own anonymous copy (write_in_place()), else a copy ("Patching text" in the
 * design). Caller holds the mmap_lock for write and a reference on @old.
 *
 * Return: 0; -EAGAIN if @old is no longer mapped there; -ENOSPC, -ENOMEM.
 */
int patch_page(struct vm_area_struct *vma, unsigned long vaddr,
	       struct page *old, const void *bytes, size_t len)
{
	struct mm_struct *mm = vma->vm_mm;
	struct page *new;
	void *kaddr;
	int ret;

	mmap_assert_write_locked(mm);
	ret = write_in_place(vma, vaddr, old, bytes, len);
	if (ret != -EPERM)
		return ret;
	new = alloc_page_vma(GFP_HIGHUSER_MOVABLE, vma, vaddr);
	if (!new)
		return -ENOMEM;
	__folio_mark_uptodate(page_folio(new));
	copy_highpage(new, old);
	kaddr = kmap_local_page(new);
	memcpy(kaddr + offset_in_page(vaddr), bytes, len);
	kunmap_local(kaddr);
	ret = replace_page(vma, vaddr, old, new);
	put_page(new);
	return ret;
}

/*
 * uprobe_write_opcode() at @vaddr of @vma, which maps it; a removal looks
 * for the file's page only if @restore_file (the caller knows no other
 * breakpoint of ours is in the page).
 *
 * An opcode is UPROBE_SWBP_INSN_SIZE bytes: is_swbp_insn() tells a
 * breakpoint from an original instruction.
 *
 * Installing over a trap that is not our breakpoint, in an anonymous copy,
 * writes ours and lets the site being installed show the trap
 * (show_foreign_trap()).
 *
 * Return: 0; -EEXIST if installing finds our breakpoint in an anonymous
 * copy; -EBUSY if the opcode there is not the one expected (installing:
 * the instruction's own, or a trap in an anonymous copy where a site is
 * being installed; removing: our breakpoint in an anonymous copy); -EXDEV if
 * the page is not the file's (see page_is_files()); -EINVAL if @vma may
 * not take a breakpoint; -ENOSPC, -ENOMEM, or a fault's -errno.
 */
int write_opcode(struct arch_uprobe *auprobe,
		 struct vm_area_struct *vma, unsigned long vaddr,
			uprobe_opcode_t opcode, bool restore_file)
{
	unsigned int flags = FOLL_FORCE | FOLL_SPLIT_PMD;
	struct page *old, *file_page;
	struct mm_struct *mm = vma->vm_mm;
	uprobe_opcode_t cur = 0;
	bool install = is_swbp_insn(&opcode);
	long got;
	int ret;

	mmap_assert_write_locked(mm);
retry:
	/* The page is usually there: look it up before faulting it in. */
	old = follow_page(vma, vaddr, FOLL_GET | FOLL_SPLIT_PMD);
	if (IS_ERR_OR_NULL(old)) {
		got = get_user_pages_remote(mm, vaddr, 1, flags, &old, &vma,
					    NULL);
		if (got <= 0)
			return got ? got : -EFAULT;
	}
	/* Removal also works after the mapping was made writable. */
	if (install ? !vma_can_probe(vma) :
	    !vma->vm_file || (vma->vm_flags & VM_MAYSHARE)) {
		ret = -EINVAL;
		goto put_old;
	}
	if (!page_is_files(vma, vaddr, old)) {
		ret = -EXDEV;
		goto put_old;
	}
	memcpy_from_page((void *)&cur, old, offset_in_page(vaddr),
			 UPROBE_SWBP_INSN_SIZE);
	if (!install && cur == opcode) {
		ret = 0;	/* already restored */
		goto put_old;
	}
	/*
	 * Somebody else changed these bytes, or the breakpoint is not ours:
	 * ours always live in an anonymous copy, and installing one where a
	 * breakpoint already is would take over somebody else's.
	 */
	if (install && is_swbp_insn(&cur) && PageAnon(old)) {
		ret = -EEXIST;	/* somebody's breakpoint in a copy of the page */
		goto put_old;
	}
	if (install && is_trap_insn(&cur) && PageAnon(old)) {
		/* A debugger's trap of another kind: the site shows it. */
		ret = show_foreign_trap(mm, vaddr, cur);
		if (ret)
			goto put_old;
	} else if (install ?
		   memcmp(&cur, &auprobe->insn, UPROBE_SWBP_INSN_SIZE) :
		   !is_swbp_insn(&cur) || !PageAnon(old)) {
		ret = -EBUSY;
		goto put_old;
	}

	if (!install && restore_file) {
		/*
		 * Back to the file's page if nothing else differs: the usual
		 * removal, and one that needs no allocation (so it cannot
		 * fail for lack of memory and orphan the breakpoint).
		 */
		file_page = find_get_page(vma->vm_file->f_mapping,
					  linear_page_index(vma, vaddr));
		if (file_page) {
			ret = map_file_page(vma, vaddr, old, file_page, opcode);
			put_page(file_page);
			if (ret != -EPERM)
				goto put_old;
		}
	}
	ret = patch_page(vma, vaddr, old, &opcode, UPROBE_SWBP_INSN_SIZE);
put_old:
	put_page(old);
	if (ret == -EAGAIN) {
		cond_resched();
		goto retry;
	}
	return ret;
}

/**
 * uprobe_write_opcode - put @opcode at @vaddr in @mm without touching the file
 * @auprobe: the probe's decoded instruction (original bytes in ->insn)
 * @mm: the address space, whose mmap_lock is held for write
 * @vaddr: user address of the probed instruction
 * @opcode: a breakpoint (is_swbp_insn()) to install it, else the original
 *	instruction's first UPROBE_SWBP_INSN_SIZE bytes to remove it
 *
 * The file's page is never written: installing maps a private anonymous
 * copy of the page with the breakpoint, or writes it into the copy already
 * there if this mm is the copy's only user. Removing restores the opcode;
 * when the result equals the file's page, the copy is dropped and the
 * page-cache page faults back in, so that no anonymous copy is left.
 * Only the file's own page or an anonymous copy of it is ever written.
 *
 * Return: 0, or -errno (-EBUSY: the opcode there is not the expected one;
 * -EEXIST: installing where a breakpoint already is, in a private copy of
 * the page; -EXDEV: the page there is not the file's, e.g. the zero page).
 */
int uprobe_write_opcode(struct arch_uprobe *auprobe, struct mm_struct *mm,
			unsigned long vaddr, uprobe_opcode_t opcode)
{
	struct vm_area_struct *vma = vma_lookup(mm, vaddr);

	mmap_assert_write_locked(mm);
	if (!vma)
		return -EFAULT;
	return write_opcode(auprobe, vma, vaddr, opcode, true);
}

/* Where @uprobe's counter is in @mm, or 0 if that page is not mapped. */
static unsigned long ref_ctr_vaddr(struct uprobe *uprobe, struct mm_struct *mm)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct inode *inode = uprobe->ui->inode;
	struct vm_area_struct *vma;

	mmap_assert_locked(mm);
	for_each_vma(vmi, vma) {
		if (!(vma->vm_flags & VM_WRITE) || (vma->vm_flags & VM_MAYSHARE))
			continue;
		if (vma_maps_offset(vma, inode, uprobe->ref_ctr_offset))
			return offset_to_vaddr(vma, uprobe->ref_ctr_offset);
	}
	return 0;
}

/*
 * Add @delta (+1 or -1) to @uprobe's counter in @mm. Refuses to wrap:
 * the counter is an unsigned short that the tracee reads as "enabled when
 * non-zero". @quiet: a counter already at 0 is not worth a warning (the
 * site's own copy of the data went away and a new one was mapped).
 *
 * Return: 0, -ENOENT if the counter is not mapped, or -errno.
 */
int update_ref_ctr(struct uprobe *uprobe, struct mm_struct *mm,
		   int delta, bool quiet)
{
	struct vm_area_struct *vma;
	unsigned long vaddr;
	struct page *page;
	u16 *ctr;
	void *kaddr;
	long got;
	int ret = 0;

	mmap_assert_write_locked(mm);
	vaddr = ref_ctr_vaddr(uprobe, mm);
	if (!vaddr)
		return -ENOENT;
	got = get_user_pages_remote(mm, vaddr, 1, FOLL_WRITE | FOLL_FORCE,
				    &page, &vma, NULL);
	if (got <= 0)
		return got ? got : -EFAULT;
	kaddr = kmap_local_page(page);
	ctr = kaddr + offset_in_page(vaddr);
	if (delta < 0 && *ctr == 0 && quiet) {
		ret = -ERANGE;
	} else if ((delta > 0 && *ctr == U16_MAX) || (delta < 0 && *ctr == 0)) {
		pr_warn_ratelimited("uprobes: cannot %s the counter of inode %lu at %#lx: it is %u\n",
				    delta > 0 ? "raise" : "lower",
				    uprobe->ui->inode->i_ino, vaddr, *ctr);
		ret = -ERANGE;
	} else {
		*ctr += delta;
	}
	kunmap_local(kaddr);
	set_page_dirty_lock(page);
	put_page(page);
	return ret;
}
