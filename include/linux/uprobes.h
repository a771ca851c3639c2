/* SPDX-License-Identifier: GPL-2.0+ */
#ifndef _LINUX_UPROBES_H
#define _LINUX_UPROBES_H
/*
 * User-space probes (uprobes): breakpoints on instructions of files, fired in
 * every process that maps the file, with optional SDT reference counters.
 *
 * This header is included from <linux/mm_types.h>, so it must not include
 * <linux/mm.h> or <linux/sched.h>; per-mm and per-task state are reached
 * through pointers to types that only kernel/events/uprobes/ completes.
 *
 * The design (objects, lifetimes, lock order, hit path):
 * Documentation/trace/uprobes.rst.
 */
#include <linux/errno.h>
#include <linux/list.h>
#include <linux/types.h>

struct inode;
struct mm_struct;
struct notifier_block;
struct page;
struct pt_regs;
struct task_struct;
struct vm_area_struct;

/**
 * enum uprobe_filter_ctx - why a consumer's filter is asked about an mm
 * @UPROBE_FILTER_REGISTER: the consumer is being registered
 * @UPROBE_FILTER_UNREGISTER: a consumer is being unregistered; keep the
 *	breakpoint in this mm only if some remaining consumer wants it
 * @UPROBE_FILTER_MMAP: the probed file was just mapped into the mm
 */
enum uprobe_filter_ctx {
	UPROBE_FILTER_REGISTER,
	UPROBE_FILTER_UNREGISTER,
	UPROBE_FILTER_MMAP,
};

/*
 * A handler may return UPROBE_HANDLER_REMOVE to ask that the breakpoint be
 * removed from the current mm, when no consumer's filter still wants it.
 */
#define UPROBE_HANDLER_REMOVE		1
#define UPROBE_HANDLER_MASK		1

/**
 * struct uprobe_consumer - one user of a probe
 * @handler: called on each hit, in process context of the task that hit
 *	the probe, before the probed instruction runs; may sleep
 * @ret_handler: for return probes, called when the probed function returns;
 *	@func is the probed function's address
 * @filter: optional; tells whether the consumer wants the probe in an mm
 * @node: links the consumer into its probe's consumer list (core-private)
 *
 * The consumer must stay allocated until uprobe_unregister() returns; once it
 * has returned, no handler of the consumer runs any more.
 */
struct uprobe_consumer {
	int (*handler)(struct uprobe_consumer *self, struct pt_regs *regs);
	int (*ret_handler)(struct uprobe_consumer *self, unsigned long func,
			   struct pt_regs *regs);
	bool (*filter)(struct uprobe_consumer *self,
		       enum uprobe_filter_ctx ctx, struct mm_struct *mm);
	struct list_head node;
};

/**
 * struct uprobe_stats - how the hits of one probe were handled
 * @hits: hits whose handlers ran
 * @emulated: hits whose instruction the kernel emulated
 * @stepped: hits whose instruction was single-stepped out of line
 * @boosted: hits whose instruction ran out of line without a step trap
 * @missed: hits, or return probes, that could not be served: no memory
 *	for the task's state, no XOL slot, an instruction that cannot run in
 *	the task's CPU mode (the probe then leaves that process), a return
 *	probe past the nesting bound
 */
struct uprobe_stats {
	u64 hits;
	u64 emulated;
	u64 stepped;
	u64 boosted;
	u64 missed;
};

/**
 * struct uprobe_stack_fixup - a word of a user stack copy to replace
 * @addr: its user address
 * @size: its length, at most sizeof(@bytes)
 * @bytes: what the copy holds there instead, in memory order
 *
 * Also without CONFIG_UPROBES, for callers of uprobe_user_stack_fixups().
 */
struct uprobe_stack_fixup {
	unsigned long addr;
	unsigned int size;
	u8 bytes[8];
};

#ifdef CONFIG_UPROBES
#include <asm/uprobes.h>

/*
 * Jump sites (see arch_uprobe_jump_len()): an architecture that has them
 * defines UPROBE_JUMP_REACH, how far either way its jump reaches, and may
 * define UPROBE_STUB_BYTES, the size of one stub. A jump is at most
 * UPROBE_JUMP_MAX bytes.
 */
#ifndef UPROBE_JUMP_REACH
#define UPROBE_JUMP_REACH	0UL
#endif
#ifndef UPROBE_STUB_BYTES
#define UPROBE_STUB_BYTES	32
#endif
#define UPROBE_JUMP_MAX		8

