// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes, x86: emulation. An emulated instruction's effect is applied to
 * the saved user registers (and the user stack) with page faults disabled;
 * where that cannot be exact, the hit declines and the instruction is run
 * out of line instead.
 *
 * Design: Documentation/trace/uprobes.rst, "The x86 implementation".
 */
#include "internal.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "uprobes."

/*
 * Every class of enum aup_emul is emulated (the default); off, only the
 * base set of aup_emulates() is, and the rest run from their slots. A
 * static key, so that the default costs a hit nothing.
 */
DEFINE_STATIC_KEY_TRUE(aup_emulate_all);
module_param_cb(emulate, &uprobe_static_key_param_ops, &aup_emulate_all.key,
		0644);
MODULE_PARM_DESC(emulate, "Emulate every instruction class uprobes can (0: relative branches, 0x90 nops and push of a register only)");

/* pt_regs offset of each general register, in encoding order. */
const u8 aup_reg_off[AUP_NR_REGS] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, dx), offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, sp), offsetof(struct pt_regs, bp),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
#ifdef CONFIG_X86_64
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
#endif
};

/* A branch target the CPU would jump to without faulting at the branch. */
static bool aup_target_ok(const struct arch_uprobe_plan *p, unsigned long ip)
{
	return p->ia32 || ip < TASK_SIZE_MAX;
}

/*
 * Can the kernel access @size bytes at user @addr for the task as the CPU
 * would? With EFLAGS.AC set, a misaligned access faults (#AC) in user mode
 * but not in the kernel.
 */
static bool aup_aligned(struct pt_regs *regs, unsigned long addr,
			unsigned int size)
{
	return !(regs->flags & X86_EFLAGS_AC) || !(addr & (size - 1));
}

static bool aup_push(const struct arch_uprobe_plan *p, struct pt_regs *regs,
		     unsigned long val)
{
	unsigned long sp;

	if (p->ia32) {
		sp = (u32)(regs->sp - 4);
		if (!aup_aligned(regs, sp, 4) ||
		    put_user((u32)val, (u32 __user *)sp))
			return false;
	} else {
		sp = regs->sp - 8;
		if (!aup_aligned(regs, sp, 8) ||
		    put_user((u64)val, (u64 __user *)sp))
			return false;
	}
	regs->sp = sp;
	return true;
}

/* mov disp32(%rip), reg: a 32-bit load zero-extends, as the CPU's does. */
static bool aup_load(const struct arch_uprobe_plan *p, struct pt_regs *regs,
		     unsigned long addr)
{
	u64 v64;
	u32 v32;

	if (!aup_aligned(regs, addr, p->opnd))
		return false;
	if (p->opnd == 8) {
		if (get_user(v64, (u64 __user *)addr))
			return false;
		*aup_regp(regs, p->reg) = v64;
	} else {
		if (get_user(v32, (u32 __user *)addr))
			return false;
		*aup_regp(regs, p->reg) = v32;
	}
	return true;
}

/* mov reg, disp32(%rip) */
static bool aup_store(const struct arch_uprobe_plan *p, struct pt_regs *regs,
		      unsigned long addr)
{
	unsigned long val = *aup_regp(regs, p->src);

	if (!aup_aligned(regs, addr, p->opnd))
		return false;
	if (p->opnd == 8)
		return !put_user((u64)val, (u64 __user *)addr);
	return !put_user((u32)val, (u32 __user *)addr);
}

static bool aup_cond(unsigned int cc, unsigned long flags)
{
	bool of = flags & X86_EFLAGS_OF, sf = flags & X86_EFLAGS_SF;
	bool zf = flags & X86_EFLAGS_ZF, cf = flags & X86_EFLAGS_CF;
	bool r;

	switch (cc >> 1) {
	case 0:
		r = of;
		break;
	case 1:
		r = cf;
		break;
	case 2:
		r = zf;
		break;
	case 3:
		r = cf || zf;
		break;
	case 4:
		r = sf;
		break;
	case 5:
		r = flags & X86_EFLAGS_PF;
		break;
	case 6:
		r = sf != of;
		break;
	default:
		r = zf || sf != of;
		break;
	}
	return r != (cc & 1);
}

/* loopne (0), loope (1), loop (2), jrcxz (3): taken? Updates the count. */
static bool aup_loop(const struct arch_uprobe_plan *p, struct pt_regs *regs)
{
	unsigned long cx = aup_trunc(p, regs->cx);

	if (p->cond == 3)
		return !cx;
	cx = aup_trunc(p, cx - 1);
	regs->cx = cx;
	if (!cx)
		return false;
	if (p->cond == 2)
		return true;
	return !(regs->flags & X86_EFLAGS_ZF) == !p->cond;
}

