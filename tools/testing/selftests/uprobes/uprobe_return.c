// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_return: return probes ("r:" events with $retval) where the
 * return path is hard: deep and mutual recursion, the return instance
 * depth bound, frames left by longjmp, siglongjmp and C++ exceptions,
 * fork, vfork, posix_spawn and exec inside probed functions, seccomp, the
 * registers and stack seen after a probed return, the uretprobe system
 * call (335, x86-64) called directly, and signal handlers on an alternate
 * stack.
 */
#include <assert.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_return.h"
#include "uprobe_util.h"

/* how many records of one event a test looks at, at most */
#define UR_MAX_RECS	2048

/*
 * How many return instances a task may have pending: stock 6.1's
 * MAX_URETPROBE_DEPTH, and ours.  Deeper calls get no return probe.
 */
#define UR_BOUND_STOCK	64
#define UR_BOUND_OURS	256

static int ur_bound(void)
{
	return ut_impl_is_stock() ? UR_BOUND_STOCK : UR_BOUND_OURS;
}

/*
 * What the architecture gives return probes beyond the trap-based
 * trampoline: x86-64 has the uretprobe system call and return stubs with
 * unwind information (ours; stock 6.1 has neither); arm64 has neither.
 * UR_AUDIT_ARCH is the seccomp_data arch of the tests' own calls.
 */
#if defined(__x86_64__)
#define UR_AUDIT_ARCH		AUDIT_ARCH_X86_64
#define UR_ARCH_RET_EXTRAS	1
#elif defined(__aarch64__)
#define UR_AUDIT_ARCH		AUDIT_ARCH_AARCH64
#define UR_ARCH_RET_EXTRAS	0
#endif

/* why a C++ exception cannot unwind through a return-probed frame */
#define UR_NO_UNWIND	"no unwindable return stubs here (x86-64 only)"

/* Can a C++ exception unwind through a return-probed frame here? */
static bool ur_unwinds(void)
{
	return UR_ARCH_RET_EXTRAS && !ut_impl_is_stock();
}

/* the uretprobe system call, legal only from the return trampoline */
#define UR_NR_URETPROBE	335
/* a system call number that no x86-64 kernel of the 6.x series assigns */
#define UR_NR_UNASSIGNED	999

/* exit statuses of the tests' children besides 0 (all well) */
enum {
	UR_EXIT_SETUP = 90,	/* a system call of the setup failed */
	UR_EXIT_BAD,		/* a probed function returned a wrong value */
	UR_EXIT_NOSECCOMP,	/* prctl(PR_SET_SECCOMP) failed with EINVAL */
	UR_EXIT_LAYOUT,		/* the two stacks are not in the order asked */
	UR_EXIT_OFFSTACK,	/* the signal handler ran off the alternate stack */
	UR_EXIT_EXEC,		/* execve() failed */
	UR_EXIT_NOSTUB,		/* no return stub code in the vDSO */
	UR_EXIT_SIGSYS,		/* SIGSYS, as a seccomp filter asked */
	UR_EXIT_NOVDSO,		/* no [vdso] or [vvar] mapping to move */
};

/* argv[1] that makes the binary run ur_exec_image() instead of the tests */
#define UR_EXEC_ARG	"--uprobe-return-exec"

/* ---- probed functions ---- */

/* 7 * x + 3 */
noipa long ur_plain(long x)
{
	return 7 * x + 3;
}

/* the address it returns to, as its caller's frame holds it */
noipa uintptr_t ur_where(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

#define UR_REC_BASE	1000

/* read each time, so that the compiler cannot turn recursion into a loop */
long (*ur_rec_ptr)(long n);
long (*ur_even_ptr)(long n);
long (*ur_odd_ptr)(long n);

/* UR_REC_BASE + n, through n nested calls of itself */
noipa long ur_rec(long n)
{
	long (*fn)(long n) = UT_READ_ONCE(ur_rec_ptr);

	return n == 0 ? UR_REC_BASE : fn(n - 1) + 1;
}

/* 2 * n + 1 when n is even, else 2 * n; calls ur_odd(n - 1) */
noipa long ur_even(long n)
{
	long (*fn)(long n) = UT_READ_ONCE(ur_odd_ptr);

	return n == 0 ? 1 : fn(n - 1) + 2;
}

/* 2 * n + 1 when n is odd, else 2 * n; calls ur_even(n - 1) */
noipa long ur_odd(long n)
{
	long (*fn)(long n) = UT_READ_ONCE(ur_even_ptr);

	return n == 0 ? 0 : fn(n - 1) + 2;
}

/* what ur_f3() does: return, longjmp(ur_jb) or raise(SIGUSR1) */
enum { UR_RETURN, UR_LONGJMP, UR_RAISE };
static int ur_jump;
static jmp_buf ur_jb;
static sigjmp_buf ur_sjb;

/* x + 1, unless ur_jump says to leave by longjmp or a signal */
noipa long ur_f3(long x)
{
	switch (UT_READ_ONCE(ur_jump)) {
	case UR_LONGJMP:
		longjmp(ur_jb, 1);
	case UR_RAISE:
		raise(SIGUSR1);
		break;
	}
	return x + 1;
}

/* ur_f3(x) + 10 */
noipa long ur_f2(long x)
{
	return ur_f3(x) + 10;
}

/* ur_f2(x) + 100 */
noipa long ur_f1(long x)
{
	return ur_f2(x) + 100;
}

/* fork()s; x + 2 in the parent, x + 1 in the child */
noipa long ur_fork3(long x, pid_t *pidp)
{
	pid_t pid = fork();

	*pidp = pid;
	if (pid < 0)
		return -1;
	return pid ? x + 2 : x + 1;
}

/* ur_fork3() + 10 */
noipa long ur_fork2(long x, pid_t *pidp)
{
	return ur_fork3(x, pidp) + 10;
}

/* ur_fork2() + 100 */
noipa long ur_fork1(long x, pid_t *pidp)
{
	return ur_fork2(x, pidp) + 100;
}

/* vfork()s: the child returns from here too, sharing the parent's stack */
noipa pid_t ur_vfork(void)
{
	return vfork();
}

/* posix_spawn()s @path into *@pidp; x + 1, or -1 when that failed */
noipa long ur_spawn(long x, const char *path, pid_t *pidp)
{
	char *const argv[] = { (char *)path, NULL };

	if (posix_spawn(pidp, path, NULL, NULL, argv, environ))
		return -1;
	return x + 1;
}

/* errno after the last syscall of ur_sys335() */
static int ur_sys_errno;

/* x plus what a direct uretprobe syscall returns (if it returns) */
noipa long ur_sys335(long x)
{
	long r = syscall(UR_NR_URETPROBE);

	UT_WRITE_ONCE(ur_sys_errno, errno);
	return x + r;
}

/* 3 * x + 2 -- called by the SIGUSR1 handler on the alternate stack */
noipa long ur_alt_g(long x)
{
	return 3 * x + 2;
}

/* raise(SIGUSR1), then 2 * x + 1 */
noipa long ur_alt_f(long x)
{
	raise(SIGUSR1);
	return 2 * x + 1;
}

/* the binary itself, for ur_exec() */
static const char *ur_exec_path;

/* 3 * x + 1; for x < 0, execve()s the binary with UR_EXEC_ARG instead */
noipa long ur_exec(long x)
{
	if (x < 0) {
		char *const argv[] = { (char *)ur_exec_path, UR_EXEC_ARG, NULL };

		execve(ur_exec_path, argv, environ);
		return -1;
	}
	return 3 * x + 1;
}

static_assert(offsetof(struct ur_regs, sp) == UR_SP, "ur_regs layout");
static_assert(offsetof(struct ur_regs, flags) == UR_FLAGS, "ur_regs layout");
static_assert(offsetof(struct ur_regs, canary) == UR_CANARY,
	      "ur_regs layout");
static_assert(sizeof(struct ur_regs) == UR_REGS_SIZE, "ur_regs layout");

#if defined(__aarch64__)
#define UR_SP_NAME	"sp"
static const char *const ur_reg_names[UR_NREGS] = {
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9",
	"x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19",
	"x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29",
};
#else
#define UR_SP_NAME	"rsp"
static const char *const ur_reg_names[UR_NREGS] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8",
	"r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
#endif

/*
 * The new image of the exec test: when run with UR_EXEC_ARG, call
 * ur_exec(1), (2) and (3) and exit 0 if they returned right, before the
 * test harness starts.
 */
static void __attribute__((constructor)) ur_exec_image(int argc, char **argv)
{
	long i, bad = 0;

	if (argc != 2 || strcmp(argv[1], UR_EXEC_ARG))
		return;
	for (i = 1; i <= 3; i++)
		if (ur_exec(i) != 3 * i + 1)
			bad++;
	_exit(bad ? UR_EXIT_BAD : 0);
}

/* ---- helpers ---- */

FIXTURE(ret) {
	char grp[64];
	pid_t child;
};

FIXTURE_SETUP(ret)
{
	UT_WRITE_ONCE(ur_rec_ptr, ur_rec);
	UT_WRITE_ONCE(ur_even_ptr, ur_even);
	UT_WRITE_ONCE(ur_odd_ptr, ur_odd);
}

FIXTURE_TEARDOWN(ret)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)

