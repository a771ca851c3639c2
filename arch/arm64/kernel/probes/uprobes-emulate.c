// SPDX-License-Identifier: GPL-2.0
/*
 * uprobes, arm64: emulation of the instructions that dominate probe sites
 * (function entries and exits: stp/ldp of register pairs, str/ldr with an
 * immediate offset, add/sub of an immediate to sp or x29, mov between
 * registers, nop and bti; in function bodies cmp/adds/subs with an
 * immediate and the move-wide immediates), so that a hit there takes the
 * BRK alone and no single-step.
 *
 * Classification happens once, when a probe is decoded; the hit applies
 * the instruction to the saved user registers and, with page faults
 * disabled by the caller, to user memory. Where that could differ from
 * the CPU's own execution (a misaligned sp, a hardware watchpoint or
 * breakpoint armed for EL0, a fault), the emulation declines before it
 * changes any register and the instruction is stepped out of line. With
 * uprobes.emulate=0 every one of these instructions is stepped, as in
 * 6.1. No lock: the state is the probe's decoded instruction, read-only
 * after registration, and the static key.
 *
 * Design: Documentation/trace/uprobes.rst, "arm64".
 */
#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

#include "uprobes-emulate.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "uprobes."

static DEFINE_STATIC_KEY_TRUE(a64_emulate_on);

static int a64_emulate_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (on)
		static_branch_enable(&a64_emulate_on);
	else
		static_branch_disable(&a64_emulate_on);
	return 0;
}

static int a64_emulate_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%c\n",
		       static_key_enabled(&a64_emulate_on) ? 'Y' : 'N');
}

static const struct kernel_param_ops a64_emulate_ops = {
	.set = a64_emulate_set,
	.get = a64_emulate_get,
};
module_param_cb(emulate, &a64_emulate_ops, NULL, 0644);
MODULE_PARM_DESC(emulate, "Emulate the function-entry instructions uprobes can (0: simulate branches only, step the rest)");

/* Register number 31 is sp as a base or add/sub operand, else xzr. */
#define A64_SP_OR_ZR	31

static unsigned int a64_rt(u32 insn)	{ return insn & 0x1f; }
static unsigned int a64_rd(u32 insn)	{ return insn & 0x1f; }
static unsigned int a64_rn(u32 insn)	{ return (insn >> 5) & 0x1f; }
static unsigned int a64_rt2(u32 insn)	{ return (insn >> 10) & 0x1f; }
static unsigned int a64_rm(u32 insn)	{ return (insn >> 16) & 0x1f; }

/* Unscaled and writeback forms of the single-register load and store. */
#define A64_LDST_IMM9_MASK	0x3fe00000
#define A64_STR_IMM9		0x38000000
#define A64_LDR_IMM9		0x38400000
#define A64_IMM9_IDX(insn)	(((insn) >> 10) & 3)
#define A64_IDX_UNSCALED	0
#define A64_IDX_POST		1
#define A64_IDX_UNPRIV		2
#define A64_IDX_PRE		3

/* The CRm:op2 field of a hint, as enum aarch64_insn_hint_cr_op has it. */
#define A64_HINT_IMM(insn)	((insn) & 0xfe0)

static u64 a64_xn(const struct pt_regs *regs, unsigned int n)
{
	return n == A64_SP_OR_ZR ? 0 : regs->regs[n];
}

static void a64_set_xn(struct pt_regs *regs, unsigned int n, u64 val)
{
	if (n != A64_SP_OR_ZR)
		regs->regs[n] = val;
}

static u64 a64_base(const struct pt_regs *regs, unsigned int n)
{
	return n == A64_SP_OR_ZR ? regs->sp : regs->regs[n];
}

static void a64_set_base(struct pt_regs *regs, unsigned int n, u64 val)
{
	if (n == A64_SP_OR_ZR)
		regs->sp = val;
	else
		regs->regs[n] = val;
}

static s64 a64_sext(u64 val, unsigned int bits)
{
	return (s64)(val << (64 - bits)) >> (64 - bits);
}

