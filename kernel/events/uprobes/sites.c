// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: the per-mm site table, and debuggers' access to it (remote_lock).
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

struct uprobes_mm *get_uprobes_mm(struct mm_struct *mm)
{
	struct uprobes_mm *um = uprobes_mm_locked(mm);

	mmap_assert_write_locked(mm);
	if (um)
		return um;
	um = kzalloc(sizeof(*um), GFP_KERNEL);
	if (!um)
		return NULL;
	xa_init(&um->sites);
	spin_lock_init(&um->stub_lock);
	mutex_init(&um->remote_lock);
	/* Initialised first: pairs with smp_load_acquire() in uprobes_mm_of(). */
	smp_store_release(&mm->uprobes_state.sites, um);
	return um;
}

void free_site_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct uprobe_site, rcu));
}

/*
 * Where can @uprobe's sites in @mm be? At the addresses where a mapping
 * shows its offset, unless uprobe_munmap() ever detached a site of @mm
 * from its mapping (um->vmas_changed): then anywhere, and callers walk
 * every site. The site of @uprobe where @vma shows its offset, or NULL.
 */
static struct uprobe_site *mapped_site(struct uprobes_mm *um,
				       struct uprobe *uprobe,
				       struct vm_area_struct *vma)
{
	struct uprobe_site *site;
	unsigned long vaddr;

	mmap_assert_write_locked(vma->vm_mm);
	if (!vma_maps_offset(vma, uprobe->ui->inode, uprobe->offset))
		return NULL;
	vaddr = offset_to_vaddr(vma, uprobe->offset);
	/* Writers fill and empty the cache under this lock: no RCU needed. */
	site = rcu_dereference_protected(*hot_entry(um, vaddr),
					 lockdep_is_held(&vma->vm_mm->mmap_lock));
	if (!site || site->vaddr != vaddr)
		site = xa_load(&um->sites, vaddr);
	return site && site->uprobe == uprobe ? site : NULL;
}

/*
 * The SDT counter counts mms, not mappings: a probe's +1 in an mm is held
 * by one of its sites there (ref_ctr_done), taken by the first and handed
 * over to another site when the holder goes. Caller holds mmap_lock.
 */
struct uprobe_site *ctr_holder_site(struct mm_struct *mm,
				    struct uprobe *uprobe,
				    struct uprobe_site *except, bool holder)
{
	struct uprobes_mm *um = uprobes_mm_locked(mm);
	struct vm_area_struct *vma;
	struct uprobe_site *site;
	unsigned long index;

	if (!READ_ONCE(um->vmas_changed)) {
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			site = mapped_site(um, uprobe, vma);
			if (site && site != except && !site->pending &&
			    (!holder || site->ref_ctr_done))
				return site;
		}
		return NULL;
	}
	xa_for_each(&um->sites, index, site) {
		if (site != except && site->uprobe == uprobe &&
		    !site->pending && (!holder || site->ref_ctr_done))
			return site;
	}
	return NULL;
}

/*
 * Raise @uprobe's counter in @mm for @site, unless another site of it
 * there holds the +1 already or the counter is not mapped yet (then
 * apply_pending_ref_ctrs() raises it when it is).
 */
static int raise_ctr(struct mm_struct *mm, struct uprobe_site *site)
{
	struct uprobe *uprobe = site->uprobe;
	int ret;

	if (!uprobe->ref_ctr_offset || ctr_holder_site(mm, uprobe, site, true))
		return 0;
	ret = update_ref_ctr(uprobe, mm, 1, false);
	if (!ret)
		site->ref_ctr_done = true;
	return ret == -ENOENT ? 0 : ret;
}

/*
 * @site goes: if it holds its probe's +1 in @mm, hand it to another site
 * of the probe there, or take it off the counter. @dead: the site's text
 * went away, and the counter may be a fresh copy from the file.
 */
static void drop_ctr(struct mm_struct *mm, struct uprobe_site *site,
		     bool dead)
{
	struct uprobe_site *heir;

	if (!site->ref_ctr_done)
		return;
	site->ref_ctr_done = false;
	heir = ctr_holder_site(mm, site->uprobe, site, false);
	if (heir)
		heir->ref_ctr_done = true;
	else
		update_ref_ctr(site->uprobe, mm, -1, dead);
}

