// SPDX-License-Identifier: GPL-2.0+
/*
 * User-space test of arch/x86/kernel/uprobes.c, which is
 * included unchanged on top of the shims in shim/.
 *
 *   aup_test			table of encodings: class, length, fix-ups,
 *				rewritten copy; emulation and step/fix-up unit
 *				tests on synthetic registers (TF, pushf,
 *				block-step, notifiers)
 *   aup_test objdump < dump	decode every instruction boundary of an
 *				"objdump -d --insn-width=16" listing: length
 *				agreement with objdump, and class counts
 *   aup_test fuzz N < dump	differential test on the host CPU: every
 *				distinct probeable instruction of the listing
 *				(N random register/memory states each) runs
 *				natively at its address, and through our
 *				emulation and through our out-of-line step (a
 *				copy in a slot elsewhere, pre_xol, a real TF
 *				step, post_xol or abort_xol); the registers,
 *				flags, xmm registers, memory and faults must
 *				be the same.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "../../../arch/x86/kernel/uprobes.c"

/* ---------------------------------------------------------- shim state */

static struct uprobe_task test_utask;
static struct task_struct test_task = { .utask = &test_utask };
struct task_struct *aup_test_current = &test_task;
struct cpuinfo_x86 boot_cpu_data = { .x86_virt_bits = 48 };

static int nr_sigtrap, nr_blockstep_on, nr_blockstep_off;
static unsigned long sigtrap_ip;
static int nr_int3_hit, nr_sstep_done;
static bool int3_hit_ret, sstep_done_ret;
static unsigned long sstep_done_ip;
static struct notifier_block *die_nb;

void set_task_blockstep(struct task_struct *t, bool on)
{
	if (on) {
		t->tif |= BIT(TIF_BLOCKSTEP);
		nr_blockstep_on++;
	} else {
		t->tif &= ~BIT(TIF_BLOCKSTEP);
		nr_blockstep_off++;
	}
}

static int sigtrap_code, nr_force_sig, force_sig_nr;

void send_sigtrap(struct pt_regs *regs, int error_code, int si_code)
{
	current->thread.trap_nr = X86_TRAP_DB;
	nr_sigtrap++;
	sigtrap_ip = regs->ip;
	sigtrap_code = si_code;
}

void force_sig(int sig)
{
	nr_force_sig++;
	force_sig_nr = sig;
}

int register_die_notifier(struct notifier_block *nb)
{
	die_nb = nb;
	return 0;
}

bool uprobe_int3_hit(struct pt_regs *regs)
{
	nr_int3_hit++;
	return int3_hit_ret;
}

bool uprobe_sstep_done(struct pt_regs *regs)
{
	nr_sstep_done++;
	sstep_done_ip = regs->ip;
	if (sstep_done_ret)
		test_utask.state = UTASK_SSTEP_DONE;
	return sstep_done_ret;
}

/* "User memory": one window of real memory; anything else faults. */
static unsigned long umem_lo, umem_hi;

int aup_test_put(void *addr, u64 val, unsigned int size)
{
	unsigned long a = (unsigned long)addr;

	if (a < umem_lo || a + size > umem_hi)
		return -EFAULT;
	memcpy(addr, &val, size);
	return 0;
}

int aup_test_get(const void *addr, u64 *val, unsigned int size)
{
	unsigned long a = (unsigned long)addr;

	if (a < umem_lo || a + size > umem_hi)
		return -EFAULT;
	*val = 0;
	memcpy(val, addr, size);
	return 0;
}

