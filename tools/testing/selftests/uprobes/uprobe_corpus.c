// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_corpus: a uprobe at any instruction boundary of ordinary compiled
 * code must not change what the code computes.  The corpus
 * (uprobe_corpus_code.c: a checksum, a CRC, two sorts, string routines and
 * a switch through a jump table, built with -O2 into section uprobe_corpus)
 * runs on fixed inputs in a child while probes sit on its instruction
 * boundaries, which the build lists in uprobe_corpus.insns.  The child's
 * result must be the unprobed one, each probe must be hit exactly as often
 * as a single-stepped unprobed run executes its instruction, and (ours
 * only) uprobe_stats must account for every hit.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_corpus.h"
#include "uprobe_util.h"

#define UC_MAX_INSNS	2048
#define UC_STATS	UT_TRACEFS "/uprobe_stats"
#define ENOTSUPP	524	/* the kernel's, not user space's ENOTSUP */

struct uc_stat {
	uint64_t hits, emulated, stepped, boosted, missed;
};

/* one instruction boundary of the corpus, and what probing it gave */
struct uc_insn {
	uint64_t vaddr;		/* link-time address */
	uint64_t off;		/* file offset: where the probe goes */
	char func[32];		/* the function it is in */
	unsigned int foff;	/* and its offset there */
	char text[80];		/* its disassembly */
	char ev[64];		/* the probe's event name */
	long count;		/* executions in one unprobed run */
	long hits;		/* uprobe_profile hits in one probed run */
	int refused;		/* errno of a refused probe, else 0 */
	char log[160];		/* and the first line of error_log */
	bool has_stat;		/* @st is its uprobe_stats line */
	struct uc_stat st;
};

FIXTURE(corpus) {
	char grp[64];
	struct uc_insn *in;
	int n;
	uint64_t expect;	/* uc_run() unprobed */
};

/* a single-stepped run's view: executions per byte of the section */
static uintptr_t uc_lo, uc_hi;
static uint32_t *uc_steps;	/* per byte of the section: executions */
static long uc_outside;		/* of them, at no listed boundary */

/* Count an execution of the instruction at @ip, about to run. */
static void count_step(uintptr_t ip)
{
	if (ip >= uc_lo && ip < uc_hi)
		uc_steps[ip - uc_lo]++;
}

#if defined(__x86_64__)
#define X86_TF		0x100UL

static void step_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	count_step(uc->uc_mcontext.gregs[REG_RIP]);
}

/*
 * uc_run() with EFLAGS.TF set: each instruction traps after it ran, the
 * handler counts the one about to run.  The flags are switched below the
 * red zone.
 */
static noipa uint64_t run_stepped_self(void)
{
	uint64_t h;

	asm volatile("add $-128, %%rsp\n\tpushfq\n\torq %0, (%%rsp)\n\t"
		     "popfq\n\tsub $-128, %%rsp" : : "i" (X86_TF)
		     : "memory", "cc");
	h = uc_run();
	asm volatile("add $-128, %%rsp\n\tpushfq\n\tandq %0, (%%rsp)\n\t"
		     "popfq\n\tsub $-128, %%rsp" : : "i" (~X86_TF)
		     : "memory", "cc");
	return h;
}

/* uc_run() single-stepped; its result, or 0 if the run failed. */
static uint64_t run_stepped(void)
{
	struct sigaction sa = {
		.sa_sigaction = step_trap,
		.sa_flags = SA_SIGINFO,
	}, old;
	uint64_t h;

	if (sigaction(SIGTRAP, &sa, &old))
		return 0;
	h = run_stepped_self();
	if (sigaction(SIGTRAP, &old, NULL))
		return 0;
	return h;
}
#else
/*
 * uc_run() single-stepped (user space cannot step itself here): a child
 * runs it under PTRACE_SINGLESTEP from this process, which counts the
 * instruction about to run at each stop. Its result, or 0 if the run
 * failed.
 */
