// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes, x86: the analysis of a probed instruction, once per CPU mode,
 * with the kernel's instruction decoder, into the plans the hit path runs:
 * emulated, stepped out of line (with the fix-ups the step needs) or
 * boosted, or refused with the reason.
 *
 * Design: Documentation/trace/uprobes.rst, "The x86 implementation".
 */
#include "internal.h"

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
 * @names_sp: register 4 (rsp, or xmm4: not told apart) is an operand in
 *	ModRM.reg or VEX.vvvv (set for RIP-relative forms by aup_riprel())
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
	bool names_sp;
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

/* Instructions we never run (listed in Documentation/trace/uprobes.rst). */
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
			goto nopl;
		if (op == 0x1e && d->rep && !d->opsz && !d->repne &&
		    !d->rex && (d->modrm == 0xfa || d->modrm == 0xfb))
			goto nopl;				/* endbr */
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
	case 0xff:				/* indirect jmp and call */
		if (aup_modreg(d) != 2 && aup_modreg(d) != 4)
			return 0;
		/* bnd (f2) and notrack (3e) only */
		if (d->opsz || d->adsz || d->rep || d->fsgs ||
		    (d->seg && d->seg != 0x3e))
			return 0;
		if (!p->ia32 && d->modrm == (aup_modreg(d) << 3 | 5)) {
			/* jmp/call *disp32(%rip) */
			p->rel = d->insn.displacement.value;
			p->emul = aup_modreg(d) == 2 ? AUP_EM_CALL_MEM :
							AUP_EM_JMP_MEM;
			break;
		}
		/*
		 * jmp *reg and jmp *mem are boosted; call *reg and call *mem
		 * are emulated in 64-bit code only (a 32-bit target's limit
		 * checks are the CPU's).
		 */
		if (aup_modreg(d) != 2 || p->ia32)
			return 0;
		if (aup_mod(d) == 3) {			/* call *reg */
			p->src = X86_MODRM_RM(d->modrm) | b;
			p->emul = AUP_EM_CALL_REG;
		} else {				/* call *mem */
			aup_lea(p, d);
			p->emul = AUP_EM_CALL_IND;
		}
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
nopl:
	p->exec = AUP_EMULATE;
	p->emul = AUP_EM_NOPL;
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
 * [scratch + disp32]: the first of rsi, rdi, rbx that the instruction does
 * not name (why one is always free: Documentation/trace/uprobes.rst).
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
	/* rsp (or xmm4, told apart by no one here) as an operand */
	d->names_sp = used & BIT(AUP_REG_SP);
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
	/* The operand is at next + rel (emulations that use rel agree). */
	p->rel = insn->displacement.value;
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

/*
 * How the copy can run without TF (arch_uprobe_plan.boostable): it needs
 * nothing from the kernel after it ran (AUP_BOOST_PLAIN), or only its
 * scratch register back, which the slot restores from below the red zone
 * before its jump back (AUP_BOOST_SCRATCH): a straight-line RIP-relative
 * form that leaves the stack pointer alone (no push or pop of memory, no
 * rsp operand). Emulated classes are judged by their copy too: it runs
 * when a hit does not emulate.
 */
static u8 aup_boostable(const struct arch_uprobe_plan *p,
			const struct aup_decoded *d)
{
	if (!(p->fixups & ~(AUP_FIX_IP | AUP_FIX_BRANCH)))
		return AUP_BOOST_PLAIN;
	if (p->fixups != (AUP_FIX_IP | AUP_FIX_SCRATCH) || d->names_sp ||
	    (aup_is(d, 0, 0xff) && aup_modreg(d) == 6) ||	/* push m */
	    aup_is(d, 0, 0x8f))					/* pop m */
		return 0;
	return AUP_BOOST_SCRATCH;
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
	p->boostable = aup_boostable(p, &d);
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
 * its error; a hit in that mode then gets no slot, and the core takes the
 * probe out of that process.
 *
 * Context: process context; once per probe, before it can be hit (a plan
 * is read locklessly by every hit, so it is never rewritten afterwards).
 *
 * Return: 0 if the instruction can run in the mode of @mm, or with no @mm
 * in either mode; else the error of @mm's mode (of 64-bit mode without
 * @mm): -EINVAL if the bytes do not decode, -ENOTSUPP if the instruction
 * cannot be probed (listed in Documentation/trace/uprobes.rst).
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