/* File offset of symbol @sym of this binary (-1 if absent). */
static int64_t sym_off(const char *sym)
{
	return ut_elf_sym_offset(ut_self_exe(), sym);
}

/*
 * Define "KIND:GRP/EV SELF:OFFSET(@sym) ARGS" and enable it; 0 or -errno.
 */
static int probe_sym(const char *kind, const char *grp, const char *ev,
		     const char *sym, const char *args)
{
	int64_t off = sym_off(sym);
	int ret;

	if (off < 0)
		return -ENOENT;
	ret = ut_probe_add("%s:%s/%s %s:0x%llx %s", kind, grp, ev,
			   ut_self_exe(), (unsigned long long)off, args);
	if (ret)
		return ret;
	return ut_event_enable(grp, ev, true);
}

/*
 * The values of NAME= in the records of @ev by @pid (any when 0), the
 * first @max of them in @vals.  Returns the number of records, or -1
 * when the trace cannot be read or a record has no such number.
 */
static int rec_vals(const char *ev, pid_t pid, const char *name, long *vals,
		    int max)
{
	char **recs;
	uint64_t v;
	int i, n;

	n = ut_trace_records(ev, pid, &recs);
	for (i = 0; i < n; i++) {
		if (ut_rec_u64(recs[i], name, &v)) {
			ut_free_records(recs, n);
			return -1;
		}
		if (i < max)
			vals[i] = (long)v;
	}
	ut_free_records(recs, n);
	return n;
}

/* Expect exactly @n records of @ev by @pid, NAME= being @want[0..n-1]. */
static void expect_vals(struct __test_metadata *_metadata, const char *ev,
			pid_t pid, const char *name, const long *want, int n)
{
	static long got[UR_MAX_RECS];
	int i, cnt, bad = 0;

	cnt = rec_vals(ev, pid, name, got, UR_MAX_RECS);
	EXPECT_EQ(n, cnt) {
		TH_LOG("%s: %d records by pid %d, expected %d", ev, cnt, pid,
		       n);
	}
	for (i = 0; i < n && i < cnt && i < UR_MAX_RECS; i++) {
		if (got[i] == want[i])
			continue;
		if (bad++ < 5)
			TH_LOG("%s record %d: %s=%ld, expected %ld", ev, i, name,
			       got[i], want[i]);
	}
	EXPECT_EQ(0, bad);
}

/* Expect exactly @n return records of @ev by @pid, $retval @want[]. */
static void expect_rets(struct __test_metadata *_metadata, const char *ev,
			pid_t pid, const long *want, int n)
{
	expect_vals(_metadata, ev, pid, "ret", want, n);
}

/* A wait status in words, in a static buffer. */
static const char *status_str(int status)
{
	static char buf[96];

	if (status == -1)
		snprintf(buf, sizeof(buf), "not waited for");
	else if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exited with %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, sizeof(buf), "wait status 0x%x", status);
	return buf;
}

/* Wait for the child *@pidp and forget it; its wait status or -1. */
static int reap(pid_t *pidp)
{
	pid_t pid = *pidp;
	int status;

	*pidp = 0;
	if (pid <= 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* true when wait status @status is a normal exit with status 0 */
static bool exited_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* true when wait status @status is death by signal @sig */
static bool killed_by(int status, int sig)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

/* Read up to @len bytes from @fd until EOF; the number read. */
static ssize_t read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* ---- ur_rec(): recursion and the depth bound ---- */

/* Expect the @depth entries of ur_rec(@depth - 1), outermost first. */
static void expect_rec_entries(struct __test_metadata *_metadata,
			       const char *ev, int depth)
{
	static long want[UR_MAX_RECS];
	int i;

	for (i = 0; i < depth; i++)
		want[i] = depth - 1 - i;
	expect_vals(_metadata, ev, getpid(), "n", want, depth);
}

/*
 * Expect the returns of the outermost @nret levels of ur_rec(@depth - 1),
 * innermost first: the level of ur_rec(n) returns UR_REC_BASE + n.
 */
static void expect_rec_rets(struct __test_metadata *_metadata, const char *ev,
			    int depth, int nret)
{
	static long want[UR_MAX_RECS];
	int i;

	for (i = 0; i < nret; i++)
		want[i] = UR_REC_BASE + depth - nret + i;
	expect_rets(_metadata, ev, getpid(), want, nret);
}

/* ---- the chain ur_f1 -> ur_f2 -> ur_f3 (and its C++ twin) ---- */

/*
 * Return-probe @fn1, 2 and 3 ("PREFIX1" ...) as GRP/GRP_r1 ... and
 * entry-probe @fn1 as GRP/GRP_p; 0 or -errno.
 */
static int probe_chain(const char *grp, const char *prefix)
{
	char ev[96], sym[64];
	int i, ret;

	for (i = 1; i <= 3; i++) {
		snprintf(ev, sizeof(ev), "%s_r%d", grp, i);
		snprintf(sym, sizeof(sym), "%s%d", prefix, i);
		ret = probe_sym("r", grp, ev, sym, "ret=$retval");
		if (ret)
			return ret;
	}
	snprintf(ev, sizeof(ev), "%s_p", grp);
	snprintf(sym, sizeof(sym), "%s1", prefix);
	return probe_sym("p", grp, ev, sym, "x=" UT_ARG0);
}

/*
 * Expect the records of the chain probed by probe_chain(@grp) by @pid:
 * @nent entries of f1 with arguments @ent[], and the returns of f3, f2
 * and f1 for the @ncalls normal calls f1(@calls[i]): calls[i] + 1, + 11
 * and + 111.
 */
static void expect_chain(struct __test_metadata *_metadata, const char *grp,
			 pid_t pid, const long *ent, int nent,
			 const long *calls, int ncalls)
{
	static const long add[4] = { 0, 111, 11, 1 };
	long want[16];
	char ev[96];
	int i, j;

	snprintf(ev, sizeof(ev), "%s_p", grp);
	expect_vals(_metadata, ev, pid, "x", ent, nent);
	for (i = 1; i <= 3; i++) {
		for (j = 0; j < ncalls && j < 16; j++)
			want[j] = calls[j] + add[i];
		snprintf(ev, sizeof(ev), "%s_r%d", grp, i);
		expect_rets(_metadata, ev, pid, want, ncalls);
	}
}

/* 1 when ur_f1(x) left by longjmp to here, 0 when it returned */
static noipa int jump_through(long x)
{
	if (setjmp(ur_jb))
		return 1;
	ur_f1(x);
	return 0;
}

/* 1 when ur_f1(x) left by siglongjmp to here, 0 when it returned */
static noipa int sigjump_through(long x)
{
	if (sigsetjmp(ur_sjb, 1))
		return 1;
	ur_f1(x);
	return 0;
}

static int ur_handled;

/* SIGUSR1 raised in ur_f3(): leave to sigjump_through() */
static void sigjump_handler(int sig)
{
	UT_WRITE_ONCE(ur_handled, UT_READ_ONCE(ur_handled) + 1);
	siglongjmp(ur_sjb, 1);
}

/* The 5 normal calls after the jumps: ur_f1(0..4) return 111..115. */
static void normal_calls(struct __test_metadata *_metadata, long *calls)
{
	long i;

	for (i = 0; i < 5; i++) {
		calls[i] = i;
		EXPECT_EQ(i + 111, ur_f1(i));
	}
}

/* ---- 1-3: plain calls and recursion ---- */

/* 10 calls of a function: 10 entries, 10 returns, each $retval exact. */
TEST_F(ret, plain)
{
	long want_x[10], want_r[10];
	uint64_t ip, func;
	char **recs;
	int i, n;

	if (START("ust_rtplain"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtplain_p", "ur_plain",
			       "x=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtplain_r", "ur_plain",
			       "ret=$retval"));
	for (i = 0; i < 10; i++) {
		want_x[i] = i;
		want_r[i] = 7 * i + 3;
		EXPECT_EQ(want_r[i], ur_plain(i));
	}
	expect_vals(_metadata, "ust_rtplain_p", getpid(), "x", want_x, 10);
	expect_rets(_metadata, "ust_rtplain_r", getpid(), want_r, 10);
	/* every return record names ur_plain as the function returned from */
	n = ut_trace_records("ust_rtplain_r", getpid(), &recs);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, ut_rec_ip(recs[i], &ip, &func));
		EXPECT_EQ((uintptr_t)ur_plain, func);
	}
	ut_free_records(recs, n);
}

