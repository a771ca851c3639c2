// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes, x86: running a copy out of line. The slot's contents (each
 * mode's copy with its guard or jump back), boosting, the single-step with
 * pre_xol/post_xol/abort_xol and the fix-ups after it, and the int3 and #DB
 * notifiers that end a step.
 *
 * Design: Documentation/trace/uprobes.rst, "The x86 implementation".
 */
#include "internal.h"

/*
 * Write the jump back of a boosted copy at @at (user address @at_vaddr) to
 * @target: 64-bit code jumps through the address stored right after the
 * jump (the slot may be anywhere in the address space), 32-bit code jumps
 * relative (it all wraps at 4 GiB).
 */
static void aup_jump_back(const struct arch_uprobe_plan *p, u8 *at,
			  unsigned long at_vaddr, unsigned long target)
{
	BUILD_BUG_ON(MAX_UINSN_BYTES + AUP_RESTORE_LEN + AUP_JMP64_LEN >
		     AUP_COPY32);
	BUILD_BUG_ON(AUP_COPY32 + MAX_UINSN_BYTES + AUP_JMP32_LEN >
		     UPROBE_XOL_SLOT_BYTES);
	if (p->ia32) {
		at[0] = 0xe9;
		put_unaligned((u32)(target - (at_vaddr + AUP_JMP32_LEN)),
			      (u32 *)(at + 1));
		return;
	}
	at[0] = 0xff;
	at[1] = 0x25;
	put_unaligned(0U, (u32 *)(at + 2));
	put_unaligned((u64)target, (u64 *)(at + 6));
}

/*
 * Write at @at the restore of an AUP_BOOST_SCRATCH copy's scratch register
 * (rsi, rdi or rbx): mov -AUP_BOOST_SAVE_OFF(%rsp),%reg, disp32.
 */
static void aup_restore_scratch(const struct arch_uprobe_plan *p, u8 *at)
{
	at[0] = 0x48;					/* REX.W */
	at[1] = 0x8b;					/* mov r/m64,r64 */
	at[2] = 0x84 | (p->scratch & 7) << 3;		/* [SIB + disp32] */
	at[3] = 0x24;					/* base rsp */
	put_unaligned((s32)-AUP_BOOST_SAVE_OFF, (s32 *)(at + 4));
}

/**
 * arch_uprobe_fill_slot - write the out-of-line recipe of a probe
 * @au: the probe
 * @slot: kernel buffer of UPROBE_XOL_SLOT_BYTES bytes, the slot's contents
 * @slot_vaddr: the user address the slot has in the task's mm
 * @vaddr: the probed address the slot stands for
 *
 * Writes, at aup_copy_off() of its mode, the copy of each mode's plan
 * that can run there (not a 32-bit one above 4 GiB), each followed by the
 * guard int3
 * and, for a relative branch, its landing int3; the other bytes are int3s
 * too; a boostable straight-line copy is followed by its jump back to
 * @vaddr + len instead of the guard (aup_jump_back()), after the restore
 * of its scratch register for AUP_BOOST_SCRATCH. The contents depend
 * only on @au, @vaddr and @slot_vaddr, never on the task that fills it, so
 * a slot can be shared by every thread of the mm, kept across hits and
 * used by a task in either mode.
 *
 * Context: any.
 *
 * Return: UPROBE_XOL_SLOT_BYTES, or -ENOEXEC if no mode's copy can run in
 * this slot.
 */
