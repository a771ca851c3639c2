// SPDX-License-Identifier: GPL-2.0+
/*
 * User-space test of arch/x86/kernel/uprobes/, whose files are
 * included unchanged on top of the shims in shim/ (the core's hooks, the
 * hardware-breakpoint report and the vDSO are stubs that record their
 * calls; see "shim state" below).
 *
 *   aup_test			table of encodings: class, length, fix-ups,
 *				rewritten copy; unit tests of the emulation
 *				(and the accesses it shows to watchpoints),
 *				the booster, the step and its fix-ups (TF,
 *				pushf, block-step, watchpoints, notifiers),
 *				the verdicts per mm mode, and return probes
 *				(return address, trampoline, vDSO stubs,
 *				sys_uretprobe(); the trampoline also on the
 *				CPU); then the differential test below of
 *				hand-picked and 2000 random encodings per mode
 *   aup_test objdump < dump	decode every instruction boundary of an
 *				"objdump -d --insn-width=16" listing: length
 *				agreement with objdump, and class counts
 *   aup_test fuzz N < dump	differential test on the host CPU: every
 *				distinct probeable instruction of the listing
 *				and the hand-picked ones (N random
 *				register/memory states each) runs natively at
 *				its address, and through our emulation (if
 *				emulated; the data accesses it shows to the
 *				watchpoints must cover what it wrote), our
 *				out-of-line step (a copy in a slot elsewhere,
 *				pre_xol, a real TF step, the #DB notifier,
 *				post_xol or abort_xol) and, if boostable, our
 *				boost (the copy and its jump back, run with no
 *				trap); the registers, flags, xmm registers,
 *				memory and faults must be the same.
 *   aup_test random N [seed]	the same for N random encodings per mode
 *
 * "make check" runs the first and the third over a fixed set of host
 * binaries (see the Makefile).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "../../../arch/x86/kernel/uprobes/decode.c"
#include "../../../arch/x86/kernel/uprobes/emulate.c"
#include "../../../arch/x86/kernel/uprobes/xol.c"
#include "../../../arch/x86/kernel/uprobes/return.c"
#include "../../../arch/x86/kernel/uprobes/jump.c"

/* ---------------------------------------------------------- shim state */

static struct uprobe_task test_utask;
static struct vdso_image test_vdso_image;
static struct mm_struct test_mm = { .context.vdso_image = &test_vdso_image };
static struct task_struct test_task = { .utask = &test_utask, .mm = &test_mm };
struct task_struct *aup_test_current = &test_task;
struct cpuinfo_x86 boot_cpu_data = { .x86_virt_bits = 48 };
unsigned long cpu_dr7;
bool aup_test_ia32_syscall;

static int nr_sigtrap, nr_blockstep_on, nr_blockstep_off;
static unsigned long sigtrap_ip;
static int nr_int3_hit, nr_sstep_done, nr_leave_boosted;
static bool int3_hit_ret, sstep_done_ret;
static unsigned long sstep_done_ip, leave_boosted_ip;

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

/* The core's hooks: recorded, with the verdict the test chooses. */
bool uprobe_hit_in_trap(struct pt_regs *regs)
{
	nr_int3_hit++;
	return int3_hit_ret;
}

int uprobe_post_sstep_notifier(struct pt_regs *regs)
{
	nr_sstep_done++;
	sstep_done_ip = regs->ip;
	if (sstep_done_ret)
		test_utask.state = UTASK_SSTEP_ACK;
	return sstep_done_ret;
}

bool uprobe_leave_boosted_copy(struct pt_regs *regs)
{
	nr_leave_boosted++;
	leave_boosted_ip = regs->ip;
	return false;
}

/* The core's default. */
unsigned long uprobe_get_swbp_addr(struct pt_regs *regs)
{
	return instruction_pointer(regs) - UPROBE_SWBP_INSN_SIZE;
}

static bool from_trampoline_ret;
static int nr_handle_return;
static unsigned long handle_return_frame;
static struct pt_regs *test_syscall_regs;

bool uprobe_syscall_from_trampoline(struct pt_regs *regs)
{
	return from_trampoline_ret;
}

void uprobe_handle_return(struct pt_regs *regs, unsigned long frame)
{
	nr_handle_return++;
	handle_return_frame = frame;
}

/* The system calls mark themselves for the exit path: counted here. */
static int nr_syscall_unseen;

void uprobe_syscall_unseen(void)
{
	nr_syscall_unseen++;
}

struct pt_regs *current_pt_regs(void)
{
	return test_syscall_regs;
}

/* Jump sites: the stub the test says is in use, and the hit it records. */
static unsigned long stub_in_use, stub_site_vaddr;
static int nr_stub_hit;
static unsigned long stub_hit_vaddr;
static struct pt_regs stub_hit_regs;

unsigned long uprobe_stub_site(unsigned long stub)
{
	return stub && stub == stub_in_use ? stub_site_vaddr : 0;
}

void uprobe_stub_hit(struct pt_regs *regs, unsigned long vaddr)
{
	nr_stub_hit++;
	stub_hit_vaddr = vaddr;
	stub_hit_regs = *regs;
	regs->ip = vaddr + 5;
}

int uprobe_pre_sstep_notifier(struct pt_regs *regs)
{
	return 1;
}

static struct mm_struct *zapped_mm;

void vdso_uretprobe_table_zap(struct mm_struct *mm)
{
	zapped_mm = mm;
}

/*
 * Data breakpoints: one armed breakpoint (DR0-like; write-only or
 * read/write), matched as hw_breakpoint_user_access() matches; a ptrace
 * one sets its bit in virtual_dr6 as ptrace's overflow handler does. Every
 * access reported is recorded.
 */
static struct {
	unsigned long addr;
	unsigned int len;
	bool write_only;
	bool ptrace;
	bool armed;
} wp;

#define MAX_ACCESSES	8

static struct {
	unsigned long addr;
	unsigned int len;
	bool write;
} accesses[MAX_ACCESSES];
static int nr_accesses;

bool hw_breakpoint_user_access(struct pt_regs *regs, unsigned long addr,
			       unsigned int len, bool write)
{
	if (nr_accesses < MAX_ACCESSES) {
		accesses[nr_accesses].addr = addr;
		accesses[nr_accesses].len = len;
		accesses[nr_accesses].write = write;
	}
	nr_accesses++;
	if (!wp.armed || (wp.write_only && !write) ||
	    addr > wp.addr + wp.len - 1 || addr + len - 1 < wp.addr)
		return false;
	if (wp.ptrace)
		current->thread.virtual_dr6 |= DR_TRAP0;
	return true;
}

/*
 * "User memory": one window of real memory; anything else faults, and so do
 * writes while umem_ro is set.
 */
static unsigned long umem_lo, umem_hi;
static bool umem_ro;

