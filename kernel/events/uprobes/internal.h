/* SPDX-License-Identifier: GPL-2.0+ */
/*
 * User-space probes (uprobes): the core.
 *
 * A probe is an (inode, offset) with consumers. The core puts its breakpoint
 * into every mm that maps the offset and that a consumer wants, runs the
 * handlers on a hit, and has the architecture carry out the original
 * instruction: emulated, or run from a copy in the mm's XOL area. core.c
 * holds the registry of probes, the consumer API and the walks over the mms
 * of a file; patch.c text patching and the SDT counters; sites.c the per-mm
 * site table and debuggers' access to it; mm.c the mm hooks (mmap, munmap,
 * mremap, fork, exec, exit); xol.c the XOL area, its slots, boosted copies
 * and their reuse; task.c the per-task state and return instances; hit.c
 * the hit path; return.c return probes and uprobes' system calls; jump.c
 * jump sites and their stub areas; arch.c the __weak defaults of the
 * architecture interface.
 *
 * Objects, and what keeps them:
 *   uprobe_inode	per probed inode, in uprobe_inodes; pins the inode, a
 *			reference per probe in its xarray; freed by RCU.
 *   uprobe		per (inode, offset); a reference while it has
 *			consumers, per site, per stepping task; freed by SRCU.
 *   uprobes_mm		per mm, its site table (vaddr -> site); freed by RCU.
 *   uprobe_site	one breakpoint in one mm, in the table before it is
 *			written and after it is gone; holds a uprobe
 *			reference; freed by RCU.
 *   xol_area		per mm, owned by it, freed by uprobe_clear_state().
 *   uprobe_task	per task, freed by uprobe_free_utask() (exec, exit).
 *   return_instance	a pending return; no reference, finds its probe by
 *			key and id (uprobes_by_key).
 *   uprobe_stub_area	a page of stubs in one mm; freed by RCU once no
 *			jump leads there.
 *
 * Lock order (each lock is taken inside the one it is indented under):
 *
 * event_mutex (the front end's, around its calls into the core)
 *   uprobe->reg_lock (register, unregister, uprobe_apply() of one probe)
 *     dup_mmap_sem (percpu rwsem; read: fork, around dup_mmap();
 *                   write: a walk's last pass)
 *       mapping->i_mmap_rwsem (read: collect_maps(); dropped before any
 *                              mmap_lock is taken)
 *       mm->mmap_lock (write: a walk's visit, fork, every change of a site
 *                      table or counter, the hit path's slow cases;
 *                      read: debuggers, the hit path's lookups)
 *         mm->mmap_lock of a fork child (uprobe_dup_sites())
 *         analyze_lock (analyze_in_mm())
 *         uprobes_mm->remote_lock (a debugger's access, mmap_lock read;
 *                                  undo_jump_in_place(), mmap_lock write)
 *           page lock (undo_jump_in_place())
 *         uprobes_mm->stub_lock (spinlock: a stub area mapped, mmap_lock
 *                                write; one unmapped, read or write)
 *         xol_area->lock (allocating, filling and retiring slots; also
 *                         taken with no mmap_lock held, by get_slot())
 *           tasklist_lock (read: slots_in_use())
 *         page lock (patch_page(), write_in_place())
 *           page table lock
 *
 * The xarrays' own locks are innermost. The hit path takes none of these in
 * its uprobes_srcu read section. mmput() takes only the dying mm's
 * mmap_lock (uprobe_clear_state()), so no allocation that may reclaim is
 * made under a lock it can take.
 *
 * Design: Documentation/trace/uprobes.rst
 */
#ifndef _KERNEL_EVENTS_UPROBES_INTERNAL_H
#define _KERNEL_EVENTS_UPROBES_INTERNAL_H

#ifdef CONFIG_GENERIC_ENTRY
#include <linux/entry-common.h>
#endif
#include <linux/hash.h>
#include <linux/highmem.h>
#include <linux/jump_label.h>
#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mmu_notifier.h>
#include <linux/pagemap.h>
#include <linux/percpu-rwsem.h>
#include <linux/rhashtable.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/security.h>
#include <linux/task_work.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/srcu.h>
#include <linux/swap.h>
#include <linux/uprobes.h>
#include <linux/xarray.h>

/*
 * Optimistic passes of a walk before it keeps forks out: a walk that meets
 * forks costs at most this many passes more than one that keeps them out.
 */
#define UPROBE_WALK_TRIES	1

