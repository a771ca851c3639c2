// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_clients_compat32: uprobes in 32-bit (i686) tasks, which a 64-bit
 * x86 kernel runs as compat tasks (CONFIG_IA32_EMULATION). The target,
 * uprobe_compat32_target, is a static i686 program built by Debian's
 * i686-linux-gnu-gcc and driven by line commands on stdin; this suite, run
 * by the harness in the chroot of the build machine's root (CONFIG=full
 * and debug), probes it through tracefs:
 *
 *  - a probe on each kind of instruction of c32_insns() (push, nop, a load
 *    through %ebp, add, mov, memory at an absolute address, which would be
 *    RIP-relative in 64-bit code, call, ret, jcc): exact hit counts, the
 *    value fetched at each hit, the program's result unchanged;
 *  - a probe on each instruction of c32_modes() that 32-bit code alone
 *    has (inc, dec, pusha, popa) or that means something else in 64-bit
 *    code (lea, call and jmp at absolute addresses, jecxz), and on loop,
 *    push imm32, pushf, rep movsb and leave: exact hits, %ecx and results;
 *  - what the 6.1 fetch-arg grammar gives on 32-bit tasks: the x86-64
 *    register names (%ax, not %eax), 64 bits wide by default;
 *  - return probes on a cdecl function, on callee-pops functions (stdcall's
 *    ret $12, a struct returned by value's ret $4) and on recursive
 *    functions: exact counts, return values, stack pointers and return
 *    addresses, and the caller's %esp intact after ret $n;
 *  - an SDT marker with a semaphore (.note.stapsdt with 4-byte addresses),
 *    probed as "PATH:OFFSET(REF_CTR_OFFSET)": the semaphore is 1 while the
 *    probe is enabled and 0 after, in processes started before and after,
 *    and the marker fires exactly while it is set;
 *  - a probe run out of line in a target started without address
 *    randomization, whose stack takes the top of its address space.
 *
 * The target is a non-PIE executable: the addresses the tests compare
 * with are link-time ones, which they check against /proc/PID/maps too.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_util.h"

#define TARGET		"uprobe_compat32_target"
#define MAX_CHILDREN	2
#define N_INSNS		20	/* calls of c32_insns() per test */
#define N_MODES		10	/* calls of c32_modes() per test */
/* what c32_modes(x) returns */
#define C32_MODES(x)	(2LL * (x) + 4304 + 0x68676665)

/* ---- the target ---- */

/* Start the target as @child[*@nchild]; its index, or -1. */
static int start_target(struct ut_child *child, int *nchild)
{
	const char *const argv[] = { ut_helper(TARGET), NULL };
	struct ut_child *c = &child[*nchild];
	char buf[64];

	if (*nchild >= MAX_CHILDREN || ut_spawn(argv, c))
		return -1;
	(*nchild)++;
	if (ut_cmd(c, buf, sizeof(buf), "ping") || strcmp(buf, "pong"))
		return -1;
	return *nchild - 1;
}

/*
 * Send "CMD N" to @c and parse its "ok VALUE" (or "VALUE") reply into
 * @val; 0 or -1.
 */
static int ask(struct ut_child *c, long long *val, const char *cmd, int n)
{
	char buf[128];

	if (ut_cmd(c, buf, sizeof(buf), "%s %d", cmd, n))
		return -1;
	if (sscanf(buf, "ok %lld", val) == 1 || sscanf(buf, "%lld", val) == 1)
		return 0;
	return -1;
}

/* The target's file offset and link-time address of symbol @sym. */
static uint64_t sym_off(const char *sym)
{
	return ut_elf_sym_offset(ut_helper(TARGET), sym);
}

static uint64_t sym_va(const char *sym)
{
	return ut_elf_sym_vaddr(ut_helper(TARGET), sym);
}

/*
 * Define @kind ("p" or "r") probe GRP/EV on symbol @sym of the target, with
 * fetch args @args (a format), and enable it; 0 or -errno.
 */
static int __printf(5, 6) probe_sym(const char *kind, const char *grp,
				    const char *ev, const char *sym,
				    const char *args, ...)
{
	char fa[512];
	va_list ap;
	int ret;

	va_start(ap, args);
	vsnprintf(fa, sizeof(fa), args, ap);
	va_end(ap);
	ret = ut_probe_add("%s:%s/%s %s:0x%lx %s", kind, grp, ev,
			   ut_helper(TARGET), (unsigned long)sym_off(sym), fa);
	return ret ? ret : ut_event_enable(grp, ev, true);
}

/*
 * The "@+OFFSET" of the target's data symbol @sym: its address less the
 * bias of the probed text's mapping (link address - file offset), which is
 * how the kernel resolves it; the data segment's own bias differs.
 */
static uint64_t sym_foffs(const char *sym)
{
	return sym_va(sym) - (sym_va("c32_insns") - sym_off("c32_insns"));
}

/* ---- records ---- */

/*
 * Read event @ev's records of @pid: exactly @n, each with fetch arg @name,
 * into @vals (and the "(0xRET <- 0xFUNC)" addresses into @ret and @func
 * when not NULL). Fails the test on any other count or a missing value.
 */
static void get_recs(struct __test_metadata *_metadata, const char *ev,
		     pid_t pid, const char *name, int n, uint64_t *vals,
		     uint64_t *ret, uint64_t *func)
{
	char **recs;
	uint64_t ip, fn;
	int i, got;

	got = ut_trace_records(ev, pid, &recs);
	ASSERT_EQ(n, got) {
		for (i = 0; i < got && i < 8; i++)
			TH_LOG("%s record %d: %s", ev, i, recs[i]);
		ut_free_records(recs, got);
	}
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, ut_rec_u64(recs[i], name, &vals[i]))
			TH_LOG("%s record %d: %s", ev, i, recs[i]);
		EXPECT_EQ(0, ut_rec_ip(recs[i], &ip, &fn));
		if (ret)
			ret[i] = ip;
		if (func)
			func[i] = fn;
	}
	ut_free_records(recs, n);
}

