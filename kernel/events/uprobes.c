// SPDX-License-Identifier: GPL-2.0+
/*
 * User-space probes (uprobes): the core.
 *
 * A probe is an (inode, file offset) with consumers. Registering one puts
 * a breakpoint into every mapping of that offset whose consumers want the mm;
 * the breakpoint traps, the handlers run, and the original instruction is then
 * emulated (arch code) or single-stepped from a copy in a per-mm
 * execute-out-of-line (XOL) area. An SDT "semaphore" (reference counter)
 * named by the probe goes up by one per patched site and down by one when
 * the site is removed.
 *
 * Objects
 *   struct uprobe_inode  one per probed inode, in the global rhashtable
 *			  uprobe_inodes (keyed by inode pointer); holds an
 *			  xarray offset -> struct uprobe.
 *   struct uprobe	  one per (inode, offset): consumers (an SRCU list),
 *			  decoded instruction, SDT counter offset, an id.
 *   struct uprobes_mm	  per mm (mm->uprobes_state.sites): xarray vaddr ->
 *			  struct uprobe_site, one entry per breakpoint of ours,
 *			  with a small direct-mapped cache in front of it.
 *			  Published with release, read with acquire
 *			  (uprobes_mm_of()), freed by RCU.
 *   struct uprobe_site	  a patched site in one mm; owns a uprobe reference
 *			  and remembers whether its +1 is on the mm's counter.
 *			  It enters the table before its breakpoint is written
 *			  and leaves it after the breakpoint is gone, so that no
 *			  breakpoint of ours is ever without its site; freed by RCU.
 *   struct xol_area	  per mm (mm->uprobes_state.xol_area): mapped by
 *			  the special mapping xol_mapping, which all areas
 *			  share (so no vma points into an area, which is
 *			  freed before the mm's vmas are), as XOL_MAX_PAGES
 *			  pages of address space (at the top of the task's
 *			  range if free, else below its mmap base: see
 *			  xol_area_vaddr()),
 *			  backed page by page as slots are needed; slot 0 is
 *			  the return trampoline, the others hold instruction
 *			  copies keyed by probed vaddr, rewritten only once
 *			  retired and nobody can be in them. It never moves
 *			  (mremap() of it fails); a program that unmaps it
 *			  gets SIGSEGV at its next out-of-line instruction.
 *			  It also holds the mm's return table: a page the
 *			  architecture maps for unwinders, one slot of real
 *			  return address per return stub, and which stubs are
 *			  owned (a bitmap).
 *   struct uprobe_task	  per task (task->utask): stepping state and the
 *			  chain of pending return instances.
 *   struct uprobe_stub_area  one page of stubs mapped in one mm (jump
 *			  sites, below), in the mm's table (uprobes_mm.stubs):
 *			  which site each stub stands for.
 *
 * Design rules
 *   - "Is this file probed?", asked by every file mmap() in the system, is
 *     one lock-free hash lookup; the probes of a file are found by range in
 *     its own xarray, under no global lock.
 *   - The hit path reads only the per-mm site table, under RCU: no vma
 *     lookup, no mmap_lock, no global lock, nothing that sleeps before the
 *     handlers (which run in SRCU).
 *   - The SDT counter moves exactly when a site is created or destroyed in
 *     an mm. Sites are keyed by vaddr, so VMA splits, merges and repeated
 *     uprobe_mmap() calls over the same range find the existing site and
 *     change nothing: exactly-once by construction, not by bookkeeping.
 *   - uprobe_munmap() only marks sites detached; uprobe_mmap() re-attaches
 *     them (split/merge: the breakpoint is still there) or settles them
 *     (the text went away), and a hit on a breakpoint that mremap() moved
 *     adopts it.
 *   - A hit is handled where the architecture reports it: in the
 *     breakpoint trap itself if it calls uprobe_hit_in_trap() (interrupts
 *     enabled, a user-mode trap that may sleep), else on the way back to
 *     user mode (uprobe_pre_sstep_notifier() sets TIF_UPROBE and
 *     uprobe_notify_resume() handles it). Either way handle_hit() runs in
 *     process context.
 *   - XOL slots are shared by all threads of an mm and keyed by probed
 *     vaddr, so repeated hits reuse the slot with no lock. An architecture
 *     that boosts (arch_uprobe_boost()) runs an instruction that needs no
 *     fix-up in its slot followed by a jump back, with no step trap (one
 *     trap per hit). Slots are reused only once no task can be in them
 *     (struct xol_area). Every slot write goes through
 *     arch_uprobe_copy_ixol(), which keeps the instruction cache coherent.
 *   - Patching maps a new private copy of the page for every breakpoint
 *     written or removed, unless no other thread can be running the page:
 *     a single-threaded task patching its own mm writes its private copy
 *     in place (write_in_place()). A CPU running the page may go on
 *     executing its old bytes after a write in place (cross-modifying
 *     code: the architecture asks for serialization, an emulator may keep
 *     its translation); a new page, mapped by a PTE change and its TLB
 *     flush, is fetched afresh.
 *     A removal that leaves no other site of ours in the page drops the
 *     copy when it matches the file's page, and the fault path maps the
 *     page-cache page back (zap_copy()). Only the file's own page, or an
 *     anonymous copy of it, is ever patched (page_is_files()).
 *   - Walks (register, unregister) need no RCU grace period to keep fork
 *     out; see "Walks and fork".
 *   - What one process does to its own mappings never fails a
 *     registration: a mapping that cannot take the breakpoint (shared,
 *     writable, hugetlb), a changed copy of the instruction, a full SDT
 *     counter or a page that is not the file's leave that process out,
 *     with a rate-limited log line naming it (report_refused()). Only the
 *     system's errors fail it (install_fatal()).
 *   - Return probes come back through a breakpoint in the XOL area, or
 *     through whatever entry the architecture provides instead (a system
 *     call, unwindable stubs), and pending returns are kept exact through
 *     longjmp, exceptions and signal handlers on other stacks; see "Return
 *     probes" below.
 *
 * Return probes
 *   A hit whose probe has a return consumer replaces the return address
 *   (prepare_return()) and pushes a return_instance on the task's chain,
 *   newest first, recording the stack pointer at the function's entry:
 *   the frame, which identifies the call. The new return address is a
 *   return stub of the architecture if one is free: the instance owns it
 *   and its table slot, which holds the real return address for unwinders
 *   (a C++ exception or a backtrace walks through the probed frame as if
 *   it were not probed). Else it is the trampoline in the XOL area, which
 *   unwinders cannot pass. Either way, the return calls
 *   uprobe_handle_return() with the frame of the function that just
 *   returned, which finds its instance by frame (or the nearest below it,
 *   for a function that popped its arguments), runs the return handlers
 *   and sends the task to the real return address.
 *   - Calls can end without a return (longjmp, siglongjmp, C++ unwinding):
 *     their instances go stale. An instance is dead when a newer frame is
 *     at or above it on the same stack: checked for the top of the chain
 *     when a probed call starts, and for the instances passed over when a
 *     return matches an older one. "The same stack" is the same mapping
 *     and the same side of the sigaltstack range (struct stack_span):
 *     instances of other stacks (a handler on sigaltstack, coroutines on
 *     stacks of their own) are not taken for dead. So the chain stays
 *     exact and bounded by the live calls. What this cannot tell apart:
 *     two user-managed stacks in one mapping (coroutine stacks carved from
 *     one heap mapping, a SS_AUTODISARM alternate stack merged into the
 *     mapping of the stack it interrupted); a live instance taken for dead
 *     there makes its return a SIGILL.
 *   - A tail call of a probed function from a probed function finds our
 *     trampoline as its return address: its instance is chained to the
 *     caller's (same frame, same real return address).
 *   - The chain holds at most UPROBE_MAX_RETURN_DEPTH instances; a probed
 *     call past that gets its entry handlers but no return probe, counted
 *     as missed. A return that matches no instance (the trampoline's
 *     address reached some other way) cannot go anywhere: SIGILL.
 *   - An instance gives its stub back when it returns or is dropped. An
 *     mm has UPROBE_RETURN_STUBS of them; past that, returns go through
 *     the XOL trampoline.
 *   - fork copies the chain and maps the child's XOL area at the parent's
 *     address (the child's stack returns there), with a copy of the return
 *     table for the stubs the copied instances own; exec and exit free it
 *     (uprobe_free_utask()). A child whose copy fails gets a notice. The
 *     parent's table is unmapped before its mappings are copied
 *     (unmap_return_table()), so the child maps only its own.
 *
 * Jump sites
 *   A site whose instruction the architecture can enter another way
 *   (arch_uprobe_jump_len(): one it emulates or runs out of line, long
 *   enough for the jump, in a task mode that has jumps) becomes a jump
 *   site at its first breakpoint hit, unless uprobes.jump_sites is off: its
 *   first bytes become a jump to a stub, and the stub enters the kernel
 *   with a system call that runs the hit as the breakpoint would have
 *   (uprobe_stub_hit()), with the registers of the site; no trap.
 *   Converting at the first hit rather than at registration spends stub
 *   space only on sites that run, in the mm that runs them, and the hit
 *   tells the task's mode.
 *   - Stubs are identical code, one page of them (stub_pages), filled once
 *     by the architecture and mapped read-only into each mm as stub areas
 *     (a special mapping, within the jump's reach of the sites it serves,
 *     UPROBE_STUB_AREAS at most per mm). A stub stands for the site whose
 *     address its entry holds, set when first used and never changed while
 *     the area is mapped: the kernel knows the site from the stub's
 *     address alone, and a task that took a jump just before the site was
 *     removed is sent back to the site's address, where the original
 *     instruction is again (a breakpoint hit that lost the race is handled
 *     the same way). So no stub is ever reused for another site, and no
 *     task is ever waited for.
 *   - Writing the jump (make_jump_site()) and taking it out (undo_jump())
 *     is one page replacement of the private copy that already holds our
 *     breakpoint, as every patch is (see Design rules): a thread sees the
 *     old page or the new one, never a torn instruction, and the bytes
 *     cover exactly one instruction of the program (one that nothing jumps
 *     into), in one page. The site keeps the bytes the jump replaced
 *     (@saved: our breakpoint and the rest of the instruction); undoing
 *     the jump puts them back, and a removal then goes on as for any
 *     breakpoint. A site's jump is undone before it is removed, before
 *     mremap() moves it (the jump is relative), in a fork child that did
 *     not get the stub area, and by a debugger's write over it (in the
 *     page it writes, as its own write is).
 *   - Debuggers read the original instruction at a jump site, every byte
 *     of it (uprobe_remote_read()). A debugger single-stepping the program
 *     into a jump traps at the stub's start; the architecture turns that
 *     into a breakpoint hit of the site, whose step is then reported at the
 *     next instruction as for a breakpoint.
 *   - A system call from a stub is the kernel's, not the program's: seccomp
 *     and syscall user dispatch let it through
 *     (uprobe_syscall_from_trampoline()); from anywhere else it is SIGILL.
 *   - A program that unmaps a stub area faults at its next jump there, as
 *     one that unmaps its XOL area does, until the jumps into the area are
 *     undone, which happens before any new area is mapped (it could land
 *     at the same address): a jump never leads to another site's stub.
 *   - No one sees a task inside a stub: a signal that finds it there (an
 *     interrupt came between the jump and the system call) first puts it
 *     back at the site with the program's registers
 *     (arch_uprobe_leave_stub()), so signal frames, debuggers' stops and
 *     core dumps show the site, and it takes the jump again when it
 *     resumes; a user callchain taken there starts at the site
 *     (uprobe_fixup_user_callchain()). Walks by frame pointer then pass
 *     through, as the stub leaves the frame pointer alone.
 *   - rseq, whose critical sections a preemption, a migration or a signal
 *     aborts if the task's ip is inside one, asks where a task is in its
 *     program (uprobe_rseq_ip()): one in a stub is put back at its site
 *     first, one in a boosted copy is at the probed instruction or the
 *     next one, one stepping a copy at the probed instruction. Before
 *     rseq sends it to the abort handler, a step is ended
 *     (uprobe_rseq_abort()).
 *
 * Debuggers
 *   A debugger reads and writes a traced task's text through
 *   access_remote_vm() (ptrace, /proc/pid/mem), which calls
 *   uprobe_remote_read() and uprobe_remote_write() for the pages it copies.
 *   Where our breakpoint is, the debugger sees the site's @shown bytes: the
 *   original instruction, until it writes there. A write of its own
 *   breakpoint or of the original bytes only changes @shown; our breakpoint
 *   stays in memory. A hit on a site whose @shown is a breakpoint runs the
 *   handlers and then gives the debugger the SIGTRAP it would have had.
 *   The debugger steps over its breakpoint either with a copy of the
 *   instruction of its own (a step trap ends that) or in place: it puts
 *   the original back, and our breakpoint traps again at once; that trap
 *   (uprobe_task.debugger_vaddr) runs the instruction without the handlers.
 *   So the debugger stops, and the probe counts, once per execution. A
 *   debugger that moves the task elsewhere instead and takes its breakpoint
 *   out leaves the next hit there uncounted. Anything else written
 *   over our breakpoint is written (a debugger patching code): the probe is
 *   off there in that process, with a log line. Removing the site writes
 *   back what @shown holds; installing over a breakpoint found in a
 *   private copy of the page adopts it as the debugger's.
 *
 * Walks and fork
 *   Register, unregister and uprobe_apply() walk the mms that map the
 *   probed page: collected under i_mmap_rwsem, then visited one by one
 *   under their mmap_lock. A fork in between could copy an mm before the
 *   walk visits it and add the copy's mappings after the collection: the
 *   copy would keep a removed breakpoint, or miss a new one. Keeping fork
 *   out with a percpu rwsem taken for write would cost an RCU grace period
 *   each time the walks start, so fork counts the copies of each mm it
 *   completes (uprobe_dup_mmap_done(), under the parent's mmap_lock, after
 *   the copy's mappings are in the files' trees). The walk reads the count
 *   while collecting and again under the mmap_lock: if it moved, the copy
 *   may be missing and the walk goes again (visits are idempotent). If it
 *   did not, any fork of that mm either finished before the collection
 *   (its copy was collected) or starts after the visit (it copies the
 *   visited state). A walk that keeps meeting forks takes dup_mmap_sem
 *   for write on its last pass.
 *
 * Lifetimes and references
 *   - uprobe_inode: one reference per uprobe in its xarray, plus temporary
 *     lookups; it pins the inode (igrab) and is freed by RCU.
 *   - uprobe: one reference while it has consumers, one per site in any
 *     mm, one per task stepping its copy, plus temporary lookups; freed
 *     through SRCU (uprobes_srcu). A pending return instance holds none:
 *     it records the probe's key and id, and its return looks the probe up
 *     (uprobes_by_key): a hit of a return probe writes nothing in the
 *     probe that other CPUs hitting it read.
 *   - uprobe_site: owned by its mm's table; freed by RCU after removal,
 *     also when an install fails after it entered the table.
 *   - A detached site whose text went away is settled (settle_dead())
 *     before anything in its mm raises a counter, and by a removal walk
 *     of its probe: it holds no +1 for a copy of the data that is gone.
 *   - xol_area: owned by the mm, freed by uprobe_clear_state() at exit,
 *     with the return table page (the architecture's mapping of it holds
 *     no reference; only the dying mm's page tables still point at it).
 *
 * Why the hit path is safe against a concurrent unregister
 *   handle_hit() (from the trap with interrupts enabled, or on the way
 *   back to user mode) enters uprobes_srcu, then loads the site under RCU and
 *   reads site->uprobe: a site is freed only after an RCU grace period, and
 *   the uprobe it points to only by call_srcu() once its last reference is
 *   gone; the site's reference is dropped only after the site left the
 *   table (remove_site(), put_uprobe()), so that grace period waits for a
 *   reader that still saw the site. Unregister unlinks the consumer with
 *   list_del_rcu() and then waits in synchronize_srcu() before returning,
 *   so once uprobe_unregister() returns no handler of that consumer runs or
 *   will run. uprobe_unregister_nosync() leaves that wait to the caller
 *   (uprobe_unregister_wait()), so that a run of unregistrations waits for
 *   one grace period, not one each. A task that leaves SRCU to step takes
 *   its own reference. A miss in the site table with no VMA change is a
 *   foreign breakpoint only if the breakpoint is still there: a probe
 *   removed between the trap and the lookup restarts the task at the
 *   restored instruction instead of sending it a SIGTRAP.
 *
 * The hit path and uprobes_srcu
 *   uprobes_srcu is global: a reader that never leaves its read section
 *   holds up every unregistration in the system, and tracefs with it,
 *   which waits for the grace period under event_mutex. A process can make
 *   any access to its own memory wait for ever (a page of a file on its
 *   own FUSE mount whose server never answers a read, userfaultfd), and so
 *   any wait for its mmap_lock (a writer queued behind a reader stuck in
 *   such a fault). So in its read section a hit only looks up the site,
 *   runs the handlers and counts the hit, and then carries out the
 *   instruction only in ways that neither fault nor wait: an emulation
 *   with page faults disabled (it declines rather than fault, and the
 *   instruction runs from its slot, where a fault is the program's own, in
 *   user mode), a boost or a step from a slot found ready. Anything else
 *   (a return probe's hijack of the return address, removing the site,
 *   mapping the XOL area or filling a slot, waiting for retired slots, the
 *   slow lookups after VMA changes under the mmap_lock, making a jump site)
 *   comes after the hit left the read section for a reference on the
 *   probe (struct hit_guard, hit_hold()). A task is sent into a slot only
 *   from a read section, as the slot's reuse requires (hit_slot()).
 *   A consumer's handler runs in the read section and must not wait for
 *   the task's memory either (trace_uprobe finishes a fetch that needs a
 *   fault on the task's way back to user mode).
 *
 * Locks, in the order they nest
 *   uprobe->reg_lock	serialises register/unregister/apply of one probe.
 *   dup_mmap_sem	percpu rwsem; fork holds it for read around dup_mmap(),
 *			a walk for write only after UPROBE_WALK_TRIES passes
 *			kept meeting forks (see "Walks and fork" below).
 *   mmap_lock (write)	every change to an mm's site table and counters;
 *			also taken by the hit path's slow cases (moved
 *			breakpoint, UPROBE_HANDLER_REMOVE).
 *   analyse_lock	decoding a probe with the first mm it goes into
 *			(analyse_in()), where the architecture needs an mm.
 *   xol_area->lock	allocating and filling a new XOL slot.
 *   uprobes_mm->remote_lock  a debugger's access of the mm's text (under
 *			the mmap_lock held for read), a jump taken out in
 *			place (undo_jump_in_place(), mmap_lock held for
 *			write); it may send IPIs (__restore_jump()).
 *   uprobes_mm->stub_lock  spinlock; a change of the mm's stub areas, under
 *			the mmap_lock (write: a new area; read or write: an
 *			area unmapped).
 *   tasklist_lock	read, inside xol_area->lock only: slot reuse counts
 *			the thread group's tasks in the mm (slots_in_use()).
 *   i_mmap_rwsem	read, only to collect the mms mapping a file; the mms
 *			are pinned and worked on after it is dropped.
 *   xarray spinlocks, page lock, page table lock.
 *   No GFP_KERNEL allocation is made under a lock that mmput() (and so
 *   reclaim) can take: mmput() -> uprobe_clear_state() takes only the
 *   dying mm's own mmap_lock, which nobody else can hold then.
 */