/**
 * struct uprobe_inode - the probes of one file
 * @node: link in uprobe_inodes
 * @inode: the file's inode (a reference is held)
 * @probes: offset -> &struct uprobe
 * @ref: references: one per probe in @probes plus temporary ones
 * @rcu: deferred free
 */
struct uprobe_inode {
	struct rhash_head node;
	struct inode *inode;
	struct xarray probes;
	refcount_t ref;
	struct rcu_head rcu;
};

static const struct rhashtable_params uprobe_inodes_params = {
	.key_len = sizeof(struct inode *),
	.key_offset = offsetof(struct uprobe_inode, inode),
	.head_offset = offsetof(struct uprobe_inode, node),
	.automatic_shrinking = true,
};

/**
 * struct uprobe - a probe on one instruction of one file
 * @ui: the file's &struct uprobe_inode (holds a reference)
 * @offset: file offset of the probed instruction
 * @ref_ctr_offset: file offset of the SDT counter, 0 for none
 * @id: unique for the life of the system (XOL slots record it), never 0
 * @key: index in uprobes_by_key, where pending returns find the probe;
 *	0 until its first return consumer (key_uprobe_locked())
 * @ref: references: consumers (one for all), sites, temporary ones
 * @nr_sites: how many sites (in all mms) hold a reference; a removal walk
 *	that leaves some covers the whole file (sync_maps_locked())
 * @reg_lock: serialises register/unregister/apply of this probe
 * @consumers: the consumers, an SRCU-protected list written under @reg_lock
 * @flags: UPROBE_READ once @arch holds the instruction's bytes,
 *	UPROBE_ANALYZED once it is decoded too, UPROBE_REFUSED once the
 *	architecture refused it for every mm, UPROBE_RETURNS_MANY while it
 *	has two or more return consumers (note_returns_locked())
 * @stats: per-CPU counts of how hits were handled (uprobe_get_stats()),
 *	allocated at the first hit to count (most probes of a large set
 *	are never hit) and published once with cmpxchg()
 * @held_hits: hits that left the uprobes_srcu read section for a
 *	reference (hit_hold()) and may still add to @stats
 * @arch: the decoded instruction and how to run it
 * @rcu: deferred free (uprobes_srcu)
 */
struct uprobe {
	struct uprobe_inode *ui;
	loff_t offset;
	loff_t ref_ctr_offset;
	u64 id;
	u32 key;
	refcount_t ref;
	atomic_t nr_sites;
	struct mutex reg_lock;		/* see the kernel-doc above */
	struct list_head consumers;
	unsigned long flags;
	struct uprobe_stats __percpu *stats;
	atomic_t held_hits;
	struct arch_uprobe arch;
	struct rcu_head rcu;
};

#define UPROBE_ANALYZED		0
#define UPROBE_READ		1
#define UPROBE_REFUSED		2
#define UPROBE_RETURNS_MANY	3

/**
 * struct uprobe_site - one breakpoint of ours in one mm
 * @uprobe: the probe (holds a reference)
 * @vaddr: where the breakpoint is
 * @ref_ctr_done: this site holds its probe's +1 on the mm's counter (one
 *	site per probe and mm does)
 * @xol_slot: the XOL slot last used for it, a hint that get_slot()
 *	verifies (0: none yet)
 * @detached: uprobe_munmap() saw its range go; the hit path ignores it
 *	until it is re-attached (split, merge: its breakpoint is still there) or
 *	settled (settle_dead(): its text went away)
 * @pending: entered in the table before its breakpoint is written and its
 *	counter raised (install_site()); a hit that finds it so waits for
 *	the installer (find_hit())
 * @shown: what a debugger reads at @vaddr while our breakpoint is there:
 *	the original opcode, or what it wrote over it (its own breakpoint,
 *	which then traps for it; see "Debuggers"). Written under the
 *	mmap_lock, also held for read with &uprobes_mm.remote_lock by a
 *	debugger's write, read by the hit path with READ_ONCE()
 * @stub: while not 0, the site is entered through a jump to the stub at
 *	this user address instead of our breakpoint (see "Jump sites");
 *	set and cleared under the mmap_lock held for write, also cleared by a
 *	debugger's write under the mmap_lock held for read and
 *	&uprobes_mm.remote_lock
 * @jump_len: how many bytes the jump covers, with @stub
 * @no_jump: the site cannot become a jump site (no stub in reach, its bytes
 *	are not the instruction's, another site inside them): it keeps the
 *	breakpoint, and its hits do not try again; same lock as @stub
 * @saved: the bytes the jump replaced, with @stub: our breakpoint and
 *	the rest of the original instruction
 * @rcu: deferred free; a site is only ever freed by RCU once it was in
 *	the table
 */