/* ---- c32_insns(), modelled ---- */

/* what c32_insns(x) finds and leaves, for x = 0 .. N_INSNS - 1 */
struct insns_model {
	uint32_t x[N_INSNS], y[N_INSNS];
	uint32_t acc_before[N_INSNS], acc_after[N_INSNS];
	uint32_t eax_jcc[N_INSNS];	/* %eax at the jcc */
	long long sum;			/* the sum of the results */
};

static void insns_model(struct insns_model *m)
{
	uint32_t acc = 0;
	int i;

	m->sum = 0;
	for (i = 0; i < N_INSNS; i++) {
		m->x[i] = i;
		m->y[i] = i + 7;
		m->acc_before[i] = acc;
		acc += m->y[i];
		m->acc_after[i] = acc;
		m->eax_jcc[i] = 3 * m->y[i] + acc;
		m->sum += (int32_t)(m->eax_jcc[i] + (m->y[i] & 1 ? 1000 : 0));
	}
}

/* Which value of the model an instruction's probe fetches. */
enum insn_val {
	IV_X, IV_Y, IV_ACC_BEFORE, IV_ACC_AFTER, IV_EAX_JCC, IV_RETADDR,
};

static uint64_t model_val(const struct insns_model *m, enum insn_val v, int i)
{
	switch (v) {
	case IV_X:
		return m->x[i];
	case IV_Y:
		return m->y[i];
	case IV_ACC_BEFORE:
		return m->acc_before[i];
	case IV_ACC_AFTER:
		return m->acc_after[i];
	case IV_EAX_JCC:
		return m->eax_jcc[i];
	case IV_RETADDR:
		return sym_va("c32_i_after_call");
	}
	return ~0ULL;
}

/* ---- the fixtures ---- */

FIXTURE(c32) {
	char grp[64];
	struct ut_child child[MAX_CHILDREN];
	int nchild;
};

FIXTURE_SETUP(c32)
{
	ASSERT_TRUE(ut_file_exists(ut_helper(TARGET)))
		TH_LOG("no %s: the suite's Makefile builds it", TARGET);
}

FIXTURE_TEARDOWN(c32)
{
	int i;

	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)
#define START_TARGET()	start_target(self->child, &self->nchild)

/*
 * The target runs as a 32-bit task: every mapping below 4 GiB, [vdso]
 * among them, and its text where its ELF32 headers put it.
 */
TEST_F(c32, target_is_compat)
{
	char path[64], *maps, *line, *save = NULL;
	int t, n = 0, vdso = 0;
	struct ut_child *c;

	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	snprintf(path, sizeof(path), "/proc/%d/maps", c->pid);
	maps = ut_read_file(path, NULL);
	ASSERT_NE(NULL, maps);
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		n++;
		EXPECT_GE(0x100000000UL, end) TH_LOG("mapping %s", line);
		if (strstr(line, "[vdso]"))
			vdso++;
	}
	free(maps);
	EXPECT_LT(3, n);
	EXPECT_EQ(1, vdso);
	EXPECT_EQ(sym_va("c32_i_push"),
		  ut_fileoff_to_vaddr(c->pid, ut_helper(TARGET),
				      sym_off("c32_i_push")));
}

/*
 * The start and end of the first mapping of process @pid whose line has
 * @name; 0 or -1.
 */
static int mapping_of(pid_t pid, const char *name, unsigned long *start,
		      unsigned long *end)
{
	char path[64], *maps, *line, *save = NULL;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = ut_read_file(path, NULL);
	if (!maps)
		return -1;
	for (line = strtok_r(maps, "\n", &save); line && ret;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, name) &&
		    sscanf(line, "%lx-%lx", start, end) == 2)
			ret = 0;
	free(maps);
	return ret;
}

/*
 * A target started without address randomization, as gdb starts one: its
 * stack ends at the top of its address space, where the XOL area would
 * go. A probe on an instruction run out of line (mov abs32, %edx) fires
 * once per call, and the XOL area is mapped below 4 GiB, clear of the
 * stack's room to grow.
 */
TEST_F(c32, xol_area_without_aslr)
{
	unsigned long xol_start, xol_end, stk_start, stk_end;
	int persona = personality(0xffffffff);
	struct insns_model m;
	struct ut_child *c;
	struct rlimit rl;
	long long v;
	int t;

	if (START("c32_noaslr"))
		return;
	insns_model(&m);
	ASSERT_NE(-1, persona);
	ASSERT_NE(-1, personality(persona | ADDR_NO_RANDOMIZE));
	t = START_TARGET();
	personality(persona);
	ASSERT_LE(0, t);
	c = &self->child[t];
	ASSERT_EQ(0, mapping_of(c->pid, "[stack]", &stk_start, &stk_end));
	ASSERT_EQ(0, probe_sym("p", self->grp, "c32_noaslr", "c32_i_absload",
			       "v=@+0x%lx:u32",
			       (unsigned long)sym_foffs("c32_acc")));
	ASSERT_EQ(0, ask(c, &v, "insns", N_INSNS));
	EXPECT_EQ(m.sum, v);
	EXPECT_EQ(N_INSNS, ut_trace_count("c32_noaslr", c->pid));
	ASSERT_EQ(0, mapping_of(c->pid, "[uprobes]", &xol_start, &xol_end));
	TH_LOG("XOL area at %#lx-%#lx, stack at %#lx-%#lx", xol_start,
	       xol_end, stk_start, stk_end);
	EXPECT_GE(0x100000000UL, xol_end);
	ASSERT_EQ(0, getrlimit(RLIMIT_STACK, &rl));
	if (rl.rlim_cur != RLIM_INFINITY)
		EXPECT_LE(xol_end + rl.rlim_cur, stk_end);
}