int aup_test_put(void *addr, u64 val, unsigned int size)
{
	unsigned long a = (unsigned long)addr;

	if (umem_ro || a < umem_lo || a + size > umem_hi)
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

static int failures, nr_checks;

#define CHECK(cond, ...)						\
	do {								\
		nr_checks++;						\
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
	EM("0f 1f 00", AUP_EM_NOPL, IP),
	EM("0f 1f 40 00", AUP_EM_NOPL, IP),
	EM("0f 1f 44 00 00", AUP_EM_NOPL, IP),
	EM("66 0f 1f 44 00 00", AUP_EM_NOPL, IP),
	EM("0f 1f 80 00 00 00 00", AUP_EM_NOPL, IP),
	EM("66 2e 0f 1f 84 00 00 00 00 00", AUP_EM_NOPL, IP),
	EM("66 66 2e 0f 1f 84 00 00 00 00 00", AUP_EM_NOPL, IP),
	RIPE("0f 1f 05 00 00 00 00", AUP_EM_NOPL, IP, 6, "0f 1f 86 00 00 00 00"),
	EM("f3 0f 1e fa", AUP_EM_NOPL, IP),		/* endbr64 */
	EM("f3 0f 1e fb", AUP_EM_NOPL, IP),		/* endbr32 */
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
	EM("ff d0", AUP_EM_CALL_REG, AUP_FIX_CALL | AUP_FIX_BRANCH),
	EM("41 ff d3", AUP_EM_CALL_REG, AUP_FIX_CALL | AUP_FIX_BRANCH),
	EM("ff 10", AUP_EM_CALL_IND, AUP_FIX_CALL | AUP_FIX_BRANCH),
	EM("ff 54 24 08", AUP_EM_CALL_IND, AUP_FIX_CALL | AUP_FIX_BRANCH),
	EM("41 ff 54 24 08", AUP_EM_CALL_IND, AUP_FIX_CALL | AUP_FIX_BRANCH),
	EM("ff 14 c5 00 10 00 00", AUP_EM_CALL_IND, AUP_FIX_CALL | AUP_FIX_BRANCH),
	EM("f2 ff 50 10", AUP_EM_CALL_IND, AUP_FIX_CALL | AUP_FIX_BRANCH),
	ST("67 ff 10", AUP_FIX_CALL | AUP_FIX_BRANCH),	/* addr32: stepped */
	ST("ff e0", AUP_FIX_BRANCH),
	ST("3e ff e0", AUP_FIX_BRANCH),			/* notrack jmp *%rax */
	EM("3e ff d0", AUP_EM_CALL_REG, AUP_FIX_CALL | AUP_FIX_BRANCH),
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
	/*
	 * RIP-relative rewriting. 32/64-bit mov loads and stores of globals
	 * are emulated (AUP_EM_LOAD/STORE); their step plan is still there.
	 */
	RIPE("48 8b 05 00 10 00 00", AUP_EM_LOAD, IP, 6, "48 8b 86 00 10 00 00"),
	RIPE("48 8b 35 00 10 00 00", AUP_EM_LOAD, IP, 7, "48 8b b7 00 10 00 00"),
	RIPE("48 8b 3d 00 10 00 00", AUP_EM_LOAD, IP, 6, "48 8b be 00 10 00 00"),
	RIPE("4c 8b 35 00 10 00 00", AUP_EM_LOAD, IP, 6, "4c 8b b6 00 10 00 00"),
	RIPE("49 8b 05 00 00 00 00", AUP_EM_LOAD, IP, 6, "48 8b 86 00 00 00 00"),
	RIPE("41 8b 35 00 00 00 00", AUP_EM_LOAD, IP, 7, "40 8b b7 00 00 00 00"),
	RIPE("8b 05 00 10 00 00", AUP_EM_LOAD, IP, 6, "8b 86 00 10 00 00"),
	RIPE("48 89 05 00 10 00 00", AUP_EM_STORE, IP, 6, "48 89 86 00 10 00 00"),
	RIPE("89 35 00 10 00 00", AUP_EM_STORE, IP, 7, "89 b7 00 10 00 00"),
	RIPE("4c 89 3d 00 10 00 00", AUP_EM_STORE, IP, 6, "4c 89 be 00 10 00 00"),
	RIPS("66 8b 05 00 10 00 00", IP, 6, "66 8b 86 00 10 00 00"),	/* 16-bit */
	RIPS("66 89 05 00 10 00 00", IP, 6, "66 89 86 00 10 00 00"),
	RIPS("88 05 00 10 00 00", IP, 6, "88 86 00 10 00 00"),		/* 8-bit */
	RIPS("40 8a 35 00 00 00 00", IP, 7, "40 8a b7 00 00 00 00"),
	RIPS("c6 05 00 10 00 00 01", IP, 6, "c6 86 00 10 00 00 01"),	/* mov imm */
	NO("2e 48 8b 05 00 10 00 00"),			/* cs: not emulated, refused */
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
	ST32("89 05 00 10 00 00", IP),			/* absolute store: stepped */
	EM32("e2 fe", AUP_EM_LOOP, BR),
	ST32("8b 05 00 10 00 00", IP),			/* absolute, no scratch */
	ST32("40", IP),					/* inc %eax */
	ST32("61", IP),					/* popa */
	ST32("c5 f8 28 c1", IP),			/* vex */
	ST32("ff 15 00 10 00 00", AUP_FIX_CALL | AUP_FIX_BRANCH),
	ST32("ff d0", AUP_FIX_CALL | AUP_FIX_BRANCH),
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
		if (!(p->fixups & ~(AUP_FIX_IP | AUP_FIX_BRANCH)))
			CHECK(p->boostable == AUP_BOOST_PLAIN, "%s: boostable %d", c->hex,
			      p->boostable);
		else if (p->fixups == (AUP_FIX_IP | AUP_FIX_SCRATCH))
			CHECK(p->boostable == AUP_BOOST_SCRATCH || !p->boostable,
			      "%s: boostable %d", c->hex, p->boostable);
		else
			CHECK(!p->boostable, "%s: boostable %d", c->hex, p->boostable);
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
	CHECK(arch_uprobe_skip_sstep(&au, &r), "push r15");
	CHECK(r.ip == v + 2 && r.sp == sp0 - 8, "push r15 ip/sp");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == r.r15, "push r15 value %#lx", (unsigned long)top);

	analyze_hex(&au, "54", false);			/* push %rsp */
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r), "push rsp");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == sp0, "push rsp pushes the old value");

	/* a push that faults changes nothing and is stepped instead */
	analyze_hex(&au, "55", false);
	regs_init(&r, v);
	r.sp = 0x1000;
	r0 = r;
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "faulting push");
	CHECK(!memcmp(&r, &r0, sizeof(r)), "faulting push left regs alone");

	/* TF, ptrace single-step or block-step: step instead */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "TF");
	regs_init(&r, v);
	test_task.tif = BIT(TIF_SINGLESTEP);
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "TIF_SINGLESTEP");
	test_task.tif = BIT(TIF_BLOCKSTEP);
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "TIF_BLOCKSTEP");
	test_task.tif = 0;

	/* the task's mode picks the plan: 48 89 e5 is dec %eax in 32-bit code */
	analyze_hex(&au, "48 89 e5", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.bp == r.sp && r.ip == v + 3, "64: mov");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	CHECK(!arch_uprobe_skip_sstep(&au, &r) && PL(&au, true)->len == 1 &&
	      PL(&au, true)->exec == AUP_STEP, "32: dec, stepped");
	analyze_hex(&au, "55", false);
	/* ...and no plan for LDT code or stack segments, or vm86-like garbage */
	regs_init(&r, v);
	r.cs = 0x0f;
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "LDT code segment");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r.ss = 0x0f;
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "LDT stack segment");

	/* EFLAGS.AC: a misaligned stack access would fault (#AC): step instead */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_AC;
	r.sp -= 4;
	r0 = r;
	CHECK(!arch_uprobe_skip_sstep(&au, &r) && !memcmp(&r, &r0, sizeof(r)), "AC, misaligned");
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_AC;
	CHECK(arch_uprobe_skip_sstep(&au, &r), "AC, aligned");

	analyze_hex(&au, "9c", false);			/* pushf */
	regs_init(&r, v);
	r.flags = 0x10ad7;				/* RF + arith */
	CHECK(arch_uprobe_skip_sstep(&au, &r), "pushf");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == 0xad7, "pushf value %#lx", (unsigned long)top);

	analyze_hex(&au, "6a 80", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r), "push imm8");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == (u64)-128, "push imm8 sign extension");

	analyze_hex(&au, "89 c8", false);		/* mov %ecx, %eax */
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ax == 0x22222222, "mov32 zero-extends");
	analyze_hex(&au, "4c 8b c1", false);		/* mov %rcx, %r8 */
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.r8 == r.cx && r.ip == v + 3, "mov r8");

	analyze_hex(&au, "4a 8d 44 a5 f8", false);	/* lea -8(%rbp,%r12,4),%rax */
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ax == r.bp + (r.r12 << 2) - 8, "lea sib");
	analyze_hex(&au, "48 8d 05 f0 ff ff ff", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ax == v + 7 - 16, "lea rip");
	analyze_hex(&au, "8d 04 25 00 00 00 80", false);	/* lea 0x80000000,%eax */
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ax == 0x80000000UL, "lea abs32 %#lx", r.ax);
	analyze_hex(&au, "48 8d 04 25 00 00 00 80", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ax == 0xffffffff80000000UL, "lea abs sext");

	analyze_hex(&au, "e8 10 00 00 00", false);
	regs_init(&r, v);
	sp0 = r.sp;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 5 + 16 && r.sp == sp0 - 8, "call");
	memcpy(&top, (void *)r.sp, 8);
	CHECK(top == v + 5, "call return address");

	analyze_hex(&au, "eb fe", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v, "jmp self");
	analyze_hex(&au, "e9 00 00 00 80", false);	/* out of user space */
	regs_init(&r, v);
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "jmp to a kernel address");

	analyze_hex(&au, "e2 10", false);		/* loop */
	regs_init(&r, v);
	r.cx = 1;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 2 && r.cx == 0, "loop done");
	regs_init(&r, v);
	r.cx = 0;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 0x12 && r.cx == ~0UL, "loop wrap");
	analyze_hex(&au, "e1 10", false);		/* loope */
	regs_init(&r, v);
	r.cx = 5;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 2 && r.cx == 4, "loope zf=0");
	regs_init(&r, v);
	r.cx = 5;
	r.flags |= X86_EFLAGS_ZF;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 0x12, "loope zf=1");
	analyze_hex(&au, "e0 10", false);		/* loopne */
	regs_init(&r, v);
	r.cx = 5;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 0x12, "loopne zf=0");

	/* jmp *rip: pointer in user memory */
	analyze_hex(&au, "ff 25 00 00 00 00", false);
	regs_init(&r, (unsigned long)ustack + 100 - 6);
	top = 0x401234;
	memcpy(ustack + 100, &top, 8);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == 0x401234, "jmp *rip");
	regs_init(&r, 0x1000);
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "jmp *rip, pointer faults");

	/* 32-bit */
	analyze_hex(&au, "55", true);
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r.sp = (unsigned long)ustack + 2048;
	sp0 = r.sp;
	CHECK(!arch_uprobe_skip_sstep(&au, &r) || r.sp == ((sp0 - 4) & 0xffffffff),
	      "push32 sp");
	analyze_hex(&au, "e9 00 00 00 80", true);
	regs_init(&r, 0x80000000UL);
	r.cs = __USER32_CS;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == 5, "jmp32 wraps: %#lx", r.ip);
	analyze_hex(&au, "e2 10", true);
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r.cx = 0xffffffff00000001UL;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.cx == 0 && r.ip == v + 2, "loop ecx");
}

/* mov loads and stores of globals (RIP-relative), emulated */
static void test_load_store(void)
{
	unsigned long v = (unsigned long)ustack + 100 - 7, a = (unsigned long)ustack + 100;
	struct arch_uprobe au;
	struct pt_regs r, r0;
	u64 m, m0 = 0x8877665544332211ULL;

	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);

	analyze_hex(&au, "48 8b 05 00 00 00 00", false);	/* mov 0(%rip), %rax */
	memcpy((void *)a, &m0, 8);
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ax == m0 && r.ip == v + 7, "load64");
	analyze_hex(&au, "44 8b 3d 00 00 00 00", false);	/* mov 0(%rip), %r15d */
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.r15 == 0x44332211 && r.ip == v + 7,
	      "load32 zero-extends");
	analyze_hex(&au, "48 89 35 00 00 00 00", false);	/* mov %rsi, 0(%rip) */
	regs_init(&r, v);
	r0 = r;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 7, "store64");
	memcpy(&m, (void *)a, 8);
	r0.ip = r.ip;
	CHECK(m == r.si && !memcmp(&r, &r0, sizeof(r)), "store64 value");
	analyze_hex(&au, "89 05 00 00 00 00", false);		/* mov %eax, 0(%rip) */
	memcpy((void *)a, &m0, 8);
	regs_init(&r, v + 1);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v + 7, "store32");
	memcpy(&m, (void *)a, 8);
	CHECK(m == 0x8877665511111111ULL, "store32 writes 4 bytes: %#llx", m);
	/* outside user memory: declined (the step faults), nothing changed */
	regs_init(&r, 0x1000);
	r0 = r;
	CHECK(!arch_uprobe_skip_sstep(&au, &r) && !memcmp(&r, &r0, sizeof(r)), "store faults");
	analyze_hex(&au, "48 8b 05 00 00 00 00", false);
	regs_init(&r, 0x1000);
	r0 = r;
	CHECK(!arch_uprobe_skip_sstep(&au, &r) && !memcmp(&r, &r0, sizeof(r)), "load faults");
	/* EFLAGS.AC: a misaligned access would raise #AC: stepped */
	regs_init(&r, v + 1);
	r.flags |= X86_EFLAGS_AC;
	r0 = r;
	CHECK(!arch_uprobe_skip_sstep(&au, &r) && !memcmp(&r, &r0, sizeof(r)), "load, AC");
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_AC;
	CHECK(((v + 7) & 7) || (arch_uprobe_skip_sstep(&au, &r) && r.ax == m), "load, AC, aligned");
	/* 32-bit code: an absolute address, stepped */
	analyze_hex(&au, "8b 05 00 00 00 00", true);
	regs_init(&r, v);
	r.cs = __USER32_CS;
	CHECK(PL(&au, true)->exec == AUP_STEP && !arch_uprobe_skip_sstep(&au, &r), "load 32");
}

/* Expect exactly these accesses: "w8@sp" etc. are checked by the caller. */
static bool accessed(int i, unsigned long addr, unsigned int len, bool write)
{
	return i < nr_accesses && accesses[i].addr == addr && accesses[i].len == len &&
	       accesses[i].write == write;
}