struct uprobe;
struct uprobes_mm;
struct xol_area;

/**
 * enum uprobe_task_state - where a task is in handling a probe hit
 * @UTASK_RUNNING: not handling a hit
 * @UTASK_SSTEP: running the instruction copy out of line, single-stepped
 * @UTASK_SSTEP_ACK: the step trapped; fix-ups run on the way back to user
 *	mode
 */
enum uprobe_task_state {
	UTASK_RUNNING,
	UTASK_SSTEP,
	UTASK_SSTEP_ACK,
};

/**
 * enum rp_check - what arch_uretprobe_is_alive() is asked about
 * @RP_CHECK_CALL: a return-probed call starts at the current stack pointer
 * @RP_CHECK_CHAIN_CALL: the same, reached by a tail call from a
 *	return-probed function (its return address is already ours); also
 *	what uprobe_fixup_user_callchain() asks of a frame, possibly in NMI
 * @RP_CHECK_RET: a return came back through the trampoline
 */
enum rp_check {
	RP_CHECK_CALL,
	RP_CHECK_CHAIN_CALL,
	RP_CHECK_RET,
};

/**
 * struct return_instance - a pending return probe of a task
 * @id: the &struct uprobe id of the probe whose function is running
 * @key: that probe's key in the core's table of probes by key: the
 *	instance holds no reference, and finds the probe at the return
 *	only if it is still there (and has the same @id)
 * @func: the probed function's address
 * @orig_ret: where the function really returns to
 * @stack: the stack pointer at the function's entry (where its return
 *	address is, on architectures that push it), which identifies the call
 * @chained: returns to the same place as the next (older) instance (a tail
 *	call of a probed function: same @stack)
 * @stub: the architecture's return stub (and table slot) this instance
 *	owns, -1 if none (it returns through the XOL trampoline, or is
 *	@chained)
 * @next: the next older instance
 *
 * Core-private but for @stack, which arch_uretprobe_is_alive() reads.
 */
struct return_instance {
	u64 id;
	u32 key;
	unsigned long func;
	unsigned long orig_ret;
	unsigned long stack;
	bool chained;
	int stub;
	struct return_instance *next;
};

/**
 * struct uprobe_task - per-task uprobes state, allocated on first hit
 * @state: see &enum uprobe_task_state
 * @vaddr: user address of the breakpoint being handled
 * @xol_vaddr: user address of the XOL slot in use while stepping
 * @active: the probe being stepped over; holds a reference, because a task
 *	cannot stay inside an SRCU read section across the return to user mode
 * @auprobe: the architecture part of the probe whose hit is being handled:
 *	set while its handlers run (ip at the probed instruction, not yet
 *	run) and while its copy is stepped, NULL otherwise (also while it is
 *	emulated or boosted); read locklessly by the architecture's perf
 *	callchain code, possibly from NMI, which takes [sp] for the caller of
 *	a function probed at its first instruction
 * @autask: architecture state saved across the step
 * @return_instances: the task's pending return-probe instances, newest
 *	first
 * @depth: number of @return_instances
 * @spare_instances: freed instances kept for the next calls
 * @nr_spare: number of @spare_instances
 * @signals_held: uprobe_deny_signal() held a signal back during the step
 * @debugger_vaddr: the probed address whose hit, handlers run, was just
 *	reported to a debugger whose breakpoint is over ours; the next trap
 *	there, before any single-step trap, is the debugger resuming the task
 *	at the instruction, which then runs without the handlers. 0 for none
 * @unseen_syscall: the task is in a system call of uprobes' trampoline or
 *	stubs, whose exit no tracer sees (uprobe_syscall_exit_unseen())
 */
struct uprobe_task {
	enum uprobe_task_state state;
	unsigned long vaddr;
	unsigned long xol_vaddr;
	struct uprobe *active;
	struct arch_uprobe *auprobe;
	struct arch_uprobe_task autask;
	struct return_instance *return_instances;
	unsigned int depth;
	struct return_instance *spare_instances;
	unsigned int nr_spare;
	bool signals_held;
	bool unseen_syscall;
	unsigned long debugger_vaddr;
};