/* ------------------------------------------------------------ helpers */

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			failures++;					\
			printf("FAIL %s:%d: %s: ", __func__, __LINE__, #cond);\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

static int parse_hex(const char *s, u8 *buf, int max)
{
	int n = 0;
	unsigned int b;

	while (*s) {
		if (*s == ' ') {
			s++;
			continue;
		}
		if (n == max || sscanf(s, "%2x", &b) != 1)
			return -1;
		buf[n++] = b;
		s += 2;
	}
	return n;
}

static void fmt_hex(char *out, const u8 *b, int n)
{
	int i;

	out[0] = 0;
	for (i = 0; i < n; i++)
		sprintf(out + 3 * i, "%02x ", b[i]);
}

/* Analyse for the mode of an mm (64-bit or compat); its verdict. */
static int analyze_bytes(struct arch_uprobe *au, const u8 *b, int n, bool ia32)
{
	struct mm_struct mm = { .ia32 = ia32 };

	memset(au, 0, sizeof(*au));
	memcpy(au->insn, b, n);
	return arch_uprobe_analyze_insn(au, &mm, 0);
}

/* The plan of one mode. */
static struct arch_uprobe_plan *PL(struct arch_uprobe *au, bool ia32)
{
	return &au->plan[ia32 ? AUP_MODE_32 : AUP_MODE_64];
}

/* Size of the displacement of a relative branch: its last bytes. */
static int rel_bytes(const struct arch_uprobe_plan *p)
{
	struct insn insn;

	insn_decode(&insn, p->xol, MAX_UINSN_BYTES, p->ia32 ? INSN_MODE_32 : INSN_MODE_64);
	return insn.immediate.nbytes;
}

/* ------------------------------------------------------- table of cases */

#define ANY	-1
#define NOXOL	NULL

struct tcase {
	bool ia32;
	const char *hex;
	int ret;
	int exec;	/* AUP_EMULATE / AUP_STEP, or ANY */
	int emul;
	int fixups;
	int scratch;	/* for AUP_FIX_SCRATCH */
	const char *xol;
};

#define EM(h, e, f)	{ false, h, 0, AUP_EMULATE, e, f, ANY, NOXOL }
#define ST(h, f)	{ false, h, 0, AUP_STEP, AUP_EM_NONE, f, ANY, NOXOL }
#define NO(h)		{ false, h, -ENOTSUPP, ANY, ANY, ANY, ANY, NOXOL }
#define RIPE(h, e, f, s, x) { false, h, 0, AUP_EMULATE, e, (f) | AUP_FIX_SCRATCH, s, x }
#define RIPS(h, f, s, x)    { false, h, 0, AUP_STEP, AUP_EM_NONE, (f) | AUP_FIX_SCRATCH, s, x }
#define EM32(h, e, f)	{ true, h, 0, AUP_EMULATE, e, f, ANY, NOXOL }
#define ST32(h, f)	{ true, h, 0, AUP_STEP, AUP_EM_NONE, f, ANY, NOXOL }
#define NO32(h)		{ true, h, -ENOTSUPP, ANY, ANY, ANY, ANY, NOXOL }

#define IP	AUP_FIX_IP
#define BR	(AUP_FIX_RELBR | AUP_FIX_BRANCH)
#define BR32	BR

static const struct tcase cases[] = {
	/* nops */
	EM("90", AUP_EM_NOP, IP),
	ST("41 90", IP),				/* xchg %eax, %r8d */
	EM("48 90", AUP_EM_NOP, IP),
	EM("f3 90", AUP_EM_NOP, IP),			/* pause */
	EM("66 90", AUP_EM_NOP, IP),
	EM("0f 1f 00", AUP_EM_NOP, IP),
	EM("0f 1f 40 00", AUP_EM_NOP, IP),
	EM("0f 1f 44 00 00", AUP_EM_NOP, IP),
	EM("66 0f 1f 44 00 00", AUP_EM_NOP, IP),
	EM("0f 1f 80 00 00 00 00", AUP_EM_NOP, IP),
	EM("66 2e 0f 1f 84 00 00 00 00 00", AUP_EM_NOP, IP),
	EM("66 66 2e 0f 1f 84 00 00 00 00 00", AUP_EM_NOP, IP),
	RIPE("0f 1f 05 00 00 00 00", AUP_EM_NOP, IP, 6, "0f 1f 86 00 00 00 00"),
	EM("f3 0f 1e fa", AUP_EM_NOP, IP),		/* endbr64 */
	EM("f3 0f 1e fb", AUP_EM_NOP, IP),		/* endbr32 */
	ST("f3 48 0f 1e c8", IP),			/* rdsspq %rax */
	ST("0f 1e fa", IP),				/* hint nop /7 */
	/* push, mov, lea */
	EM("55", AUP_EM_PUSH, IP),
	EM("41 57", AUP_EM_PUSH, IP),
	EM("48 50", AUP_EM_PUSH, IP),
	ST("66 50", IP),
	ST("8f c0", IP),				/* pop %rax (8f /0) */
	EM("6a ff", AUP_EM_PUSH_IMM, IP),
	EM("68 78 56 34 12", AUP_EM_PUSH_IMM, IP),
	EM("9c", AUP_EM_PUSHF, IP | AUP_FIX_PUSHF),
	ST("66 9c", IP | AUP_FIX_PUSHF),
	NO("9d"),					/* popf */
	EM("48 89 e5", AUP_EM_MOV, IP),
	EM("89 c8", AUP_EM_MOV, IP),
	EM("4c 8b c1", AUP_EM_MOV, IP),
	ST("66 89 c8", IP),
	ST("88 c8", IP),
	ST("48 89 07", IP),				/* mov %rax, (%rdi) */
	RIPE("48 8d 05 10 00 00 00", AUP_EM_LEA, IP, 6, "48 8d 86 10 00 00 00"),
	RIPE("48 8d 35 10 00 00 00", AUP_EM_LEA, IP, 7, "48 8d b7 10 00 00 00"),
	EM("48 8d 04 8b", AUP_EM_LEA, IP),
	EM("4a 8d 04 25 00 10 00 00", AUP_EM_LEA, IP),
	EM("8d 47 01", AUP_EM_LEA, IP),
	EM("4d 8d 64 24 f8", AUP_EM_LEA, IP),		/* lea -8(%r12), %r12 */
	ST("8d c0", IP),				/* lea, mod=3: #UD */
	ST("67 48 8d 00", IP),
	/* relative branches */
	EM("eb 05", AUP_EM_JMP, BR),
	EM("e9 00 01 00 00", AUP_EM_JMP, BR32),
	EM("e8 fb ff ff ff", AUP_EM_CALL, BR32 | AUP_FIX_CALL),
	EM("74 02", AUP_EM_JCC, BR),
	EM("0f 85 10 00 00 00", AUP_EM_JCC, BR32),
	EM("3e 74 02", AUP_EM_JCC, BR),
	EM("2e 0f 84 00 00 00 00", AUP_EM_JCC, BR32),
	EM("f2 e9 00 00 00 00", AUP_EM_JMP, BR32),
	EM("f2 e8 00 00 00 00", AUP_EM_CALL, BR32 | AUP_FIX_CALL),
	EM("48 e9 00 00 00 00", AUP_EM_JMP, BR32),
	NO("66 e9 00 00"),
	NO("66 74 02"),
	NO("67 e8 00 00 00 00"),
	NO("26 74 02"),
	NO("64 eb 00"),
	EM("e2 fe", AUP_EM_LOOP, BR),
	EM("e1 fe", AUP_EM_LOOP, BR),
	EM("e0 fe", AUP_EM_LOOP, BR),
	EM("e3 05", AUP_EM_LOOP, BR),
	ST("67 e3 05", BR),				/* jecxz */
	ST("f2 e1 86", BR),			/* f2 turns loope into loopne! */
	ST("f3 e2 10", BR),
	{ false, "4b 3e", -EINVAL, ANY, ANY, ANY, ANY, NOXOL },	/* REX, prefix */
	{ false, "48 4f 90", -EINVAL, ANY, ANY, ANY, ANY, NOXOL },	/* REX, REX */
	{ false, "0f 19 00", -EINVAL, ANY, ANY, ANY, ANY, NOXOL },	/* not in the map */
	{ false, "f2 0f 44 c0", -EINVAL, ANY, ANY, ANY, ANY, NOXOL },	/* cmove + f2 */
	NO("66 e2 fe"),
	/* other control transfers */
	ST("c3", AUP_FIX_BRANCH),
	ST("c2 08 00", AUP_FIX_BRANCH),
	ST("f2 c3", AUP_FIX_BRANCH),
	ST("f3 c3", AUP_FIX_BRANCH),
	NO("66 c3"),
	ST("ff d0", AUP_FIX_CALL | AUP_FIX_BRANCH),
	ST("41 ff d3", AUP_FIX_CALL | AUP_FIX_BRANCH),
	ST("ff e0", AUP_FIX_BRANCH),
	ST("3e ff e0", AUP_FIX_BRANCH),			/* notrack jmp *%rax */
	ST("3e ff d0", AUP_FIX_CALL | AUP_FIX_BRANCH),
	ST("ff 24 c5 00 10 00 00", AUP_FIX_BRANCH),
	NO("66 ff d0"),
	RIPE("ff 25 00 10 00 00", AUP_EM_JMP_MEM, AUP_FIX_BRANCH, 6, "ff a6 00 10 00 00"),
	RIPE("ff 15 00 10 00 00", AUP_EM_CALL_MEM, AUP_FIX_CALL | AUP_FIX_BRANCH, 6,
	     "ff 96 00 10 00 00"),
	RIPE("f2 ff 25 00 10 00 00", AUP_EM_JMP_MEM, AUP_FIX_BRANCH, 6, "f2 ff a6 00 10 00 00"),
	RIPE("3e ff 25 00 10 00 00", AUP_EM_JMP_MEM, AUP_FIX_BRANCH, 6, "3e ff a6 00 10 00 00"),
	RIPS("ff 35 00 10 00 00", IP, 7, "ff b7 00 10 00 00"),	/* push *rip */
	NO("ff 1d 00 00 00 00"),			/* lcall */
	NO("ff 2d 00 00 00 00"),			/* ljmp */
	NO("ff 18"),
	/* RIP-relative rewriting */
	RIPS("48 8b 05 00 10 00 00", IP, 6, "48 8b 86 00 10 00 00"),
	RIPS("48 8b 35 00 10 00 00", IP, 7, "48 8b b7 00 10 00 00"),
	RIPS("48 8b 3d 00 10 00 00", IP, 6, "48 8b be 00 10 00 00"),
	RIPS("4c 8b 35 00 10 00 00", IP, 6, "4c 8b b6 00 10 00 00"),
	RIPS("49 8b 05 00 00 00 00", IP, 6, "48 8b 86 00 00 00 00"),
	RIPS("41 8b 35 00 00 00 00", IP, 7, "40 8b b7 00 00 00 00"),
	RIPS("40 8a 35 00 00 00 00", IP, 7, "40 8a b7 00 00 00 00"),
	RIPS("c7 05 00 10 00 00 01 00 00 00", IP, 6, "c7 86 00 10 00 00 01 00 00 00"),
	RIPS("48 83 3d 00 10 00 00 00", IP, 6, "48 83 be 00 10 00 00 00"),
	RIPS("0f c7 0d 00 00 00 00", IP, 6, "0f c7 8e 00 00 00 00"),
	RIPS("48 0f c7 0d 00 00 00 00", IP, 6, "48 0f c7 8e 00 00 00 00"),
	RIPS("66 0f 6f 05 00 10 00 00", IP, 6, "66 0f 6f 86 00 10 00 00"),
	RIPS("f2 0f 10 35 00 10 00 00", IP, 7, "f2 0f 10 b7 00 10 00 00"),
	RIPS("64 48 8b 05 00 00 00 00", IP, 6, "64 48 8b 86 00 00 00 00"),
	RIPS("67 48 8b 05 00 00 00 00", IP, 6, "67 48 8b 86 00 00 00 00"),
	RIPS("c5 f8 28 05 00 10 00 00", IP, 6, "c5 f8 28 86 00 10 00 00"),
	RIPS("c4 c1 78 28 05 00 10 00 00", IP, 6, "c4 e1 78 28 86 00 10 00 00"),
	/* mulx: reg = rax, vvvv = rsi */
	RIPS("c4 e2 cb f6 05 00 00 00 00", IP, 7, "c4 e2 cb f6 87 00 00 00 00"),
	/* andn: reg = rsi, vvvv = rdi */
	RIPS("c4 e2 c0 f2 35 00 00 00 00", IP, 3, "c4 e2 c0 f2 b3 00 00 00 00"),
	NO("62 f1 7c 48 28 05 00 00 00 00"),		/* EVEX, rip */
	ST("62 f1 7c 48 28 c1", IP),			/* EVEX, reg */
	/* refused */
	NO("cc"), NO("cd 80"), NO("f1"), NO("f4"), NO("fa"), NO("fb"),
	NO("e4 00"), NO("e6 00"), NO("ec"), NO("ef"), NO("6c"), NO("6f"),
	NO("f3 6e"), NO("0f 05"), NO("0f 07"), NO("0f 34"), NO("0f 35"),
	NO("cf"), NO("48 cf"), NO("ca 00 00"), NO("cb"), NO("8e d8"),
	NO("8e 15 00 00 00 00"), NO("0f a1"), NO("0f a9"), NO("0f b2 00"),
	NO("0f b4 00"), NO("0f b5 00"), NO("0f 0b"), NO("0f b9 00"),
	NO("0f ff 00"), NO("f0 48 0f b1 0e"), NO("f0 ff 05 00 00 00 00"),
	NO("26 8b 00"), NO("2e 8b 00"), NO("36 8b 00"), NO("3e 8b 00"),
	NO("c7 f8 00 00 00 00"), NO("0f 01 d7"), NO("f3 0f 01 ec"),
	NO("0f 00 c0"), NO("0f 00 08"), NO("0f 01 0d 00 00 00 00"),
	NO("0f 01 00"), NO("0f 01 e0"), NO("0f 01 20"),
	/* stepped */
	ST("64 48 8b 04 25 28 00 00 00", IP),
	ST("c6 f8 00", IP),				/* xabort */
	ST("0f 01 d0", IP),				/* xgetbv */
	ST("0f 01 d6", IP),				/* xtest */
	ST("0f a2", IP),				/* cpuid */
	ST("f3 a4", IP | AUP_FIX_REP),
	ST("f3 48 ab", IP | AUP_FIX_REP),
	ST("f2 ae", IP | AUP_FIX_REP),
	ST("a4", IP),
	ST("c8 10 00 00", IP),				/* enter */
	ST("c9", IP),					/* leave */
	ST("8c d8", IP),				/* mov %ds, %eax */
	ST("48 f7 f1", IP),				/* div %rcx */
	RIPS("0f ae 15 00 00 00 00", IP, 6, "0f ae 96 00 00 00 00"), /* ldmxcsr */
	/* 32-bit mode */
	EM32("55", AUP_EM_PUSH, IP),
	EM32("90", AUP_EM_NOP, IP),
	EM32("e8 00 00 00 00", AUP_EM_CALL, BR32 | AUP_FIX_CALL),
	EM32("8d 05 00 10 00 00", AUP_EM_LEA, IP),
	EM32("89 e5", AUP_EM_MOV, IP),
	EM32("e2 fe", AUP_EM_LOOP, BR),
	ST32("8b 05 00 10 00 00", IP),			/* absolute, no scratch */
	ST32("40", IP),					/* inc %eax */
	ST32("61", IP),					/* popa */
	ST32("c5 f8 28 c1", IP),			/* vex */
	ST32("ff 15 00 10 00 00", AUP_FIX_CALL | AUP_FIX_BRANCH),
	NO32("c4 00"), NO32("c5 00"), NO32("cd 80"), NO32("0f 34"),
	NO32("1f"), NO32("07"), NO32("17"), NO32("66 e8 00 00"),
	NO32("9a 00 00 00 00 23 00"), NO32("ea 00 00 00 00 23 00"),
};

static void test_table(void)
{
	char got[64], want[64];
	struct arch_uprobe_plan *p;
	struct arch_uprobe au;
	unsigned int i;
	u8 b[16], x[16];
	int n, ret;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct tcase *c = &cases[i];

		memset(b, 0, sizeof(b));
		n = parse_hex(c->hex, b, 15);
		ret = analyze_bytes(&au, b, n, c->ia32);
		p = PL(&au, c->ia32);
		CHECK(ret == c->ret, "%s%s: ret %d want %d", c->ia32 ? "[32] " : "",
		      c->hex, ret, c->ret);
		CHECK(ret == p->err, "%s: err %d", c->hex, p->err);
		if (ret || c->ret)
			continue;
		CHECK(p->len == n, "%s: len %d want %d", c->hex, p->len, n);
		CHECK(p->ia32 == c->ia32, "%s: ia32", c->hex);
		if (c->exec != ANY)
			CHECK(p->exec == c->exec, "%s: exec %d want %d", c->hex, p->exec, c->exec);
		if (c->emul != ANY && p->exec == AUP_EMULATE)
			CHECK(p->emul == c->emul, "%s: emul %d want %d", c->hex, p->emul, c->emul);
		if (c->fixups != ANY)
			CHECK(p->fixups == c->fixups, "%s: fixups %#x want %#x", c->hex,
			      p->fixups, c->fixups);
		if (c->scratch != ANY)
			CHECK(p->scratch == c->scratch, "%s: scratch %d want %d", c->hex,
			      p->scratch, c->scratch);
		CHECK(p->boostable == (p->exec == AUP_STEP &&
				       !(p->fixups & ~(AUP_FIX_IP | AUP_FIX_BRANCH))),
		      "%s: boostable %d", c->hex, p->boostable);
		if (c->xol) {
			CHECK(parse_hex(c->xol, x, 15) == p->xol_len &&
			      !memcmp(x, p->xol, p->xol_len), "%s: xol", c->hex);
		} else if (p->fixups & AUP_FIX_RELBR) {
			/* the copy branches to the slot's landing int3: +1 */
			int k = rel_bytes(p);
			s32 one = 1;

			memcpy(x, au.insn, n);
			memcpy(x + n - k, &one, k);
			CHECK((k == 1 || k == 4) && p->xol_len == n && !memcmp(x, p->xol, n),
			      "%s: relative branch copy", c->hex);
		} else {
			CHECK(p->xol_len == p->len && !memcmp(p->xol, au.insn, p->len),
			      "%s: xol differs from insn", c->hex);
		}
		fmt_hex(got, p->xol, p->xol_len);
		fmt_hex(want, au.insn, p->len);
		if (getenv("AUP_VERBOSE"))
			printf("%-34s exec %d emul %2d fix %#04x reg %3d src %3d idx %3d",
			       want, p->exec, p->emul, p->fixups, p->reg, p->src, p->index);
		if (getenv("AUP_VERBOSE"))
			printf(" sc %d rel %d boost %d xol %s\n", p->scale, p->rel,
			       p->boostable, got);
	}
	/* Invalid encodings: the decoder must fail, not guess. */
	memset(b, 0, sizeof(b));
	memset(b, 0x66, 15);
	CHECK(analyze_bytes(&au, b, 15, false) == -EINVAL, "15 prefixes");
}