/* The data accesses of an emulation, shown to the task's watchpoints. */
static void test_emulate_watch(void)
{
	unsigned long v = 0x400000, p = (unsigned long)ustack + 256, sp0;
	struct arch_uprobe au;
	struct pt_regs r;
	void *low;

	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);
	nr_sigtrap = 0;

	/* no breakpoint enabled on the CPU: nothing to show */
	cpu_dr7 = 0;
	nr_accesses = 0;
	analyze_hex(&au, "55", false);
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && !nr_accesses, "dr7 off");

	/* enabled, none matches: the access is shown, DR6 stays as it was */
	cpu_dr7 = 0x2;					/* G0 */
	test_task.thread.virtual_dr6 = DR_STEP;
	regs_init(&r, v);
	sp0 = r.sp;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_accesses == 1 &&
	      accessed(0, sp0 - 8, 8, true) && test_task.thread.virtual_dr6 == DR_STEP &&
	      !nr_sigtrap, "push: shown, no match");

	/* a ptrace watchpoint on the pushed word: SIGTRAP after the instruction */
	wp.armed = true;
	wp.ptrace = true;
	wp.addr = sp0 - 4;
	wp.len = 4;
	nr_accesses = 0;
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_accesses == 1 && nr_sigtrap == 1 &&
	      sigtrap_ip == v + 1 && sigtrap_code == TRAP_HWBKPT &&
	      test_task.thread.virtual_dr6 == DR_TRAP0, "push: ptrace watchpoint");
	nr_sigtrap = 0;
	/* ...a perf one: counted, no SIGTRAP, DR6 as after its #DB */
	wp.ptrace = false;
	test_task.thread.virtual_dr6 = DR_STEP;
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && !nr_sigtrap && !test_task.thread.virtual_dr6,
	      "push: perf watchpoint");
	wp.ptrace = true;

	/* pushf, push imm, call: a word at the new sp; 4 bytes in 32-bit code */
	analyze_hex(&au, "9c", false);
	nr_accesses = 0;
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_accesses == 1 &&
	      accessed(0, sp0 - 8, 8, true) && nr_sigtrap == 1, "pushf");
	analyze_hex(&au, "6a 01", false);
	nr_accesses = 0;
	regs_init(&r, v);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && accessed(0, sp0 - 8, 8, true) &&
	      nr_sigtrap == 2 && sigtrap_ip == v + 2, "push imm");
	/* 32-bit code: a stack below 4 GiB */
	low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
		   -1, 0);
	CHECK(low != MAP_FAILED && (unsigned long)low < BIT_ULL(32), "mmap below 4G");
	umem_lo = (unsigned long)low;
	umem_hi = umem_lo + 4096;
	analyze_hex(&au, "e8 00 01 00 00", true);
	nr_accesses = 0;
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r.sp = umem_lo + 2048;
	wp.addr = r.sp - 4;
	wp.len = 1;
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_accesses == 1 && r.sp == wp.addr &&
	      accessed(0, wp.addr, 4, true) && nr_sigtrap == 3 && sigtrap_ip == v + 5 + 0x100,
	      "call 32: reported at its target");
	nr_sigtrap = 0;
	munmap(low, 4096);
	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);

	/* loads, stores and pointers of globals; a write-only watchpoint */
	wp.addr = p;
	wp.len = 8;
	wp.write_only = true;
	analyze_hex(&au, "48 8b 05 00 00 00 00", false);
	nr_accesses = 0;
	regs_init(&r, p - 7);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_accesses == 1 && accessed(0, p, 8, false) &&
	      !nr_sigtrap, "load: shown, a write watchpoint does not match");
	analyze_hex(&au, "89 05 00 00 00 00", false);
	nr_accesses = 0;
	regs_init(&r, p - 6);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_accesses == 1 && accessed(0, p, 4, true) &&
	      nr_sigtrap == 1 && sigtrap_ip == p, "store: matches");
	nr_sigtrap = 0;
	wp.write_only = false;
	analyze_hex(&au, "8b 05 00 00 00 00", false);
	regs_init(&r, p - 6);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_sigtrap == 1, "load: read/write watchpoint");
	nr_sigtrap = 0;
	memcpy((void *)p, &v, 8);
	analyze_hex(&au, "ff 15 00 00 00 00", false);		/* call *0(%rip) */
	nr_accesses = 0;
	regs_init(&r, p - 6);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && r.ip == v && nr_accesses == 2 &&
	      accessed(0, sp0 - 8, 8, true) && accessed(1, p, 8, false) && nr_sigtrap == 1 &&
	      sigtrap_ip == v, "call *mem: push and pointer");
	nr_sigtrap = 0;
	analyze_hex(&au, "ff 25 00 00 00 00", false);		/* jmp *0(%rip) */
	nr_accesses = 0;
	regs_init(&r, p - 6);
	CHECK(arch_uprobe_skip_sstep(&au, &r) && nr_accesses == 1 && accessed(0, p, 8, false) &&
	      nr_sigtrap == 1, "jmp *mem: pointer");
	nr_sigtrap = 0;

	/* no data access: nothing shown; a declined emulation shows nothing */
	static const char * const none[] = {
		"90", "48 89 e5", "48 8d 05 00 00 00 00", "eb 10", "74 10", "e2 10",
		"0f 1f 44 00 00",
	};
	unsigned int i;

	wp.addr = sp0 - 8;
	for (i = 0; i < ARRAY_SIZE(none); i++) {
		analyze_hex(&au, none[i], false);
		nr_accesses = 0;
		regs_init(&r, v);
		r.flags |= X86_EFLAGS_ZF;
		CHECK(arch_uprobe_skip_sstep(&au, &r) && !nr_accesses && !nr_sigtrap,
		      "%s", none[i]);
	}
	analyze_hex(&au, "55", false);
	nr_accesses = 0;
	regs_init(&r, v);
	r.sp = 0x1000;
	CHECK(!arch_uprobe_skip_sstep(&au, &r) && !nr_accesses && !nr_sigtrap, "declined push");
	memset(&wp, 0, sizeof(wp));
	cpu_dr7 = 0;
	test_task.thread.virtual_dr6 = 0;
}

static bool slot_ok(const struct arch_uprobe *au, const u8 *buf, unsigned long slot,
		    unsigned long v);