#ifdef CONFIG_GENERIC_ENTRY
#include <linux/entry-common.h>
#endif
#include <linux/hash.h>
#include <linux/highmem.h>
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

DEFINE_STATIC_SRCU(uprobes_srcu);
/* Fork (read) against a walk's last resort (write); see the top. */
DEFINE_STATIC_PERCPU_RWSEM(dup_mmap_sem);

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

static struct rhashtable uprobe_inodes;
/* uprobe_inodes is initialised; nothing else may be touched otherwise. */
static bool uprobes_ready __ro_after_init;
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
 * @key: index in uprobes_by_key, where pending returns find the probe
 * @ref: references: consumers (one for all), sites, temporary ones
 * @nr_sites: how many sites (in all mms) hold a reference; a removal walk
 *	that leaves some covers the whole file (__sync_maps())
 * @reg_lock: serialises register/unregister/apply of this probe
 * @consumers: the consumers, an SRCU-protected list written under @reg_lock
 * @flags: UPROBE_READ once @arch holds the instruction's bytes,
 *	UPROBE_ANALYSED once it is decoded too, UPROBE_REFUSED once the
 *	architecture refused it for every mm
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

#define UPROBE_ANALYSED		0
#define UPROBE_READ		1
#define UPROBE_REFUSED		2

/* Source of &struct uprobe ids. */
static atomic64_t uprobe_ids = ATOMIC64_INIT(0);

/*
 * Every live uprobe by its key (allocated cyclically, so a key is reused
 * only after the other 2^32 - 1): a pending return instance records its
 * probe's key and id instead of holding a reference, so that neither a
 * hit nor a return writes the probe. A probe leaves the table before it is
 * freed through SRCU, so a lookup in an SRCU read section may use what it
 * finds (return_uprobe()). The xarray's own lock serialises its writers.
 */
static DEFINE_XARRAY_ALLOC(uprobes_by_key);
static u32 uprobes_next_key;

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
 * @zapping: the page zap_copy() is giving back to the file, which
 *	uprobe_munmap() ignores; set and cleared under the mmap_lock held for
 *	write
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
	unsigned long zapping;
	spinlock_t stub_lock;	/* see the kernel-doc above */
	struct uprobe_stub_area __rcu *stubs[UPROBE_STUB_AREAS];
	struct mutex remote_lock;	/* see the kernel-doc above */
};

static struct uprobe_site __rcu **hot_entry(struct uprobes_mm *um,
					    unsigned long vaddr)
{
	return &um->hot[hash_long(vaddr, UPROBE_HOT_BITS)];
}

/*
 * @site entered @um->sites: cache it if its entry is free. Caller holds
 * the mm's mmap_lock for write, or the mm is not visible to anyone yet.
 */
static void __hot_add(struct uprobes_mm *um, struct uprobe_site *site)
{
	struct uprobe_site __rcu **e = hot_entry(um, site->vaddr);

	if (!rcu_access_pointer(*e))
		rcu_assign_pointer(*e, site);
}

static void hot_add(struct mm_struct *mm, struct uprobes_mm *um,
		    struct uprobe_site *site)
{
	mmap_assert_write_locked(mm);
	__hot_add(um, site);
}

/* @site leaves @um->sites (or changes vaddr): uncache it. */
static void hot_del(struct mm_struct *mm, struct uprobes_mm *um,
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
static int sites_insert(struct uprobes_mm *um, struct uprobe_site *site)
{
	int ret = xa_insert(&um->sites, site->vaddr, site, GFP_KERNEL);

	if (!ret)
		um->nr_sites++;
	return ret;
}

/* Take the site at @vaddr out of @um->sites; same locking. */
static void sites_erase(struct uprobes_mm *um, unsigned long vaddr)
{
	if (xa_erase(&um->sites, vaddr))
		um->nr_sites--;
}

/* The site at @vaddr, if any. Caller is in an RCU read section. */
static struct uprobe_site *site_lookup(struct uprobes_mm *um,
				       unsigned long vaddr)
{
	struct uprobe_site *site = rcu_dereference(*hot_entry(um, vaddr));

	if (site && READ_ONCE(site->vaddr) == vaddr)
		return site;
	return xa_load(&um->sites, vaddr);
}

/* ------------------------------------------------------------ registry */

static struct uprobe_inode *get_uprobe_inode(struct uprobe_inode *ui)
{
	return refcount_inc_not_zero(&ui->ref) ? ui : NULL;
}

static void free_uprobe_inode_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct uprobe_inode, rcu));
}

static void put_uprobe_inode(struct uprobe_inode *ui)
{
	if (!refcount_dec_and_test(&ui->ref))
		return;
	rhashtable_remove_fast(&uprobe_inodes, &ui->node, uprobe_inodes_params);
	WARN_ON_ONCE(!xa_empty(&ui->probes));
	iput(ui->inode);
	call_rcu(&ui->rcu, free_uprobe_inode_rcu);
}

/* The probes of @inode, or NULL if it has none; takes a reference. */
static struct uprobe_inode *find_uprobe_inode(struct inode *inode)
{
	struct uprobe_inode *ui;

	if (!uprobes_ready)
		return NULL;
	rcu_read_lock();
	ui = rhashtable_lookup(&uprobe_inodes, &inode, uprobe_inodes_params);
	if (ui)
		ui = get_uprobe_inode(ui);
	rcu_read_unlock();
	return ui;
}

/* The probes of @inode, created if needed; takes a reference. */
static struct uprobe_inode *find_or_add_uprobe_inode(struct inode *inode)
{
	struct uprobe_inode *ui, *old;

	for (;;) {
		ui = find_uprobe_inode(inode);
		if (ui)
			return ui;
		ui = kzalloc(sizeof(*ui), GFP_KERNEL);
		if (!ui)
			return ERR_PTR(-ENOMEM);
		ui->inode = igrab(inode);
		if (!ui->inode) {
			kfree(ui);
			return ERR_PTR(-ENOENT);
		}
		xa_init(&ui->probes);
		refcount_set(&ui->ref, 1);
		rcu_read_lock();
		old = rhashtable_lookup_get_insert_fast(&uprobe_inodes, &ui->node,
							uprobe_inodes_params);
		if (!old) {
			rcu_read_unlock();
			return ui;
		}
		if (!IS_ERR(old))
			old = get_uprobe_inode(old);
		rcu_read_unlock();
		iput(ui->inode);
		kfree(ui);
		if (old)
			return old;
		/* A dying entry is still in the table: wait for it to go. */
		cond_resched();
	}
}

static struct uprobe *get_uprobe(struct uprobe *uprobe)
{
	return refcount_inc_not_zero(&uprobe->ref) ? uprobe : NULL;
}

static void free_uprobe(struct uprobe *uprobe)
{
	free_percpu(uprobe->stats);
	kfree(uprobe);
}

static void free_uprobe_srcu(struct rcu_head *rcu)
{
	free_uprobe(container_of(rcu, struct uprobe, rcu));
}

/* A new @uprobe that never went into its inode's table: undo its key. */
static void discard_new_uprobe(struct uprobe *uprobe)
{
	xa_erase(&uprobes_by_key, uprobe->key);
	call_srcu(&uprobes_srcu, &uprobe->rcu, free_uprobe_srcu);
}