/*
 * A return-probed function tail-calls (jmp) another return-probed one:
 * both return probes fire once per call with the same $retval, and the
 * inner one alone once per direct call.
 */
TEST_F(ret, tail_call)
{
	long outer[5], inner[6];
	int i;

	if (START("ust_rttail"))
		return;
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rttail_o", "ur_tail_outer",
			       "ret=$retval"));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rttail_i", "ur_tail_inner",
			       "ret=$retval"));
	for (i = 0; i < 5; i++) {
		outer[i] = 2 * (i + 10) + 1;
		inner[i] = outer[i];
		EXPECT_EQ(outer[i], ur_tail_outer(i));
	}
	inner[5] = 7;
	EXPECT_EQ(7, ur_tail_inner(3));
	expect_rets(_metadata, "ust_rttail_o", getpid(), outer, 5);
	expect_rets(_metadata, "ust_rttail_i", getpid(), inner, 6);
}

/*
 * A return-probed function that pops its caller's arguments as it returns
 * (ret $16), called from a return-probed function: both return probes fire
 * once per call with the right $retval, and the stack comes back as the
 * caller left it.
 */
TEST_F(ret, callee_pops)
{
#if defined(__x86_64__)
	long want[8];
	int i;

	if (START("ust_rtpop"))
		return;
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtpop_i", "ur_pop16",
			       "ret=$retval"));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtpop_o", "ur_pop_call",
			       "ret=$retval"));
	for (i = 0; i < 8; i++) {
		want[i] = i + 5;
		EXPECT_EQ(want[i], ur_pop_call(i));
	}
	expect_rets(_metadata, "ust_rtpop_i", getpid(), want, 8);
	expect_rets(_metadata, "ust_rtpop_o", getpid(), want, 8);
#else
	SKIP(return, "x86-64 only: no callee-pops return in this test's assembly");
#endif
}

/*
 * Recursion 100 deep: 100 entries and 100 returns, innermost first, each
 * $retval exact.  Stock 6.1 stops at its bound of 64 pending returns.
 */
TEST_F(ret, recursion_100)
{
	int n;

	if (START("ust_rtdeep"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtdeep_p", "ur_rec",
			       "n=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtdeep_r", "ur_rec",
			       "ret=$retval"));
	EXPECT_EQ(UR_REC_BASE + 99, ur_rec(99));
	expect_rec_entries(_metadata, "ust_rtdeep_p", 100);
	if (ut_impl_is_stock()) {
		n = ut_trace_count("ust_rtdeep_r", getpid());
		UT_STOCK_FAILS("%d of 100 returns traced (bound %d)", n,
			       UR_BOUND_STOCK);
		expect_rec_rets(_metadata, "ust_rtdeep_r", 100, UR_BOUND_STOCK);
	} else {
		expect_rec_rets(_metadata, "ust_rtdeep_r", 100, 100);
	}
}

/*
 * Mutual recursion ur_even(39) -> ur_odd(38) -> ... -> ur_odd(0), both
 * return-probed: 20 entries and 20 returns of each, $retval exact.
 */
TEST_F(ret, mutual_recursion)
{
	long even_n[20], odd_n[20], even_r[20], odd_r[20];
	int i;

	if (START("ust_rtmutual"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtmutual_pe", "ur_even",
			       "n=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtmutual_po", "ur_odd",
			       "n=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtmutual_re", "ur_even",
			       "ret=$retval"));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtmutual_ro", "ur_odd",
			       "ret=$retval"));
	/* 39 is odd: ur_even(39) is 2 * 39 */
	EXPECT_EQ(78, ur_even(39));
	for (i = 0; i < 20; i++) {
		/* entries outermost first, returns innermost first */
		even_n[i] = 39 - 2 * i;
		odd_n[i] = 38 - 2 * i;
		even_r[i] = 2 * (2 * i + 1);
		odd_r[i] = 2 * (2 * i);
	}
	expect_vals(_metadata, "ust_rtmutual_pe", getpid(), "n", even_n, 20);
	expect_vals(_metadata, "ust_rtmutual_po", getpid(), "n", odd_n, 20);
	expect_rets(_metadata, "ust_rtmutual_re", getpid(), even_r, 20);
	expect_rets(_metadata, "ust_rtmutual_ro", getpid(), odd_r, 20);
}

/* ---- 4-6: frames left without returning ---- */

/*
 * longjmp out of ur_f3 <- ur_f2 <- ur_f1 (all return-probed), then 5
 * normal calls of ur_f1: exactly their 15 returns, $retval exact.
 */
TEST_F(ret, longjmp_out)
{
	long ent[6] = { 1000 }, calls[5];

	if (START("ust_rtjmp"))
		return;
	ASSERT_EQ(0, probe_chain(self->grp, "ur_f"));
	UT_WRITE_ONCE(ur_jump, UR_LONGJMP);
	EXPECT_EQ(1, jump_through(1000));
	UT_WRITE_ONCE(ur_jump, UR_RETURN);
	normal_calls(_metadata, calls);
	memcpy(ent + 1, calls, sizeof(calls));
	expect_chain(_metadata, self->grp, getpid(), ent, 6, calls, 5);
}

/*
 * 1000 longjmps out of the 3 return-probed frames, then 5 normal calls:
 * still exactly their 15 returns (the stale return instances are
 * dropped, they do not pile up to the depth bound).
 */
TEST_F(ret, longjmp_loop)
{
	static long ent[1005];
	long calls[5];
	int i, jumped = 0;

	if (START("ust_rtjmploop"))
		return;
	ASSERT_EQ(0, probe_chain(self->grp, "ur_f"));
	UT_WRITE_ONCE(ur_jump, UR_LONGJMP);
	for (i = 0; i < 1000; i++) {
		ent[i] = i;
		jumped += jump_through(i);
	}
	UT_WRITE_ONCE(ur_jump, UR_RETURN);
	EXPECT_EQ(1000, jumped);
	normal_calls(_metadata, calls);
	memcpy(ent + 1000, calls, sizeof(calls));
	expect_chain(_metadata, self->grp, getpid(), ent, 1005, calls, 5);
}

/*
 * siglongjmp out of the 3 return-probed frames from a SIGUSR1 handler
 * (raise() in ur_f3), then 5 normal calls: exactly their 15 returns.
 */
TEST_F(ret, siglongjmp_from_handler)
{
	struct sigaction sa = { .sa_handler = sigjump_handler };
	long ent[6] = { 2000 }, calls[5];

	if (START("ust_rtsigjmp"))
		return;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, probe_chain(self->grp, "ur_f"));
	UT_WRITE_ONCE(ur_jump, UR_RAISE);
	EXPECT_EQ(1, sigjump_through(2000));
	UT_WRITE_ONCE(ur_jump, UR_RETURN);
	EXPECT_EQ(1, UT_READ_ONCE(ur_handled));
	normal_calls(_metadata, calls);
	memcpy(ent + 1, calls, sizeof(calls));
	expect_chain(_metadata, self->grp, getpid(), ent, 6, calls, 5);
}

/* The C++ child: throw through the chain, then 5 normal calls. */
static void cxx_child(void)
{
	long i;

	if (ur_cxx_call(1000, 1) != -2000)
		_exit(UR_EXIT_BAD);
	for (i = 0; i < 5; i++)
		if (ur_cxx_call(i, 0) != i + 111)
			_exit(UR_EXIT_BAD);
	_exit(0);
}

/*
 * A C++ exception thrown in ur_cxx_f3 through return-probed ur_cxx_f2
 * and ur_cxx_f1 is caught by their caller; then 5 normal calls: exactly
 * their 15 returns (in a child, whose stderr is logged).  On stock 6.1
 * the unwinder meets the trampoline as a return address, finds no frame
 * information there and calls std::terminate(): SIGABRT. Ours returns
 * through vDSO stubs that carry unwind information on x86-64; elsewhere
 * it has the trampoline, and the same SIGABRT.
 */