struct uprobe_site {
	struct uprobe *uprobe;
	unsigned long vaddr;
	uprobe_opcode_t shown;
	unsigned int xol_slot;
	bool ref_ctr_done;
	bool detached;
	bool pending;
	bool no_jump;
	u8 jump_len;
	u8 saved[UPROBE_JUMP_MAX];
	unsigned long stub;
	struct rcu_head rcu;
};

#define UPROBE_STUB_AREAS	16

#define UPROBE_HOT_BITS		5

/**
 * struct uprobes_mm - per-mm breakpoint table
 * @sites: vaddr -> &struct uprobe_site; changed under the mm's mmap_lock
 *	held for write (sites_insert(), sites_erase()), read under RCU
 * @nr_sites: how many entries @sites has; same lock
 * @hot: a direct-mapped cache of @sites in front of it (hash of vaddr),
 *	so that a hit costs a multiply, not a walk down a sparse xarray (a
 *	user vaddr needs up to eight levels); same locking as @sites, filled
 *	only by writers
 * @vmas_changed: uprobe_munmap() detached sites at least once: a breakpoint
 *	without an attached site may be ours (moved or re-described by a VMA
 *	change) and goes through the slow path
 * @moving: mremap() is between uprobe_start_move() and uprobe_end_move():
 *	the destination's page tables are not there yet, uprobe_mmap() waits
 * @stub_lock: taken to change @stubs, which happens under the mmap_lock
 *	held for write (a new area) or for read (munmap() of an area)
 * @stubs: the mm's stub areas (see "Jump sites"), read under RCU
 * @remote_lock: held by every debugger access of the mm's text
 *	(uprobe_remote_read(), uprobe_remote_write(), under the mmap_lock
 *	held for read): what such a write changes in a site (@shown, the
 *	jump it takes out) changes under it, so two of them never see a
 *	site half changed
 */
struct uprobes_mm {
	struct xarray sites;
	unsigned int nr_sites;
	struct uprobe_site __rcu *hot[1 << UPROBE_HOT_BITS];
	bool vmas_changed;
	bool moving;
	spinlock_t stub_lock;	/* see the kernel-doc above */
	struct uprobe_stub_area __rcu *stubs[UPROBE_STUB_AREAS];
	struct mutex remote_lock;	/* see the kernel-doc above */
};

/*
 * Where a walk found @uprobe's offset mapped in an mm, before it could
 * take the mm's mmap_lock: the mm (pinned), the address of the offset
 * there (0 for "somewhere": a walk over the whole file) and how many
 * copies of the mm fork had completed (uprobes_state.forks).
 */
struct map_entry {
	struct mm_struct *mm;
	unsigned long vaddr;
	unsigned long forks;
};

/*
 * The area reserves XOL_MAX_PAGES pages of address space and backs them in
 * order, a page when the slots of the last are all used and none retired
 * can be reused: at least 4096 slots (of UPROBE_XOL_SLOT_BYTES each), for
 * an mm's probed instructions that are neither emulated nor gone.
 */
#define XOL_SLOTS_PER_PAGE	(PAGE_SIZE / UPROBE_XOL_SLOT_BYTES)
#define XOL_MAX_PAGES		DIV_ROUND_UP(4096, XOL_SLOTS_PER_PAGE)
#define XOL_SLOTS		(XOL_MAX_PAGES * XOL_SLOTS_PER_PAGE)
#define XOL_AREA_BYTES		(XOL_MAX_PAGES * PAGE_SIZE)
/* Slot 0 holds the return-probe trampoline (arch_uretprobe_fill_trampoline()). */
#define XOL_TRAMPOLINE_SLOT	0
/*
 * An architecture whose jump back from a boosted copy has a limited reach
 * (a branch with an immediate offset) defines UPROBE_XOL_REACH in
 * <asm/uprobes.h>: an mm's area is then mapped, where there is room,
 * within that distance of the code of the hit that maps it. 0: anywhere.
 */
#ifndef UPROBE_XOL_REACH
#define UPROBE_XOL_REACH	0UL
#endif
/* Return stubs an mm can use at once: one page of table slots. */
#define UPROBE_RETURN_STUBS	(PAGE_SIZE / sizeof(unsigned long))