static uint64_t run_stepped(void)
{
	uintptr_t pc;
	uint64_t h = 0;
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return 0;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		close(p[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || raise(SIGSTOP))
			_exit(1);
		h = uc_run();
		_exit(write(p[1], &h, sizeof(h)) == sizeof(h) ? 0 : 1);
	}
	close(p[1]);
	if (waitpid(pid, &status, 0) != pid)
		goto kill_child;
	while (WIFSTOPPED(status)) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) ||
		    waitpid(pid, &status, 0) != pid)
			goto kill_child;	/* not stepped to the end */
		if (WIFSTOPPED(status) && !ut_tracee_pc(pid, &pc, 0))
			count_step(pc);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    read(p[0], &h, sizeof(h)) != sizeof(h))
		h = 0;
	close(p[0]);
	return h;
kill_child:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
	return h;
}
#endif

/*
 * Read the boundary list ("VADDR FUNCTION OFFSET INSTRUCTION" lines) into
 * @in (at most @max); returns how many, or -1.
 */
static int load_insns(struct uc_insn *in, int max)
{
	char *buf, *line, *save = NULL;
	int n = 0;

	buf = ut_read_file(ut_helper("uprobe_corpus.insns"), NULL);
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct uc_insn *p = &in[n];
		int64_t off;
		int pos = 0;

		if (n == max ||
		    sscanf(line, "%lx %31s %x %n", &p->vaddr, p->func, &p->foff,
			   &pos) != 3 || !pos) {
			n = -1;
			break;
		}
		snprintf(p->text, sizeof(p->text), "%s", line + pos);
		off = ut_elf_vaddr_to_offset(ut_self_exe(), p->vaddr);
		if (off < 0) {
			n = -1;
			break;
		}
		p->off = off;
		snprintf(p->ev, sizeof(p->ev), "%s_%x", p->func, p->foff);
		n++;
	}
	free(buf);
	return n;
}

/* Runtime address of the boundary at link-time address @vaddr. */
static uintptr_t runtime_addr(uint64_t vaddr)
{
	static int64_t run_vaddr = -1;

	if (run_vaddr < 0)
		run_vaddr = ut_elf_sym_vaddr(ut_self_exe(), "uc_run");
	return (uintptr_t)uc_run - run_vaddr + vaddr;
}

/*
 * Run uc_run() in a child; 0 with its result in *@h, or the child's wait
 * status (or -1).
 */
static int run_child(uint64_t *h)
{
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		uint64_t v = uc_run();

		_exit(write(p[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], h, sizeof(*h));
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!status && n != sizeof(*h))
		return -1;
	return status;
}

FIXTURE_SETUP(corpus)
{
	uint64_t h;
	int i;

	self->in = calloc(UC_MAX_INSNS, sizeof(*self->in));
	ASSERT_NE(NULL, self->in);
	self->n = load_insns(self->in, UC_MAX_INSNS);
	ASSERT_LT(0, self->n) {
		TH_LOG("cannot read %s", ut_helper("uprobe_corpus.insns"));
	}
	self->expect = uc_run();

	/* count each boundary's executions in one single-stepped run */
	uc_lo = (uintptr_t)__start_uprobe_corpus;
	uc_hi = (uintptr_t)__stop_uprobe_corpus;
	uc_steps = calloc(uc_hi - uc_lo, sizeof(*uc_steps));
	ASSERT_NE(NULL, uc_steps);
	h = run_stepped();
	ASSERT_EQ(self->expect, h);
	for (i = 0; i < self->n; i++) {
		uintptr_t a = runtime_addr(self->in[i].vaddr);

		ASSERT_TRUE(a >= uc_lo && a < uc_hi);
		self->in[i].count = uc_steps[a - uc_lo];
		uc_steps[a - uc_lo] = 0;
	}
	/* what is left ran at addresses that are not listed boundaries */
	for (i = 0; i < (int)(uc_hi - uc_lo); i++)
		uc_outside += uc_steps[i];
}

FIXTURE_TEARDOWN(corpus)
{
	if (self->grp[0])
		ut_group_cleanup(self->grp);
	free(self->in);
	free(uc_steps);
	uc_steps = NULL;
}

static double secs_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - t0->tv_sec + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)

/*
 * Define and enable @p's probe in @grp; returns true when it is enabled.
 * The kernel may refuse an instruction it cannot probe: @p then records
 * the errno and the first line of error_log, and the refusal must come
 * with an error_log entry.  Stock 6.1 refuses at enable time with
 * ENOTSUPP and logs nothing (it rejects segment-prefixed instructions
 * such as the padding "cs nopw"): there, ENOTSUPP is what is expected.
 */