/* ------------------------------------------ emulation, step, notifiers */

static u8 ustack[4096];

static void regs_init(struct pt_regs *r, unsigned long ip)
{
	memset(r, 0, sizeof(*r));
	r->cs = __USER_CS;
	r->ss = __USER_DS;
	r->flags = 0x202;
	r->ip = ip;
	r->sp = (unsigned long)ustack + 2048;
	r->ax = 0x1111111111111111UL;
	r->cx = 0x2222222222222222UL;
	r->dx = 0x3333333333333333UL;
	r->bx = 0x4444444444444444UL;
	r->bp = 0x5555555555555555UL;
	r->si = 0x6666666666666666UL;
	r->di = 0x7777777777777777UL;
	r->r8 = 0x8888888888888888UL;
	r->r12 = 0xcccccccccccccccUL;
	r->r15 = 0xfffffffffffffffUL;
}

static void analyze_hex(struct arch_uprobe *au, const char *hex, bool ia32)
{
	u8 b[16] = { 0 };
	int n = parse_hex(hex, b, 15);

	if (analyze_bytes(au, b, n, ia32))
		printf("FAIL cannot analyze %s\n", hex);
}

static void test_emulate(void)
{
	unsigned long v = 0x400000, sp0;
	struct arch_uprobe au;
	struct pt_regs r, r0;
	u64 top;

	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);

	analyze_hex(&au, "41 57", false);
	regs_init(&r, v);
	sp0 = r.sp;
	CHECK(arch_uprobe_emulate(&au, &r), "push r15");
	CHECK(r.ip == v + 2 && r.sp == sp0 - 8, "push r15 ip/sp");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == r.r15, "push r15 value %#lx", (unsigned long)top);

	analyze_hex(&au, "54", false);			/* push %rsp */
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r), "push rsp");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == sp0, "push rsp pushes the old value");

	/* a push that faults changes nothing and is stepped instead */
	analyze_hex(&au, "55", false);
	regs_init(&r, v);
	r.sp = 0x1000;
	r0 = r;
	CHECK(!arch_uprobe_emulate(&au, &r), "faulting push");
	CHECK(!memcmp(&r, &r0, sizeof(r)), "faulting push left regs alone");

	/* TF, ptrace single-step or block-step: step instead */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	CHECK(!arch_uprobe_emulate(&au, &r), "TF");
	regs_init(&r, v);
	test_task.tif = BIT(TIF_SINGLESTEP);
	CHECK(!arch_uprobe_emulate(&au, &r), "TIF_SINGLESTEP");
	test_task.tif = BIT(TIF_BLOCKSTEP);
	CHECK(!arch_uprobe_emulate(&au, &r), "TIF_BLOCKSTEP");
	test_task.tif = 0;

	/* the task's mode picks the plan: 48 89 e5 is dec %eax in 32-bit code */
	analyze_hex(&au, "48 89 e5", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.bp == r.sp && r.ip == v + 3, "64: mov");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	CHECK(!arch_uprobe_emulate(&au, &r) && PL(&au, true)->len == 1 &&
	      PL(&au, true)->exec == AUP_STEP, "32: dec, stepped");
	analyze_hex(&au, "55", false);
	/* ...and no plan for LDT code or stack segments, or vm86-like garbage */
	regs_init(&r, v);
	r.cs = 0x0f;
	CHECK(!arch_uprobe_emulate(&au, &r), "LDT code segment");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r.ss = 0x0f;
	CHECK(!arch_uprobe_emulate(&au, &r), "LDT stack segment");

	/* EFLAGS.AC: a misaligned stack access would fault (#AC): step instead */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_AC;
	r.sp -= 4;
	r0 = r;
	CHECK(!arch_uprobe_emulate(&au, &r) && !memcmp(&r, &r0, sizeof(r)), "AC, misaligned");
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_AC;
	CHECK(arch_uprobe_emulate(&au, &r), "AC, aligned");

	analyze_hex(&au, "9c", false);			/* pushf */
	regs_init(&r, v);
	r.flags = 0x10ad7;				/* RF + arith */
	CHECK(arch_uprobe_emulate(&au, &r), "pushf");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == 0xad7, "pushf value %#lx", (unsigned long)top);

	analyze_hex(&au, "6a 80", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r), "push imm8");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == (u64)-128, "push imm8 sign extension");

	analyze_hex(&au, "89 c8", false);		/* mov %ecx, %eax */
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.ax == 0x22222222, "mov32 zero-extends");
	analyze_hex(&au, "4c 8b c1", false);		/* mov %rcx, %r8 */
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.r8 == r.cx && r.ip == v + 3, "mov r8");

	analyze_hex(&au, "4a 8d 44 a5 f8", false);	/* lea -8(%rbp,%r12,4),%rax */
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.ax == r.bp + (r.r12 << 2) - 8, "lea sib");
	analyze_hex(&au, "48 8d 05 f0 ff ff ff", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.ax == v + 7 - 16, "lea rip");
	analyze_hex(&au, "8d 04 25 00 00 00 80", false);	/* lea 0x80000000,%eax */
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.ax == 0x80000000UL, "lea abs32 %#lx", r.ax);
	analyze_hex(&au, "48 8d 04 25 00 00 00 80", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.ax == 0xffffffff80000000UL, "lea abs sext");

	analyze_hex(&au, "e8 10 00 00 00", false);
	regs_init(&r, v);
	sp0 = r.sp;
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == v + 5 + 16 && r.sp == sp0 - 8, "call");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == v + 5, "call return address");

	analyze_hex(&au, "eb fe", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == v, "jmp self");
	analyze_hex(&au, "e9 00 00 00 80", false);	/* out of user space */
	regs_init(&r, v);
	CHECK(!arch_uprobe_emulate(&au, &r), "jmp to a kernel address");

	analyze_hex(&au, "e2 10", false);		/* loop */
	regs_init(&r, v);
	r.cx = 1;
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == v + 2 && r.cx == 0, "loop done");
	regs_init(&r, v);
	r.cx = 0;
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == v + 0x12 && r.cx == ~0UL, "loop wrap");
	analyze_hex(&au, "e1 10", false);		/* loope */
	regs_init(&r, v);
	r.cx = 5;
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == v + 2 && r.cx == 4, "loope zf=0");
	regs_init(&r, v);
	r.cx = 5;
	r.flags |= X86_EFLAGS_ZF;
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == v + 0x12, "loope zf=1");
	analyze_hex(&au, "e0 10", false);		/* loopne */
	regs_init(&r, v);
	r.cx = 5;
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == v + 0x12, "loopne zf=0");

	/* jmp *rip: pointer in user memory */
	analyze_hex(&au, "ff 25 00 00 00 00", false);
	regs_init(&r, (unsigned long)ustack + 100 - 6);
	top = 0x401234;
	memcpy(ustack + 100, &top, 8);
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == 0x401234, "jmp *rip");
	regs_init(&r, 0x1000);
	CHECK(!arch_uprobe_emulate(&au, &r), "jmp *rip, pointer faults");

	/* 32-bit */
	analyze_hex(&au, "55", true);
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r.sp = (unsigned long)ustack + 2048;
	sp0 = r.sp;
	CHECK(!arch_uprobe_emulate(&au, &r) || r.sp == ((sp0 - 4) & 0xffffffff),
	      "push32 sp");
	analyze_hex(&au, "e9 00 00 00 80", true);
	regs_init(&r, 0x80000000UL);
	r.cs = __USER32_CS;
	CHECK(arch_uprobe_emulate(&au, &r) && r.ip == 5, "jmp32 wraps: %#lx", r.ip);
	analyze_hex(&au, "e2 10", true);
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r.cx = 0xffffffff00000001UL;
	CHECK(arch_uprobe_emulate(&au, &r) && r.cx == 0 && r.ip == v + 2, "loop ecx");
}