int arch_uprobe_fill_slot(struct arch_uprobe *au, void *slot,
			  unsigned long slot_vaddr, unsigned long vaddr)
{
	u8 *s = slot;
	bool used = false;
	unsigned int at;
	int mode;

	/*
	 * Guard: reached only when the copy ran without a #DB (the kernel
	 * emulated it, or a rep string instruction ran its last iterations
	 * without TF); the int3 notifier then reports the step as done.
	 * The booster will put its jump back to vaddr + len here instead.
	 * The next int3 is where a taken relative branch lands (its #DB
	 * comes first).
	 */
	BUILD_BUG_ON(AUP_COPY32 + MAX_UINSN_BYTES + 2 > UPROBE_XOL_SLOT_BYTES);
	memset(s, UPROBE_SWBP_INSN, UPROBE_XOL_SLOT_BYTES);
	for (mode = 0; mode < AUP_NR_MODES; mode++) {
		const struct arch_uprobe_plan *p = &au->plan[mode];

		if (p->err || !p->xol_len || p->xol_len > MAX_UINSN_BYTES)
			continue;
		if (p->ia32 && slot_vaddr + UPROBE_XOL_SLOT_BYTES > BIT_ULL(32))
			continue;
		at = aup_copy_off(mode);
		memcpy(s + at, p->xol, p->xol_len);
		at += p->xol_len;
		if (p->boostable == AUP_BOOST_SCRATCH) {
			aup_restore_scratch(p, s + at);
			at += AUP_RESTORE_LEN;
		}
		if (p->boostable && (p->fixups & AUP_FIX_IP))
			aup_jump_back(p, s + at, slot_vaddr + at,
				      aup_trunc(p, vaddr + p->len));
		used = true;
	}
	return used ? UPROBE_XOL_SLOT_BYTES : -ENOEXEC;
}

/*
 * Enter the AUP_BOOST_SCRATCH copy at @copy: the program's scratch register
 * goes below the red zone for the slot's restore (faults disabled: this
 * runs in the hit's read section) and into @at, and the register is
 * loaded with the address the RIP-relative operand is relative to.
 * False, and nothing changed, if that word cannot be written, or if the
 * operand may cover it.
 */
static bool aup_boost_scratch(const struct arch_uprobe_plan *p,
			      struct pt_regs *regs,
			      struct arch_uprobe_task *at, unsigned long copy)
{
	unsigned long *r = aup_regp(regs, p->scratch), next = regs->ip + p->len;
	unsigned long save = regs->sp - AUP_BOOST_SAVE_OFF;
	int err;

	/* An operand of up to 16 KiB (xsave) that starts below its end */
	if (save + sizeof(long) - 1 - (next + p->rel) < SZ_16K)
		return false;
	pagefault_disable();
	err = put_user(*r, (unsigned long __user *)save);
	pagefault_enable();
	if (err)
		return false;
	at->saved_scratch = *r;
	at->boost_copy = copy;
	at->boost_restore = copy + p->xol_len;
	at->boost_reg = p->scratch;
	*r = next;
	return true;
}

/**
 * arch_uprobe_boost - send the task through its slot with no step trap
 * @au: the probe
 * @regs: the user registers; @regs->ip is the probed address
 * @slot_vaddr: the probe's slot (filled by arch_uprobe_fill_slot())
 *
 * A boostable copy needs nothing from the kernel once it ran: a
 * straight-line one jumps back to the next instruction by itself, and a
 * ret or an indirect jump leaves the slot on its own. Declined when the
 * program is being single-stepped (it must trap after exactly this
 * instruction: the core steps it then) and where the copy cannot run.
 *
 * Return: true if @regs now resume in the slot.
 */
bool arch_uprobe_boost(struct arch_uprobe *au, struct pt_regs *regs,
		       unsigned long slot_vaddr)
{
	const struct arch_uprobe_plan *p = aup_plan(au, regs);
	struct arch_uprobe_task *at = &current->utask->autask;
	unsigned long copy;

	if (!p || !p->boostable ||
	    (p->ia32 && slot_vaddr + UPROBE_XOL_SLOT_BYTES > BIT_ULL(32)))
		return false;
	if ((regs->flags & X86_EFLAGS_TF) ||
	    test_thread_flag(TIF_SINGLESTEP) || test_thread_flag(TIF_BLOCKSTEP))
		return false;
	copy = slot_vaddr + aup_copy_off(p - au->plan);
	at->boost_reg = 0;
	if (p->boostable == AUP_BOOST_SCRATCH &&
	    !aup_boost_scratch(p, regs, at, copy))
		return false;
	regs->ip = copy;
	return true;
}