/**
 * struct uprobes_state - per-mm uprobes state, embedded in &struct mm_struct
 * @xol_area: the mm's execute-out-of-line area, mapped on demand
 * @sites: the mm's breakpoint table (vaddr -> patched site), allocated on the
 *	first breakpoint installed in the mm
 * @forks: how many copies of the mm fork has completed; written under the
 *	mmap_lock held for write (uprobe_dup_mmap_done())
 *
 * All start zero in every new mm (mm_init_uprobes_state()): dup_mm() copies
 * the parent's mm_struct bytewise, so the child must never inherit them.
 */
struct uprobes_state {
	struct xol_area *xol_area;
	struct uprobes_mm *sites;
	unsigned long forks;
};

int uprobe_register(struct inode *inode, loff_t offset,
		    struct uprobe_consumer *uc);
int uprobe_register_refctr(struct inode *inode, loff_t offset,
			   loff_t ref_ctr_offset, struct uprobe_consumer *uc);
int uprobe_apply(struct inode *inode, loff_t offset,
		 struct uprobe_consumer *uc, bool add);
void uprobe_unregister(struct inode *inode, loff_t offset,
		       struct uprobe_consumer *uc);
unsigned long uprobe_unregister_nosync(struct inode *inode, loff_t offset,
				       struct uprobe_consumer *uc);
void uprobe_unregister_wait(unsigned long cookie);
bool uprobe_unregister_done(unsigned long cookie);
int uprobe_get_stats(struct inode *inode, loff_t offset,
		     struct uprobe_stats *stats);
struct uprobe *uprobe_stats_hold(struct inode *inode, loff_t offset);
void uprobe_stats_release(struct uprobe *uprobe, struct uprobe_stats *stats);
void uprobe_stats_peek(struct uprobe *uprobe, struct uprobe_stats *stats);
bool uprobe_stats_settled(struct uprobe *uprobe);

int uprobe_write_opcode(struct arch_uprobe *auprobe, struct mm_struct *mm,
			unsigned long vaddr, uprobe_opcode_t opcode);

int uprobe_mmap(struct vm_area_struct *vma);
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end);
int uprobe_start_move(struct vm_area_struct *vma);
void uprobe_end_move(struct vm_area_struct *vma, struct vm_area_struct *new,
		     unsigned long old_addr, unsigned long new_addr,
		     unsigned long len);
void uprobe_start_dup_mmap(void);
void uprobe_end_dup_mmap(void);
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm);
int uprobe_dup_sites(struct mm_struct *oldmm, struct mm_struct *newmm);
void uprobe_dup_mmap_done(struct mm_struct *oldmm);
void uprobe_clear_state(struct mm_struct *mm);
void uprobe_free_utask(struct task_struct *t);
void uprobe_copy_process(struct task_struct *t, unsigned long flags);
void uprobe_notify_resume(struct pt_regs *regs);
bool uprobe_deny_signal(void);
unsigned long uprobe_rseq_ip(struct pt_regs *regs);
void uprobe_rseq_abort(struct pt_regs *regs);
unsigned long uprobe_get_trap_addr(struct pt_regs *regs);
void uprobe_handle_return(struct pt_regs *regs, unsigned long frame);
bool uprobe_syscall_from_trampoline(struct pt_regs *regs);
bool uprobe_syscall_enter_unseen(struct pt_regs *regs);
void uprobe_syscall_unseen(void);
bool uprobe_syscall_exit_unseen(void);
struct page *uprobe_return_table(struct mm_struct *mm);
void uprobe_fixup_user_callchain(struct pt_regs *regs, u64 *ips,
				 unsigned int nr);

int uprobe_user_stack_fixups(struct pt_regs *regs, unsigned long sp,
			     unsigned long size, struct uprobe_stack_fixup *fix,
			     int max);
bool uprobe_remote_read(struct vm_area_struct *vma, struct page *page,
			const void *kaddr, unsigned long addr, void *buf,
			int len);
bool uprobe_remote_write(struct vm_area_struct *vma, struct page *page,
			 void *kaddr, unsigned long addr, const void *buf,
			 int len);
void uprobes_init(void);