/*
 * The ELF helpers read the 32-bit file: symbols, file offsets, and the
 * SDT note's 4-byte addresses, argument and semaphore.
 */
TEST_F(c32, elf32_helpers)
{
	const char *path = ut_helper(TARGET);
	struct ut_sdt_note n;
	int64_t push, nop;

	push = ut_elf_sym_offset(path, "c32_i_push");
	nop = ut_elf_sym_offset(path, "c32_i_nop");
	ASSERT_LT(0, push);
	/* push %ebp (1 byte), mov %esp, %ebp (2 bytes) */
	EXPECT_EQ(push + 3, nop);
	EXPECT_EQ(push, ut_elf_vaddr_to_offset(path, sym_va("c32_i_push")));
	/* i386 executables are linked at 0x8048000 */
	EXPECT_EQ(0x8048000ULL, sym_va("c32_i_push") - push);
	ASSERT_EQ(0, ut_sdt_find(path, "c32", "mark", &n));
	EXPECT_STREQ("-4@%ebx", n.args);
	EXPECT_EQ(sym_va("c32_mark_semaphore"), n.sem);
	EXPECT_EQ(sym_off("c32_mark_semaphore"), n.sem_off);
	EXPECT_EQ((uint64_t)ut_elf_vaddr_to_offset(path, n.pc), n.pc_off);
	EXPECT_LT(sym_va("c32_mark"), n.pc);
	EXPECT_GT(sym_va("c32_mark") + 64, n.pc);
	EXPECT_EQ(-1, ut_sdt_find(path, "c32", "nosuch", &n));
}

/* The target's own results, unprobed, are those of the tests' model. */
TEST_F(c32, model_unprobed)
{
	struct insns_model m;
	struct ut_child *c;
	long long v;
	int t;

	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	insns_model(&m);
	ASSERT_EQ(0, ask(c, &v, "insns", N_INSNS));
	EXPECT_EQ(m.sum, v);
	ASSERT_EQ(0, ask(c, &v, "acc", 0));
	EXPECT_EQ(m.acc_after[N_INSNS - 1], v);
	ASSERT_EQ(0, ask(c, &v, "last", 0));
	EXPECT_EQ(m.acc_after[N_INSNS - 1], v);
	ASSERT_EQ(0, ask(c, &v, "modes", 2));
	EXPECT_EQ(C32_MODES(0) + C32_MODES(1), v);
	ASSERT_EQ(0, ask(c, &v, "tri", 10));
	EXPECT_EQ(55, v);
	ASSERT_EQ(0, ask(c, &v, "trs", 10));
	EXPECT_EQ(55, v);
	ASSERT_EQ(0, ask(c, &v, "badsp", 0));
	EXPECT_EQ(0, v);
}

/* ---- one probe on each instruction kind ---- */

FIXTURE(insn) {
	char grp[64];
	struct ut_child child[MAX_CHILDREN];
	int nchild;
	int jump_was;
};

/* the probed label, its fetch arg "v=..." (NULL: c32_acc) and its value */
FIXTURE_VARIANT(insn) {
	const char *label;
	const char *fetch;
	enum insn_val val;
};

FIXTURE_SETUP(insn)
{
	ASSERT_TRUE(ut_file_exists(ut_helper(TARGET)))
		TH_LOG("no %s: the suite's Makefile builds it", TARGET);
	/* ours: with jump sites on, which 32-bit code must not get */
	self->jump_was = ut_jump_sites(true);
}