/**
 * arch_uprobe_boost_leave - current leaves a boosted copy other than by it
 * @regs: current's user registers, ip still in the slot
 *
 * The core moves the task out of the slot (to where
 * arch_uprobe_boost_resume() says, or to a step of the copy), or rseq
 * sends it to an abort handler: an AUP_BOOST_SCRATCH copy whose slot has
 * not restored the scratch register yet gets it back from the kernel's
 * copy.
 *
 * Context: current, in any context; touches no user memory.
 */
void arch_uprobe_boost_leave(struct pt_regs *regs)
{
	struct arch_uprobe_task *at;

	if (!current->utask)
		return;
	at = &current->utask->autask;
	if (!at->boost_reg)
		return;
	if (regs->ip - at->boost_copy <= at->boost_restore - at->boost_copy)
		*aup_regp(regs, at->boost_reg) = at->saved_scratch;
	at->boost_reg = 0;
}

/**
 * arch_uprobe_boost_resume - where a task found inside a boosted slot goes on
 * @slot: kernel copy of the slot's contents
 * @slot_vaddr: the slot's user address
 * @ip: the task's ip, inside the slot
 * @vaddr: the probed address the slot stands for
 *
 * A task can be stopped in a slot only at the start of a copy (it has not
 * run yet), at the restore of the scratch register of an AUP_BOOST_SCRATCH
 * copy or at the jump back after it (it has). The restore and the jump
 * back have no effect on the program (arch_uprobe_boost_leave() restores
 * the register), so the task can as well be at the jump's target.
 *
 * Return: @vaddr if the copy has not run (the probed instruction is still
 * to be executed), else the jump back's target.
 */
unsigned long arch_uprobe_boost_resume(const void *slot,
				       unsigned long slot_vaddr,
				       unsigned long ip, unsigned long vaddr)
{
	unsigned long off = ip - slot_vaddr;
	const u8 *j = (const u8 *)slot + off;
	u64 target;
	s32 rel;

	if (off >= UPROBE_XOL_SLOT_BYTES || off == aup_copy_off(AUP_MODE_64) ||
	    off == aup_copy_off(AUP_MODE_32))
		return vaddr;
	/* mov -AUP_BOOST_SAVE_OFF(%rsp),%reg: the jump back follows */
	if (off + AUP_RESTORE_LEN <= UPROBE_XOL_SLOT_BYTES &&
	    j[0] == 0x48 && j[1] == 0x8b && (j[2] & 0xc7) == 0x84 &&
	    j[3] == 0x24 &&
	    get_unaligned((s32 *)(j + 4)) == -AUP_BOOST_SAVE_OFF) {
		j += AUP_RESTORE_LEN;
		off += AUP_RESTORE_LEN;
	}
	if (off + AUP_JMP64_LEN <= UPROBE_XOL_SLOT_BYTES &&
	    j[0] == 0xff && j[1] == 0x25 && !get_unaligned((u32 *)(j + 2))) {
		target = get_unaligned((u64 *)(j + 6));
		return target;
	}
	if (off + AUP_JMP32_LEN <= UPROBE_XOL_SLOT_BYTES && j[0] == 0xe9) {
		rel = get_unaligned((s32 *)(j + 1));
		return (u32)(slot_vaddr + off + AUP_JMP32_LEN + rel);
	}
	return vaddr;
}

/*
 * Does a near call to a non-canonical target store its return address below
 * the (unmoved) stack pointer before its #GP? AMD's and Hygon's CPUs do not;
 * the others do.
 */
static bool aup_call_gp_stores(void)
{
	return boot_cpu_data.x86_vendor != X86_VENDOR_AMD &&
	       boot_cpu_data.x86_vendor != X86_VENDOR_HYGON;
}

/*
 * A relative call to a non-canonical target raises #GP without moving sp;
 * its copy in the slot branches to the slot and pushes there. Keep the word
 * its push overwrites when the CPU would not have stored the return address.
 */
static void aup_save_below_sp(const struct arch_uprobe_plan *p,
			      struct pt_regs *regs, struct arch_uprobe_task *at)
{
	unsigned long target = aup_trunc(p, current->utask->vaddr + p->len +
					 p->rel);