/* The booster: the copy and its jump back, run with no step trap. */
static void test_boost(void)
{
	static const char * const never[] = {
		"e8 00 00 00 00", "ff d0", "74 10", "e2 10", "ff 35 00 10 00 00", "f3 a4",
		"66 9c", "48 03 25 00 10 00 00", "8f 05 00 10 00 00",
	};
	unsigned long v = 0x400000, slot = 0x7fff0000, sp;
	u8 buf[UPROBE_XOL_SLOT_BYTES];
	struct arch_uprobe au;
	struct pt_regs r, r0;
	unsigned int i;

	test_task.tif = 0;
	analyze_hex(&au, "01 c8", false);			/* add %ecx, %eax */
	CHECK(PL(&au, false)->boostable && PL(&au, true)->boostable, "add: boostable");
	CHECK(arch_uprobe_fill_slot(&au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      slot_ok(&au, buf, slot, v) && buf[2] == 0xff && buf[AUP_COPY32 + 1] == 0xc8 &&
	      buf[AUP_COPY32 + 2] == 0xe9,
	      "add: copies and jumps back");
	regs_init(&r, v);
	r0 = r;
	CHECK(arch_uprobe_boost(&au, &r, slot) && r.ip == slot && !(r.flags & X86_EFLAGS_TF),
	      "boost");
	r0.ip = r.ip;
	CHECK(!memcmp(&r, &r0, sizeof(r)), "boost: only ip");
	/* where the core moves a task it finds in the slot */
	CHECK(arch_uprobe_boost_resume(buf, slot, slot, v) == v, "resume: copy not run");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + 2, v) == v + 2, "resume: jump back");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + 1, v) == v, "resume: not a jump");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + 17, v) == v, "resume: an int3");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + 64, v) == v &&
	      arch_uprobe_boost_resume(buf, slot, slot - 1, v) == v, "resume: outside");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + AUP_COPY32, v) == v,
	      "resume: 32-bit copy");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + AUP_COPY32 + 2, v) == v + 2,
	      "resume: 32-bit jump back");

	/* a copy that starts with the bytes of a jump back has not run */
	analyze_hex(&au, "ff 25 00 00 00 00", true);		/* jmp *0 */
	CHECK(PL(&au, true)->boostable && PL(&au, false)->exec == AUP_EMULATE &&
	      arch_uprobe_fill_slot(&au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      slot_ok(&au, buf, slot, v) &&
	      arch_uprobe_boost_resume(buf, slot, slot + AUP_COPY32, v) == v &&
	      arch_uprobe_boost_resume(buf, slot, slot, v) == v,
	      "resume: a copy like a jump");
	analyze_hex(&au, "01 c8", false);

	/* a program being stepped is stepped */
	regs_init(&r, v);
	r.flags |= X86_EFLAGS_TF;
	r0 = r;
	CHECK(!arch_uprobe_boost(&au, &r, slot) && !memcmp(&r, &r0, sizeof(r)), "TF");
	regs_init(&r, v);
	r0 = r;
	test_task.tif = BIT(TIF_SINGLESTEP);
	CHECK(!arch_uprobe_boost(&au, &r, slot) && !memcmp(&r, &r0, sizeof(r)), "SINGLESTEP");
	test_task.tif = BIT(TIF_BLOCKSTEP);
	CHECK(!arch_uprobe_boost(&au, &r, slot) && !memcmp(&r, &r0, sizeof(r)), "BLOCKSTEP");
	test_task.tif = 0;

	/* what needs the kernel after the copy is never boosted */
	for (i = 0; i < ARRAY_SIZE(never); i++) {
		analyze_hex(&au, never[i], false);
		regs_init(&r, v);
		r0 = r;
		CHECK(!PL(&au, false)->boostable && !arch_uprobe_boost(&au, &r, slot) &&
		      !memcmp(&r, &r0, sizeof(r)), "%s: not boosted", never[i]);
		CHECK(arch_uprobe_fill_slot(&au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
		      slot_ok(&au, buf, slot, v) && buf[PL(&au, false)->xol_len] == 0xcc,
		      "%s: the guard", never[i]);
	}

	/* ret, indirect jumps: boosted, they leave the slot themselves */
	analyze_hex(&au, "c3", false);
	regs_init(&r, v);
	CHECK(PL(&au, false)->boostable && arch_uprobe_fill_slot(&au, buf, slot, v) > 0 &&
	      slot_ok(&au, buf, slot, v) && buf[1] == 0xcc && arch_uprobe_boost(&au, &r, slot) &&
	      r.ip == slot, "ret");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + 1, v) == v, "ret: no jump back");

	/*
	 * RIP-relative: the slot's copy uses a scratch register, which the
	 * boost loads and keeps below the red zone, and the slot restores.
	 */
	analyze_hex(&au, "48 03 05 00 10 00 00", false);	/* add 0x1000(%rip),%rax */
	CHECK(PL(&au, false)->boostable == AUP_BOOST_SCRATCH && PL(&au, false)->scratch == 6 &&
	      arch_uprobe_fill_slot(&au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      slot_ok(&au, buf, slot, v) &&
	      !memcmp(buf + 7, "\x48\x8b\xb4\x24\x78\xff\xff\xff\xff\x25", 10),
	      "riprel: copy, mov -136(%%rsp),%%rsi, jump back");
	regs_init(&r, v);
	r.sp = (unsigned long)ustack + sizeof(ustack) / 2;
	r.si = 0x1234;
	r0 = r;
	CHECK(arch_uprobe_boost(&au, &r, slot) && r.ip == slot && r.si == v + 7 &&
	      get_unaligned((u64 *)(r.sp - 136)) == 0x1234, "riprel: boost");
	CHECK(arch_uprobe_boost_resume(buf, slot, slot + 7, v) == v + 7 &&
	      arch_uprobe_boost_resume(buf, slot, slot + 15, v) == v + 7,
	      "riprel: resume after the copy");
	r.ip = slot + 7;
	arch_uprobe_boost_leave(&r);
	CHECK(r.si == 0x1234, "riprel: leaving before the restore restores");
	r.si = 0x5678;
	arch_uprobe_boost_leave(&r);
	CHECK(r.si == 0x5678, "riprel: once");
	r = r0;
	CHECK(arch_uprobe_boost(&au, &r, slot), "riprel: boost again");
	r.ip = slot + 15;
	r.si = 0x1234;				/* the slot restored it */
	arch_uprobe_boost_leave(&r);
	CHECK(r.si == 0x1234, "riprel: leaving at the jump back");
	r = r0;
	CHECK(arch_uprobe_boost(&au, &r, slot), "riprel: boost a third time");
	analyze_hex(&au, "01 c8", false);
	regs_init(&r, v);
	r.si = 0x9abc;
	CHECK(arch_uprobe_boost(&au, &r, slot), "plain boost after");
	arch_uprobe_boost_leave(&r);
	CHECK(r.si == 0x9abc, "riprel: a plain boost forgets the scratch");
	/* the operand (at ip + 7 + 0x1000) against the word at sp - 136 */
	analyze_hex(&au, "48 03 05 00 10 00 00", false);
	sp = (unsigned long)ustack + sizeof(ustack) / 2;
	regs_init(&r, sp - 136 + 8 - 0x1007);	/* just above the word: fine */
	r.sp = sp;
	CHECK(arch_uprobe_boost(&au, &r, slot), "riprel: operand above the word");
	regs_init(&r, sp - 136 - 0x1007);	/* the word itself */
	r.sp = sp;
	r0 = r;
	CHECK(!arch_uprobe_boost(&au, &r, slot) && !memcmp(&r, &r0, sizeof(r)),
	      "riprel: operand at the word: declined");
	regs_init(&r, sp - 136 - 0x3000 - 0x1007);	/* 12 KiB below: may cover it */
	r.sp = sp;
	CHECK(!arch_uprobe_boost(&au, &r, slot), "riprel: operand below the word: declined");
	regs_init(&r, sp - 136 - 0x5000 - 0x1007);	/* 20 KiB below: fine */
	r.sp = sp;
	CHECK(arch_uprobe_boost(&au, &r, slot), "riprel: operand far below the word");
	analyze_hex(&au, "3e ff e0", false);
	regs_init(&r, v);
	CHECK(PL(&au, false)->boostable && arch_uprobe_boost(&au, &r, slot), "notrack jmp *%%rax");

	/* 32-bit code: jmp rel32, wrapping at 4 GiB; no slot above 4 GiB */
	analyze_hex(&au, "01 c8", true);
	v = 0xfffffffeUL;
	CHECK(arch_uprobe_fill_slot(&au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      slot_ok(&au, buf, slot, v) &&
	      arch_uprobe_boost_resume(buf, slot, slot + AUP_COPY32 + 2, v) == 0, "32: wraps");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	CHECK(arch_uprobe_boost(&au, &r, slot) && r.ip == slot + AUP_COPY32, "32: boost");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	r0 = r;
	CHECK(!arch_uprobe_boost(&au, &r, 0x100000000UL) && !memcmp(&r, &r0, sizeof(r)),
	      "32: slot above 4G");
	CHECK(!arch_uprobe_boost(&au, &r, 0xffffffe0UL), "32: slot across 4G");
	r.cs = 0x0f;
	CHECK(!arch_uprobe_boost(&au, &r, slot), "LDT code");
	v = 0x400000;
	/* a mode whose plan is refused */
	CHECK(analyze_bytes(&au, (const u8 *)"\xc5\x00\x58\xc0", 4, false) == 0, "vaddps");
	regs_init(&r, v);
	CHECK(arch_uprobe_boost(&au, &r, slot), "vaddps: 64");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	CHECK(!arch_uprobe_boost(&au, &r, slot) && r.ip == v, "lds: refused in 32-bit code");
}

/* uprobes.emulate=0: the base set is emulated, the rest boosted or stepped. */
static void test_emulate_param(void)
{
	static const struct {
		const char *hex;
		bool emulated, boosted;
	} c[] = {
		{ "90", true, true },			/* nop */
		{ "f3 90", true, true },		/* pause */
		{ "53", true, true },			/* push %rbx */
		{ "e8 00 01 00 00", true, false },	/* call rel32 */
		{ "eb 10", true, false },		/* jmp rel8 */
		{ "0f 84 00 01 00 00", true, false },	/* je rel32 */
		{ "0f 1f 44 00 00", false, true },	/* nopl */
		{ "f3 0f 1e fa", false, true },		/* endbr64 */
		{ "6a 01", false, true },		/* push $1 */
		{ "48 89 f8", false, true },		/* mov %rdi, %rax */
		{ "48 8d 44 7f 01", false, true },	/* lea 1(%rdi,%rdi,2) */
		{ "9c", false, false },			/* pushf */
		{ "e2 10", false, false },		/* loop */
		{ "48 8b 05 00 10 00 00", false, true }, /* mov 0x1000(%rip) */
		{ "ff 15 00 10 00 00", false, false },	/* call *0x1000(%rip) */
	};
	unsigned long v = 0x400000, slot = 0x7fff0000;
	struct arch_uprobe au;
	struct pt_regs r, r0;
	unsigned int i;

	test_task.tif = 0;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		analyze_hex(&au, c[i].hex, false);
		CHECK(PL(&au, false)->exec == AUP_EMULATE, "%s: emulated by default", c[i].hex);
		static_branch_disable(&aup_emulate_all);
		regs_init(&r, v);
		r.sp = (unsigned long)ustack + sizeof(ustack) / 2;
		r0 = r;
		if (c[i].emulated) {
			CHECK(arch_uprobe_skip_sstep(&au, &r), "%s: still emulated", c[i].hex);
		} else {
			CHECK(!arch_uprobe_skip_sstep(&au, &r) && !memcmp(&r, &r0, sizeof(r)),
			      "%s: not emulated", c[i].hex);
			CHECK(!!PL(&au, false)->boostable == c[i].boosted &&
			      arch_uprobe_boost(&au, &r, slot) == c[i].boosted,
			      "%s: boosted %d", c[i].hex, c[i].boosted);
			CHECK(!arch_uprobe_jump_len(&au, &r0) ==
			      (!c[i].boosted || PL(&au, false)->len < 5),
			      "%s: jump site only if boosted", c[i].hex);
		}
		static_branch_enable(&aup_emulate_all);
		regs_init(&r, v);
		r.sp = (unsigned long)ustack + sizeof(ustack) / 2;
		/* (the RIP-relative ones would read an unmapped address) */
		if (!PL(&au, false)->scratch)
			CHECK(arch_uprobe_skip_sstep(&au, &r), "%s: emulated again", c[i].hex);
	}
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
 * there, then for a boostable straight-line copy its jump back to
 * @v + len (64-bit: jmp *0(%rip) and the address; 32-bit: jmp rel32,
 * wrapping at 4 GiB), then int3s; only int3s otherwise.
 */
static bool slot_ok(const struct arch_uprobe *au, const u8 *buf, unsigned long slot,
		    unsigned long v)
{
	int mode, i, n;

	for (mode = 0; mode < AUP_NR_MODES; mode++) {
		const struct arch_uprobe_plan *p = &au->plan[mode];
		const u8 *half = buf + aup_copy_off(mode);
		unsigned long at = slot + aup_copy_off(mode), target;
		u64 t64;
		s32 rel;

		n = !p->err && (!p->ia32 || slot + UPROBE_XOL_SLOT_BYTES <= BIT_ULL(32)) ?
		    p->xol_len : 0;
		if (memcmp(half, p->xol, n))
			return false;
		if (n && p->boostable == AUP_BOOST_SCRATCH) {
			memcpy(&rel, half + n + 4, 4);
			if (half[n] != 0x48 || half[n + 1] != 0x8b ||
			    half[n + 2] != (0x84 | (p->scratch & 7) << 3) ||
			    half[n + 3] != 0x24 || rel != -AUP_BOOST_SAVE_OFF)
				return false;
			n += AUP_RESTORE_LEN;
		}
		if (n && p->boostable && (p->fixups & AUP_FIX_IP)) {
			if (p->ia32) {
				target = (u32)(v + p->len);
				memcpy(&rel, half + n + 1, 4);
				if (half[n] != 0xe9 || (u32)(at + n + 5 + rel) != target)
					return false;
				n += 5;
			} else {
				target = v + p->len;
				memcpy(&t64, half + n + 6, 8);
				if (memcmp(half + n, "\xff\x25\0\0\0\0", 6) || t64 != target)
					return false;
				n += 14;
			}
		}
		for (i = n; i < (mode ? UPROBE_XOL_SLOT_BYTES - AUP_COPY32 : AUP_COPY32); i++)
			if (half[i] != 0xcc)
				return false;
	}
	return true;
}

/* Run a step "by hand": fill, pre_xol, move ip as the CPU would, post_xol. */
static void begin_step(struct arch_uprobe *au, struct pt_regs *r, unsigned long v,
		       unsigned long slot)
{
	int copy = (r->cs == __USER32_CS) * AUP_COPY32;
	u8 buf[UPROBE_XOL_SLOT_BYTES];
	bool tf;

	CHECK(arch_uprobe_fill_slot(au, buf, slot, v) == UPROBE_XOL_SLOT_BYTES &&
	      slot_ok(au, buf, slot, v), "fill");
	test_utask.vaddr = v;
	test_utask.xol_vaddr = slot;
	test_utask.auprobe = au;
	test_utask.state = UTASK_SSTEP;
	/* TF, but for a rep string copy of a program not stepping itself */
	tf = (r->flags & X86_EFLAGS_TF) ||
	     !(PL(au, r->cs == __USER32_CS)->fixups & AUP_FIX_REP);
	CHECK(!arch_uprobe_pre_xol(au, r), "pre_xol");
	CHECK(r->ip == slot + copy && !!(r->flags & X86_EFLAGS_TF) == tf, "pre_xol ip/TF");
}

static void test_step(void)
{
	unsigned long v = 0x400000, slot = 0x7fff0000, sp0, w;
	u8 buf[UPROBE_XOL_SLOT_BYTES];
	struct arch_uprobe au;
	struct pt_regs r;
	s32 rel;
	int i;

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
	      buf[5] == 0xcc && buf[6] == 0xcc && buf[AUP_COPY32] == 0xe8, "fill call");
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

	/*
	 * A taken branch to a non-canonical address: #GP at vaddr, the stack
	 * pointer unmoved; the word below it holds vaddr + len where the CPU
	 * stores the return address (not AMD's), else what it held before.
	 */
	analyze_hex(&au, "e8 00 00 00 40", false);
	v = 0x7fffc0000000UL;
	for (i = 0; i < 2; i++) {
		u8 host_vendor = boot_cpu_data.x86_vendor;

		boot_cpu_data.x86_vendor = i ? X86_VENDOR_AMD : X86_VENDOR_INTEL;
		regs_init(&r, v);
		sp0 = r.sp;
		w = 0x1122334455667788ULL;
		memcpy((void *)(sp0 - 8), &w, 8);
		nr_force_sig = 0;
		begin_step(&au, &r, v, slot);
		r.sp -= 8;	/* the copy's push */
		w = slot + 5;
		memcpy((void *)r.sp, &w, 8);
		r.ip = slot + 5 + 1;
		CHECK(arch_uprobe_post_xol(&au, &r) == -EFAULT && nr_force_sig == 1 &&
		      force_sig_nr == SIGSEGV && test_task.thread.trap_nr == X86_TRAP_GP &&
		      r.sp == sp0, "call to a non-canonical address");
		memcpy(&w, (void *)(sp0 - 8), 8);
		CHECK(w == (i ? 0x1122334455667788ULL : v + 5),
		      "...%s the return address below sp: %#llx",
		      i ? "AMD: does not store" : "Intel: stores", (unsigned long long)w);
		arch_uprobe_abort_xol(&au, &r);
		CHECK(r.ip == v && !(r.flags & X86_EFLAGS_TF) &&
		      test_task.thread.trap_nr == X86_TRAP_GP, "...reported at vaddr");
		boot_cpu_data.x86_vendor = host_vendor;
	}
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
	CHECK(r.ip == slot + AUP_COPY32, "32-bit copy in the second half");
	r.ip = slot + AUP_COPY32 + 5 + 1;
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == 5, "jmp32 wraps (step): %#lx", r.ip);

	/*
	 * rep movsb: run without TF to its guard; stopped after an iteration
	 * with ip at the slot (a watchpoint's #DB), it goes on without TF
	 */
	analyze_hex(&au, "f3 a4", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	CHECK(!(r.flags & X86_EFLAGS_TF), "rep: no TF");
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
	      slot_ok(&au, buf, slot, v) && !memcmp(buf, "\xc5\x00\x58\xc0\xff\x25", 6) &&
	      buf[32] == 0xcc, "the 64-bit copy only (boosted: its jump back)");
	CHECK(!arch_uprobe_skip_sstep(&au, &r), "no 32-bit emulation");
	CHECK(arch_uprobe_pre_xol(&au, &r) == -ENOEXEC && r.ip == v, "no 32-bit step");
	/* 32-bit code cannot reach a slot above 4 GiB */
	CHECK(analyze_bytes(&au, (const u8 *)"\x48\x3e\x8b\x00", 4, true) == 0 &&
	      PL(&au, false)->err == -EINVAL, "dec %%eax, only in 32-bit code");
	CHECK(arch_uprobe_fill_slot(&au, buf, 0x100000000UL, v) == -ENOEXEC, "slot > 4G");
	CHECK(arch_uprobe_fill_slot(&au, buf, 0xffffffc0UL, v) == UPROBE_XOL_SLOT_BYTES &&
	      slot_ok(&au, buf, 0xffffffc0UL, v) && buf[0] == 0xcc && buf[AUP_COPY32] == 0x48 &&
	      buf[AUP_COPY32 + 1] == 0xe9, "slot < 4G");
	regs_init(&r, v);
	r.cs = __USER32_CS;
	test_utask.xol_vaddr = 0xffffffe0UL;
	CHECK(arch_uprobe_pre_xol(&au, &r) == -ENOEXEC && r.ip == v, "pre_xol slot > 4G");
	test_utask.xol_vaddr = 0xffffffc0UL;
	CHECK(!arch_uprobe_pre_xol(&au, &r) && r.ip == 0xffffffc0UL + AUP_COPY32,
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

	/*
	 * a trap-only #DB when not stepping is not ours, but the task may be
	 * in a boosted copy: the core moves it out before it is reported
	 */
	sstep_done_ret = false;
	dr6 = DR_TRAP1;
	test_task.thread.virtual_dr6 = DR_TRAP1;
	nr_leave_boosted = 0;
	r.ip = slot + 3;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && dr6 == DR_TRAP1 &&
	      test_task.thread.virtual_dr6 == DR_TRAP1, "not stepping");
	CHECK(nr_leave_boosted == 1 && leave_boosted_ip == slot + 3,
	      "not stepping: the core may leave a boosted copy");
	dr6 = 0;
	test_task.thread.virtual_dr6 = DR_TRAP1;		/* ptrace's, moved */
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && nr_leave_boosted == 2 &&
	      test_task.thread.virtual_dr6 == DR_TRAP1, "ptrace's watchpoint, boosted");
	dr6 = DR_STEP;
	test_task.thread.virtual_dr6 = DR_STEP;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && nr_leave_boosted == 2 &&
	      dr6 == DR_STEP, "a step that is not ours: no boosted copy to leave");
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
		{ "48 cf", 0, -ENOTSUPP, 0 },		/* iretq; dec %eax, iret */
		{ "cf", -ENOTSUPP, -ENOTSUPP, -ENOTSUPP },	/* iret */
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
		/* decoded once without an mm: each install asks for its mm's mode */
		CHECK(arch_uprobe_analyze_insn(&au, NULL, 0) == t[i].none &&
		      arch_uprobe_refuses_mm(&au, &m64) == t[i].m64 &&
		      arch_uprobe_refuses_mm(&au, &m32) == t[i].m32, "%s: refuses_mm", t[i].hex);
	}
}

