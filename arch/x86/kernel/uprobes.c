// SPDX-License-Identifier: GPL-2.0+
/*
 * User-space probes (uprobes): the x86 part.
 *
 * The core (kernel/events/uprobes/) finds the probe, runs the consumers
 * and then asks this file to carry out the probed instruction, whose first
 * byte is now an int3.
 *
 * Data structures (asm/uprobes.h). struct arch_uprobe holds the original
 * bytes and one struct arch_uprobe_plan per CPU mode: the same bytes are a
 * different instruction in 32-bit code (0x40 is inc %eax there, a REX
 * prefix in 64-bit mode), a file can be mapped by 64-bit and compat tasks
 * alike, and a task can even switch modes (a far jump to __USER32_CS), so
 * arch_uprobe_analyze_insn() decodes the instruction for both modes once,
 * with the kernel's instruction decoder, and each hit uses the plan of the
 * mode the task is in (cs, and for 32-bit code a flat ss). A plan says
 * whether the instruction is emulated or stepped and holds everything
 * either needs, so the hit path never decodes. struct arch_uprobe_task
 * keeps what a step must restore or report afterwards.
 *
 * Emulated (AUP_EMULATE): the instruction's effect is applied to the saved
 * user registers (and, for pushes and calls, the user stack) in the kernel,
 * with no second trap: nops (0x90 without REX.B, pause, 0f 1f /0 of any
 * length, with size, segment or REX prefixes), endbr64/endbr32, push reg
 * (r8-r15 too), push imm8/imm32 (sign-extended), pushf, mov reg,reg (32 and
 * 64 bit), lea (every addressing form, RIP-relative too), jmp rel8/rel32,
 * call rel32, jcc rel8/rel32, unprefixed loop/loope/loopne/jrcxz,
 * jmp/call through a RIP-relative pointer (PLT, -fno-plt calls), and 32/64
 * bit mov loads and stores at a RIP-relative address (globals). An
 * emulation is exactly what the CPU does: flags untouched, 32-bit results
 * zero-extended, pushes of 8 bytes in 64-bit mode and 4 in 32-bit mode,
 * call pushing the address of the next instruction, addresses wrapping at
 * 4 GiB in 32-bit mode; forms with a 16-bit operand size, an address-size
 * prefix or a prefix that might change the meaning (f2 turns loope into
 * loopne on at least one CPU; only bnd and jcc/notrack hints pass) are
 * stepped. arch_uprobe_skip_sstep() declines, and the core then steps the
 * instruction, when the emulation cannot complete exactly: a push whose
 * stack slot faults, a jmp *mem whose pointer faults, a memory access that
 * EFLAGS.AC would make fault, a branch target outside user space (the
 * step delivers the fault as the CPU would), and when the program is being
 * single-stepped (TF, ptrace single-step or block-step: it must trap after
 * exactly this instruction). So every emulated instruction also has a
 * valid out-of-line recipe. The data accesses of an emulation are shown to
 * the task's hardware watchpoints (hw_breakpoint_user_access()), which
 * then fire as after the instruction itself: counted, and a debugger's
 * with its SIGTRAP at the next instruction.
 *
 * Stepped (AUP_STEP): the core puts a copy of the instruction into an XOL
 * slot (arch_uprobe_fill_slot()), points the task at it with TF set
 * (arch_uprobe_pre_xol()), lets it run one instruction in user mode, and
 * after the #DB translates the result back (arch_uprobe_post_xol()):
 *   - straight-line: ip = vaddr + len;
 *   - relative branches (stepped only when emulation declined): their
 *     displacement in the copy is +1, so a taken branch traps at slot +
 *     len + 1 and a branch not taken at slot + len, whatever the distance
 *     between the slot and the real target; post_xol then sets ip to the
 *     real target or to vaddr + len, and turns a taken branch to a
 *     non-canonical target into the #GP (SIGSEGV at vaddr, the stack
 *     pointer unmoved) the CPU would have raised, a call leaving vaddr +
 *     len in the word below the stack pointer where the CPU stores it
 *     (aup_call_gp_stores());
 *   - indirect jmp/call, ret: ip is already right; a call's pushed return
 *     address (slot + len) is rewritten to vaddr + len, also when the call
 *     faulted after storing it (arch_uprobe_abort_xol());
 *   - rep string instructions trap after the first iteration with ip
 *     still at the slot: post_xol clears TF and returns -EAGAIN, the core
 *     returns to user mode, and the CPU runs the other iterations at full
 *     speed (interruptible as usual) until the guard int3 ends the step.
 * A slot holds the copy of each mode's plan, 32 bytes apart (64-bit first,
 * so the slot is the same whichever task fills it), each followed by an
 * int3 guard (then, for relative branches, a second int3 where a taken
 * one lands); every other byte is an int3 too. Should the kernel
 * emulate the copy instead of the CPU running it (UMIP, SEV/TDX #VC/#VE),
 * no #DB comes; the task then hits the guard, and the int3 notifier reports
 * the step as done at slot + len, as if the #DB had come.
 *
 * RIP-relative operands (64-bit mode, ModRM mod=00 r/m=101) would address
 * memory relative to the slot. The copy is rewritten to [scratch + disp32]
 * (mod=10, r/m = scratch, REX.B / VEX.B cleared; same length), and the
 * scratch register holds vaddr + len during the step; its value is saved in
 * pre_xol and restored in post_xol or abort_xol. The scratch is the first
 * of rsi, rdi, rbx that the instruction does not name in ModRM.reg or
 * VEX.vvvv, rbx also being taken by cmpxchg8b/16b. rax, rcx, rdx (mul/div,
 * shifts by cl, cmpxchg, mulx, pcmpestri, string ops...), rsp (push, pop
 * and call with a memory operand) and rbp (an SS-relative base: #SS rather
 * than #GP for a bad address) are never used, and no instruction with a
 * ModRM memory operand uses rsi, rdi or rbx implicitly except
 * cmpxchg8b/16b, so a free register always exists without a table of
 * implicit operands (maskmovq and maskmovdqu use rdi, but have no memory
 * form). EVEX forms are refused.
 *
 * Refused, -ENOTSUPP: int3, int1, int n, into, syscall, sysenter, sysexit,
 * sysret, iret, uiret, hlt, cli, sti, in, out, ins, outs, far call/jmp/ret,
 * popf (it changes TF under our step), xbegin (IP-relative abort target;
 * any trap aborts the transaction), all loads of a segment register (mov
 * to sreg, pop ss/es/ds/fs/gs, lds/les/lss/lfs/lgs; mov/pop ss also hide
 * the step trap), the UMIP-emulated sgdt/sidt/sldt/str/smsw, enclu, ud0,
 * ud1, ud2, mov to/from cr/dr, XOP encodings, the lock prefix, es/cs/ss/ds
 * segment prefixes (except on emulated instructions and notrack jmp/call,
 * where they do nothing), control transfers with a 16-bit operand size or
 * other unusual prefixes, and RIP-relative EVEX forms. -EINVAL: what the
 * decoder cannot decode, or decodes in a way the CPU may not (an escape
 * opcode missing from its map, a REX prefix followed by another prefix).
 * enter and leave are stepped: they are straight-line and trap normally.
 *
 * 32-bit code. Registration (arch_uprobe_analyze_insn() with no mm, as
 * the core calls it) succeeds if either mode can run the instruction; with
 * an mm, only that mm's mode counts, and so each install asks whether the
 * mode of the mm's program can run it (arch_uprobe_refuses_mm(): a refusal
 * fails the registration). A hit in a mode whose plan is refused,
 * in 32-bit code with a segment other than the flat __USER32_CS/__USER_DS
 * (LDT code or stack segments), or in 32-bit code whose XOL slot lies above
 * 4 GiB, can be neither emulated nor stepped: arch_uprobe_pre_xol() fails
 * (arch_uprobe_fill_slot() too, if no mode can run the instruction), and
 * the core must then take the probe out of that process so that the
 * original instruction runs. A return probe in 32-bit code hijacks a
 * 4-byte return address, and only with a trampoline below 4 GiB.
 *
 * TF, signals and debug traps: pre_xol records whether the program had TF
 * set itself (or ptrace single-steps it), suspends ptrace block-step (BTF)
 * for our step, sets TF, and puts a sentinel in thread.trap_nr: a fault
 * taken by the copy replaces it (arch_uprobe_xol_was_trapped()) and keeps
 * its own value for the signal frame, whose ip abort_xol puts back at
 * vaddr with the program's own registers. The #DB notifier claims the #DB
 * that ends our step: it consumes DR_STEP, and also the data-breakpoint
 * bits (a ptrace watchpoint hit by the copy), which post_xol reports with
 * the SIGTRAP the CPU would have caused, at the next instruction once the
 * step is fixed up (reporting them right away would have aborted the
 * completed step and run the instruction twice); a bus-lock #DB goes on to
 * exc_debug_user(). post_xol clears TF unless the program had it; if the
 * program was being stepped it then reports the step as the CPU would have
 * (DR_STEP in virtual_dr6, SIGTRAP/TRAP_TRACE at the next instruction), and
 * for block-step only after a taken branch, re-arming BTF otherwise. A
 * stepped pushf has our TF cleared in the pushed word (a TF that was set
 * before our step stays, as it does natively under ptrace).
 *
 * Boosted: plan->boostable marks the stepped instructions whose copy,
 * followed by a jump back to vaddr + len, is the instruction itself with no
 * kernel work after it: no relative branch, no call (its return address),
 * no RIP-relative operand (the scratch register), no rep string
 * instruction (the guard must end it), no pushf (TF). ret and indirect
 * jumps qualify: they never reach the jump back. arch_uprobe_fill_slot()
 * writes the jump back in place of the guard (64-bit: jmp *0(%rip) and the
 * address, so the slot may be anywhere; 32-bit: jmp rel32), and
 * arch_uprobe_boost() sends the task to the copy with no TF: one trap per
 * hit (add, pop, ret, ALU and SSE forms, ...). It declines when the
 * program is being single-stepped, and the core steps the copy then (the
 * #DB comes before the jump back). A task caught inside a boosted slot by
 * a signal is moved out first (arch_uprobe_boost_resume() says where: the
 * probed address if the copy has not run, else the jump's target), a
 * fault there reports the probed address (uprobe_get_trap_addr()), and a
 * data breakpoint the copy hits moves the task to the jump's target before
 * it is reported (uprobe_leave_boosted_copy()). When
 * the core may reuse a slot is described at struct xol_area. Limit: in an
 * SEV/TDX guest, an instruction the kernel emulates on #VC/#VE (cpuid)
 * would run past a step's #DB into the jump back.
 *
 * What a program sees: a probed pushf pushes the program's own flags, a
 * probe on syscall or another refused instruction fails to register, and
 * the usual instructions at function entries and branches take no second
 * trap. The slot contents depend only on the probe and the mode, never on
 * the task or the slot address, so one slot serves all threads of an mm
 * and can be kept across hits, and the notifiers only flag work for the
 * core and never sleep.
 *
 * Known limits: x87 instructions run in the slot leave the slot address in
 * the FPU instruction pointer (fnstenv, fxsave); a ptrace single-step of a
 * probed rep string instruction reports one step, not one per iteration;
 * an aborted step (a fault, a watchpoint inside a rep string) restarts at
 * the int3, so the probe's handlers run again when the program retries.
 *
 * What the core must do: call arch_uprobe_skip_sstep() with ip at the probed
 * address; if it declines, fill the slot (once per probe and mm: the
 * contents depend on nothing else), call arch_uprobe_pre_xol() (ip at the
 * probed address, utask->vaddr/xol_vaddr set, state UTASK_SSTEP and
 * utask->auprobe set before returning to user mode; if the slot or
 * pre_xol fails, remove the probe from the process whatever its consumers
 * want, as every later hit would fail too), then on uprobe_post_sstep_notifier()
 * call arch_uprobe_post_xol() (or, for a fault or a signal,
 * arch_uprobe_abort_xol()), all in process context with IRQs on; on
 * -EAGAIN stay in UTASK_SSTEP and return to user mode. #DE and #UD taken
 * by the copy are reported at vaddr through uprobe_get_trap_addr().
 *
 * Locking: none here. A plan is written once, by arch_uprobe_analyze_insn()
 * before the probe can be hit, and only read afterwards; everything else
 * is the current task's own state, used in its own process context or in
 * its own trap handlers (IRQs off, no sleeping, no user memory access).
 *
 * Return probes: the core replaces a probed function's return address
 * (arch_uretprobe_set_return_addr()) with one of two entries. In 64-bit
 * code it is preferably a stub of the vDSO (arch/x86/entry/vdso/
 * vuretprobe.S: arch_uretprobe_stub()), which owns a slot of the mm's
 * return table holding the real return address, so that unwinders (C++
 * exceptions, backtrace()) can see through the probed frame. Otherwise
 * (32-bit code, no vDSO, all of the mm's stubs owned) it is the entry of
 * the XOL trampoline for the task's mode, in XOL slot 0
 * (arch_uretprobe_fill_trampoline()), which unwinders cannot get past:
 *
 *	+0	mov %rax,-16(%rsp)	64-bit entry
 *	+5	mov %rcx,-24(%rsp)
 *	+10	mov %r11,-32(%rsp)
 *	+15	mov $__NR_uretprobe,%eax
 *	+20	syscall
 *	+22	int3			only if the system call did not happen
 *	+32	int3			32-bit entry
 *	(every other byte int3)
 *
 * The vDSO stubs jump to common code that does exactly what the 64-bit
 * entry does. When either runs, the function has returned: %rsp is one
 * word above the frame the core recorded, the memory below %rsp is dead,
 * and signal delivery skips the 128-byte red zone below it. The word just
 * below %rsp (the return slot) still holds the stub's address, which an
 * unwinder interrupting the common code needs, so the three registers
 * that the system call clobbers (its number, and the return ip and flags
 * the syscall instruction puts in rcx and r11) go below that, without
 * moving %rsp, and sys_uretprobe() puts them back into the saved user
 * registers, which the core then hands to the return handlers before the
 * task leaves at the real return address with every register as the
 * function left it: one kernel entry, no trap. The task goes back with
 * iret (rcx and r11 do not match ip and flags, so not with sysret) and
 * with orig_ax at -1, so that no signal delivered on the way treats the
 * function's return value as a system call error to restart.
 *
 * __NR_uretprobe (335) does nothing but SIGILL unless
 * the call comes from the syscall instruction of current's trampoline or
 * of its vDSO's common code (arch_uretprobe_is_syscall()). seccomp and
 * syscall user dispatch let exactly that call through unfiltered
 * (uprobe_syscall_from_trampoline()): a sandbox whose allow-list never names 335 keeps working
 * while traced, and nothing else can use the number to get past a filter.
 * Tracers do not see it either: the system call entry and exit work skip
 * both of uprobes' calls (uprobe_syscall_enter_unseen()).
 * Should the call still not happen, the int3 behind it traps and
 * arch_uretprobe_trap() restores the same registers.
 * 32-bit code returns to a plain int3 (a trampoline below 4 GiB only).
 *
 * The return table is a page per mm (the core's, uprobe_return_table())
 * that the vvar area maps read-only at a fixed distance below the vDSO
 * text (its vvar fault handler). Before fork copies the vvar mapping, which is
 * VM_PFNMAP and so copies its page table entries without references, the
 * parent's entry for the table is zapped (arch_uretprobe_unmap_table()):
 * the child never maps a page it does not own. The stub addresses come
 * from mm->context.vdso, which follows an mremap() of the vDSO and is
 * cleared when it is unmapped: later calls then return
 * through the XOL trampoline. A call already pending at the unmap returns
 * to where its stub was, as a caller of any vDSO function would.
 *
 * Jump sites (64-bit code; Documentation/trace/uprobes.rst says when a
 * site becomes one): a probed instruction of five bytes or more that is
 * emulated or boosted (arch_uprobe_jump_len()) gets a jmp rel32 to a stub
 * of 16 bytes in a stub area within 2 GiB (arch_uprobe_fill_stubs()),
 * every stub the same code:
 *
 *	+0	lea -128(%rsp),%rsp	step over the red zone; flags unchanged
 *	+5	push %rcx
 *	+6	push %r11
 *	+8	push %rax
 *	+9	mov $__NR_uprobe,%eax
 *	+14	syscall
 *	+16	int3			(to the end of the stub)
 *
 * Nothing is written below the program's stack pointer before it moved
 * past the red zone, so a leaf function's data there survives, and neither
 * lea, push nor mov changes the flags the syscall saves. sys_uprobe()
 * (336) finds the site from the stub's address
 * (uprobe_stub_site()), puts rax, r11 and rcx back from the stack and the
 * stack pointer above the red zone, so that the registers are those of
 * the program at the site, and the core runs the hit (uprobe_stub_hit());
 * the task leaves with iret, like a return probe, wherever the hit sent
 * it. From anywhere else than a stub in use: SIGILL. seccomp lets exactly
 * the stubs' call through (uprobe_syscall_from_trampoline()), and no
 * tracer sees it (strace shows no 336, and none can skip it). A debugger
 * single-stepping the program into a jump gets a #DB at the stub's start:
 * aup_debug() turns it into a breakpoint hit of the site, handled on the
 * way out (TIF_UPROBE), so the debugger sees one step from the site to the
 * next instruction, as without the jump. A signal that finds a task in
 * the stub before its syscall first puts it back at the site
 * (arch_uprobe_leave_stub(): the stack pointer up by what the stub moved
 * it, rax from the stack once the mov replaced it), so no one ever sees
 * the stub's address or its stack. A push that faults (the stack ends
 * within 152 bytes of the program's stack pointer) is taken back by
 * uprobe_stub_fault() before any signal: the hit goes the breakpoint's way.
 *
 * The analysis, emulation and step logic is tested in user space, against
 * the CPU, in both modes, by wip/tests/x86-insn.
 */
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/mmu_context.h>
#include <linux/processor.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/debugreg.h>
#include <asm/hw_breakpoint.h>
#include <asm/insn.h>
#include <asm/traps.h>
#include <asm/unaligned.h>
#include <asm/vdso.h>