/*
 * Forget @site, whose breakpoint is gone or was never written: drop its
 * counter, take it out of the table and free it after RCU.
 */
void forget_site(struct mm_struct *mm, struct uprobe_site *site,
		 bool dead)
{
	struct uprobes_mm *um = uprobes_mm_locked(mm);

	mmap_assert_write_locked(mm);
	drop_ctr(mm, site, dead);
	hot_del(mm, um, site);
	sites_erase(um, site->vaddr);
	retire_slot(mm, site->vaddr);
	site_put_uprobe(site);
	call_rcu(&site->rcu, free_site_rcu);
}

/* One decode of a probe at a time (analyze_in_mm()); nests in mmap_lock. */
static DEFINE_MUTEX(analyze_lock);

/*
 * Make sure @uprobe is decoded before its first breakpoint goes into @mm at
 * @vaddr. An architecture that decodes per mm
 * (!CONFIG_ARCH_UPROBES_ANALYZE_WITHOUT_MM) is asked here, with the first
 * mm; one that does not was asked at registration, and is asked here
 * only whether @mm's mode can run what it decoded
 * (arch_uprobe_refuses_mm()). A refusal for @mm's CPU mode (-EOPNOTSUPP)
 * leaves the probe undecoded, for the next mm to try, and @mm out; any
 * other refusal means no mm can run the probe: it sets UPROBE_REFUSED,
 * which makes the install fail the registration (install_fatal()) with
 * the architecture's errno; so does arch_uprobe_refuses_mm()'s.
 *
 * Return: 0; -EOPNOTSUPP (this mm only); the architecture's refusal.
 */
static int analyze_in_mm(struct uprobe *uprobe, struct mm_struct *mm,
			 unsigned long vaddr)
{
	int ret = 0;

	/* Pairs with the smp_mb__before_atomic() below. */
	if (test_bit_acquire(UPROBE_ANALYZED, &uprobe->flags))
		return arch_uprobe_refuses_mm(&uprobe->arch, mm);
	if (IS_ENABLED(CONFIG_ARCH_UPROBES_ANALYZE_WITHOUT_MM))
		return -ENOEXEC;
	mutex_lock(&analyze_lock);
	if (!test_bit(UPROBE_ANALYZED, &uprobe->flags)) {
		ret = arch_uprobe_analyze_insn(&uprobe->arch, mm, vaddr);
		if (!ret) {
			/* The decoded @arch before the bit; see above. */
			smp_mb__before_atomic();
			set_bit(UPROBE_ANALYZED, &uprobe->flags);
		} else if (ret != -EOPNOTSUPP) {
			set_bit(UPROBE_REFUSED, &uprobe->flags);
		}
	}
	mutex_unlock(&analyze_lock);
	return ret;
}

/*
 * Read the UPROBE_SWBP_INSN_SIZE bytes at @vaddr of @mm into *@opcode.
 * Caller holds the mmap_lock.
 */