static void test_jcc(void)
{
	static const struct {
		int cc;
		unsigned long flags;
		bool taken;
	} t[] = {
		{ 0x0, X86_EFLAGS_OF, true }, { 0x1, X86_EFLAGS_OF, false },
		{ 0x2, X86_EFLAGS_CF, true }, { 0x3, 0, true },
		{ 0x4, X86_EFLAGS_ZF, true }, { 0x5, X86_EFLAGS_ZF, false },
		{ 0x6, X86_EFLAGS_ZF, true }, { 0x6, 0, false },
		{ 0x7, 0, true }, { 0x8, X86_EFLAGS_SF, true },
		{ 0x9, X86_EFLAGS_SF, false }, { 0xa, X86_EFLAGS_PF, true },
		{ 0xb, 0, true }, { 0xc, X86_EFLAGS_SF, true },
		{ 0xc, X86_EFLAGS_SF | X86_EFLAGS_OF, false },
		{ 0xd, X86_EFLAGS_OF, false }, { 0xe, X86_EFLAGS_ZF, true },
		{ 0xe, X86_EFLAGS_OF, true }, { 0xe, 0, false },
		{ 0xf, 0, true }, { 0xf, X86_EFLAGS_SF, false },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		CHECK(aup_cond(t[i].cc, t[i].flags | 0x202) == t[i].taken,
		      "cc %#x flags %#lx", t[i].cc, t[i].flags);
}

/*
 * A filled slot: in each half, the copy of that mode's plan if it can run
 * there, then int3s; only int3s otherwise.
 */
static bool slot_ok(const struct arch_uprobe *au, const u8 *buf, unsigned long slot)
{
	int mode, i, n;

	for (mode = 0; mode < AUP_NR_MODES; mode++) {
		const struct arch_uprobe_plan *p = &au->plan[mode];
		const u8 *half = buf + mode * AUP_HALF;

		n = !p->err && (!p->ia32 || slot + UPROBE_XOL_SLOT_BYTES <= BIT_ULL(32)) ?
		    p->xol_len : 0;
		if (memcmp(half, p->xol, n))
			return false;
		for (i = n; i < AUP_HALF; i++)
			if (half[i] != 0xcc)
				return false;
	}
	return true;
}

/* Run a step "by hand": fill, pre_xol, move ip as the CPU would, post_xol. */
static void begin_step(struct arch_uprobe *au, struct pt_regs *r, unsigned long v,
		       unsigned long slot)
{
	int copy = (r->cs == __USER32_CS) * AUP_HALF;
	u8 buf[UPROBE_XOL_SLOT_BYTES];

	CHECK(arch_uprobe_fill_slot(au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      slot_ok(au, buf, slot), "fill");
	test_utask.vaddr = v;
	test_utask.xol_vaddr = slot;
	test_utask.auprobe = au;
	test_utask.state = UTASK_SSTEP;
	CHECK(!arch_uprobe_pre_xol(au, r), "pre_xol");
	CHECK(r->ip == slot + copy && (r->flags & X86_EFLAGS_TF), "pre_xol ip/TF");
}

static void test_step(void)
{
	unsigned long v = 0x400000, slot = 0x7fff0000, sp0, w;
	u8 buf[UPROBE_XOL_SLOT_BYTES];
	struct arch_uprobe au;
	struct pt_regs r;
	s32 rel;

	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);

	/* RIP-relative load: scratch loaded and restored, ip translated */
	analyze_hex(&au, "48 8b 05 00 10 00 00", false);
	regs_init(&r, v);
	test_task.thread.trap_nr = 14;
	begin_step(&au, &r, v, slot);
	CHECK(r.si == v + 7, "scratch = next insn");
	CHECK(!arch_uprobe_xol_was_trapped(&test_task), "no trap yet");
	r.ip = slot + 7;
	r.ax = 42;
	CHECK(!arch_uprobe_post_xol(&au, &r), "post_xol");
	CHECK(r.ip == v + 7 && r.si == 0x6666666666666666UL && r.ax == 42, "post regs");
	CHECK(!(r.flags & X86_EFLAGS_TF) && test_task.thread.trap_nr == 14, "TF, trap_nr");
	CHECK(!nr_sigtrap, "no SIGTRAP");

	/* a fault in the copy: trapped, abort restores, trap_nr kept */
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	test_task.thread.trap_nr = 14;
	CHECK(arch_uprobe_xol_was_trapped(&test_task), "trapped");
	CHECK(arch_uprobe_post_xol(&au, &r) == -EFAULT, "post_xol after fault");
	arch_uprobe_abort_xol(&au, &r);
	CHECK(r.ip == v && r.si == 0x6666666666666666UL && !(r.flags & X86_EFLAGS_TF) &&
	      test_task.thread.trap_nr == 14, "abort");

	/* program's own TF: kept, and the step is reported */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	test_task.thread.virtual_dr6 = 0;
	begin_step(&au, &r, v, slot);
	r.ip = slot + 7;
	CHECK(!arch_uprobe_post_xol(&au, &r), "post_xol TF");
	CHECK((r.flags & X86_EFLAGS_TF) && nr_sigtrap == 1 && sigtrap_ip == v + 7 &&
	      (test_task.thread.virtual_dr6 & DR_STEP) &&
	      test_task.thread.trap_nr == X86_TRAP_DB, "TF report");
	nr_sigtrap = 0;

	/* call *%rax: return address fixed, ip kept */
	analyze_hex(&au, "ff d0", false);
	regs_init(&r, v);
	sp0 = r.sp;
	begin_step(&au, &r, v, slot);
	r.sp -= 8;
	w = slot + 2;
	memcpy((void *)r.sp, &w, 8);
	r.ip = 0x401000;
	CHECK(!arch_uprobe_post_xol(&au, &r), "post call");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(r.ip == 0x401000 && w == v + 2 && r.sp == sp0 - 8, "call *%%rax fix");

	/* call rel32, stepped: lands in the slot, whatever the distance */
	analyze_hex(&au, "e8 00 01 00 00", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_fill_slot(&au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      buf[5] == 0xcc && buf[6] == 0xcc && buf[32] == 0xe8, "fill call");
	memcpy(&rel, buf + 1, 4);
	CHECK(rel == 1, "call lands on the slot's second int3: %#x", rel);
	begin_step(&au, &r, v, 0x7f0000000000UL);
	r.sp -= 8;
	w = 0x7f0000000000UL + 5;
	memcpy((void *)r.sp, &w, 8);
	r.ip = 0x7f0000000000UL + 5 + 1;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 5 + 0x100, "call rel target");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == v + 5, "call rel return address");

	/* a taken branch to a non-canonical address: #GP at vaddr, nothing pushed */
	analyze_hex(&au, "e8 00 00 00 40", false);
	v = 0x7fffc0000000UL;
	regs_init(&r, v);
	sp0 = r.sp;
	nr_force_sig = 0;
	begin_step(&au, &r, v, slot);
	r.sp -= 8;
	r.ip = slot + 5 + 1;
	CHECK(arch_uprobe_post_xol(&au, &r) == -EFAULT && nr_force_sig == 1 &&
	      force_sig_nr == SIGSEGV && test_task.thread.trap_nr == X86_TRAP_GP &&
	      r.sp == sp0, "call to a non-canonical address");
	arch_uprobe_abort_xol(&au, &r);
	CHECK(r.ip == v && !(r.flags & X86_EFLAGS_TF) && test_task.thread.trap_nr == X86_TRAP_GP,
	      "...reported at vaddr");
	/* ...canonical with 5-level paging */
	boot_cpu_data.x86_virt_bits = 57;
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.sp -= 8;
	r.ip = slot + 5 + 1;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 5 + 0x40000000UL,
	      "call above 2^47 with LA57");
	boot_cpu_data.x86_virt_bits = 48;
	/* ...not taken: no check */
	analyze_hex(&au, "0f 84 00 00 00 40", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 6;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 6, "jcc not taken near the top");
	v = 0x400000;
	nr_force_sig = 0;
	test_task.thread.trap_nr = 14;

	/* jcc stepped: not taken, taken */
	analyze_hex(&au, "74 10", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 2;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 2, "jcc not taken");
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 2 + 1;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 0x12, "jcc taken");
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 2 + 0x10;
	CHECK(arch_uprobe_post_xol(&au, &r) == -EFAULT, "jcc: ip elsewhere");
	arch_uprobe_abort_xol(&au, &r);
	/* 32-bit: target wraps at 4 GiB */
	analyze_hex(&au, "e9 00 00 00 80", true);
	regs_init(&r, 0x80000000UL);
	r.cs = __USER32_CS;
	begin_step(&au, &r, 0x80000000UL, slot);
	CHECK(r.ip == slot + AUP_HALF, "32-bit copy in the second half");
	r.ip = slot + AUP_HALF + 5 + 1;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == 5, "jmp32 wraps (step): %#lx", r.ip);

	/* rep movsb: stops after an iteration with ip at the slot */
	analyze_hex(&au, "f3 a4", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	CHECK(arch_uprobe_post_xol(&au, &r) == -EAGAIN && r.ip == slot &&
	      !(r.flags & X86_EFLAGS_TF), "rep: again, at full speed");
	r.ip = slot + 2;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 2, "rep: done");
	/* ...the program's own TF stays: it steps every iteration */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	begin_step(&au, &r, v, slot);
	CHECK(arch_uprobe_post_xol(&au, &r) == -EAGAIN && (r.flags & X86_EFLAGS_TF),
	      "rep: again, stepping");
	r.ip = slot + 2;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 2 && nr_sigtrap == 1,
	      "rep: done, reported");
	nr_sigtrap = 0;

	/* pushf: our TF hidden from the pushed word, the program's kept */
	analyze_hex(&au, "9c", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.sp -= 8;
	w = r.flags;
	memcpy((void *)r.sp, &w, 8);
	r.ip = slot + 1;
	CHECK(!arch_uprobe_post_xol(&au, &r), "post pushf");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x202, "pushf without TF: %#lx", w);
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	begin_step(&au, &r, v, slot);
	r.sp -= 8;
	w = r.flags;
	memcpy((void *)r.sp, &w, 8);
	r.ip = slot + 1;
	CHECK(!arch_uprobe_post_xol(&au, &r), "post pushf TF");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x302 && nr_sigtrap == 1, "pushf with the program's TF: %#lx", w);
	nr_sigtrap = 0;

	/* block-step: suspended during our step; re-armed after a straight-line insn */
	analyze_hex(&au, "48 01 c8", false);
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	test_task.tif = BIT(TIF_BLOCKSTEP);
	nr_blockstep_on = 0;
	nr_blockstep_off = 0;
	begin_step(&au, &r, v, slot);
	CHECK(!(test_task.tif & BIT(TIF_BLOCKSTEP)) && nr_blockstep_off == 1, "BTF off");
	r.ip = slot + 3;
	CHECK(!arch_uprobe_post_xol(&au, &r), "post add");
	CHECK((test_task.tif & BIT(TIF_BLOCKSTEP)) && !nr_sigtrap && (r.flags & X86_EFLAGS_TF),
	      "block-step goes on");
	/* ...and reported after a taken branch */
	analyze_hex(&au, "c3", false);
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	begin_step(&au, &r, v, slot);
	r.ip = 0x401000;
	r.sp += 8;
	CHECK(!arch_uprobe_post_xol(&au, &r), "post ret");
	CHECK(!(test_task.tif & BIT(TIF_BLOCKSTEP)) && nr_sigtrap == 1, "block-step reported");
	nr_sigtrap = 0;
	test_task.tif = 0;

	/* a plan the task's mode refuses: no emulation, no step */
	CHECK(analyze_bytes(&au, (const u8 *)"\xc5\x00\x58\xc0", 4, false) == 0 &&
	      PL(&au, true)->err == -ENOTSUPP, "vaddps / lds");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	test_utask.vaddr = v;
	test_utask.xol_vaddr = slot;
	CHECK(arch_uprobe_fill_slot(&au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      !memcmp(buf, "\xc5\x00\x58\xc0\xcc", 5) && buf[32] == 0xcc,
	      "the 64-bit copy only");
	CHECK(!arch_uprobe_emulate(&au, &r), "no 32-bit emulation");
	CHECK(arch_uprobe_pre_xol(&au, &r) == -ENOEXEC && r.ip == v, "no 32-bit step");
	/* 32-bit code cannot reach a slot above 4 GiB */
	CHECK(analyze_bytes(&au, (const u8 *)"\x48\x3e\x8b\x00", 4, true) == 0 &&
	      PL(&au, false)->err == -EINVAL, "dec %%eax, only in 32-bit code");
	CHECK(arch_uprobe_fill_slot(&au, buf, 0x100000000UL, v) == -ENOEXEC, "slot > 4G");
	CHECK(arch_uprobe_fill_slot(&au, buf, 0xffffffc0UL, v) == UPROBE_XOL_SLOT_BYTES &&
	      buf[0] == 0xcc && buf[32] == 0x48 && buf[33] == 0xcc, "slot < 4G");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	test_utask.xol_vaddr = 0xffffffe0UL;
	CHECK(arch_uprobe_pre_xol(&au, &r) == -ENOEXEC && r.ip == v, "pre_xol slot > 4G");
	test_utask.xol_vaddr = 0xffffffc0UL;
	CHECK(!arch_uprobe_pre_xol(&au, &r) && r.ip == 0xffffffc0UL + AUP_HALF,
	      "pre_xol slot < 4G");
	arch_uprobe_abort_xol(&au, &r);
	CHECK(r.ip == v && !(r.flags & X86_EFLAGS_TF), "abort");
}

static int notify(unsigned long val, struct pt_regs *r, unsigned long *dr6);