static bool probe_insn(struct __test_metadata *_metadata, const char *grp,
		       struct uc_insn *p)
{
	char *log;
	int ret;

	ASSERT_EQ(0, ut_error_log_clear());
	ret = ut_define_at(grp, p->ev, ut_self_exe(), p->off, 0);
	if (!ret) {
		ret = ut_event_enable(grp, p->ev, true);
		if (!ret)
			return true;
		ut_probe_del(grp, p->ev);
	}
	p->refused = -ret;
	log = ut_error_log();
	snprintf(p->log, sizeof(p->log), "%s", log ? log : "");
	p->log[strcspn(p->log, "\n")] = '\0';
	free(log);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(ENOTSUPP, p->refused) {
			TH_LOG("%s+0x%x (%s): refused with errno %d",
			       p->func, p->foff, p->text, p->refused);
		}
		return false;
	}
	EXPECT_NE('\0', p->log[0]) {
		TH_LOG("%s+0x%x (%s): refused with errno %d, nothing in error_log",
		       p->func, p->foff, p->text, p->refused);
	}
	return false;
}

/*
 * Ours probes every boundary of ordinary compiled code: no refusal at all.
 * Stock 6.1 refuses only segment-prefixed instructions (the "cs nopw"
 * padding; see probe_insn()): any other refusal fails there too.
 */
static void check_refusals(struct __test_metadata *_metadata,
			   const struct uc_insn *in, int n)
{
	int i, refused = 0;

	for (i = 0; i < n; i++) {
		if (!in[i].refused)
			continue;
		refused++;
		EXPECT_TRUE(ut_impl_is_stock() && strstr(in[i].text, "cs ")) {
			TH_LOG("%s+0x%x (%s) refused: errno %d: %s",
			       in[i].func, in[i].foff, in[i].text,
			       in[i].refused, in[i].log);
		}
	}
	if (refused && ut_impl_is_stock())
		UT_STOCK_FAILS("%d probes refused with ENOTSUPP, nothing in error_log",
			       refused);
}

/* "  FILE EVENT HITS" lines of uprobe_profile: hits of each of @in. */
static int read_profile(struct uc_insn *in, int n)
{
	char *buf, *line, *save = NULL;
	int i, found = 0;

	buf = ut_read_file(UT_TRACEFS "/uprobe_profile", NULL);
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char file[4096], name[256];
		long hits;

		if (sscanf(line, " %4095s %255s %ld", file, name, &hits) != 3 ||
		    strcmp(file, ut_self_exe()))
			continue;
		for (i = 0; i < n; i++) {
			if (!strcmp(name, in[i].ev)) {
				in[i].hits = hits;
				found++;
				break;
			}
		}
	}
	free(buf);
	return found;
}

/*
 * "GROUP/EVENT PATH:0xOFFSET HITS EMULATED STEPPED BOOSTED MISSED" lines of
 * uprobe_stats: the line of each of @in (in @grp).  Returns how many
 * matched, or -1.
 */
static int read_stats(const char *grp, struct uc_insn *in, int n)
{
	char *buf, *line, *save = NULL;
	size_t glen = strlen(grp);
	int i, found = 0;

	buf = ut_read_file(UC_STATS, NULL);
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[256], loc[4200];
		unsigned long long v[5];
		struct uc_insn *p = NULL;

		if (line[0] == '#' ||
		    sscanf(line, "%255s %4199s %llu %llu %llu %llu %llu", name,
			   loc, &v[0], &v[1], &v[2], &v[3], &v[4]) != 7 ||
		    strncmp(name, grp, glen) || name[glen] != '/')
			continue;
		for (i = 0; i < n && !p; i++)
			if (!strcmp(name + glen + 1, in[i].ev))
				p = &in[i];
		if (!p)
			continue;
		p->has_stat = true;
		p->st.hits = v[0];
		p->st.emulated = v[1];
		p->st.stepped = v[2];
		p->st.boosted = v[3];
		p->st.missed = v[4];
		found++;
	}
	free(buf);
	return found;
}

