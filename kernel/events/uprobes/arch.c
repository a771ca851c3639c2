// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: the __weak defaults of the architecture interface (the classic path).
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

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
 * arch_uprobe_boost_leave - current leaves a boosted copy other than by it
 * @regs: current's user registers, ip still inside the slot
 *
 * Called when the task, caught in a boosted slot, is moved out of it: to
 * the address arch_uprobe_boost_resume() gave, to a step of the copy, or by
 * rseq to an abort handler. The architecture undoes what
 * arch_uprobe_boost() changed besides ip and the copy has not undone yet.
 * Default: nothing (a boost changes only ip).
 *
 * Context: current, any context; must not touch user memory or sleep.
 */
void __weak arch_uprobe_boost_leave(struct pt_regs *regs)
{
}

/**
 * arch_uretprobe_hijack_return_addr - replace the return address of a call
 * @trampoline_vaddr: the new return address: a return stub
 *	(arch_uretprobe_stub()) or the trampoline entry
 *	(arch_uretprobe_trampoline()), or the old one being put back
 * @regs: the user registers at the probed function's first instruction
 *
 * The one hook that reads and writes a probed call's return address, where
 * the call left it (a register, or memory at the stack pointer). The core
 * calls it once per probed call, before it knows the old address; when it
 * then does not probe that return after all (a tail call that returns to
 * us already, a chain too deep, no memory), it calls it again with the
 * address it returned, to leave the call as it was. Both happen in the
 * probe's hit, before the task returns to user mode.
 *
 * Context: process context, with the task's own registers; may fault on
 * user memory, or is called with page faults disabled (in the hit's read
 * section: then an access that would fault fails).
 *
 * Return: the return address replaced, or -1 if it cannot be (then nothing
 * changed). Default: no return probes (-1).
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
 * @lo: set to the lowest user address the word may start at
 * @hi: set to the user address the word ends at, at the highest
 *
 * A copy of the stack (perf's user stack samples) can show the real return
 * address (uprobe_user_stack_fixups()) where the word holding ours is
 * known: at @lo if @hi - @lo is the word's size (an architecture whose
 * calls push it: the stack pointer at the function's entry); else it is
 * the highest word in [@lo, @hi) that holds our return address (an
 * architecture whose calls leave it in a register that the function saves
 * in its own frame, below the stack pointer of its entry: then @lo is the
 * stack pointer now and @hi is @ri->stack). Called in any context, NMI
 * included: must not sleep, fault or lock.
 *
 * Return: the word's size, or 0 if the return address is not at a known
 * place in memory (this default: it was in a register at the call, and
 * where the function keeps it is not known).
 */
int __weak arch_uretprobe_ret_slot(struct return_instance *ri,
				   struct pt_regs *regs, unsigned long *lo,
				   unsigned long *hi)
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

/**
 * arch_uprobe_jump_len - may the site of this hit become a jump site?
 * @auprobe: the probe
 * @regs: the user registers of a breakpoint hit of it, in the task's mode
 *
 * A jump site is entered through a jump to a stub instead of a breakpoint
 * (see "Jump sites" in Documentation/trace/uprobes.rst): the jump replaces the
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

static int uprobe_static_key_set(const char *val, const struct kernel_param *kp)
{
	struct static_key *key = kp->arg;
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (on)
		static_key_enable(key);
	else
		static_key_disable(key);
	return 0;
}

static int uprobe_static_key_get(char *buf, const struct kernel_param *kp)
{
	struct static_key *key = kp->arg;

	return sprintf(buf, "%c\n", static_key_enabled(key) ? 'Y' : 'N');
}

/*
 * The parameter ops of a layer's on/off switch that the hit path tests
 * through a static key (so that the default costs a hit nothing): the
 * parameter's arg is the key, &NAME.key of a DEFINE_STATIC_KEY_TRUE/FALSE.
 * Writing it patches the key's branches (it sleeps; parameters are set
 * in process context).
 */
const struct kernel_param_ops uprobe_static_key_param_ops = {
	.set = uprobe_static_key_set,
	.get = uprobe_static_key_get,
};

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