/* Watchpoints (ptrace data breakpoints) hit by the stepped copy. */
static void test_watchpoint(void)
{
	unsigned long v = 0x400000, slot = 0x7fff0000, dr6;
	struct arch_uprobe au;
	struct pt_regs r;

	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);
	if (!die_nb)
		aup_test_initcall();
	nr_sigtrap = 0;

	/* add %rax, (%rdi): the #DB has DR_STEP and a ptrace watchpoint bit */
	analyze_hex(&au, "48 01 07", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 3;
	dr6 = DR_STEP;
	test_task.thread.virtual_dr6 = DR_STEP | DR_TRAP1;
	sstep_done_ret = true;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_STOP && !dr6 &&
	      !test_task.thread.virtual_dr6 && test_utask.autask.dr6 == DR_TRAP1,
	      "step + watchpoint claimed");
	CHECK(!arch_uprobe_xol_was_trapped(&test_task), "no fault: not aborted");
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 3, "step completes once");
	CHECK(nr_sigtrap == 1 && sigtrap_ip == v + 3 && sigtrap_code == TRAP_HWBKPT &&
	      test_task.thread.virtual_dr6 == DR_TRAP1 && !(r.flags & X86_EFLAGS_TF),
	      "watchpoint reported after the instruction");
	nr_sigtrap = 0;

	/* ...and the program's own single-step too */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	begin_step(&au, &r, v, slot);
	r.ip = slot + 3;
	dr6 = DR_STEP | DR_TRAP0;			/* no perf bp took DR0 */
	test_task.thread.virtual_dr6 = DR_STEP;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_STOP, "step + raw trap bit");
	CHECK(!arch_uprobe_post_xol(&au, &r) && nr_sigtrap == 1 && sigtrap_code == TRAP_TRACE &&
	      test_task.thread.virtual_dr6 == (DR_STEP | DR_TRAP0), "step and watchpoint");
	nr_sigtrap = 0;

	/* a bus lock still goes to exc_debug_user() */
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 3;
	dr6 = DR_STEP | DR_BUS_LOCK;
	test_task.thread.virtual_dr6 = DR_STEP;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && dr6 == DR_BUS_LOCK &&
	      !test_task.thread.virtual_dr6, "bus lock passed on");
	CHECK(!arch_uprobe_post_xol(&au, &r) && !nr_sigtrap, "bus lock: no SIGTRAP");

	/* a trap-only #DB when not stepping is not ours */
	sstep_done_ret = false;
	dr6 = DR_TRAP1;
	test_task.thread.virtual_dr6 = DR_TRAP1;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && dr6 == DR_TRAP1 &&
	      test_task.thread.virtual_dr6 == DR_TRAP1, "not stepping");
	sstep_done_ret = true;

	/* rep movsb: a watchpoint between iterations run without TF */
	analyze_hex(&au, "f3 a4", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	CHECK(arch_uprobe_post_xol(&au, &r) == -EAGAIN, "rep: first iteration");
	dr6 = DR_TRAP2;
	test_task.thread.virtual_dr6 = DR_TRAP2;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_STOP, "rep: watchpoint claimed");
	CHECK(arch_uprobe_post_xol(&au, &r) == -EFAULT && r.ip == v && nr_sigtrap == 1 &&
	      sigtrap_ip == v && sigtrap_code == TRAP_HWBKPT, "rep: reported on the insn");
	arch_uprobe_abort_xol(&au, &r);
	CHECK(r.ip == v && !(r.flags & X86_EFLAGS_TF) &&
	      test_task.thread.trap_nr == X86_TRAP_DB, "rep: aborted");
	nr_sigtrap = 0;
	/* ...with the program stepping itself: its step is reported too */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	begin_step(&au, &r, v, slot);
	dr6 = DR_STEP;
	test_task.thread.virtual_dr6 = DR_STEP | DR_TRAP2;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_STOP, "rep, TF: claimed");
	CHECK(arch_uprobe_post_xol(&au, &r) == -EFAULT && sigtrap_code == TRAP_TRACE &&
	      test_task.thread.virtual_dr6 == (DR_STEP | DR_TRAP2) && sigtrap_ip == v,
	      "rep, TF: step and watchpoint on the insn");
	arch_uprobe_abort_xol(&au, &r);
	CHECK(r.ip == v && (r.flags & X86_EFLAGS_TF), "rep, TF: aborted, TF kept");
	nr_sigtrap = 0;
	sstep_done_ret = false;
	test_task.thread.virtual_dr6 = 0;
}

/* Block-step (BTF) without TF does nothing natively: no report. */
static void test_blockstep_no_tf(void)
{
	unsigned long v = 0x400000, slot = 0x7fff0000;
	struct arch_uprobe au;
	struct pt_regs r;

	analyze_hex(&au, "c3", false);
	regs_init(&r, v);
	test_task.tif = BIT(TIF_BLOCKSTEP);
	nr_sigtrap = 0;
	begin_step(&au, &r, v, slot);
	r.ip = 0x401000;
	r.sp += 8;
	CHECK(!arch_uprobe_post_xol(&au, &r) && !nr_sigtrap &&
	      (test_task.tif & BIT(TIF_BLOCKSTEP)), "BTF without TF: no report, re-armed");
	test_task.tif = 0;
}

/* Verdicts: no mm (the core's call), a 64-bit mm, a compat mm. */
static void test_verdicts(void)
{
	static const struct {
		const char *hex;
		int none, m64, m32;
	} t[] = {
		{ "90", 0, 0, 0 },
		{ "cc", -ENOTSUPP, -ENOTSUPP, -ENOTSUPP },
		{ "0f 05", -ENOTSUPP, -ENOTSUPP, -ENOTSUPP },
		{ "f0 01 00", -ENOTSUPP, -ENOTSUPP, -ENOTSUPP },
		{ "c5 00 58 c0", 0, 0, -ENOTSUPP },		/* lds in 32-bit code */
		{ "48 3e 8b 00", 0, -EINVAL, 0 },		/* dec %eax in 32-bit code */
		{ "61", 0, 0, 0 },			/* popa (#UD when stepped in 64-bit code) */
	};
	struct arch_uprobe au;
	struct mm_struct m64 = { .ia32 = false }, m32 = { .ia32 = true };
	unsigned int i;
	u8 b[16];
	int n;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		memset(b, 0, sizeof(b));
		n = parse_hex(t[i].hex, b, 15);
		memset(&au, 0, sizeof(au));
		memcpy(au.insn, b, n);
		CHECK(arch_uprobe_analyze_insn(&au, NULL, 0) == t[i].none, "%s: no mm", t[i].hex);
		CHECK(arch_uprobe_analyze_insn(&au, &m64, 0) == t[i].m64, "%s: 64: %d", t[i].hex,
		      au.plan[AUP_MODE_64].err);
		CHECK(arch_uprobe_analyze_insn(&au, &m32, 0) == t[i].m32, "%s: 32", t[i].hex);
	}
}

static int notify(unsigned long val, struct pt_regs *r, unsigned long *dr6)
{
	struct die_args args = { .regs = r, .err = (long)dr6 };

	return die_nb->notifier_call(die_nb, val, &args);
}

/* The return-probe helper that shares this file. */
static void test_uretprobe(void)
{
	unsigned long w = 0x401234, tramp = 0x7fffff000000UL;
	struct pt_regs r;

	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);
	regs_init(&r, 0x400000);
	memcpy((void *)r.sp, &w, 8);
	CHECK(arch_uretprobe_hijack_return_addr(tramp, &r) == 0x401234, "hijack returns orig");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == tramp, "hijack writes the trampoline");
	CHECK(arch_uretprobe_hijack_return_addr(tramp, &r) == tramp, "already hijacked");
	r.sp = 0x1000;
	CHECK(arch_uretprobe_hijack_return_addr(tramp, &r) == -1UL, "unreadable stack");

	/* 32-bit code: a 4-byte return address, a trampoline below 4 GiB */
	regs_init(&r, 0x400000);
	r.cs = __USER32_CS;
	w = 0x5555555500401234UL;
	memcpy((void *)r.sp, &w, 8);
	CHECK(arch_uretprobe_hijack_return_addr(0xfffff000UL, &r) == 0x401234, "hijack32");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x55555555fffff000UL, "hijack32 writes 4 bytes: %#lx", w);
	CHECK(arch_uretprobe_hijack_return_addr(tramp, &r) == -1UL, "trampoline above 4G");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x55555555fffff000UL, "...nothing written");
	r.ss = 0x0f;
	CHECK(arch_uretprobe_hijack_return_addr(0xfffff000UL, &r) == -1UL, "LDT stack");
}

static void test_notifiers(void)
{
	unsigned long v = 0x400000, slot = 0x7fff0000, dr6;
	struct arch_uprobe au;
	struct pt_regs r;

	CHECK(aup_test_initcall() == 0 && die_nb, "initcall");
	test_task.tif = 0;

	/* kernel traps are never ours */
	regs_init(&r, v);
	r.cs = 0x10;
	int3_hit_ret = true;
	CHECK(notify(DIE_INT3, &r, NULL) == NOTIFY_DONE && !nr_int3_hit, "kernel int3");

	regs_init(&r, v + 1);
	CHECK(notify(DIE_INT3, &r, NULL) == NOTIFY_STOP && nr_int3_hit == 1, "int3 ours");
	int3_hit_ret = false;
	CHECK(notify(DIE_INT3, &r, NULL) == NOTIFY_DONE && nr_int3_hit == 2, "int3 not ours");
	CHECK(arch_uprobe_swbp_addr(&r) == v, "swbp addr");

	/* #DB: only DR_STEP of our step is consumed */
	regs_init(&r, slot + 1);
	dr6 = DR_STEP;
	test_task.thread.virtual_dr6 = DR_STEP;
	sstep_done_ret = true;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_STOP && !dr6 &&
	      !test_task.thread.virtual_dr6, "our step");
	dr6 = DR_STEP | 1;				/* + watchpoint 0 */
	test_task.thread.virtual_dr6 = DR_STEP;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_STOP && !dr6 &&
	      !test_task.thread.virtual_dr6 && test_utask.autask.dr6 == 1,
	      "our step + watchpoint: reported by post_xol");
	test_utask.autask.dr6 = 0;
	sstep_done_ret = false;
	dr6 = DR_STEP;
	test_task.thread.virtual_dr6 = DR_STEP;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && dr6 == DR_STEP &&
	      test_task.thread.virtual_dr6 == DR_STEP, "not our step");
	dr6 = 0;					/* icebp */
	nr_sstep_done = 0;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && !nr_sstep_done, "icebp");

	/* the guard int3: a step that ended without #DB */
	analyze_hex(&au, "0f 01 d0", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 3 + 1;
	sstep_done_ret = true;
	nr_int3_hit = 0;
	CHECK(notify(DIE_INT3, &r, NULL) == NOTIFY_STOP && sstep_done_ip == slot + 3 &&
	      r.ip == slot + 3 && !nr_int3_hit, "guard");
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 3, "guard post_xol");
	sstep_done_ret = false;
}

/* ------------------------------------------------------ objdump listing */

struct oline {
	unsigned long addr;
	u8 b[16];
	int n;
	bool bad;
};