/*
 * Whether uprobe_stats is to be checked: on ours it must be there; stock
 * 6.1 has none, and then only the statistics are left out.
 */
static bool stats_wanted(struct __test_metadata *_metadata)
{
	if (!ut_impl_is_stock()) {
		EXPECT_TRUE(ut_file_exists(UC_STATS));
		return ut_file_exists(UC_STATS);
	}
	EXPECT_FALSE(ut_file_exists(UC_STATS));
	TH_LOG("stock 6.1 has no %s: per-probe statistics not checked",
	       UC_STATS);
	return false;
}

/*
 * The checks of one probed boundary after its run: hit exactly as often as
 * it ran unprobed and, with @stats, none missed and every hit emulated,
 * stepped or boosted.
 */
static void check_insn(struct __test_metadata *_metadata, struct uc_insn *p,
		       bool stats)
{
	struct uc_stat *s = &p->st;

	EXPECT_EQ(p->count, p->hits) {
		TH_LOG("%s+0x%x (%s): %ld hits, ran %ld times", p->func,
		       p->foff, p->text, p->hits, p->count);
	}
	if (!stats)
		return;
	EXPECT_TRUE(p->has_stat) {
		TH_LOG("%s+0x%x: no uprobe_stats line", p->func, p->foff);
	}
	EXPECT_EQ((uint64_t)p->hits, s->hits) {
		TH_LOG("%s+0x%x (%s): uprobe_stats HITS %lu, uprobe_profile %ld",
		       p->func, p->foff, p->text, s->hits, p->hits);
	}
	EXPECT_EQ(0ULL, s->missed) {
		TH_LOG("%s+0x%x (%s): %lu of %lu hits missed", p->func,
		       p->foff, p->text, s->missed, s->hits);
	}
	/* with none missed: hits = emulated + stepped + boosted */
	EXPECT_EQ(s->hits, s->emulated + s->stepped + s->boosted + s->missed) {
		TH_LOG("%s+0x%x (%s): %lu hits: %lu emu %lu step %lu boost %lu missed",
		       p->func, p->foff, p->text, s->hits, s->emulated,
		       s->stepped, s->boosted, s->missed);
	}
}

/* The mnemonic of @text, prefixes (segment, data16, ...) skipped. */
static void mnemonic(const char *text, char *buf, size_t size)
{
	static const char * const prefixes[] = {
		"cs", "ds", "es", "fs", "gs", "ss", "data16", "addr32",
		"lock", "rep", "repz", "repnz", "notrack", "bnd",
	};
	const char *p = text;
	size_t len, i;

	for (;;) {
		p += strspn(p, " ");
		len = strcspn(p, " ");
		for (i = 0; i < ARRAY_SIZE(prefixes); i++)
			if (strlen(prefixes[i]) == len &&
			    !strncmp(p, prefixes[i], len))
				break;
		if (i == ARRAY_SIZE(prefixes) || !p[len])
			break;
		p += len;
	}
	snprintf(buf, size, "%.*s", (int)len, p);
}

struct uc_row {
	char name[32];
	long probes, ran, hits;
	struct uc_stat st;
};

/* Add @p to the row named @name of @rows (@n of them, at most @max). */
static void row_add(struct uc_row *rows, int *n, int max, const char *name,
		    const struct uc_insn *p)
{
	struct uc_row *r = NULL;
	int i;

	for (i = 0; i < *n && !r; i++)
		if (!strcmp(rows[i].name, name))
			r = &rows[i];
	if (!r) {
		if (*n == max)
			return;
		r = &rows[(*n)++];
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s", name);
	}
	r->probes++;
	r->ran += p->count > 0;
	r->hits += p->hits;
	r->st.emulated += p->st.emulated;
	r->st.stepped += p->st.stepped;
	r->st.boosted += p->st.boosted;
	r->st.missed += p->st.missed;
}

static void print_row(const struct uc_row *r, bool stats)
{
	if (stats)
		ksft_print_msg("  %-10s %5ld %5ld %7ld %7lu %7lu %7lu %6lu\n",
			       r->name, r->probes, r->ran, r->hits,
			       r->st.emulated, r->st.stepped, r->st.boosted,
			       r->st.missed);
	else
		ksft_print_msg("  %-10s %5ld %5ld %7ld\n", r->name, r->probes,
			       r->ran, r->hits);
}