TEST_F(ret, cxx_exception)
{
	long ent[6] = { 1000, 0, 1, 2, 3, 4 }, calls[5] = { 0, 1, 2, 3, 4 };
	char err[256] = "";
	int p[2], status;
	ssize_t n;

	if (START("ust_rtcxx"))
		return;
	ASSERT_EQ(0, probe_chain(self->grp, "ur_cxx_f"));
	ASSERT_EQ(0, pipe(p));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		dup2(p[1], 2);
		cxx_child();
	}
	close(p[1]);
	n = read_all(p[0], err, sizeof(err) - 1);
	close(p[0]);
	while (n > 0 && err[n - 1] == '\n')
		n--;
	err[n > 0 ? n : 0] = '\0';
	status = reap(&self->child);
	if (!ur_unwinds()) {
		/* the unwinder finds no frame at the return trampoline */
		EXPECT_TRUE(killed_by(status, SIGABRT)) {
			TH_LOG("child %s", status_str(status));
		}
		if (ut_impl_is_stock())
			UT_STOCK_FAILS("the child was %s: '%s'",
				       status_str(status), err);
		else
			TH_LOG(UR_NO_UNWIND ": the child was %s",
			       status_str(status));
		expect_chain(_metadata, self->grp, 0, ent, 1, calls, 0);
		return;
	}
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s; stderr '%s'", status_str(status), err);
	}
	expect_chain(_metadata, self->grp, 0, ent, 6, calls, 5);
}

/* The C++ child: ur_cxx_g1() 10 times, every other call throwing. */
static void cxx_inside_child(void)
{
	long i, want;

	for (i = 0; i < 10; i++) {
		want = i & 1 ? -(i + 1000) : i + 111;
		if (ur_cxx_g1(i, i & 1) != want)
			_exit(UR_EXIT_BAD);
	}
	_exit(0);
}

/*
 * An exception thrown two unprobed frames down and caught inside
 * return-probed ur_cxx_g1: every call returns through the probe, exactly.
 */
TEST_F(ret, cxx_exception_caught_inside)
{
	long ent[10], rets[10];
	int status, i;

	if (START("ust_rtcxxin"))
		return;
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtcxxin_r", "ur_cxx_g1",
			       "ret=$retval"));
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtcxxin_p", "ur_cxx_g1",
			       "x=" UT_ARG0));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0)
		cxx_inside_child();
	status = reap(&self->child);
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	for (i = 0; i < 10; i++) {
		ent[i] = i;
		rets[i] = i & 1 ? -(i + 1000) : i + 111;
	}
	expect_vals(_metadata, "ust_rtcxxin_p", 0, "x", ent, 10);
	expect_rets(_metadata, "ust_rtcxxin_r", 0, rets, 10);
}

static int cxx_fork_pipe[2];
static pid_t cxx_forked;

/*
 * ur_cxx_f3_hook() of cxx_exception_forked: fork three return-probed
 * frames deep. The parent returns normally; the child waits for the
 * parent's go, then throws through the three frames.
 */
static int cxx_fork_hook(void)
{
	char c;

	cxx_forked = fork();
	if (cxx_forked < 0)
		_exit(UR_EXIT_BAD);
	if (cxx_forked)
		return 0;
	if (read(cxx_fork_pipe[0], &c, 1) != 1)
		_exit(UR_EXIT_BAD);
	return 1;
}

/*
 * The process of cxx_exception_forked: one throw through the chain (the
 * unwinder has now read this mm's return table), then a fork inside the
 * chain. The parent returns, calls ur_cxx_f3() from here (its return now
 * has another real return address in the same table slot) and lets the
 * child throw: the child must unwind with its own copy of the table.
 */
static void cxx_fork_child(void)
{
	int status;
	long r;

	if (ur_cxx_call(1000, 1) != -2000 || pipe(cxx_fork_pipe))
		_exit(UR_EXIT_BAD);
	ur_cxx_f3_hook = cxx_fork_hook;
	r = ur_cxx_call(5, 2);
	if (!cxx_forked)		/* the child, after its catch */
		_exit(r == -1005 ? 0 : UR_EXIT_BAD);
	if (r != 116 || ur_cxx_f3(7) != 8 ||
	    write(cxx_fork_pipe[1], "g", 1) != 1 ||
	    waitpid(cxx_forked, &status, 0) != cxx_forked)
		_exit(UR_EXIT_BAD);
	if (WIFSIGNALED(status))
		_exit(128 + WTERMSIG(status));
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : UR_EXIT_BAD);
}

/*
 * A child forked three return-probed frames deep throws through them and
 * catches the exception, while its parent has returned from the same
 * frames and reused their return table slots: each unwinds with its own
 * table, and every return of the parent is traced. Stock 6.1 cannot
 * unwind through a return-probed frame at all: SIGABRT at the first throw
 * (ours too where it has no return stubs, on architectures but x86-64).
 */
TEST_F(ret, cxx_exception_forked)
{
	long ent[2] = { 1000, 5 }, r3[2] = { 6, 8 }, r2 = 16, r1 = 116;
	int status;

	if (START("ust_rtcxxfk"))
		return;
	ASSERT_EQ(0, probe_chain(self->grp, "ur_cxx_f"));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0)
		cxx_fork_child();
	status = reap(&self->child);
	if (!ur_unwinds()) {
		EXPECT_TRUE(killed_by(status, SIGABRT)) {
			TH_LOG("child %s", status_str(status));
		}
		if (ut_impl_is_stock())
			UT_STOCK_FAILS("the child was %s", status_str(status));
		else
			TH_LOG(UR_NO_UNWIND ": the child was %s",
			       status_str(status));
		return;
	}
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	/* the child that threw has no records: it entered nothing */
	expect_vals(_metadata, "ust_rtcxxfk_p", 0, "x", ent, 2);
	expect_rets(_metadata, "ust_rtcxxfk_r3", 0, r3, 2);
	expect_rets(_metadata, "ust_rtcxxfk_r2", 0, &r2, 1);
	expect_rets(_metadata, "ust_rtcxxfk_r1", 0, &r1, 1);
}

/* ---- 7: fork ---- */

/*
 * fork() in ur_fork3 <- ur_fork2 <- ur_fork1, all return-probed: parent
 * and child each return through all 3 frames, with their own values and
 * one return record per frame and process.
 */
TEST_F(ret, fork_3_deep)
{
	static const long parent_r[3] = { 42, 52, 152 };
	static const long child_r[3] = { 41, 51, 151 };
	static const long ent[1] = { 40 };
	static const char *const ev[3] = {
		"ust_rtfork_r3", "ust_rtfork_r2", "ust_rtfork_r1"
	};
	static const char *const fn[3] = { "ur_fork3", "ur_fork2", "ur_fork1" };
	int i, status;
	pid_t pid;
	long r;

	if (START("ust_rtfork"))
		return;
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, probe_sym("r", self->grp, ev[i], fn[i],
				       "ret=$retval"));
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtfork_p", "ur_fork1",
			       "x=" UT_ARG0));
	r = ur_fork1(40, &pid);
	if (pid == 0)
		_exit(r == 151 ? 0 : UR_EXIT_BAD);
	ASSERT_LT(0, pid);
	self->child = pid;
	EXPECT_EQ(152, r);
	status = reap(&self->child);
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	for (i = 0; i < 3; i++) {
		expect_rets(_metadata, ev[i], getpid(), &parent_r[i], 1);
		expect_rets(_metadata, ev[i], pid, &child_r[i], 1);
	}
	expect_vals(_metadata, "ust_rtfork_p", getpid(), "x", ent, 1);
	expect_vals(_metadata, "ust_rtfork_p", pid, "x", ent, 0);
}

/* ---- 7b: vfork and posix_spawn ---- */

/*
 * exit_group(@code) without a call: a vfork child that has returned from
 * the function that called vfork() must not write the stack, which still
 * holds that function's frame (and its return slot) for the parent.
 */
static inline void raw_exit(long code)
{
#if defined(__x86_64__)
	asm volatile("syscall" : : "a" ((long)SYS_exit_group), "D" (code)
		     : "rcx", "r11", "memory");
#else
	register long x0 asm("x0") = code;
	register long x8 asm("x8") = SYS_exit_group;

	asm volatile("svc #0" : : "r" (x0), "r" (x8) : "memory");
#endif
	__builtin_unreachable();
}