/**
 * struct xol_area - an mm's execute-out-of-line area
 * @pages: the area's backed pages, zeroed when allocated, in address
 *	order, shown to user space (r-x) by the one special mapping of all
 *	areas (xol_mapping); a fault beyond the last is SIGBUS
 * @owners: per backed page, its slots' owners: the probe (id) and probed
 *	vaddr whose recipe the slot holds, written before the slot is
 *	published in @slots
 * @nr_pages: how many of @pages are backed
 * @vaddr: user address of the area
 * @lock: serialises slot allocation, growth and writes to @pages
 * @next: the next slot never used so far
 * @slots: probed vaddr -> slot index (xa_mk_value), for reuse
 * @ret_table: the mm's return table (uprobe_return_table()), allocated on
 *	first use: slot i holds the real return address of the pending return
 *	instance that owns the architecture's return stub i
 * @ret_slots: @ret_table's kernel address, published after it, so that a
 *	return probe's entry writes its slot without a page_address() lookup
 * @ret_used: which return stubs (and table slots) are owned; a bit is taken
 *	with test_and_set_bit_lock() and given back with clear_bit_unlock()
 * @retired: slots whose site went away (or whose vaddr now holds other
 *	text), to be reused once nobody can be running in them; under @lock
 * @retired_gp: SRCU cookie taken at the latest retirement
 *
 * A slot holds an instruction recipe that depends only on the original
 * instruction at the probed vaddr, so all threads share it, and it is never
 * rewritten while anybody may be in it. Tasks run in a slot with no lock
 * and no reference (a boosted hit returns to user mode there and jumps
 * back by itself), so reuse is decided by where tasks can be, that is by
 * their saved ips:
 *   - a task enters a slot only by a hit that set its user ip there, in an
 *     uprobes_srcu read section after it found the slot's owner;
 *   - a retired slot has no owner, so once an SRCU grace period has passed
 *     after its retirement no task can newly enter it;
 *   - a task in a slot has its ip there in its saved user registers: it
 *     got there by a return to user mode with that ip, and any kernel entry
 *     while it is still inside saves an ip inside; only leaving by the
 *     copy's own jump (or ret) takes it out, after which the saved ip is
 *     stale but still in the slot (a false "busy", never a false "free");
 *   - a signal frame never captures a slot address: signal delivery moves
 *     the task out first (leave_boosted_slot()), and a stepping task holds
 *     its signals back until the step is done.
 * So reuse_slot_locked() takes a retired slot after its grace period if no
 * task of the mm has its saved ip in it, which stays true for good.
 *
 * Retired slots are reused before the area grows, so probes that come and
 * go keep to the pages they had; the area grows only for probes that are
 * in place together.
 */
struct xol_area {
	struct page *pages[XOL_MAX_PAGES];
	struct xol_owner {
		u64 id;
		unsigned long vaddr;
	} *owners[XOL_MAX_PAGES];
	unsigned int nr_pages;
	unsigned long vaddr;
	struct mutex lock;	/* see the kernel-doc above */
	unsigned int next;
	struct xarray slots;
	struct page *ret_table;
	unsigned long *ret_slots;
	DECLARE_BITMAP(ret_used, UPROBE_RETURN_STUBS);
	DECLARE_BITMAP(retired, XOL_SLOTS);
	unsigned long retired_gp;
};

#define UPROBE_STUBS_PER_AREA	(PAGE_SIZE / UPROBE_STUB_BYTES)

/**
 * struct uprobe_stub_area - one page of stubs mapped in one mm
 * @start: its user address
 * @closed: the program unmapped the area (stub_close(), under
 *	&uprobes_mm.stub_lock); it stays in the table, standing for no site,
 *	until the jumps that lead there are undone (reap_closed_areas())
 * @rcu: deferred free
 * @vaddr: per stub, the probed address whose jump leads to it (0: free).
 *	An entry is set once, under the mmap_lock held for write, and never
 *	changes while the area is mapped: a task that jumped to a stub is
 *	sent back to the right address however late it gets to the kernel,
 *	even after the site was removed (it then runs what is there now)
 */
struct uprobe_stub_area {
	unsigned long start;
	bool closed;
	struct rcu_head rcu;
	unsigned long vaddr[UPROBE_STUBS_PER_AREA];
};

