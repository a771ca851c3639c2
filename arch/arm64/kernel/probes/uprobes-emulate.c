// SPDX-License-Identifier: GPL-2.0
/*
 * uprobes, arm64: emulation of the instructions that dominate probe sites
 * (function entries and exits: stp/ldp of register pairs, str/ldr with an
 * immediate offset, add/sub of an immediate to sp or x29, mov between
 * registers, nop and bti; in function bodies the register-only arithmetic,
 * logic, bitfield moves, multiply-adds and conditional selects, the
 * move-wide immediates and ldr/str with a register offset), so that a hit
 * there takes the BRK alone and no single-step.
 *
 * Classification happens once, when a probe is decoded; the hit applies
 * the instruction to the saved user registers and, with page faults
 * disabled by the caller, to user memory. Where that could differ from
 * the CPU's own execution (a misaligned sp, a hardware watchpoint or
 * breakpoint armed for EL0, a fault), the emulation declines before it
 * changes any register and the instruction is stepped out of line. With
 * uprobes.emulate=0 every one of these instructions is stepped, as in
 * 6.1. A literal load (ldr, ldrsw, prfm from a pc-relative address),
 * which cannot run from a slot as it is, is emulated too, and its copy in
 * the slot loads through its destination register instead, set to the
 * literal's address before the step (a64_uprobe_slot_insn(),
 * a64_uprobe_pre_xol()). No lock: the state is the probe's decoded
 * instruction, read-only after registration, and the static key.
 *
 * Design: Documentation/trace/uprobes.rst, "The arm64 implementation".
 */
#include <linux/compiler.h>
#include <linux/cpufeature.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

#include "uprobes-emulate.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "uprobes."

static DEFINE_STATIC_KEY_TRUE(a64_emulate_on);
module_param_cb(emulate, &uprobe_static_key_param_ops, &a64_emulate_on.key,
		0644);
MODULE_PARM_DESC(emulate, "Emulate every instruction class uprobes can (0: simulate branches and adr only, step the rest)");

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

/*
 * Register-only data processing: add/sub and the logical operations with
 * a shifted register (cmp, tst, neg, mvn, mov are aliases), the bitfield
 * moves (lsl, lsr, asr, ubfx, sbfx, sxtw, uxtb ... are aliases), madd and
 * msub (mul, mneg) and the conditional selects (cset, cinc ...).
 */
#define A64_ADDSUB_SREG_MASK	0x1f200000
#define A64_ADDSUB_SREG		0x0b000000
#define A64_LOGIC_SREG_MASK	0x1f000000
#define A64_LOGIC_SREG		0x0a000000
#define A64_BITFIELD_MASK	0x1f800000
#define A64_BITFIELD		0x13000000
#define A64_MADD_MASK		0x7fe00000
#define A64_MADD		0x1b000000
#define A64_CSEL_MASK		0x3fe00800
#define A64_CSEL		0x1a800000
/* ldr w, ldr x, ldrsw, prfm (literal): opc in bits 31:30, V = 0 */
#define A64_LDR_LIT_MASK	0x3f000000
#define A64_LDR_LIT		0x18000000
#define A64_LIT_OPC(insn)	((insn) >> 30)
#define A64_LIT_PRFM		3
/* ldr/str (register offset), V = 0 */
#define A64_LDST_REGOFF_MASK	0x3f200c00
#define A64_LDST_REGOFF		0x38200800

static bool a64_is_alu_reg(u32 insn)
{
	return (insn & A64_ADDSUB_SREG_MASK) == A64_ADDSUB_SREG ||
	       (insn & A64_LOGIC_SREG_MASK) == A64_LOGIC_SREG ||
	       (insn & A64_BITFIELD_MASK) == A64_BITFIELD ||
	       (insn & A64_MADD_MASK) == A64_MADD ||
	       (insn & A64_CSEL_MASK) == A64_CSEL;
}

/* Reserved and unallocated encodings of a64_is_alu_reg()'s classes. */
static bool a64_alu_reg_ok(u32 insn)
{
	bool is64 = insn & BIT(31);
	unsigned int imm6 = (insn >> 10) & 0x3f;

	if ((insn & A64_ADDSUB_SREG_MASK) == A64_ADDSUB_SREG)
		return ((insn >> 22) & 3) != 3 && (is64 || imm6 < 32);
	if ((insn & A64_LOGIC_SREG_MASK) == A64_LOGIC_SREG)
		return is64 || imm6 < 32;
	if ((insn & A64_BITFIELD_MASK) == A64_BITFIELD)
		/* opc 11 unallocated; N equals sf; 32-bit fields below 32 */
		return ((insn >> 29) & 3) != 3 && !!(insn & BIT(22)) == is64 &&
		       (is64 || !(insn & (BIT(21) | BIT(15))));
	if ((insn & A64_CSEL_MASK) == A64_CSEL)
		return !(insn & BIT(29));	/* S set: unallocated */
	return true;
}