/* The die notifier, as the core registers it. */
static int notify(unsigned long val, struct pt_regs *r, unsigned long *dr6)
{
	struct die_args args = { .regs = r, .err = (long)dr6 };

	return arch_uprobe_exception_notify(NULL, val, &args);
}

/* Return probes: the return address, the trampoline, the vDSO stubs. */
static void test_uretprobe(void)
{
	static const char tramp64[] =
		"48 89 44 24 f0 48 89 4c 24 e8 4c 89 5c 24 e0 b8 4f 01 00 00 0f 05";
	unsigned long w, slot = 0x7fffff000000UL, slot32 = 0xfffff000UL;
	unsigned long vdso = 0x7ffff7fc0000UL, frame, *below;
	u8 buf[UPROBE_XOL_SLOT_BYTES], want[UPROBE_XOL_SLOT_BYTES];
	struct pt_regs r, r32, r0;
	long ret;
	int i;

	umem_lo = (unsigned long)ustack;
	umem_hi = umem_lo + sizeof(ustack);

	/* the return address swapped: 8 bytes in 64-bit code */
	regs_init(&r, 0x400000);
	w = 0x401234;
	memcpy((void *)r.sp, &w, 8);
	CHECK(arch_uretprobe_hijack_return_addr(slot, &r) == 0x401234, "return address");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == slot, "hijack writes 8 bytes: %#lx", w);
	/* the core's write-back: the old one again, ours returned */
	CHECK(arch_uretprobe_hijack_return_addr(0x401234, &r) == slot, "write back");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x401234, "written back: %#lx", w);
	umem_ro = true;
	CHECK(arch_uretprobe_hijack_return_addr(slot, &r) == -1UL, "read-only stack");
	umem_ro = false;
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x401234, "...nothing written: %#lx", w);
	r.sp = 0x1000;
	CHECK(arch_uretprobe_hijack_return_addr(slot, &r) == -1UL, "unreadable stack");

	/* swapped in 32-bit code: 4 bytes, only a trampoline below 4 GiB */
	regs_init(&r, 0x400000);
	r.cs = __USER32_CS;
	w = 0x5555555500401234UL;
	memcpy((void *)r.sp, &w, 8);
	CHECK(arch_uretprobe_hijack_return_addr(slot32 + 32, &r) == 0x401234,
	      "return address 32");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x55555555fffff020UL, "hijack32 writes 4 bytes: %#lx", w);
	CHECK(arch_uretprobe_hijack_return_addr(slot, &r) == -1UL, "trampoline above 4G");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x55555555fffff020UL, "...nothing written");
	CHECK(arch_uretprobe_hijack_return_addr(0x401234, &r) == slot32 + 32, "write back 32");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x5555555500401234UL, "written back 32: %#lx", w);
	r.ss = 0x0f;
	CHECK(arch_uretprobe_hijack_return_addr(slot32, &r) == -1UL, "LDT stack");
	memcpy(&w, (void *)r.sp, 8);
	CHECK(w == 0x5555555500401234UL, "...nothing written");

	/* the XOL trampoline: the layout of the top comment, int3 elsewhere */
	memset(buf, 0, sizeof(buf));
	memset(want, 0xcc, sizeof(want));
	parse_hex(tramp64, want, 22);
	arch_uretprobe_fill_trampoline(buf);
	CHECK(!memcmp(buf, want, sizeof(buf)), "trampoline bytes");
	regs_init(&r, 0x400000);
	regs_init(&r32, 0x400000);
	r32.cs = __USER32_CS;
	CHECK(arch_uretprobe_trampoline(slot, &r) == slot, "64-bit entry");
	CHECK(arch_uretprobe_trampoline(slot32, &r32) == slot32 + 32, "32-bit entry");
	CHECK(!arch_uretprobe_trampoline(slot, &r32), "32-bit entry above 4G");
	CHECK(!arch_uretprobe_trampoline(0xffffffe0UL, &r32), "32-bit entry at 4G");
	r32.ss = 0x0f;
	CHECK(!arch_uretprobe_trampoline(slot32, &r32), "LDT stack: no entry");
	r32.ss = __USER_DS;

	/* an image without the stubs */
	memset(&test_vdso_image, 0, sizeof(test_vdso_image));
	test_mm.context.vdso = (void *)vdso;
	CHECK(!arch_uretprobe_stub(&r, 0), "no stubs in the image");
	CHECK(arch_uretprobe_is_return_addr(slot, slot) &&
	      arch_uretprobe_is_return_addr(slot, slot + 32) &&
	      !arch_uretprobe_is_return_addr(slot, slot + 1) &&
	      !arch_uretprobe_is_return_addr(slot, vdso), "return addresses: trampoline");
	CHECK(arch_uretprobe_is_trap(slot, slot + 22) && arch_uretprobe_is_trap(slot, slot + 63) &&
	      !arch_uretprobe_is_trap(slot, slot + 64) && !arch_uretprobe_is_trap(slot, slot - 1) &&
	      !arch_uretprobe_is_trap(0, 0) && !arch_uretprobe_is_trap(0, 22),
	      "traps: the trampoline slot");

	/* the vDSO's stubs, 16 bytes each, and the int3 after their syscall */
	test_vdso_image.sym_uretprobe_stubs = 0x1000;
	test_vdso_image.sym_uretprobe_stubs_end = 0x1000 + 4 * 16;
	test_vdso_image.sym_uretprobe_syscall_end = 0x1100;
	CHECK(arch_uretprobe_stub(&r, 0) == vdso + 0x1000 &&
	      arch_uretprobe_stub(&r, 3) == vdso + 0x1030 && !arch_uretprobe_stub(&r, 4),
	      "stubs");
	CHECK(!arch_uretprobe_stub(&r32, 0), "no stubs for 32-bit code");
	CHECK(arch_uretprobe_is_return_addr(slot, vdso + 0x1000) &&
	      arch_uretprobe_is_return_addr(slot, vdso + 0x103f) &&
	      !arch_uretprobe_is_return_addr(slot, vdso + 0x1040) &&
	      !arch_uretprobe_is_return_addr(slot, vdso + 0xfff), "return addresses: stubs");
	CHECK(arch_uretprobe_is_trap(slot, vdso + 0x1100) &&
	      arch_uretprobe_is_trap(0, vdso + 0x1100) &&
	      !arch_uretprobe_is_trap(0, vdso + 0x10ff), "traps: the stubs' syscall end");
	/* ...forgotten once the vDSO is unmapped */
	test_mm.context.vdso = NULL;
	CHECK(!arch_uretprobe_stub(&r, 0) && !arch_uretprobe_is_return_addr(slot, 0x1000) &&
	      !arch_uretprobe_is_trap(0, 0x1100) && !arch_uretprobe_is_trap(0, 0),
	      "unmapped vDSO");
	test_mm.context.vdso = (void *)vdso;

	/*
	 * The int3 after the syscall (a tracer skipped it): the registers the
	 * 64-bit code saved below the return slot come back, and the frame is
	 * the return slot.
	 */
	for (i = 0; i < 2; i++) {
		unsigned long bp = i ? vdso + 0x1100 : slot + 22;

		regs_init(&r, bp + 1);
		below = (unsigned long *)(r.sp - 32);
		below[0] = 0xb11;			/* r11 */
		below[1] = 0xc0;			/* rcx */
		below[2] = 0xa0;			/* rax */
		r0 = r;
		frame = arch_uretprobe_trap(slot, &r);
		CHECK(frame == r.sp - 8 && r.r11 == 0xb11 && r.cx == 0xc0 && r.ax == 0xa0 &&
		      r.ip == bp + 1, "trap %d restores", i);
		r = r0;
		r.ip = bp;
		CHECK(!arch_uretprobe_trap(slot, &r) &&
		      !memcmp(&r, &r0, offsetof(struct pt_regs, ip)),
		      "trap %d: another int3", i);
	}
	regs_init(&r, slot + 22 + 1);
	r.sp = 0x1000 + 32;
	CHECK(!arch_uretprobe_trap(slot, &r), "trap: saved words unreadable");
	regs_init(&r32, slot32 + 32 + 1);
	r32.cs = __USER32_CS;
	CHECK(arch_uretprobe_trap(slot32, &r32) == r32.sp - 4, "trap 32");
	r32.ip = slot32 + 22 + 1;
	CHECK(!arch_uretprobe_trap(slot32, &r32), "trap 32: the 64-bit entry");

	/* the system call: only from the trampoline's or the stubs' syscall */
	regs_init(&r, slot + 22);
	r.orig_ax = __NR_uretprobe;
	CHECK(arch_uretprobe_is_syscall(slot, &r), "syscall from the trampoline");
	r.ip = vdso + 0x1100;
	CHECK(arch_uretprobe_is_syscall(slot, &r) && arch_uretprobe_is_syscall(0, &r),
	      "syscall from the stubs");
	r.ip = slot + 20;
	CHECK(!arch_uretprobe_is_syscall(slot, &r), "syscall from elsewhere");
	r.ip = slot + 22;
	CHECK(!arch_uretprobe_is_syscall(0, &r), "no trampoline");
	r.orig_ax = 39;
	CHECK(!arch_uretprobe_is_syscall(slot, &r), "another syscall");
	r.orig_ax = __NR_uretprobe;
	aup_test_ia32_syscall = true;
	CHECK(!arch_uretprobe_is_syscall(slot, &r), "a 32-bit syscall");
	aup_test_ia32_syscall = false;

	/* sys_uretprobe(): SIGILL unless the core says it comes from a stub */
	regs_init(&r, slot + 22);
	below = (unsigned long *)(r.sp - 32);
	below[0] = 0xb11;
	below[1] = 0xc0;
	below[2] = 0xa0;
	r.orig_ax = __NR_uretprobe;
	r0 = r;
	test_syscall_regs = &r;
	nr_force_sig = 0;
	nr_handle_return = 0;
	nr_syscall_unseen = 0;
	from_trampoline_ret = false;
	ret = aup_test_sys_uretprobe();
	CHECK(ret == -EINVAL && nr_force_sig == 1 && force_sig_nr == SIGILL && !nr_handle_return &&
	      !nr_syscall_unseen && !memcmp(&r, &r0, sizeof(r)), "uretprobe from elsewhere");
	from_trampoline_ret = true;
	ret = aup_test_sys_uretprobe();
	CHECK(ret == 0xa0 && r.ax == 0xa0 && r.cx == 0xc0 && r.r11 == 0xb11 &&
	      r.orig_ax == -1UL && nr_handle_return == 1 && handle_return_frame == r.sp - 8 &&
	      nr_syscall_unseen == 1 && nr_force_sig == 1, "uretprobe restores");
	r = r0;
	r.sp = 0x1000 + 32;
	ret = aup_test_sys_uretprobe();
	CHECK(ret == -EINVAL && nr_force_sig == 2 && nr_handle_return == 1,
	      "uretprobe, saved words unreadable");
	from_trampoline_ret = false;
	nr_force_sig = 0;
	test_syscall_regs = NULL;

	arch_uretprobe_unmap_table(&test_mm);
	CHECK(zapped_mm == &test_mm, "the table is zapped before fork");
	memset(&test_vdso_image, 0, sizeof(test_vdso_image));
	test_mm.context.vdso = NULL;
}