/* The last reference to @uprobe is gone: unlist it, free it after SRCU. */
static noinline void release_uprobe(struct uprobe *uprobe)
{
	struct uprobe_inode *ui = uprobe->ui;

	xa_cmpxchg(&ui->probes, uprobe->offset, uprobe, NULL, 0);
	xa_erase(&uprobes_by_key, uprobe->key);
	put_uprobe_inode(ui);
	call_srcu(&uprobes_srcu, &uprobe->rcu, free_uprobe_srcu);
}

static inline void put_uprobe(struct uprobe *uprobe)
{
	if (refcount_dec_and_test(&uprobe->ref))
		release_uprobe(uprobe);
}

/* A new site of @uprobe takes a reference (the caller holds one). */
static struct uprobe *site_get_uprobe(struct uprobe *uprobe)
{
	refcount_inc(&uprobe->ref);
	atomic_inc(&uprobe->nr_sites);
	return uprobe;
}

/* @site is being freed: drop its reference. */
static void site_put_uprobe(struct uprobe_site *site)
{
	atomic_dec(&site->uprobe->nr_sites);
	put_uprobe(site->uprobe);
}

/* The probe at @inode:@offset, or NULL; takes a reference. */
static struct uprobe *find_uprobe(struct inode *inode, loff_t offset)
{
	struct uprobe_inode *ui = find_uprobe_inode(inode);
	struct uprobe *uprobe = NULL;

	if (!ui)
		return NULL;
	rcu_read_lock();
	uprobe = xa_load(&ui->probes, offset);
	if (uprobe)
		uprobe = get_uprobe(uprobe);
	rcu_read_unlock();
	put_uprobe_inode(ui);
	return uprobe;
}

/*
 * The probe at @inode:@offset, created if needed (with @ref_ctr_offset);
 * takes a reference. An existing probe keeps its counter offset: the
 * caller checks it under reg_lock (__use_ref_ctr()).
 */
static struct uprobe *find_or_add_uprobe(struct inode *inode, loff_t offset,
					 loff_t ref_ctr_offset)
{
	struct uprobe_inode *ui;
	struct uprobe *uprobe, *old;
	int err;

	ui = find_or_add_uprobe_inode(inode);
	if (IS_ERR(ui))
		return ERR_CAST(ui);
	uprobe = kzalloc(sizeof(*uprobe), GFP_KERNEL);
	if (!uprobe) {
		put_uprobe_inode(ui);
		return ERR_PTR(-ENOMEM);
	}
	uprobe->ui = ui;	/* the new probe owns our reference */
	uprobe->offset = offset;
	uprobe->ref_ctr_offset = ref_ctr_offset;
	uprobe->id = atomic64_inc_return(&uprobe_ids);
	refcount_set(&uprobe->ref, 1);
	mutex_init(&uprobe->reg_lock);
	INIT_LIST_HEAD(&uprobe->consumers);
	err = xa_alloc_cyclic(&uprobes_by_key, &uprobe->key, uprobe,
			      xa_limit_32b, &uprobes_next_key, GFP_KERNEL);
	if (err < 0) {
		free_uprobe(uprobe);
		put_uprobe_inode(ui);
		return ERR_PTR(err);
	}

	for (;;) {
		err = xa_insert(&ui->probes, offset, uprobe, GFP_KERNEL);
		if (!err)
			return uprobe;
		if (err != -EBUSY)
			break;
		rcu_read_lock();
		old = xa_load(&ui->probes, offset);
		if (old)
			old = get_uprobe(old);
		rcu_read_unlock();
		if (old) {
			discard_new_uprobe(uprobe);
			put_uprobe_inode(ui);
			return old;
		}
		/* a dying probe is leaving the slot */
		cond_resched();
	}
	discard_new_uprobe(uprobe);
	put_uprobe_inode(ui);
	return ERR_PTR(err);
}

/* ------------------------------------------------------------ patching */

/* A mapping a breakpoint may go into: private, file-backed, not writable. */
static bool vma_can_probe(struct vm_area_struct *vma)
{
	if (!vma->vm_file || is_vm_hugetlb_page(vma))
		return false;
	if (vma->vm_flags & (VM_WRITE | VM_MAYSHARE | VM_IO | VM_PFNMAP))
		return false;
	return true;
}

static unsigned long offset_to_vaddr(struct vm_area_struct *vma, loff_t off)
{
	return vma->vm_start + off - ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
}

static bool vma_maps_offset(struct vm_area_struct *vma, struct inode *inode,
			    loff_t off)
{
	loff_t start = (loff_t)vma->vm_pgoff << PAGE_SHIFT;

	return vma->vm_file && file_inode(vma->vm_file) == inode &&
	       off >= start && off < start + (vma->vm_end - vma->vm_start);
}