/*
 * The depth bound: a task with this many pending return probes gets no
 * more until some return (or are found dead). The call past the bound runs
 * its entry handlers as usual, but its return is not probed: it is counted
 * as missed in the probe's statistics, with a rate-limited notice. Deep
 * enough for real recursion (a recursive descent parser, a tree walk),
 * bounded so that a runaway recursion costs at most about 16 KiB per task.
 */
#define UPROBE_MAX_RETURN_DEPTH	256
/*
 * Some instruction sets let a function pop its caller's arguments as it
 * returns, up to 64 KiB of them: its return comes back with the frame that
 * far above the one its call started with.
 */
#define UPROBE_MAX_POPPED	0xffffUL
/* Freed instances a task keeps for its next calls, saving the allocator. */
#define UPROBE_SPARE_INSTANCES	8

/**
 * struct hit_guard - what keeps the probe of a hit from being freed
 * @idx: the uprobes_srcu read section, while @srcu
 * @srcu: the hit is in a read section of uprobes_srcu
 * @ref: the hit holds a reference on the probe
 * @counting: the hit counted itself in a read section and left it: it is
 *	one of the probe's @held_hits until it ends
 *
 * See "The hit path and uprobes_srcu" in the design: the hit starts in the
 * read section, which it leaves for a reference (hit_hold()) before
 * anything that may fault on user memory or wait for a lock that such a
 * fault can hold up.
 */
struct hit_guard {
	int idx;
	bool srcu;
	bool ref;
	bool counting;
};

extern struct srcu_struct uprobes_srcu;
extern struct percpu_rw_semaphore dup_mmap_sem;
extern struct rhashtable uprobe_inodes;
extern bool uprobes_ready;
extern struct xarray uprobes_by_key;

/* core.c */
void put_uprobe_inode(struct uprobe_inode *ui);
struct uprobe_inode *find_uprobe_inode(struct inode *inode);
struct uprobe *get_uprobe(struct uprobe *uprobe);
noinline void release_uprobe(struct uprobe *uprobe);
struct uprobe *site_get_uprobe(struct uprobe *uprobe);
void site_put_uprobe(struct uprobe_site *site);
struct uprobe *find_uprobe(struct inode *inode, loff_t offset);
bool consumers_want_mm(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
		       struct mm_struct *mm);

/* patch.c */
bool vma_can_probe(struct vm_area_struct *vma);
unsigned long offset_to_vaddr(struct vm_area_struct *vma, loff_t off);
bool vma_maps_offset(struct vm_area_struct *vma, struct inode *inode,
		     loff_t off);
int read_file_bytes(struct inode *inode, loff_t offset, void *buf,
		    size_t len);
int patch_page(struct vm_area_struct *vma, unsigned long vaddr,
	       struct page *old, const void *bytes, size_t len);
int write_opcode(struct arch_uprobe *auprobe,
		 struct vm_area_struct *vma, unsigned long vaddr,
			uprobe_opcode_t opcode, bool restore_file);
int update_ref_ctr(struct uprobe *uprobe, struct mm_struct *mm,
		   int delta, bool quiet);

/* sites.c */
/*
 * @mm's site table, for a reader that holds no mmap_lock (the hit path,
 * uprobe_munmap()): a table seen is initialised. It is freed by RCU
 * (uprobe_clear_state()), so a reader that is not @mm's own task stays in
 * an RCU read section while it uses it.
 */
static inline struct uprobes_mm *uprobes_mm_of(struct mm_struct *mm)
{
	/* Pairs with smp_store_release() in get_uprobes_mm(). */
	return smp_load_acquire(&mm->uprobes_state.sites);
}

/*
 * @mm's site table, for a holder of its mmap_lock: the table is set once
 * under the lock held for write (get_uprobes_mm()) and freed only at exit.
 * Readers without the lock use uprobes_mm_of().
 */
static inline struct uprobes_mm *uprobes_mm_locked(struct mm_struct *mm)
{
	lockdep_assert_held(&mm->mmap_lock);
	return mm->uprobes_state.sites;
}

struct uprobes_mm *get_uprobes_mm(struct mm_struct *mm);
void free_site_rcu(struct rcu_head *rcu);
struct uprobe_site *ctr_holder_site(struct mm_struct *mm,
				    struct uprobe *uprobe,
				    struct uprobe_site *except, bool holder);
void forget_site(struct mm_struct *mm, struct uprobe_site *site,
		 bool dead);
int trap_at(struct mm_struct *mm, unsigned long vaddr,
	    bool (*is)(uprobe_opcode_t *insn));