	at->saved_below_sp = 0;
	if (p->ia32 || aup_call_gp_stores() ||
	    __is_canonical_address(target, boot_cpu_data.x86_virt_bits))
		return;
	if (get_user(at->saved_below_sp, (unsigned long __user *)(regs->sp - 8)))
		at->saved_below_sp = 0;	/* the copy's push faults as well */
}

/**
 * arch_uprobe_pre_xol - prepare the task to step the copy in its slot
 * @au: the probe
 * @regs: the user registers; @regs->ip is the probed address
 *
 * current->utask->vaddr is the probed address, ->xol_vaddr the slot
 * (filled by arch_uprobe_fill_slot()). Saves what post_xol or abort_xol
 * restore, loads the scratch register of a RIP-relative copy, points ip at
 * the copy of the task's mode and sets TF (not for a rep string copy of a
 * program that does not step itself: the guard int3 ends that one).
 *
 * Context: process context, IRQs enabled.
 *
 * Return: 0, or -ENOEXEC if the probe cannot be stepped in the task's mode
 * or from this slot (nothing is changed then).
 */
int arch_uprobe_pre_xol(struct arch_uprobe *au, struct pt_regs *regs)
{
	const struct arch_uprobe_plan *p = aup_plan(au, regs);
	struct uprobe_task *ut = current->utask;
	struct arch_uprobe_task *at = &ut->autask;

	if (!p || (p->ia32 && ut->xol_vaddr + UPROBE_XOL_SLOT_BYTES >
				      BIT_ULL(32)))
		return -ENOEXEC;

	at->mode = p - au->plan;
	at->boost_reg = 0;		/* saved_scratch is the step's now */
	at->dr6 = 0;
	at->tf_was_set = regs->flags & X86_EFLAGS_TF;
	at->blockstep = test_thread_flag(TIF_BLOCKSTEP);
	if (at->blockstep)
		set_task_blockstep(current, false);

	at->saved_trap_nr = current->thread.trap_nr;
	current->thread.trap_nr = AUP_TRAP_NR;

	if (p->fixups & AUP_FIX_SCRATCH) {
		unsigned long *r = aup_regp(regs, p->scratch);

		at->saved_scratch = *r;
		*r = ut->vaddr + p->len;
	}
	if ((p->fixups & AUP_FIX_CALL) && (p->fixups & AUP_FIX_RELBR))
		aup_save_below_sp(p, regs, at);
	regs->ip = aup_copy_vaddr(ut);
	/*
	 * A rep string copy runs without TF (unless the program steps
	 * itself): its guard int3 ends the step, so a hit costs no #DB.
	 */
	if (!(p->fixups & AUP_FIX_REP) || at->tf_was_set)
		regs->flags |= X86_EFLAGS_TF;
	return 0;
}

/* The plan being stepped (recorded by pre_xol). */
static const struct arch_uprobe_plan *aup_stepped(const struct arch_uprobe *au)
{
	return &au->plan[current->utask->autask.mode % AUP_NR_MODES];
}

/* Restore what pre_xol changed, except ip. */
static void aup_undo(const struct arch_uprobe_plan *p, struct pt_regs *regs,
		     bool rearm_blockstep)
{
	struct arch_uprobe_task *at = &current->utask->autask;

	if (p->fixups & AUP_FIX_SCRATCH)
		*aup_regp(regs, p->scratch) = at->saved_scratch;
	/* A fault's trap_nr stays: the signal frame reports it. */
	if (current->thread.trap_nr == AUP_TRAP_NR)
		current->thread.trap_nr = at->saved_trap_nr;
	if (!at->tf_was_set)
		regs->flags &= ~X86_EFLAGS_TF;
	if (at->blockstep && rearm_blockstep)
		set_task_blockstep(current, true);
}

/* Report debug-trap bits to the program, as exc_debug_user() does. */
static void aup_sigtrap(struct pt_regs *regs, unsigned long dr6)
{
	current->thread.virtual_dr6 = dr6;
	send_sigtrap(regs, 0, get_si_code(dr6));
}