/*
 * ur_vfork(): the child returns from it (through its return probe) and
 * leaves with exit status 0 touching no stack; the parent gets the pid.
 */
static noipa pid_t vfork_return_leave(void)
{
	pid_t pid = ur_vfork();

	if (pid == 0)
		raw_exit(0);
	return pid;
}

/* vfork() and _exit(0) in the child, as vfork() is meant to be used. */
static noipa pid_t vfork_exit(void)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(0);
	return pid;
}

#define UR_VFORKS	3

/*
 * Reap the UR_VFORKS children @pids; expect each exited 0 and, for return
 * probe @ev, one record with $retval 0 from each and one per child with
 * its pid from this process.
 */
static void expect_vforks(struct __test_metadata *_metadata, const char *ev,
			  const pid_t *pids)
{
	static const long zero[1] = { 0 };
	long mine[UR_VFORKS];
	int i, status;

	for (i = 0; i < UR_VFORKS; i++) {
		status = -1;
		if (pids[i] > 0 && waitpid(pids[i], &status, 0) != pids[i])
			status = -1;
		EXPECT_TRUE(exited_ok(status)) {
			TH_LOG("vfork child %d (pid %d) %s", i, pids[i],
			       status_str(status));
		}
		mine[i] = pids[i];
	}
	for (i = 0; i < UR_VFORKS; i++)
		expect_rets(_metadata, ev, pids[i], zero, 1);
	expect_rets(_metadata, ev, getpid(), mine, UR_VFORKS);
}

/*
 * A return-probed function that calls vfork(), 3 times: each child
 * returns from it through the probe (and leaves without touching the
 * stack), each exits 0, not SIGILL; the probe records each child's return
 * ($retval 0) and the parent's 3 ($retval the child's pid).
 */
TEST_F(ret, vfork_child_returns_probed)
{
	pid_t pids[UR_VFORKS];
	int i;

	if (START("ust_rtvfk"))
		return;
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtvfk_r", "ur_vfork",
			       "ret=$retval"));
	for (i = 0; i < UR_VFORKS; i++)
		pids[i] = vfork_return_leave();
	expect_vforks(_metadata, "ust_rtvfk_r", pids);
}

/* The path of this process's C library, from its maps; false if none. */
static bool libc_path(char *buf, size_t size)
{
	char line[4352], *path, *base;
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		path = strchr(line, '/');
		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		base = strrchr(path, '/') + 1;
		if (strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5))
			continue;
		snprintf(buf, size, "%s", path);
		found = true;
	}
	fclose(f);
	return found;
}

/*
 * A return probe on the C library's own vfork(), 3 vforks whose children
 * _exit(0): each child exits 0, not SIGILL; the probe records each
 * child's return ($retval 0) and the parent's 3 ($retval the child's
 * pid). The probe is on every process of the machine: records by pid.
 */
TEST_F(ret, vfork_libc_probed)
{
	char libc[4096];
	pid_t pids[UR_VFORKS];
	int64_t off;
	int i;

	if (START("ust_rtlvfk"))
		return;
	ASSERT_TRUE(libc_path(libc, sizeof(libc)));
	off = ut_elf_sym_offset(libc, "vfork");
	if (off < 0)
		off = ut_elf_sym_offset(libc, "__vfork");
	ASSERT_LT(0, off) {
		TH_LOG("no vfork symbol in %s", libc);
	}
	ASSERT_EQ(0, ut_probe_add("r:%s/ust_rtlvfk_r %s:0x%llx ret=$retval",
				  self->grp, libc, (unsigned long long)off));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_rtlvfk_r", true));
	for (i = 0; i < UR_VFORKS; i++)
		pids[i] = vfork_exit();
	expect_vforks(_metadata, "ust_rtlvfk_r", pids);
}

/*
 * posix_spawn() of /bin/true inside a return-probed function: it returns
 * its value to the parent, recorded once; the child (which shares the
 * parent's memory until it execs) exits 0 and returns through no probe.
 */
TEST_F(ret, posix_spawn_in_probed)
{
	static const long none[1];
	const char *path = "/bin/true";
	int status;
	long r, want;
	pid_t pid = 0;

	if (START("ust_rtspawn"))
		return;
	if (access(path, X_OK))
		SKIP(return, "no %s to spawn", path);
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtspawn_r", "ur_spawn",
			       "ret=$retval"));
	r = ur_spawn(40, path, &pid);
	ASSERT_EQ(41, r);
	ASSERT_LT(0, pid);
	self->child = pid;
	status = reap(&self->child);
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("spawned %s %s", path, status_str(status));
	}
	want = r;
	expect_rets(_metadata, "ust_rtspawn_r", getpid(), &want, 1);
	expect_rets(_metadata, "ust_rtspawn_r", pid, none, 0);
}

/* ---- 8: the depth bound ---- */

/*
 * The MISSED column of GRP/EV's line in uprobe_stats ("GRP/EV PATH:0xOFF
 * HITS EMULATED STEPPED BOOSTED MISSED"), or -1 when there is not exactly
 * one well-formed line for it.
 */
static long stats_missed(const char *grp, const char *ev, const char *path,
			 uint64_t off)
{
	char *buf, *line, *save = NULL, name[200], loc[4200];
	unsigned long long v[5];
	long missed = -1;
	int found = 0;

	buf = ut_read_file(UT_TRACEFS "/uprobe_stats", NULL);
	if (!buf)
		return -1;
	snprintf(name, sizeof(name), "%s/%s", grp, ev);
	snprintf(loc, sizeof(loc), "%s:0x%llx", path, (unsigned long long)off);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char ename[200], eloc[4200], *end;
		unsigned long long o;
		int pos = -1;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%199s %4199s %llu %llu %llu %llu %llu %n",
			   ename, eloc, &v[0], &v[1], &v[2], &v[3], &v[4],
			   &pos) != 7 || pos < 0 ||
		    (line[pos] && strcmp(line + pos, "settling")))
			continue;
		end = strrchr(eloc, ':');
		if (!end || strcmp(ename, name))
			continue;
		/* compare the offset as a number: any zero padding */
		o = strtoull(end + 1, NULL, 16);
		*end = '\0';
		if (strcmp(eloc, path) || o != off)
			continue;
		found++;
		missed = (long)v[4];
	}
	free(buf);
	return found == 1 ? missed : -1;
}

/*
 * Recursion to BOUND + 10 levels: BOUND + 10 entries and exactly BOUND
 * returns, those of the outermost BOUND levels ($retval exact); on ours,
 * uprobe_stats counts the 10 missed returns.
 */
TEST_F(ret, depth_past_bound)
{
	int bound = ur_bound(), depth = bound + 10;

	if (START("ust_rtbound"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtbound_p", "ur_rec",
			       "n=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtbound_r", "ur_rec",
			       "ret=$retval"));
	EXPECT_EQ(UR_REC_BASE + depth - 1, ur_rec(depth - 1));
	expect_rec_entries(_metadata, "ust_rtbound_p", depth);
	expect_rec_rets(_metadata, "ust_rtbound_r", depth, bound);
	if (ut_impl_is_stock()) {
		TH_LOG("stock 6.1 has no uprobe_stats: MISSED not checked");
		return;
	}
	EXPECT_EQ(10, stats_missed(self->grp, "ust_rtbound_r", ut_self_exe(),
				   sym_off("ur_rec")));
}

/* ---- 9: seccomp ---- */

/*
 * The seccomp child: under a filter that kills the process for anything
 * but write, exit, exit_group and rt_sigreturn (not syscall 335), or in
 * strict mode, call ur_plain(0..9), write the results to @fd and exit 0.
 */
static void seccomp_child(int fd, bool strict)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, UR_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(filter),
		.filter = filter,
	};
	long res[10];
	int i, ret;

	if (strict) {
		ret = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
	} else {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(UR_EXIT_SETUP);
		ret = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	}
	if (ret)
		_exit(errno == EINVAL ? UR_EXIT_NOSECCOMP : UR_EXIT_SETUP);
	for (i = 0; i < 10; i++)
		res[i] = ur_plain(i);
	if (write(fd, res, sizeof(res)) != (ssize_t)sizeof(res))
		syscall(SYS_exit, UR_EXIT_SETUP);
	/* exit, not exit_group: the one strict mode allows */
	syscall(SYS_exit, 0);
	for (;;)
		;
}