FIXTURE_TEARDOWN(insn)
{
	int i;

	if (self->jump_was >= 0)
		ut_jump_sites(self->jump_was);
	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/* push %ebp at function entry: the cdecl argument above the return address */
FIXTURE_VARIANT_ADD(insn, push) {
	.label = "c32_i_push", .fetch = "+4($stack):u32", .val = IV_X,
};

/* nop: the argument through the new frame pointer */
FIXTURE_VARIANT_ADD(insn, nop) {
	.label = "c32_i_nop", .fetch = "+8(%bp):u32", .val = IV_X,
};

/* mov 8(%ebp), %eax: the word it loads */
FIXTURE_VARIANT_ADD(insn, load_ebp) {
	.label = "c32_i_load", .fetch = "+8(%bp):u32", .val = IV_X,
};

/* add $7, %eax: %eax before it */
FIXTURE_VARIANT_ADD(insn, add) {
	.label = "c32_i_add", .fetch = "%ax:u32", .val = IV_X,
};

/* mov %eax, %ecx: %eax after the add */
FIXTURE_VARIANT_ADD(insn, mov) {
	.label = "c32_i_mov", .fetch = "%ax:u32", .val = IV_Y,
};

/* add %ecx, abs32: the word in memory before it (@+OFFSET) */
FIXTURE_VARIANT_ADD(insn, abs_rmw) {
	.label = "c32_i_absrmw", .fetch = NULL, .val = IV_ACC_BEFORE,
};

/* mov abs32, %edx: the word in memory, which the add changed */
FIXTURE_VARIANT_ADD(insn, abs_load) {
	.label = "c32_i_absload", .fetch = NULL, .val = IV_ACC_AFTER,
};

/* mov %edx, abs32: %edx, which the load set */
FIXTURE_VARIANT_ADD(insn, abs_store) {
	.label = "c32_i_absstore", .fetch = "%dx:u32", .val = IV_ACC_AFTER,
};

/* call rel32: %ecx, which the callee uses */
FIXTURE_VARIANT_ADD(insn, call) {
	.label = "c32_i_call", .fetch = "%cx:u32", .val = IV_Y,
};

/* ret: the 4-byte return address on top of the stack */
FIXTURE_VARIANT_ADD(insn, ret) {
	.label = "c32_i_ret", .fetch = "+0($stack):u32", .val = IV_RETADDR,
};

/* jz rel8, taken for even y: %eax, which the call set */
FIXTURE_VARIANT_ADD(insn, jcc) {
	.label = "c32_i_jcc", .fetch = "%ax:u32", .val = IV_EAX_JCC,
};

/*
 * A probe on the variant's instruction hits once per call, with the right
 * value and address, and the program's results, its memory stores and its
 * caller's %esp are those of the unprobed program; the instruction keeps
 * the breakpoint (ours: also with jump sites on, which are for 64-bit
 * code only).
 */
TEST_F(insn, hits_values_results)
{
	uint64_t vals[N_INSNS], ips[N_INSNS];
	struct insns_model m;
	char fetch[64];
	struct ut_child *c;
	long long v;
	uint8_t b;
	int i, t;

	if (START("c32_insn"))
		return;
	insns_model(&m);
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	if (variant->fetch)
		snprintf(fetch, sizeof(fetch), "v=%s", variant->fetch);
	else
		snprintf(fetch, sizeof(fetch), "v=@+0x%lx:u32",
			 (unsigned long)sym_foffs("c32_acc"));
	ASSERT_EQ(0, probe_sym("p", self->grp, "c32_insn", variant->label,
			       "%s", fetch));
	ASSERT_EQ(0, ask(c, &v, "insns", N_INSNS));
	EXPECT_EQ(m.sum, v);
	get_recs(_metadata, "c32_insn", c->pid, "v", N_INSNS, vals, ips, NULL);
	for (i = 0; i < N_INSNS; i++) {
		EXPECT_EQ(model_val(&m, variant->val, i), vals[i])
			TH_LOG("%s, call %d", variant->label, i);
		EXPECT_EQ(sym_va(variant->label), ips[i]);
	}
	ASSERT_EQ(0, ut_proc_read_u8(c->pid, sym_va(variant->label), &b));
	EXPECT_EQ((uint8_t)UT_BP[0], b) {
		TH_LOG("%s: %#x where the breakpoint should be", variant->label,
		       b);
	}
	ASSERT_EQ(0, ask(c, &v, "last", 0));
	EXPECT_EQ(m.acc_after[N_INSNS - 1], v);
	/* once disabled, no more hits, and the same results */
	ASSERT_EQ(0, ut_event_enable(self->grp, "c32_insn", false));
	ASSERT_EQ(0, ask(c, &v, "insns", N_INSNS));
	EXPECT_EQ(m.sum, v);
	EXPECT_EQ(N_INSNS, ut_trace_count("c32_insn", c->pid));
}

/* ---- all of them at once ---- */

static const char * const all_labels[] = {
	"c32_i_push", "c32_i_nop", "c32_i_load", "c32_i_add", "c32_i_mov",
	"c32_i_absrmw", "c32_i_absload", "c32_i_absstore", "c32_i_call",
	"c32_i_ret", "c32_i_jcc",
};

#define N_LABELS	((int)ARRAY_SIZE(all_labels))

/*
 * Probes on all eleven instructions of c32_insns() at once: each hits
 * exactly once per call, at its address, and the results are exact.
 */
TEST_F(c32, all_insns_at_once)
{
	uint64_t vals[N_INSNS], ips[N_INSNS];
	struct insns_model m;
	struct ut_child *c;
	char ev[32];
	long long v;
	int i, j, t;

	if (START("c32_all"))
		return;
	insns_model(&m);
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	for (i = 0; i < N_LABELS; i++) {
		snprintf(ev, sizeof(ev), "c32_all_%d", i);
		ASSERT_EQ(0, probe_sym("p", self->grp, ev, all_labels[i],
				       "x=%%ax:u32"));
	}
	ASSERT_EQ(0, ask(c, &v, "insns", N_INSNS));
	EXPECT_EQ(m.sum, v);
	for (i = 0; i < N_LABELS; i++) {
		snprintf(ev, sizeof(ev), "c32_all_%d", i);
		get_recs(_metadata, ev, c->pid, "x", N_INSNS, vals, ips, NULL);
		for (j = 0; j < N_INSNS; j++)
			EXPECT_EQ(sym_va(all_labels[i]), ips[j]);
	}
	ASSERT_EQ(0, ask(c, &v, "last", 0));
	EXPECT_EQ(m.acc_after[N_INSNS - 1], v);
	ASSERT_EQ(0, ask(c, &v, "badsp", 0));
	EXPECT_EQ(0, v);
}

/* ---- instructions of 32-bit code only, and of another meaning there ---- */

FIXTURE(mode) {
	char grp[64];
	struct ut_child child[MAX_CHILDREN];
	int nchild;
};

/*
 * The probed label of c32_modes(), its hits per call, %ecx at the first
 * of them when known (one less at each next); on stock 6.1, its hits per
 * call (0: the same) and how much a call's result differs from the
 * unprobed one.
 */
FIXTURE_VARIANT(mode) {
	const char *label;
	int hits;
	bool has_cx;
	uint32_t cx0;
	int stock_hits;
	long long stock_delta;
	const char *stock_fails;
};

FIXTURE_SETUP(mode)
{
	ASSERT_TRUE(ut_file_exists(ut_helper(TARGET)))
		TH_LOG("no %s: the suite's Makefile builds it", TARGET);
}

FIXTURE_TEARDOWN(mode)
{
	int i;

	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/* inc %eax (40), a REX prefix in 64-bit code */
FIXTURE_VARIANT_ADD(mode, inc) {
	.label = "c32_m_inc", .hits = 1,
};

/* lea abs32, %esi: RIP-relative in 64-bit code */
FIXTURE_VARIANT_ADD(mode, lea_abs) {
	.label = "c32_m_lea_abs", .hits = 1,
};

/* call *abs32: through a RIP-relative pointer in 64-bit code */
FIXTURE_VARIANT_ADD(mode, call_abs) {
	.label = "c32_m_call_abs", .hits = 1,
};

/* jmp *abs32: through a RIP-relative pointer in 64-bit code */
FIXTURE_VARIANT_ADD(mode, jmp_abs) {
	.label = "c32_m_jmp_abs", .hits = 1,
};

/* loop rel8, counting %ecx: taken twice, then not */
FIXTURE_VARIANT_ADD(mode, loop) {
	.label = "c32_m_loop", .hits = 3, .has_cx = true, .cx0 = 3,
};

/* jecxz rel8 (jrcxz in 64-bit code), taken */
FIXTURE_VARIANT_ADD(mode, jecxz) {
	.label = "c32_m_jecxz", .hits = 1, .has_cx = true, .cx0 = 0,
};

/* dec %ecx (49), a REX prefix in 64-bit code */
FIXTURE_VARIANT_ADD(mode, dec) {
	.label = "c32_m_dec", .hits = 1, .has_cx = true, .cx0 = 0,
};

/* pusha (60), invalid in 64-bit code */
FIXTURE_VARIANT_ADD(mode, pusha) {
	.label = "c32_m_pusha", .hits = 1, .has_cx = true, .cx0 = 0xffffffff,
};

/* popa (61), invalid in 64-bit code */
FIXTURE_VARIANT_ADD(mode, popa) {
	.label = "c32_m_popa", .hits = 1, .has_cx = true, .cx0 = 0xffffffff,
};

/* push imm32: a 4-byte push */
FIXTURE_VARIANT_ADD(mode, push_imm) {
	.label = "c32_m_push_imm", .hits = 1, .has_cx = true,
	.cx0 = 0xffffffff,
};

/*
 * pushf: the program's flags, TF clear. Stock 6.1 steps it with TF set
 * and leaves TF (0x100) in the pushed word, which c32_modes adds.
 */
FIXTURE_VARIANT_ADD(mode, pushf) {
	.label = "c32_m_pushf", .hits = 1, .has_cx = true, .cx0 = 0xffffffff,
	.stock_delta = 0x100, .stock_fails = "pushf pushed TF (0x100)",
};

/*
 * rep movsb of 8 bytes: one hit. Stock 6.1 single-steps one iteration,
 * sends the task back to the probed address and hits again: 8 hits.
 */
FIXTURE_VARIANT_ADD(mode, rep_movsb) {
	.label = "c32_m_rep", .hits = 1, .has_cx = true, .cx0 = 8,
	.stock_hits = 8, .stock_fails = "a hit per iteration of rep movsb",
};

/* leave (c9) */
FIXTURE_VARIANT_ADD(mode, leave) {
	.label = "c32_m_leave", .hits = 1, .has_cx = true, .cx0 = 0,
};

/*
 * A probe on the variant's instruction of c32_modes() hits the number of
 * times it runs, at its address, with the right %ecx, and the program's
 * results are those of the unprobed program (stock 6.1's differences are
 * asserted as such).
 */
TEST_F(mode, hits_results)
{
	bool stock = ut_impl_is_stock() && variant->stock_fails;
	int hits = stock && variant->stock_hits ? variant->stock_hits :
		   variant->hits;
	uint64_t vals[N_MODES * 8], ips[N_MODES * 8];
	long long v, want = 0;
	struct ut_child *c;
	int i, j, t;

	if (START("c32_mode"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	for (i = 0; i < N_MODES; i++)
		want += C32_MODES(i);
	ASSERT_EQ(0, ask(c, &v, "modes", N_MODES));
	ASSERT_EQ(want, v);
	ASSERT_EQ(0, probe_sym("p", self->grp, "c32_mode", variant->label,
			       "cx=%%cx:u32"));
	ASSERT_EQ(0, ask(c, &v, "modes", N_MODES));
	if (stock) {
		UT_STOCK_FAILS("%s: %d hits per call, results %+lld each",
			       variant->stock_fails, hits,
			       (v - want) / N_MODES);
		want += variant->stock_delta * N_MODES;
	}
	EXPECT_EQ(want, v);
	get_recs(_metadata, "c32_mode", c->pid, "cx", N_MODES * hits, vals,
		 ips, NULL);
	for (i = 0; i < N_MODES; i++) {
		for (j = 0; j < hits; j++) {
			EXPECT_EQ(sym_va(variant->label), ips[i * hits + j]);
			if (variant->has_cx)
				EXPECT_EQ((uint32_t)(variant->cx0 - j),
					  vals[i * hits + j])
					TH_LOG("call %d, hit %d", i, j);
		}
	}
	/* disabled: no more hits, the unprobed results */
	ASSERT_EQ(0, ut_event_enable(self->grp, "c32_mode", false));
	ASSERT_EQ(0, ask(c, &v, "modes", N_MODES));
	EXPECT_EQ(want - (stock ? variant->stock_delta * N_MODES : 0), v);
	EXPECT_EQ(N_MODES * hits, ut_trace_count("c32_mode", c->pid));
}

/* ---- the register names of the 6.1 grammar ---- */

/*
 * %eax is no register name to the fetch-arg grammar, on any task: the
 * names are x86-64's pt_regs ones (ax, cx, ..., r8 ... r15).
 */
TEST_F(c32, eax_name_refused)
{
	char *log;

	if (START("c32_eax"))
		return;
	ASSERT_EQ(0, ut_error_log_clear());
	EXPECT_EQ(-EINVAL, probe_sym("p", self->grp, "c32_eax", "c32_i_mov",
				     "x=%%eax"));
	EXPECT_FALSE(ut_uprobe_events_has(self->grp, "c32_eax"));
	log = ut_error_log();
	ASSERT_NE(NULL, log);
	EXPECT_NE(NULL, strstr(log, "Invalid register name")) TH_LOG("%s", log);
	free(log);
}

/*
 * On a 32-bit task %ax is the whole of pt_regs->ax: untyped (x64) it
 * shows the 32-bit value zero-extended (32-bit results clear the upper
 * half), :u32 and :s32 its 32 bits, and $retval the same.
 */
TEST_F(c32, reg_width)
{
	uint64_t a64[8], a32[8], as[8], r64[8], rs[8];
	struct ut_child *c;
	long long v, sum = 0;
	int i, t;

	if (START("c32_regw"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	/* c32_insns' mov %eax, %ecx with %eax = x + 7; cdecl's a * b - 5 */
	ASSERT_EQ(0, probe_sym("p", self->grp, "c32_regw_p", "c32_i_mov",
			       "a64=%%ax a32=%%ax:u32 as=%%ax:s32"));
	ASSERT_EQ(0, probe_sym("r", self->grp, "c32_regw_r", "c32_cdecl",
			       "r64=$retval rs=$retval:s32"));
	ASSERT_EQ(0, ask(c, &v, "insns", 8));
	ASSERT_EQ(0, ask(c, &v, "cdecl", 8));
	get_recs(_metadata, "c32_regw_p", c->pid, "a64", 8, a64, NULL, NULL);
	get_recs(_metadata, "c32_regw_p", c->pid, "a32", 8, a32, NULL, NULL);
	get_recs(_metadata, "c32_regw_p", c->pid, "as", 8, as, NULL, NULL);
	get_recs(_metadata, "c32_regw_r", c->pid, "r64", 8, r64, NULL, NULL);
	get_recs(_metadata, "c32_regw_r", c->pid, "rs", 8, rs, NULL, NULL);
	for (i = 0; i < 8; i++) {
		int32_t ret = (i - 3) * (i + 1) - 5;

		EXPECT_EQ((uint64_t)i + 7, a64[i]);
		EXPECT_EQ((uint64_t)i + 7, a32[i]);
		EXPECT_EQ(i + 7, (int64_t)as[i]);
		/* a negative int: 0xfffffff8 untyped, -8 as s32 */
		EXPECT_EQ((uint64_t)(uint32_t)ret, r64[i]) TH_LOG("call %d", i);
		EXPECT_EQ((int64_t)ret, (int64_t)rs[i]);
		sum += ret;
	}
	EXPECT_EQ(sum, v);
}

/* ---- return probes ---- */

/*
 * Entry and return probes on cdecl c32_cdecl(a, b): the arguments read
 * from the stack, $retval a * b - 5 (negative ones too), the return
 * address that of the caller and %esp 4 bytes above the entry's.
 */
TEST_F(c32, ret_cdecl)
{
	const char *entry = "a=+4($stack):s32 b=+8($stack):s32 sp=$stack:u32 ra=+0($stack):u32";
	uint64_t a[8], b[8], sp[8], ra[8], rv[8], rsp[8], ret[8], func[8];
	struct ut_child *c;
	long long v, sum = 0;
	int i, t;

	if (START("c32_rcd"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	ASSERT_EQ(0, probe_sym("p", self->grp, "c32_rcd_p", "c32_cdecl", "%s",
			       entry));
	ASSERT_EQ(0, probe_sym("r", self->grp, "c32_rcd_r", "c32_cdecl",
			       "rv=$retval:s32 sp=$stack:u32"));
	ASSERT_EQ(0, ask(c, &v, "cdecl", 8));
	get_recs(_metadata, "c32_rcd_p", c->pid, "a", 8, a, NULL, NULL);
	get_recs(_metadata, "c32_rcd_p", c->pid, "b", 8, b, NULL, NULL);
	get_recs(_metadata, "c32_rcd_p", c->pid, "sp", 8, sp, NULL, NULL);
	get_recs(_metadata, "c32_rcd_p", c->pid, "ra", 8, ra, NULL, NULL);
	get_recs(_metadata, "c32_rcd_r", c->pid, "rv", 8, rv, ret, func);
	get_recs(_metadata, "c32_rcd_r", c->pid, "sp", 8, rsp, NULL, NULL);
	for (i = 0; i < 8; i++) {
		int32_t want = (i - 3) * (i + 1) - 5;

		EXPECT_EQ(i - 3, (int64_t)a[i]);
		EXPECT_EQ(i + 1, (int64_t)b[i]);
		EXPECT_EQ((int64_t)want, (int64_t)rv[i]) TH_LOG("call %d", i);
		EXPECT_EQ(sp[i] + 4, rsp[i]);
		EXPECT_EQ(ra[i], ret[i]);
		EXPECT_EQ(sym_va("c32_cdecl"), func[i]);
		sum += want;
	}
	EXPECT_EQ(sum, v);
}

/*
 * Return probe on stdcall c32_stdcall(a, b, c), which pops its 12 bytes
 * of arguments (ret $12): $retval exact, %esp 16 bytes above the entry's
 * at the return, which goes to c32_call3, and the caller's %esp intact.
 */
TEST_F(c32, ret_stdcall_pops_12)
{
	uint64_t sp[8], rv[8], rsp[8], ret[8], func[8];
	struct ut_child *c;
	long long v, sum = 0;
	int i, t;

	if (START("c32_rsc"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	ASSERT_EQ(0, probe_sym("p", self->grp, "c32_rsc_p", "c32_stdcall",
			       "sp=$stack:u32"));
	ASSERT_EQ(0, probe_sym("r", self->grp, "c32_rsc_r", "c32_stdcall",
			       "rv=$retval:s32 sp=$stack:u32"));
	ASSERT_EQ(0, ask(c, &v, "stdcall", 8));
	get_recs(_metadata, "c32_rsc_p", c->pid, "sp", 8, sp, NULL, NULL);
	get_recs(_metadata, "c32_rsc_r", c->pid, "rv", 8, rv, ret, func);
	get_recs(_metadata, "c32_rsc_r", c->pid, "sp", 8, rsp, NULL, NULL);
	for (i = 0; i < 8; i++) {
		int32_t want = i * 100 + (i + 1) * 10 - (i + 2);

		EXPECT_EQ((int64_t)want, (int64_t)rv[i]) TH_LOG("call %d", i);
		EXPECT_EQ(sp[i] + 4 + 12, rsp[i]);
		EXPECT_EQ(sym_va("c32_call3_ret"), ret[i]);
		EXPECT_EQ(sym_va("c32_stdcall"), func[i]);
		sum += want;
	}
	EXPECT_EQ(sum, v);
	ASSERT_EQ(0, ask(c, &v, "badsp", 0));
	EXPECT_EQ(0, v);
}

/*
 * Return probe on c32_pair(x), which returns a struct by value: it stores
 * it through the hidden pointer its caller pushed, returns that pointer
 * in %eax and pops it (ret $4). $retval is the pointer, the struct read
 * through it exact, %esp 8 bytes above the entry's, the caller's intact.
 */
TEST_F(c32, ret_struct_pops_4)
{
	uint64_t sp[8], ptr[8], x[8], rv[8], fa[8], fb[8], rsp[8], ret[8];
	struct ut_child *c;
	long long v, sum = 0;
	int i, t;

	if (START("c32_rst"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	ASSERT_EQ(0, probe_sym("p", self->grp, "c32_rst_p", "c32_pair",
			       "sp=$stack:u32 ptr=+4($stack):u32 x=+8($stack):s32"));
	ASSERT_EQ(0, probe_sym("r", self->grp, "c32_rst_r", "c32_pair",
			       "rv=$retval:u32 a=+0($retval):s32 b=+4($retval):s32 sp=$stack:u32"));
	ASSERT_EQ(0, ask(c, &v, "pair", 8));
	get_recs(_metadata, "c32_rst_p", c->pid, "sp", 8, sp, NULL, NULL);
	get_recs(_metadata, "c32_rst_p", c->pid, "ptr", 8, ptr, NULL, NULL);
	get_recs(_metadata, "c32_rst_p", c->pid, "x", 8, x, NULL, NULL);
	get_recs(_metadata, "c32_rst_r", c->pid, "rv", 8, rv, ret, NULL);
	get_recs(_metadata, "c32_rst_r", c->pid, "a", 8, fa, NULL, NULL);
	get_recs(_metadata, "c32_rst_r", c->pid, "b", 8, fb, NULL, NULL);
	get_recs(_metadata, "c32_rst_r", c->pid, "sp", 8, rsp, NULL, NULL);
	for (i = 0; i < 8; i++) {
		int xi = i - 2;

		EXPECT_EQ(xi, (int64_t)x[i]);
		EXPECT_EQ(ptr[i], rv[i]) TH_LOG("call %d", i);
		EXPECT_EQ(7 * xi, (int64_t)fa[i]);
		EXPECT_EQ(xi - 9, (int64_t)fb[i]);
		EXPECT_EQ(sp[i] + 4 + 4, rsp[i]);
		EXPECT_EQ(sym_va("c32_call3_ret"), ret[i]);
		sum += 6 * xi + 9;
	}
	EXPECT_EQ(sum, v);
	ASSERT_EQ(0, ask(c, &v, "badsp", 0));
	EXPECT_EQ(0, v);
}

/*
 * Entry and return probes on recursive @fn ("tri": cdecl c32_tri, "trs":
 * stdcall c32_trs, ret $4) called with 10: 11 entries (n = 10 .. 0) and 11
 * returns, innermost first, each $retval n(n + 1)/2, returning to the
 * address its entry found on the stack, %esp @pop bytes further up.
 */
static void ret_recursive(struct __test_metadata *_metadata,
			  struct ut_child *c, const char *grp,
			  const char *cmd, const char *fn, int pop)
{
	uint64_t n[11], sp[11], ra[11], rv[11], rsp[11], ret[11], func[11];
	long long v;
	int i, k;

	ASSERT_EQ(0, probe_sym("p", grp, "c32_rec_p", fn,
			       "n=+4($stack):s32 sp=$stack:u32 ra=+0($stack):u32"));
	ASSERT_EQ(0, probe_sym("r", grp, "c32_rec_r", fn,
			       "rv=$retval:s32 sp=$stack:u32"));
	ASSERT_EQ(0, ask(c, &v, cmd, 10));
	EXPECT_EQ(55, v);
	get_recs(_metadata, "c32_rec_p", c->pid, "n", 11, n, NULL, NULL);
	get_recs(_metadata, "c32_rec_p", c->pid, "sp", 11, sp, NULL, NULL);
	get_recs(_metadata, "c32_rec_p", c->pid, "ra", 11, ra, NULL, NULL);
	get_recs(_metadata, "c32_rec_r", c->pid, "rv", 11, rv, ret, func);
	get_recs(_metadata, "c32_rec_r", c->pid, "sp", 11, rsp, NULL, NULL);
	for (i = 0; i < 11; i++) {
		k = 10 - i;	/* the entry this return matches */
		EXPECT_EQ(10 - i, (int64_t)n[i]);
		EXPECT_EQ(i * (i + 1) / 2, (int64_t)rv[i]) TH_LOG("return %d", i);
		EXPECT_EQ(sp[k] + 4 + pop, rsp[i]) TH_LOG("return %d", i);
		EXPECT_EQ(ra[k], ret[i]) TH_LOG("return %d", i);
		EXPECT_EQ(sym_va(fn), func[i]);
		if (i)	/* each frame below its caller's */
			EXPECT_GT(sp[i - 1], sp[i]);
	}
}

/* A recursive cdecl function, return-probed 11 deep. */
TEST_F(c32, ret_recursive_cdecl)
{
	int t;

	if (START("c32_rtri"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	ret_recursive(_metadata, &self->child[t], self->grp, "tri", "c32_tri",
		      0);
}

/* A recursive stdcall function (ret $4), return-probed 11 deep. */
TEST_F(c32, ret_recursive_stdcall)
{
	struct ut_child *c;
	long long v;
	int t;

	if (START("c32_rtrs"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	ret_recursive(_metadata, c, self->grp, "trs", "c32_trs", 4);
	ASSERT_EQ(0, ask(c, &v, "badsp", 0));
	EXPECT_EQ(0, v);
}

/* ---- the SDT marker and its semaphore ---- */

/* The semaphore of target @c through /proc/PID/mem and by its own word. */
static void expect_sem(struct __test_metadata *_metadata, struct ut_child *c,
		       const struct ut_sdt_note *n, long want)
{
	uint64_t va;
	uint16_t sem;
	long long v;

	va = ut_fileoff_to_data_vaddr(c->pid, ut_helper(TARGET), n->sem_off);
	ASSERT_EQ(n->sem, va);
	ASSERT_EQ(0, ut_proc_read_u16(c->pid, va, &sem));
	EXPECT_EQ(want, sem);
	ASSERT_EQ(0, ask(c, &v, "sem", 0));
	EXPECT_EQ(want, v);
}

/* Define and enable c32_mark on the marker with its semaphore. */
static int probe_mark(const char *grp, const struct ut_sdt_note *n)
{
	int ret;

	ret = ut_probe_add("p:%s/c32_mark %s:0x%lx(0x%lx) i=%%bx:s32", grp,
			   ut_helper(TARGET), (unsigned long)n->pc_off,
			   (unsigned long)n->sem_off);
	return ret ? ret : ut_event_enable(grp, "c32_mark", true);
}

/*
 * c32:mark fired @fired times in @c, at the marker's address, with
 * arguments 0 .. @fired - 1.
 */
static void expect_marks(struct __test_metadata *_metadata,
			 struct ut_child *c, const struct ut_sdt_note *n,
			 int fired)
{
	uint64_t vals[16], ips[16];
	int i;

	get_recs(_metadata, "c32_mark", c->pid, "i", fired, vals, ips, NULL);
	for (i = 0; i < fired; i++) {
		EXPECT_EQ(i, (int64_t)vals[i]);
		EXPECT_EQ(n->pc, ips[i]);
	}
}

/*
 * A marker probed with its semaphore in a running 32-bit process: the
 * semaphore is 0, 1 while the probe is enabled, 0 after; the marker fires
 * only while it is 1, each hit traced with its argument.
 */
TEST_F(c32, sdt_semaphore_running)
{
	struct ut_sdt_note n;
	struct ut_child *c;
	long long v;
	int t;

	if (START("c32_sdt"))
		return;
	ASSERT_EQ(0, ut_sdt_find(ut_helper(TARGET), "c32", "mark", &n));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	expect_sem(_metadata, c, &n, 0);
	ASSERT_EQ(0, ask(c, &v, "mark", 5));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, probe_mark(self->grp, &n));
	expect_sem(_metadata, c, &n, 1);
	ASSERT_EQ(0, ask(c, &v, "mark", 6));
	EXPECT_EQ(6, v);
	expect_marks(_metadata, c, &n, 6);
	ASSERT_EQ(0, ut_event_enable(self->grp, "c32_mark", false));
	expect_sem(_metadata, c, &n, 0);
	ASSERT_EQ(0, ask(c, &v, "mark", 6));
	EXPECT_EQ(0, v);
	EXPECT_EQ(6, ut_trace_count("c32_mark", c->pid));
	ASSERT_EQ(0, ut_probe_del(self->grp, "c32_mark"));
	expect_sem(_metadata, c, &n, 0);
}

/*
 * The same marker in a process started before the probe was enabled and
 * one started after: both semaphores 1 while it is, both 0 after, and
 * each process's hits exact.
 */
TEST_F(c32, sdt_semaphore_two_processes)
{
	struct ut_sdt_note n;
	struct ut_child *a, *b;
	long long v;
	int ta, tb;

	if (START("c32_sdt2"))
		return;
	ASSERT_EQ(0, ut_sdt_find(ut_helper(TARGET), "c32", "mark", &n));
	ta = START_TARGET();
	ASSERT_LE(0, ta);
	a = &self->child[ta];
	ASSERT_EQ(0, probe_mark(self->grp, &n));
	tb = START_TARGET();
	ASSERT_LE(0, tb);
	b = &self->child[tb];
	expect_sem(_metadata, a, &n, 1);
	expect_sem(_metadata, b, &n, 1);
	ASSERT_EQ(0, ask(a, &v, "mark", 3));
	EXPECT_EQ(3, v);
	ASSERT_EQ(0, ask(b, &v, "mark", 7));
	EXPECT_EQ(7, v);
	expect_marks(_metadata, a, &n, 3);
	expect_marks(_metadata, b, &n, 7);
	ASSERT_EQ(0, ut_event_enable(self->grp, "c32_mark", false));
	expect_sem(_metadata, a, &n, 0);
	expect_sem(_metadata, b, &n, 0);
	ASSERT_EQ(0, ask(a, &v, "mark", 3));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, ask(b, &v, "mark", 3));
	EXPECT_EQ(0, v);
	EXPECT_EQ(3, ut_trace_count("c32_mark", a->pid));
	EXPECT_EQ(7, ut_trace_count("c32_mark", b->pid));
}

TEST_HARNESS_MAIN