/* A hint that does nothing in user mode on this system. */
static bool a64_hint_is_nop(u32 insn)
{
	switch (A64_HINT_IMM(insn)) {
	case AARCH64_INSN_HINT_NOP:
	case AARCH64_INSN_HINT_BTI:
	case AARCH64_INSN_HINT_BTIC:
	case AARCH64_INSN_HINT_BTIJ:
	case AARCH64_INSN_HINT_BTIJC:
		return true;
	case AARCH64_INSN_HINT_PACIASP:
	case AARCH64_INSN_HINT_PACIBSP:
	case AARCH64_INSN_HINT_AUTIASP:
	case AARCH64_INSN_HINT_AUTIBSP:
		/* Without address authentication these are nops too. */
		return !system_supports_address_auth();
	default:
		return false;
	}
}

/* Single-register load/store forms with a 9-bit immediate we take. */
static bool a64_is_ldst_imm9(u32 insn)
{
	u32 op = insn & A64_LDST_IMM9_MASK;

	return (op == A64_STR_IMM9 || op == A64_LDR_IMM9) &&
	       A64_IMM9_IDX(insn) != A64_IDX_UNPRIV;
}

/**
 * a64_uprobe_emulates - is @insn one of the instructions emulated here?
 * @insn: the probed instruction, in CPU order
 *
 * Only instructions that also run correctly out of line are taken, so
 * that a hit can always decline and step instead. Encodings whose result
 * the architecture leaves unpredictable (a loaded base that is written
 * back, a pair loaded into one register) are left to the CPU.
 *
 * Return: true if a64_uprobe_emulate() may carry it out.
 */
bool a64_uprobe_emulates(u32 insn)
{
	bool wback = aarch64_insn_is_stp_pre(insn) ||
		     aarch64_insn_is_stp_post(insn) ||
		     aarch64_insn_is_ldp_pre(insn) ||
		     aarch64_insn_is_ldp_post(insn);
	bool load;

	if (wback || aarch64_insn_is_stp(insn) || aarch64_insn_is_ldp(insn)) {
		load = insn & BIT(22);
		if (load && a64_rt(insn) == a64_rt2(insn))
			return false;
		return !(wback && a64_rn(insn) != A64_SP_OR_ZR &&
			 (a64_rn(insn) == a64_rt(insn) ||
			  a64_rn(insn) == a64_rt2(insn)));
	}
	if (a64_is_ldst_imm9(insn)) {
		wback = A64_IMM9_IDX(insn) != A64_IDX_UNSCALED;
		return !(wback && a64_rn(insn) != A64_SP_OR_ZR &&
			 a64_rn(insn) == a64_rt(insn));
	}
	if (aarch64_insn_is_str_imm(insn) || aarch64_insn_is_ldr_imm(insn))
		return true;
	/* add/sub (immediate), adds/subs too; bit 23 set is addg/subg */
	if (aarch64_insn_is_add_imm(insn) || aarch64_insn_is_sub_imm(insn) ||
	    aarch64_insn_is_adds_imm(insn) || aarch64_insn_is_subs_imm(insn))
		return !(insn & BIT(23));
	/* movz, movn, movk: a 32-bit one shifts by 0 or 16 only */
	if (aarch64_insn_is_movz(insn) || aarch64_insn_is_movn(insn) ||
	    aarch64_insn_is_movk(insn))
		return (insn & BIT(31)) || !(insn & BIT(22));
	if (aarch64_insn_is_mov_reg(insn))
		return true;
	if (aarch64_insn_is_hint(insn))
		return a64_hint_is_nop(insn);
	return false;
}

/*
 * Could the CPU's own access differ from the kernel's? An EL0 watchpoint
 * or breakpoint makes the debug exceptions' MDE bit set on this CPU: a
 * hardware watchpoint must see the access in user mode. With sp as the
 * base, a misaligned sp faults (SCTLR_EL1.SA0).
 */
static bool a64_mem_differs(const struct pt_regs *regs, unsigned int rn)
{
	if (rn == A64_SP_OR_ZR && (regs->sp & 15))
		return true;
	return read_sysreg(mdscr_el1) & DBG_MDSCR_MDE;
}