/*
 * The architecture interface.
 *
 * An architecture with uprobes (ARCH_SUPPORTS_UPROBES) provides
 * <asm/uprobes.h> with uprobe_opcode_t, UPROBE_SWBP_INSN (its breakpoint),
 * UPROBE_SWBP_INSN_SIZE, UPROBE_XOL_SLOT_BYTES (room for one instruction
 * copy), struct arch_uprobe (with the probed instruction's bytes in
 * ->insn, read from the file by the core, and the bytes to run out of line
 * in ->ixol, filled in by its analysis; they may share storage) and
 * struct arch_uprobe_task (its state kept across a step).
 *
 * The classic path needs only the hooks below without a default, plus two
 * calls from its trap handlers: uprobe_pre_sstep_notifier() on a
 * breakpoint in user mode and uprobe_post_sstep_notifier() on a step trap,
 * both in the trap's context; the hit and the end of the step are then
 * handled on the way back to user mode (TIF_UPROBE, uprobe_notify_resume()).
 * The core copies ->ixol to an XOL slot, and returns of return probes come
 * back to a breakpoint in XOL slot 0. Everything else has a __weak default
 * in kernel/events/uprobes/arch.c that an architecture overrides to opt into a
 * fast path: a hit handled in the trap itself (uprobe_hit_in_trap()),
 * instruction copies of its own making, boosting, return stubs and a return
 * table, a return system call.
 */

/* Called by the architecture's trap handlers. */
int uprobe_pre_sstep_notifier(struct pt_regs *regs);
int uprobe_post_sstep_notifier(struct pt_regs *regs);
bool uprobe_hit_in_trap(struct pt_regs *regs);
bool uprobe_leave_boosted_copy(struct pt_regs *regs);
/* ... and by its entry from a stub, and its #DB handler (jump sites). */
#ifdef CONFIG_UPROBE_JUMP_SITES
unsigned long uprobe_stub_site(unsigned long stub);
#else
static inline unsigned long uprobe_stub_site(unsigned long stub)
{
	return 0;
}
#endif
void uprobe_stub_hit(struct pt_regs *regs, unsigned long vaddr);

/* Implemented by every architecture with uprobes. */

/**
 * arch_uprobe_analyze_insn - decide how a probed instruction is run
 * @auprobe: the probe; ->insn holds the instruction's bytes from the file
 * @mm: an mm the probe is about to be installed in, or NULL: see below
 * @vaddr: the probed address in @mm, 0 with a NULL @mm
 *
 * Called once per probe, before any breakpoint of it is installed, in
 * process context (may sleep). With CONFIG_ARCH_UPROBES_ANALYZE_WITHOUT_MM
 * it is called at registration with a NULL @mm and must then accept an
 * instruction that some task mode can run; otherwise it is called with the
 * first mm the probe is installed in, under that mm's mmap_lock.
 *
 * Return: 0, or -errno to refuse the probe (in @mm only, for an mm's mode).
 */
int arch_uprobe_analyze_insn(struct arch_uprobe *auprobe,
			     struct mm_struct *mm, unsigned long vaddr);

/**
 * arch_uprobe_pre_xol - prepare current to run the copy in its XOL slot
 * @auprobe: the probe
 * @regs: the user registers, ip at the probed address
 *
 * current->utask->vaddr and ->xol_vaddr are set. Sends the task to the
 * copy with single-stepping on. Process context, after the handlers.
 *
 * Return: 0, or -errno if the copy cannot run in this task (the core then
 * takes the probe out of the task's mm).
 */
int arch_uprobe_pre_xol(struct arch_uprobe *auprobe, struct pt_regs *regs);

/**
 * arch_uprobe_post_xol - the step of the copy completed: fix up
 * @auprobe: the probe
 * @regs: the user registers after the step
 *
 * Process context (uprobe_notify_resume()).
 *
 * Return: 0; -EAGAIN to go on stepping; another -errno
 * to abort the step (arch_uprobe_abort_xol()).
 */
int arch_uprobe_post_xol(struct arch_uprobe *auprobe, struct pt_regs *regs);

/**
 * arch_uprobe_xol_was_trapped - did the copy fault instead of completing?
 * @t: current
 *
 * Return: true if a trap other than the step's ended the step.
 */
bool arch_uprobe_xol_was_trapped(struct task_struct *t);

/**
 * arch_uprobe_abort_xol - undo arch_uprobe_pre_xol() after a fault or signal
 * @auprobe: the probe
 * @regs: the user registers; ip goes back to the probed address
 */
void arch_uprobe_abort_xol(struct arch_uprobe *auprobe, struct pt_regs *regs);