static bool a64_is_ldst_regoff(u32 insn)
{
	u32 opc = (insn >> 22) & 3;

	return (insn & A64_LDST_REGOFF_MASK) == A64_LDST_REGOFF && opc < 2;
}

/* The extend options of a register offset: uxtw, lsl, sxtw, sxtx. */
static bool a64_regoff_ok(u32 insn)
{
	return (insn >> 13) & 2;
}

static bool a64_is_ldr_lit(u32 insn)
{
	return (insn & A64_LDR_LIT_MASK) == A64_LDR_LIT;
}

/* The address a literal load at @pc reads. */
static u64 a64_lit_addr(u32 insn, u64 pc)
{
	return pc + a64_sext((insn >> 5) & 0x7ffff, 19) * 4;
}

/* @val shifted as a shifted-register operand says: lsl, lsr, asr, ror. */
static u64 a64_shift(u64 val, unsigned int type, unsigned int amount,
		     unsigned int bits)
{
	if (!amount)
		return val;
	switch (type) {
	case 0:
		return val << amount;
	case 1:
		return val >> amount;
	case 2:
		return (u64)(a64_sext(val, bits) >> amount);
	default:
		return val >> amount | val << (bits - amount);
	}
}

static u64 a64_ones(unsigned int n)
{
	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

static void a64_set_nzcv(struct pt_regs *regs, u64 nzcv)
{
	regs->pstate = (regs->pstate & ~(u64)(PSR_N_BIT | PSR_Z_BIT |
					      PSR_C_BIT | PSR_V_BIT)) | nzcv;
}

/* NZCV of AddWithCarry(@a, @b, @cin) = @res, all of @bits bits. */
static u64 a64_add_flags(u64 a, u64 b, bool cin, u64 res, unsigned int bits)
{
	u64 nzcv = 0;

	if (res >> (bits - 1))
		nzcv |= PSR_N_BIT;
	if (!res)
		nzcv |= PSR_Z_BIT;
	/* carry out: the sum wrapped, or equalled a with the carry in */
	if (res < a || (cin && res == a))
		nzcv |= PSR_C_BIT;
	/* overflow: both operands of one sign, the result of the other */
	if (((a ^ res) & (b ^ res)) >> (bits - 1) & 1)
		nzcv |= PSR_V_BIT;
	return nzcv;
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
	if (a64_is_alu_reg(insn))
		return a64_alu_reg_ok(insn);
	if (a64_is_ldst_regoff(insn))
		return a64_regoff_ok(insn);
	if (aarch64_insn_is_hint(insn))
		return a64_hint_is_nop(insn);
	/* xzr: no copy can load through it (a64_uprobe_slot_insn()) */
	if (a64_is_ldr_lit(insn))
		return A64_LIT_OPC(insn) == A64_LIT_PRFM ||
		       a64_rt(insn) != A64_SP_OR_ZR;
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
	u64 a, b, res;

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
	a64_set_nzcv(regs, a64_add_flags(a, b, sub, res, bits));
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

/* A register-only instruction of a64_is_alu_reg(); 31 is the zero register. */
static void a64_alu_reg(u32 insn, struct pt_regs *regs)
{
	bool is64 = insn & BIT(31);
	unsigned int bits = is64 ? 64 : 32, rd = a64_rd(insn);
	u64 mask = a64_ones(bits), n = a64_xn(regs, a64_rn(insn)) & mask;
	u64 m = a64_xn(regs, a64_rm(insn)) & mask, res;
	unsigned int imm6 = (insn >> 10) & 0x3f, opc = (insn >> 29) & 3;

	if ((insn & A64_ADDSUB_SREG_MASK) == A64_ADDSUB_SREG) {
		bool sub = insn & BIT(30);

		m = a64_shift(m, (insn >> 22) & 3, imm6, bits) & mask;
		if (sub)
			m = ~m & mask;
		res = (n + m + sub) & mask;
		if (insn & BIT(29))
			a64_set_nzcv(regs, a64_add_flags(n, m, sub, res, bits));
	} else if ((insn & A64_LOGIC_SREG_MASK) == A64_LOGIC_SREG) {
		m = a64_shift(m, (insn >> 22) & 3, imm6, bits) & mask;
		if (insn & BIT(21))
			m = ~m & mask;
		res = opc == 1 ? n | m : opc == 2 ? n ^ m : n & m;
		if (opc == 3)	/* ands: N and Z, C and V clear */
			a64_set_nzcv(regs, (res >> (bits - 1) ? PSR_N_BIT : 0) |
					   (res ? 0 : PSR_Z_BIT));
	} else if ((insn & A64_BITFIELD_MASK) == A64_BITFIELD) {
		unsigned int r = (insn >> 16) & 0x3f, s = (insn >> 10) & 0x3f;
		unsigned int width, dst;
		u64 field;

		/* bits s..r of Rn to the bottom, or bits s..0 to bits - r */
		width = s >= r ? s - r + 1 : s + 1;
		dst = s >= r ? 0 : bits - r;
		field = (n >> (s >= r ? r : 0)) & a64_ones(width);
		if (opc == 0)		/* sbfm: sign bits above */
			res = (u64)a64_sext(field, width) << dst;
		else if (opc == 1)	/* bfm: the other bits of Rd kept */
			res = (a64_xn(regs, rd) & ~(a64_ones(width) << dst)) |
			      field << dst;
		else			/* ubfm */
			res = field << dst;
		res &= mask;
	} else if ((insn & A64_MADD_MASK) == A64_MADD) {
		u64 a = a64_xn(regs, (insn >> 10) & 0x1f);

		res = insn & BIT(15) ? a - n * m : a + n * m;
		res &= mask;
	} else {
		/* csel, csinc, csinv, csneg: the condition is A32's encoding */
		pstate_check_t *cond = aarch32_opcode_cond_checks[(insn >> 12) & 0xf];

		if (cond(regs->pstate))
			res = n;
		else if (insn & BIT(30))
			res = insn & BIT(10) ? -m : ~m;
		else
			res = insn & BIT(10) ? m + 1 : m;
		res &= mask;
	}
	a64_set_xn(regs, rd, res);
}

/* ldr/str with a register offset, extended and optionally scaled. */
static bool a64_regoff(u32 insn, struct pt_regs *regs)
{
	unsigned int rn = a64_rn(insn), size = 1U << (insn >> 30);
	unsigned int option = (insn >> 13) & 7;
	u64 off = a64_xn(regs, a64_rm(insn)), addr, val;

	if (!(option & 1))	/* uxtw, sxtw: the low word */
		off = option & 4 ? (u64)a64_sext(off, 32) : (u32)off;
	if (insn & BIT(12))
		off <<= insn >> 30;
	if (a64_mem_differs(regs, rn))
		return false;
	addr = a64_base(regs, rn) + off;
	if (insn & BIT(22)) {
		if (!a64_get(addr, size, &val))
			return false;
		a64_set_xn(regs, a64_rt(insn), val);
		return true;
	}
	return a64_put(addr, size, a64_xn(regs, a64_rt(insn)));
}

/* ldr w, ldr x, ldrsw from a pc-relative literal; prfm does nothing. */
static bool a64_ldr_lit(u32 insn, struct pt_regs *regs)
{
	u64 addr = a64_lit_addr(insn, instruction_pointer(regs)), val;
	unsigned int opc = A64_LIT_OPC(insn);

	if (opc == A64_LIT_PRFM)
		return true;
	if (a64_mem_differs(regs, 0) ||
	    !a64_get(addr, opc == 1 ? 8 : 4, &val))
		return false;
	a64_set_xn(regs, a64_rt(insn), opc == 2 ? (u64)a64_sext(val, 32) : val);
	return true;
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
	} else if (a64_is_alu_reg(insn)) {
		a64_alu_reg(insn, regs);
	} else if (a64_is_ldst_regoff(insn)) {
		if (!a64_regoff(insn, regs))
			return false;
	} else if (a64_is_ldr_lit(insn)) {
		if (!a64_ldr_lit(insn, regs))
			return false;
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

/*
 * The encodings of ldr w, ldr x and ldrsw with Rt as base and offset 0,
 * by the literal load's opc; prfm's copy is a nop.
 */
static const u32 a64_lit_from_reg[] = {
	0xb9400000, 0xf9400000, 0xb9800000, 0xd503201f,
};

/**
 * a64_uprobe_slot_insn - the copy of a probed instruction that runs out of line
 * @insn: the probed instruction, in CPU order
 *
 * The instruction itself, but for a literal load, which reads relative to
 * the pc and so cannot run elsewhere: its copy loads from the address in
 * its own destination register instead, which a64_uprobe_pre_xol() sets
 * to the literal's address before the step.
 *
 * Return: the copy, in CPU order.
 */
u32 a64_uprobe_slot_insn(u32 insn)
{
	if (a64_is_ldr_lit(insn)) {
		u32 rt = a64_rt(insn);

		insn = a64_lit_from_reg[A64_LIT_OPC(insn)];
		if (!aarch64_insn_is_hint(insn))
			insn |= rt << 5 | rt;
	}
	return insn;
}

/**
 * a64_uprobe_pre_xol - registers a copy needs before its step
 * @insn: the probed instruction, in CPU order
 * @regs: the user registers
 * @vaddr: the probed address
 *
 * A literal load's copy (see a64_uprobe_slot_insn()) finds the literal's
 * address in its destination register, which the load then overwrites.
 */
void a64_uprobe_pre_xol(u32 insn, struct pt_regs *regs, unsigned long vaddr)
{
	if (a64_is_ldr_lit(insn) && A64_LIT_OPC(insn) != A64_LIT_PRFM)
		regs->regs[a64_rt(insn)] = a64_lit_addr(insn, vaddr);
}