static bool a64_get(u64 addr, unsigned int size, u64 *val)
{
	void __user *p = (void __user *)addr;

	switch (size) {
	case 1: {
		u8 v;

		if (get_user(v, (u8 __user *)p))
			return false;
		*val = v;
		return true;
	}
	case 2: {
		u16 v;

		if (get_user(v, (u16 __user *)p))
			return false;
		*val = v;
		return true;
	}
	case 4: {
		u32 v;

		if (get_user(v, (u32 __user *)p))
			return false;
		*val = v;
		return true;
	}
	default:
		return !get_user(*val, (u64 __user *)p);
	}
}

static bool a64_put(u64 addr, unsigned int size, u64 val)
{
	void __user *p = (void __user *)addr;

	switch (size) {
	case 1:
		return !put_user((u8)val, (u8 __user *)p);
	case 2:
		return !put_user((u16)val, (u16 __user *)p);
	case 4:
		return !put_user((u32)val, (u32 __user *)p);
	default:
		return !put_user(val, (u64 __user *)p);
	}
}

/* stp/ldp of two w or two x registers: offset, pre- or post-index. */
static bool a64_pair(u32 insn, struct pt_regs *regs)
{
	unsigned int rn = a64_rn(insn), size = insn & BIT(31) ? 8 : 4;
	u64 base = a64_base(regs, rn), addr, v1, v2;
	bool post = aarch64_insn_is_stp_post(insn) ||
		    aarch64_insn_is_ldp_post(insn);
	bool wback = post || aarch64_insn_is_stp_pre(insn) ||
		     aarch64_insn_is_ldp_pre(insn);
	s64 off = a64_sext((insn >> 15) & 0x7f, 7) * size;

	if (a64_mem_differs(regs, rn))
		return false;
	addr = post ? base : base + off;
	if (insn & BIT(22)) {
		if (!a64_get(addr, size, &v1) || !a64_get(addr + size, size, &v2))
			return false;
		a64_set_xn(regs, a64_rt(insn), v1);
		a64_set_xn(regs, a64_rt2(insn), v2);
	} else {
		if (!a64_put(addr, size, a64_xn(regs, a64_rt(insn))) ||
		    !a64_put(addr + size, size, a64_xn(regs, a64_rt2(insn))))
			return false;
	}
	if (wback)
		a64_set_base(regs, rn, base + off);
	return true;
}

/* str/ldr (zero-extending) of one register, any size. */
static bool a64_single(u32 insn, struct pt_regs *regs)
{
	unsigned int rn = a64_rn(insn), size = 1U << (insn >> 30);
	u64 base = a64_base(regs, rn), addr, val;
	bool wback = false, post = false, load;
	s64 off;

	if (a64_is_ldst_imm9(insn)) {
		off = a64_sext((insn >> 12) & 0x1ff, 9);
		post = A64_IMM9_IDX(insn) == A64_IDX_POST;
		wback = A64_IMM9_IDX(insn) != A64_IDX_UNSCALED;
		load = (insn & A64_LDST_IMM9_MASK) == A64_LDR_IMM9;
	} else {
		off = ((insn >> 10) & 0xfff) * size;
		load = aarch64_insn_is_ldr_imm(insn);
	}
	if (a64_mem_differs(regs, rn))
		return false;
	addr = post ? base : base + off;
	if (load) {
		if (!a64_get(addr, size, &val))
			return false;
		a64_set_xn(regs, a64_rt(insn), val);
	} else if (!a64_put(addr, size, a64_xn(regs, a64_rt(insn)))) {
		return false;
	}
	if (wback)
		a64_set_base(regs, rn, base + off);
	return true;
}

/*
 * add/sub of a 12-bit immediate, optionally shifted by 12, to sp or a
 * register; adds/subs (cmn/cmp with the zero register as result) also set
 * NZCV, from the addition of the first operand, the immediate or its
 * complement, and the carry in (1 for a subtraction).
 */