/* One "addr:\tbytes\tmnemonic" line; returns false for other lines. */
static bool parse_oline(char *line, struct oline *o)
{
	char *t1, *t2, *end;

	t1 = strchr(line, '\t');
	if (!t1)
		return false;
	o->addr = strtoul(line, &end, 16);
	if (end == line || *end != ':')
		return false;
	t2 = strchr(t1 + 1, '\t');
	if (t2)
		*t2++ = 0;
	o->n = parse_hex(t1 + 1, o->b, 16);
	o->bad = !t2 || strstr(t2, "(bad)") || strstr(t2, ".byte") || o->n <= 0;
	return o->n > 0;
}

#define STREAM_MAX	65536

struct stream {
	unsigned long start;
	u8 b[STREAM_MAX + 16];
	int n;
	int nins;
	int off[STREAM_MAX];
	u8 len[STREAM_MAX];
	bool bad[STREAM_MAX];
};

static unsigned long st_ins, st_mismatch, st_einval, st_enotsupp, st_emul, st_step;
static unsigned long st_riprel, st_emul_kind[16], st_fwait, st_rexsplit, st_mismatch_refused;
static unsigned long st_boost;
static char cur_file[256];

static bool all_prefixes(const u8 *p, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		switch (p[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x40 ... 0x4f:
		case 0x64 ... 0x67: case 0xf0: case 0xf2: case 0xf3:
			continue;
		}
		return false;
	}
	return true;
}

static void check_stream(struct stream *s)
{
	struct arch_uprobe au;
	struct insn insn;
	int i, ret;

	for (i = 0; i < s->nins; i++) {
		const u8 *p = s->b + s->off[i];

		if (s->bad[i] || (i + 1 < s->nins && s->bad[i + 1]))
			continue;
		st_ins++;
		ret = insn_decode(&insn, p, 16, INSN_MODE_64);
		/* objdump shows fwait + fnstcw & co. as one "fstcw": two insns */
		if (!ret && p[0] == 0x9b && insn.length == 1 && s->len[i] > 1) {
			st_fwait++;
			continue;
		}
		/*
		 * ...and prefixes it cannot attach (a REX that is not the last
		 * prefix, prefixes before fwait) as an insn of their own: the
		 * CPU ignores such a REX, we refuse it (-EINVAL), and in
		 * practice these are data bytes in .text.
		 */
		if (all_prefixes(p, s->len[i])) {
			st_rexsplit++;
			continue;
		}
		if (ret || insn.length != s->len[i]) {
			char h[64];

			/* garbage in .text: fine as long as we refuse it */
			if (analyze_bytes(&au, p, 15, false)) {
				st_mismatch_refused++;
				continue;
			}
			st_mismatch++;
			fmt_hex(h, p, s->len[i]);
			if (st_mismatch <= 40)
				printf("length: %s: %#lx %s objdump %d decoder %d (ret %d)\n",
				       cur_file, s->start + s->off[i], h, s->len[i],
				       ret ? -1 : insn.length, ret);
			continue;
		}
		ret = analyze_bytes(&au, p, s->len[i], false);
		if (ret == -EINVAL) {
			st_einval++;
		} else if (ret) {
			st_enotsupp++;
		} else if (PL(&au, false)->exec == AUP_EMULATE) {
			st_emul++;
			st_emul_kind[PL(&au, false)->emul & 15]++;
		} else {
			st_step++;
			st_boost += PL(&au, false)->boostable;
		}
		if (!ret && (PL(&au, false)->fixups & AUP_FIX_SCRATCH))
			st_riprel++;
	}
	s->n = 0;
	s->nins = 0;
}

static struct stream stream;

static void read_listing(void (*flush)(struct stream *s))
{
	char line[1024];
	struct oline o;
	struct stream *s = &stream;

	while (fgets(line, sizeof(line), stdin)) {
		char *ff = strstr(line, ":     file format ");

		if (ff) {
			if (s->nins)
				flush(s);
			*ff = 0;
			snprintf(cur_file, sizeof(cur_file), "%.200s", line);
		}
		/* other lines (labels) do not break the byte stream */
		if (!parse_oline(line, &o))
			continue;
		if (s->nins && (o.addr != s->start + s->n || s->nins == STREAM_MAX ||
				s->n + o.n > STREAM_MAX))
			flush(s);
		if (!s->nins)
			s->start = o.addr;
		s->off[s->nins] = s->n;
		s->len[s->nins] = o.n;
		s->bad[s->nins] = o.bad;
		memcpy(s->b + s->n, o.b, o.n);
		s->n += o.n;
		memset(s->b + s->n, 0, 16);
		s->nins++;
	}
	if (s->nins)
		flush(s);
}

static int do_objdump(void)
{
	int i;

	read_listing(check_stream);
	printf("instructions %lu, length mismatches %lu (and %lu that we refuse; objdump shows\n"
	       "%lu fwait + x87 as one, %lu prefix-only lines), EINVAL %lu, ENOTSUPP %lu,\n"
	       "emulated %lu, stepped %lu (RIP-relative rewritten %lu, boostable %lu)\n",
	       st_ins, st_mismatch, st_mismatch_refused, st_fwait, st_rexsplit, st_einval,
	       st_enotsupp, st_emul, st_step, st_riprel, st_boost);
	printf("emulations:");
	for (i = 1; i < 16; i++)
		if (st_emul_kind[i])
			printf(" %d:%lu", i, st_emul_kind[i]);
	printf("\n");
	return st_mismatch ? 1 : 0;
}

/* ------------------------------------------------- native differential */

/*
 * Fixed layout, far from everything else in the process, so that stray
 * memory operands fault instead of corrupting the test:
 *   CODE	the probed instruction at CODE_V, the rest of the page int3
 *   SLOT_*	an XOL page near CODE (rel32 reach) and one 64 GiB away
 *   DATA	RW, not executable: memory operands, stacks, pointers
 */
#define CODE_SIZE	0x10000UL
#define DATA_SIZE	0x40000UL
#define SLOT_SIZE	0x1000UL

/**
 * struct layout - where one mode's differential runs happen
 * @ia32: run in 32-bit (compat) mode, everything below 4 GiB
 * @code: CODE
 * @code_v: the probed instruction's address
 * @data: DATA
 * @slot_near: XOL page within rel32 reach of @code_v
 * @slot_far: XOL page out of rel32 reach (in 32-bit mode: anywhere else)
 */
struct layout {
	bool ia32;
	unsigned long code, code_v, data, slot_near, slot_far;
};

static const struct layout lay64 = {
	.ia32 = false,
	.code = 0x500000000000UL, .code_v = 0x500000008000UL, .data = 0x500000100000UL,
	.slot_near = 0x500000200000UL, .slot_far = 0x501000000000UL,
};

static const struct layout lay32 = {
	.ia32 = true,
	.code = 0x40000000UL, .code_v = 0x40008000UL, .data = 0x40100000UL,
	.slot_near = 0x40200000UL, .slot_far = 0xe0000000UL,
};

static const struct layout *L = &lay64;

#define CODE		(L->code)
#define CODE_V		(L->code_v)
#define DATA		(L->data)
#define SLOT_NEAR	(L->slot_near)
#define SLOT_FAR	(L->slot_far)

struct cpu {
	unsigned long gpr[16];
	unsigned long ip, flags;
	u8 xmm[16][16];
};

struct outcome {
	int signo;		/* 0: completed at ip; else fault at ip */
	int code;
	unsigned long addr;
	struct cpu cpu;
};

static const int greg_of[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

static const struct cpu *launch_cpu;
static struct outcome trap_out;
static sigjmp_buf trap_jb;

static void launch_handler(int sig, siginfo_t *si, void *ctx)
{
	static const u32 magic = 0x46505853;	/* FP_XSTATE_MAGIC1 */
	ucontext_t *uc = ctx;
	u8 *fx = (u8 *)uc->uc_mcontext.fpregs;
	int i;

	for (i = 0; i < 16; i++)
		uc->uc_mcontext.gregs[greg_of[i]] = launch_cpu->gpr[i];
	uc->uc_mcontext.gregs[REG_RIP] = launch_cpu->ip;
	uc->uc_mcontext.gregs[REG_EFL] = launch_cpu->flags;
	uc->uc_mcontext.gregs[REG_CSGSFS] &= ~0xffffUL;
	uc->uc_mcontext.gregs[REG_CSGSFS] |= L->ia32 ? __USER32_CS : __USER_CS;
	memcpy(uc->uc_mcontext.fpregs->_xmm, launch_cpu->xmm, sizeof(launch_cpu->xmm));
	/* upper halves of ymm/zmm and the opmasks: back to their init state */
	if (!memcmp(fx + 464, &magic, 4))
		fx[512] &= ~0xe4;	/* XSTATE_BV: YMM, opmask, ZMM */
}

static void trap_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	int i;

	trap_out.signo = sig;
	trap_out.code = si->si_code;
	trap_out.addr = (unsigned long)si->si_addr;
	for (i = 0; i < 16; i++)
		trap_out.cpu.gpr[i] = uc->uc_mcontext.gregs[greg_of[i]];
	trap_out.cpu.ip = uc->uc_mcontext.gregs[REG_RIP];
	trap_out.cpu.flags = uc->uc_mcontext.gregs[REG_EFL];
	memcpy(trap_out.cpu.xmm, uc->uc_mcontext.fpregs->_xmm, sizeof(trap_out.cpu.xmm));
	siglongjmp(trap_jb, 1);
}

/* Run from @in until the first signal; returns it in trap_out. */
static void run_cpu(const struct cpu *in)
{
	launch_cpu = in;
	if (!sigsetjmp(trap_jb, 1)) {
		alarm(2);
		raise(SIGUSR1);
		/* not reached: the launch returns into the test code */
		abort();
	}
	alarm(0);
	asm volatile("fninit");
	__builtin_ia32_ldmxcsr(0x1f80);
}

static void map_layout(const struct layout *l)
{
	const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS |
							   MAP_FIXED_NOREPLACE;
	const struct {
		unsigned long addr, size;
		int prot;
	} m[] = {
		{ l->code, CODE_SIZE, prot | PROT_EXEC }, { l->data, DATA_SIZE, prot },
		{ l->slot_near, SLOT_SIZE, prot | PROT_EXEC },
		{ l->slot_far, SLOT_SIZE, prot | PROT_EXEC },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(m); i++) {
		if (mmap((void *)m[i].addr, m[i].size, m[i].prot, flags, -1, 0) !=
		    (void *)m[i].addr) {
			perror("mmap");
			exit(2);
		}
	}
}

static void use_layout(const struct layout *l)
{
	L = l;
	umem_lo = l->data;
	umem_hi = l->data + DATA_SIZE;
}