/* Read @len bytes of @inode at @offset from the page cache. */
static int read_file_bytes(struct inode *inode, loff_t offset, void *buf,
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
 * Give @vma's page at @vaddr back to the file: drop the mapping of the
 * anonymous copy and let the fault path map the page-cache page, under
 * its lock and with its mapping checked, as for any other fault. A locked
 * mapping is populated again at once.
 */
static void zap_copy(struct vm_area_struct *vma, unsigned long vaddr)
{
	struct uprobes_mm *um = vma->vm_mm->uprobes_state.sites;
	struct page *page;

	mmap_assert_write_locked(vma->vm_mm);
	/* uprobe_munmap() ignores this page: no site's text goes away. */
	if (um)
		um->zapping = vaddr & PAGE_MASK;
	zap_page_range_single(vma, vaddr & PAGE_MASK, PAGE_SIZE, NULL);
	if (um)
		um->zapping = 0;
	if (!(vma->vm_flags & VM_LOCKED))
		return;
	if (get_user_pages_remote(vma->vm_mm, vaddr, 1, FOLL_FORCE, &page,
				  NULL, NULL) == 1)
		put_page(page);
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
 * Write @len @bytes at @vaddr into @page, the anonymous page @vma maps there,
 * when @vma's mm is its only user: no fork child shares it (it is
 * PageAnonExclusive) and KSM does not. That is the page of an earlier
 * patch of ours, so a second probe in a page costs no copy. The caller
 * makes sure no other CPU runs the page. The page lock
 * keeps reclaim, migration and KSM away while the mapping is checked and
 * the opcode written; the page is dirtied for its swap copy. A thread
 * that took the breakpoint just before a removal finds the instruction
 * restored and runs it again (find_hit()), as with a replaced page.
 *
 * Return: 0; -EAGAIN if @page is no longer mapped there; -EPERM if it
 * must be copied instead.
 */
static int write_in_place(struct vm_area_struct *vma, unsigned long vaddr,
			  struct page *page, const void *bytes, size_t len)
{
	DEFINE_PAGE_VMA_WALK(pvmw, page, vma, vaddr, 0);
	void *kaddr;
	int ret = 0;

	if (!PageAnon(page) || PageKsm(page) || PageCompound(page))
		return -EPERM;
	lock_page(page);
	if (!page_vma_mapped_walk(&pvmw)) {
		ret = -EAGAIN;
		goto unlock_page;
	}
	if (!PageAnonExclusive(page)) {
		ret = -EPERM;
		goto walk_done;
	}
	kaddr = kmap_local_page(page);
	copy_to_user_page(vma, page, vaddr, kaddr + offset_in_page(vaddr),
			  bytes, len);
	kunmap_local(kaddr);
	set_page_dirty(page);
walk_done:
	page_vma_mapped_walk_done(&pvmw);
unlock_page:
	unlock_page(page);
	return ret;
}

/*
 * Put @len @bytes at @vaddr into @old, the page @vma maps there, or rather
 * into a new copy of it mapped in its place; in place only where no other
 * thread runs this page (see the top). Caller holds the mmap_lock for
 * write and a reference on @old.
 *
 * Return: 0; -EAGAIN if @old is no longer mapped there; -ENOSPC, -ENOMEM.
 */
static int patch_page(struct vm_area_struct *vma, unsigned long vaddr,
		      struct page *old, const void *bytes, size_t len)
{
	struct mm_struct *mm = vma->vm_mm;
	struct page *new;
	void *kaddr;
	int ret;

	mmap_assert_write_locked(mm);
	if (mm == current->mm && atomic_read(&mm->mm_users) == 1) {
		ret = write_in_place(vma, vaddr, old, bytes, len);
		if (ret != -EPERM)
			return ret;
	}
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
 * Return: 0; -EBUSY if the opcode there is not the one expected
 * (installing: the instruction's own, which also refuses a breakpoint that
 * is not ours; removing: our breakpoint in an anonymous copy); -EXDEV if
 * the page is not the file's (see page_is_files()); -EINVAL if @vma may
 * not take a breakpoint; -ENOSPC, -ENOMEM, or a fault's -errno.
 */
static int write_opcode(struct arch_uprobe *auprobe,
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
	if (install ? memcmp(&cur, &auprobe->insn, UPROBE_SWBP_INSN_SIZE) :
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
			bool same = PageUptodate(file_page) &&
				    file_page_restores(old, file_page,
						       offset_in_page(vaddr),
						       opcode);

			put_page(file_page);
			if (same) {
				put_page(old);
				zap_copy(vma, vaddr);
				return 0;
			}
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

/* ------------------------------------------------------- SDT counters */

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
static int update_ref_ctr(struct uprobe *uprobe, struct mm_struct *mm,
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

/* ---------------------------------------------------------- sites */

/*
 * @mm's site table, for a reader that holds no mmap_lock (the hit path,
 * uprobe_munmap()): a table seen is initialised. It is freed by RCU
 * (uprobe_clear_state()), so a reader that is not @mm's own task stays in
 * an RCU read section while it uses it.
 */
static struct uprobes_mm *uprobes_mm_of(struct mm_struct *mm)
{
	/* Pairs with smp_store_release() in get_uprobes_mm(). */
	return smp_load_acquire(&mm->uprobes_state.sites);
}

static struct uprobes_mm *get_uprobes_mm(struct mm_struct *mm)
{
	struct uprobes_mm *um = mm->uprobes_state.sites;

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

static void free_site_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct uprobe_site, rcu));
}

static bool bp_still_there(struct uprobe *uprobe, struct vm_area_struct *vma,
			   unsigned long vaddr);
static bool site_still_there(struct uprobe_site *site,
			     struct vm_area_struct *vma);
static int undo_jump(struct mm_struct *mm, struct uprobe_site *site);
static void settle_dead(struct mm_struct *mm);
static void retire_slot(struct mm_struct *mm, unsigned long vaddr);

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
static struct uprobe_site *ctr_site(struct mm_struct *mm,
				    struct uprobe *uprobe,
				    struct uprobe_site *except, bool holder)
{
	struct uprobes_mm *um = mm->uprobes_state.sites;
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

	if (!uprobe->ref_ctr_offset || ctr_site(mm, uprobe, site, true))
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
	heir = ctr_site(mm, site->uprobe, site, false);
	if (heir)
		heir->ref_ctr_done = true;
	else
		update_ref_ctr(site->uprobe, mm, -1, dead);
}

/*
 * Forget @site, whose breakpoint is gone or was never written: drop its
 * counter, take it out of the table and free it after RCU.
 */
static void forget_site(struct mm_struct *mm, struct uprobe_site *site,
			bool dead)
{
	struct uprobes_mm *um = mm->uprobes_state.sites;

	mmap_assert_write_locked(mm);
	drop_ctr(mm, site, dead);
	hot_del(mm, um, site);
	sites_erase(um, site->vaddr);
	retire_slot(mm, site->vaddr);
	site_put_uprobe(site);
	call_rcu(&site->rcu, free_site_rcu);
}

/* One decode of a probe at a time (analyse_in()); nests in mmap_lock. */
static DEFINE_MUTEX(analyse_lock);

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
static int analyse_in(struct uprobe *uprobe, struct mm_struct *mm,
		      unsigned long vaddr)
{
	int ret = 0;

	/* Pairs with the smp_mb__before_atomic() below. */
	if (test_bit_acquire(UPROBE_ANALYSED, &uprobe->flags))
		return arch_uprobe_refuses_mm(&uprobe->arch, mm);
	if (IS_ENABLED(CONFIG_ARCH_UPROBES_ANALYZE_WITHOUT_MM))
		return -ENOEXEC;
	mutex_lock(&analyse_lock);
	if (!test_bit(UPROBE_ANALYSED, &uprobe->flags)) {
		ret = arch_uprobe_analyze_insn(&uprobe->arch, mm, vaddr);
		if (!ret) {
			/* The decoded @arch before the bit; see above. */
			smp_mb__before_atomic();
			set_bit(UPROBE_ANALYSED, &uprobe->flags);
		} else if (ret != -EOPNOTSUPP) {
			set_bit(UPROBE_REFUSED, &uprobe->flags);
		}
	}
	mutex_unlock(&analyse_lock);
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
static int trap_at(struct mm_struct *mm, unsigned long vaddr,
		   bool (*is)(uprobe_opcode_t *insn))
{
	uprobe_opcode_t opcode = 0;
	int ret = read_opcode(mm, vaddr, &opcode);

	return ret ? ret : is(&opcode);
}

/* The first instruction word of @uprobe's original instruction. */
static uprobe_opcode_t orig_opcode(struct uprobe *uprobe)
{
	uprobe_opcode_t opcode = 0;

	memcpy(&opcode, &uprobe->arch.insn, UPROBE_SWBP_INSN_SIZE);
	return opcode;
}

/* A debugger's breakpoint is over @site's: the trap is the debugger's. */
static __always_inline bool debugger_bp(struct uprobe_site *site)
{
	uprobe_opcode_t shown = READ_ONCE(site->shown);

	/* What a probe is on is never a trap (__analyse() refuses it). */
	if (likely(shown == orig_opcode(site->uprobe)))
		return false;
	return is_trap_insn(&shown);
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
static int install_site(struct uprobe *uprobe, struct vm_area_struct *vma,
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
	ret = analyse_in(uprobe, mm, vaddr);
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
 * Does @vma at @vaddr still show our breakpoint for @uprobe? That is what a
 * detached site must show to be re-attached.
 */
static bool bp_still_there(struct uprobe *uprobe, struct vm_area_struct *vma,
			   unsigned long vaddr)
{
	if (!vma_maps_offset(vma, uprobe->ui->inode, uprobe->offset) ||
	    offset_to_vaddr(vma, uprobe->offset) != vaddr)
		return false;
	uprobe_opcode_t orig = orig_opcode(uprobe);

	return !is_swbp_insn(&orig) &&
	       trap_at(vma->vm_mm, vaddr, is_swbp_insn) == 1;
}

static bool jump_there(struct uprobe_site *site, struct vm_area_struct *vma,
		       struct page **page);

/* Does @vma still show @site's breakpoint, or its jump? */
static bool site_still_there(struct uprobe_site *site,
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
static int remove_site(struct mm_struct *mm, struct uprobe_site *site)
{
	struct uprobes_mm *um = mm->uprobes_state.sites;
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
static void remove_sites(struct uprobe *uprobe, struct mm_struct *mm,
			 const struct map_entry *hints, int nr)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct uprobes_mm *um = mm->uprobes_state.sites;
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

static void report_refused(struct vm_area_struct *vma, struct uprobe *uprobe,
			   int err);

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
	       (test_bit(UPROBE_ANALYSED, &uprobe->flags) &&
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
static int install_sites(struct uprobe *uprobe, struct mm_struct *mm,
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

/* ------------------------------------------------------- debuggers */

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
static void __restore_jump(struct uprobes_mm *um, struct vm_area_struct *vma,
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
 * breakpoint back first (__restore_jump()). All of it under the mm's
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
			__restore_jump(um, vma, page, kaddr, page_va, site);
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

/* ---------------------------------------------------------- walks */

/* Unpin the mms of @maps and free it unless it is the caller's @local. */
static void free_maps(struct map_entry *maps, int nr, struct map_entry *local)
{
	while (nr > 0)
		mmput(maps[--nr].mm);
	if (maps != local)
		kfree(maps);
}

/*
 * The mms that map @uprobe's file now, each pinned (an mm appears once per
 * mapping); *@nr receives their number. @whole: any part of the file,
 * else only its probed page, with the address of the offset in each
 * mapping. In @local (@cap entries) if they fit, else in an array to free
 * with free_maps(). Collected under i_mmap_rwsem, which cannot be held
 * while taking an mmap_lock.
 */
static struct map_entry *collect_maps(struct uprobe *uprobe, bool whole,
				      struct map_entry *local, int cap,
				      int *nr)
{
	struct inode *inode = uprobe->ui->inode;
	struct address_space *mapping = inode->i_mapping;
	pgoff_t first = whole ? 0 : uprobe->offset >> PAGE_SHIFT;
	pgoff_t last = whole ? ULONG_MAX : first;
	struct map_entry *maps = local;
	struct vm_area_struct *vma;
	int seen, filled;

	for (;;) {
		seen = 0;
		filled = 0;
		i_mmap_lock_read(mapping);
		vma_interval_tree_foreach(vma, &mapping->i_mmap, first, last) {
			if (!whole && !vma_can_probe(vma) &&
			    !(vma->vm_flags & VM_EXEC))
				continue;
			seen++;
			if (filled < cap && mmget_not_zero(vma->vm_mm)) {
				maps[filled].mm = vma->vm_mm;
				maps[filled].vaddr = whole ? 0 :
					offset_to_vaddr(vma, uprobe->offset);
				/* Pairs with uprobe_dup_mmap_done(). */
				maps[filled++].forks =
				    READ_ONCE(vma->vm_mm->uprobes_state.forks);
			}
		}
		i_mmap_unlock_read(mapping);
		if (seen <= cap)
			break;
		/* The array was too small: size it and collect again. */
		free_maps(maps, filled, local);
		cap = seen + 4;
		maps = kcalloc(cap, sizeof(*maps), GFP_KERNEL);
		if (!maps)
			return ERR_PTR(-ENOMEM);
	}
	*nr = filled;
	return maps;
}

static int cmp_maps(const void *a, const void *b)
{
	const struct mm_struct *x = ((const struct map_entry *)a)->mm;
	const struct mm_struct *y = ((const struct map_entry *)b)->mm;

	return x < y ? -1 : x > y;
}

/*
 * Does any consumer of @uprobe want it in @mm? Caller holds reg_lock (the
 * list's writers' lock) or is in uprobes_srcu.
 */
static bool wanted(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
		   struct mm_struct *mm)
{
	struct uprobe_consumer *uc;

	list_for_each_entry_srcu(uc, &uprobe->consumers, node,
				 srcu_read_lock_held(&uprobes_srcu) ||
				 lockdep_is_held(&uprobe->reg_lock)) {
		if (!uc->filter || uc->filter(uc, ctx, mm))
			return true;
	}
	return false;
}

/*
 * Has fork copied @mm since @maps (@nr entries, all of @mm) were
 * collected? Caller holds the mmap_lock, which fork holds while it copies.
 */
static bool copied_since(struct mm_struct *mm, const struct map_entry *maps,
			 int nr)
{
	mmap_assert_locked(mm);
	while (nr--) {
		if (maps[nr].forks != mm->uprobes_state.forks)
			return true;
	}
	return false;
}

/*
 * __sync_maps() over the mms that map @uprobe's probed page, or (@whole)
 * any part of its file. *@forked is set if one of them was copied by fork
 * since it was collected: the copy may be missing from the collection.
 */
static int __sync_maps_in(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
			  bool whole, bool *forked)
{
	bool adding = ctx == UPROBE_FILTER_REGISTER;
	int i, j, nr, err = 0, ret;
	struct map_entry local[2], *maps;

	lockdep_assert_held(&uprobe->reg_lock);
	maps = collect_maps(uprobe, whole, local, ARRAY_SIZE(local), &nr);
	if (IS_ERR(maps))
		return PTR_ERR(maps);
	/*
	 * An mm with several mappings of the file is visited once, which
	 * matters when each visit walks all its mappings. An mm with several
	 * mappings of the probed page may be visited once per mapping (each
	 * visit patches its own), which spares sorting the usual case.
	 */
	if (whole)
		sort(maps, nr, sizeof(*maps), cmp_maps, NULL);
	for (i = 0; i < nr; i = j) {
		struct mm_struct *mm = maps[i].mm;

		for (j = i + 1; j < nr && maps[j].mm == mm; j++)
			;
		mmap_write_lock(mm);
		if (copied_since(mm, maps + i, j - i))
			*forked = true;
		if (wanted(uprobe, ctx, mm)) {
			ret = install_sites(uprobe, mm, maps + i, j - i);
			if (ret && !err && adding)
				err = ret;
		} else {
			remove_sites(uprobe, mm, maps + i, j - i);
		}
		mmap_write_unlock(mm);
	}
	free_maps(maps, nr, local);
	return err;
}

/*
 * One pass of __sync_maps(); *@forked as for __sync_maps_in().
 */
static int __sync_maps_once(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
			    bool *forked)
{
	int err = __sync_maps_in(uprobe, ctx, false, forked);

	if (ctx != UPROBE_FILTER_REGISTER && atomic_read(&uprobe->nr_sites))
		err = __sync_maps_in(uprobe, ctx, true, forked);
	return err;
}

/*
 * Bring every current mapping of @uprobe's file in line with its
 * consumers: install where one wants it, remove where none does. Caller
 * holds reg_lock. A site outside the mappings of the probed page is
 * detached (its text went away or moved); when sites are left after a
 * removal pass over those mappings, it visits every mm that maps any part
 * of the file, so that detached sites are settled too.
 *
 * A pass that met an mm copied by fork since it was collected goes again,
 * to reach the copy (see "Walks and fork" at the top); after
 * UPROBE_WALK_TRIES such passes, one more keeps forks out.
 *
 * Return: 0, or when @ctx is UPROBE_FILTER_REGISTER (removals do not fail
 * the walk) the first error of an install that fails the registration
 * (install_fatal()); mms that refuse the breakpoint are left out and
 * reported.
 */
static int __sync_maps(struct uprobe *uprobe, enum uprobe_filter_ctx ctx)
{
	bool forked;
	int tries, err;

	lockdep_assert_held(&uprobe->reg_lock);
	for (tries = 0; tries < UPROBE_WALK_TRIES; tries++) {
		forked = false;
		err = __sync_maps_once(uprobe, ctx, &forked);
		if (err && ctx == UPROBE_FILTER_REGISTER)
			return err;	/* the caller unwinds */
		if (!forked)
			return err;
		cond_resched();
	}
	percpu_down_write(&dup_mmap_sem);
	forked = false;
	err = __sync_maps_once(uprobe, ctx, &forked);
	percpu_up_write(&dup_mmap_sem);
	return err;
}

/* ----------------------------------------------------- consumer API */

/*
 * Read the probed instruction from the file, once; decode it now if the
 * architecture can without an mm, else at the first install (analyse_in()).
 */
static int __analyse(struct uprobe *uprobe)
{
	uprobe_opcode_t opcode;
	int ret;

	lockdep_assert_held(&uprobe->reg_lock);
	if (test_bit(UPROBE_READ, &uprobe->flags))
		return 0;
	ret = read_file_bytes(uprobe->ui->inode, uprobe->offset,
			      &uprobe->arch.insn,
			      min_t(loff_t, sizeof(uprobe->arch.insn),
				    i_size_read(uprobe->ui->inode) -
				    uprobe->offset));
	if (ret)
		return ret;
	/* A trap (ours or a debugger's) can be neither stepped nor emulated. */
	BUILD_BUG_ON(sizeof(uprobe->arch.insn) < sizeof(opcode));
	memcpy(&opcode, &uprobe->arch.insn, sizeof(opcode));
	if (is_trap_insn(&opcode))
		return -ENOTSUPP;
	if (IS_ENABLED(CONFIG_ARCH_UPROBES_ANALYZE_WITHOUT_MM)) {
		ret = arch_uprobe_analyze_insn(&uprobe->arch, NULL, 0);
		if (ret)
			return ret;
		set_bit(UPROBE_ANALYSED, &uprobe->flags);
	}
	/* Installs read @arch only after consumers, published later. */
	set_bit(UPROBE_READ, &uprobe->flags);
	return 0;
}

/*
 * Make @ref_ctr_offset the counter of @uprobe. One instruction cannot
 * drive two counters: a probe with consumers or sites keeps its own, and
 * another one is refused. An unused probe (kept only for its counts, see
 * uprobe_stats_hold()) takes the new one. Caller holds reg_lock.
 */
static int __use_ref_ctr(struct uprobe *uprobe, loff_t ref_ctr_offset)
{
	lockdep_assert_held(&uprobe->reg_lock);
	if (uprobe->ref_ctr_offset == ref_ctr_offset)
		return 0;
	if (!list_empty(&uprobe->consumers) || atomic_read(&uprobe->nr_sites)) {
		pr_warn_ratelimited("uprobes: %lu:%llx already has reference counter offset %llx, not %llx\n",
				    uprobe->ui->inode->i_ino, uprobe->offset,
				    uprobe->ref_ctr_offset, ref_ctr_offset);
		return -EINVAL;
	}
	/* Published by list_add_rcu() of the consumer; see install_wanted(). */
	WRITE_ONCE(uprobe->ref_ctr_offset, ref_ctr_offset);
	return 0;
}

/**
 * uprobe_register_refctr - add a consumer to the probe at @inode:@offset
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @ref_ctr_offset: file offset of the SDT counter (unsigned short), or 0
 * @uc: the consumer; see &struct uprobe_consumer
 *
 * Installs the breakpoint in every current mapping of the file that a
 * consumer's filter accepts; later mappings get it as they appear.
 *
 * Return: 0, or -errno with nothing left behind.
 */
int uprobe_register_refctr(struct inode *inode, loff_t offset,
			   loff_t ref_ctr_offset, struct uprobe_consumer *uc)
{
	struct uprobe *uprobe;
	bool first;
	int ret;

	if (!uprobes_ready)
		return -ENOMEM;
	if (!uc->handler && !uc->ret_handler)
		return -EINVAL;
	if (!S_ISREG(inode->i_mode))
		return -EINVAL;
	/* hugetlbfs and the like: no page cache page to copy and patch */
	if (!inode->i_mapping->a_ops->read_folio &&
	    !shmem_mapping(inode->i_mapping))
		return -EOPNOTSUPP;
	if (offset < 0 || offset >= i_size_read(inode))
		return -EINVAL;
	/* A breakpoint is written within one page, at the insn's alignment. */
	if (offset_in_page(offset) > PAGE_SIZE - UPROBE_SWBP_INSN_SIZE ||
	    !IS_ALIGNED(offset, UPROBE_SWBP_INSN_SIZE))
		return -EINVAL;
	if (ref_ctr_offset < 0 || (ref_ctr_offset & 1) ||
	    ref_ctr_offset + 2 > i_size_read(inode))
		return -EINVAL;

	uprobe = find_or_add_uprobe(inode, offset, ref_ctr_offset);
	if (IS_ERR(uprobe))
		return PTR_ERR(uprobe);

	mutex_lock(&uprobe->reg_lock);
	ret = __use_ref_ctr(uprobe, ref_ctr_offset);
	if (ret)
		goto unlock;
	ret = __analyse(uprobe);
	if (ret)
		goto unlock;
	first = list_empty(&uprobe->consumers);
	list_add_rcu(&uc->node, &uprobe->consumers);
	ret = __sync_maps(uprobe, UPROBE_FILTER_REGISTER);
	if (ret) {
		list_del_rcu(&uc->node);
		__sync_maps(uprobe, UPROBE_FILTER_UNREGISTER);
		goto unlock;
	}
	if (first)
		get_uprobe(uprobe);	/* held while there are consumers */
unlock:
	mutex_unlock(&uprobe->reg_lock);
	if (ret)
		synchronize_srcu(&uprobes_srcu);
	put_uprobe(uprobe);
	return ret;
}
EXPORT_SYMBOL_GPL(uprobe_register_refctr);

/**
 * uprobe_register - add a consumer to the probe at @inode:@offset
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: the consumer
 *
 * Return: 0, or -errno.
 */
int uprobe_register(struct inode *inode, loff_t offset,
		    struct uprobe_consumer *uc)
{
	return uprobe_register_refctr(inode, offset, 0, uc);
}
EXPORT_SYMBOL_GPL(uprobe_register);

/*
 * Remove @uc from the probe at @inode:@offset and the breakpoint from every
 * mm where no remaining consumer wants it; handlers of @uc may still be
 * running. Drops the consumers' reference with the last consumer.
 */
static void __unregister(struct inode *inode, loff_t offset,
			 struct uprobe_consumer *uc)
{
	struct uprobe *uprobe = find_uprobe(inode, offset);
	bool last;

	if (WARN_ON_ONCE(!uprobe))
		return;
	mutex_lock(&uprobe->reg_lock);
	list_del_rcu(&uc->node);
	last = list_empty(&uprobe->consumers);
	__sync_maps(uprobe, UPROBE_FILTER_UNREGISTER);
	mutex_unlock(&uprobe->reg_lock);
	/* Freed through SRCU: handlers still running keep it valid. */
	if (last)
		put_uprobe(uprobe);	/* the consumers' reference */
	put_uprobe(uprobe);
}

/**
 * uprobe_unregister - remove a consumer from the probe at @inode:@offset
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: the consumer, as registered
 *
 * On return no handler of @uc runs any more, and the breakpoint is gone
 * from every mm where no remaining consumer wants it.
 */
void uprobe_unregister(struct inode *inode, loff_t offset,
		       struct uprobe_consumer *uc)
{
	__unregister(inode, offset, uc);
	/* Pairs with srcu_read_lock() around the handlers on the hit path. */
	synchronize_srcu(&uprobes_srcu);
}
EXPORT_SYMBOL_GPL(uprobe_unregister);

/**
 * uprobe_unregister_nosync - uprobe_unregister() without the wait
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: the consumer, as registered
 *
 * For a caller unregistering many consumers in a row: handlers of @uc may
 * still be running on return. Before @uc is freed, registered again, or
 * what its handlers use is freed, pass the result to uprobe_unregister_wait().
 *
 * Return: a cookie for uprobe_unregister_wait().
 */
unsigned long uprobe_unregister_nosync(struct inode *inode, loff_t offset,
				       struct uprobe_consumer *uc)
{
	__unregister(inode, offset, uc);
	/* Pairs with srcu_read_lock() around the handlers on the hit path. */
	return start_poll_synchronize_srcu(&uprobes_srcu);
}
EXPORT_SYMBOL_GPL(uprobe_unregister_nosync);

/**
 * uprobe_unregister_wait - wait for the handlers of a nosync unregister
 * @cookie: what uprobe_unregister_nosync() returned
 *
 * On return no handler of that consumer runs any more. The grace periods
 * started by a run of uprobe_unregister_nosync() calls end together, so
 * waiting for each cookie in turn waits about once.
 */
void uprobe_unregister_wait(unsigned long cookie)
{
	if (!poll_state_synchronize_srcu(&uprobes_srcu, cookie))
		synchronize_srcu(&uprobes_srcu);
}
EXPORT_SYMBOL_GPL(uprobe_unregister_wait);

/**
 * uprobe_unregister_done - have the handlers of a nosync unregister returned?
 * @cookie: what uprobe_unregister_nosync() returned
 *
 * Context: any; never waits.
 *
 * Return: true once uprobe_unregister_wait(@cookie) would not wait.
 */
bool uprobe_unregister_done(unsigned long cookie)
{
	return poll_state_synchronize_srcu(&uprobes_srcu, cookie);
}
EXPORT_SYMBOL_GPL(uprobe_unregister_done);

/**
 * uprobe_apply - re-evaluate @uc's filter over the current mappings
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: a registered consumer
 * @add: true when the filter now accepts more mms, false when fewer
 *
 * Return: 0, or -errno (-ENOENT when @uc is not registered there).
 */
int uprobe_apply(struct inode *inode, loff_t offset,
		 struct uprobe_consumer *uc, bool add)
{
	struct uprobe *uprobe = find_uprobe(inode, offset);
	struct uprobe_consumer *cur;
	int ret = -ENOENT;

	if (!uprobe)
		return -ENOENT;
	mutex_lock(&uprobe->reg_lock);
	list_for_each_entry(cur, &uprobe->consumers, node) {
		if (cur == uc) {
			ret = __sync_maps(uprobe, add ? UPROBE_FILTER_REGISTER :
						  UPROBE_FILTER_UNREGISTER);
			break;
		}
	}
	mutex_unlock(&uprobe->reg_lock);
	put_uprobe(uprobe);
	return ret;
}
EXPORT_SYMBOL_GPL(uprobe_apply);

/**
 * uprobe_synchronize - wait for the handlers that are running to return
 *
 * For a consumer that stops using something its handlers read without
 * unregistering (a front end dropping one of its outputs).
 */
void uprobe_synchronize(void)
{
	/* Pairs with srcu_read_lock() around the handlers on the hit path. */
	synchronize_srcu(&uprobes_srcu);
}
EXPORT_SYMBOL_GPL(uprobe_synchronize);

/* @uprobe's counts summed over all CPUs, into @stats. */
static void sum_stats(struct uprobe *uprobe, struct uprobe_stats *stats)
{
	/* Address dependency: pairs with the cmpxchg() in alloc_stats(). */
	struct uprobe_stats __percpu *counts = READ_ONCE(uprobe->stats);
	int cpu;

	memset(stats, 0, sizeof(*stats));
	if (!counts)
		return;		/* never hit */
	for_each_possible_cpu(cpu) {
		struct uprobe_stats *c = per_cpu_ptr(counts, cpu);

		stats->hits += READ_ONCE(c->hits);
		stats->emulated += READ_ONCE(c->emulated);
		stats->stepped += READ_ONCE(c->stepped);
		stats->boosted += READ_ONCE(c->boosted);
		stats->missed += READ_ONCE(c->missed);
	}
}

/**
 * uprobe_get_stats - how the hits of the probe at @inode:@offset were handled
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @stats: filled with the sums over all CPUs
 *
 * The counts cover every process and every consumer of the probe, from its
 * creation (its first registration after it had none) on. A hit is counted
 * only if a consumer's handler saw it.
 *
 * Return: 0, or -ENOENT when there is no such probe.
 */
int uprobe_get_stats(struct inode *inode, loff_t offset,
		     struct uprobe_stats *stats)
{
	struct uprobe *uprobe = find_uprobe(inode, offset);

	memset(stats, 0, sizeof(*stats));
	if (!uprobe)
		return -ENOENT;
	sum_stats(uprobe, stats);
	put_uprobe(uprobe);
	return 0;
}
EXPORT_SYMBOL_GPL(uprobe_get_stats);

/**
 * uprobe_stats_hold - keep the probe at @inode:@offset for its final counts
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 *
 * A hit still in progress when its consumer is unregistered is counted
 * before uprobe_unregister_wait() returns, possibly after the probe lost
 * its last consumer. A caller that wants those counts holds the probe
 * across the unregister and the wait, then reads them with
 * uprobe_stats_release(). The held probe has no breakpoint of its own; a
 * registration at @inode:@offset meanwhile uses it again, with its own
 * counter offset.
 *
 * Return: the probe, or NULL when there is none.
 */
struct uprobe *uprobe_stats_hold(struct inode *inode, loff_t offset)
{
	return find_uprobe(inode, offset);
}
EXPORT_SYMBOL_GPL(uprobe_stats_hold);

/**
 * uprobe_stats_release - read a held probe's counts and let it go
 * @uprobe: what uprobe_stats_hold() returned, or NULL
 * @stats: filled as by uprobe_get_stats(); zeroes for a NULL @uprobe
 */
void uprobe_stats_release(struct uprobe *uprobe, struct uprobe_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (!uprobe)
		return;
	sum_stats(uprobe, stats);
	put_uprobe(uprobe);
}
EXPORT_SYMBOL_GPL(uprobe_stats_release);

/**
 * uprobe_stats_peek - read a held probe's counts so far
 * @uprobe: what uprobe_stats_hold() returned, or NULL
 * @stats: filled as by uprobe_get_stats(); zeroes for a NULL @uprobe
 *
 * The counts are final once the handlers the hold waits for have returned
 * (uprobe_unregister_done()).
 */
void uprobe_stats_peek(struct uprobe *uprobe, struct uprobe_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (uprobe)
		sum_stats(uprobe, stats);
}
EXPORT_SYMBOL_GPL(uprobe_stats_peek);

/**
 * uprobe_stats_settled - may a held probe's counts still grow?
 * @uprobe: what uprobe_stats_hold() returned, or NULL
 *
 * A hit counted before the unregister's grace period ended may have left
 * its read section to carry out the instruction in a way that can wait
 * (see "The hit path and uprobes_srcu"); it says how it did that later.
 * Once uprobe_unregister_done() and this say so, the counts read after
 * are final.
 *
 * Return: true if no such hit is in progress.
 */
bool uprobe_stats_settled(struct uprobe *uprobe)
{
	/* Pairs with atomic_dec_return_release() in hit_end(). */
	return !uprobe || !atomic_read_acquire(&uprobe->held_hits);
}
EXPORT_SYMBOL_GPL(uprobe_stats_settled);

/* ------------------------------------------------------- mm hooks */

static void free_xol_area(struct xol_area *area);
static void unmap_return_table(struct mm_struct *mm);
static int undo_jumps(struct mm_struct *mm, struct uprobes_mm *um,
		      unsigned long start, unsigned long end);
static void dup_stub_areas(struct mm_struct *newmm, struct uprobes_mm *um,
			   struct uprobes_mm *old_um);
static int dup_undo_jump(struct mm_struct *newmm, struct uprobes_mm *um,
			 struct uprobe_site *copy);
static void free_stub_areas(struct uprobes_mm *um);

/*
 * Detached sites of @mm: re-attach those whose breakpoint is still where their
 * mapping shows their offset (the VMA was split or merged), forget the
 * others (their text went away: unmapped, truncated, replaced) and drop
 * their counters, so that a dead site neither holds a +1 for a copy of
 * the data that is gone nor pins its probe. Runs before anything in @mm
 * raises a counter (install_site(), uprobe_mmap()).
 */
static void settle_dead(struct mm_struct *mm)
{
	struct uprobes_mm *um = mm->uprobes_state.sites;
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
static const char *refusal(struct vm_area_struct *vma, int err)
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
static void report_refused(struct vm_area_struct *vma, struct uprobe *uprobe,
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
		  comm, pid, vma->vm_file, uprobe->offset, refusal(vma, err),
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
			want = wanted(uprobe, UPROBE_FILTER_MMAP, vma->vm_mm);
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
	struct uprobes_mm *um = mm->uprobes_state.sites;
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
		    ctr_site(mm, uprobe, site, true))
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

	if (!vma->vm_file)
		return 0;
	mmap_assert_write_locked(mm);
	if (mm->uprobes_state.sites && mm->uprobes_state.sites->moving)
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
	um = vma->vm_mm->uprobes_state.sites;
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
	struct uprobes_mm *um = vma->vm_mm->uprobes_state.sites;

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
	if (!um ||
	    (start == READ_ONCE(um->zapping) && end == start + PAGE_SIZE))
		goto unlock;	/* zapping: the text stays; see zap_copy() */
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
 * Keeps out a walk that gave up on optimistic passes (__sync_maps())
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
	/* Pairs with the READ_ONCE() in collect_maps(); see the top. */
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
static struct uprobe_site *other_site(struct uprobes_mm *um,
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
	struct uprobes_mm *old_um = oldmm->uprobes_state.sites, *um;
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
		__hot_add(um, copy);	/* nobody can see newmm yet */
		if (copy->stub && dup_undo_jump(newmm, um, copy))
			return -ENOMEM;
	}
	xa_for_each(&old_um->sites, index, site) {
		if (!site->ref_ctr_done || xa_load(&um->sites, index))
			continue;
		heir = other_site(um, site->uprobe, NULL);
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

/* ------------------------------------------------------- XOL area */

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
 * back by itself), so reuse is decided by where tasks can be, as the
 * booster seed suggests ("check the ip"):
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
 * So __reuse_slot() takes a retired slot after its grace period if no
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

/* The owner of @slot, NULL if its page is not backed. */
static struct xol_owner *slot_owner(struct xol_area *area, unsigned int slot)
{
	struct xol_owner *owners;

	if (slot >= XOL_SLOTS)
		return NULL;
	/* Pairs with smp_store_release() in grow_xol_area(). */
	owners = smp_load_acquire(&area->owners[slot / XOL_SLOTS_PER_PAGE]);
	return owners ? &owners[slot % XOL_SLOTS_PER_PAGE] : NULL;
}

/* Does @slot hold the recipe of @uprobe at @vaddr? */
static bool slot_is(struct xol_area *area, unsigned int slot,
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

static void free_xol_area(struct xol_area *area)
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

static unsigned long slot_vaddr(struct xol_area *area, unsigned int slot)
{
	return area->vaddr + slot * UPROBE_XOL_SLOT_BYTES;
}

/* The user address of @area's trampoline slot, 0 without an area. */
static unsigned long trampoline_vaddr(struct xol_area *area)
{
	return area ? slot_vaddr(area, XOL_TRAMPOLINE_SLOT) : 0;
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

	/* Pairs with smp_store_release() in map_xol_area(). */
	area = smp_load_acquire(&mm->uprobes_state.xol_area);
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
 * Where a new XOL area of @len bytes goes in current's @mm: at the top of
 * current's address space if that is free (above the stack), else at the
 * highest room below mmap_top(). The second search is done here: from a
 * breakpoint trap, get_unmapped_area() may search the range of another
 * ABI than current's (one picked by the system call in progress), and
 * fail. Caller holds @mm's mmap_lock for writing.
 */
static unsigned long xol_area_vaddr(struct mm_struct *mm, unsigned long len)
{
	struct vm_unmapped_area_info info = {
		.flags = VM_UNMAPPED_AREA_TOPDOWN,
		.length = len,
		.low_limit = max_t(unsigned long, PAGE_SIZE, mmap_min_addr),
		.high_limit = mmap_top(mm),
	};
	unsigned long addr;

	mmap_assert_write_locked(mm);
	addr = get_unmapped_area(NULL, TASK_SIZE - len, len, 0, 0);
	if (!IS_ERR_VALUE(addr))
		return addr;
	return vm_unmapped_area(&info);
}

/*
 * Map a new XOL area into current's @mm, at @addr if non-zero, else where
 * xol_area_vaddr() finds room; returns @mm's area (another thread may
 * have been first).
 */
static struct xol_area *map_xol_area(struct mm_struct *mm, unsigned long addr)
{
	u8 trampoline[UPROBE_XOL_SLOT_BYTES] = {};
	unsigned long len = XOL_AREA_BYTES;
	struct vm_area_struct *vma;
	struct xol_area *area;
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
	if (mm->uprobes_state.xol_area) {	/* another thread was first */
		mmap_write_unlock(mm);
		free_xol_area(area);
		return mm->uprobes_state.xol_area;
	}
	if (!addr)
		addr = xol_area_vaddr(mm, len);
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
	/* Pairs with the smp_load_acquire()s of the hit path. */
	smp_store_release(&mm->uprobes_state.xol_area, area);
	mmap_write_unlock(mm);
	return area;

unlock:
	mmap_write_unlock(mm);
free_area:
	free_xol_area(area);
	return ERR_PTR(err);
}

/* The mm's XOL area, mapped on first use. */
static struct xol_area *get_xol_area(struct mm_struct *mm)
{
	/* Pairs with smp_store_release() in map_xol_area(). */
	struct xol_area *area = smp_load_acquire(&mm->uprobes_state.xol_area);

	return area ? area : map_xol_area(mm, 0);
}

/* @area's return table (kernel address), allocated on first use. */
static unsigned long *get_return_table(struct xol_area *area)
{
	/* Pairs with the smp_store_release()s of @ret_slots. */
	unsigned long *slots = smp_load_acquire(&area->ret_slots);
	struct page *page, *old;

	if (likely(slots))
		return slots;
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

/* Take a free return stub of @area: its index, or -1 if all are owned. */
static int get_return_stub(struct xol_area *area)
{
	unsigned long i, word = READ_ONCE(area->ret_used[0]);

	/* Usually a stub of the first word is free: no bitmap search. */
	if (~word) {
		i = ffz(word);
		if (!test_and_set_bit_lock(i, area->ret_used))
			return i;
	}
	do {
		i = find_first_zero_bit(area->ret_used, UPROBE_RETURN_STUBS);
		if (i >= UPROBE_RETURN_STUBS)
			return -1;
	} while (test_and_set_bit_lock(i, area->ret_used));
	return i;
}

/* Give back stub @i of @area; its table slot may be rewritten from now. */
static void release_return_stub(struct xol_area *area, int i)
{
	clear_bit_unlock(i, area->ret_used);
}

/*
 * @mm (its mmap_lock held for write) is being forked: its return table must
 * not be mapped, or the child's copy of the mapping would keep a page that
 * is neither its own nor refcounted (arch_uretprobe_unmap_table()). Faults
 * wait for the lock, so nothing maps it again before the copy is done.
 */
static void unmap_return_table(struct mm_struct *mm)
{
	struct xol_area *area = mm->uprobes_state.xol_area;

	mmap_assert_write_locked(mm);
	/* Pairs with the cmpxchg() in get_return_table(). */
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
	/* Pairs with smp_store_release() in map_xol_area(). */
	struct xol_area *area = smp_load_acquire(&mm->uprobes_state.xol_area);

	/* Pairs with the cmpxchg() in get_return_table(). */
	return area ? smp_load_acquire(&area->ret_table) : NULL;
}

/* Where slot @slot lives in the kernel's view: page index and offset. */
static void *map_slot(struct xol_area *area, unsigned int slot,
		      unsigned int *page)
{
	*page = slot / (PAGE_SIZE / UPROBE_XOL_SLOT_BYTES);
	return kmap_local_page(area->pages[*page]) +
	       (slot * UPROBE_XOL_SLOT_BYTES) % PAGE_SIZE;
}

/* Slot @slot is no longer anybody's: reuse it once nobody can be in it. */
static void __retire_slot(struct xol_area *area, unsigned int slot)
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
static void retire_slot(struct mm_struct *mm, unsigned long vaddr)
{
	struct xol_area *area = mm->uprobes_state.xol_area;
	void *entry;

	mmap_assert_write_locked(mm);
	if (!area)
		return;
	mutex_lock(&area->lock);
	entry = xa_erase(&area->slots, vaddr);
	if (entry)
		__retire_slot(area, xa_to_value(entry));
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
static unsigned int __reuse_slot(struct mm_struct *mm, struct xol_area *area,
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
 * changed once analysed), @vaddr and the slot's own address, and a used
 * slot is never rewritten while in use, so a slot whose owner is (@uprobe,
 * @vaddr) is reused without a lock: that is every hit after the first in
 * this mm. When every backed slot has been used, a retired one is taken,
 * else the area grows; *@wait says, when it cannot, that a retired slot
 * will be free after an SRCU grace period.
 *
 * Return: the slot's user address, or 0.
 */
static unsigned long get_slot(struct mm_struct *mm, struct uprobe *uprobe,
			      unsigned long vaddr, unsigned int *slot,
			      bool *wait)
{
	struct xol_area *area = get_xol_area(mm);

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
		__retire_slot(area, xa_to_value(entry));
	*slot = 0;
	next = area->next;
	if (next >= area->nr_pages * XOL_SLOTS_PER_PAGE) {
		next = __reuse_slot(mm, area, &gp_pending);
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
		__retire_slot(area, next);	/* nobody entered it */
		goto unlock;
	}
	*slot = next;
unlock:
	mutex_unlock(&area->lock);
	return *slot ? slot_vaddr(area, *slot) : 0;
}

/* Remember the slot of the site at @vaddr for its next hit. */
static void cache_slot(struct mm_struct *mm, struct uprobe *uprobe,
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

/* ------------------------------------------------------- jump sites */

/*
 * One page of code, filled once by the architecture with identical stubs
 * (arch_uprobe_fill_stubs()), mapped read-only by every stub area of every
 * mm; NULL-terminated for the special mapping. NULL (no jump sites) if the
 * architecture has none.
 */
static struct page *stub_pages[2];

/* Jump sites are made only while this is set (the default). */
static bool uprobe_jump_sites = true;
module_param_named(jump_sites, uprobe_jump_sites, bool, 0644);
MODULE_PARM_DESC(jump_sites, "Enter probed instructions that allow it through a jump to a stub, not a breakpoint");

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
static unsigned long stub_site(struct uprobes_mm *um, unsigned long stub)
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
static unsigned long stub_start(unsigned long ip)
{
	BUILD_BUG_ON(!is_power_of_2(UPROBE_STUB_BYTES));
	return ip & ~(UPROBE_STUB_BYTES - 1UL);
}

/* The site of the stub that current's @ip is inside of, or 0. Any context. */
static unsigned long stub_site_at(unsigned long ip)
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
static bool jump_there(struct uprobe_site *site, struct vm_area_struct *vma,
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
 * debugger's write over the jump does (__restore_jump()), if the page is
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
	struct uprobes_mm *um = vma->vm_mm->uprobes_state.sites;
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
		__restore_jump(um, vma, page, kaddr, site->vaddr & PAGE_MASK,
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
static int undo_jump(struct mm_struct *mm, struct uprobe_site *site)
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
static bool hit_hold(struct uprobe *uprobe, struct hit_guard *g);

/*
 * Make the site of @uprobe at @vaddr of current's mm a jump site (see
 * "Jump sites") after a breakpoint hit there, which left @regs, if the
 * architecture allows it (arch_uprobe_jump_len()). Called by the hit,
 * whose guard @g keeps @uprobe, under no lock; leaves the read section
 * for a reference before it waits for the mmap_lock. Does nothing if
 * anything changed since the hit.
 */
static noinline void make_jump_site(struct uprobe *uprobe,
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
	um = mm->uprobes_state.sites;
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
static int undo_jumps(struct mm_struct *mm, struct uprobes_mm *um,
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
static void dup_stub_areas(struct mm_struct *newmm, struct uprobes_mm *um,
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
static int dup_undo_jump(struct mm_struct *newmm, struct uprobes_mm *um,
			 struct uprobe_site *copy)
{
	bool there;

	rcu_read_lock();
	there = stub_site(um, copy->stub) == copy->vaddr;
	rcu_read_unlock();
	return there ? 0 : undo_jump(newmm, copy);
}

/* Free the stub areas of @um, whose mm is gone. */
static void free_stub_areas(struct uprobes_mm *um)
{
	struct uprobe_stub_area *area;
	unsigned int i;

	for (i = 0; i < UPROBE_STUB_AREAS; i++) {
		area = rcu_dereference_protected(um->stubs[i], 1);
		if (area)
			kfree_rcu(area, rcu);
	}
}

/* ------------------------------------------------------- per task */

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

static __always_inline struct uprobe_task *get_utask(void)
{
	struct uprobe_task *utask = current->utask;

	if (!utask) {
		utask = kzalloc(sizeof(*utask), GFP_KERNEL);
		current->utask = utask;
	}
	return utask;
}

/* A return instance: a spare one of the task, else a new one. */
static struct return_instance *alloc_return_instance(struct uprobe_task *utask)
{
	struct return_instance *ri = utask->spare_instances;

	if (!ri)
		return kmalloc(sizeof(*ri), GFP_KERNEL);
	utask->spare_instances = ri->next;
	utask->nr_spare--;
	return ri;
}

/* Keep @ri as a spare for the task, or free it. */
static void recycle_return_instance(struct uprobe_task *utask,
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
static void put_return_stub(struct return_instance *ri)
{
	struct xol_area *area;

	if (ri->stub < 0 || !current->mm)
		return;
	/* Pairs with smp_store_release() in map_xol_area(). */
	area = smp_load_acquire(&current->mm->uprobes_state.xol_area);
	if (!WARN_ON_ONCE(!area))
		release_return_stub(area, ri->stub);
	ri->stub = -1;
}

/* Drop the pending instance *@link of @utask; *@link becomes the next. */
static void drop_return_instance(struct uprobe_task *utask,
				 struct return_instance **link)
{
	struct return_instance *ri = *link;

	*link = ri->next;
	utask->depth--;
	put_return_stub(ri);
	recycle_return_instance(utask, ri);
}

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
	area = READ_ONCE(current->mm->uprobes_state.xol_area);
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
 * wherever a pending return probe replaced one in memory
 * (arch_uretprobe_ret_slot()). For each such word in [@sp, @sp + @size) of
 * a live instance, newest first as for uprobe_fixup_user_callchain(), this
 * gives the bytes the copy should hold instead: the real return address.
 *
 * Runs in any context, NMI included, on current (see
 * uprobe_fixup_user_callchain()).
 *
 * Return: how many of @fix were filled.
 */
int uprobe_user_stack_fixups(struct pt_regs *regs, unsigned long sp,
			     unsigned long size, struct uprobe_stack_fixup *fix,
			     int max)
{
	struct uprobe_task *utask = READ_ONCE(current->utask);
	unsigned long slot, next = sp;
	struct return_instance *ri;
	unsigned int steps = 0;
	int nr = 0, len;
	u32 ret32;
	u64 ret64;

	if (!utask || !current->mm)
		return 0;
	for (ri = READ_ONCE(utask->return_instances);
	     ri && nr < max && ++steps <= UPROBE_MAX_RETURN_DEPTH;
	     ri = READ_ONCE(ri->next)) {
		if (!arch_uretprobe_is_alive(ri, RP_CHECK_CHAIN_CALL, regs))
			continue;
		len = arch_uretprobe_ret_slot(ri, regs, &slot);
		/* in order, once per slot (a chain of tail calls shares one) */
		if ((len != sizeof(ret32) && len != sizeof(ret64)) ||
		    slot < next || slot - sp > size || size - (slot - sp) < len)
			continue;
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
	/* Pairs with the cmpxchg() in get_return_table(). */
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
	/* Pairs with the smp_load_acquire() in get_return_table(). */
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
	/* Pairs with smp_store_release() in map_xol_area(). */
	area = smp_load_acquire(&current->mm->uprobes_state.xol_area);
	if (!area || dup_return_instances(t, utask))
		goto notice;
	child = map_xol_area(t->mm, area->vaddr);
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

/* ------------------------------------------------------- hit path */

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
	/* Pairs with smp_store_release() in map_xol_area(). */
	*slot = trampoline_vaddr(smp_load_acquire(&mm->uprobes_state.xol_area));
	return arch_uretprobe_is_trap(*slot, bp);
}

static bool handle_hit(struct pt_regs *regs);

/* Can a breakpoint of current's be ours (a probe's, or a return's)? */
static bool may_be_ours(void)
{
	struct uprobe_task *utask = current->utask;
	struct mm_struct *mm = current->mm;

	return mm && (READ_ONCE(mm->uprobes_state.sites) ||
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
	/* Pairs with smp_store_release() in map_xol_area(). */
	struct xol_area *area = smp_load_acquire(&mm->uprobes_state.xol_area);
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
	/* boosted_vaddr() found the area: its acquire load pairs. */
	area = mm->uprobes_state.xol_area;
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
	if (ip == vaddr &&
	    step_from_slot(utask, regs, current->mm->uprobes_state.xol_area,
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
static noinline struct uprobe_stats __percpu *alloc_stats(struct uprobe *uprobe)
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

/* Where @uprobe's hits are counted. May sleep (the first time). */
static struct uprobe_stats __percpu *probe_stats(struct uprobe *uprobe)
{
	/* Address dependency: pairs with the cmpxchg() in alloc_stats(). */
	struct uprobe_stats __percpu *counts = READ_ONCE(uprobe->stats);

	return likely(counts) ? counts : alloc_stats(uprobe);
}

/**
 * struct stack_span - the stack a frame is on, as far as the kernel can tell
 * @lo: start of its mapping (0 if unmapped)
 * @hi: end of its mapping
 * @alt: it is on the task's alternate signal stack
 * @known: the fields above are filled in (lazily: most returns need none)
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
 * on first use.
 */
static bool unwound_below(struct stack_span *span, unsigned long frame,
			  unsigned long older)
{
	if (!span->known)
		get_stack_span(span, frame);
	return older >= span->lo && older < span->hi &&
	       __on_sig_stack(older) == span->alt;
}

/*
 * A probed call with its return address at @frame is starting: pending
 * instances of frames at or below @frame on the same stack belong to calls
 * that were unwound without returning (longjmp, siglongjmp, an exception)
 * and are dropped, newest first. An instance at @frame itself is alive
 * only when @chained (its function tail-called this one, our trampoline is
 * still the return address); arch_uretprobe_is_alive() tells which are
 * at or below @frame. Instances of other stacks (a signal handler on its
 * alternate stack, another coroutine) are left alone, and so is everything
 * older than them.
 */
static void drop_dead_at_call(struct uprobe_task *utask, struct pt_regs *regs,
			      unsigned long frame, bool chained)
{
	enum rp_check ctx = chained ? RP_CHECK_CHAIN_CALL : RP_CHECK_CALL;
	struct stack_span span = {};
	struct return_instance *ri;

	while ((ri = utask->return_instances) &&
	       !arch_uretprobe_is_alive(ri, ctx, regs)) {
		/* At @frame itself its return address was overwritten. */
		if (ri->stack != frame && !unwound_below(&span, frame, ri->stack))
			return;
		drop_return_instance(utask, &utask->return_instances);
	}
}

/*
 * Where the call at @regs, returning to @orig, will return now: the
 * architecture's return stub of a table slot taken for it (*@stub), which
 * unwinders can see through, or else the XOL trampoline (*@stub = -1); 0
 * if the task's mode has neither.
 */
static unsigned long return_addr_for(struct xol_area *area,
				     struct pt_regs *regs, unsigned long orig,
				     int *stub)
{
	unsigned long *table, addr;
	int i;

	*stub = -1;
	i = get_return_stub(area);
	if (i < 0)
		goto trampoline;
	addr = arch_uretprobe_stub(regs, i);
	table = addr ? get_return_table(area) : NULL;
	if (!table) {
		release_return_stub(area, i);
		goto trampoline;
	}
	/* Read by unwinders of this task only, after they find the stub. */
	WRITE_ONCE(table[i], orig);
	*stub = i;
	return addr;

trampoline:
	return arch_uretprobe_trampoline(trampoline_vaddr(area), regs);
}

/* Hijack the return address so that @uprobe's return handlers run. */
static void prepare_return(struct uprobe *uprobe, struct pt_regs *regs,
			   struct uprobe_task *utask)
{
	struct xol_area *area = get_xol_area(current->mm);
	unsigned long ret, orig, frame = user_stack_pointer(regs);
	struct return_instance *ri, *top;
	bool chained;

	if (IS_ERR(area))
		goto missed;
	orig = arch_uretprobe_get_return_addr(regs);
	if (orig == -1UL)
		goto missed;
	/*
	 * One of our return addresses as the return address of this call
	 * means a tail call from a return-probed function of this task, so
	 * an instance is pending. With none (a frame that came from another
	 * task's stack, whose return cannot be matched either way), it is
	 * taken as a plain return address, and the arch check is spared.
	 */
	chained = utask->return_instances &&
		  arch_uretprobe_is_return_addr(trampoline_vaddr(area), orig);
	drop_dead_at_call(utask, regs, frame, chained);
	top = utask->return_instances;
	if (chained) {
		/* A tail call of a probed function: same return as its caller. */
		if (!top || top->stack != frame)
			goto missed;	/* not our caller's: leave the stack be */
		orig = top->orig_ret;
	}
	if (utask->depth >= UPROBE_MAX_RETURN_DEPTH) {
		pr_notice_ratelimited("uprobes: %s[%d]: return probes nested deeper than %d: not probing this return\n",
				      current->comm, task_pid_nr(current),
				      UPROBE_MAX_RETURN_DEPTH);
		goto missed;
	}
	ri = alloc_return_instance(utask);
	if (!ri)
		goto missed;
	ri->id = uprobe->id;
	ri->key = uprobe->key;
	ri->stub = -1;
	if (!chained) {
		ret = return_addr_for(area, regs, orig, &ri->stub);
		if (!ret || arch_uretprobe_set_return_addr(regs, ret))
			goto put;
	}
	ri->func = instruction_pointer(regs);
	ri->orig_ret = orig;
	ri->stack = frame;
	ri->chained = chained;
	ri->next = utask->return_instances;
	utask->return_instances = ri;
	utask->depth++;
	return;

put:
	put_return_stub(ri);
	recycle_return_instance(utask, ri);
missed:
	this_cpu_inc(probe_stats(uprobe)->missed);
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
	/* One CPU for all consumers of a return, as in run_handlers(). */
	many = ri->chained || (uprobe && !consumers_single(&uprobe->consumers));
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
	/* Pairs with smp_store_release() in map_xol_area(). */
	area = smp_load_acquire(&mm->uprobes_state.xol_area);
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
	if (force || !wanted(uprobe, UPROBE_FILTER_UNREGISTER, mm)) {
		site = xa_load(&mm->uprobes_state.sites->sites, vaddr);
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

/**
 * struct hit_guard - what keeps the probe of a hit from being freed
 * @idx: the uprobes_srcu read section, while @srcu
 * @srcu: the hit is in a read section of uprobes_srcu
 * @ref: the hit holds a reference on the probe
 * @counting: the hit counted itself in a read section and left it: it is
 *	one of the probe's @held_hits until it ends
 *
 * See "The hit path and uprobes_srcu" at the top: the hit starts in the
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

/*
 * Leave @g's read section for a reference on @uprobe. False if the probe
 * is going away (no site holds it any more, so its breakpoint is gone).
 */
static bool hit_hold(struct uprobe *uprobe, struct hit_guard *g)
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
static void hit_end(struct uprobe *uprobe, struct hit_guard *g)
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
	/* Pairs with smp_store_release() in map_xol_area(). */
	struct xol_area *area = smp_load_acquire(&mm->uprobes_state.xol_area);
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
		/* Pairs with smp_store_release() in map_xol_area(). */
		area = smp_load_acquire(&mm->uprobes_state.xol_area);
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
static bool hit_emulate(struct uprobe *uprobe, struct pt_regs *regs,
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
static __always_inline bool __handle_hit(struct pt_regs *regs,
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
	if (remove || want_return) {
		/* Both may wait for the mmap_lock, the latter fault. */
		if (!hit_hold(uprobe, &g))
			goto gone;
		if (remove)
			remove_current_site(uprobe, bp, false);
		if (want_return)
			prepare_return(uprobe, regs, utask);
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
	if (slot_addr && !task_sigpending(current) &&
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
	if (!stub && unlikely(READ_ONCE(uprobe_jump_sites)))
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
	return __handle_hit(regs, uprobe_get_swbp_addr(regs), false);
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
	if (!__handle_hit(regs, vaddr, true))
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
 * our trap flag, and signals held back for the step are let through.
 *
 * Context: process context, on the way back to user mode.
 */
void uprobe_rseq_abort(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (!utask || utask->state != UTASK_SSTEP)
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

/* ------------------------------------------- architecture defaults */

/*
 * The __weak defaults of the architecture interface (include/linux/
 * uprobes.h): what an architecture does not override gets the classic
 * path. None of them is called in the trap's context.
 */

/**
 * uprobe_get_swbp_addr - address of the breakpoint that trapped
 * @regs: the user registers of the trap
 *
 * Default: the trap reports the address after the breakpoint.
 *
 * Return: the breakpoint's address.
 */
unsigned long __weak uprobe_get_swbp_addr(struct pt_regs *regs)
{
	return instruction_pointer(regs) - UPROBE_SWBP_INSN_SIZE;
}

/**
 * is_swbp_insn - is @insn the uprobes breakpoint?
 * @insn: an instruction word read from user memory
 *
 * Return: true if it is UPROBE_SWBP_INSN (default).
 */
bool __weak is_swbp_insn(uprobe_opcode_t *insn)
{
	return *insn == UPROBE_SWBP_INSN;
}

/**
 * is_trap_insn - does @insn trap (so that a foreign one gets SIGTRAP)?
 * @insn: an instruction word read from user memory
 *
 * Return: is_swbp_insn() by default; an architecture with several trap
 * instructions says yes to all of them.
 */
bool __weak is_trap_insn(uprobe_opcode_t *insn)
{
	return is_swbp_insn(insn);
}

/**
 * set_swbp - install @auprobe's breakpoint in @mm at @vaddr
 * @auprobe: the probe
 * @mm: the mm, mmap_lock held for write
 * @vaddr: the probed address
 *
 * Default: UPROBE_SWBP_INSN through uprobe_write_opcode(); an architecture
 * with a breakpoint per instruction (conditional ones) passes its own.
 *
 * Return: 0 or -errno, as uprobe_write_opcode().
 */
int __weak set_swbp(struct arch_uprobe *auprobe, struct mm_struct *mm,
		    unsigned long vaddr)
{
	return uprobe_write_opcode(auprobe, mm, vaddr, UPROBE_SWBP_INSN);
}

/**
 * arch_uprobe_exception_notify - the architecture's die notifier
 * @self: the notifier block
 * @val: the die event
 * @data: its &struct die_args
 *
 * Registered on the die chain at boot, for architectures whose breakpoint
 * and step traps report there; it calls uprobe_pre_sstep_notifier() or
 * uprobe_post_sstep_notifier().
 *
 * Return: NOTIFY_DONE (default), or NOTIFY_STOP for a trap of ours.
 */
int __weak arch_uprobe_exception_notify(struct notifier_block *self,
					unsigned long val, void *data)
{
	return NOTIFY_DONE;
}

/**
 * arch_uprobe_copy_ixol - write an XOL slot
 * @page: the XOL page
 * @vaddr: the user address written (of a slot, or inside one)
 * @src: the bytes
 * @len: how many
 *
 * Called under the area's lock; the slot is not in use. Must leave the
 * instruction cache coherent for user execution at @vaddr; the default
 * flushes the data cache of the page, which is enough where the
 * instruction cache snoops it.
 */
void __weak arch_uprobe_copy_ixol(struct page *page, unsigned long vaddr,
				  void *src, unsigned long len)
{
	void *kaddr = kmap_local_page(page);

	memcpy(kaddr + offset_in_page(vaddr), src, len);
	kunmap_local(kaddr);
	flush_dcache_page(page);
}

/**
 * arch_uprobe_fill_slot - what an XOL slot holds for a probe
 * @auprobe: the decoded probe
 * @slot: UPROBE_XOL_SLOT_BYTES to fill (a kernel buffer)
 * @slot_vaddr: where the slot is mapped
 * @vaddr: the probed address
 *
 * The result may depend only on the probe, the slot's address and
 * @vaddr: all threads of the mm share the slot. Default: ->ixol.
 *
 * Return: the number of bytes filled (at most UPROBE_XOL_SLOT_BYTES), or
 * -errno if no copy can run.
 */
int __weak arch_uprobe_fill_slot(struct arch_uprobe *auprobe, void *slot,
				 unsigned long slot_vaddr, unsigned long vaddr)
{
	int len = min_t(int, sizeof(auprobe->ixol), UPROBE_XOL_SLOT_BYTES);

	memcpy(slot, &auprobe->ixol, len);
	return len;
}

/**
 * arch_uprobe_boost - run the copy in its slot without a step trap
 * @auprobe: the probe
 * @regs: the user registers, ip at the probed address
 * @slot_vaddr: the slot, filled by arch_uprobe_fill_slot()
 *
 * Return: false (default: no boosting); true if the task was sent to a
 * copy that needs no fix-up and jumps back by itself.
 */
bool __weak arch_uprobe_boost(struct arch_uprobe *auprobe,
			      struct pt_regs *regs, unsigned long slot_vaddr)
{
	return false;
}

/**
 * arch_uprobe_refuses_mm - can @mm's tasks run the probed instruction?
 * @auprobe: the probe, decoded without an mm
 *	(CONFIG_ARCH_UPROBES_ANALYZE_WITHOUT_MM): some task mode can run it
 * @mm: an mm the probe is about to be installed in
 *
 * Asked before each install: an architecture whose one decode covers
 * several task modes refuses an mm whose mode cannot run the instruction,
 * and the registration then fails with that errno. The default accepts.
 *
 * Return: 0, or the -errno of the refusal.
 */
int __weak arch_uprobe_refuses_mm(struct arch_uprobe *auprobe,
				  struct mm_struct *mm)
{
	return 0;
}

/**
 * arch_uprobe_boost_resume - where a task caught in a boosted slot goes
 * @slot: kernel address of the slot's contents
 * @slot_vaddr: its user address
 * @ip: the task's ip, inside the slot
 * @vaddr: the probed address
 *
 * Return: @vaddr if the copy has not run yet, else where its jump back
 * goes. The default (no boosting) restarts at @vaddr.
 */
unsigned long __weak arch_uprobe_boost_resume(const void *slot,
					      unsigned long slot_vaddr,
					      unsigned long ip,
					      unsigned long vaddr)
{
	return vaddr;
}

/**
 * arch_uretprobe_hijack_return_addr - replace the return address
 * @trampoline_vaddr: the new return address
 * @regs: the user registers at the probed function's first instruction
 *
 * Return: the return address replaced, or -1 if it cannot be (then nothing
 * changed). Default: no return probes.
 */
unsigned long __weak
arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
				  struct pt_regs *regs)
{
	return -1UL;
}

/**
 * arch_uretprobe_ret_slot - where a pending return's address is in memory
 * @ri: the pending instance; ->stack is the stack pointer at its entry
 * @regs: the user registers now
 * @slot: set to the user address of the word holding our return address
 *
 * For an architecture whose calls push the return address, that word is
 * known until the function returns, and a copy of the stack (perf's
 * user stack samples) can show the real one (uprobe_user_stack_fixups()).
 * Called in any context, NMI included: must not sleep, fault or lock.
 *
 * Return: the word's size, or 0 if the return address is not at a known
 * place in memory (this default: it was in a register at the call).
 */
int __weak arch_uretprobe_ret_slot(struct return_instance *ri,
				   struct pt_regs *regs, unsigned long *slot)
{
	return 0;
}

/**
 * arch_uretprobe_is_alive - is a pending return of the task still to come?
 * @ri: the pending instance; ->stack is the stack pointer at its entry
 * @ctx: where the question comes from (&enum rp_check)
 * @regs: the user registers now
 *
 * Also called by uprobe_fixup_user_callchain(), in NMI too: it must not
 * sleep or take locks.
 *
 * Return: false if the current stack pointer shows @ri's frame unwound,
 * for a stack growing down (default); a new call at the same stack
 * pointer ends it unless it is a tail call (RP_CHECK_CHAIN_CALL).
 */
bool __weak arch_uretprobe_is_alive(struct return_instance *ri,
				    enum rp_check ctx, struct pt_regs *regs)
{
	if (ctx == RP_CHECK_CHAIN_CALL)
		return user_stack_pointer(regs) <= ri->stack;
	return user_stack_pointer(regs) < ri->stack;
}

/**
 * arch_uretprobe_get_return_addr - the return address of a probed call
 * @regs: the user registers at the function's first instruction
 *
 * Default: read through arch_uretprobe_hijack_return_addr(), putting the
 * value back.
 *
 * Return: the return address, or -1 if it cannot be read.
 */
unsigned long __weak arch_uretprobe_get_return_addr(struct pt_regs *regs)
{
	unsigned long orig = arch_uretprobe_hijack_return_addr(0, regs);

	if (orig != -1UL)
		arch_uretprobe_hijack_return_addr(orig, regs);
	return orig;
}

/**
 * arch_uretprobe_set_return_addr - make a probed call return to @addr
 * @regs: the user registers at the function's first instruction
 * @addr: the new return address
 *
 * Return: 0, or -EFAULT if it cannot be written.
 */
int __weak arch_uretprobe_set_return_addr(struct pt_regs *regs,
					  unsigned long addr)
{
	return arch_uretprobe_hijack_return_addr(addr, regs) == -1UL ?
	       -EFAULT : 0;
}

/**
 * arch_uretprobe_fill_trampoline - write the return trampoline
 * @slot: UPROBE_XOL_SLOT_BYTES (XOL slot 0), zeroed
 *
 * Default: the breakpoint; a return traps there.
 */
void __weak arch_uretprobe_fill_trampoline(void *slot)
{
	uprobe_opcode_t bp = UPROBE_SWBP_INSN;

	memcpy(slot, &bp, UPROBE_SWBP_INSN_SIZE);
}

/**
 * arch_uretprobe_trampoline - the trampoline entry for current's mode
 * @slot: user address of XOL slot 0
 * @regs: the user registers at the probed function's first instruction
 *
 * Return: the return address to install, 0 if the task cannot use it.
 * Default: @slot.
 */
unsigned long __weak arch_uretprobe_trampoline(unsigned long slot,
					       struct pt_regs *regs)
{
	return slot;
}

/**
 * arch_uretprobe_is_trap - is the breakpoint at @bp the trampoline's?
 * @slot: user address of XOL slot 0, 0 if the mm has no XOL area
 * @bp: the breakpoint's address
 *
 * Return: true if @bp is the trampoline (default: @slot itself).
 */
bool __weak arch_uretprobe_is_trap(unsigned long slot, unsigned long bp)
{
	return slot && bp == slot;
}

/**
 * arch_uretprobe_trap - a return reached the trampoline's breakpoint
 * @slot: user address of XOL slot 0
 * @regs: the user registers; the architecture undoes what its trampoline
 *	changed
 *
 * Return: the stack pointer the function had at its entry (default: the
 * current one: the return address was in a register), 0 if unknown.
 */
unsigned long __weak arch_uretprobe_trap(unsigned long slot,
					 struct pt_regs *regs)
{
	return user_stack_pointer(regs);
}

/**
 * arch_uretprobe_stub - the address of return stub @i for current
 * @regs: the user registers at the probed function's first instruction
 * @i: the stub (and return table slot) taken for the call
 *
 * Return: the stub's user address, 0 if there is none (default).
 */
unsigned long __weak arch_uretprobe_stub(struct pt_regs *regs, unsigned int i)
{
	return 0;
}

/**
 * arch_uretprobe_is_return_addr - is @addr one of our return entries?
 * @slot: user address of XOL slot 0
 * @addr: a return address
 *
 * Also called by uprobe_fixup_user_callchain(), in NMI too: it must not
 * sleep or take locks.
 *
 * Return: true for the trampoline (default) or a return stub.
 */
bool __weak arch_uretprobe_is_return_addr(unsigned long slot,
					  unsigned long addr)
{
	return addr == slot;
}

/**
 * arch_uretprobe_unmap_table - unmap @mm's return table before fork
 * @mm: the parent mm, mmap_lock held for write
 *
 * Default: nothing (no return table).
 */
void __weak arch_uretprobe_unmap_table(struct mm_struct *mm)
{
}

/**
 * arch_uretprobe_is_syscall - is this system call the trampoline's?
 * @slot: user address of XOL slot 0, 0 without an XOL area
 * @regs: the user registers at system call entry
 *
 * Return: false (default: no return system call).
 */
bool __weak arch_uretprobe_is_syscall(unsigned long slot,
				      struct pt_regs *regs)
{
	return false;
}

/* Fill the page of stubs that every stub area maps, if the arch has them. */
static void __init init_stub_page(void)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

	if (!page)
		return;
	if (arch_uprobe_fill_stubs(page_address(page)))
		stub_pages[0] = page;
	else
		__free_page(page);
}

/**
 * arch_uprobe_jump_len - may the site of this hit become a jump site?
 * @auprobe: the probe
 * @regs: the user registers of a breakpoint hit of it, in the task's mode
 *
 * A jump site is entered through a jump to a stub instead of a breakpoint
 * (see "Jump sites" at the top of this file): the jump replaces the
 * first bytes of the probed instruction, which must be one instruction
 * that the task's mode runs as the architecture's emulation or copy does,
 * that nothing jumps into, and whose bytes ->insn holds. Called after a
 * breakpoint hit, in process context; also declines while the task is
 * being single-stepped.
 *
 * Return: the jump's length (UPROBE_SWBP_INSN_SIZE to UPROBE_JUMP_MAX, at
 * most the instruction's), or 0 (this default: never).
 */
unsigned int __weak arch_uprobe_jump_len(struct arch_uprobe *auprobe,
					 struct pt_regs *regs)
{
	return 0;
}

/**
 * arch_uprobe_fill_jump - the jump from a site to its stub
 * @vaddr: the site's user address
 * @stub: the stub's user address, less than UPROBE_JUMP_REACH away
 * @jump: where the arch_uprobe_jump_len() bytes of the jump go
 *
 * Return: true if filled; false if the jump cannot reach (this default).
 */
bool __weak arch_uprobe_fill_jump(unsigned long vaddr, unsigned long stub,
				  u8 *jump)
{
	return false;
}

/**
 * arch_uprobe_fill_stubs - write the page that every stub area maps
 * @page: kernel address of a zeroed page, mapped read-only and executable
 *
 * Each UPROBE_STUB_BYTES of it is a stub: it keeps what the system call
 * clobbers where the kernel finds it, writing nothing below the stack
 * pointer that the program may use (a red zone), and makes the system call
 * whose handler passes the registers of the site to uprobe_stub_hit(),
 * and that arch_uprobe_stub_syscall() recognises.
 *
 * Return: true if the architecture has jump sites; false (this default).
 */
bool __weak arch_uprobe_fill_stubs(void *page)
{
	return false;
}

/**
 * arch_uprobe_stub_syscall - the stub that made this system call
 * @regs: the user registers at system call entry
 *
 * Return: the user address of the stub, if this is the stubs' system call
 * made in a mode that has jump sites (whether from a stub in use is the
 * core's question: uprobe_stub_site()); else 0 (this default).
 */
unsigned long __weak arch_uprobe_stub_syscall(struct pt_regs *regs)
{
	return 0;
}

/**
 * arch_uprobe_leave_stub - put a task that is inside a stub back at its site
 * @regs: the task's user registers, with the ip inside the stub
 * @stub: the user address the stub starts at
 * @vaddr: the address of the site whose jump leads to the stub
 *
 * Called before a signal is delivered to current (it may sleep and fault
 * on the user stack): undo what the stub's instructions before @regs' ip
 * did, and set the ip to @vaddr, so that the registers and the stack are
 * the program's at the site. An architecture with jump sites must do this
 * for every ip between a stub's start and its system call; this default,
 * for those without, does nothing.
 */
void __weak arch_uprobe_leave_stub(struct pt_regs *regs, unsigned long stub,
				   unsigned long vaddr)
{
}

static struct notifier_block uprobe_exception_nb = {
	.notifier_call = arch_uprobe_exception_notify,
	/* after kprobes and hw_breakpoint (INT_MAX), before the rest */
	.priority = INT_MAX - 1,
};

void __init uprobes_init(void)
{
	/* Without the table uprobes stay off: registration says -ENOMEM. */
	uprobes_ready = !WARN_ON_ONCE(rhashtable_init(&uprobe_inodes,
						      &uprobe_inodes_params));
	WARN_ON_ONCE(register_die_notifier(&uprobe_exception_nb));
	init_stub_page();
}