static int read_opcode(struct mm_struct *mm, unsigned long vaddr,
		       uprobe_opcode_t *opcode)
{
	struct page *page;
	long got;

	mmap_assert_locked(mm);
	got = get_user_pages_remote(mm, vaddr, 1, FOLL_FORCE, &page, NULL,
				    NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	memcpy_from_page((void *)opcode, page, offset_in_page(vaddr),
			 UPROBE_SWBP_INSN_SIZE);
	put_page(page);
	return 0;
}

/*
 * Is the instruction at @vaddr of @mm one that @is recognises (our
 * breakpoint, or any trap)? 1 if so, 0 if not, -errno if it cannot be
 * read. Caller holds the mmap_lock.
 */
int trap_at(struct mm_struct *mm, unsigned long vaddr,
	    bool (*is)(uprobe_opcode_t *insn))
{
	uprobe_opcode_t opcode = 0;
	int ret = read_opcode(mm, vaddr, &opcode);

	return ret ? ret : is(&opcode);
}

/* Has @um a detached site of @uprobe (a breakpoint of ours that moved)? */
static bool detached_site_of(struct uprobes_mm *um, struct uprobe *uprobe)
{
	struct uprobe_site *site;
	unsigned long index;

	if (!um->vmas_changed)
		return false;
	xa_for_each(&um->sites, index, site) {
		if (site->uprobe == uprobe && site->detached)
			return true;
	}
	return false;
}

/*
 * Patch @uprobe in at @vaddr of @vma (where @vma maps its offset) and
 * record the site; the probe's counter goes up once per mm, now or when
 * its page gets mapped. Idempotent.
 *
 * The site enters the table first, pending, and the counter goes up
 * before the breakpoint is written: once the breakpoint can trap, its site
 * is there and the marker it guards is enabled. If anything fails, nothing was
 * patched, and the site leaves the table and is freed after RCU (a hit
 * may have found it pending).
 */
int install_site(struct uprobe *uprobe, struct vm_area_struct *vma,
		 unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_site *site;
	struct uprobes_mm *um;
	int ret;

	mmap_assert_write_locked(mm);
	um = get_uprobes_mm(mm);
	if (!um)
		return -ENOMEM;
	settle_dead(mm);
	site = xa_load(&um->sites, vaddr);
	if (site)
		return site->uprobe == uprobe ? 0 : -EBUSY;
	ret = analyze_in_mm(uprobe, mm, vaddr);
	if (ret)
		return ret;

	site = kzalloc(sizeof(*site), GFP_KERNEL);
	if (!site)
		return -ENOMEM;
	site->uprobe = site_get_uprobe(uprobe);
	site->vaddr = vaddr;
	site->shown = orig_opcode(uprobe);
	site->pending = true;
	ret = sites_insert(um, site);
	if (ret)
		goto put_site;
	ret = raise_ctr(mm, site);
	if (ret)
		goto erase_site;
	ret = set_swbp(&uprobe->arch, mm, vaddr);
	if (ret == -EEXIST) {
		/*
		 * A breakpoint in a copy of the page: a debugger's, which it
		 * stays (see "Debuggers"), unless it is ours and mremap()
		 * moved it here (find_hit_slow() adopts it then).
		 */
		ret = detached_site_of(um, uprobe) ? -EBUSY :
		      read_opcode(mm, vaddr, &site->shown);
	}
	if (ret)
		goto drop_ctr;
	hot_add(mm, um, site);
	/* A hit that saw it pending waits for our mmap_lock: see find_hit(). */
	WRITE_ONCE(site->pending, false);
	return 0;

drop_ctr:
	drop_ctr(mm, site, false);
erase_site:
	sites_erase(um, vaddr);
put_site:
	site_put_uprobe(site);
	call_rcu(&site->rcu, free_site_rcu);
	return ret;
}

/*
 * install_site() finds @trap, a trap that is not our breakpoint, at @vaddr in
 * a private copy of the page: a debugger's breakpoint, written there before
 * the probe came (uprobe_remote_write() takes one written after the same
 * way). Ours goes over it, and the site shows the debugger its own, which
 * then traps for it (see "Debuggers"). Called by write_opcode(); -EBUSY
 * unless a site is being installed at @vaddr.
 */
int show_foreign_trap(struct mm_struct *mm, unsigned long vaddr,
		      uprobe_opcode_t trap)
{
	struct uprobes_mm *um = uprobes_mm_locked(mm);
	struct uprobe_site *site;

	mmap_assert_write_locked(mm);
	site = um ? xa_load(&um->sites, vaddr) : NULL;
	if (!site || !site->pending)
		return -EBUSY;
	WRITE_ONCE(site->shown, trap);
	return 0;
}

/*
 * Does @vma at @vaddr still show our breakpoint for @uprobe? That is what a
 * detached site must show to be re-attached.
 */
bool bp_still_there(struct uprobe *uprobe, struct vm_area_struct *vma,
		    unsigned long vaddr)
{
	if (!vma_maps_offset(vma, uprobe->ui->inode, uprobe->offset) ||
	    offset_to_vaddr(vma, uprobe->offset) != vaddr)
		return false;
	uprobe_opcode_t orig = orig_opcode(uprobe);

	return !is_swbp_insn(&orig) &&
	       trap_at(vma->vm_mm, vaddr, is_swbp_insn) == 1;
}

/* Does @vma still show @site's breakpoint, or its jump? */
bool site_still_there(struct uprobe_site *site,
		      struct vm_area_struct *vma)
{
	if (site->stub)
		return jump_there(site, vma, NULL);
	return bp_still_there(site->uprobe, vma, site->vaddr);
}

/*
 * Does another attached site of @um share @site's page? Then the page
 * still differs from the file's after @site's opcode is restored, and the
 * 4 KiB comparison that would find that out is skipped.
 */
static bool page_has_other_site(struct uprobes_mm *um,
				struct uprobe_site *site)
{
	unsigned long first = site->vaddr & PAGE_MASK, index = first;
	struct uprobe_site *other;

	if (um->nr_sites < 2)
		return false;	/* @site is the only one: spare the walk */
	xa_for_each_range(&um->sites, index, other, first,
			  first + PAGE_SIZE - 1) {
		if (other != site && !READ_ONCE(other->detached))
			return true;
	}
	return false;
}

/*
 * Remove @site from @mm: if our breakpoint is still there, restore what a
 * debugger sees there (the instruction, or the debugger's breakpoint), take
 * the probe's +1 off the counter if this was its last site in @mm (else
 * hand it over), forget the site. A restore that fails for lack of memory
 * (or a signal) keeps the site, which still owns its breakpoint: the next
 * walk, or a hit that nobody wants, tries again.
 *
 * Return: 0, or the error that kept the site.
 */
int remove_site(struct mm_struct *mm, struct uprobe_site *site)
{
	struct uprobes_mm *um = uprobes_mm_locked(mm);
	struct uprobe *uprobe = site->uprobe;
	struct vm_area_struct *vma;
	uprobe_opcode_t shown;
	bool dead = true;
	int ret;

	mmap_assert_write_locked(mm);
	ret = undo_jump(mm, site);
	if (ret)
		return ret;
	vma = vma_lookup(mm, site->vaddr);
	if (vma && (!site->detached || bp_still_there(uprobe, vma, site->vaddr))) {
		dead = false;
		/* What a debugger sees there: a breakpoint like ours stays. */
		shown = READ_ONCE(site->shown);
		ret = is_swbp_insn(&shown) ? 0 :
		      write_opcode(&uprobe->arch, vma, site->vaddr, shown,
				   !page_has_other_site(um, site));
		if (ret == -ENOMEM || ret == -ENOSPC || ret == -EINTR ||
		    ret == -ERESTARTSYS)
			return ret;
	}
	forget_site(mm, site, dead);
	return 0;
}

/*
 * The one mapping of @uprobe's offset that a walk saw in @mm (@hints, @nr
 * of them), if @mm still maps the offset there: then only it needs a
 * visit. NULL if the caller must visit every mapping of @mm: the walk saw
 * several, or took the whole file, or the mapping changed since. New
 * mappings of the offset since the walk are not missed: uprobe_mmap()
 * gave them what the consumers wanted then.
 */
static struct vm_area_struct *hinted_vma(struct uprobe *uprobe,
					 struct mm_struct *mm,
					 const struct map_entry *hints, int nr)
{
	struct vm_area_struct *vma;

	mmap_assert_locked(mm);
	if (nr != 1 || !hints->vaddr)
		return NULL;
	vma = vma_lookup(mm, hints->vaddr);
	if (!vma || !vma_maps_offset(vma, uprobe->ui->inode, uprobe->offset) ||
	    offset_to_vaddr(vma, uprobe->offset) != hints->vaddr)
		return NULL;
	return vma;
}

/*
 * Remove every site of @uprobe in @mm (there is one per mapping of it);
 * @hints: where a walk saw it mapped.
 */
void remove_sites(struct uprobe *uprobe, struct mm_struct *mm,
		  const struct map_entry *hints, int nr)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct uprobes_mm *um = uprobes_mm_locked(mm);
	struct vm_area_struct *vma;
	struct uprobe_site *site;
	unsigned long index;

	mmap_assert_write_locked(mm);
	if (!um)
		return;
	if (READ_ONCE(um->vmas_changed)) {
		xa_for_each(&um->sites, index, site) {
			if (site->uprobe == uprobe)
				remove_site(mm, site);
		}
		return;
	}
	vma = hinted_vma(uprobe, mm, hints, nr);
	if (vma) {
		site = mapped_site(um, uprobe, vma);
		if (site)
			remove_site(mm, site);
		return;
	}
	/* Removing a site changes page tables, not the VMAs. */
	for_each_vma(vmi, vma) {
		site = mapped_site(um, uprobe, vma);
		if (site)
			remove_site(mm, site);
	}
}