/*
 * Run seccomp_child(@strict) for the test's return probe on ur_plain and
 * check it: exit status 0, its results, 10 entries and 10 returns.
 */
static void seccomp_run(struct __test_metadata *_metadata, const char *grp,
			pid_t *childp, bool strict)
{
	long res[10], want_x[10], want_r[10];
	char pev[96], rev[96];
	int i, p[2], status;
	ssize_t n;

	snprintf(pev, sizeof(pev), "%s_p", grp);
	snprintf(rev, sizeof(rev), "%s_r", grp);
	ASSERT_EQ(0, probe_sym("p", grp, pev, "ur_plain", "x=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", grp, rev, "ur_plain", "ret=$retval"));
	ASSERT_EQ(0, pipe(p));
	*childp = fork();
	ASSERT_LE(0, *childp);
	if (*childp == 0) {
		close(p[0]);
		seccomp_child(p[1], strict);
	}
	close(p[1]);
	n = read_all(p[0], res, sizeof(res));
	close(p[0]);
	status = reap(childp);
	if (WIFEXITED(status) && WEXITSTATUS(status) == UR_EXIT_NOSECCOMP)
		SKIP(return, "%s not enabled (prctl(PR_SET_SECCOMP) says EINVAL)",
		     strict ? "CONFIG_SECCOMP" : "CONFIG_SECCOMP_FILTER");
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	ASSERT_EQ((ssize_t)sizeof(res), n);
	for (i = 0; i < 10; i++) {
		want_x[i] = i;
		want_r[i] = 7 * i + 3;
		EXPECT_EQ(want_r[i], res[i]);
	}
	expect_vals(_metadata, pev, 0, "x", want_x, 10);
	expect_rets(_metadata, rev, 0, want_r, 10);
}

/*
 * A child under a seccomp filter allowing only write, exit, exit_group
 * and rt_sigreturn calls a return-probed function 10 times: not killed,
 * results right, 10 returns with exact $retval.
 */
TEST_F(ret, seccomp_filter)
{
	if (START("ust_rtseccomp"))
		return;
	seccomp_run(_metadata, self->grp, &self->child, false);
}

/*
 * The same in SECCOMP_MODE_STRICT (read, write, exit, rt_sigreturn).
 */
TEST_F(ret, seccomp_strict)
{
	if (START("ust_rtstrict"))
		return;
	seccomp_run(_metadata, self->grp, &self->child, true);
}

#if defined(__x86_64__)
/*
 * The vDSO's return-stub common code: three stores to the red zone, then
 * "mov $335, %eax; syscall; int3". Its address, or 0 when there is none.
 */
static uintptr_t vdso_stub_common(void)
{
	static const uint8_t tail[] = { 0xb8, 0x4f, 0x01, 0x00, 0x00,
					0x0f, 0x05, 0xcc };
	uintptr_t lo, hi, a;
	char line[256];
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	lo = 0;
	hi = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	fclose(f);
	for (a = lo + 15; a + sizeof(tail) <= hi; a++)
		if (!memcmp((void *)a, tail, sizeof(tail)))
			return a - 15;
	return 0;
}

static void sigsys_exit(int sig)
{
	_exit(UR_EXIT_SIGSYS);
}

/*
 * The child: under a filter that traps syscall 335, run the vDSO's
 * return-stub code with no return probe pending.
 */
static void stub_syscall_child(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, UR_NR_URETPROBE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(filter),
		.filter = filter,
	};
	uintptr_t common = vdso_stub_common();

	if (!common)
		_exit(UR_EXIT_NOSTUB);
	if (signal(SIGSYS, sigsys_exit) == SIG_ERR ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(UR_EXIT_SETUP);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		_exit(errno == EINVAL ? UR_EXIT_NOSECCOMP : UR_EXIT_SETUP);
	/* never returns: SIGSYS, or SIGILL from the system call itself */
	asm volatile("call *%0" : : "r"(common) : "rax", "rcx", "r11",
		     "memory");
	_exit(UR_EXIT_BAD);
}
#endif

/*
 * The return stubs' system call, made with no return probe pending (a
 * program calling into the stubs), is filtered by seccomp like any other
 * system call: a filter that traps it gets SIGSYS. Stock 6.1 has no
 * return stubs.
 */
TEST_F(ret, seccomp_stub_syscall_unpending)
{
#if defined(__x86_64__)
	int status;

	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0)
		stub_syscall_child();
	status = reap(&self->child);
	if (WIFEXITED(status) && WEXITSTATUS(status) == UR_EXIT_NOSECCOMP)
		SKIP(return, "CONFIG_SECCOMP_FILTER not enabled (%s)",
		     "prctl(PR_SET_SECCOMP) says EINVAL");
	if (ut_impl_is_stock()) {
		EXPECT_TRUE(WIFEXITED(status) &&
			    WEXITSTATUS(status) == UR_EXIT_NOSTUB) {
			TH_LOG("child %s", status_str(status));
		}
		UT_STOCK_FAILS("no return stubs in its vDSO");
		return;
	}
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == UR_EXIT_SIGSYS) {
		TH_LOG("child %s", status_str(status));
	}
#else
	SKIP(return, "x86-64 only: no return stubs here");
#endif
}

/* ---- 10: registers ---- */

/*
 * Check ur_regs_out after one ur_regs_call(): every register as
 * ur_regs_fn() left it, the stack pointer as before the call, the flags,
 * and the words at the stack pointer untouched.
 */
static void expect_regs(struct __test_metadata *_metadata, const char *run)
{
	int i, bad = 0;

	for (i = 0; i < UR_NREGS; i++) {
		if (ur_regs_out.r[i] == ur_regs_want[i])
			continue;
		TH_LOG("%s: %%%s is 0x%lx, expected 0x%lx", run,
		       ur_reg_names[i], (unsigned long)ur_regs_out.r[i],
		       (unsigned long)ur_regs_want[i]);
		bad++;
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(ur_regs_sp, ur_regs_out.sp) {
		TH_LOG("%s: %%" UR_SP_NAME, run);
	}
	EXPECT_EQ(UR_FLAGS_WANT, ur_regs_out.flags & UR_FLAGS_MASK) {
		TH_LOG("%s: flags 0x%lx", run, (unsigned long)ur_regs_out.flags);
	}
	for (i = 0; i < UR_NCANARY; i++)
		EXPECT_EQ(ur_regs_canary[i], ur_regs_out.canary[i]) {
			TH_LOG("%s: %d(%%" UR_SP_NAME ")", run, 8 * i);
		}
}

/*
 * Every general purpose register, the arithmetic flags, the stack pointer
 * and the caller's stack above it are the same right after a probed
 * return as after an unprobed one, and as the callee left them (arm64:
 * x0 ... x29; x30 is the return address the call used, which the probe
 * replaced).
 */
TEST_F(ret, registers_preserved)
{
	struct ur_regs plain;
	uint64_t ip = 0, func = 0;
	char **recs;
	int i, j, n;

	if (START("ust_rtregs"))
		return;
	/* the values are distinct, so that a swap of two registers shows */
	for (i = 0; i < UR_NREGS; i++)
		for (j = i + 1; j < UR_NREGS; j++)
			ASSERT_NE(ur_regs_want[i], ur_regs_want[j]);
	memset(&ur_regs_out, 0, sizeof(ur_regs_out));
	ur_regs_call();
	expect_regs(_metadata, "unprobed");
	plain = ur_regs_out;

	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtregs_p", "ur_regs_fn",
			       ""));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtregs_r", "ur_regs_fn",
			       "ret=$retval"));
	memset(&ur_regs_out, 0, sizeof(ur_regs_out));
	ur_regs_call();
	expect_regs(_metadata, "probed");
	EXPECT_EQ(plain.flags, ur_regs_out.flags);
	EXPECT_EQ(0, memcmp(plain.r, ur_regs_out.r, sizeof(plain.r)));

	EXPECT_EQ(1, ut_trace_count("ust_rtregs_p", getpid()));
	expect_rets(_metadata, "ust_rtregs_r", getpid(),
		    (const long *)&ur_regs_want[0], 1);
	n = ut_trace_records("ust_rtregs_r", getpid(), &recs);
	ASSERT_EQ(1, n);
	EXPECT_EQ(0, ut_rec_ip(recs[0], &ip, &func));
	ut_free_records(recs, n);
	EXPECT_EQ((uintptr_t)ur_regs_ret, ip);
	EXPECT_EQ((uintptr_t)ur_regs_fn, func);
}

/* ---- 11: the uretprobe system call ---- */

