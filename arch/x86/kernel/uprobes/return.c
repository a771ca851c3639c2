// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes, x86: return probes. The return address (replaced, and where
 * it lives), the XOL trampoline for each mode, the vDSO's unwindable
 * return stubs with the per-mm return table, and sys_uretprobe().
 *
 * Design: Documentation/trace/uprobes.rst, "The x86 implementation".
 */
#include "internal.h"

#define AUP_TRAMP_SYSCALL_END	22	/* ip after the trampoline's syscall */
#define AUP_TRAMP_TRAP		32	/* the breakpoint entry */
#define AUP_TRAMP_SAVED		3	/* words kept below the return slot */
#define AUP_STUB_BYTES		16	/* one stub of vuretprobe.S */

#ifdef CONFIG_X86_64
#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "uprobes."

/*
 * 64-bit returns come back through the trampoline's system call or a
 * return stub of the vDSO (the default). Off, they come back to the
 * trampoline's breakpoint entry, as 32-bit ones do: a trap per return,
 * and no return stub for unwinders to see through.
 */
static bool aup_syscall_returns = true;
module_param_named(syscall_returns, aup_syscall_returns, bool, 0644);
MODULE_PARM_DESC(syscall_returns, "64-bit return probes come back through a system call and unwindable vDSO stubs, not a breakpoint");

static const u8 aup_tramp64[AUP_TRAMP_SYSCALL_END] = {
	0x48, 0x89, 0x44, 0x24, 0xf0,		/* mov %rax,-16(%rsp) */
	0x48, 0x89, 0x4c, 0x24, 0xe8,		/* mov %rcx,-24(%rsp) */
	0x4c, 0x89, 0x5c, 0x24, 0xe0,		/* mov %r11,-32(%rsp) */
	0xb8, __NR_uretprobe & 0xff, __NR_uretprobe >> 8, 0, 0,
	0x0f, 0x05,				/* syscall */
};

/*
 * The vDSO of current's mm, if it has the return stubs: its text address,
 * else 0 (also once it was unmapped). mm->context is current's own.
 */
static unsigned long aup_vdso(const struct vdso_image **image)
{
	mm_context_t *ctx = &current->mm->context;

	*image = ctx->vdso_image;
	if (!*image || !(*image)->sym_uretprobe_stubs)
		return 0;
	return (unsigned long)READ_ONCE(ctx->vdso);
}

/* The user address of current's first return stub, or 0; *@bytes: all. */
static unsigned long aup_vdso_stubs(unsigned long *bytes)
{
	const struct vdso_image *image;
	unsigned long vdso = aup_vdso(&image);

	if (!vdso)
		return 0;
	*bytes = image->sym_uretprobe_stubs_end - image->sym_uretprobe_stubs;
	return vdso + image->sym_uretprobe_stubs;
}

/* The address of the syscall end of the vDSO's common code, or 0. */
static unsigned long aup_vdso_syscall_end(void)
{
	const struct vdso_image *image;
	unsigned long vdso = aup_vdso(&image);

	return vdso ? vdso + image->sym_uretprobe_syscall_end : 0;
}
#else
static unsigned long aup_vdso_syscall_end(void)
{
	return 0;
}
#endif

/**
 * arch_uretprobe_fill_trampoline - write the return trampoline
 * @slot: kernel address of XOL slot 0 (UPROBE_XOL_SLOT_BYTES), zeroed
 *
 * The 64-bit entry (aup_tramp64) at 0, an int3 behind its syscall, the
 * breakpoint entry (an int3: 32-bit tasks, and 64-bit ones without
 * syscall returns) at AUP_TRAMP_TRAP, int3 everywhere else; nothing
 * depends on where the slot is mapped.
 */
void arch_uretprobe_fill_trampoline(void *slot)
{
	memset(slot, UPROBE_SWBP_INSN, UPROBE_XOL_SLOT_BYTES);
#ifdef CONFIG_X86_64
	memcpy(slot, aup_tramp64, sizeof(aup_tramp64));
#endif
}

/**
 * arch_uretprobe_trampoline - the XOL trampoline entry for current's mode
 * @slot: user address of XOL slot 0
 * @regs: registers at the probed function's first instruction
 *
 * Return: the trampoline entry for the task's mode, or 0 if it has none
 * (a 32-bit task whose slot lies above 4 GiB, an odd code segment).
 */
unsigned long arch_uretprobe_trampoline(unsigned long slot,
					struct pt_regs *regs)
{
	switch (aup_mode(regs)) {
#ifdef CONFIG_X86_64
	case AUP_MODE_64:
		return READ_ONCE(aup_syscall_returns) ? slot :
						       slot + AUP_TRAMP_TRAP;
#endif
	case AUP_MODE_32:
		return slot + AUP_TRAMP_TRAP <= U32_MAX ? slot + AUP_TRAMP_TRAP : 0;
	default:
		return 0;
	}
}