/*
 * Does @err of an install of @uprobe fail the registration? Only errors
 * of the system do: no memory, an instruction that cannot be decoded
 * (UPROBE_REFUSED) or one the mode of @mm's tasks cannot run
 * (arch_uprobe_refuses_mm()), a signal to the registering task. The others come
 * from what one process did to its own mappings (changed the instruction,
 * filled its SDT counter, mapped something that is not the file's page,
 * hit its memory cgroup's limit): that process is left out and named,
 * everybody else is traced.
 */
static bool install_fatal(struct uprobe *uprobe, struct mm_struct *mm,
			  int err)
{
	return err == -ENOMEM || err == -ENOEXEC || err == -EINTR ||
	       err == -ERESTARTSYS || test_bit(UPROBE_REFUSED, &uprobe->flags) ||
	       (test_bit(UPROBE_ANALYZED, &uprobe->flags) &&
		err == arch_uprobe_refuses_mm(&uprobe->arch, mm));
}

/*
 * Install @uprobe in @vma, which maps its offset, if it may go there;
 * an executable mapping that may not, or a refused install, is reported.
 * Return: 0, or an error that fails the registration (install_fatal()).
 */
static int install_in_vma(struct uprobe *uprobe, struct vm_area_struct *vma)
{
	int ret;

	if (!vma_can_probe(vma)) {
		if (vma->vm_flags & VM_EXEC)
			report_refused(vma, uprobe, 0);
		return 0;
	}
	ret = install_site(uprobe, vma, offset_to_vaddr(vma, uprobe->offset));
	if (!ret || install_fatal(uprobe, vma->vm_mm, ret))
		return ret;
	report_refused(vma, uprobe, ret);
	return 0;
}