static void setup_native(void)
{
	static u8 altstack[65536];
	struct sigaction sa = { .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	static const int sigs[] = { SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGALRM };
	unsigned int i;

	if (!die_nb)
		aup_test_initcall();
	map_layout(&lay64);
	map_layout(&lay32);
	sigaltstack(&ss, NULL);
	sa.sa_sigaction = trap_handler;
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	sa.sa_sigaction = launch_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	use_layout(&lay64);
}

static u64 rng_state = 88172645463325252ULL;

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static u8 data_init[DATA_SIZE], data_native[DATA_SIZE];
static struct cpu cpu_init;

static void random_state(void)
{
	static const unsigned long arith = X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF |
					   X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF;
	unsigned int i;

	for (i = 0; i < DATA_SIZE; i += 8) {
		u64 v = rnd();

		/* some words are pointers into DATA, for pops and indirections */
		if (!(v & 7))
			v = DATA + (v >> 8) % DATA_SIZE;
		if (L->ia32 && (v & 0x10))
			v = (v & 0xffffffff) | (u64)(DATA + (v >> 40) % DATA_SIZE) << 32;
		memcpy(data_init + i, &v, 8);
	}
	for (i = 0; i < 16; i++) {
		u64 v = rnd();

		cpu_init.gpr[i] = (v & 3) ? DATA + 0x1000 + (v >> 8) % (DATA_SIZE - 0x2000) :
					    (v >> 8) & 0xff;
		if (L->ia32 && i >= 8)
			cpu_init.gpr[i] = 0;
	}
	cpu_init.gpr[4] = DATA + DATA_SIZE / 2 + ((rnd() % 64) * 16);
	cpu_init.flags = 0x202 | (rnd() & arith);
	for (i = 0; i < 16; i++) {
		u64 a = rnd(), b = rnd();

		memcpy(cpu_init.xmm[i], &a, 8);
		memcpy(cpu_init.xmm[i] + 8, &b, 8);
	}
	cpu_init.ip = CODE_V;
}

static void cs_of(struct pt_regs *r)
{
	r->cs = L->ia32 ? __USER32_CS : __USER_CS;
}

static void cpu_to_regs(const struct cpu *c, struct pt_regs *r)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < 16; i++)
		*aup_regp(r, i) = c->gpr[i];
	r->ip = c->ip;
	r->flags = c->flags;
	r->cs = L->ia32 ? __USER32_CS : __USER_CS;
	r->ss = __USER_DS;
}

static void regs_to_cpu(const struct pt_regs *r, struct cpu *c)
{
	unsigned int i;

	for (i = 0; i < 16; i++)
		c->gpr[i] = *aup_regp((struct pt_regs *)r, i);
	c->ip = r->ip;
	c->flags = r->flags;
}

/* Native run: a fault inside the insn, or completion (int3 or fetch fault after). */
static void native_outcome(struct outcome *o)
{
	run_cpu(&cpu_init);
	*o = trap_out;
	if (getenv("AUP_DEBUG"))
		printf("native: sig %d code %d addr %#lx ip %#lx, code %02x %02x %02x %02x\n",
		       o->signo, o->code, o->addr, o->cpu.ip, ((u8 *)CODE_V)[0],
		       ((u8 *)CODE_V)[1], ((u8 *)CODE_V)[2], ((u8 *)CODE_V)[3]);
	if (o->signo == SIGTRAP && o->code == SI_KERNEL) {
		o->cpu.ip--;
		o->signo = 0;
	} else if (o->signo != SIGALRM && o->cpu.ip != CODE_V) {
		o->signo = 0;		/* done; the next fetch faulted */
	}
}

static int nr_fuzz_runs, nr_fuzz_fail, nr_fuzz_skip, nr_fuzz_again;
static int nr_fuzz_done, nr_fuzz_fault, nr_fuzz_emul, nr_fuzz_declined, nr_fuzz_guard;

/* Stepped: the slot, pre_xol, a real TF step, post_xol or abort_xol. */
static bool step_outcome(struct arch_uprobe *au, unsigned long slot, struct outcome *o)
{
	const struct arch_uprobe_plan *p = PL(au, L->ia32);
	unsigned long copy = slot + (L->ia32 ? AUP_HALF : 0);
	struct pt_regs r;
	int ret, n;

	memset((void *)slot, 0, SLOT_SIZE);
	cpu_to_regs(&cpu_init, &r);
	ret = arch_uprobe_fill_slot(au, (void *)slot, slot, CODE_V);
	if (ret != UPROBE_XOL_SLOT_BYTES)
		return false;
	/* stray jumps into the rest of the slot page trap */
	memset((void *)slot + ret, 0xcc, SLOT_SIZE - ret);
	test_utask.vaddr = CODE_V;
	test_utask.xol_vaddr = slot;
	test_utask.auprobe = au;
	test_utask.state = UTASK_SSTEP;
	test_task.thread.trap_nr = 0;
	if (arch_uprobe_pre_xol(au, &r))
		return false;
	memset(o, 0, sizeof(*o));
	for (n = 0; n < 100000; n++) {
		struct cpu c;

		regs_to_cpu(&r, &c);
		memcpy(c.xmm, n ? trap_out.cpu.xmm : cpu_init.xmm, sizeof(c.xmm));
		run_cpu(&c);
		for (int i = 0; i < 16; i++)
			*aup_regp(&r, i) = trap_out.cpu.gpr[i];
		r.ip = trap_out.cpu.ip;
		r.flags = trap_out.cpu.flags;
		memcpy(o->cpu.xmm, trap_out.cpu.xmm, sizeof(o->cpu.xmm));
		/* the guard int3, as the DIE_INT3 notifier sees it */
		if (trap_out.signo == SIGTRAP && trap_out.code == SI_KERNEL &&
		    r.ip == copy + p->xol_len + 1) {
			struct die_args args = { .regs = &r };

			cs_of(&r);
			sstep_done_ret = true;
			if (die_nb->notifier_call(die_nb, DIE_INT3, &args) != NOTIFY_STOP ||
			    r.ip != copy + p->xol_len) {
				printf("guard not taken\n");
				return false;
			}
			sstep_done_ret = false;
			nr_fuzz_guard++;
		}
		if ((trap_out.signo == SIGTRAP && trap_out.code == TRAP_TRACE) ||
		    r.ip == copy + p->xol_len) {
			ret = arch_uprobe_post_xol(au, &r);
			if (ret == -EAGAIN) {
				nr_fuzz_again++;
				continue;
			}
			if (ret) {
				printf("post_xol %d at %#lx\n", ret, r.ip);
				return false;
			}
			o->signo = 0;
			break;
		}
		if (trap_out.signo == SIGALRM) {
			o->signo = SIGALRM;
			return true;
		}
		if (trap_out.cpu.ip < copy || trap_out.cpu.ip >= copy + p->xol_len) {
			printf("signal %d outside the slot at %#lx\n", trap_out.signo,
			       trap_out.cpu.ip);
			return false;
		}
		test_task.thread.trap_nr = 14;
		CHECK(arch_uprobe_xol_was_trapped(&test_task), "trapped");
		arch_uprobe_abort_xol(au, &r);
		o->signo = trap_out.signo;
		o->code = trap_out.code;
		o->addr = trap_out.addr;
		/* #DE, #UD: the core's uprobe_get_trap_addr() reports vaddr */
		if ((o->signo == SIGFPE || o->signo == SIGILL) && o->addr == copy)
			o->addr = CODE_V;
		break;
	}
	if (n == 100000)
		o->signo = SIGALRM;	/* too long: not compared */
	regs_to_cpu(&r, &o->cpu);
	return true;
}

static bool same_outcome(const struct outcome *a, const struct outcome *b, char *why)
{
	const unsigned long fmask = ~(X86_EFLAGS_RF | X86_EFLAGS_TF);
	int i;

	if (a->signo != b->signo) {
		sprintf(why, "signal %d vs %d", a->signo, b->signo);
		return false;
	}
	if (a->signo && a->addr != b->addr) {
		sprintf(why, "si_addr %#lx vs %#lx", a->addr, b->addr);
		return false;
	}
	if (a->cpu.ip != b->cpu.ip) {
		sprintf(why, "ip %#lx vs %#lx", a->cpu.ip, b->cpu.ip);
		return false;
	}
	if ((a->cpu.flags ^ b->cpu.flags) & fmask) {
		sprintf(why, "flags %#lx vs %#lx", a->cpu.flags, b->cpu.flags);
		return false;
	}
	for (i = 0; i < 16; i++) {
		if (L->ia32 && (i >= 8 || (u32)a->cpu.gpr[i] == (u32)b->cpu.gpr[i]))
			continue;
		if (a->cpu.gpr[i] != b->cpu.gpr[i]) {
			sprintf(why, "reg %d %#lx vs %#lx", i, a->cpu.gpr[i], b->cpu.gpr[i]);
			return false;
		}
	}
	if (memcmp(a->cpu.xmm, b->cpu.xmm, sizeof(a->cpu.xmm) / (L->ia32 ? 2 : 1))) {
		sprintf(why, "xmm");
		return false;
	}
	if (memcmp((void *)DATA, data_native, DATA_SIZE)) {
		for (i = 0; i < (int)DATA_SIZE; i++)
			if (((u8 *)DATA)[i] != data_native[i])
				break;
		sprintf(why, "memory at %#lx", DATA + i);
		return false;
	}
	return true;
}

/*
 * Instructions whose result is not a function of the state, or that would
 * change the test process itself.
 */
static bool fuzz_skip(const struct arch_uprobe *au)
{
	struct aup_decoded d = { };

	insn_decode(&d.insn, au->insn, 16, L->ia32 ? INSN_MODE_32 : INSN_MODE_64);
	aup_scan(&d);
	if (d.fsgs)					/* TLS */
		return true;
	if (d.vex)
		return false;
	if (d.map == 0)
		return !L->ia32 && d.op >= 0xa0 && d.op <= 0xa3;	/* moffs64 */
	if (d.map != 1)
		return false;
	switch (d.op) {
	case 0x01:	/* rdtscp, rdpkru/wrpkru, clui/stui, ... */
		return aup_mod(&d) == 3;
	case 0x31: case 0x33: case 0xa2:		/* rdtsc, rdpmc, cpuid */
		return true;
	case 0xae:	/* wr/rd fs/gs base, umonitor/umwait/tpause; xrstor (PKRU) */
		return aup_mod(&d) == 3 || aup_modreg(&d) == 5;
	case 0xc7:				/* rdrand, rdseed, rdpid; xrstors */
		return aup_mod(&d) == 3 || aup_modreg(&d) == 3;
	}
	return false;
}

static u8 fuzz_seen[1 << 20];

static bool seen_before(const u8 *b, int n)
{
	u32 h = 2166136261u;
	int i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	h &= BIT(23) - 1;
	if (fuzz_seen[h >> 3] & BIT(h & 7))
		return true;
	fuzz_seen[h >> 3] |= BIT(h & 7);
	return false;
}

static int fuzz_states = 2;

static void report(const char *what, const struct arch_uprobe *au, const char *why)
{
	char h[64];

	fmt_hex(h, au->insn, PL((struct arch_uprobe *)au, L->ia32)->len);
	nr_fuzz_fail++;
	if (nr_fuzz_fail <= 60)
		printf("MISMATCH %-6s %-34s %s\n", what, h, why);
}