static void a64_add_sub_imm(u32 insn, struct pt_regs *regs)
{
	bool is64 = insn & BIT(31), sub = insn & BIT(30), flags = insn & BIT(29);
	unsigned int bits = is64 ? 64 : 32;
	u64 mask = is64 ? ~0ULL : 0xffffffffULL;
	u64 a, b, res, nzcv = 0;

	b = (insn >> 10) & 0xfff;
	if (insn & BIT(22))
		b <<= 12;
	a = a64_base(regs, a64_rn(insn)) & mask;
	if (sub)
		b = ~b & mask;
	res = (a + b + sub) & mask;
	if (!flags) {
		a64_set_base(regs, a64_rd(insn), res);
		return;
	}
	if (res >> (bits - 1))
		nzcv |= PSR_N_BIT;
	if (!res)
		nzcv |= PSR_Z_BIT;
	/* carry out: the sum wrapped, or equalled a with the carry in */
	if (res < a || (sub && res == a))
		nzcv |= PSR_C_BIT;
	/* overflow: both operands of one sign, the result of the other */
	if (((a ^ res) & (b ^ res)) >> (bits - 1) & 1)
		nzcv |= PSR_V_BIT;
	regs->pstate = (regs->pstate & ~(u64)(PSR_N_BIT | PSR_Z_BIT |
					      PSR_C_BIT | PSR_V_BIT)) | nzcv;
	a64_set_xn(regs, a64_rd(insn), res);
}

/* movz, movn, movk: a 16-bit immediate at a multiple of 16 bits. */
static void a64_mov_wide(u32 insn, struct pt_regs *regs)
{
	unsigned int shift = ((insn >> 21) & 3) * 16;
	u64 imm = (u64)((insn >> 5) & 0xffff) << shift;
	u64 val;

	if (aarch64_insn_is_movk(insn))
		val = (a64_xn(regs, a64_rd(insn)) & ~(0xffffULL << shift)) | imm;
	else if (aarch64_insn_is_movn(insn))
		val = ~imm;
	else
		val = imm;
	if (!(insn & BIT(31)))
		val = (u32)val;
	a64_set_xn(regs, a64_rd(insn), val);
}

/**
 * a64_uprobe_emulate - carry out an instruction a64_uprobe_emulates() took
 * @insn: the probed instruction, in CPU order
 * @regs: the user registers, the pc at the probed instruction
 *
 * Called with page faults disabled, or where a fault may sleep.
 *
 * Return: true if done (registers and memory as after the instruction,
 * pc past it); false if nothing changed and the instruction must run
 * out of line.
 */
bool a64_uprobe_emulate(u32 insn, struct pt_regs *regs)
{
	u64 val;

	if (!static_branch_likely(&a64_emulate_on))
		return false;
	if (aarch64_insn_is_hint(insn)) {
		/* nothing to do */
	} else if (aarch64_insn_is_add_imm(insn) ||
		   aarch64_insn_is_sub_imm(insn) ||
		   aarch64_insn_is_adds_imm(insn) ||
		   aarch64_insn_is_subs_imm(insn)) {
		a64_add_sub_imm(insn, regs);
	} else if (aarch64_insn_is_movz(insn) || aarch64_insn_is_movn(insn) ||
		   aarch64_insn_is_movk(insn)) {
		a64_mov_wide(insn, regs);
	} else if (aarch64_insn_is_mov_reg(insn)) {
		val = a64_xn(regs, a64_rm(insn));
		if (!(insn & BIT(31)))
			val = (u32)val;
		a64_set_xn(regs, a64_rd(insn), val);
	} else if (aarch64_insn_is_ldr_imm(insn) ||
		   aarch64_insn_is_str_imm(insn) || a64_is_ldst_imm9(insn)) {
		if (!a64_single(insn, regs))
			return false;
	} else if (!a64_pair(insn, regs)) {
		return false;
	}
	/* Any instruction but a branch leaves PSTATE.BTYPE zero. */
	regs->pstate &= ~PSR_BTYPE_MASK;
	instruction_pointer_set(regs, instruction_pointer(regs) + 4);
	return true;
}