/*
 * Install @uprobe at every mapping of its offset in @mm: those of @hints
 * if they still hold, else all. Return: the first error that fails the
 * registration.
 */
int install_sites(struct uprobe *uprobe, struct mm_struct *mm,
		  const struct map_entry *hints, int nr)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	int ret, err = 0;

	mmap_assert_write_locked(mm);
	vma = hinted_vma(uprobe, mm, hints, nr);
	if (vma)
		return install_in_vma(uprobe, vma);
	for_each_vma(vmi, vma) {
		if (!vma_maps_offset(vma, uprobe->ui->inode, uprobe->offset))
			continue;
		ret = install_in_vma(uprobe, vma);
		if (ret && !err)
			err = ret;
	}
	return err;
}

/*
 * Is detached @site still at its place in @vma, whose page @kaddr maps at
 * @page (a split or a merge of the mapping detached it, and nothing has
 * settled it yet: settle_dead())? @vma shows its probe's offset at its
 * address, and the page holds its breakpoint or, with @stub, its jump.
 */
static bool detached_site_here(struct uprobe_site *site,
			       struct vm_area_struct *vma, const void *kaddr,
			       unsigned long page, unsigned long stub)
{
	struct uprobe *uprobe = site->uprobe;
	u8 jump[UPROBE_JUMP_MAX];

	if (!vma_maps_offset(vma, uprobe->ui->inode, uprobe->offset) ||
	    offset_to_vaddr(vma, uprobe->offset) != site->vaddr)
		return false;
	if (!stub)
		return true;	/* the breakpoint: the caller checks it */
	return arch_uprobe_fill_jump(site->vaddr, stub, jump) &&
	       !memcmp(kaddr + (site->vaddr - page), jump, site->jump_len);
}

/*
 * The next site of @um, from *@index up to @last, with our breakpoint or
 * jump in the page of @vma that @kaddr maps: attached (or detached by a
 * split or merge of the mapping but still there), wholly in that page and
 * in @vma, and ending after @first. *@len gets how many bytes of the text
 * it changed, read once. Caller holds the mmap_lock and @um->remote_lock.
 */