/**
 * arch_uprobe_skip_sstep - emulate the probed instruction if possible
 * @auprobe: the probe
 * @regs: the user registers, ip at the probed address
 *
 * Called after the handlers, in process context.
 *
 * Return: true if the instruction's effect is now in @regs (no step).
 */
bool arch_uprobe_skip_sstep(struct arch_uprobe *auprobe, struct pt_regs *regs);

#ifdef arch_uprobe_ignore
bool arch_uprobe_ignore(struct arch_uprobe *auprobe, struct pt_regs *regs);
#else
/**
 * arch_uprobe_ignore - should this hit be skipped altogether?
 * @auprobe: the probe
 * @regs: the user registers, ip at the probed address
 *
 * Called before the handlers. An architecture with conditional
 * instructions defines arch_uprobe_ignore (the name, as a macro) and the
 * function, which moves ip past an instruction whose condition fails.
 *
 * Return: false (this default, free in the hit path); true if skipped.
 */
static inline bool arch_uprobe_ignore(struct arch_uprobe *auprobe,
				      struct pt_regs *regs)
{
	return false;
}
#endif

/* Defaults in kernel/events/uprobes/arch.c (__weak); see there. */
unsigned long uprobe_get_swbp_addr(struct pt_regs *regs);
bool is_swbp_insn(uprobe_opcode_t *insn);
bool is_trap_insn(uprobe_opcode_t *insn);
int set_swbp(struct arch_uprobe *auprobe, struct mm_struct *mm,
	     unsigned long vaddr);
int arch_uprobe_exception_notify(struct notifier_block *self,
				 unsigned long val, void *data);
void arch_uprobe_copy_ixol(struct page *page, unsigned long vaddr,
			   void *src, unsigned long len);
int arch_uprobe_fill_slot(struct arch_uprobe *auprobe, void *slot,
			  unsigned long slot_vaddr, unsigned long vaddr);
int arch_uprobe_refuses_mm(struct arch_uprobe *auprobe, struct mm_struct *mm);
bool arch_uprobe_boost(struct arch_uprobe *auprobe, struct pt_regs *regs,
		       unsigned long slot_vaddr);
unsigned long arch_uprobe_boost_resume(const void *slot,
				       unsigned long slot_vaddr,
				       unsigned long ip, unsigned long vaddr);
void arch_uprobe_boost_leave(struct pt_regs *regs);
unsigned long arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
						struct pt_regs *regs);
bool arch_uretprobe_is_alive(struct return_instance *ri, enum rp_check ctx,
			     struct pt_regs *regs);
int arch_uretprobe_ret_slot(struct return_instance *ri, struct pt_regs *regs,
			    unsigned long *lo, unsigned long *hi);
void arch_uretprobe_fill_trampoline(void *slot);
unsigned long arch_uretprobe_trampoline(unsigned long slot,
					struct pt_regs *regs);
bool arch_uretprobe_is_trap(unsigned long slot, unsigned long bp);
unsigned long arch_uretprobe_trap(unsigned long slot, struct pt_regs *regs);
unsigned long arch_uretprobe_stub(struct pt_regs *regs, unsigned int i);
bool arch_uretprobe_is_return_addr(unsigned long slot, unsigned long addr);
void arch_uretprobe_unmap_table(struct mm_struct *mm);
bool arch_uretprobe_is_syscall(unsigned long slot, struct pt_regs *regs);
unsigned int arch_uprobe_jump_len(struct arch_uprobe *auprobe,
				  struct pt_regs *regs);
bool arch_uprobe_fill_jump(unsigned long vaddr, unsigned long stub, u8 *jump);
bool arch_uprobe_fill_stubs(void *page);
unsigned long arch_uprobe_stub_syscall(struct pt_regs *regs);
void arch_uprobe_leave_stub(struct pt_regs *regs, unsigned long stub,
			    unsigned long vaddr);

/* An architecture's on/off parameter (uprobes.*) backed by a static key. */
extern const struct kernel_param_ops uprobe_static_key_param_ops;

#else /* !CONFIG_UPROBES */
#include <asm/ptrace.h>
#include <linux/string.h>

struct uprobe;

struct uprobes_state {
};

static inline int uprobe_register(struct inode *inode, loff_t offset,
				  struct uprobe_consumer *uc)
{
	return -EOPNOTSUPP;
}