static void test_notifiers(void)
{
	unsigned long v = 0x400000, slot = 0x7fff0000, dr6;
	struct die_args args = { };
	struct arch_uprobe au;
	struct pt_regs r;

	test_task.tif = 0;
	test_utask.state = UTASK_RUNNING;

	/* kernel traps are never ours, nor are die events other than #DB */
	regs_init(&r, slot + 1);
	r.cs = 0x10;
	dr6 = DR_STEP;
	sstep_done_ret = true;
	nr_sstep_done = 0;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && dr6 == DR_STEP && !nr_sstep_done,
	      "kernel #DB");
	CHECK(arch_uprobe_exception_notify(NULL, DIE_DEBUG, &args) == NOTIFY_DONE &&
	      !nr_sstep_done, "no regs");
	regs_init(&r, slot + 1);
	CHECK(notify(DIE_INT3, &r, &dr6) == NOTIFY_DONE && dr6 == DR_STEP && !nr_sstep_done,
	      "DIE_INT3: do_int3_user() asks uprobe_trap_int3() instead");
	sstep_done_ret = false;

	/* int3: uprobe_trap_int3(), the core's hit unless it is our guard */
	regs_init(&r, v + 1);
	int3_hit_ret = true;
	nr_int3_hit = 0;
	CHECK(uprobe_trap_int3(&r) && nr_int3_hit == 1 && r.ip == v + 1, "int3 ours");
	int3_hit_ret = false;
	CHECK(!uprobe_trap_int3(&r) && nr_int3_hit == 2 && r.ip == v + 1, "int3 not ours");

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
	nr_leave_boosted = 0;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && dr6 == DR_STEP &&
	      test_task.thread.virtual_dr6 == DR_STEP && !nr_leave_boosted, "not our step");
	dr6 = 0;					/* icebp */
	test_task.thread.virtual_dr6 = 0;
	nr_sstep_done = 0;
	CHECK(notify(DIE_DEBUG, &r, &dr6) == NOTIFY_DONE && !nr_sstep_done, "icebp");

	/*
	 * The guard int3 after a copy that is not boosted (a boostable one
	 * has its jump back there): the step ended without a #DB, as after
	 * the last iterations of a rep string instruction run without TF.
	 */
	analyze_hex(&au, "f3 a4", false);
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	CHECK(arch_uprobe_post_xol(&au, &r) == -EAGAIN && r.ip == slot, "guard: rep");
	r.ip = slot + 2 + 1;
	sstep_done_ret = true;
	nr_int3_hit = 0;
	CHECK(uprobe_trap_int3(&r) && sstep_done_ip == slot + 2 && r.ip == slot + 2 &&
	      !nr_int3_hit && test_utask.state == UTASK_SSTEP_ACK, "guard");
	CHECK(!arch_uprobe_post_xol(&au, &r) && r.ip == v + 2, "guard post_xol");
	/* ...the same int3 when the core says the step is not ours */
	analyze_hex(&au, "48 03 05 00 10 00 00", false);	/* add rip: scratch */
	regs_init(&r, v);
	begin_step(&au, &r, v, slot);
	r.ip = slot + 7 + 1;
	sstep_done_ret = false;
	CHECK(!uprobe_trap_int3(&r) && sstep_done_ip == slot + 7 && r.ip == slot + 7 + 1 &&
	      nr_int3_hit == 1, "guard, not our step: the core's int3");
	/* ...not the guard: elsewhere in the slot, or the task is not stepping */
	nr_sstep_done = 0;
	r.ip = slot + 7;
	CHECK(!uprobe_trap_int3(&r) && !nr_sstep_done && nr_int3_hit == 2, "not the guard");
	test_utask.state = UTASK_RUNNING;
	r.ip = slot + 7 + 1;
	CHECK(!uprobe_trap_int3(&r) && !nr_sstep_done && nr_int3_hit == 3, "not stepping");
	arch_uprobe_abort_xol(&au, &r);
	CHECK(r.ip == v && r.si == 0x6666666666666666UL, "abort");
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
			/* AUP_STEPPED=1: list what a hit would single-step */
			if (!PL(&au, false)->boostable && getenv("AUP_STEPPED"))
				printf("stepped: %s %#lx\n", cur_file, s->start + s->off[i]);
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

/*
 * 64-bit code in the top 2 GiB of user space, where a rel32 branch can
 * reach a non-canonical address (#GP at the branch). Usually free, but
 * the stack may be there: then these runs are skipped.
 */
static const struct layout laytop = {
	.ia32 = false,
	.code = 0x7fff80000000UL, .code_v = 0x7fff80008000UL, .data = 0x7fff80100000UL,
	.slot_near = 0x7fff80200000UL, .slot_far = 0x7ffe00000000UL,
};

static bool laytop_ok;

/*
 * Can this host run 32-bit code? A kernel without IA32 emulation (or a
 * hypervisor that offers no 32-bit user segment) cannot: then the runs in
 * 32-bit mode, which compare with the CPU, are skipped.
 */
static bool host_ia32;

/* A child far-returns into 32-bit code that is an int3: SIGTRAP if it ran. */
static bool host_runs_ia32(void)
{
	struct rlimit nocore = { 0, 0 };
	unsigned char *p;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return true;	/* the runs will tell */
	if (!pid) {
		setrlimit(RLIMIT_CORE, &nocore);
		signal(SIGTRAP, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		p = mmap((void *)0x3f000000UL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			_exit(2);
		p[0] = 0xcc;
		asm volatile("pushq %1\n\tpushq %0\n\tlretq"
			     : : "r"((unsigned long)p), "i"(__USER32_CS));
		_exit(3);
	}
	if (waitpid(pid, &status, 0) != pid)
		return true;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGTRAP;
}

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

static bool map_layout(const struct layout *l, bool must)
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
			if (must)
				exit(2);
			while (i--)
				munmap((void *)m[i].addr, m[i].size);
			return false;
		}
	}
	return true;
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
	static bool done;
	unsigned int i;

	if (done)
		return;
	done = true;
	map_layout(&lay64, true);
	map_layout(&lay32, true);
	laytop_ok = map_layout(&laytop, false);
	if (!laytop_ok)
		printf("no mapping at the top of user space: its runs are skipped\n");
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
static int nr_fuzz_boost, nr_fuzz_step, nr_fuzz_forms[2][3];