/* The #GP of a branch to a non-canonical address, as the CPU raises it. */
static int aup_gp(void)
{
	current->thread.error_code = 0;
	current->thread.trap_nr = X86_TRAP_GP;
	force_sig(SIGSEGV);
	return -EFAULT;
}

/* Write the low @size bytes of @val at user @addr. */
static int aup_put(unsigned long addr, unsigned long val, unsigned int size)
{
	if (size == 4)
		return put_user((u32)val, (u32 __user *)addr);
	return put_user((u64)val, (u64 __user *)addr);
}

/**
 * arch_uprobe_post_xol - finish a step of the copy
 * @au: the probe
 * @regs: the user registers after the step trap
 *
 * Called after the step reported done (our #DB, or the guard int3 with
 * @regs->ip rewound to the end of the copy). Restores the scratch register
 * and trap_nr, moves ip back to the original code (next instruction or
 * branch target), corrects a call's return address and a pushf's TF, and
 * gives TF back to the program; if the program itself was stepping, or a
 * watchpoint triggered, it gets the SIGTRAP the CPU would have sent after
 * this instruction.
 *
 * Context: process context, IRQs enabled, may fault on user memory.
 *
 * Return: 0 when done; -EAGAIN if a rep string instruction stopped after
 * an iteration (the task stays in the slot: return to user mode in the
 * same state, without calling pre_xol again; the end is reported through
 * uprobe_post_sstep_notifier() as usual); -EFAULT if the step did not complete, or
 * ended in a fault or a trap reported at the probed address, or its result
 * could not be fixed (the core then calls arch_uprobe_abort_xol(), which
 * puts ip back at the probed address).
 */
int arch_uprobe_post_xol(struct arch_uprobe *au, struct pt_regs *regs)
{
	const struct arch_uprobe_plan *p = aup_stepped(au);
	struct uprobe_task *ut = current->utask;
	struct arch_uprobe_task *at = &ut->autask;
	unsigned long copy = aup_copy_vaddr(ut), end = copy + p->xol_len;
	unsigned long next = aup_trunc(p, ut->vaddr + p->len);
	unsigned long target = next, bits;
	unsigned int size = p->ia32 ? 4 : 8;
	bool taken = true, report;

	if (current->thread.trap_nr != AUP_TRAP_NR)
		return -EFAULT;
	if (regs->ip == copy && at->dr6) {
		/*
		 * A watchpoint between two iterations of a rep string
		 * instruction: the CPU reports it (and the program's own
		 * step) with ip on the instruction, whose registers say how
		 * far it got. abort_xol must leave BTF off, as after any #DB.
		 */
		bits = at->dr6;
		if (at->tf_was_set && !at->blockstep)
			bits |= DR_STEP;
		at->blockstep = false;
		regs->ip = ut->vaddr;
		aup_sigtrap(regs, bits);
		return -EFAULT;
	}
	if ((p->fixups & AUP_FIX_REP) && regs->ip == copy) {
		/*
		 * Rep string instructions trap after every iteration under
		 * TF (a program that steps itself, or a watchpoint's #DB).
		 * Let the CPU run the others without TF, unless the program
		 * steps itself; the guard int3 then reports the end.
		 */
		if (!at->tf_was_set)
			regs->flags &= ~X86_EFLAGS_TF;
		return -EAGAIN;
	}

	if (p->fixups & AUP_FIX_RELBR) {
		if (regs->ip != end && regs->ip != end + 1)
			return -EFAULT;
		taken = regs->ip == end + 1;
		if (taken)
			target = aup_trunc(p, next + p->rel);
	} else if (p->fixups & AUP_FIX_IP) {
		if (regs->ip != end)
			return -EFAULT;
		taken = false;
	}

	/* The CPU would not have branched (nor moved sp), but raised #GP. */
	if (taken && (p->fixups & AUP_FIX_RELBR) && !p->ia32 &&
	    !__is_canonical_address(target, boot_cpu_data.x86_virt_bits)) {
		/*
		 * Undo the copy's push: the word below sp holds the return
		 * address where the CPU stores it before the #GP, else what
		 * it held before the step.
		 */
		if (p->fixups & AUP_FIX_CALL) {
			aup_put(regs->sp, aup_call_gp_stores() ? next :
					  at->saved_below_sp, size);
			regs->sp += size;
		}
		return aup_gp();
	}
	if (p->fixups & AUP_FIX_CALL) {
		if (aup_put(regs->sp, next, size)) {
			regs->sp += size;	/* undo the push: retry */
			return -EFAULT;
		}
	}
	if ((p->fixups & AUP_FIX_PUSHF) && !at->tf_was_set) {
		u16 __user *w = (u16 __user *)regs->sp;
		u16 flags;

		if (get_user(flags, w) || put_user(flags & ~X86_EFLAGS_TF, w)) {
			regs->sp += p->opnd;
			return -EFAULT;
		}
	}

	if (p->fixups & (AUP_FIX_RELBR | AUP_FIX_IP))
		regs->ip = target;

	/*
	 * TF traps after every instruction; with BTF too, only after taken
	 * branches (and the CPU clears BTF when it traps), so block-step
	 * otherwise goes on. Watchpoints trap whatever the TF.
	 */
	report = at->tf_was_set &&
		 (!at->blockstep || ((p->fixups & AUP_FIX_BRANCH) && taken));
	bits = at->dr6 | (report ? DR_STEP : 0);
	aup_undo(p, regs, !bits);
	if (bits)
		aup_sigtrap(regs, bits);
	return 0;
}