static struct uprobe_site *next_site_in_page(struct uprobes_mm *um,
					     struct vm_area_struct *vma,
					     const void *kaddr,
					     unsigned long *index,
					     unsigned long first,
					     unsigned long last,
					     unsigned int *len)
{
	unsigned long page = *index & PAGE_MASK;
	struct uprobe_site *site;
	uprobe_opcode_t cur = 0;
	unsigned long stub;

	mmap_assert_locked(vma->vm_mm);
	lockdep_assert_held(&um->remote_lock);
	xa_for_each_range(&um->sites, *index, site, *index, last) {
		stub = READ_ONCE(site->stub);
		*len = stub ? site->jump_len : UPROBE_SWBP_INSN_SIZE;
		if (site->pending || site->vaddr + *len <= first ||
		    site->vaddr < vma->vm_start ||
		    site->vaddr + *len > vma->vm_end ||
		    site->vaddr + *len > page + PAGE_SIZE)
			continue;
		if (READ_ONCE(site->detached) &&
		    !detached_site_here(site, vma, kaddr, page, stub))
			continue;
		memcpy(&cur, kaddr + (site->vaddr - page),
		       UPROBE_SWBP_INSN_SIZE);
		if (stub || is_swbp_insn(&cur)) {
			(*index)++;
			return site;
		}
	}
	return NULL;
}

/* Where a debugger access of [@addr, @addr + @len) starts looking for sites. */
static unsigned long first_site_index(struct vm_area_struct *vma,
				      unsigned long addr)
{
	unsigned long first = addr & PAGE_MASK;

	if (addr - first >= UPROBE_JUMP_MAX)
		first = addr - (UPROBE_JUMP_MAX - 1);
	return max(first, vma->vm_start);
}

/**
 * uprobe_remote_read - show a debugger the text under our breakpoints
 * @vma: the mapping read; its mm's mmap_lock is held
 * @page: the page read
 * @kaddr: a kernel mapping of @page
 * @addr: the user address of @buf[0], in that page
 * @buf: where the bytes go
 * @len: how many bytes
 *
 * ptrace() and /proc/pid/mem read what is there for the debugger where our
 * breakpoint is: the original instruction, or the breakpoint the debugger
 * wrote over ours. The copy and the fix-ups are made under the mm's
 * remote_lock, which every change a debugger makes to a site also holds,
 * so a read sees a site whole, before or after such a change.
 *
 * Return: true if the read was done here, false if the caller does it
 * (no probe in the process).
 */
bool uprobe_remote_read(struct vm_area_struct *vma, struct page *page,
			const void *kaddr, unsigned long addr, void *buf,
			int len)
{
	struct uprobes_mm *um = uprobes_mm_of(vma->vm_mm);
	unsigned long index, from, to;
	struct uprobe_site *site;
	u8 orig[UPROBE_JUMP_MAX];
	uprobe_opcode_t shown;
	unsigned int n;

	if (!um || !vma->vm_file || len <= 0)
		return false;
	mutex_lock(&um->remote_lock);
	copy_from_user_page(vma, page, addr, buf,
			    kaddr + offset_in_page(addr), len);
	index = first_site_index(vma, addr);
	while ((site = next_site_in_page(um, vma, kaddr, &index, addr,
					 addr + len - 1, &n))) {
		shown = READ_ONCE(site->shown);
		/* A jump site: the rest of the instruction, from @saved. */
		memcpy(orig, site->saved, n);
		memcpy(orig, &shown, UPROBE_SWBP_INSN_SIZE);
		from = max(site->vaddr, addr);
		to = min(site->vaddr + n, addr + len);
		if (WARN_ON_ONCE(to <= from))
			continue;
		memcpy(buf + (from - addr), orig + (from - site->vaddr),
		       to - from);
	}
	mutex_unlock(&um->remote_lock);
	return true;
}

/* An interrupt on every CPU; its return serialises what the CPU executes. */
static void sync_cpus_ipi(void *info)
{
}

/*
 * Put our breakpoint back over the jump of @site in @page, which @kaddr
 * maps at @page_va and other threads may be running, as a debugger's write
 * over the jump must (see "Debuggers"): the breakpoint first, so that a
 * CPU that fetches the site from then on traps there; every CPU
 * serialised, so that none runs the jump it fetched before; then the rest
 * of the instruction, and the CPUs serialised again before the debugger's
 * own bytes go in. No CPU ever runs a jump whose displacement is half
 * written. Caller holds the mmap_lock and @um->remote_lock.
 */
