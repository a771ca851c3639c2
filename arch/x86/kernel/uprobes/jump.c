// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes, x86: jump sites (64-bit code). Which sites may become one, the
 * jmp rel32 written over the instruction, the page of stubs, and
 * sys_uprobe(), whose handler runs the hit with no trap; a task a signal
 * finds in a stub is put back at its site first.
 *
 * Design: Documentation/trace/uprobes.rst, "The x86 implementation".
 */
#include "internal.h"

#define AUP_JUMP_LEN		5	/* jmp rel32 */
#define AUP_STUB_SYSCALL_END	16	/* ip after a stub's syscall */
#define AUP_STUB_SAVED		3	/* rax, r11, rcx from the stub's sp up */

static const u8 aup_stub[AUP_STUB_SYSCALL_END] = {
	0x48, 0x8d, 0x64, 0x24, 0x80,		/* lea -128(%rsp),%rsp */
	0x51,					/* push %rcx */
	0x41, 0x53,				/* push %r11 */
	0x50,					/* push %rax */
	0xb8, __NR_uprobe & 0xff, __NR_uprobe >> 8, 0, 0,
	0x0f, 0x05,				/* syscall */
};

/**
 * arch_uprobe_jump_len - may the site of this hit become a jump site?
 * @au: the probe
 * @regs: the user registers of a breakpoint hit of it
 *
 * In 64-bit mode, an instruction of five bytes or more that is emulated
 * (nops of function entries built with -mfentry -mnop-mcount or patchable
 * entries, SDT markers built as nop5, call and jmp rel32, lea, ...) or
 * boosted (a mov of an immediate, ALU forms, ...), unless the task is
 * being single-stepped: the hit from the stub runs it as the breakpoint's
 * would have, emulated or in its XOL slot. A jump site never sees TF: the
 * jump would take the step trap in the stub (aup_stub_step()).
 *
 * Return: 5 (jmp rel32), or 0.
 */
unsigned int arch_uprobe_jump_len(struct arch_uprobe *au, struct pt_regs *regs)
{
	const struct arch_uprobe_plan *p = &au->plan[AUP_MODE_64];

	if (p->err || (!aup_emulates(p) && !p->boostable) ||
	    p->len < AUP_JUMP_LEN || aup_mode(regs) != AUP_MODE_64 ||
	    (regs->flags & X86_EFLAGS_TF) ||
	    (read_thread_flags() & (_TIF_SINGLESTEP | _TIF_BLOCKSTEP)))
		return 0;
	return AUP_JUMP_LEN;
}

/**
 * arch_uprobe_fill_jump - jmp rel32 from a site to its stub
 * @vaddr: the site's user address
 * @stub: the stub's user address
 * @jump: the five bytes
 *
 * Return: false if the stub is out of the jump's reach.
 */
bool arch_uprobe_fill_jump(unsigned long vaddr, unsigned long stub, u8 *jump)
{
	long rel = (long)(stub - (vaddr + AUP_JUMP_LEN));

	if (rel != (s32)rel)
		return false;
	jump[0] = 0xe9;
	put_unaligned_le32((u32)rel, jump + 1);
	return true;
}

/**
 * arch_uprobe_fill_stubs - the page of stubs
 * @page: kernel address of the zeroed page
 *
 * Every stub steps over the red zone before it stores anything, saves the
 * three registers that its syscall clobbers, and enters sys_uprobe(); the
 * rest of each stub is int3. The site a stub stands for is known from its
 * address alone.
 *
 * Return: true.
 */
bool arch_uprobe_fill_stubs(void *page)
{
	unsigned int i;

	BUILD_BUG_ON(sizeof(aup_stub) > UPROBE_STUB_BYTES);
	memset(page, UPROBE_SWBP_INSN, PAGE_SIZE);
	for (i = 0; i < PAGE_SIZE; i += UPROBE_STUB_BYTES)
		memcpy(page + i, aup_stub, sizeof(aup_stub));
	return true;
}

/**
 * arch_uprobe_stub_syscall - the stub that made this system call
 * @regs: the user registers at system call entry
 *
 * Return: the address the stub would start at for __NR_uprobe made in
 * 64-bit mode, else 0.
 */
unsigned long arch_uprobe_stub_syscall(struct pt_regs *regs)
{
	if (regs->orig_ax != __NR_uprobe || in_ia32_syscall())
		return 0;
	return regs->ip - AUP_STUB_SYSCALL_END;
}

/**
 * arch_uprobe_leave_stub - put a task that is inside a stub back at its site
 * @regs: the task's user registers, with the ip inside the stub
 * @stub: the user address the stub starts at
 * @vaddr: the address of the site whose jump leads to the stub
 *
 * Each instruction boundary of the stub before its syscall: the stack
 * pointer goes up by the red zone and the words pushed so far, and rax
 * (replaced by the call's number at the syscall) comes back from where
 * the stub pushed it. Anywhere else, or if the stack cannot be read, the
 * task stays where it is.
 */