/* The first instruction word of @uprobe's original instruction. */
static inline uprobe_opcode_t orig_opcode(struct uprobe *uprobe)
{
	uprobe_opcode_t opcode = 0;

	memcpy(&opcode, &uprobe->arch.insn, UPROBE_SWBP_INSN_SIZE);
	return opcode;
}

int install_site(struct uprobe *uprobe, struct vm_area_struct *vma,
		 unsigned long vaddr);
int show_foreign_trap(struct mm_struct *mm, unsigned long vaddr,
		      uprobe_opcode_t trap);
bool bp_still_there(struct uprobe *uprobe, struct vm_area_struct *vma,
		    unsigned long vaddr);
bool site_still_there(struct uprobe_site *site,
		      struct vm_area_struct *vma);
int remove_site(struct mm_struct *mm, struct uprobe_site *site);
void remove_sites(struct uprobe *uprobe, struct mm_struct *mm,
		  const struct map_entry *hints, int nr);
int install_sites(struct uprobe *uprobe, struct mm_struct *mm,
		  const struct map_entry *hints, int nr);
void restore_jump_locked(struct uprobes_mm *um, struct vm_area_struct *vma,
			 struct page *page, void *kaddr,
			 unsigned long page_va, struct uprobe_site *site);

/* mm.c */
void settle_dead(struct mm_struct *mm);
void report_refused(struct vm_area_struct *vma, struct uprobe *uprobe,
		    int err);

/* xol.c */
struct xol_owner *slot_owner(struct xol_area *area, unsigned int slot);
bool slot_is(struct xol_area *area, unsigned int slot,
	     struct uprobe *uprobe, unsigned long vaddr);
void free_xol_area(struct xol_area *area);
/*
 * @mm's XOL area, for a reader that holds no mmap_lock (the hit path,
 * returns, unwinders): an area seen is initialised. It lives as long as
 * @mm (uprobe_clear_state()).
 */
static inline struct xol_area *xol_area_of(struct mm_struct *mm)
{
	/* Pairs with smp_store_release() in map_xol_area(). */
	return smp_load_acquire(&mm->uprobes_state.xol_area);
}

/*
 * @mm's XOL area, for a holder of its mmap_lock: it is set once under the
 * lock held for write (map_xol_area()).
 */
static inline struct xol_area *xol_area_locked(struct mm_struct *mm)
{
	lockdep_assert_held(&mm->mmap_lock);
	return mm->uprobes_state.xol_area;
}

static inline unsigned long slot_vaddr(struct xol_area *area,
				       unsigned int slot)
{
	return area->vaddr + slot * UPROBE_XOL_SLOT_BYTES;
}

/* The user address of @area's trampoline slot, 0 without an area. */
static inline unsigned long trampoline_vaddr(struct xol_area *area)
{
	return area ? slot_vaddr(area, XOL_TRAMPOLINE_SLOT) : 0;
}

struct xol_area *map_xol_area(struct mm_struct *mm, unsigned long addr,
			      unsigned long near);

/* The mm's XOL area, mapped on first use, near @near if it can (a hit's ip). */
static inline struct xol_area *get_xol_area(struct mm_struct *mm,
					    unsigned long near)
{
	struct xol_area *area = xol_area_of(mm);

	return area ? area : map_xol_area(mm, 0, near);
}

unsigned long *alloc_return_table(struct xol_area *area);
int find_return_stub(struct xol_area *area);

/* @area's return table, NULL until its first use. */
static inline unsigned long *return_table_of(struct xol_area *area)
{
	/* Pairs with the smp_store_release()s of @ret_slots. */
	return smp_load_acquire(&area->ret_slots);
}

/* @area's return table, allocated at its first use; NULL without memory. */
static inline unsigned long *get_return_table(struct xol_area *area)
{
	unsigned long *slots = return_table_of(area);

	return likely(slots) ? slots : alloc_return_table(area);
}

/* Take a free return stub of @area: its index, or -1 if all are owned. */
static inline int get_return_stub(struct xol_area *area)
{
	unsigned long i, word = READ_ONCE(area->ret_used[0]);

	/* Usually a stub of the first word is free: no bitmap search. */
	if (likely(~word)) {
		i = ffz(word);
		if (!test_and_set_bit_lock(i, area->ret_used))
			return i;
	}
	return find_return_stub(area);
}

/* Give back stub @i of @area; its table slot may be rewritten from now. */
static inline void release_return_stub(struct xol_area *area, int i)
{
	clear_bit_unlock(i, area->ret_used);
}