static void fuzz_one(const u8 *p, int len)
{
	const enum insn_mode mode = L->ia32 ? INSN_MODE_32 : INSN_MODE_64;
	struct arch_uprobe au;
	struct outcome nat, sim;
	struct insn insn;
	struct pt_regs r;
	char why[128];
	u8 b[16] = { 0 }, key[17];
	int k, n;

	memcpy(b, p, len);
	if (analyze_bytes(&au, b, len, L->ia32) || fuzz_skip(&au))
		return;
	/* objdump's fstcw & co. are fwait + fnstcw: run what we decoded */
	len = PL(&au, L->ia32)->len;
	memset(b + len, 0, sizeof(b) - len);
	/* a branch into its own bytes runs on natively: nothing to compare */
	if ((PL(&au, L->ia32)->fixups & AUP_FIX_RELBR) && PL(&au, L->ia32)->rel < 0 &&
	    PL(&au, L->ia32)->rel > -len)
		return;
	insn_decode(&insn, b, 16, mode);
	if (insn.modrm.nbytes && X86_MODRM_MOD(insn.modrm.bytes[0]) == 0 &&
	    X86_MODRM_RM(insn.modrm.bytes[0]) == 5 && insn.addr_bytes != 2) {
		/* point a RIP-relative (64) or absolute (32) operand into DATA */
		unsigned long target = DATA + 0x100 + (rnd() % (DATA_SIZE - 0x300)) / 64 * 64;
		s32 disp = L->ia32 ? target : target - (CODE_V + len);

		memcpy(b + insn_offset_displacement(&insn), &disp, 4);
		if (analyze_bytes(&au, b, len, L->ia32))
			return;
	}
	/* one run per shape: mode, prefixes, opcode, ModRM, SIB (not disp/imm) */
	n = insn_offset_displacement(&insn);
	memcpy(key, b, n);
	key[n] = len | (L->ia32 ? 0x80 : 0);
	if (seen_before(key, n + 1))
		return;

	for (k = 0; k < fuzz_states; k++) {
		random_state();
		memset((void *)CODE, 0xcc, CODE_SIZE);
		memcpy((void *)CODE_V, b, len);

		memcpy((void *)DATA, data_init, DATA_SIZE);
		native_outcome(&nat);
		memcpy(data_native, (void *)DATA, DATA_SIZE);
		nr_fuzz_runs++;
		if (nat.signo)
			nr_fuzz_fault++;
		else
			nr_fuzz_done++;
		if (nat.signo == SIGALRM) {
			nr_fuzz_skip++;
			return;
		}

		if (PL(&au, L->ia32)->exec == AUP_EMULATE) {
			memcpy((void *)DATA, data_init, DATA_SIZE);
			cpu_to_regs(&cpu_init, &r);
			if (arch_uprobe_emulate(&au, &r)) {
				nr_fuzz_emul++;
				memset(&sim, 0, sizeof(sim));
				regs_to_cpu(&r, &sim.cpu);
				memcpy(sim.cpu.xmm, cpu_init.xmm, sizeof(sim.cpu.xmm));
				if (!same_outcome(&nat, &sim, why)) {
					report("emul", &au, why);
					if (getenv("AUP_DEBUG"))
						printf("  in: cx %#lx flags %#lx; native cx %#lx\n",
						       cpu_init.gpr[1], cpu_init.flags,
						       nat.cpu.gpr[1]);
				}
			} else if (nr_fuzz_declined++, !nat.signo &&
				   nat.cpu.ip >= CODE && nat.cpu.ip < CODE + CODE_SIZE) {
				report("emul", &au, "declined, native completed");
			}
		}

		memcpy((void *)DATA, data_init, DATA_SIZE);
		if (!step_outcome(&au, k & 1 ? SLOT_FAR : SLOT_NEAR, &sim)) {
			report("step", &au, "did not complete");
			continue;
		}
		if (sim.signo == SIGALRM)
			continue;
		if (!same_outcome(&nat, &sim, why))
			report(k & 1 ? "stepF" : "step", &au, why);
	}
}

static void fuzz_stream(struct stream *s)
{
	int i;

	for (i = 0; i < s->nins; i++)
		if (!s->bad[i])
			fuzz_one(s->b + s->off[i], s->len[i]);
	s->n = 0;
	s->nins = 0;
}

/* Hand-picked instructions, run in the same way as the listing's. */
static const char * const fuzz_extra[] = {
	"90", "55", "41 57", "6a 80", "68 00 00 00 80", "9c", "66 9c", "48 89 e5", "89 c8",
	"4c 8b c1", "48 8d 04 8b", "4a 8d 44 a5 f8", "8d 04 25 00 00 00 80",
	"48 8d 05 00 00 00 00", "8d 05 00 00 00 00", "eb 10", "e9 00 01 00 00",
	"e8 00 01 00 00", "e2 10", "e1 10", "e0 10", "e3 10", "67 e3 10", "c3", "c2 10 00",
	"ff d0", "ff e1", "ff 25 00 00 00 00", "ff 15 00 00 00 00", "ff 35 00 00 00 00",
	"8f 05 00 00 00 00", "48 8b 05 00 00 00 00", "48 89 35 00 00 00 00",
	"48 0f c7 0d 00 00 00 00", "0f c7 0d 00 00 00 00", "48 f7 25 00 00 00 00",
	"48 f7 35 00 00 00 00", "48 d3 25 00 00 00 00", "48 0f b1 0d 00 00 00 00",
	"66 0f 3a 61 05 00 00 00 00 00", "c4 e2 cb f6 05 00 00 00 00",
	"c4 e2 c0 f2 35 00 00 00 00", "c5 fd 6f 05 00 00 00 00", "c4 c1 78 28 05 00 00 00 00",
	"f3 a4", "f3 48 ab", "f2 ae", "f3 a6", "a5", "48 f7 f1", "c8 10 00 01", "c9",
	"0f 1f 44 00 00", "f3 0f 1e fa", "0f 01 d0", "48 01 c8", "48 0f af 05 00 00 00 00",
	"0f ae 05 00 00 00 00", "0f ae 1d 00 00 00 00", "48 87 05 00 00 00 00",
	"86 25 00 00 00 00", "40 86 35 00 00 00 00", "0f 18 05 00 00 00 00",
	"66 0f 38 f8 05 00 00 00 00", "f2 74 10", "f2 75 10", "2e 74 10", "3e 75 10",
	"f2 0f 84 00 01 00 00", "3e 0f 85 00 01 00 00", "f2 e9 00 01 00 00", "f2 e8 00 01 00 00",
	"48 e9 00 01 00 00", "48 e8 00 01 00 00", "48 74 10", "f2 eb 10", "f2 c3", "f3 c3",
	"3e ff d0", "3e ff e1", "f2 ff d0", "f2 ff 25 00 00 00 00", "3e ff 15 00 00 00 00",
	"f2 e1 10", "f3 e1 10", "f2 e0 10", "f3 e2 10", "f2 e3 10", "67 e2 10",
	"0f 1f 05 00 00 00 00", "66 2e 0f 1f 84 00 00 00 00 00", "f3 90", "48 90", "66 90",
	"41 90",
};

/* ...and in 32-bit mode */
static const char * const fuzz_extra32[] = {
	"90", "55", "57", "6a 80", "68 00 00 00 80", "9c", "66 9c", "89 e5", "8b c1",
	"8d 04 8b", "8d 44 a5 f8", "8d 05 00 00 00 00", "eb 10", "e9 00 01 00 00",
	"e8 00 01 00 00", "e2 10", "e1 10", "e0 10", "e3 10", "c3", "c2 10 00", "ff d0",
	"ff e1", "ff 25 00 00 00 00", "ff 15 00 00 00 00", "ff 35 00 00 00 00",
	"8f 05 00 00 00 00", "8b 05 00 00 00 00", "89 35 00 00 00 00", "0f c7 0d 00 00 00 00",
	"f7 25 00 00 00 00", "f3 a4", "f3 ab", "f2 ae", "f7 f1", "c8 10 00 01", "c9", "40",
	"4f", "60", "61", "27", "2f", "37", "3f", "d4 0a", "d5 0a", "62 05 00 00 00 00",
	"c5 f8 28 c1", "0f 1f 44 00 00", "f3 0f 1e fb", "66 e8 00 00", "a1 00 00 00 00",
};

/* Random encodings (some with prefixes or escapes) in the current mode. */
static void fuzz_random(int count)
{
	static const u8 pfx[] = { 0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x64, 0x41, 0x48, 0x4c };
	u8 b[16];
	int i, j, n;

	for (i = 0; i < count; i++) {
		u64 r = rnd();

		for (j = 0; j < 16; j += 8) {
			u64 v = rnd();

			memcpy(b + j, &v, 8);
		}
		n = 0;
		if (r & 1)
			b[n++] = pfx[(r >> 8) % ARRAY_SIZE(pfx)];
		if ((r & 6) == 2)
			b[n++] = 0x0f;
		if ((r & 0x30) == 0x10)
			b[n++] = 0xc5;		/* VEX2 */
		if (L->ia32 && n && b[n - 1] >= 0x40 && b[n - 1] <= 0x4f)
			continue;		/* inc/dec, not REX */
		fuzz_one(b, 16);
	}
}

static int do_fuzz(int states, bool listing, int nrandom)
{
	unsigned int i;
	u8 b[16];
	int n;

	fuzz_states = states;
	setup_native();
	for (i = 0; i < ARRAY_SIZE(fuzz_extra); i++) {
		n = parse_hex(fuzz_extra[i], b, 15);
		fuzz_one(b, n);
	}
	if (listing)
		read_listing(fuzz_stream);
	fuzz_random(nrandom);
	use_layout(&lay32);
	for (i = 0; i < ARRAY_SIZE(fuzz_extra32); i++) {
		n = parse_hex(fuzz_extra32[i], b, 15);
		fuzz_one(b, n);
	}
	fuzz_random(nrandom);
	use_layout(&lay64);
	printf("fuzz: %d runs (native: %d completed, %d faulted; %d emulated, %d declined),\n"
	       "      %d mismatches, %d timeouts skipped, %d rep restarts, %d guard ends\n",
	       nr_fuzz_runs, nr_fuzz_done, nr_fuzz_fault, nr_fuzz_emul, nr_fuzz_declined,
	       nr_fuzz_fail, nr_fuzz_skip, nr_fuzz_again, nr_fuzz_guard);
	return nr_fuzz_fail ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "objdump"))
		return do_objdump();
	if (argc > 1 && !strcmp(argv[1], "fuzz"))
		return do_fuzz(argc > 2 ? atoi(argv[2]) : 2, true, 0);
	if (argc > 3)
		rng_state = strtoull(argv[3], NULL, 0) | 1;
	if (argc > 1 && !strcmp(argv[1], "random"))
		return do_fuzz(2, false, argc > 2 ? atoi(argv[2]) : 100000);

	test_table();
	test_jcc();
	test_emulate();
	test_step();
	test_uretprobe();
	test_notifiers();
	test_watchpoint();
	test_blockstep_no_tf();
	test_verdicts();
	printf("table: %zu cases, %d failures\n", ARRAY_SIZE(cases), failures);
	if (failures)
		return 1;
	return do_fuzz(2, false, 2000);
}