/*
 * The syscall 335 child: ur_plain(2), then (from inside ur_sys335() when
 * @in_probed, else directly) syscall 335; writes what it returned and
 * errno to @fd, exits 0.
 */
static void sys335_child(int fd, bool in_probed)
{
	long res[2];

	if (ur_plain(2) != 17)
		_exit(UR_EXIT_BAD);
	if (in_probed) {
		res[0] = ur_sys335(5) - 5;
		res[1] = UT_READ_ONCE(ur_sys_errno);
	} else {
		res[0] = syscall(UR_NR_URETPROBE);
		res[1] = errno;
	}
	if (write(fd, res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(UR_EXIT_SETUP);
	_exit(0);
}

/*
 * Run sys335_child(@in_probed) with ur_plain and ur_sys335 entry- and
 * return-probed; check that ur_plain's return was traced and what
 * happened at the syscall.
 */
static void sys335_run(struct __test_metadata *_metadata, const char *grp,
		       pid_t *childp, bool in_probed)
{
	static const long plain_x[1] = { 2 }, plain_r[1] = { 17 };
	static const long sys_x[1] = { 5 }, sys_r[1] = { 4 };
	char ev[4][96];
	long res[2] = { 0, 0 }, nosys;
	int p[2], status;
	pid_t pid;
	ssize_t n;

	if (!UR_ARCH_RET_EXTRAS)
		SKIP(return, "x86-64 only: no uretprobe system call here");
	/* the errno of a system call that does not exist */
	errno = 0;
	ASSERT_EQ(-1, syscall(UR_NR_UNASSIGNED));
	nosys = errno;

	snprintf(ev[0], sizeof(ev[0]), "%s_pp", grp);
	snprintf(ev[1], sizeof(ev[1]), "%s_rp", grp);
	snprintf(ev[2], sizeof(ev[2]), "%s_ps", grp);
	snprintf(ev[3], sizeof(ev[3]), "%s_rs", grp);
	ASSERT_EQ(0, probe_sym("p", grp, ev[0], "ur_plain", "x=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", grp, ev[1], "ur_plain", "ret=$retval"));
	ASSERT_EQ(0, probe_sym("p", grp, ev[2], "ur_sys335", "x=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", grp, ev[3], "ur_sys335", "ret=$retval"));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[0]);
		sys335_child(p[1], in_probed);
	}
	*childp = pid;
	close(p[1]);
	n = read_all(p[0], res, sizeof(res));
	close(p[0]);
	status = reap(childp);
	expect_vals(_metadata, ev[0], pid, "x", plain_x, 1);
	expect_rets(_metadata, ev[1], pid, plain_r, 1);
	expect_vals(_metadata, ev[2], pid, "x", sys_x, in_probed);
	if (ut_impl_is_stock()) {
		EXPECT_TRUE(exited_ok(status)) {
			TH_LOG("child %s", status_str(status));
		}
		ASSERT_EQ((ssize_t)sizeof(res), n);
		EXPECT_EQ(-1, res[0]);
		EXPECT_EQ(nosys, res[1]);
		UT_STOCK_FAILS("syscall 335 returned %ld, errno %ld (none such), child %s",
			       res[0], res[1], status_str(status));
		expect_rets(_metadata, ev[3], pid, sys_r, in_probed);
		return;
	}
	EXPECT_TRUE(killed_by(status, SIGILL)) {
		TH_LOG("child %s; syscall 335 returned %ld, errno %ld",
		       status_str(status), res[0], res[1]);
	}
	EXPECT_EQ(0, n);
	/* and no return of ur_sys335(), pending when it was killed */
	expect_rets(_metadata, ev[3], pid, sys_r, 0);
}

/*
 * A direct syscall 335 (uretprobe, legal only from the return
 * trampoline) kills the caller with SIGILL, and nothing else happens.
 * Stock 6.1 has no such syscall: -1, with the errno of an unassigned
 * syscall number.
 */
TEST_F(ret, uretprobe_syscall_direct)
{
	if (START("ust_rtsys"))
		return;
	sys335_run(_metadata, self->grp, &self->child, false);
}

/*
 * The same from inside a return-probed function whose return is pending:
 * SIGILL, and the pending return is not traced.
 */
TEST_F(ret, uretprobe_syscall_in_probed)
{
	if (START("ust_rtsysin"))
		return;
	sys335_run(_metadata, self->grp, &self->child, true);
}

/* ---- 12: signal handlers on an alternate stack ---- */

#define UR_ALT_SIZE	(64 * 1024UL)
#define UR_STK_SIZE	(256 * 1024UL)

static char *ur_alt;
static long ur_alt_gret;
static uintptr_t ur_alt_hsp;

/* SIGUSR1 raised by ur_alt_f(): note where it runs and call ur_alt_g(5) */
static void alt_handler(int sig)
{
	UT_WRITE_ONCE(ur_alt_hsp, (uintptr_t)__builtin_frame_address(0));
	UT_WRITE_ONCE(ur_alt_gret, ur_alt_g(5));
}

/* Set up ur_alt as the alternate signal stack; return ur_alt_f(7). */
static void *alt_thread(void *arg)
{
	stack_t ss = { .ss_sp = ur_alt, .ss_size = UR_ALT_SIZE };

	if (sigaltstack(&ss, NULL))
		return (void *)-1L;
	return (void *)ur_alt_f(7);
}

/*
 * Map the thread's stack and the alternate signal stack as two mappings
 * in the order asked, whatever mmap() would pick: one reservation, its
 * two ends made writable, an inaccessible page between them so that the
 * two never merge into one mapping. Returns 0, or -1 if mmap() failed.
 */