void restore_jump_locked(struct uprobes_mm *um, struct vm_area_struct *vma,
			 struct page *page, void *kaddr,
			 unsigned long page_va, struct uprobe_site *site)
{
	const unsigned int bp = UPROBE_SWBP_INSN_SIZE;
	void *at = kaddr + (site->vaddr - page_va);

	lockdep_assert_held(&um->remote_lock);
	copy_to_user_page(vma, page, site->vaddr, at, site->saved, bp);
	WRITE_ONCE(site->stub, 0);
	/* Pairs with the serialising return from this interrupt on each CPU. */
	on_each_cpu(sync_cpus_ipi, NULL, 1);
	copy_to_user_page(vma, page, site->vaddr + bp, at + bp,
			  site->saved + bp, site->jump_len - bp);
	/* The same, for the rest of the instruction. */
	on_each_cpu(sync_cpus_ipi, NULL, 1);
}

/**
 * uprobe_remote_write - take a debugger's write over our breakpoints
 * @vma: the mapping written; its mm's mmap_lock is held
 * @page: the page written (a private copy: FOLL_FORCE broke COW)
 * @kaddr: a kernel mapping of @page
 * @addr: the user address where @buf goes, in that page
 * @buf: what the debugger writes
 * @len: how many bytes
 *
 * A write that covers our breakpoint writes what it is shown instead
 * (&struct uprobe_site.shown): the original instruction, or a breakpoint,
 * keep ours in memory (a breakpoint of the debugger's then traps for it:
 * find_hit()); anything else is written, and the probe is off at that
 * address in this process. A write that touches a jump site puts our
 * breakpoint back first (restore_jump_locked()). All of it under the mm's
 * remote_lock, which every debugger access of the mm takes.
 *
 * Return: true if the write was done here, false if the caller does it
 * (nothing of ours in the range).
 */
bool uprobe_remote_write(struct vm_area_struct *vma, struct page *page,
			 void *kaddr, unsigned long addr, const void *buf,
			 int len)
{
	struct uprobes_mm *um = uprobes_mm_of(vma->vm_mm);
	unsigned long index, from, to, done = addr, page_va = addr & PAGE_MASK;
	struct uprobe_site *site;
	uprobe_opcode_t shown;
	bool found = false;
	unsigned int n;

	if (!um || !vma->vm_file || len <= 0)
		return false;
	mutex_lock(&um->remote_lock);
	index = first_site_index(vma, addr);
	while ((site = next_site_in_page(um, vma, kaddr, &index, addr,
					 addr + len - 1, &n))) {
		found = true;
		if (n != UPROBE_SWBP_INSN_SIZE) {
			restore_jump_locked(um, vma, page, kaddr, page_va, site);
			if (site->vaddr + UPROBE_SWBP_INSN_SIZE <= addr)
				continue;	/* the write starts after it */
		}
		from = max(site->vaddr, addr);
		to = min(site->vaddr + UPROBE_SWBP_INSN_SIZE, addr + len);
		if (WARN_ON_ONCE(to <= from))
			continue;
		if (from > done)
			copy_to_user_page(vma, page, done,
					  kaddr + (done - page_va),
					  buf + (done - addr), from - done);
		done = to;
		shown = READ_ONCE(site->shown);
		memcpy((void *)&shown + (from - site->vaddr),
		       buf + (from - addr), to - from);
		WRITE_ONCE(site->shown, shown);
		if (is_trap_insn(&shown) ||
		    !memcmp(&shown, &site->uprobe->arch.insn,
			    UPROBE_SWBP_INSN_SIZE))
			continue;
		copy_to_user_page(vma, page, site->vaddr,
				  kaddr + (site->vaddr - page_va), &shown,
				  UPROBE_SWBP_INSN_SIZE);
		pr_notice_ratelimited("uprobes: %s[%d] wrote over a probed instruction (at %#lx): the probe is off there in that process\n",
				      current->comm, task_pid_nr(current),
				      site->vaddr);
	}
	if (found && addr + len > done)
		copy_to_user_page(vma, page, done, kaddr + (done - page_va),
				  buf + (done - addr), addr + len - done);
	mutex_unlock(&um->remote_lock);
	return found;
}