/* A code pointer (a word of the task's mode) at user @addr. */
static bool aup_get_ptr(const struct arch_uprobe_plan *p,
			struct pt_regs *regs, unsigned long addr,
			unsigned long *val)
{
	u64 v;
	u32 v32;

	if (p->ia32) {
		if (!aup_aligned(regs, addr, 4) ||
		    get_user(v32, (u32 __user *)addr))
			return false;
		*val = v32;
		return true;
	}
	if (!aup_aligned(regs, addr, 8) || get_user(v, (u64 __user *)addr))
		return false;
	*val = v;
	return true;
}

static unsigned long aup_lea_value(const struct arch_uprobe_plan *p,
				   struct pt_regs *regs, unsigned long next)
{
	unsigned long ea = p->rel;

	if (p->src == AUP_REG_RIP)
		ea += next;
	else if (p->src != AUP_REG_NONE)
		ea += *aup_regp(regs, p->src);
	if (p->index != AUP_REG_NONE)
		ea += *aup_regp(regs, p->index) << p->scale;
	return aup_trunc(p, ea);
}

/*
 * Show the data accesses of the emulation that left @regs to the hardware
 * watchpoints armed for the task, as the CPU shows an instruction's: one
 * trap after it, with the registers it left, and one SIGTRAP if a
 * debugger's watchpoint matched (DR6 then reads as after that #DB).
 * @next: the address after the instruction. Out of line: the hit path
 * only tests whether any watchpoint is armed (aup_watch()).
 */
static noinline void aup_watch_accesses(const struct arch_uprobe_plan *p,
					struct pt_regs *regs,
					unsigned long next)
{
	struct thread_struct *t = &current->thread;
	unsigned int word = p->ia32 ? 4 : 8;
	unsigned long mem = aup_trunc(p, next + p->rel);
	unsigned long dr6 = t->virtual_dr6;
	bool hit = false;

	t->virtual_dr6 = 0;
	switch (p->emul) {
	case AUP_EM_PUSH:
	case AUP_EM_PUSH_IMM:
	case AUP_EM_PUSHF:
	case AUP_EM_CALL:
	case AUP_EM_CALL_REG:
		hit = hw_breakpoint_user_access(regs, regs->sp, word, true);
		break;
	case AUP_EM_CALL_IND:
		hit = hw_breakpoint_user_access(regs, regs->sp, word, true);
		/* the pointer's address, with the stack pointer before the push */
		mem = aup_lea_value(p, regs, next);
		if (p->src == AUP_REG_SP)
			mem = aup_trunc(p, mem + word);
		if (hw_breakpoint_user_access(regs, mem, word, false))
			hit = true;
		break;
	case AUP_EM_LOAD:
		hit = hw_breakpoint_user_access(regs, mem, p->opnd, false);
		break;
	case AUP_EM_STORE:
		hit = hw_breakpoint_user_access(regs, mem, p->opnd, true);
		break;
	case AUP_EM_CALL_MEM:
		hit = hw_breakpoint_user_access(regs, regs->sp, word, true);
		fallthrough;
	case AUP_EM_JMP_MEM:
		if (hw_breakpoint_user_access(regs, mem, 8, false))
			hit = true;
		break;
	default:
		break;
	}
	if (t->virtual_dr6 & DR_TRAP_BITS)
		send_sigtrap(regs, 0, TRAP_HWBKPT);
	else if (!hit)
		t->virtual_dr6 = dr6;
}

static __always_inline void aup_watch(const struct arch_uprobe_plan *p,
				      struct pt_regs *regs,
				      unsigned long next)
{
	/*
	 * cpu_dr7 holds the breakpoints of the task on the CPU, wherever it
	 * has moved: its own follow it. hw_breakpoint_user_access() reads
	 * them with interrupts off.
	 */
	if (IS_ENABLED(CONFIG_HAVE_HW_BREAKPOINT) &&
	    (this_cpu_read(cpu_dr7) & DR_GLOBAL_ENABLE_MASK))
		aup_watch_accesses(p, regs, next);
}

/*
 * The emulation of arch_uprobe_skip_sstep() for every class but the nop:
 * those that move data or control.
 */
static noinline bool aup_emulate(const struct arch_uprobe_plan *p,
				 struct pt_regs *regs)
{
	unsigned long next, ip, val;