static int map_stacks(bool alt_above, char **stk, char **alt)
{
	size_t gap = sysconf(_SC_PAGESIZE);
	char *p;

	p = mmap(NULL, UR_STK_SIZE + gap + UR_ALT_SIZE, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	if (alt_above) {
		*stk = p;
		*alt = p + UR_STK_SIZE + gap;
	} else {
		*alt = p;
		*stk = p + UR_ALT_SIZE + gap;
	}
	if (mprotect(*stk, UR_STK_SIZE, PROT_READ | PROT_WRITE) ||
	    mprotect(*alt, UR_ALT_SIZE, PROT_READ | PROT_WRITE))
		return -1;
	return 0;
}

/*
 * The altstack child: a thread on an mmap()ed stack mapped below the
 * alternate signal stack when @alt_above, above it otherwise, calls
 * ur_alt_f(), whose SIGUSR1 handler runs on the alternate stack and
 * calls ur_alt_g().  Exits 0 when both returned right.
 */
static void alt_child(bool alt_above)
{
	struct sigaction sa = {
		.sa_handler = alt_handler,
		.sa_flags = SA_ONSTACK,
	};
	pthread_attr_t attr;
	void *fret = NULL;
	pthread_t th;
	char *stk;

	if (map_stacks(alt_above, &stk, &ur_alt))
		_exit(UR_EXIT_SETUP);
	if (alt_above ? stk + UR_STK_SIZE > ur_alt :
			ur_alt + UR_ALT_SIZE > stk)
		_exit(UR_EXIT_LAYOUT);
	if (sigaction(SIGUSR1, &sa, NULL) || pthread_attr_init(&attr) ||
	    pthread_attr_setstack(&attr, stk, UR_STK_SIZE) ||
	    pthread_create(&th, &attr, alt_thread, NULL) ||
	    pthread_join(th, &fret))
		_exit(UR_EXIT_SETUP);
	if ((long)fret == -1)
		_exit(UR_EXIT_SETUP);
	if ((long)fret != 15 || UT_READ_ONCE(ur_alt_gret) != 17)
		_exit(UR_EXIT_BAD);
	if (UT_READ_ONCE(ur_alt_hsp) < (uintptr_t)ur_alt ||
	    UT_READ_ONCE(ur_alt_hsp) >= (uintptr_t)ur_alt + UR_ALT_SIZE)
		_exit(UR_EXIT_OFFSTACK);
	_exit(0);
}

/*
 * Run alt_child(@alt_above) with ur_alt_f and ur_alt_g return-probed;
 * returns its wait status, the numbers of return records of f and g in
 * @nf and @ng (after checking their $retval).
 */
static int alt_run(struct __test_metadata *_metadata, const char *grp,
		   pid_t *childp, bool alt_above, int *nf, int *ng)
{
	char fev[96], gev[96];
	long f_r = 0, g_r = 0;
	int status;

	snprintf(fev, sizeof(fev), "%s_f", grp);
	snprintf(gev, sizeof(gev), "%s_g", grp);
	*nf = *ng = -1;
	if (probe_sym("r", grp, fev, "ur_alt_f", "ret=$retval") ||
	    probe_sym("r", grp, gev, "ur_alt_g", "ret=$retval"))
		return -1;
	*childp = fork();
	if (*childp < 0)
		return -1;
	if (*childp == 0)
		alt_child(alt_above);
	status = reap(childp);
	*nf = rec_vals(fev, 0, "ret", &f_r, 1);
	*ng = rec_vals(gev, 0, "ret", &g_r, 1);
	if (*nf == 1)
		EXPECT_EQ(15, f_r);
	if (*ng == 1)
		EXPECT_EQ(17, g_r);
	return status;
}

/*
 * A thread whose stack lies below its alternate signal stack: f raises
 * SIGUSR1, the SA_ONSTACK handler calls g; one return each, $retval
 * exact, the process not killed.  Stock 6.1 drops f's pending return at
 * g's entry (its %rsp is higher) and kills the process with SIGILL when
 * f returns.
 */
TEST_F(ret, altstack_above_thread_stack)
{
	int status, nf, ng;

	if (START("ust_rtalt"))
		return;
	status = alt_run(_metadata, self->grp, &self->child, true, &nf, &ng);
	ASSERT_NE(-1, status);
	if (ut_impl_is_stock()) {
		/* g's entry dropped f's pending return as stale (higher %rsp) */
		EXPECT_TRUE(killed_by(status, SIGILL)) {
			TH_LOG("child %s", status_str(status));
		}
		UT_STOCK_FAILS("the child was %s; %d return of f, %d of g",
			       status_str(status), nf, ng);
		EXPECT_EQ(0, nf);
		EXPECT_EQ(1, ng);
		return;
	}
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	EXPECT_EQ(1, nf);
	EXPECT_EQ(1, ng);
}

/*
 * The reverse layout, the alternate signal stack below the thread's
 * stack: one return each of f and g, $retval exact, not killed.
 */
TEST_F(ret, altstack_below_thread_stack)
{
	int status, nf, ng;

	if (START("ust_rtaltlo"))
		return;
	status = alt_run(_metadata, self->grp, &self->child, false, &nf, &ng);
	ASSERT_NE(-1, status);
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	EXPECT_EQ(1, nf);
	EXPECT_EQ(1, ng);
}

/* ---- 13: exec ---- */

/*
 * execve() inside a return-probed function: the call before exec has an
 * entry but no return; the new image's 3 calls have 3 returns with exact
 * $retval; the child exits 0.
 */
TEST_F(ret, exec_in_probed_function)
{
	static const long ent[4] = { -1, 1, 2, 3 }, rets[3] = { 4, 7, 10 };
	int status;
	pid_t pid;

	if (START("ust_rtexec"))
		return;
	ur_exec_path = ut_self_exe();
	ASSERT_NE(NULL, ur_exec_path);
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtexec_p", "ur_exec",
			       "x=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtexec_r", "ur_exec",
			       "ret=$retval"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(ur_exec(-1) == -1 ? UR_EXIT_EXEC : UR_EXIT_BAD);
	self->child = pid;
	status = reap(&self->child);
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	expect_vals(_metadata, "ust_rtexec_p", pid, "x", ent, 4);
	expect_rets(_metadata, "ust_rtexec_r", pid, rets, 3);
}

/* ---- 13: the vDSO unmapped or moved ---- */

/* The range of the mapping named @name (e.g. "[vdso]"); false if none. */
static bool map_range(const char *name, uintptr_t *lo, uintptr_t *hi)
{
	char line[256];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, name) &&
			sscanf(line, "%lx-%lx", lo, hi) == 2;
	fclose(f);
	return found;
}

/* Map [@lo, @hi) anew, filled with trapping bytes; false on failure. */
static bool map_traps(uintptr_t lo, uintptr_t hi)
{
	void *p = mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != (void *)lo)
		return false;
	memset(p, UT_TRAP_BYTE, hi - lo);
	return true;
}

/*
 * The child: take the vDSO away (@move: move it and the vvar area below it
 * elsewhere, as CRIU does) and put trapping code where it was, then make
 * 5 calls of return-probed ur_plain(). No vDSO function may run here.
 */
static void vdso_gone_child(bool move)
{
	uintptr_t lo, hi, vlo, vhi;
	char *to;
	long i;

	if (!map_range("[vdso]", &lo, &hi) ||
	    (move && (!map_range("[vvar]", &vlo, &vhi) || vhi != lo)))
		_exit(UR_EXIT_NOVDSO);
	if (move) {
		to = mmap(NULL, hi - vlo, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (to == MAP_FAILED ||
		    mremap((void *)vlo, vhi - vlo, vhi - vlo,
			   MREMAP_MAYMOVE | MREMAP_FIXED, to) != to ||
		    mremap((void *)lo, hi - lo, hi - lo,
			   MREMAP_MAYMOVE | MREMAP_FIXED,
			   to + (lo - vlo)) != to + (lo - vlo))
			_exit(UR_EXIT_SETUP);
	} else if (munmap((void *)lo, hi - lo)) {
		_exit(UR_EXIT_SETUP);
	}
	if (!map_traps(lo, hi))
		_exit(UR_EXIT_SETUP);
	for (i = 0; i < 5; i++)
		if (ur_plain(i) != 7 * i + 3)
			_exit(UR_EXIT_BAD);
	_exit(0);
}

/* Run vdso_gone_child(@move) under an entry and a return probe. */
static void vdso_gone_run(struct __test_metadata *_metadata,
			  struct _test_data_ret *self, bool move)
{
	static const long ent[5] = { 0, 1, 2, 3, 4 },
		rets[5] = { 3, 10, 17, 24, 31 };
	int status;
	pid_t pid;

	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_rtvdso_p", "ur_plain",
			       "x=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rtvdso_r", "ur_plain",
			       "ret=$retval"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		vdso_gone_child(move);
	self->child = pid;
	status = reap(&self->child);
	if (WIFEXITED(status) && WEXITSTATUS(status) == UR_EXIT_NOVDSO)
		SKIP(return, "no [vdso] right above [vvar] in this process");
	EXPECT_TRUE(exited_ok(status)) {
		TH_LOG("child %s", status_str(status));
	}
	expect_vals(_metadata, "ust_rtvdso_p", pid, "x", ent, 5);
	expect_rets(_metadata, "ust_rtvdso_r", pid, rets, 5);
}

/*
 * Return probes in a process that unmapped its vDSO and mapped other code
 * where it was: the functions still return to their callers.
 */
TEST_F(ret, vdso_unmapped_and_mapped_over)
{
	if (START("ust_rtvdso"))
		return;
	vdso_gone_run(_metadata, self, false);
}

/* The same after the vDSO and vvar area moved (mremap), code put there. */
TEST_F(ret, vdso_moved)
{
	if (START("ust_rtvdso"))
		return;
	vdso_gone_run(_metadata, self, true);
}

/* ---- 14: returns without the system call layer ---- */

/*
 * uprobes.syscall_returns=0: a probed call returns to the XOL area (its
 * breakpoint), not to a vDSO stub, with the right $retval (stock: no
 * such parameter).
 */
TEST_F(ret, trap_returns_without_syscall_returns)
{
	uintptr_t lo, hi, at[3];
	long rets[3];
	int i, was;

	if (START("ust_rttrap"))
		return;
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_rttrap_r", "ur_where",
			       "ret=$retval"));
	was = ut_syscall_returns(false);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(-1, was);
		UT_STOCK_FAILS("no %s", UT_SYSCALL_RETURNS);
		return;
	}
	if (was < 0)
		SKIP(return, "no %s: no system call returns here", UT_SYSCALL_RETURNS);
	for (i = 0; i < 3; i++)
		at[i] = ur_where();
	EXPECT_EQ(0, ut_syscall_returns(was));
	ASSERT_TRUE(map_range("[uprobes]", &lo, &hi));
	for (i = 0; i < 3; i++) {
		EXPECT_TRUE(at[i] >= lo && at[i] < hi)
			TH_LOG("return %d went to %#lx, not [uprobes] %#lx-%#lx",
			       i, (unsigned long)at[i], (unsigned long)lo,
			       (unsigned long)hi);
		rets[i] = (long)at[i];
	}
	expect_rets(_metadata, "ust_rttrap_r", getpid(), rets, 3);
}

TEST_HARNESS_MAIN