/*
 * Print what probing the corpus gave: the totals, per function, per
 * mnemonic, the refused boundaries, and the uprobe_stats lines of the
 * first and the most hit boundary of each function.
 */
static void print_summary(const char *how, struct uc_insn *in, int n,
			  bool stats)
{
	struct uc_row total = { .name = "all" }, fn[16], mn[96];
	int nfn = 0, nmn = 0, nt = 0, nslot = 0, i, j;
	char m[32];

	for (i = 0; i < n; i++) {
		if (in[i].refused) {
			ksft_print_msg("refused: %s+0x%x (%s): errno %d: %s\n",
				       in[i].func, in[i].foff, in[i].text,
				       in[i].refused, in[i].log);
			continue;
		}
		row_add(&total, &nt, 1, "all", &in[i]);
		nslot += in[i].st.stepped || in[i].st.boosted ||
			 in[i].st.missed;
		row_add(fn, &nfn, 16, in[i].func, &in[i]);
		mnemonic(in[i].text, m, sizeof(m));
		row_add(mn, &nmn, 96, m, &in[i]);
	}
	ksft_print_msg("%s: %d insns, %d functions, %d refused, %ld ran, %ld hits\n",
		       how, n, nfn, n - (int)total.probes, total.ran,
		       total.hits);
	if (stats) {
		ksft_print_msg("%s: %ld hits: emulated %lu stepped %lu boosted %lu missed %lu\n",
			       how, total.hits, total.st.emulated,
			       total.st.stepped, total.st.boosted,
			       total.st.missed);
		ksft_print_msg("%s: %d probes stepped, boosted or missed\n",
			       how, nslot);
	}
	ksft_print_msg("  %-10s %5s %5s %7s%s\n", "function", "insns", "ran",
		       "hits", stats ? "     emu    step   boost missed" : "");
	for (i = 0; i < nfn; i++)
		print_row(&fn[i], stats);
	ksft_print_msg("  %-10s %5s %5s %7s%s\n", "mnemonic", "insns", "ran",
		       "hits", stats ? "     emu    step   boost missed" : "");
	for (i = 0; i < nmn; i++)
		print_row(&mn[i], stats);
	if (!stats) {
		fflush(stdout);
		return;
	}
	/* per probe: each function's first boundary and its most hit one */
	for (i = 0; i < n; i = j) {
		int top = i;

		for (j = i; j < n && !strcmp(in[j].func, in[i].func); j++)
			if (in[j].hits > in[top].hits)
				top = j;
		ksft_print_msg("  %s/%s 0x%lx %lu %lu %lu %lu %lu  [%s]\n", how,
			       in[i].ev, in[i].off, in[i].st.hits,
			       in[i].st.emulated, in[i].st.stepped,
			       in[i].st.boosted, in[i].st.missed, in[i].text);
		if (top != i)
			ksft_print_msg("  %s/%s 0x%lx %lu %lu %lu %lu %lu  [%s]\n",
				       how, in[top].ev, in[top].off,
				       in[top].st.hits, in[top].st.emulated,
				       in[top].st.stepped, in[top].st.boosted,
				       in[top].st.missed, in[top].text);
	}
	fflush(stdout);
}

/*
 * The build's boundary list agrees with the code: a single-stepped run
 * computes the same result and executes only listed boundaries, and
 * every corpus function has boundaries that run.
 */
TEST_F(corpus, boundaries_match_code)
{
	static const char * const funcs[] = {
		"uc_adler32", "uc_crc32", "uc_isort", "uc_qsort", "uc_strlen",
		"uc_strrev", "uc_tokens", "uc_switch", "uc_run",
	};
	unsigned int f;
	long total = 0;
	int i;

	EXPECT_EQ(0, uc_outside);
	EXPECT_EQ(self->expect, uc_run());
	EXPECT_EQ((uintptr_t)__start_uprobe_corpus,
		  runtime_addr(self->in[0].vaddr));
	for (i = 1; i < self->n; i++)
		EXPECT_LT(self->in[i - 1].vaddr, self->in[i].vaddr);
	for (f = 0; f < ARRAY_SIZE(funcs); f++) {
		long ran = 0;

		for (i = 0; i < self->n; i++)
			if (!strcmp(self->in[i].func, funcs[f]))
				ran += self->in[i].count;
		EXPECT_LT(0, ran) {
			TH_LOG("%s: no boundary ran", funcs[f]);
		}
		total += ran;
	}
	ksft_print_msg("%d boundaries, %ld instructions run unprobed, result 0x%lx\n",
		       self->n, total, self->expect);
	fflush(stdout);
}