void unmap_return_table(struct mm_struct *mm);
void *map_slot(struct xol_area *area, unsigned int slot,
	       unsigned int *page);
void retire_slot(struct mm_struct *mm, unsigned long vaddr);
unsigned long get_slot(struct mm_struct *mm, struct uprobe *uprobe,
		       unsigned long vaddr, unsigned int *slot,
			      bool *wait);
void cache_slot(struct mm_struct *mm, struct uprobe *uprobe,
		unsigned long vaddr, unsigned int slot);

/*
 * jump.c, the jump-site layer (CONFIG_UPROBE_JUMP_SITES). Without it no
 * site ever has a stub, and these say so.
 */
#ifdef CONFIG_UPROBE_JUMP_SITES
extern bool uprobe_jump_sites;

/* Are jump sites made now (the uprobes.jump_sites parameter)? */
static inline bool jump_sites_on(void)
{
	return READ_ONCE(uprobe_jump_sites);
}

void __init init_stub_page(void);
unsigned long stub_start(unsigned long ip);
unsigned long stub_site_at(unsigned long ip);
bool jump_there(struct uprobe_site *site, struct vm_area_struct *vma,
		struct page **page);
int undo_jump(struct mm_struct *mm, struct uprobe_site *site);
noinline void make_jump_site(struct uprobe *uprobe,
				    unsigned long vaddr, struct pt_regs *regs,
				    struct hit_guard *g);
int undo_jumps(struct mm_struct *mm, struct uprobes_mm *um,
	       unsigned long start, unsigned long end);
void dup_stub_areas(struct mm_struct *newmm, struct uprobes_mm *um,
		    struct uprobes_mm *old_um);
int dup_undo_jump(struct mm_struct *newmm, struct uprobes_mm *um,
		  struct uprobe_site *copy);
void free_stub_areas(struct uprobes_mm *um);
#else
static inline bool jump_sites_on(void)
{
	return false;
}

static inline void init_stub_page(void)
{
}

static inline unsigned long stub_start(unsigned long ip)
{
	return 0;
}

static inline unsigned long stub_site_at(unsigned long ip)
{
	return 0;
}

static inline bool jump_there(struct uprobe_site *site,
			      struct vm_area_struct *vma, struct page **page)
{
	return false;
}

static inline int undo_jump(struct mm_struct *mm, struct uprobe_site *site)
{
	return 0;
}

static inline void make_jump_site(struct uprobe *uprobe, unsigned long vaddr,
				  struct pt_regs *regs, struct hit_guard *g)
{
}

static inline int undo_jumps(struct mm_struct *mm, struct uprobes_mm *um,
			     unsigned long start, unsigned long end)
{
	return 0;
}

static inline void dup_stub_areas(struct mm_struct *newmm,
				  struct uprobes_mm *um,
				  struct uprobes_mm *old_um)
{
}

static inline int dup_undo_jump(struct mm_struct *newmm,
				struct uprobes_mm *um,
				struct uprobe_site *copy)
{
	return 0;
}

static inline void free_stub_areas(struct uprobes_mm *um)
{
}
#endif /* CONFIG_UPROBE_JUMP_SITES */

/* Return instances, taken and dropped at every probed call and return. */
/*
 * A return instance: a spare one of the task, else a new one (@nowait:
 * allocated without sleeping).
 */
static inline struct return_instance *
alloc_return_instance(struct uprobe_task *utask, bool nowait)
{
	struct return_instance *ri = utask->spare_instances;

	if (!ri)
		return kmalloc(sizeof(*ri), nowait ? GFP_NOWAIT | __GFP_NOWARN :
					   GFP_KERNEL);
	utask->spare_instances = ri->next;
	utask->nr_spare--;
	return ri;
}

/* Keep @ri as a spare for the task, or free it. */
static inline void recycle_return_instance(struct uprobe_task *utask,
					   struct return_instance *ri)
{
	if (utask->nr_spare >= UPROBE_SPARE_INSTANCES) {
		kfree(ri);
		return;
	}
	ri->next = utask->spare_instances;
	utask->spare_instances = ri;
	utask->nr_spare++;
}

/* Give back the return stub @ri owns in current's mm, if any. */
static inline void put_return_stub(struct return_instance *ri)
{
	struct xol_area *area;

	if (ri->stub < 0 || !current->mm)
		return;
	area = xol_area_of(current->mm);
	if (!WARN_ON_ONCE(!area))
		release_return_stub(area, ri->stub);
	ri->stub = -1;
}