void arch_uprobe_leave_stub(struct pt_regs *regs, unsigned long stub,
			    unsigned long vaddr)
{
	unsigned long ax = regs->ax;
	unsigned int words;

	switch (regs->ip - stub) {
	case 0:				/* at the lea: nothing done yet */
		regs->ip = vaddr;
		return;
	case 5:				/* push %rcx */
		words = 0;
		break;
	case 6:				/* push %r11 */
		words = 1;
		break;
	case 8:				/* push %rax */
		words = 2;
		break;
	case 9:				/* mov $__NR_uprobe,%eax */
		words = 3;
		break;
	case AUP_STUB_SYSCALL_END - 2:	/* syscall: rax is on the stack */
		if (get_user(ax, (unsigned long __user *)regs->sp))
			return;
		words = 3;
		break;
	default:
		return;
	}
	BUILD_BUG_ON(AUP_STUB_SAVED != 3);
	regs->ax = ax;
	regs->sp += AUP_RED_ZONE + words * sizeof(long);
	regs->ip = vaddr;
}

/**
 * uprobe_stub_fault - a stub's own store faulted: take the hit another way
 * @regs: the user registers of the fault, the ip at one of the stub's pushes
 * @address: the address the fault was for
 *
 * The stub stores three words below the red zone, 129 to 152 bytes below
 * the program's stack pointer, where the program itself did not write: a
 * stack that ends there (a guard page, the stack's size limit, a mapping
 * without write access) faults on them. The program must not get a signal
 * that its instruction would not have got, so the task goes back to the
 * site as for a signal (arch_uprobe_leave_stub()) and the hit is handled
 * as a breakpoint's on the way out: the instruction runs as its
 * breakpoint would have run it, and a fault of the instruction itself is
 * the program's own.
 *
 * Context: the user page fault handler, before it sends SIGSEGV or SIGBUS;
 * interrupts enabled, mmap_lock not held.
 *
 * Return: true if the fault was a stub's store and is taken care of.
 */
bool uprobe_stub_fault(struct pt_regs *regs, unsigned long address)
{
	unsigned long stub, vaddr;

	if (!user_64bit_mode(regs) || address >= regs->sp ||
	    address < regs->sp - sizeof(long))
		return false;
	stub = regs->ip & ~(UPROBE_STUB_BYTES - 1UL);
	switch (regs->ip - stub) {
	case 5:				/* push %rcx */
	case 6:				/* push %r11 */
	case 8:				/* push %rax */
		break;
	default:
		return false;
	}
	vaddr = uprobe_stub_site(stub);
	if (!vaddr || !uprobe_pre_sstep_notifier(regs))
		return false;
	arch_uprobe_leave_stub(regs, stub, vaddr);
	regs->ip = vaddr + UPROBE_SWBP_INSN_SIZE;
	return true;
}

/*
 * The system call of a stub: the site's registers back as the program had
 * them at the jump (rax, r11, rcx from the stub's stack, sp above the red
 * zone; the flags are those the syscall saved, which the stub left as they
 * were), then the hit. The return goes through iret wherever the hit sent
 * the task, as rcx and r11 are the program's. From anywhere else than a
 * stub in use: SIGILL, and nothing else happens.
 */
SYSCALL_DEFINE0(uprobe)
{
	struct pt_regs *regs = current_pt_regs();
	unsigned long stub = arch_uprobe_stub_syscall(regs), ax, r11, cx;
	const unsigned long __user *saved;
	unsigned long vaddr;

	vaddr = stub ? uprobe_stub_site(stub) : 0;
	if (!vaddr)
		goto sigill;
	saved = (const unsigned long __user *)regs->sp;
	if (!user_read_access_begin(saved, AUP_STUB_SAVED * sizeof(long)))
		goto sigill;
	unsafe_get_user(ax, &saved[0], efault);
	unsafe_get_user(r11, &saved[1], efault);
	unsafe_get_user(cx, &saved[2], efault);
	user_read_access_end();
	regs->ax = ax;
	regs->r11 = r11;
	regs->cx = cx;
	regs->sp += AUP_STUB_SAVED * sizeof(long) + AUP_RED_ZONE;
	uprobe_syscall_unseen();
	/* Not a system call for signal restarting: ax is the program's. */
	regs->orig_ax = -1;
	uprobe_stub_hit(regs, vaddr);
	return regs->ax;

efault:
	user_read_access_end();
sigill:
	force_sig(SIGILL);
	return -EINVAL;
}