	next = aup_trunc(p, regs->ip + p->len);
	ip = next;
	switch (p->emul) {
	case AUP_EM_NOP:
	case AUP_EM_NOPL:
		break;
	case AUP_EM_PUSH:
		if (!aup_push(p, regs, *aup_regp(regs, p->reg)))
			return false;
		break;
	case AUP_EM_PUSH_IMM:
		if (!aup_push(p, regs, (long)p->rel))
			return false;
		break;
	case AUP_EM_PUSHF:
		if (!aup_push(p, regs, regs->flags &
			      ~(X86_EFLAGS_RF | X86_EFLAGS_VM)))
			return false;
		break;
	case AUP_EM_MOV:
		val = *aup_regp(regs, p->src);
		*aup_regp(regs, p->reg) = p->opnd == 8 ? val : (u32)val;
		break;
	case AUP_EM_LEA:
		val = aup_lea_value(p, regs, next);
		*aup_regp(regs, p->reg) = p->opnd == 8 ? val : (u32)val;
		break;
	case AUP_EM_JCC:
		if (!aup_cond(p->cond, regs->flags))
			break;
		fallthrough;
	case AUP_EM_JMP:
		ip = aup_trunc(p, next + p->rel);
		if (!aup_target_ok(p, ip))
			return false;
		break;
	case AUP_EM_CALL:
		ip = aup_trunc(p, next + p->rel);
		if (!aup_target_ok(p, ip) || !aup_push(p, regs, next))
			return false;
		break;
	case AUP_EM_LOOP:
		/* The count changes whether or not the branch is taken. */
		ip = aup_trunc(p, next + p->rel);
		if (!aup_target_ok(p, ip))
			return false;
		if (!aup_loop(p, regs))
			ip = next;
		break;
	case AUP_EM_LOAD:
		if (!aup_load(p, regs, next + p->rel))
			return false;
		break;
	case AUP_EM_STORE:
		if (!aup_store(p, regs, next + p->rel))
			return false;
		break;
	case AUP_EM_JMP_MEM:
	case AUP_EM_CALL_MEM:
		if (!aup_get_ptr(p, regs, next + p->rel, &ip) ||
		    !aup_target_ok(p, ip))
			return false;
		if (p->emul == AUP_EM_CALL_MEM && !aup_push(p, regs, next))
			return false;
		break;
	case AUP_EM_CALL_REG:
		/* The target is read before the push moves the stack. */
		ip = aup_trunc(p, *aup_regp(regs, p->src));
		if (!aup_target_ok(p, ip) || !aup_push(p, regs, next))
			return false;
		break;
	case AUP_EM_CALL_IND:
		val = aup_lea_value(p, regs, next);
		if (!aup_get_ptr(p, regs, val, &ip) || !aup_target_ok(p, ip) ||
		    !aup_push(p, regs, next))
			return false;
		break;
	default:
		return false;
	}
	regs->ip = ip;
	aup_watch(p, regs, next);
	return true;
}

/**
 * arch_uprobe_skip_sstep - carry out an emulated instruction
 * @au: the probe
 * @regs: the user registers; @regs->ip is the probed address
 *
 * On success @regs (and the user stack) are what the instruction would have
 * left, ip included.
 *
 * Context: process context, may fault on user memory.
 *
 * Return: true if done; false if the instruction must run from its slot
 * instead (not emulated in the task's mode or with uprobes.emulate=0, the
 * program single-steps, or a memory access would fault: the copy will
 * deliver the fault). Nothing is changed when false is returned.
 */
bool arch_uprobe_skip_sstep(struct arch_uprobe *au, struct pt_regs *regs)
{
	const struct arch_uprobe_plan *p = aup_plan(au, regs);

	if (!p || p->exec != AUP_EMULATE)
		return false;
	/* A program being stepped must trap after this very instruction. */
	if ((regs->flags & X86_EFLAGS_TF) ||
	    (read_thread_flags() & (_TIF_SINGLESTEP | _TIF_BLOCKSTEP)))
		return false;
	/* Function entries and SDT markers: no data, no branch. */
	if (p->emul == AUP_EM_NOP ||
	    (p->emul == AUP_EM_NOPL &&
	     static_branch_likely(&aup_emulate_all))) {
		regs->ip = aup_trunc(p, regs->ip + p->len);
		return true;
	}
	if (!aup_emulates(p))
		return false;
	return aup_emulate(p, regs);
}