/**
 * arch_uprobe_abort_xol - give up a step
 * @au: the probe
 * @regs: the user registers
 *
 * Undoes arch_uprobe_pre_xol() and puts ip back on the probed address, so
 * that a signal is delivered there with the program's own registers (a
 * fault taken by the copy keeps its trap_nr for the signal frame), or the
 * hit is retried.
 *
 * Context: process context, IRQs enabled.
 */
void arch_uprobe_abort_xol(struct arch_uprobe *au, struct pt_regs *regs)
{
	const struct arch_uprobe_plan *p = aup_stepped(au);
	struct uprobe_task *ut = current->utask;
	unsigned int size = p->ia32 ? 4 : 8;
	unsigned long below = regs->sp - size, val = 0;

	/*
	 * A call of the copy that faulted (a non-canonical target) stored
	 * its return address, the copy's end, below the unmoved stack
	 * pointer: leave there what the probed call stores, vaddr + len.
	 */
	if (p->fixups & AUP_FIX_CALL) {
		if (size == 4) {
			u32 v;

			if (!get_user(v, (u32 __user *)below))
				val = v;
		} else {
			get_user(val, (u64 __user *)below);
		}
		if (val == aup_copy_vaddr(ut) + p->xol_len)
			aup_put(below, aup_trunc(p, ut->vaddr + p->len), size);
	}
	aup_undo(p, regs, true);
	regs->ip = ut->vaddr;
}

/**
 * arch_uprobe_xol_was_trapped - did the copy take a fault or trap?
 * @t: the task, stepping its copy
 *
 * Return: true if something other than our step trap (a fault, a signal
 * sending trap) happened since arch_uprobe_pre_xol().
 */
bool arch_uprobe_xol_was_trapped(struct task_struct *t)
{
	return t->thread.trap_nr != AUP_TRAP_NR;
}

/* ----------------------------------------------------------- notifiers */

/*
 * The guard int3 after a copy: the copy ran without a #DB. Report it as
 * the end of the step, with ip at the end of the copy.
 */
static nokprobe_inline bool aup_guard_hit(struct pt_regs *regs)
{
	struct uprobe_task *ut = current->utask;

	if (!ut || ut->state != UTASK_SSTEP || !ut->auprobe ||
	    regs->ip != aup_copy_vaddr(ut) + aup_stepped(ut->auprobe)->xol_len + 1)
		return false;
	regs->ip--;
	if (uprobe_post_sstep_notifier(regs))
		return true;
	regs->ip++;
	return false;
}