/**
 * arch_uretprobe_stub - the unwindable return stub @i of current's vDSO
 * @regs: registers at the probed function's first instruction
 * @i: index of the stub, which is also its slot in uprobe_return_table()
 *
 * Return: the stub's user address, or 0 if current's mode or vDSO has no
 * stub @i (32-bit code, no vDSO, an image without them).
 */
unsigned long arch_uretprobe_stub(struct pt_regs *regs, unsigned int i)
{
#ifdef CONFIG_X86_64
	unsigned long stubs, bytes;

	if (aup_mode(regs) != AUP_MODE_64 || !READ_ONCE(aup_syscall_returns))
		return 0;
	stubs = aup_vdso_stubs(&bytes);
	if (!stubs || i >= bytes / AUP_STUB_BYTES)
		return 0;
	return stubs + i * AUP_STUB_BYTES;
#else
	return 0;
#endif
}

/**
 * arch_uretprobe_is_return_addr - is @addr where a hijacked return goes?
 * @slot: user address of current's XOL slot 0
 * @addr: a return address read from current's stack
 *
 * Return: true for a trampoline entry or a stub of current's mm.
 */
bool arch_uretprobe_is_return_addr(unsigned long slot, unsigned long addr)
{
#ifdef CONFIG_X86_64
	unsigned long bytes, stubs = aup_vdso_stubs(&bytes);

	if (stubs && addr - stubs < bytes)
		return true;
#endif
	return addr == slot || addr == slot + AUP_TRAMP_TRAP;
}

/**
 * arch_uretprobe_unmap_table - unmap @mm's return table before a fork
 * @mm: the mm being copied, its mmap_lock held for write
 *
 * See vdso_uretprobe_table_zap(): the child must not map this page.
 */
void arch_uretprobe_unmap_table(struct mm_struct *mm)
{
	vdso_uretprobe_table_zap(mm);
}

#ifdef CONFIG_X86_64
/*
 * Put back the registers the 64-bit code saved below the return slot (the
 * word below %rsp, which keeps the stub's address for unwinders); the
 * function's frame (where its return address was) is that slot.
 */
static unsigned long aup_tramp_restore(struct pt_regs *regs)
{
	unsigned long slot = regs->sp - sizeof(long), r11, cx, ax;
	const unsigned long __user *saved;

	BUILD_BUG_ON(AUP_TRAMP_SAVED != 3);
	saved = (const unsigned long __user *)slot - AUP_TRAMP_SAVED;
	/* Three words: cheaper than a copy_from_user() of a buffer. */
	if (!user_read_access_begin(saved, AUP_TRAMP_SAVED * sizeof(long)))
		return 0;
	unsafe_get_user(r11, &saved[0], efault);
	unsafe_get_user(cx, &saved[1], efault);
	unsafe_get_user(ax, &saved[2], efault);
	user_read_access_end();
	regs->r11 = r11;
	regs->cx = cx;
	regs->ax = ax;
	return slot;

efault:
	user_read_access_end();
	return 0;
}
#endif

/**
 * arch_uretprobe_is_trap - is an int3 at @bp one that a return reaches?
 * @slot: user address of current's XOL slot 0, or 0 if it has none
 * @bp: the int3's address
 *
 * Context: any, IRQs may be off: reads only current's mm context.
 *
 * Return: true if @bp lies in the trampoline slot or is the int3 after the
 * vDSO stubs' system call.
 */
bool arch_uretprobe_is_trap(unsigned long slot, unsigned long bp)
{
	if (slot && bp - slot < UPROBE_XOL_SLOT_BYTES)
		return true;
	return bp && bp == aup_vdso_syscall_end();
}

/**
 * arch_uretprobe_trap - an int3 of arch_uretprobe_is_trap() trapped
 * @slot: user address of XOL slot 0, or 0 if it has none
 * @regs: the user registers, ip just after the int3
 *
 * Restores the registers the trampoline saved, if it saved any.
 *
 * Return: the stack pointer the returning function had at its entry, or 0
 * if this int3 is not one a return reaches in the task's mode.
 */