/*
 * Each boundary probed alone: the corpus computes the unprobed result and
 * the probe is hit exactly as often as its instruction runs.
 */
TEST_F_TIMEOUT(corpus, one_at_a_time, 300)
{
	struct timespec t0;
	uint64_t h;
	bool stats;
	int i, st;

	if (START("ust_corpus1"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	stats = stats_wanted(_metadata);
	for (i = 0; i < self->n; i++) {
		struct uc_insn *p = &self->in[i];

		if (!probe_insn(_metadata, self->grp, p))
			continue;
		h = 0;
		st = run_child(&h);
		EXPECT_EQ(0, st) {
			TH_LOG("%s+0x%x (%s): child status 0x%x%s%s", p->func,
			       p->foff, p->text, st,
			       st > 0 && WIFSIGNALED(st) ? ", signal " : "",
			       st > 0 && WIFSIGNALED(st) ?
			       strsignal(WTERMSIG(st)) : "");
		}
		EXPECT_EQ(self->expect, h) {
			TH_LOG("%s+0x%x (%s): result 0x%lx, unprobed 0x%lx",
			       p->func, p->foff, p->text, h, self->expect);
		}
		ASSERT_EQ(0, ut_event_enable(self->grp, p->ev, false));
		EXPECT_EQ(1, read_profile(p, 1));
		if (stats)
			read_stats(self->grp, p, 1);
		check_insn(_metadata, p, stats);
		ASSERT_EQ(0, ut_probe_del(self->grp, p->ev));
	}
	print_summary(self->grp, self->in, self->n, stats);
	check_refusals(_metadata, self->in, self->n);
	ksft_print_msg("%d probes one at a time in %.1f s\n", self->n,
		       secs_since(&t0));
	fflush(stdout);
}

/*
 * Every boundary probed at once: the corpus computes the unprobed result
 * and each probe is hit exactly as often as its instruction runs.
 */
TEST_F_TIMEOUT(corpus, all_at_once, 300)
{
	int i, st, defined = 0;
	struct timespec t0;
	uint64_t h = 0;
	bool stats;

	if (START("ust_corpusall"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	stats = stats_wanted(_metadata);
	for (i = 0; i < self->n; i++)
		defined += probe_insn(_metadata, self->grp, &self->in[i]);
	st = run_child(&h);
	EXPECT_EQ(0, st) {
		TH_LOG("child status 0x%x%s%s", st,
		       st > 0 && WIFSIGNALED(st) ? ", signal " : "",
		       st > 0 && WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "");
	}
	EXPECT_EQ(self->expect, h) {
		TH_LOG("result 0x%lx, unprobed 0x%lx", h, self->expect);
	}
	/* all disabled first: their removals then wait for one grace period */
	for (i = 0; i < self->n; i++)
		if (!self->in[i].refused)
			ASSERT_EQ(0, ut_event_enable(self->grp, self->in[i].ev,
						     false));
	EXPECT_EQ(defined, read_profile(self->in, self->n));
	if (stats)
		EXPECT_EQ(defined, read_stats(self->grp, self->in, self->n));
	for (i = 0; i < self->n; i++)
		if (!self->in[i].refused)
			check_insn(_metadata, &self->in[i], stats);
	print_summary(self->grp, self->in, self->n, stats);
	check_refusals(_metadata, self->in, self->n);
	for (i = 0; i < self->n; i++)
		if (!self->in[i].refused)
			ASSERT_EQ(0, ut_probe_del(self->grp, self->in[i].ev));
	ksft_print_msg("%d probes at once in %.1f s\n", defined,
		       secs_since(&t0));
	fflush(stdout);
}

TEST_HARNESS_MAIN