static inline int uprobe_register_refctr(struct inode *inode, loff_t offset,
					 loff_t ref_ctr_offset,
					 struct uprobe_consumer *uc)
{
	return -EOPNOTSUPP;
}

static inline int uprobe_apply(struct inode *inode, loff_t offset,
			       struct uprobe_consumer *uc, bool add)
{
	return -EOPNOTSUPP;
}

static inline void uprobe_unregister(struct inode *inode, loff_t offset,
				     struct uprobe_consumer *uc)
{
}

static inline unsigned long
uprobe_unregister_nosync(struct inode *inode, loff_t offset,
			 struct uprobe_consumer *uc)
{
	return 0;
}

static inline void uprobe_unregister_wait(unsigned long cookie)
{
}

static inline bool uprobe_unregister_done(unsigned long cookie)
{
	return true;
}

static inline int uprobe_get_stats(struct inode *inode, loff_t offset,
				   struct uprobe_stats *stats)
{
	return -ENOENT;
}

static inline struct uprobe *uprobe_stats_hold(struct inode *inode,
					       loff_t offset)
{
	return NULL;
}

static inline void uprobe_stats_release(struct uprobe *uprobe,
					struct uprobe_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
}

static inline void uprobe_stats_peek(struct uprobe *uprobe,
				     struct uprobe_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
}

static inline bool uprobe_stats_settled(struct uprobe *uprobe)
{
	return true;
}

static inline int uprobe_mmap(struct vm_area_struct *vma)
{
	return 0;
}

static inline void uprobe_munmap(struct vm_area_struct *vma,
				 unsigned long start, unsigned long end)
{
}

static inline int uprobe_start_move(struct vm_area_struct *vma)
{
	return 0;
}

static inline void uprobe_end_move(struct vm_area_struct *vma,
				   struct vm_area_struct *new,
				   unsigned long old_addr,
				   unsigned long new_addr, unsigned long len)
{
}

static inline void uprobe_start_dup_mmap(void)
{
}

static inline void uprobe_end_dup_mmap(void)
{
}

static inline void uprobe_dup_mmap(struct mm_struct *oldmm,
				   struct mm_struct *newmm)
{
}

static inline int uprobe_dup_sites(struct mm_struct *oldmm,
				   struct mm_struct *newmm)
{
	return 0;
}

static inline void uprobe_dup_mmap_done(struct mm_struct *oldmm)
{
}

static inline void uprobe_clear_state(struct mm_struct *mm)
{
}

static inline void uprobe_free_utask(struct task_struct *t)
{
}

static inline void uprobe_copy_process(struct task_struct *t,
				       unsigned long flags)
{
}

static inline void uprobe_notify_resume(struct pt_regs *regs)
{
}

static inline bool uprobe_deny_signal(void)
{
	return false;
}

static inline unsigned long uprobe_rseq_ip(struct pt_regs *regs)
{
	return instruction_pointer(regs);
}

static inline void uprobe_rseq_abort(struct pt_regs *regs)
{
}

static inline unsigned long uprobe_get_trap_addr(struct pt_regs *regs)
{
	return instruction_pointer(regs);
}

static inline bool uprobe_syscall_from_trampoline(struct pt_regs *regs)
{
	return false;
}

static inline bool uprobe_syscall_enter_unseen(struct pt_regs *regs)
{
	return false;
}

static inline bool uprobe_syscall_exit_unseen(void)
{
	return false;
}

static inline struct page *uprobe_return_table(struct mm_struct *mm)
{
	return NULL;
}

static inline void uprobe_fixup_user_callchain(struct pt_regs *regs,
					       u64 *ips, unsigned int nr)
{
}

static inline int uprobe_user_stack_fixups(struct pt_regs *regs,
					   unsigned long sp,
					   unsigned long size,
					   struct uprobe_stack_fixup *fix,
					   int max)
{
	return 0;
}

static inline bool uprobe_remote_read(struct vm_area_struct *vma,
				      struct page *page, const void *kaddr,
				      unsigned long addr, void *buf, int len)
{
	return false;
}

static inline bool uprobe_remote_write(struct vm_area_struct *vma,
				       struct page *page, void *kaddr,
				       unsigned long addr, const void *buf,
				       int len)
{
	return false;
}

static inline void uprobes_init(void)
{
}

#endif /* CONFIG_UPROBES */
#endif /* _LINUX_UPROBES_H */