/* Drop the pending instance *@link of @utask; *@link becomes the next. */
static inline void drop_return_instance(struct uprobe_task *utask,
					struct return_instance **link)
{
	struct return_instance *ri = *link;

	*link = ri->next;
	utask->depth--;
	put_return_stub(ri);
	recycle_return_instance(utask, ri);
}

/* return.c */
bool prepare_return(struct uprobe *uprobe, struct pt_regs *regs,
		    struct uprobe_task *utask, bool nowait);

/* hit.c */
bool hit_hold(struct uprobe *uprobe, struct hit_guard *g);
struct uprobe_stats __percpu *alloc_stats(struct uprobe *uprobe);

/* Where @uprobe's hits are counted. May sleep (the first time). */
static inline struct uprobe_stats __percpu *probe_stats(struct uprobe *uprobe)
{
	/* Address dependency: pairs with the cmpxchg() in alloc_stats(). */
	struct uprobe_stats __percpu *counts = READ_ONCE(uprobe->stats);

	return likely(counts) ? counts : alloc_stats(uprobe);
}

static inline struct uprobe_site __rcu **hot_entry(struct uprobes_mm *um,
						   unsigned long vaddr)
{
	return &um->hot[hash_long(vaddr, UPROBE_HOT_BITS)];
}

/*
 * @site entered @um->sites: cache it if its entry is free. Caller holds
 * the mm's mmap_lock for write, or the mm is not visible to anyone yet.
 */
static inline void hot_cache(struct uprobes_mm *um, struct uprobe_site *site)
{
	struct uprobe_site __rcu **e = hot_entry(um, site->vaddr);

	if (!rcu_access_pointer(*e))
		rcu_assign_pointer(*e, site);
}

static inline void hot_add(struct mm_struct *mm, struct uprobes_mm *um,
			   struct uprobe_site *site)
{
	mmap_assert_write_locked(mm);
	hot_cache(um, site);
}

/* @site leaves @um->sites (or changes vaddr): uncache it. */
static inline void hot_del(struct mm_struct *mm, struct uprobes_mm *um,
			   struct uprobe_site *site)
{
	struct uprobe_site __rcu **e = hot_entry(um, site->vaddr);

	mmap_assert_write_locked(mm);
	if (rcu_access_pointer(*e) == site)
		RCU_INIT_POINTER(*e, NULL);
}

/*
 * Enter @site in @um->sites at its vaddr. Caller holds the mm's mmap_lock
 * for write, or the mm is not visible to anyone yet.
 */
static inline int sites_insert(struct uprobes_mm *um, struct uprobe_site *site)
{
	int ret = xa_insert(&um->sites, site->vaddr, site, GFP_KERNEL);

	if (!ret)
		um->nr_sites++;
	return ret;
}

/* Take the site at @vaddr out of @um->sites; same locking. */
static inline void sites_erase(struct uprobes_mm *um, unsigned long vaddr)
{
	if (xa_erase(&um->sites, vaddr))
		um->nr_sites--;
}

/* The site at @vaddr, if any. Caller is in an RCU read section. */
static inline struct uprobe_site *site_lookup(struct uprobes_mm *um,
					      unsigned long vaddr)
{
	struct uprobe_site *site = rcu_dereference(*hot_entry(um, vaddr));

	if (site && READ_ONCE(site->vaddr) == vaddr)
		return site;
	return xa_load(&um->sites, vaddr);
}

static inline void put_uprobe(struct uprobe *uprobe)
{
	if (refcount_dec_and_test(&uprobe->ref))
		release_uprobe(uprobe);
}

/* A debugger's breakpoint is over @site's: the trap is the debugger's. */
static __always_inline bool debugger_bp(struct uprobe_site *site)
{
	uprobe_opcode_t shown = READ_ONCE(site->shown);

	/* What a probe is on is never a trap (read_and_analyze() refuses it). */
	if (likely(shown == orig_opcode(site->uprobe)))
		return false;
	return is_trap_insn(&shown);
}

static __always_inline struct uprobe_task *get_utask(void)
{
	struct uprobe_task *utask = current->utask;

	if (!utask) {
		utask = kzalloc(sizeof(*utask), GFP_KERNEL);
		current->utask = utask;
	}
	return utask;
}

#endif /* _KERNEL_EVENTS_UPROBES_INTERNAL_H */