/* How an emulated instruction is carried out (arch_uprobe_plan.emul). */
enum aup_emul {
	AUP_EM_NONE,
	AUP_EM_NOP,		/* nothing but ip += len */
	AUP_EM_PUSH,		/* push reg */
	AUP_EM_PUSH_IMM,	/* push sign-extended rel */
	AUP_EM_PUSHF,		/* push flags */
	AUP_EM_MOV,		/* reg = src, opnd bytes */
	AUP_EM_LEA,		/* reg = src + (index << scale) + rel */
	AUP_EM_JMP,		/* ip = next + rel */
	AUP_EM_JCC,		/* if (cond) ip = next + rel */
	AUP_EM_CALL,		/* push next; ip = next + rel */
	AUP_EM_LOOP,		/* loopne/loope/loop/jrcxz: cond = opcode & 3 */
	AUP_EM_JMP_MEM,		/* ip = *(next + rel) */
	AUP_EM_CALL_MEM,	/* push next; ip = *(next + rel) */
	AUP_EM_LOAD,		/* reg = *(next + rel), opnd bytes */
	AUP_EM_STORE,		/* *(next + rel) = src, opnd bytes */
};

/* What post_xol corrects after a step (arch_uprobe_plan.fixups). */
#define AUP_FIX_IP	0x01	/* straight-line: ip = vaddr + len */
#define AUP_FIX_RELBR	0x02	/* relative branch: not taken or target */
#define AUP_FIX_CALL	0x08	/* a call: rewrite the pushed return address */
#define AUP_FIX_BRANCH	0x10	/* a control transfer (block-step reports) */
#define AUP_FIX_SCRATCH	0x20	/* RIP-relative: restore the scratch reg */
#define AUP_FIX_PUSHF	0x40	/* pushf: hide our TF in the pushed word */
#define AUP_FIX_REP	0x80	/* rep string: may stop after an iteration */