#ifdef CONFIG_UPROBE_JUMP_SITES
/*
 * A single-step trap at the start of a stub: the program, stepped by a
 * debugger, took a site's jump. It sees the site as a breakpoint hit
 * instead, handled on the way out (the instruction is stepped then and its
 * step reported as the CPU would have): ip just after the breakpoint the
 * site had, as the core expects of a breakpoint hit.
 */
static nokprobe_inline bool aup_stub_step(struct pt_regs *regs)
{
	unsigned long vaddr;

	if (!user_64bit_mode(regs))
		return false;
	vaddr = uprobe_stub_site(regs->ip);
	if (!vaddr)
		return false;
	regs->ip = vaddr + UPROBE_SWBP_INSN_SIZE;
	return uprobe_pre_sstep_notifier(regs);
}
#else
static nokprobe_inline bool aup_stub_step(struct pt_regs *regs)
{
	return false;
}
#endif

/*
 * #DB: claim the one that ends our step (DR_STEP, or a data breakpoint
 * while a rep string copy runs on untraced), and only that. A data
 * breakpoint hit by a boosted copy is the program's: it is reported after
 * the task is moved to where the instruction would have left it.
 */
static nokprobe_inline int aup_debug(struct pt_regs *regs, unsigned long *dr6)
{
	struct thread_struct *t = &current->thread;
	unsigned long trap = (*dr6 | t->virtual_dr6) & DR_TRAP_BITS;

	if (!(*dr6 & DR_STEP) && !trap)
		return NOTIFY_DONE;
	if (!trap && aup_stub_step(regs)) {
		*dr6 &= ~DR_STEP;
		t->virtual_dr6 &= ~DR_STEP;
		return *dr6 ? NOTIFY_DONE : NOTIFY_STOP;
	}
	if (!uprobe_post_sstep_notifier(regs)) {
		if (trap)
			uprobe_leave_boosted_copy(regs);
		return NOTIFY_DONE;
	}
	/*
	 * The program must neither see our DR_STEP nor get a SIGTRAP for it;
	 * a watchpoint the copy hit (hw_breakpoint moved ptrace's into
	 * virtual_dr6) is reported by post_xol once the step is fixed up,
	 * with the ip the CPU would have shown. A bus lock is still handled
	 * by exc_debug_user(), which sends no SIGTRAP for it.
	 */
	current->utask->autask.dr6 = trap;
	*dr6 &= ~(DR_STEP | DR_TRAP_BITS);
	t->virtual_dr6 &= ~(DR_STEP | DR_TRAP_BITS);
	return *dr6 ? NOTIFY_DONE : NOTIFY_STOP;
}

/**
 * arch_uprobe_exception_notify - the #DB of a step of ours
 * @nb: the core's die notifier
 * @val: the die event
 * @data: its &struct die_args
 *
 * The core registers this after hw_breakpoint's notifier, which clears
 * the DR6 bits it uses. int3 does not come here: do_int3_user() asks
 * uprobe_trap_int3() first.
 *
 * Return: NOTIFY_STOP if the #DB was only our step's, else NOTIFY_DONE.
 */
int arch_uprobe_exception_notify(struct notifier_block *nb, unsigned long val,
				 void *data)
{
	struct die_args *args = data;
	struct pt_regs *regs = args->regs;

	/* Kernel traps reach the chain too, possibly in NMI context. */
	if (!regs || !user_mode(regs))
		return NOTIFY_DONE;

	if (val == DIE_DEBUG)
		return aup_debug(regs, (unsigned long *)args->err);
	return NOTIFY_DONE;
}

NOKPROBE_SYMBOL(arch_uprobe_exception_notify);

/**
 * uprobe_trap_int3 - is this user int3 ours? Then it is handled
 * @regs: the user registers (ip just after the int3)
 *
 * do_int3_user() asks first, with interrupts off, before kprobes and the
 * die notifiers: a hit costs no walk down the notifier chain, and is
 * handled here rather than on the way out (uprobe_hit_in_trap()).
 *
 * Return: true if the int3 was ours.
 */
bool uprobe_trap_int3(struct pt_regs *regs)
{
	return aup_guard_hit(regs) || uprobe_hit_in_trap(regs);
}