/* Stepped: the slot, pre_xol, a real TF step, post_xol or abort_xol. */
static bool step_outcome(struct arch_uprobe *au, unsigned long slot, struct outcome *o)
{
	const struct arch_uprobe_plan *p = PL(au, L->ia32);
	unsigned long copy = slot + (L->ia32 ? AUP_COPY32 : 0);
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
	nr_force_sig = 0;
	if (arch_uprobe_pre_xol(au, &r))
		return false;
	memset(o, 0, sizeof(*o));
	for (n = 0; n < 100000; n++) {
		struct cpu c;

		regs_to_cpu(&r, &c);
		memcpy(c.xmm, n ? trap_out.cpu.xmm : cpu_init.xmm, sizeof(c.xmm));
		run_cpu(&c);
		if (getenv("AUP_DEBUG"))
			printf("step %d: sig %d code %d addr %#lx ip %#lx sp %#lx\n", n,
			       trap_out.signo, trap_out.code, trap_out.addr, trap_out.cpu.ip,
			       trap_out.cpu.gpr[4]);
		for (int i = 0; i < 16; i++)
			*aup_regp(&r, i) = trap_out.cpu.gpr[i];
		r.ip = trap_out.cpu.ip;
		r.flags = trap_out.cpu.flags;
		memcpy(o->cpu.xmm, trap_out.cpu.xmm, sizeof(o->cpu.xmm));
		cs_of(&r);
		/* the guard int3, as do_int3_user() asks uprobe_trap_int3() */
		if (trap_out.signo == SIGTRAP && trap_out.code == SI_KERNEL &&
		    r.ip == copy + p->xol_len + 1) {
			sstep_done_ret = true;
			if (!uprobe_trap_int3(&r) || r.ip != copy + p->xol_len) {
				sstep_done_ret = false;
				printf("guard not taken\n");
				return false;
			}
			sstep_done_ret = false;
			nr_fuzz_guard++;
		}
		/* the step's #DB, as the die notifier sees it */
		if (trap_out.signo == SIGTRAP && trap_out.code == TRAP_TRACE) {
			unsigned long dr6 = DR_STEP;

			test_task.thread.virtual_dr6 = DR_STEP;
			sstep_done_ret = true;
			ret = notify(DIE_DEBUG, &r, &dr6);
			sstep_done_ret = false;
			if (ret != NOTIFY_STOP || dr6 || test_task.thread.virtual_dr6) {
				printf("step #DB not claimed\n");
				return false;
			}
		}
		if ((trap_out.signo == SIGTRAP && trap_out.code == TRAP_TRACE) ||
		    r.ip == copy + p->xol_len) {
			ret = arch_uprobe_post_xol(au, &r);
			if (ret == -EAGAIN) {
				/* the core stays in UTASK_SSTEP */
				test_utask.state = UTASK_SSTEP;
				nr_fuzz_again++;
				continue;
			}
			if (ret == -EFAULT && nr_force_sig) {
				/* a #GP post_xol raised: the core aborts the step */
				arch_uprobe_abort_xol(au, &r);
				o->signo = force_sig_nr;
				o->code = SI_KERNEL;
				o->addr = 0;
				nr_force_sig = 0;
				break;
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

/*
 * Boosted: the slot, arch_uprobe_boost(), and the copy and its jump back
 * run on the CPU with no trap until the int3 at vaddr + len (or wherever a
 * ret or jmp goes). A fault inside the slot is handled as the core does:
 * the task is moved where arch_uprobe_boost_resume() says, and the
 * address of a #DE, #UD or int3 is reported as the probed one
 * (uprobe_get_trap_addr()).
 */
static bool boost_outcome(struct arch_uprobe *au, unsigned long slot, struct outcome *o,
			  char *why)
{
	unsigned long copy = slot + (L->ia32 ? AUP_COPY32 : 0), ip, save;
	const struct arch_uprobe_plan *p = PL(au, L->ia32);
	u64 below_red_zone = 0;
	struct pt_regs r;
	struct cpu c;
	int ret;

	memset((void *)slot, 0xcc, SLOT_SIZE);
	ret = arch_uprobe_fill_slot(au, (void *)slot, slot, CODE_V);
	if (ret != UPROBE_XOL_SLOT_BYTES) {
		sprintf(why, "fill_slot %d", ret);
		return false;
	}
	cpu_to_regs(&cpu_init, &r);
	test_utask.state = UTASK_RUNNING;
	/* AUP_BOOST_SCRATCH: the word below the red zone is the kernel's */
	save = r.sp - AUP_BOOST_SAVE_OFF;
	if (p->boostable == AUP_BOOST_SCRATCH && save - DATA < DATA_SIZE - 8)
		below_red_zone = get_unaligned((u64 *)save);
	if (!arch_uprobe_boost(au, &r, slot) || r.ip != copy) {
		/* declined when the operand may cover that word */
		if (p->boostable == AUP_BOOST_SCRATCH &&
		    save + 7 - (CODE_V + p->len + p->rel) < SZ_16K) {
			o->signo = SIGALRM;
			return true;
		}
		sprintf(why, "not boosted (ip %#lx)", r.ip);
		return false;
	}
	regs_to_cpu(&r, &c);
	memcpy(c.xmm, cpu_init.xmm, sizeof(c.xmm));
	run_cpu(&c);
	*o = trap_out;
	ip = o->cpu.ip;
	if (p->boostable == AUP_BOOST_SCRATCH && save - DATA < DATA_SIZE - 8)
		put_unaligned(below_red_zone, (u64 *)save);
	if (getenv("AUP_DEBUG"))
		printf("boost: sig %d code %d addr %#lx ip %#lx\n", o->signo, o->code, o->addr, ip);
	if (o->signo == SIGALRM)
		return true;
	if (ip - slot < SLOT_SIZE) {
		if (o->signo == SIGTRAP && o->code == SI_KERNEL) {
			sprintf(why, "int3 in the slot at +%#lx", ip - 1 - slot);
			return false;
		}
		/* the core moves the task out: the boost's scratch comes back */
		cpu_to_regs(&o->cpu, &r);
		arch_uprobe_boost_leave(&r);
		regs_to_cpu(&r, &o->cpu);
		o->cpu.ip = arch_uprobe_boost_resume((void *)slot, slot, ip, CODE_V);
		if (o->cpu.ip != CODE_V) {
			sprintf(why, "signal %d at the jump back", o->signo);
			return false;
		}
		if (o->addr == ip && (o->signo == SIGFPE || o->signo == SIGILL))
			o->addr = CODE_V;
	} else if (o->signo == SIGTRAP && o->code == SI_KERNEL) {
		o->cpu.ip--;		/* the int3 after the jump back */
		o->signo = 0;
	} else if (ip != CODE_V) {
		o->signo = 0;		/* done; the next fetch faulted */
	}
	return true;
}

/* A 64-bit native run from a fresh random state: its slot page, zeroed. */
static unsigned long native_slot64(void)
{
	setup_native();
	use_layout(&lay64);
	random_state();
	memcpy((void *)DATA, data_init, DATA_SIZE);
	memset((void *)SLOT_NEAR, 0, SLOT_SIZE);
	return SLOT_NEAR;
}

/*
 * The return trampoline on the CPU: the 64-bit entry, stepped up to its
 * syscall, then the system call as sys_uretprobe() sees it (and the int3
 * behind it, as if a tracer had skipped it); the 32-bit entry's int3.
 * The registers of the returning function come back, and the frame is the
 * word below the stack pointer.
 */
static void test_tramp_native(void)
{
	unsigned long slot, r11;
	struct pt_regs r, t;
	struct cpu c;
	long ret;
	int n, i;

	slot = native_slot64();
	arch_uretprobe_fill_trampoline((void *)slot);
	c = cpu_init;
	c.ip = slot;
	c.flags |= X86_EFLAGS_TF;
	for (n = 0; n < 8 && c.ip != slot + 20; n++) {
		run_cpu(&c);
		if (trap_out.signo != SIGTRAP || trap_out.code != TRAP_TRACE)
			break;
		memcpy(c.gpr, trap_out.cpu.gpr, sizeof(c.gpr));
		c.ip = trap_out.cpu.ip;
	}
	CHECK(n == 4 && c.ip == slot + 20 && c.gpr[0] == __NR_uretprobe,
	      "trampoline: 4 insns to the syscall (%d, ip %#lx)", n, c.ip);
	for (i = 0; i < (int)DATA_SIZE; i++)
		if (((u8 *)DATA)[i] != data_init[i] &&
		    DATA + i - (cpu_init.gpr[4] - 32) >= 24)
			break;
	CHECK(i == (int)DATA_SIZE, "trampoline: writes only the 3 words below the return slot");

	/* the syscall: rcx and r11 get the return ip and the flags */
	c.flags &= ~X86_EFLAGS_TF;
	cpu_to_regs(&c, &r);
	r.ip = slot + 22;
	r.cx = slot + 22;
	r11 = c.flags;
	r.r11 = r11;
	r.orig_ax = __NR_uretprobe;
	r.ax = -38L;	/* what the system call entry leaves in ax */
	CHECK(arch_uretprobe_is_syscall(slot, &r), "trampoline: its syscall");
	t = r;
	test_syscall_regs = &r;
	from_trampoline_ret = true;
	nr_handle_return = 0;
	ret = aup_test_sys_uretprobe();
	from_trampoline_ret = false;
	test_syscall_regs = NULL;
	regs_to_cpu(&r, &c);
	CHECK(ret == (long)cpu_init.gpr[0] && !memcmp(c.gpr, cpu_init.gpr, sizeof(c.gpr)) &&
	      r.orig_ax == -1UL && r.ip == slot + 22 && nr_handle_return == 1 &&
	      handle_return_frame == cpu_init.gpr[4] - 8, "trampoline: syscall restores");

	/* ...not made: the int3 behind it */
	regs_to_cpu(&t, &c);		/* as the syscall instruction left them */
	c.ip = slot + 22;
	c.flags = r11;
	memcpy(c.xmm, cpu_init.xmm, sizeof(c.xmm));
	run_cpu(&c);
	cpu_to_regs(&trap_out.cpu, &r);
	CHECK(trap_out.signo == SIGTRAP && trap_out.code == SI_KERNEL &&
	      arch_uretprobe_is_trap(slot, uprobe_get_swbp_addr(&r)), "trampoline: the int3");
	CHECK(arch_uretprobe_trap(slot, &r) == cpu_init.gpr[4] - 8, "trampoline: trap frame");
	regs_to_cpu(&r, &c);
	CHECK(!memcmp(c.gpr, cpu_init.gpr, sizeof(c.gpr)), "trampoline: trap restores");

	/* 32-bit code: an int3 at +32 */
	if (!host_ia32)
		return;
	use_layout(&lay32);
	slot = SLOT_NEAR;
	random_state();
	memset((void *)slot, 0, SLOT_SIZE);
	arch_uretprobe_fill_trampoline((void *)slot);
	cpu_to_regs(&cpu_init, &r);
	CHECK(arch_uretprobe_trampoline(slot, &r) == slot + 32, "trampoline 32: entry");
	c = cpu_init;
	c.ip = slot + 32;
	run_cpu(&c);
	cpu_to_regs(&trap_out.cpu, &r);
	CHECK(trap_out.signo == SIGTRAP && trap_out.code == SI_KERNEL &&
	      arch_uretprobe_is_trap(slot, uprobe_get_swbp_addr(&r)) &&
	      arch_uretprobe_trap(slot, &r) == (u32)cpu_init.gpr[4] - 4, "trampoline 32: the int3");
	use_layout(&lay64);
}

/*
 * Jump sites: a stub run on the CPU, one step at a time, up to its syscall
 * (five instructions that change no flag and write only the three words
 * below the red zone, and after each of which a signal's
 * arch_uprobe_leave_stub() puts the task back at the site as it was), then
 * sys_uprobe() with what the syscall left: the
 * hit sees every register as it was at the site, ax is returned as it was;
 * from no stub in use, SIGILL. The jump, and which sites may have one.
 */
static void test_stub_native(void)
{
	const unsigned long arith = X86_EFLAGS_CF | X86_EFLAGS_PF |
				    X86_EFLAGS_AF | X86_EFLAGS_ZF |
				    X86_EFLAGS_SF | X86_EFLAGS_OF;
	static const u8 nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const u8 mov5[] = { 0xb9, 0x78, 0x56, 0x34, 0x12 };
	static const u8 push[] = { 0x55 };
	unsigned long slot, stub, sp, addr, flags;
	struct arch_uprobe au;
	struct pt_regs r;
	struct cpu c, left;
	u8 jump[8];
	long ret;
	int n, i;

	slot = native_slot64();
	CHECK(arch_uprobe_fill_stubs((void *)slot), "stubs: filled");
	stub = slot + 2 * UPROBE_STUB_BYTES;
	sp = cpu_init.gpr[4];
	c = cpu_init;
	c.ip = stub;
	c.flags |= X86_EFLAGS_TF;
	flags = c.flags;
	for (n = 0; n < 8 && c.ip != stub + 14; n++) {
		/* a signal here: the task goes back to the site, as it was */
		cpu_to_regs(&c, &r);
		arch_uprobe_leave_stub(&r, stub, CODE_V);
		regs_to_cpu(&r, &left);
		if (r.ip != CODE_V || memcmp(left.gpr, cpu_init.gpr, sizeof(left.gpr)))
			break;
		run_cpu(&c);
		if (trap_out.signo != SIGTRAP || trap_out.code != TRAP_TRACE)
			break;
		flags = trap_out.cpu.flags;
		memcpy(c.gpr, trap_out.cpu.gpr, sizeof(c.gpr));
		c.ip = trap_out.cpu.ip;
	}
	CHECK(n == 5 && c.ip == stub + 14 && c.gpr[0] == __NR_uprobe &&
	      c.gpr[4] == sp - 128 - 24 && !((flags ^ cpu_init.flags) & arith),
	      "stub: 5 insns to the syscall, flags kept, left for the site at each (%d, ip %#lx)",
	      n, c.ip);
	cpu_to_regs(&c, &r);
	arch_uprobe_leave_stub(&r, stub, CODE_V);
	regs_to_cpu(&r, &left);
	CHECK(r.ip == CODE_V && !memcmp(left.gpr, cpu_init.gpr, sizeof(left.gpr)),
	      "stub: left for the site at its syscall");
	cpu_to_regs(&c, &r);
	r.ip = stub + 3;
	arch_uprobe_leave_stub(&r, stub, CODE_V);
	CHECK(r.ip == stub + 3, "stub: not left from inside an instruction");
	for (i = 0; i < (int)DATA_SIZE; i++) {
		addr = DATA + i;
		if (((u8 *)DATA)[i] != data_init[i] &&
		    (addr < sp - 128 - 24 || addr >= sp - 128))
			break;
	}
	CHECK(i == (int)DATA_SIZE, "stub: writes only the 3 words below the red zone");

	/* the syscall: rcx and r11 get the return ip and the flags */
	c.flags = cpu_init.flags;
	cpu_to_regs(&c, &r);
	r.ip = stub + 16;
	r.cx = stub + 16;
	r.r11 = c.flags;
	r.orig_ax = __NR_uprobe;
	r.ax = -38L;
	CHECK(arch_uprobe_stub_syscall(&r) == stub, "stub: its syscall");
	test_syscall_regs = &r;
	stub_in_use = stub;
	stub_site_vaddr = CODE_V;
	nr_stub_hit = 0;
	nr_force_sig = 0;
	nr_syscall_unseen = 0;
	ret = aup_test_sys_uprobe();
	regs_to_cpu(&stub_hit_regs, &c);
	CHECK(nr_stub_hit == 1 && stub_hit_vaddr == CODE_V && nr_force_sig == 0 &&
	      nr_syscall_unseen == 1 &&
	      !memcmp(c.gpr, cpu_init.gpr, sizeof(c.gpr)) &&
	      stub_hit_regs.orig_ax == -1UL && ret == (long)cpu_init.gpr[0] &&
	      r.ip == CODE_V + 5, "stub: the hit sees the site's registers");
	/* the same call from elsewhere */
	cpu_to_regs(&cpu_init, &r);
	r.ip = stub + UPROBE_STUB_BYTES + 16;
	r.orig_ax = __NR_uprobe;
	nr_stub_hit = 0;
	nr_syscall_unseen = 0;
	aup_test_sys_uprobe();
	CHECK(nr_stub_hit == 0 && nr_force_sig == 1 && force_sig_nr == SIGILL &&
	      !nr_syscall_unseen,
	      "stub: syscall from elsewhere: SIGILL");
	test_syscall_regs = NULL;
	stub_in_use = 0;

	/* the jump */
	CHECK(arch_uprobe_fill_jump(0x10000, 0x10015, jump) && jump[0] == 0xe9 &&
	      get_unaligned((s32 *)(jump + 1)) == 0x10, "jump: rel32 forward");
	CHECK(arch_uprobe_fill_jump(0x7f0000000000UL, 0x7f0000000000UL - 0x7ffff000UL,
				    jump) &&
	      get_unaligned((s32 *)(jump + 1)) == -0x7ffff005L, "jump: rel32 back");
	CHECK(arch_uprobe_fill_jump(0x10000, 0x10005 + 0x7fffffffUL, jump) &&
	      !arch_uprobe_fill_jump(0x10000, 0x10005 + 0x80000000UL, jump),
	      "jump: reach");

	/* which sites: 5-byte emulated or boosted, 64-bit, not stepped */
	cpu_to_regs(&cpu_init, &r);
	CHECK(!analyze_bytes(&au, nop5, 5, false) && arch_uprobe_jump_len(&au, &r) == 5,
	      "jump: nop5");
	CHECK(!analyze_bytes(&au, mov5, 5, false) && arch_uprobe_jump_len(&au, &r) == 5,
	      "jump: mov $imm32");
	CHECK(!analyze_bytes(&au, push, 1, false) && arch_uprobe_jump_len(&au, &r) == 0,
	      "jump: not a 1-byte push");
	r.flags |= X86_EFLAGS_TF;
	CHECK(!analyze_bytes(&au, nop5, 5, false) && arch_uprobe_jump_len(&au, &r) == 0,
	      "jump: not while single-stepped");
	use_layout(&lay32);
	cpu_to_regs(&cpu_init, &r);
	CHECK(!analyze_bytes(&au, nop5, 5, true) && arch_uprobe_jump_len(&au, &r) == 0,
	      "jump: not in 32-bit code");
	use_layout(&lay64);
}

/*
 * The accesses an emulation showed to the watchpoints (cpu_dr7 enabled,
 * none armed): every byte of DATA that the instruction changed lies in a
 * reported write, a push or call reports the word at the new sp, a load
 * or a jump through memory reports where its value came from, and
 * nothing is reported outside user memory.
 */
static bool check_accesses(const struct arch_uprobe_plan *p, const struct pt_regs *out,
			   char *why)
{
	unsigned int word = L->ia32 ? 4 : 8, i, j;
	bool push = false, covered;
	u64 v;

	if (nr_accesses > MAX_ACCESSES) {
		sprintf(why, "%d accesses", nr_accesses);
		return false;
	}
	for (i = 0; i < (unsigned int)nr_accesses; i++) {
		if (accesses[i].addr < umem_lo || accesses[i].addr + accesses[i].len > umem_hi) {
			sprintf(why, "access at %#lx", accesses[i].addr);
			return false;
		}
		if (accesses[i].write && accesses[i].addr == out->sp && accesses[i].len == word)
			push = true;
		if (!accesses[i].write) {
			v = 0;
			memcpy(&v, data_init + (accesses[i].addr - DATA), accesses[i].len);
			if (p->emul == AUP_EM_LOAD &&
			    v != *aup_regp((struct pt_regs *)out, p->reg)) {
				sprintf(why, "load reported at %#lx", accesses[i].addr);
				return false;
			}
			if ((p->emul == AUP_EM_JMP_MEM || p->emul == AUP_EM_CALL_MEM ||
			     p->emul == AUP_EM_CALL_IND) && v != out->ip) {
				sprintf(why, "pointer reported at %#lx", accesses[i].addr);
				return false;
			}
		}
	}
	for (j = 0; j < DATA_SIZE; j++) {
		if (((u8 *)DATA)[j] == data_init[j])
			continue;
		covered = false;
		for (i = 0; i < (unsigned int)nr_accesses; i++)
			if (accesses[i].write && DATA + j - accesses[i].addr < accesses[i].len)
				covered = true;
		if (!covered) {
			sprintf(why, "write at %#lx not shown", DATA + j);
			return false;
		}
	}
	switch (p->emul) {
	case AUP_EM_PUSH: case AUP_EM_PUSH_IMM: case AUP_EM_PUSHF:
	case AUP_EM_CALL: case AUP_EM_CALL_MEM: case AUP_EM_CALL_REG:
	case AUP_EM_CALL_IND:
		if (!push) {
			sprintf(why, "push not shown");
			return false;
		}
		if ((p->emul == AUP_EM_CALL_REG && nr_accesses != 1) ||
		    (p->emul == AUP_EM_CALL_IND && nr_accesses != 2)) {
			sprintf(why, "%d accesses", nr_accesses);
			return false;
		}
		break;
	case AUP_EM_LOAD: case AUP_EM_JMP_MEM: case AUP_EM_STORE:
		if (nr_accesses != 1) {
			sprintf(why, "%d accesses", nr_accesses);
			return false;
		}
		break;
	case AUP_EM_NOP: case AUP_EM_MOV: case AUP_EM_LEA: case AUP_EM_JMP:
	case AUP_EM_JCC: case AUP_EM_LOOP:
		if (nr_accesses) {
			sprintf(why, "%d accesses", nr_accesses);
			return false;
		}
		break;
	}
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
		i &= ~7;
		sprintf(why, "memory at %#lx: %#llx vs %#llx (was %#llx)", DATA + i,
			(unsigned long long)get_unaligned((u64 *)(data_native + i)),
			(unsigned long long)get_unaligned((u64 *)(DATA + i)),
			(unsigned long long)get_unaligned((u64 *)(data_init + i)));
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
	if (nr_fuzz_fail <= 60 || getenv("AUP_VERBOSE"))
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
	bool top;
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
	top = &laytop == L;
	key[n] = len | (L->ia32 ? 0x80 : 0) | (top ? 0x40 : 0);
	if (seen_before(key, n + 1))
		return;
	nr_fuzz_forms[L->ia32][PL(&au, L->ia32)->exec == AUP_EMULATE ? 0 :
			       PL(&au, L->ia32)->boostable ? 2 : 1]++;

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
			/* watchpoints enabled on the CPU, none matching */
			cpu_dr7 = DR_GLOBAL_ENABLE_MASK;
			nr_accesses = 0;
			nr_sigtrap = 0;
			test_task.thread.virtual_dr6 = 0;
			if (arch_uprobe_skip_sstep(&au, &r)) {
				nr_fuzz_emul++;
				memset(&sim, 0, sizeof(sim));
				regs_to_cpu(&r, &sim.cpu);
				memcpy(sim.cpu.xmm, cpu_init.xmm, sizeof(sim.cpu.xmm));
				if (!check_accesses(PL(&au, L->ia32), &r, why) || nr_sigtrap ||
				    test_task.thread.virtual_dr6)
					report("watch", &au, why);
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
			} else if (nr_accesses) {
				report("watch", &au, "declined, accesses shown");
			}
			cpu_dr7 = 0;
		}

		if (PL(&au, L->ia32)->boostable) {
			memcpy((void *)DATA, data_init, DATA_SIZE);
			if (!boost_outcome(&au, k & 1 ? SLOT_NEAR : SLOT_FAR, &sim, why)) {
				report("boost", &au, why);
			} else if (sim.signo != SIGALRM) {
				nr_fuzz_boost++;
				if (!same_outcome(&nat, &sim, why))
					report(k & 1 ? "boost" : "boostF", &au, why);
			}
		}

		memcpy((void *)DATA, data_init, DATA_SIZE);
		if (!step_outcome(&au, k & 1 ? SLOT_FAR : SLOT_NEAR, &sim)) {
			report("step", &au, "did not complete");
			continue;
		}
		if (sim.signo == SIGALRM)
			continue;
		nr_fuzz_step++;
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

/* ...at the top of user space: relative branches to non-canonical addresses */
static const char * const fuzz_top[] = {
	"e8 ff ff ff 7f", "e9 ff ff ff 7f", "0f 84 ff ff ff 7f", "0f 85 ff ff ff 7f",
	"f2 e8 ff ff ff 7f", "3e 0f 84 ff ff ff 7f", "e8 00 00 00 00", "48 8d 05 ff ff ff 7f",
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
	if (laytop_ok) {
		use_layout(&laytop);
		for (i = 0; i < ARRAY_SIZE(fuzz_top); i++) {
			n = parse_hex(fuzz_top[i], b, 15);
			fuzz_one(b, n);
		}
	}
	if (host_ia32) {
		use_layout(&lay32);
		for (i = 0; i < ARRAY_SIZE(fuzz_extra32); i++) {
			n = parse_hex(fuzz_extra32[i], b, 15);
			fuzz_one(b, n);
		}
		fuzz_random(nrandom);
		use_layout(&lay64);
	}
	printf("fuzz: distinct forms, 64-bit: %d emulated, %d stepped, %d boostable;\n"
	       "      32-bit: %d emulated, %d stepped, %d boostable; %d states each\n",
	       nr_fuzz_forms[0][0], nr_fuzz_forms[0][1], nr_fuzz_forms[0][2],
	       nr_fuzz_forms[1][0], nr_fuzz_forms[1][1], nr_fuzz_forms[1][2], states);
	printf("fuzz: %d runs (native: %d completed, %d faulted; %d emulated, %d declined,\n"
	       "      %d stepped, %d boosted), %d mismatches, %d timeouts skipped,\n"
	       "      %d rep restarts, %d guard ends\n",
	       nr_fuzz_runs, nr_fuzz_done, nr_fuzz_fault, nr_fuzz_emul, nr_fuzz_declined,
	       nr_fuzz_step, nr_fuzz_boost, nr_fuzz_fail, nr_fuzz_skip, nr_fuzz_again,
	       nr_fuzz_guard);
	return nr_fuzz_fail ? 1 : 0;
}

/* The vendor of the CPU the test runs on, for what differs between vendors. */
static void set_host_vendor(void)
{
	unsigned int eax, ebx, ecx, edx;
	char id[13];

	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return;
	memcpy(id, &ebx, 4);
	memcpy(id + 4, &edx, 4);
	memcpy(id + 8, &ecx, 4);
	id[12] = 0;
	if (!strcmp(id, "AuthenticAMD"))
		boot_cpu_data.x86_vendor = X86_VENDOR_AMD;
	else if (!strcmp(id, "HygonGenuine"))
		boot_cpu_data.x86_vendor = X86_VENDOR_HYGON;
}

int main(int argc, char **argv)
{
	set_host_vendor();
	if (argc > 1 && !strcmp(argv[1], "objdump"))
		return do_objdump();
	host_ia32 = host_runs_ia32();
	if (!host_ia32)
		printf("SKIP: this host runs no 32-bit code: 32-bit native runs skipped\n");
	if (argc > 1 && !strcmp(argv[1], "fuzz"))
		return do_fuzz(argc > 2 ? atoi(argv[2]) : 2, true, 0);
	if (argc > 3)
		rng_state = strtoull(argv[3], NULL, 0) | 1;
	if (argc > 1 && !strcmp(argv[1], "random"))
		return do_fuzz(2, false, argc > 2 ? atoi(argv[2]) : 100000);

	test_table();
	test_jcc();
	test_emulate();
	test_load_store();
	test_emulate_watch();
	test_boost();
	test_emulate_param();
	test_step();
	test_uretprobe();
	test_notifiers();
	test_watchpoint();
	test_blockstep_no_tf();
	test_verdicts();
	test_tramp_native();
	test_stub_native();
	printf("table: %zu cases; %d checks, %d failures\n", ARRAY_SIZE(cases), nr_checks,
	       failures);
	if (failures)
		return 1;
	return do_fuzz(2, false, 2000);
}
