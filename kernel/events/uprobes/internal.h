/* SPDX-License-Identifier: GPL-2.0+ */
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
 *			kept meeting forks (see "Walks and fork").
 *   mmap_lock (write)	every change to an mm's site table and counters;
 *			also taken by the hit path's slow cases (moved
 *			breakpoint, UPROBE_HANDLER_REMOVE).
 *   analyze_lock	decoding a probe with the first mm it goes into
 *			(analyze_in_mm()), where the architecture needs an mm.
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
#ifndef _KERNEL_EVENTS_UPROBES_INTERNAL_H
#define _KERNEL_EVENTS_UPROBES_INTERNAL_H

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
 * @key: index in uprobes_by_key, where pending returns find the probe
 * @ref: references: consumers (one for all), sites, temporary ones
 * @nr_sites: how many sites (in all mms) hold a reference; a removal walk
 *	that leaves some covers the whole file (__sync_maps())
 * @reg_lock: serialises register/unregister/apply of this probe
 * @consumers: the consumers, an SRCU-protected list written under @reg_lock
 * @flags: UPROBE_READ once @arch holds the instruction's bytes,
 *	UPROBE_ANALYZED once it is decoded too, UPROBE_REFUSED once the
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

#define UPROBE_ANALYZED		0
#define UPROBE_READ		1
#define UPROBE_REFUSED		2

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

extern struct srcu_struct uprobes_srcu;
extern struct percpu_rw_semaphore dup_mmap_sem;
extern struct rhashtable uprobe_inodes;
extern bool uprobes_ready;
extern struct xarray uprobes_by_key;
extern struct page *stub_pages[2];
extern bool uprobe_jump_sites;

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
struct uprobes_mm *uprobes_mm_of(struct mm_struct *mm);

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
uprobe_opcode_t orig_opcode(struct uprobe *uprobe);
int install_site(struct uprobe *uprobe, struct vm_area_struct *vma,
		 unsigned long vaddr);
bool bp_still_there(struct uprobe *uprobe, struct vm_area_struct *vma,
		    unsigned long vaddr);
bool site_still_there(struct uprobe_site *site,
		      struct vm_area_struct *vma);
int remove_site(struct mm_struct *mm, struct uprobe_site *site);
void remove_sites(struct uprobe *uprobe, struct mm_struct *mm,
		  const struct map_entry *hints, int nr);
int install_sites(struct uprobe *uprobe, struct mm_struct *mm,
		  const struct map_entry *hints, int nr);
void __restore_jump(struct uprobes_mm *um, struct vm_area_struct *vma,
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
unsigned long slot_vaddr(struct xol_area *area, unsigned int slot);
unsigned long trampoline_vaddr(struct xol_area *area);
struct xol_area *map_xol_area(struct mm_struct *mm, unsigned long addr);
struct xol_area *get_xol_area(struct mm_struct *mm);
unsigned long *get_return_table(struct xol_area *area);
int get_return_stub(struct xol_area *area);
void release_return_stub(struct xol_area *area, int i);
void unmap_return_table(struct mm_struct *mm);
void *map_slot(struct xol_area *area, unsigned int slot,
	       unsigned int *page);
void retire_slot(struct mm_struct *mm, unsigned long vaddr);
unsigned long get_slot(struct mm_struct *mm, struct uprobe *uprobe,
		       unsigned long vaddr, unsigned int *slot,
			      bool *wait);
void cache_slot(struct mm_struct *mm, struct uprobe *uprobe,
		unsigned long vaddr, unsigned int slot);

/* jump.c */
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

/* task.c */
struct return_instance *alloc_return_instance(struct uprobe_task *utask);
void recycle_return_instance(struct uprobe_task *utask,
			     struct return_instance *ri);
void put_return_stub(struct return_instance *ri);
void drop_return_instance(struct uprobe_task *utask,
			  struct return_instance **link);

/* hit.c */
bool hit_hold(struct uprobe *uprobe, struct hit_guard *g);

static inline struct uprobe_site __rcu **hot_entry(struct uprobes_mm *um,
						   unsigned long vaddr)
{
	return &um->hot[hash_long(vaddr, UPROBE_HOT_BITS)];
}

/*
 * @site entered @um->sites: cache it if its entry is free. Caller holds
 * the mm's mmap_lock for write, or the mm is not visible to anyone yet.
 */
static inline void __hot_add(struct uprobes_mm *um, struct uprobe_site *site)
{
	struct uprobe_site __rcu **e = hot_entry(um, site->vaddr);

	if (!rcu_access_pointer(*e))
		rcu_assign_pointer(*e, site);
}

static inline void hot_add(struct mm_struct *mm, struct uprobes_mm *um,
			   struct uprobe_site *site)
{
	mmap_assert_write_locked(mm);
	__hot_add(um, site);
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