unsigned long arch_uretprobe_trap(unsigned long slot, struct pt_regs *regs)
{
	unsigned long bp = uprobe_get_swbp_addr(regs);

	switch (aup_mode(regs)) {
#ifdef CONFIG_X86_64
	case AUP_MODE_64:
		if ((slot && bp == slot + AUP_TRAMP_SYSCALL_END) ||
		    bp == aup_vdso_syscall_end())
			return aup_tramp_restore(regs);
		/* The breakpoint entry: nothing saved, the ret popped 8. */
		return slot && bp == slot + AUP_TRAMP_TRAP ? regs->sp - 8 : 0;
#endif
	case AUP_MODE_32:
		return slot && bp == slot + AUP_TRAMP_TRAP ? regs->sp - 4 : 0;
	default:
		return 0;
	}
}

/**
 * arch_uretprobe_is_syscall - is this system call the trampoline's?
 * @slot: user address of current's XOL slot 0, or 0 if it has none
 * @regs: the user registers at system call entry
 *
 * Return: true for __NR_uretprobe made in 64-bit mode by the syscall
 * instruction of the XOL trampoline or of the vDSO stubs' common code (ip
 * is just past it).
 */
bool arch_uretprobe_is_syscall(unsigned long slot, struct pt_regs *regs)
{
#ifdef CONFIG_X86_64
	if (regs->orig_ax != __NR_uretprobe || in_ia32_syscall())
		return false;
	/* The vDSO's stubs first: returns go there unless all are owned. */
	return regs->ip == aup_vdso_syscall_end() ||
	       (slot && regs->ip == slot + AUP_TRAMP_SYSCALL_END);
#else
	return false;
#endif
}

#ifdef CONFIG_X86_64
/*
 * The 64-bit trampoline's way back from a probed function (the registers
 * it saved are put back). From anywhere else: SIGILL, and nothing else
 * happens.
 */
SYSCALL_DEFINE0(uretprobe)
{
	struct pt_regs *regs = current_pt_regs();
	unsigned long frame;

	if (!uprobe_syscall_from_trampoline(regs))
		goto sigill;
	frame = aup_tramp_restore(regs);
	if (!frame)
		goto sigill;
	uprobe_syscall_unseen();
	/* Not a system call for signal restarting: ax is the return value. */
	regs->orig_ax = -1;
	uprobe_handle_return(regs, frame);
	return regs->ax;

sigill:
	force_sig(SIGILL);
	return -EINVAL;
}
#endif

/* The size of a return address in current's mode, 0 for an odd mode. */
static unsigned int aup_ret_size(struct pt_regs *regs)
{
	switch (aup_mode(regs)) {
	case AUP_MODE_64:
		return 8;
	case AUP_MODE_32:
		return 4;
	default:
		return 0;
	}
}

/**
 * arch_uretprobe_ret_slot - where a pending return's address is in memory
 * @ri: the pending instance
 * @regs: current's user registers
 * @lo: set to the return address's user address
 * @hi: set to where it ends
 *
 * A call pushes the return address: it is at the stack pointer of the
 * function's entry, 8 bytes in 64-bit code and 4 in 32-bit code.
 *
 * Return: its size, 0 for an odd mode.
 */
int arch_uretprobe_ret_slot(struct return_instance *ri, struct pt_regs *regs,
			    unsigned long *lo, unsigned long *hi)
{
	unsigned int len = aup_ret_size(regs);

	*lo = ri->stack;
	*hi = ri->stack + len;
	return len;
}

/**
 * arch_uretprobe_hijack_return_addr - replace the return address of a call
 * @trampoline_vaddr: the new return address
 * @regs: registers at the probed function's first instruction
 *
 * The call pushed its return address: 8 bytes at the stack pointer in
 * 64-bit code, 4 bytes in 32-bit code. One read and one write; a write
 * that faults stores nothing.
 *
 * Context: process context, may fault on user memory.
 *
 * Return: the return address replaced, or -1UL if the stack cannot be read
 * or written, the task's mode is unknown or @trampoline_vaddr does not fit
 * it (then nothing changed).
 */
unsigned long arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
						struct pt_regs *regs)
{
	u32 __user *sp32 = (u32 __user *)regs->sp;
	u64 __user *sp = (u64 __user *)regs->sp;
	u32 old32;
	u64 old;

	switch (aup_ret_size(regs)) {
	case 8:
		/* One user access window for both: cheaper than two calls. */
		if (!user_access_begin(sp, sizeof(*sp)))
			return -1UL;
		unsafe_get_user(old, sp, efault);
		unsafe_put_user((u64)trampoline_vaddr, sp, efault);
		user_access_end();
		return old;
	case 4:
		if (trampoline_vaddr > U32_MAX || get_user(old32, sp32) ||
		    put_user((u32)trampoline_vaddr, sp32))
			return -1UL;
		return old32;
	default:
		return -1UL;
	}

efault:
	user_access_end();
	return -1UL;
}