#define AUP_REG_NONE	0xff	/* no base / no index */
#define AUP_REG_RIP	0x10	/* base is the address of the next insn */

/* thread.trap_nr while a step is running: no fault happened yet. */
#define AUP_TRAP_NR	(~0UL)

#define AUP_REX_B	0x01
#define AUP_REX_X	0x02
#define AUP_REX_R	0x04
#define AUP_REX_W	0x08

/* pt_regs offset of each general register, in encoding order. */
static const u8 aup_reg_off[] = {
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

static unsigned long *aup_regp(struct pt_regs *regs, unsigned int reg)
{
	return (unsigned long *)((u8 *)regs +
				 aup_reg_off[reg % ARRAY_SIZE(aup_reg_off)]);
}

/* ------------------------------------------------------------ analysis */

/**
 * struct aup_decoded - the facts about one decoded instruction we classify by
 * @insn: the decoder's result
 * @map: opcode map: 0 one-byte, 1 0f, 2 0f 38, 3 0f 3a (VEX: its m field)
 * @op: the opcode byte within @map
 * @vex: VEX or EVEX encoded
 * @rex: the REX prefix byte, or 0
 * @modrm: the ModRM byte (0 if none)
 * @has_modrm: @modrm is valid
 * @npfx: number of legacy prefix bytes
 * @lock: 0xf0 present
 * @seg: one of 0x26 0x2e 0x36 0x3e present (the last one seen)
 * @opsz: 0x66 present
 * @adsz: 0x67 present
 * @rep: 0xf3 present
 * @repne: 0xf2 present
 * @fsgs: 0x64 or 0x65 present
 */
struct aup_decoded {
	struct insn insn;
	u8 map;
	u8 op;
	bool vex;
	u8 rex;
	u8 modrm;
	bool has_modrm;
	u8 npfx;
	bool lock;
	u8 seg;
	bool opsz;
	bool adsz;
	bool rep;
	bool repne;
	bool fsgs;
};

static unsigned int aup_mod(const struct aup_decoded *d)
{
	return X86_MODRM_MOD(d->modrm);
}

static unsigned int aup_modreg(const struct aup_decoded *d)
{
	return X86_MODRM_REG(d->modrm);
}

static void aup_scan(struct aup_decoded *d)
{
	struct insn *insn = &d->insn;
	insn_byte_t p;
	int i;

	for_each_insn_prefix(insn, i, p) {
		switch (p) {
		case 0xf0:
			d->lock = true;
			break;
		case 0x26: case 0x2e: case 0x36: case 0x3e:
			d->seg = p;
			break;
		case 0x64: case 0x65:
			d->fsgs = true;
			break;
		case 0x66:
			d->opsz = true;
			break;
		case 0x67:
			d->adsz = true;
			break;
		case 0xf2:
			d->repne = true;
			break;
		case 0xf3:
			d->rep = true;
			break;
		}
	}
	d->npfx = insn->prefixes.nbytes;
	d->rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	d->has_modrm = insn->modrm.nbytes;
	d->modrm = insn->modrm.bytes[0];
	d->vex = insn_is_avx(insn);
	if (d->vex) {
		d->map = insn_vex_m_bits(insn);
		d->op = insn->opcode.bytes[0];
	} else if (insn->opcode.bytes[0] != 0x0f) {
		d->map = 0;
		d->op = insn->opcode.bytes[0];
	} else if (insn->opcode.bytes[1] == 0x38 ||
		   insn->opcode.bytes[1] == 0x3a) {
		d->map = insn->opcode.bytes[1] == 0x38 ? 2 : 3;
		d->op = insn->opcode.bytes[2];
	} else {
		d->map = 1;
		d->op = insn->opcode.bytes[1];
	}
}

/* Legacy (non-VEX) opcode @op in map @map? */
static bool aup_is(const struct aup_decoded *d, u8 map, u8 op)
{
	return !d->vex && d->map == map && d->op == op;
}

/* Instructions we never run: see the list at the top of the file. */
static bool aup_refused(const struct aup_decoded *d)
{
	unsigned int reg = aup_modreg(d);
	bool mem = d->has_modrm && aup_mod(d) != 3;

	if (d->lock)
		return true;
	if (d->vex)
		return false;
	if (d->map == 0) {
		switch (d->op) {
		case 0x07: case 0x17: case 0x1f:	/* pop es/ss/ds */
		case 0x6c ... 0x6f:			/* ins/outs */
		case 0x8e:				/* mov sreg, r/m */
		case 0x9a:				/* call far */
		case 0x9d:				/* popf */
		case 0xc4: case 0xc5:			/* les/lds (32-bit) */
		case 0xca ... 0xcf:			/* retf, int*, iret */
		case 0xe4 ... 0xe7:			/* in/out imm8 */
		case 0xea:				/* jmp far */
		case 0xec ... 0xef:			/* in/out dx */
		case 0xf1:				/* int1 */
		case 0xf4:				/* hlt */
		case 0xfa: case 0xfb:			/* cli/sti */
			return true;
		case 0x8f:		/* pop r/m; other /r are XOP */
			return reg != 0;
		case 0xc7:		/* xbegin */
			return d->modrm == 0xf8;
		case 0xff:		/* call/jmp far through memory */
			return reg == 3 || reg == 5;
		}
		return false;
	}
	if (d->map != 1)
		return false;
	switch (d->op) {
	case 0x00:			/* sldt, str: UMIP-emulated */
		return reg == 0 || reg == 1;
	case 0x01:
		if (d->modrm == 0xd7)			/* enclu */
			return true;
		if (d->modrm == 0xec && d->rep)		/* uiret */
			return true;
		if (reg == 4)				/* smsw */
			return true;
		return mem && (reg == 0 || reg == 1);	/* sgdt, sidt */
	case 0x05: case 0x07:		/* syscall, sysret */
	case 0x0b:			/* ud2 */
	case 0x20 ... 0x23:	/* mov cr/dr: privileged, ModRM misread */
	case 0x34: case 0x35:		/* sysenter, sysexit */
	case 0xa1: case 0xa9:		/* pop fs, pop gs */
	case 0xb2: case 0xb4: case 0xb5:	/* lss, lfs, lgs */
	case 0xb9: case 0xff:		/* ud1, ud0 */
		return true;
	}
	return false;
}

/* notrack (3e) indirect jmp/call: without user IBT, a plain jmp/call. */
static bool aup_notrack(const struct aup_decoded *d)
{
	return d->seg == 0x3e && aup_is(d, 0, 0xff) &&
	       (aup_modreg(d) == 2 || aup_modreg(d) == 4);
}

/* Fill in the emulation of a relative branch, or refuse it. */
static int aup_relbr(struct arch_uprobe_plan *p, const struct aup_decoded *d,
		     u8 emul, bool hints_ok)
{
	/* Only bnd (f2), and 2e/3e hints on jcc, do nothing on a branch. */
	if (d->opsz || d->adsz || d->rep || d->fsgs ||
	    (d->seg && !(hints_ok && (d->seg == 0x2e || d->seg == 0x3e))))
		return -ENOTSUPP;
	p->exec = AUP_EMULATE;
	p->emul = emul;
	p->rel = d->insn.immediate.value;
	return 0;
}

/* lea: record base, index, scale and displacement. */
static void aup_lea(struct arch_uprobe_plan *p, const struct aup_decoded *d)
{
	const struct insn *insn = &d->insn;
	unsigned int rm = X86_MODRM_RM(d->modrm);
	u8 b = d->rex & AUP_REX_B ? 8 : 0;

	p->index = AUP_REG_NONE;
	if (rm == 4) {
		u8 sib = insn->sib.bytes[0];
		u8 index = X86_SIB_INDEX(sib) | (d->rex & AUP_REX_X ? 8 : 0);

		if (index != 4)
			p->index = index;
		p->scale = X86_SIB_SCALE(sib);
		if (X86_SIB_BASE(sib) == 5 && aup_mod(d) == 0)
			p->src = AUP_REG_NONE;
		else
			p->src = X86_SIB_BASE(sib) | b;
	} else if (rm == 5 && aup_mod(d) == 0) {
		p->src = p->ia32 ? AUP_REG_NONE : AUP_REG_RIP;
	} else {
		p->src = rm | b;
	}
	p->rel = insn->displacement.value;
}

/*
 * Decide whether the instruction is emulated, and how. Returns 0 or
 * -ENOTSUPP for forms nobody should probe (16-bit branches and the like).
 */
static int aup_classify_emulation(struct arch_uprobe_plan *p,
				  const struct aup_decoded *d)
{
	bool no_pfx = !d->npfx;
	u8 r = d->rex & AUP_REX_R ? 8 : 0;
	u8 b = d->rex & AUP_REX_B ? 8 : 0;
	u8 op = d->op;

	if (d->vex)
		return 0;

	if (d->map == 1) {
		if (op == 0x1f && aup_modreg(d) == 0 &&		/* nopl */
		    !d->rep && !d->repne)
			goto nop;
		if (op == 0x1e && d->rep && !d->opsz && !d->repne &&
		    !d->rex && (d->modrm == 0xfa || d->modrm == 0xfb))
			goto nop;				/* endbr */
		if (op >= 0x80 && op <= 0x8f) {			/* jcc rel32 */
			p->cond = op & 0xf;
			return aup_relbr(p, d, AUP_EM_JCC, true);
		}
		return 0;
	}
	if (d->map != 0)
		return 0;

	switch (op) {
	case 0x90:					/* nop, pause */
		if (!b && !d->repne)
			goto nop;
		return 0;
	case 0x50 ... 0x57:				/* push reg */
		if (!no_pfx)
			return 0;
		p->reg = (op & 7) | b;
		p->emul = AUP_EM_PUSH;
		break;
	case 0x68: case 0x6a:				/* push imm */
		if (!no_pfx)
			return 0;
		p->rel = d->insn.immediate.value;
		p->emul = AUP_EM_PUSH_IMM;
		break;
	case 0x9c:					/* pushf */
		if (!no_pfx)
			return 0;
		p->emul = AUP_EM_PUSHF;
		break;
	case 0x89: case 0x8b:				/* mov reg, reg */
		if (no_pfx && !p->ia32 && d->modrm == (aup_modreg(d) << 3 | 5)) {
			/* mov disp32(%rip), reg / mov reg, disp32(%rip) */
			p->rel = d->insn.displacement.value;
			p->opnd = d->rex & AUP_REX_W ? 8 : 4;
			p->reg = aup_modreg(d) | r;
			p->src = p->reg;
			p->emul = op == 0x8b ? AUP_EM_LOAD : AUP_EM_STORE;
			break;
		}
		if (!no_pfx || aup_mod(d) != 3)
			return 0;
		if (op == 0x89) {
			p->reg = X86_MODRM_RM(d->modrm) | b;
			p->src = aup_modreg(d) | r;
		} else {
			p->reg = aup_modreg(d) | r;
			p->src = X86_MODRM_RM(d->modrm) | b;
		}
		p->opnd = d->rex & AUP_REX_W ? 8 : 4;
		p->emul = AUP_EM_MOV;
		break;
	case 0x8d:					/* lea */
		if (!no_pfx || aup_mod(d) == 3)
			return 0;
		p->reg = aup_modreg(d) | r;
		p->opnd = d->rex & AUP_REX_W ? 8 : 4;
		aup_lea(p, d);
		p->emul = AUP_EM_LEA;
		break;
	case 0x70 ... 0x7f:				/* jcc rel8 */
		p->cond = op & 0xf;
		return aup_relbr(p, d, AUP_EM_JCC, true);
	case 0xe9: case 0xeb:				/* jmp rel */
		return aup_relbr(p, d, AUP_EM_JMP, false);
	case 0xe8:					/* call rel32 */
		return aup_relbr(p, d, AUP_EM_CALL, false);
	case 0xe0 ... 0xe3:			/* loopne, loope, loop, jrcxz */
		/* 67 selects ecx; f2/f3 change loope/loopne on some CPUs */
		if (d->npfx)
			return 0;
		p->cond = op & 3;
		return aup_relbr(p, d, AUP_EM_LOOP, false);
	case 0xff:				/* jmp/call *disp32(%rip) */
		if (p->ia32 || d->modrm != (aup_modreg(d) << 3 | 5))
			return 0;
		if (aup_modreg(d) != 2 && aup_modreg(d) != 4)
			return 0;
		/* bnd (f2) and notrack (3e) only */
		if (d->opsz || d->adsz || d->rep || d->fsgs ||
		    (d->seg && d->seg != 0x3e))
			return 0;
		p->rel = d->insn.displacement.value;
		p->emul = aup_modreg(d) == 2 ? AUP_EM_CALL_MEM :
						AUP_EM_JMP_MEM;
		break;
	default:
		return 0;
	}
	p->exec = AUP_EMULATE;
	return 0;
nop:
	p->exec = AUP_EMULATE;
	p->emul = AUP_EM_NOP;
	return 0;
}

/*
 * What post_xol must correct when the instruction is stepped. A relative
 * branch gets displacement +1 in the copy: taken, it lands right after the
 * guard int3, whatever the distance to its real target.
 */
static int aup_step_fixups(struct arch_uprobe_plan *p, struct aup_decoded *d)
{
	struct insn *insn = &d->insn;
	u8 op = d->op;

	p->fixups = AUP_FIX_IP;
	if (d->vex || d->map > 1)
		return 0;
	if (d->map == 1) {
		if (op < 0x80 || op > 0x8f)
			return 0;
		p->fixups = AUP_FIX_RELBR | AUP_FIX_BRANCH;
	} else {
		switch (op) {
		case 0x70 ... 0x7f:
		case 0xe0 ... 0xe3:
		case 0xe9: case 0xeb:
			p->fixups = AUP_FIX_RELBR | AUP_FIX_BRANCH;
			break;
		case 0xe8:
			p->fixups = AUP_FIX_RELBR | AUP_FIX_CALL |
				    AUP_FIX_BRANCH;
			break;
		case 0xc2: case 0xc3:
			p->fixups = AUP_FIX_BRANCH;
			break;
		case 0xff:
			if (aup_modreg(d) == 2)
				p->fixups = AUP_FIX_CALL | AUP_FIX_BRANCH;
			else if (aup_modreg(d) == 4)
				p->fixups = AUP_FIX_BRANCH;
			else
				return 0;
			break;
		case 0x9c:
			p->fixups |= AUP_FIX_PUSHF;
			p->opnd = d->opsz ? 2 : p->ia32 ? 4 : 8;
			return 0;
		case 0xa4 ... 0xa7:
		case 0xaa ... 0xaf:
			if (d->rep || d->repne)
				p->fixups |= AUP_FIX_REP;
			return 0;
		default:
			return 0;
		}
	}
	/* A 16-bit operand size truncates ip (and sizes the push) by vendor. */
	if (d->opsz)
		return -ENOTSUPP;
	if (p->fixups & AUP_FIX_RELBR) {
		s32 one = 1;

		if (insn->immediate.nbytes != 1 && insn->immediate.nbytes != 4)
			return -EINVAL;
		p->rel = insn->immediate.value;
		memcpy(p->xol + insn_offset_immediate(insn), &one,
		       insn->immediate.nbytes);
	}
	return 0;
}

/*
 * Rewrite the RIP-relative operand of the copy in p->xol to
 * [scratch + disp32]; see the top of the file for the choice of scratch.
 */
static int aup_riprel(struct arch_uprobe_plan *p, struct aup_decoded *d)
{
	static const u8 candidates[] = { 6, 7, 3 };	/* rsi, rdi, rbx */
	struct insn *insn = &d->insn;
	unsigned int used = 0, i;
	u8 reg = aup_modreg(d);

	if (insn_is_evex(insn))
		return -ENOTSUPP;
	if (d->vex) {
		const insn_byte_t *v = insn->vex_prefix.bytes;
		u8 vvvv = insn->vex_prefix.nbytes == 2 ? v[1] : v[2];

		if (!(v[1] & 0x80))		/* VEX.R is stored inverted */
			reg |= 8;
		used |= BIT((~vvvv >> 3) & 0xf);
	} else if (d->rex & AUP_REX_R) {
		reg |= 8;
	}
	used |= BIT(reg);
	if (aup_is(d, 1, 0xc7))			/* cmpxchg8b/16b: ecx:ebx */
		used |= BIT(3);

	for (i = 0; i < ARRAY_SIZE(candidates); i++)
		if (!(used & BIT(candidates[i])))
			break;
	if (i == ARRAY_SIZE(candidates))
		return -ENOTSUPP;
	p->scratch = candidates[i];

	p->xol[insn_offset_modrm(insn)] = 0x80 | (d->modrm & 0x38) | p->scratch;
	if (d->rex)
		p->xol[insn_offset_rex_prefix(insn)] &= ~AUP_REX_B;
	if (insn->vex_prefix.nbytes == 3)	/* VEX.B is stored inverted */
		p->xol[insn_offset_vex_prefix(insn) + 1] |= 0x20;
	p->fixups |= AUP_FIX_SCRATCH;
	return 0;
}

/*
 * Escape-map instructions the decoder knows without ModRM or immediate;
 * anything else it reports that way is missing from its opcode map (a
 * reserved hint nop, a prefix the map has no variant for), so its length
 * cannot be trusted.
 */
static bool aup_known_bare(const struct aup_decoded *d)
{
	if (d->map != 1)
		return false;
	switch (d->op) {
	case 0x05 ... 0x09:	/* syscall, clts, sysret, invd, wbinvd */
	case 0x0b: case 0x0e:	/* ud2, femms */
	case 0x30 ... 0x35:	/* wrmsr rdtsc rdmsr rdpmc sysenter sysexit */
	case 0x37: case 0x77:	/* getsec, emms */
	case 0xa0 ... 0xa2:	/* push fs, pop fs, cpuid */
	case 0xa8 ... 0xaa:	/* push gs, pop gs, rsm */
	case 0xc8 ... 0xcf:	/* bswap */
		return true;
	}
	return false;
}

/* The decoder's result is one the CPU agrees with, as far as we can tell. */
static bool aup_decoded_ok(const struct aup_decoded *d)
{
	insn_attr_t attr;

	if (d->vex)
		return true;
	if (d->map == 0) {
		/* REX followed by a legacy prefix or a second REX: misparsed */
		attr = inat_get_opcode_attribute(d->op);
		return !inat_is_legacy_prefix(attr) &&
		       !(d->insn.x86_64 && inat_is_rex_prefix(attr));
	}
	return d->insn.attr || aup_known_bare(d);
}

/* The planned step needs nothing from the kernel after the copy ran. */
static bool aup_boostable(const struct arch_uprobe_plan *p)
{
	return p->exec == AUP_STEP &&
	       !(p->fixups & ~(AUP_FIX_IP | AUP_FIX_BRANCH));
}

/* Decode @bytes for one mode and fill in the plan, or return why not. */
static int aup_analyze(struct arch_uprobe_plan *p, const u8 *bytes, bool ia32)
{
	struct aup_decoded d = { };
	int ret;

	memset(p, 0, sizeof(*p));
	p->ia32 = ia32;
	if (insn_decode(&d.insn, bytes, MAX_UINSN_BYTES,
			ia32 ? INSN_MODE_32 : INSN_MODE_64))
		return -EINVAL;
	if (insn_has_emulate_prefix(&d.insn))
		return -ENOTSUPP;
	aup_scan(&d);
	if (aup_refused(&d))
		return -ENOTSUPP;
	if (!aup_decoded_ok(&d))
		return -EINVAL;

	p->len = d.insn.length;
	p->xol_len = d.insn.length;
	memcpy(p->xol, bytes, d.insn.length);
	p->exec = AUP_STEP;
	p->reg = AUP_REG_NONE;
	p->src = AUP_REG_NONE;
	p->index = AUP_REG_NONE;

	ret = aup_classify_emulation(p, &d);
	if (ret)
		return ret;
	/* Segment prefixes are only accepted where they do nothing. */
	if (d.seg && p->exec != AUP_EMULATE && !aup_notrack(&d))
		return -ENOTSUPP;
	ret = aup_step_fixups(p, &d);
	if (ret)
		return ret;
	if (!ia32 && insn_rip_relative(&d.insn)) {
		ret = aup_riprel(p, &d);
		if (ret)
			return ret;
	}
	p->boostable = aup_boostable(p);
	return 0;
}

/**
 * arch_uprobe_analyze_insn - decode a probed instruction and plan its run
 * @au: the probe; @au->insn holds the bytes read from the file at the probe
 *	(zero-padded past the end of the file)
 * @mm: an mm that maps the probe, or NULL
 * @vaddr: the probe's address in @mm (unused: the plans do not depend on it)
 *
 * Fills @au->plan for every mode the kernel can run user code in: the
 * length, whether a hit emulates or steps, the emulation operands, the step
 * fix-ups and the copy to run out of line. A plan that cannot be used keeps
 * its error; a hit in that mode then gets no slot (see the top of the
 * file).
 *
 * Context: process context; once per probe, before it can be hit (a plan
 * is read locklessly by every hit, so it is never rewritten afterwards).
 *
 * Return: 0 if the instruction can run in the mode of @mm, or with no @mm
 * in either mode; else the error of @mm's mode (of 64-bit mode without
 * @mm): -EINVAL if the bytes do not decode, -ENOTSUPP if the instruction
 * cannot be probed (see the list at the top of this file).
 */
int arch_uprobe_analyze_insn(struct arch_uprobe *au, struct mm_struct *mm,
			     unsigned long vaddr)
{
	struct arch_uprobe_plan *p64 = &au->plan[AUP_MODE_64];
	struct arch_uprobe_plan *p32 = &au->plan[AUP_MODE_32];

	p32->err = aup_analyze(p32, au->insn, true);
	if (!IS_ENABLED(CONFIG_X86_64)) {
		memset(p64, 0, sizeof(*p64));
		p64->err = -ENOEXEC;
		return p32->err;
	}
	p64->err = aup_analyze(p64, au->insn, false);
	if (mm)
		return is_64bit_mm(mm) ? p64->err : p32->err;
	return p64->err && p32->err ? p64->err : 0;
}

/**
 * arch_uprobe_refuses_mm - can the tasks of @mm run the probe?
 * @au: the probe, decoded for both modes
 * @mm: an mm it is about to be installed in
 *
 * A probe is installed for the mode of the mm's program (64-bit, or a
 * compat task's 32-bit code): an instruction only the other mode can run
 * (48 cf is dec %eax in 32-bit code, iretq in 64-bit code) is refused
 * there, as a decode with that mm would refuse it. A task that switches
 * modes still finds the other mode's plan at hit time.
 *
 * Return: 0, or the refusal of @mm's mode (-ENOTSUPP, -EINVAL).
 */
int arch_uprobe_refuses_mm(struct arch_uprobe *au, struct mm_struct *mm)
{
	return au->plan[is_64bit_mm(mm) ? AUP_MODE_64 : AUP_MODE_32].err;
}

/* ------------------------------------------------------------- hit time */

/*
 * The mode the task runs in, if a plan can run there: 64-bit code, or
 * 32-bit code with the flat user code and stack segments (the emulations
 * and fix-ups address the stack as flat memory).
 */
static int aup_mode(struct pt_regs *regs)
{
#ifdef CONFIG_X86_64
	if (user_64bit_mode(regs))
		return AUP_MODE_64;
	if (regs->cs == __USER32_CS && regs->ss == __USER_DS)
		return AUP_MODE_32;
#else
	if (regs->cs == __USER_CS && regs->ss == __USER_DS &&
	    !v8086_mode(regs))
		return AUP_MODE_32;
#endif
	return -1;
}

/* The plan for the task's mode, or NULL if there is none it can run. */
static const struct arch_uprobe_plan *aup_plan(const struct arch_uprobe *au,
					       struct pt_regs *regs)
{
	int mode = aup_mode(regs);

	if (mode < 0 || au->plan[mode].err || !au->plan[mode].len)
		return NULL;
	return &au->plan[mode];
}

/* An address computation in the plan's mode. */
static unsigned long aup_trunc(const struct arch_uprobe_plan *p,
			       unsigned long v)
{
	return p->ia32 ? (u32)v : v;
}

/* Where the copy of each mode's plan sits in a slot. */
#define AUP_HALF	(UPROBE_XOL_SLOT_BYTES / AUP_NR_MODES)

/* The user address of the copy the current task steps (or will). */
static unsigned long aup_copy_vaddr(const struct uprobe_task *ut)
{
	return ut->xol_vaddr + ut->autask.mode * AUP_HALF;
}

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

static bool aup_get_ptr(struct pt_regs *regs, unsigned long addr,
			unsigned long *val)
{
	u64 v;

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
 * @next: the address after the instruction.
 */
static void aup_watch(const struct arch_uprobe_plan *p, struct pt_regs *regs,
		      unsigned long next)
{
	struct thread_struct *t = &current->thread;
	unsigned int word = p->ia32 ? 4 : 8;
	unsigned long mem = aup_trunc(p, next + p->rel);
	unsigned long dr6 = t->virtual_dr6;
	bool hit = false;

	/*
	 * cpu_dr7 holds the breakpoints of the task on the CPU, wherever it
	 * has moved: its own follow it. hw_breakpoint_user_access() reads
	 * them with interrupts off.
	 */
	if (!IS_ENABLED(CONFIG_HAVE_HW_BREAKPOINT) ||
	    !(this_cpu_read(cpu_dr7) & DR_GLOBAL_ENABLE_MASK))
		return;
	t->virtual_dr6 = 0;
	switch (p->emul) {
	case AUP_EM_PUSH:
	case AUP_EM_PUSH_IMM:
	case AUP_EM_PUSHF:
	case AUP_EM_CALL:
		hit = hw_breakpoint_user_access(regs, regs->sp, word, true);
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
		if (!aup_get_ptr(regs, next + p->rel, &ip) ||
		    !aup_target_ok(p, ip))
			return false;
		if (p->emul == AUP_EM_CALL_MEM && !aup_push(p, regs, next))
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
 * Return: true if done; false if the instruction must be stepped instead
 * (not emulated in the task's mode, the program single-steps, or a memory
 * access would fault: the step will deliver the fault). Nothing is changed
 * when false is returned.
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
	if (p->emul == AUP_EM_NOP) {
		regs->ip = aup_trunc(p, regs->ip + p->len);
		return true;
	}
	return aup_emulate(p, regs);
}

#define AUP_JMP64_LEN	14	/* jmp *0(%rip); .quad target */
#define AUP_JMP32_LEN	5	/* jmp rel32 */

/*
 * Write the jump back of a boosted copy at @at (user address @at_vaddr) to
 * @target: 64-bit code jumps through the address stored right after the
 * jump (the slot may be anywhere in the address space), 32-bit code jumps
 * relative (it all wraps at 4 GiB).
 */
static void aup_jump_back(const struct arch_uprobe_plan *p, u8 *at,
			  unsigned long at_vaddr, unsigned long target)
{
	BUILD_BUG_ON(MAX_UINSN_BYTES + AUP_JMP64_LEN > AUP_HALF);
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

/**
 * arch_uprobe_fill_slot - write the out-of-line recipe of a probe
 * @au: the probe
 * @slot: kernel buffer of UPROBE_XOL_SLOT_BYTES bytes, the slot's contents
 * @slot_vaddr: the user address the slot has in the task's mm
 * @vaddr: the probed address the slot stands for
 *
 * Writes, AUP_HALF bytes apart, the copy of each mode's plan that can run
 * there (not a 32-bit one above 4 GiB), each followed by the guard int3
 * and, for a relative branch, its landing int3; the other bytes are int3s
 * too; a boostable straight-line copy is followed by its jump back to
 * @vaddr + len instead of the guard (aup_jump_back()). The contents depend
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
	int mode;

	/*
	 * Guard: reached only when the copy ran without a #DB (the kernel
	 * emulated it, or a rep string instruction ran its last iterations
	 * without TF); the int3 notifier then reports the step as done.
	 * The booster will put its jump back to vaddr + len here instead.
	 * The next int3 is where a taken relative branch lands (its #DB
	 * comes first).
	 */
	BUILD_BUG_ON(MAX_UINSN_BYTES + 2 > AUP_HALF);
	memset(s, UPROBE_SWBP_INSN, UPROBE_XOL_SLOT_BYTES);
	for (mode = 0; mode < AUP_NR_MODES; mode++) {
		const struct arch_uprobe_plan *p = &au->plan[mode];

		if (p->err || !p->xol_len || p->xol_len > MAX_UINSN_BYTES)
			continue;
		if (p->ia32 && slot_vaddr + UPROBE_XOL_SLOT_BYTES > BIT_ULL(32))
			continue;
		memcpy(s + mode * AUP_HALF, p->xol, p->xol_len);
		if (p->boostable && (p->fixups & AUP_FIX_IP))
			aup_jump_back(p, s + mode * AUP_HALF + p->xol_len,
				      slot_vaddr + mode * AUP_HALF + p->xol_len,
				      aup_trunc(p, vaddr + p->len));
		used = true;
	}
	return used ? UPROBE_XOL_SLOT_BYTES : -ENOEXEC;
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

	if (!p || !p->boostable ||
	    (p->ia32 && slot_vaddr + UPROBE_XOL_SLOT_BYTES > BIT_ULL(32)))
		return false;
	if ((regs->flags & X86_EFLAGS_TF) ||
	    test_thread_flag(TIF_SINGLESTEP) || test_thread_flag(TIF_BLOCKSTEP))
		return false;
	regs->ip = slot_vaddr + (p - au->plan) * AUP_HALF;
	return true;
}

/**
 * arch_uprobe_boost_resume - where a task found inside a boosted slot goes on
 * @slot: kernel copy of the slot's contents
 * @slot_vaddr: the slot's user address
 * @ip: the task's ip, inside the slot
 * @vaddr: the probed address the slot stands for
 *
 * A task can be stopped in a slot only at the start of a copy (it has not
 * run yet) or at the jump back after it (it has). The jump back itself has
 * no effect, so the task can as well be at its target.
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

	if (off >= UPROBE_XOL_SLOT_BYTES || !(off % AUP_HALF))
		return vaddr;
	if (off + AUP_JMP64_LEN <= UPROBE_XOL_SLOT_BYTES &&
	    j[0] == 0xff && j[1] == 0x25 && !get_unaligned((u32 *)(j + 2))) {
		target = get_unaligned((u64 *)(j + 6));
		return target;
	}
	if (off + AUP_JMP32_LEN <= UPROBE_XOL_SLOT_BYTES && j[0] == 0xe9) {
		rel = get_unaligned((s32 *)(j + 1));
		return (u32)(ip + AUP_JMP32_LEN + rel);
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
 * the copy of the task's mode and sets TF.
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
		 * Rep string instructions trap after every iteration. Let the
		 * CPU run the others without TF (unless the program steps
		 * itself); the guard int3 then reports the end.
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

#ifdef CONFIG_X86_64
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

/* ----------------------------------------------------- return probes */

#define AUP_TRAMP_SYSCALL_END	22	/* ip after the trampoline's syscall */
#define AUP_TRAMP_32		32	/* the 32-bit entry */
#define AUP_TRAMP_SAVED		3	/* words kept below the return slot */
#define AUP_STUB_BYTES		16	/* one stub of vuretprobe.S */

#ifdef CONFIG_X86_64
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
 * The layout is at the top of this file; it does not depend on where the
 * slot is mapped.
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
		return slot;
#endif
	case AUP_MODE_32:
		return slot + AUP_TRAMP_32 <= U32_MAX ? slot + AUP_TRAMP_32 : 0;
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

	if (aup_mode(regs) != AUP_MODE_64)
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
	return addr == slot || addr == slot + AUP_TRAMP_32;
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
		return 0;
#endif
	case AUP_MODE_32:
		return slot && bp == slot + AUP_TRAMP_32 ? regs->sp - 4 : 0;
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
 * The 64-bit trampoline's way back from a probed function; see the top of
 * this file. From anywhere else: SIGILL, and nothing else happens.
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

/* ------------------------------------------------------- jump sites */

#define AUP_JUMP_LEN		5	/* jmp rel32 */
#define AUP_STUB_SYSCALL_END	16	/* ip after a stub's syscall */
#define AUP_STUB_SAVED		3	/* rax, r11, rcx from the stub's sp up */
#define AUP_RED_ZONE		128	/* the x86-64 ABI's, below the sp */

#ifdef CONFIG_X86_64
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

	if (p->err || (p->exec != AUP_EMULATE && !p->boostable) ||
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
 * @slot: set to the return address's user address
 *
 * A call pushes the return address: it is at the stack pointer of the
 * function's entry, 8 bytes in 64-bit code and 4 in 32-bit code.
 *
 * Return: its size, 0 for an odd mode.
 */
int arch_uretprobe_ret_slot(struct return_instance *ri, struct pt_regs *regs,
			    unsigned long *slot)
{
	*slot = ri->stack;
	return aup_ret_size(regs);
}

/**
 * arch_uretprobe_get_return_addr - read the return address of a call
 * @regs: registers at the probed function's first instruction
 *
 * The return address is 8 bytes in 64-bit code and 4 bytes in 32-bit code.
 *
 * Context: process context, may fault on user memory.
 *
 * Return: the return address, or -1UL if the stack cannot be read or the
 * task's mode is unknown.
 */
unsigned long arch_uretprobe_get_return_addr(struct pt_regs *regs)
{
	u32 addr32;
	u64 addr;

	switch (aup_ret_size(regs)) {
	case 8:
		if (get_user(addr, (u64 __user *)regs->sp))
			return -1UL;
		return addr;
	case 4:
		if (get_user(addr32, (u32 __user *)regs->sp))
			return -1UL;
		return addr32;
	default:
		return -1UL;
	}
}

/**
 * arch_uretprobe_set_return_addr - replace the return address of a call
 * @regs: registers at the probed function's first instruction
 * @addr: the new return address
 *
 * Context: process context, may fault on user memory.
 *
 * Return: 0, or -EFAULT if the stack cannot be written or @addr does not
 * fit the task's mode.
 */
int arch_uretprobe_set_return_addr(struct pt_regs *regs, unsigned long addr)
{
	switch (aup_ret_size(regs)) {
	case 8:
		return put_user((u64)addr, (u64 __user *)regs->sp);
	case 4:
		if (addr > U32_MAX)
			return -EFAULT;
		return put_user((u32)addr, (u32 __user *)regs->sp);
	default:
		return -EFAULT;
	}
}
