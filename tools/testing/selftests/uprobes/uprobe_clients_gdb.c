// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_clients_gdb: a debugger next to a uprobe. Debian's gdb, run
 * unmodified with a batch script, debugs uprobe_clients_gdb_target while
 * tracefs probes are enabled on the instructions it stops or steps on,
 * and the suite itself single-steps a child with raw ptrace:
 *  - a gdb breakpoint on a probed instruction stops at every call, and the
 *    probe counts every call; so does a tracer's breakpoint (x86: int3;
 *    arm64: BRK #0, as gdb writes it) written with PTRACE_POKETEXT over
 *    the probe's, or before the probe came, and ptrace and /proc/PID/mem
 *    read the instruction there, not the probe's breakpoint;
 *  - gdb breakpoints on the ret of a return-probed function and on the
 *    instruction after its call stop at every call with the value
 *    returned, and gdb's backtrace there shows the real caller;
 *  - gdb's stepi over a probed instruction, and over the ret of a
 *    return-probed function, stops where the program goes next;
 *  - PTRACE_SINGLESTEP, and (x86) EFLAGS.TF set by the tracer, stop once
 *    after each instruction, the probed one included, and no SIGTRAP is
 *    left over for the child.
 * The probed instruction is a variant of each test. x86-64
 * (uprobe_clients_gdb.S): nop and push (which the kernel emulates), add $1
 * (ours boosts it: its copy runs out of line and jumps back by itself)
 * and a RIP-relative add (stepped out of line with a scratch register).
 * arm64 (uprobe_clients_gdb_arm64.S): nop, stp and ldp of a pair on sp and
 * a literal load, which ours emulates, and an add of an extended register,
 * which it boosts (its copy runs out of line and branches back). On ours,
 * uprobe_stats tells how each hit ran: a hit under a debugger's
 * single-step is stepped on x86, emulated where it can be on arm64 (the
 * debugger's step then ends after it), the others as usual. The
 * program's results, the probes' hit counts and every stop address are
 * exact; the kernel log must have no BUG or WARNING.
 *
 * Stock 6.1 fails these, as the tests expect there. On x86-64: a
 * debugger's breakpoint on a probed instruction never stops (gdb reads the
 * probe's int3 as the instruction, and the probe takes the trap); a step
 * over a probed instruction is reported with a SIGTRAP sent as kill()
 * sends it (SI_USER); and a step from its return trampoline (an int3) runs
 * the caller's first instruction too, so that the debugger never stops
 * there. On arm64: it refuses to probe the literal load (EINVAL); a
 * debugger reads the probe's BRK #5 as the instruction, and gdb's BRK #0
 * there stops, but gdb then steps a copy of that BRK #5 in the
 * instruction's place, so that neither the instruction nor the probe ever
 * runs (the program goes wrong unless the instruction is the nop); the
 * probe's BRK #5 replaces a tracer's BRK #0 written before it, which then
 * never stops the child; a debugger's step over a probed instruction is
 * lost with the step of its copy (the program runs on to its end); and
 * any other step of a debugger in a task that hit a probe WARNs
 * (uprobe_single_step_handler()), which fails the run: the tests of a
 * return-probed function, whose debuggers step after its hits, SKIP there
 * (run, they showed the same step from the trampoline as on x86).
 *
 * The harness runs this suite in the chroot of the clients' root
 * (CONFIG=full and debug: the build machine's root, on arm64 one of
 * Debian's arm64 packages), where gdb is; gdb under TCG takes seconds to
 * start, so the timeouts are generous and nothing is timed.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_clients_gdb.h"
#include "uprobe_util.h"

#define UG_GRP		"ugdb"
#define UG_TARGET	"uprobe_clients_gdb_target"
#define UG_GDB		"/usr/bin/gdb"
/* the calls the target makes under gdb, and the ptrace child */
#define UG_CALLS	10
#define UG_PT_CALLS	3
/* gdb's whole run, and a test, under TCG on a debug kernel */
#define UG_GDB_MS	240000
#define UG_TIMEOUT	300
#define UG_MAX_VALS	64

/*
 * The architecture, for the ptrace and gdb parts:
 * UG_BRK: a tracer's breakpoint, the UG_BRK_SIZE bytes it writes (x86:
 * int3; arm64: BRK #0, as gdb writes it), whose trap leaves the pc
 * UG_BRK_PC bytes after it (x86: just past the int3; arm64: at the BRK);
 * UG_SYSCALL: a system call instruction (the UG_SYSCALL_MASK bits of
 * its first bytes), and UG_SYSCALL_CODE the si_code of a single-step over
 * one (x86: TRAP_BRKPT; arm64: SI_USER, the pseudo-step that the system
 * call's exit reports);
 * UG_GDB_INSN: the type through which gdb reads UG_BRK_SIZE bytes;
 * UG_GDB_RET: the register gdb reads a function's result from; UG_GDB_RA:
 * gdb's expression of the return address at a function's entry and at
 * the ret of one that saves none (x86: at sp; arm64: the link register);
 * ug_pt_ra(): the same for a stopped tracee; ug_pt_set_tf(): set or clear
 * the trace flag of a stopped tracee (x86's EFLAGS.TF; arm64 has none);
 * UG_STOCK_ARM64_STEP: stock 6.1's step code knows no debugger (arm64): a
 * debugger's step over a probed instruction is lost with the step of its
 * copy, and any other step of a debugger in a task that hit a probe WARNs
 * (uprobe_single_step_handler() takes it for a copy's that went wrong).
 */
#if defined(__x86_64__)
#define UG_BRK			0xccL
#define UG_BRK_SIZE		1
#define UG_BRK_PC		1
#define UG_SYSCALL		0x050fL
#define UG_SYSCALL_MASK		0xffffL
#define UG_SYSCALL_CODE		TRAP_BRKPT
#define UG_GDB_INSN		"unsigned char"
#define UG_GDB_RET		"$rax"
#define UG_GDB_RA		"*(long *)$sp"
#define UG_STOCK_ARM64_STEP	0
#define UG_X86_TF		0x100UL

static int ug_pt_ra(pid_t pid, uint64_t *ra)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, pid, 0, &regs))
		return -1;
	errno = 0;
	*ra = ptrace(PTRACE_PEEKDATA, pid, regs.rsp, 0);
	return errno ? -1 : 0;
}

static int ug_pt_set_tf(pid_t pid, bool on)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, pid, 0, &regs))
		return -1;
	if (on)
		regs.eflags |= UG_X86_TF;
	else
		regs.eflags &= ~UG_X86_TF;
	return ptrace(PTRACE_SETREGS, pid, 0, &regs);
}
#elif defined(__aarch64__)
#define UG_BRK			0xd4200000L
#define UG_BRK_SIZE		4
#define UG_BRK_PC		0
#define UG_SYSCALL		0xd4000001L	/* svc #0 */
#define UG_SYSCALL_MASK		0xffffffffL
#define UG_SYSCALL_CODE		SI_USER
#define UG_GDB_INSN		"unsigned int"
#define UG_GDB_RET		"$x0"
#define UG_GDB_RA		"$x30"
#define UG_STOCK_ARM64_STEP	1

static int ug_pt_ra(pid_t pid, uint64_t *ra)
{
	struct user_regs_struct regs;
	struct iovec iov = { .iov_base = &regs, .iov_len = sizeof(regs) };

	if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov))
		return -1;
	*ra = regs.regs[30];
	return 0;
}

static int ug_pt_set_tf(pid_t pid, bool on)
{
	errno = EOPNOTSUPP;
	return -1;
}
#else
#error "uprobe_clients_gdb knows no breakpoint for this architecture"
#endif
#define UG_BRK_MASK		(~0UL >> (64 - 8 * UG_BRK_SIZE))

/* The UG_BRK_SIZE bytes at @p as a number (both architectures: little endian). */
static long ug_word(const void *p)
{
	unsigned long v = 0;

	memcpy(&v, p, UG_BRK_SIZE);
	return v;
}

/* The first UG_BRK_SIZE bytes of the breakpoint a probe writes. */
#define UG_PROBE_BP		ug_word(UT_BP)

/* how ours runs a probed instruction that nobody single-steps */
enum ug_kind { UG_EMULATED, UG_BOOSTED };

/* What a test holds, for the teardown. */
struct ug_ctx {
	char grp[64];
	char script[64];	/* the gdb script's file */
	pid_t pid;		/* gdb or the ptrace child */
	int kmsg;
	char out[65536];	/* gdb's output (and the target's) */
	size_t len;
};

/* The kernel log since the test started: no report of a kernel problem. */
static void ug_kmsg_check(struct __test_metadata *_metadata,
			  struct ug_ctx *c)
{
	static const char *const bad[] = {
		"BUG:", "WARNING:", "Oops", "general protection fault",
		"KASAN", "UBSAN", "possible recursive locking",
		"possible circular locking", "inconsistent lock state",
		"suspicious RCU usage", "refcount_t:", "Bad page",
	};
	static char log[65536];
	const char *found = NULL;
	unsigned int i;

	log[0] = '\0';
	ASSERT_LE(0, ut_kmsg_count(c->kmsg, "", NULL, log, sizeof(log)));
	for (i = 0; i < ARRAY_SIZE(bad) && !found; i++)
		found = strstr(log, bad[i]);
	if (found)
		TH_LOG("kernel log: %s", log);
	EXPECT_EQ(NULL, found);
}

static void ug_setup(struct __test_metadata *_metadata, struct ug_ctx *c)
{
	c->pid = -1;
	c->kmsg = ut_kmsg_open();
	ASSERT_LE(0, c->kmsg);
}

static void ug_teardown(struct __test_metadata *_metadata, struct ug_ctx *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	if (c->script[0])
		unlink(c->script);
	if (c->grp[0])
		ut_group_cleanup(c->grp);
	if (c->kmsg >= 0) {
		ug_kmsg_check(_metadata, c);
		close(c->kmsg);
	}
}

/*
 * Start a test: its tracefs group, and gdb if @gdb. True when the test was
 * skipped (or failed).
 */
static bool ug_start(struct __test_metadata *_metadata, struct ug_ctx *c,
		     bool gdb)
{
	if (ut_start(_metadata, c->grp, sizeof(c->grp), UG_GRP))
		return true;
	if (gdb && !ut_file_exists(UG_GDB))
		SKIP(return true, "no %s (Debian package gdb)", UG_GDB);
	return false;
}

/* The UG_BRK_SIZE bytes of file @path at its symbol @sym; -1 if unread. */
static long ug_file_word(const char *path, const char *sym)
{
	int64_t off = ut_elf_sym_offset(path, sym);
	unsigned char b[UG_BRK_SIZE];
	ssize_t got;
	int fd;

	if (off < 0)
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	got = pread(fd, b, sizeof(b), off);
	close(fd);
	return got == sizeof(b) ? ug_word(b) : -1;
}

/* Define and enable p:GRP/@ev at label @sym of @path; 0 or -errno. */
static int ug_probe(struct ug_ctx *c, const char *path, const char *sym,
		    const char *ev)
{
	int64_t off = ut_elf_sym_offset(path, sym);

	if (off < 0)
		return -ENOENT;
	return ut_probe_at(c->grp, ev, path, off, 0);
}

/* Define and enable r:GRP/ret on ug_body() of @path, fetching its result. */
static int ug_retprobe(struct ug_ctx *c, const char *path)
{
	int64_t off = ut_elf_sym_offset(path, "ug_body");
	int ret;

	if (off < 0)
		return -ENOENT;
	ret = ut_probe_add("r:%s/ret %s:0x%llx ret=$retval", c->grp, path,
			   (unsigned long long)off);
	return ret ? ret : ut_event_enable(c->grp, "ret", true);
}

/*
 * The "HITS EMULATED STEPPED BOOSTED MISSED" of GRP/@ev in uprobe_stats
 * (ours only); 0, or -1 when it has no line for it.
 */
static int ug_stats(const char *grp, const char *ev, unsigned long long v[5])
{
	char *buf, *line, *save = NULL, want[128];
	int ret = -1;

	snprintf(want, sizeof(want), "%s/%s", grp, ev);
	buf = ut_read_file(UT_TRACEFS "/uprobe_stats", NULL);
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line && ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[128], loc[4200];

		if (line[0] != '#' &&
		    sscanf(line, "%127s %4199s %llu %llu %llu %llu %llu", name,
			   loc, &v[0], &v[1], &v[2], &v[3], &v[4]) == 7 &&
		    !strcmp(name, want))
			ret = 0;
	}
	free(buf);
	return ret;
}

/*
 * On ours, uprobe_stats of event @ev: @hits hits, none missed, @stepped of
 * them stepped and the others run as @kind says; @kind < 0: only that
 * every hit ran one way or another. Stock 6.1 has no uprobe_stats.
 */
static void ug_expect_stats(struct __test_metadata *_metadata,
			    const char *grp, const char *ev, int kind,
			    unsigned long long hits, unsigned long long stepped)
{
	unsigned long long v[5], want[5] = { hits, 0, stepped, 0, 0 };

	if (ut_impl_is_stock()) {
		EXPECT_FALSE(ut_file_exists(UT_TRACEFS "/uprobe_stats"));
		return;
	}
	ASSERT_EQ(0, ug_stats(grp, ev, v));
	EXPECT_EQ(0ULL, v[4]);
	EXPECT_EQ(v[0], v[1] + v[2] + v[3]);
	EXPECT_EQ(hits, v[0]);
	if (kind < 0)
		return;
	if (kind == UG_EMULATED)
		want[1] = hits - stepped;
	else
		want[3] = hits - stepped;
	EXPECT_EQ(want[1], v[1]) TH_LOG("%s: emulated", ev);
	EXPECT_EQ(want[2], v[2]) TH_LOG("%s: stepped", ev);
	EXPECT_EQ(want[3], v[3]) TH_LOG("%s: boosted", ev);
}

/* ---- gdb ---- */

static const char ug_prelude[] =
	"set pagination off\n"
	"set confirm off\n"
	"set width 0\n"
	"set startup-with-shell off\n"
	"set debuginfod enabled off\n";

/* the last line of every script: the target's exit status */
static const char ug_epilogue[] = "printf \"@@exit %ld\\n\", (long)$_exitcode\n";

/*
 * Run gdb -nx -batch on the script @fmt (after ug_prelude; ug_epilogue
 * ends it) with the target and its arguments @kind and @n; its output,
 * with the target's, goes to c->out. Returns gdb's wait status, -1 if it
 * could not be run or did not end in time.
 */
static __printf(4, 5) int ug_gdb(struct ug_ctx *c, const char *kind, int n,
				 const char *fmt, ...)
{
	char num[16], body[4096];
	const char *const argv[] = { UG_GDB, "-nx", "-batch", "-x", c->script,
				     "--args", ut_helper(UG_TARGET), kind, num,
				     NULL };
	struct timespec t0, t;
	int fds[2], fd, status;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	snprintf(num, sizeof(num), "%d", n);
	snprintf(c->script, sizeof(c->script), "/tmp/ugdb.XXXXXX");
	fd = mkstemp(c->script);
	if (fd < 0) {
		c->script[0] = '\0';
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f)
		return -1;
	fprintf(f, "%s%s%s", ug_prelude, body, ug_epilogue);
	if (fclose(f) || pipe2(fds, O_CLOEXEC))
		return -1;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	/* a leading newline: every line of interest follows one */
	c->len = snprintf(c->out, sizeof(c->out), "\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		ssize_t got;
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= UG_GDB_MS || poll(&pfd, 1, UG_GDB_MS - ms) <= 0)
			break;
		got = read(fds[0], c->out + c->len, sizeof(c->out) - 1 - c->len);
		if (got <= 0)
			break;
		c->len += got;
		if (c->len == sizeof(c->out) - 1)
			break;
	}
	c->out[c->len] = '\0';
	close(fds[0]);
	kill(c->pid, SIGKILL);
	if (waitpid(c->pid, &status, 0) != c->pid)
		status = -1;
	c->pid = -1;
	return status;
}

/*
 * The values of the lines "@@KEY VALUE" of gdb's output, in order, into
 * @v (at most UG_MAX_VALS); returns how many there were.
 */
static int ug_values(const struct ug_ctx *c, const char *key, long *v)
{
	const char *p = c->out;
	char pat[64];
	int n = 0;

	snprintf(pat, sizeof(pat), "\n@@%s ", key);
	while ((p = strstr(p, pat))) {
		p += strlen(pat);
		if (n < UG_MAX_VALS)
			v[n] = strtol(p, NULL, 0);
		n++;
	}
	return n;
}

/* The one "@@KEY VALUE" line's value, or LONG_MIN if not exactly one. */
static long ug_value(const struct ug_ctx *c, const char *key)
{
	long v[UG_MAX_VALS];

	return ug_values(c, key, v) == 1 ? v[0] : LONG_MIN;
}

/*
 * gdb ran the target to its end: gdb exited 0, the target printed its pid
 * and @result and exited 0. Returns the target's pid (0 if none).
 */
static pid_t ug_gdb_done(struct __test_metadata *_metadata,
			 struct ug_ctx *c, int status, long result)
{
	long pid = ug_value(c, "pid");

	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("gdb status %#x; gdb: %s", status, c->out);
	}
	EXPECT_EQ(result, ug_value(c, "result")) TH_LOG("gdb: %s", c->out);
	EXPECT_EQ(0, ug_value(c, "exit")) TH_LOG("gdb: %s", c->out);
	EXPECT_LT(0, pid) TH_LOG("gdb: %s", c->out);
	return pid > 0 ? pid : 0;
}

/* ---- ptrace ---- */

/* One stop of the child: its signal, si_code and instruction pointer. */
struct ug_stop {
	int sig;
	int code;
	uint64_t ip;
};

static int ug_child_traps;

static void ug_child_trap(int sig)
{
	UT_WRITE_ONCE(ug_child_traps, ug_child_traps + 1);
}

/*
 * Fork a child that maps ug_data's page (so that an emulated load from it
 * cannot fault), waits (SIGSTOP) for the tracer, then calls @fn(0) ...
 * @fn(UG_PT_CALLS - 1) and exits 0 if their sum is @sum and it got no
 * SIGTRAP, 1 if the sum is wrong, 2 if SIGTRAPs reached it.
 */
static pid_t ug_pt_child(struct ug_ctx *c, long (*fn)(long), long sum)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		long i, s = 0;

		signal(SIGTRAP, ug_child_trap);
		if (UT_READ_ONCE(ug_data) != UG_DATA ||
		    ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(3);
		raise(SIGSTOP);
		for (i = 0; i < UG_PT_CALLS; i++)
			s += fn(i);
		_exit(UT_READ_ONCE(ug_child_traps) ? 2 : s != sum);
	}
	c->pid = pid;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGSTOP)
		return -1;
	return pid;
}

/* Fill @st with the stop @status of @pid; 0, or -1 if it is no stop. */
static int ug_pt_stop(pid_t pid, int status, struct ug_stop *st)
{
	uintptr_t pc;
	siginfo_t si;

	memset(st, 0, sizeof(*st));
	if (!WIFSTOPPED(status))
		return -1;
	st->sig = WSTOPSIG(status);
	if (ptrace(PTRACE_GETSIGINFO, pid, 0, &si) || ut_tracee_pc(pid, &pc, 0))
		return -1;
	st->code = si.si_code;
	st->ip = pc;
	return 0;
}

/*
 * The UG_BRK_SIZE bytes at @addr of @pid as ptrace and /proc/PID/mem read
 * them; -1 if they differ.
 */
static long ug_pt_peek(pid_t pid, uintptr_t addr)
{
	unsigned char mem[UG_BRK_SIZE];
	char path[64];
	long word;
	int fd;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, addr, 0) & UG_BRK_MASK;
	if (errno)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (pread(fd, mem, sizeof(mem), addr) != sizeof(mem))
		word = -1;
	close(fd);
	return word == ug_word(mem) ? word : -1;
}

/*
 * Write the UG_BRK_SIZE bytes @val at @addr of @pid as debuggers do
 * (PTRACE_POKETEXT), the bytes after them unchanged; 0 or -1.
 */
static int ug_pt_poke(pid_t pid, uintptr_t addr, long val)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, addr, 0);
	if (errno)
		return -1;
	return ptrace(PTRACE_POKETEXT, pid, addr,
		      (word & ~UG_BRK_MASK) | (val & UG_BRK_MASK));
}

/*
 * Run the stopped child @pid to @addr, through a breakpoint of the
 * tracer's own there (UG_BRK written into its text, as debuggers do),
 * which is taken out again; the child then stops at @addr. 0 or -1.
 */
static int ug_pt_run_to(pid_t pid, uintptr_t addr)
{
	long orig = ug_pt_peek(pid, addr);
	uintptr_t pc;
	int status;

	if (orig < 0 || ug_pt_poke(pid, addr, UG_BRK))
		return -1;
	if (ptrace(PTRACE_CONT, pid, 0, 0) || waitpid(pid, &status, 0) != pid ||
	    !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP ||
	    ut_tracee_pc(pid, &pc, 0) || pc != addr + UG_BRK_PC)
		return -1;
	/* only the breakpoint's bytes: the others may hold a probe's now */
	if (ug_pt_poke(pid, addr, orig))
		return -1;
	return ut_tracee_pc(pid, &pc, addr);
}

/* PTRACE_SINGLESTEP the child once; 0 and its stop, or -1. */
static int ug_pt_step(pid_t pid, struct ug_stop *st)
{
	int status;

	if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) ||
	    waitpid(pid, &status, 0) != pid)
		return -1;
	return ug_pt_stop(pid, status, st);
}

/*
 * Let the child run to its end, handing it any signal it stops with
 * (counted in *@extra); its wait status, or -1.
 */
static int ug_pt_finish(struct ug_ctx *c, pid_t pid, int *extra)
{
	int status, sig = 0;

	*extra = 0;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, 0, sig) ||
		    waitpid(pid, &status, 0) != pid)
			return -1;
		if (!WIFSTOPPED(status))
			break;
		sig = WSTOPSIG(status);
		(*extra)++;
	}
	c->pid = -1;
	return status;
}

/* The address where the instruction at @ip of ug_body() goes next. */
static const char *const ug_body_insns[] = {
	(const char *)ug_body, ug_nop_insn, ug_push_insn, ug_pop_insn,
	ug_add_insn, ug_rip_insn, ug_mov_insn, ug_body_ret,
};

#define UG_BODY_INSNS	((int)ARRAY_SIZE(ug_body_insns))

/* The index of instruction @insn in ug_body_insns, -1 if none. */
static int ug_body_index(const char *insn)
{
	int i;

	for (i = 0; i < UG_BODY_INSNS; i++)
		if (ug_body_insns[i] == insn)
			return i;
	return -1;
}

/*
 * A WARNING fails the run, and stock 6.1 on arm64 WARNs at every step of
 * a debugger in a task that hit a probe (UG_STOCK_ARM64_STEP): the tests
 * whose debugger steps after a hit SKIP there (returning true).
 */
static bool ug_stock_warns(struct __test_metadata *_metadata)
{
	if (!ut_impl_is_stock() || !UG_STOCK_ARM64_STEP)
		return false;
	SKIP(return true,
	     "stock 6.1 arm64 WARNs at each step of a debugger after a probe hit (uprobe_single_step_handler): fails the run");
}

/* ---- the probed instruction kinds ---- */

FIXTURE(gdb_insn) {
	struct ug_ctx c;
};

/* A probed instruction of ug_body(). */
struct ug_insn {
	const char *ev;		/* the event's name */
	const char *sym;	/* the instruction's label */
	const char *insn;	/* ... and its address in the suite */
	int kind;		/* how ours runs it unstepped */
	bool smoke;		/* the one a smoke run keeps gdb on */
	bool stock_refuses;	/* stock 6.1 refuses to probe it */
};

FIXTURE_VARIANT(gdb_insn) {
	struct ug_insn in;
};

#if defined(__x86_64__)
FIXTURE_VARIANT_ADD(gdb_insn, nop) {
	.in = { "nop", "ug_nop_insn", ug_nop_insn, UG_EMULATED },
};

FIXTURE_VARIANT_ADD(gdb_insn, push) {
	.in = { "push", "ug_push_insn", ug_push_insn, UG_EMULATED },
};

FIXTURE_VARIANT_ADD(gdb_insn, add) {
	.in = { "add", "ug_add_insn", ug_add_insn, UG_BOOSTED },
};

/* a smoke run keeps gdb on the RIP-relative one (its scratch register) */
FIXTURE_VARIANT_ADD(gdb_insn, rip) {
	.in = { "rip", "ug_rip_insn", ug_rip_insn, UG_BOOSTED, true },
};
#elif defined(__aarch64__)
FIXTURE_VARIANT_ADD(gdb_insn, nop) {
	.in = { "nop", "ug_nop_insn", ug_nop_insn, UG_EMULATED },
};

/* the stp and ldp of a pair on sp at ug_push_insn and ug_pop_insn */
FIXTURE_VARIANT_ADD(gdb_insn, stp) {
	.in = { "stp", "ug_push_insn", ug_push_insn, UG_EMULATED },
};

FIXTURE_VARIANT_ADD(gdb_insn, ldp) {
	.in = { "ldp", "ug_pop_insn", ug_pop_insn, UG_EMULATED },
};

/* an add of an extended register: boosted (its copy branches back) */
FIXTURE_VARIANT_ADD(gdb_insn, add) {
	.in = { "add", "ug_add_insn", ug_add_insn, UG_BOOSTED },
};

/*
 * the literal load at ug_rip_insn, which stock 6.1 refuses; a smoke run
 * keeps gdb on it (its copy, stepped, loads through its own register)
 */
FIXTURE_VARIANT_ADD(gdb_insn, ldr) {
	.in = { "ldr", "ug_rip_insn", ug_rip_insn, UG_EMULATED, true, true },
};
#endif

FIXTURE_SETUP(gdb_insn)
{
	ug_setup(_metadata, &self->c);
}

FIXTURE_TEARDOWN(gdb_insn)
{
	ug_teardown(_metadata, &self->c);
}

/*
 * Start a test of @in: as ug_start(), and also true when the kernel is
 * stock 6.1 and refuses to probe the instruction (arm64's literal load,
 * which it can neither step out of line nor simulate), with that refusal
 * checked on the suite's own copy: EINVAL, the event off, no breakpoint.
 */
static bool ug_insn_start(struct __test_metadata *_metadata, struct ug_ctx *c,
			  const struct ug_insn *in, bool gdb)
{
	if (ug_start(_metadata, c, gdb))
		return true;
	if (!in->stock_refuses || !ut_impl_is_stock())
		return false;
	EXPECT_EQ(-EINVAL, ug_probe(c, ut_self_exe(), in->sym, in->ev));
	EXPECT_EQ(0, ut_event_enabled(c->grp, in->ev));
	EXPECT_FALSE(ut_is_bp(in->insn));
	UT_STOCK_FAILS("the %s cannot be probed", in->ev);
	return true;
}

/*
 * How many of the hits of @in taken under a debugger's single-step ours
 * steps: @hits on x86 (its emulation and boosting leave such a hit to a
 * step), on arm64 those of an instruction it does not emulate (whose
 * emulation ends the debugger's step after it).
 */
static unsigned long long ug_stepped_under_step(const struct ug_insn *in,
						unsigned long long hits)
{
#if defined(__aarch64__)
	if (in->kind == UG_EMULATED)
		return 0;
#endif
	return hits;
}

/*
 * gdb_break on stock 6.1 where a debugger's breakpoint is not the probe's
 * (arm64: gdb's BRK #0, the probe's BRK #5): gdb reads the probe's BRK as
 * the instruction, stops at its own there, and then steps a copy of what
 * it read in the instruction's place, so that neither the instruction nor
 * the probe ever runs. The program is right only if the instruction is a
 * nop, and gdb then stops at every call.
 */
static void ug_stock_gdb_break(struct __test_metadata *_metadata,
			       struct ug_ctx *c, const struct ug_insn *in,
			       int status, const long *hits, int n)
{
	long pid = ug_value(c, "pid");
	int i;

	EXPECT_EQ(UG_PROBE_BP, ug_value(c, "insn")) TH_LOG("gdb: %s", c->out);
	EXPECT_LT(0, n) TH_LOG("gdb: %s", c->out);
	for (i = 0; i < n && i < UG_MAX_VALS; i++)
		EXPECT_EQ(in->insn - (const char *)ug_body, hits[i]);
	ASSERT_LT(0, pid) TH_LOG("gdb: %s", c->out);
	EXPECT_EQ(0, ut_trace_count(in->ev, pid));
	EXPECT_EQ(0, ut_profile_hits(in->ev));
	if (in->insn == ug_nop_insn) {
		EXPECT_EQ(UG_CALLS, n) TH_LOG("gdb: %s", c->out);
		ug_gdb_done(_metadata, c, status, ug_body_sum(UG_CALLS));
	} else {
		EXPECT_NE(ug_body_sum(UG_CALLS), ug_value(c, "result"));
	}
	UT_STOCK_FAILS("gdb stops at the %s (%d times) but runs the probe's BRK there: no hit",
		       in->ev, n);
}

/* gdb's breakpoint on the probed instruction stops at every call; the probe counts each too. */
TEST_F_TIMEOUT(gdb_insn, gdb_break, UG_TIMEOUT)
{
	struct ug_ctx *c = &self->c;
	const char *target = ut_helper(UG_TARGET);
	long hits[UG_MAX_VALS];
	int status, n, i;
	pid_t pid;

	if (!variant->in.smoke && ut_heavy_client(_metadata))
		return;
	if (ug_insn_start(_metadata, c, &variant->in, true))
		return;
	ASSERT_EQ(0, ug_probe(c, target, variant->in.sym, variant->in.ev));
	/* at main(): the instruction's first bytes, as gdb reads them */
	status = ug_gdb(c, "body", UG_CALLS,
			"break main\n"
			"commands\n"
			"silent\n"
			"printf \"@@insn %%lu\\n\", *(" UG_GDB_INSN " *)&%s\n"
			"continue\n"
			"end\n"
			"break *%s\n"
			"commands\n"
			"silent\n"
			"printf \"@@hit %%ld\\n\", (long)$pc - (long)&ug_body\n"
			"continue\n"
			"end\n"
			"run\n", variant->in.sym, variant->in.sym);
	n = ug_values(c, "hit", hits);
	if (ut_impl_is_stock() && UG_PROBE_BP != UG_BRK) {
		ug_stock_gdb_break(_metadata, c, &variant->in, status, hits, n);
		return;
	}
	pid = ug_gdb_done(_metadata, c, status, ug_body_sum(UG_CALLS));
	if (ut_impl_is_stock()) {
		/* gdb took the probe's int3 for the instruction */
		EXPECT_EQ(0, n) TH_LOG("gdb: %s", c->out);
		UT_STOCK_FAILS("gdb's breakpoint on the %s never stops (gdb reads %#lx there)",
			       variant->in.ev, ug_value(c, "insn"));
	} else {
		EXPECT_EQ(UG_CALLS, n) {
			TH_LOG("gdb read %#lx at %s; gdb: %s",
			       ug_value(c, "insn"), variant->in.sym, c->out);
		}
		EXPECT_EQ(ug_file_word(target, variant->in.sym),
			  ug_value(c, "insn"));
	}
	for (i = 0; i < n && i < UG_MAX_VALS; i++)
		EXPECT_EQ(variant->in.insn - (const char *)ug_body, hits[i]);
	EXPECT_EQ(UG_CALLS, ut_trace_count(variant->in.ev, pid));
	EXPECT_EQ(UG_CALLS, ut_profile_hits(variant->in.ev));
	ug_expect_stats(_metadata, c->grp, variant->in.ev, -1, UG_CALLS, 0);
}

/*
 * gdb's stepi from ug_body()'s entry stops at each next instruction, over
 * the probed one too, and then at the return address; the probe counts
 * every call, the stepped one as ug_stepped_under_step() says (ours).
 * Stock 6.1 on arm64 loses the step over the probed instruction: the
 * program runs to its end from there (UG_STOCK_ARM64_STEP).
 */
TEST_F_TIMEOUT(gdb_insn, gdb_stepi, UG_TIMEOUT)
{
	struct ug_ctx *c = &self->c;
	const char *target = ut_helper(UG_TARGET);
	int probed = ug_body_index(variant->in.insn), want = UG_BODY_INSNS;
	long pcs[UG_MAX_VALS] = { 0 }, base, ra;
	int status, n, i;
	pid_t pid;

	if (!variant->in.smoke && ut_heavy_client(_metadata))
		return;
	if (ug_insn_start(_metadata, c, &variant->in, true))
		return;
	ASSERT_EQ(0, ug_probe(c, target, variant->in.sym, variant->in.ev));
	/* stepi until out of ug_body(), or the program's end */
	status = ug_gdb(c, "body", UG_CALLS,
			"break *ug_body\n"
			"run\n"
			"delete\n"
			"printf \"@@base %%ld\\n\", (long)&ug_body\n"
			"printf \"@@ra %%ld\\n\", (long)" UG_GDB_RA "\n"
			"set $lo = (long)&ug_body\n"
			"set $hi = (long)&ug_body_end\n"
			"set $n = 0\n"
			"set $in = 1\n"
			"while $in && $n < 32\n"
			"stepi\n"
			"set $n = $n + 1\n"
			"set $in = $_isvoid($_exitcode)\n"
			"if $in\n"
			"printf \"@@pc %%ld\\n\", (long)$pc\n"
			"set $in = (long)$pc >= $lo && (long)$pc < $hi\n"
			"end\n"
			"end\n"
			"if $_isvoid($_exitcode)\n"
			"continue\n"
			"end\n");
	pid = ug_gdb_done(_metadata, c, status, ug_body_sum(UG_CALLS));
	base = ug_value(c, "base");
	ra = ug_value(c, "ra");
	n = ug_values(c, "pc", pcs);
	ASSERT_LT(0, probed);
	if (ut_impl_is_stock() && UG_STOCK_ARM64_STEP)
		want = probed;	/* none from the step over the probed one */
	/* every instruction after the entry, then the return address */
	EXPECT_EQ(want, n) TH_LOG("gdb: %s", c->out);
	for (i = 1; i < UG_BODY_INSNS && i <= n; i++) {
		long off = ug_body_insns[i] - (const char *)ug_body;

		EXPECT_EQ(off, pcs[i - 1] - base) {
			TH_LOG("stepi %d; gdb: %s", i, c->out);
		}
	}
	if (want == UG_BODY_INSNS) {
		EXPECT_EQ(ra, pcs[UG_BODY_INSNS - 1]) TH_LOG("gdb: %s", c->out);
	} else if (n == want) {
		UT_STOCK_FAILS("gdb's stepi over the %s never stops: the program runs to its end",
			       variant->in.ev);
	}
	EXPECT_EQ(UG_CALLS, ut_trace_count(variant->in.ev, pid));
	EXPECT_EQ(UG_CALLS, ut_profile_hits(variant->in.ev));
	ug_expect_stats(_metadata, c->grp, variant->in.ev, variant->in.kind,
			UG_CALLS, ug_stepped_under_step(&variant->in, 1));
}

/*
 * Single-step the child through ug_body() from its entry, with
 * PTRACE_SINGLESTEP (@tf false) or with EFLAGS.TF set by the tracer and
 * PTRACE_CONT (@tf true), until it leaves it or ends: its pid into
 * *@pidp, the stops into @st (at most UG_MAX_VALS), their number into *@n,
 * the return address into *@ra, the signal stops after them into *@extra.
 * Returns the child's wait status at its end, -1 on a ptrace error.
 */
static int ug_pt_body(struct ug_ctx *c, bool tf, pid_t *pidp,
		      struct ug_stop *st, int *n, uint64_t *ra, int *extra)
{
	int status;
	pid_t pid;

	*n = 0;
	*extra = 0;
	*pidp = pid = ug_pt_child(c, ug_body, ug_body_sum(UG_PT_CALLS));
	if (pid < 0 || ug_pt_run_to(pid, (uintptr_t)ug_body) ||
	    ug_pt_ra(pid, ra) || (tf && ug_pt_set_tf(pid, true)))
		return -1;
	while (*n < UG_MAX_VALS) {
		struct ug_stop *s = &st[*n];

		if (ptrace(tf ? PTRACE_CONT : PTRACE_SINGLESTEP, pid, 0, 0) ||
		    waitpid(pid, &status, 0) != pid)
			return -1;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			/* its end, no stop on the way (UG_STOCK_ARM64_STEP) */
			c->pid = -1;
			return status;
		}
		if (ug_pt_stop(pid, status, s))
			return -1;
		(*n)++;
		if (s->sig != SIGTRAP || s->ip < (uintptr_t)ug_body ||
		    s->ip >= (uintptr_t)ug_body_end)
			break;
	}
	if (tf && ug_pt_set_tf(pid, false))
		return -1;
	return ug_pt_finish(c, pid, extra);
}

/*
 * The stops of ug_pt_body(): a SIGTRAP of a single-step (TRAP_TRACE) after
 * each instruction, the probed one too, then at the return address; the
 * child computed the right sum and got no SIGTRAP of its own; the probe
 * counted every call, the stepped one as ug_stepped_under_step() says
 * (ours). Stock 6.1 reports the step over the probed instruction with a
 * SIGTRAP sent as kill() sends it (SI_USER), which a debugger cannot tell
 * from one, or on arm64 loses it: the child runs to its end from there.
 */
static void ug_pt_body_check(struct __test_metadata *_metadata,
			     struct ug_ctx *c,
			     const struct ug_insn *in, bool tf)
{
	int probed = ug_body_index(in->insn), nstops = UG_BODY_INSNS;
	struct ug_stop st[UG_MAX_VALS];
	int status, n, extra, i, code;
	uint64_t ra = 0, want;
	pid_t pid;

	ASSERT_LT(0, probed);
	if (ut_impl_is_stock() && UG_STOCK_ARM64_STEP)
		nstops = probed;	/* none from the step over the probed one */
	ASSERT_EQ(0, ug_probe(c, ut_self_exe(), in->sym, in->ev));
	status = ug_pt_body(c, tf, &pid, st, &n, &ra, &extra);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("child status %#x", status);
	}
	EXPECT_EQ(0, extra);
	EXPECT_EQ(nstops, n);
	for (i = 0; i < n; i++) {
		want = i + 1 < UG_BODY_INSNS ?
		       (uintptr_t)ug_body_insns[i + 1] : ra;
		code = TRAP_TRACE;
		if (i == probed && ut_impl_is_stock())
			code = SI_USER;
		EXPECT_EQ(SIGTRAP, st[i].sig) TH_LOG("stop %d", i);
		EXPECT_EQ(code, st[i].code) TH_LOG("stop %d", i);
		EXPECT_EQ(want, st[i].ip) {
			TH_LOG("stop %d at ug_body%+ld, expected ug_body%+ld", i,
			       (long)(st[i].ip - (uintptr_t)ug_body),
			       (long)(want - (uintptr_t)ug_body));
		}
	}
	if (ut_impl_is_stock() && n > probed && st[probed].code == SI_USER)
		UT_STOCK_FAILS("the step over the %s is a SIGTRAP of SI_USER",
			       in->ev);
	if (ut_impl_is_stock() && nstops == probed && n == probed)
		UT_STOCK_FAILS("the step over the %s never stops: the child runs to its end",
			       in->ev);
	EXPECT_EQ(UG_PT_CALLS, ut_trace_count(in->ev, pid));
	ug_expect_stats(_metadata, c->grp, in->ev, in->kind,
			UG_PT_CALLS, ug_stepped_under_step(in, 1));
}

/* PTRACE_SINGLESTEP stops once after each instruction of ug_body(), the probed one too. */
TEST_F_TIMEOUT(gdb_insn, ptrace_step, UG_TIMEOUT)
{
	if (ug_insn_start(_metadata, &self->c, &variant->in, false))
		return;
	ug_pt_body_check(_metadata, &self->c, &variant->in, false);
}

#if defined(__x86_64__)
/*
 * EFLAGS.TF set by the tracer traps once after each instruction, the
 * probed one too. x86 only: arm64 has no such flag for a tracer to set
 * (the kernel sets PSTATE.SS in the registers a tracer writes as its
 * PTRACE_SINGLESTEP left it: user_regs_reset_single_step()).
 */
TEST_F_TIMEOUT(gdb_insn, ptrace_tf, UG_TIMEOUT)
{
	if (ug_start(_metadata, &self->c, false))
		return;
	ug_pt_body_check(_metadata, &self->c, &variant->in, true);
}
#endif

/*
 * Debug the probed instruction of the stopped child @pid as debuggers do
 * with a breakpoint on it (stepping in place), for @calls calls: run to
 * the tracer's UG_BRK there (a SIGTRAP UG_BRK_PC past it; the probe
 * counted the call), put the instruction back and step it (the step stops
 * at the next instruction; the probe does not count the call again), put
 * the UG_BRK back. Counts the stops at the instruction in *@stops.
 */
static void ug_pt_break_loop(struct __test_metadata *_metadata,
			     const struct ug_insn *in, pid_t pid, long orig,
			     int calls, int *stops)
{
	uintptr_t at = (uintptr_t)in->insn, pc;
	int status, next = ug_body_index(in->insn) + 1;
	struct ug_stop st;

	ASSERT_LT(1, next);
	ASSERT_GT(UG_BODY_INSNS, next);
	for (*stops = 0; *stops < calls; (*stops)++) {
		ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, ug_pt_stop(pid, status, &st));
		ASSERT_EQ(SIGTRAP, st.sig);
		ASSERT_EQ(at + UG_BRK_PC, st.ip);
		EXPECT_EQ(*stops + 1, ut_trace_count(in->ev, pid));
		EXPECT_EQ(UG_BRK, ug_pt_peek(pid, at));
		ASSERT_EQ(0, ug_pt_poke(pid, at, orig));
		ASSERT_EQ(0, ut_tracee_pc(pid, &pc, at));
		ASSERT_EQ(0, ug_pt_step(pid, &st));
		EXPECT_EQ(SIGTRAP, st.sig);
		EXPECT_EQ((uintptr_t)ug_body_insns[next], st.ip);
		EXPECT_EQ(*stops + 1, ut_trace_count(in->ev, pid));
		EXPECT_EQ(orig, ug_pt_peek(pid, at));
		ASSERT_EQ(0, ug_pt_poke(pid, at, UG_BRK));
	}
}

/*
 * A tracer's breakpoint written over the probed instruction
 * (PTRACE_POKETEXT) stops the child at each call, ptrace and /proc/PID/mem
 * read the instruction there (or the tracer's breakpoint), the probe
 * counts each call once, and the breakpoint stays when the probe goes.
 * Stock 6.1 reads the probe's breakpoint as the instruction.
 */
TEST_F_TIMEOUT(gdb_insn, ptrace_break_over_probe, UG_TIMEOUT)
{
	uintptr_t at = (uintptr_t)variant->in.insn, pc;
	struct ug_ctx *c = &self->c;
	long orig = ug_word(variant->in.insn);
	int status, extra, stops;
	struct ug_stop st;
	pid_t pid;

	if (ug_insn_start(_metadata, c, &variant->in, false))
		return;
	ASSERT_EQ(0, ug_probe(c, ut_self_exe(), variant->in.sym,
			      variant->in.ev));
	pid = ug_pt_child(c, ug_body, ug_body_sum(UG_PT_CALLS));
	ASSERT_LT(0, pid);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(UG_PROBE_BP, ug_pt_peek(pid, at));
		UT_STOCK_FAILS("a tracer reads the probe's breakpoint at the %s",
			       variant->in.ev);
		return;
	}
	EXPECT_EQ(orig, ug_pt_peek(pid, at));
	ASSERT_EQ(0, ug_pt_poke(pid, at, UG_BRK));
	ug_pt_break_loop(_metadata, &variant->in, pid, orig, UG_PT_CALLS - 1,
			 &stops);
	/* the probe goes: the tracer's breakpoint is still there, then taken out */
	ASSERT_EQ(0, ut_event_enable(c->grp, variant->in.ev, false));
	EXPECT_EQ(UG_BRK, ug_pt_peek(pid, at));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, ug_pt_stop(pid, status, &st));
	EXPECT_EQ(SIGTRAP, st.sig);
	ASSERT_EQ(at + UG_BRK_PC, st.ip);
	ASSERT_EQ(0, ug_pt_poke(pid, at, orig));
	ASSERT_EQ(0, ut_tracee_pc(pid, &pc, at));
	status = ug_pt_finish(c, pid, &extra);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("child status %#x", status);
	}
	EXPECT_EQ(0, extra);
	EXPECT_EQ(UG_PT_CALLS - 1, ut_trace_count(variant->in.ev, pid));
}

/*
 * A tracer's breakpoint written before the probe is enabled stays the
 * tracer's: it stops the child first, then the probe counts every call
 * once. Stock 6.1 takes the tracer's int3 for the probe's, or writes its
 * own BRK over the tracer's (arm64), and never stops the child.
 */
TEST_F_TIMEOUT(gdb_insn, ptrace_break_then_probe, UG_TIMEOUT)
{
	uintptr_t at = (uintptr_t)variant->in.insn;
	struct ug_ctx *c = &self->c;
	long orig = ug_word(variant->in.insn);
	int status, extra, stops;
	pid_t pid;

	if (ug_insn_start(_metadata, c, &variant->in, false))
		return;
	pid = ug_pt_child(c, ug_body, ug_body_sum(UG_PT_CALLS));
	ASSERT_LT(0, pid);
	EXPECT_EQ(orig, ug_pt_peek(pid, at));
	ASSERT_EQ(0, ug_pt_poke(pid, at, UG_BRK));
	ASSERT_EQ(0, ug_probe(c, ut_self_exe(), variant->in.sym,
			      variant->in.ev));
	EXPECT_EQ(ut_impl_is_stock() ? UG_PROBE_BP : UG_BRK,
		  ug_pt_peek(pid, at));
	if (ut_impl_is_stock()) {
		/* the child runs through: the probe took the int3 */
		ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
		c->pid = -1;
		UT_STOCK_FAILS("a tracer's breakpoint at the %s never stops the child",
			       variant->in.ev);
		return;
	}
	ug_pt_break_loop(_metadata, &variant->in, pid, orig, 1, &stops);
	ASSERT_EQ(0, ug_pt_poke(pid, at, orig));
	status = ug_pt_finish(c, pid, &extra);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("child status %#x", status);
	}
	EXPECT_EQ(0, extra);
	EXPECT_EQ(UG_PT_CALLS, ut_trace_count(variant->in.ev, pid));
}

/* ---- a return-probed function ---- */

FIXTURE(gdb_ret) {
	struct ug_ctx c;
};

FIXTURE_SETUP(gdb_ret)
{
	ug_setup(_metadata, &self->c);
}

FIXTURE_TEARDOWN(gdb_ret)
{
	ug_teardown(_metadata, &self->c);
}

/* The r: event's records of @pid: @n of them, ug_body(0) ... ug_body(@n - 1). */
static void ug_expect_returns(struct __test_metadata *_metadata, pid_t pid,
			      int n)
{
	uint64_t ret;
	char **recs;
	int got, i;

	got = ut_trace_records("ret", pid, &recs);
	EXPECT_EQ(n, got);
	for (i = 0; i < got && i < n; i++) {
		EXPECT_EQ(0, ut_rec_u64(recs[i], "ret", &ret));
		EXPECT_EQ((uint64_t)i + 1 + UG_DATA, ret) TH_LOG("%s", recs[i]);
	}
	ut_free_records(recs, got);
	EXPECT_EQ(n, ut_profile_hits("ret"));
}

/*
 * gdb's breakpoints on the ret of return-probed ug_body() and on the
 * instruction after its call stop at every call, each with the value
 * ug_body() returns; the return probe fires at every return.
 */
TEST_F_TIMEOUT(gdb_ret, gdb_break_ret_and_caller, UG_TIMEOUT)
{
	struct ug_ctx *c = &self->c;
	const char *target = ut_helper(UG_TARGET);
	long rets[UG_MAX_VALS], callers[UG_MAX_VALS], v[UG_MAX_VALS];
	int status, i;
	pid_t pid;

	if (ug_stock_warns(_metadata))
		return;
	if (ug_start(_metadata, c, true))
		return;
	ASSERT_EQ(0, ug_retprobe(c, target));
	status = ug_gdb(c, "caller", UG_CALLS,
			"break *ug_body_ret\n"
			"commands\n"
			"silent\n"
			"printf \"@@retpc %%ld\\n\", (long)$pc - (long)&ug_body\n"
			"printf \"@@ret %%ld\\n\", (long)" UG_GDB_RET "\n"
			"continue\n"
			"end\n"
			"break *ug_caller_ret\n"
			"commands\n"
			"silent\n"
			"printf \"@@callerpc %%ld\\n\", (long)$pc - (long)&ug_body\n"
			"printf \"@@caller %%ld\\n\", (long)" UG_GDB_RET "\n"
			"continue\n"
			"end\n"
			"run\n");
	pid = ug_gdb_done(_metadata, c, status, ug_caller_sum(UG_CALLS));
	EXPECT_EQ(UG_CALLS, ug_values(c, "ret", rets)) TH_LOG("gdb: %s", c->out);
	EXPECT_EQ(UG_CALLS, ug_values(c, "caller", callers)) {
		TH_LOG("gdb: %s", c->out);
	}
	EXPECT_EQ(UG_CALLS, ug_values(c, "retpc", v));
	for (i = 0; i < UG_CALLS; i++)
		EXPECT_EQ(ug_body_ret - (const char *)ug_body, v[i]);
	EXPECT_EQ(UG_CALLS, ug_values(c, "callerpc", v));
	for (i = 0; i < UG_CALLS; i++)
		EXPECT_EQ(ug_caller_ret - (const char *)ug_body, v[i]);
	for (i = 0; i < UG_CALLS; i++) {
		EXPECT_EQ(i + 1 + UG_DATA, rets[i]);
		EXPECT_EQ(i + 1 + UG_DATA, callers[i]);
	}
	ug_expect_returns(_metadata, pid, UG_CALLS);
	ug_expect_stats(_metadata, c->grp, "ret", -1, UG_CALLS, 0);
}

/*
 * gdb's backtrace at the instruction after the call of return-probed
 * ug_body() shows the real frames: ug_caller(), then target_call() at
 * ug_caller()'s own return address, then main(); no trampoline.
 */
TEST_F_TIMEOUT(gdb_ret, gdb_bt_at_caller, UG_TIMEOUT)
{
	struct ug_ctx *c = &self->c;
	const char *target = ut_helper(UG_TARGET);
	long ras[UG_MAX_VALS];
	int status, n, i;
	const char *p;
	pid_t pid;

	/* a smoke run keeps gdb_break_ret_and_caller */
	if (ut_heavy_client(_metadata))
		return;
	if (ug_stock_warns(_metadata))
		return;
	if (ug_start(_metadata, c, true))
		return;
	ASSERT_EQ(0, ug_retprobe(c, target));
	status = ug_gdb(c, "caller", UG_CALLS,
			"break *ug_caller\n"
			"commands\n"
			"silent\n"
			"printf \"@@ra %%ld\\n\", (long)" UG_GDB_RA "\n"
			"continue\n"
			"end\n"
			"break *ug_caller_ret\n"
			"commands\n"
			"silent\n"
			"printf \"@@bt\\n\"\n"
			"bt\n"
			"printf \"@@endbt\\n\"\n"
			"continue\n"
			"end\n"
			"run\n");
	pid = ug_gdb_done(_metadata, c, status, ug_caller_sum(UG_CALLS));
	n = ug_values(c, "ra", ras);
	ASSERT_EQ(UG_CALLS, n) TH_LOG("gdb: %s", c->out);
	p = c->out;
	for (i = 0; i < UG_CALLS; i++) {
		char f0[64] = "", f1[64] = "", f2[64] = "";
		unsigned long a1 = 0, a2 = 0;
		const char *end;
		int got;

		p = strstr(p, "\n@@bt\n");
		ASSERT_NE(NULL, p) TH_LOG("backtrace %d; gdb: %s", i, c->out);
		p += strlen("\n@@bt\n");
		end = strstr(p, "\n@@endbt\n");
		ASSERT_NE(NULL, end) TH_LOG("gdb: %s", c->out);
		/* "#0  ug_caller () at ...", "#1  0x... in target_call (..." */
		got = sscanf(p, "#0 %63s () at %*s\n#1 0x%lx in %63s", f0, &a1,
			     f1);
		EXPECT_EQ(3, got) {
			TH_LOG("backtrace %d: %.*s", i, (int)(end - p), p);
		}
		EXPECT_STREQ("ug_caller", f0);
		EXPECT_STREQ("target_call", f1);
		EXPECT_EQ((unsigned long)ras[i], a1);
		p = strstr(p, "\n#2 ");
		ASSERT_TRUE(p && p < end) TH_LOG("backtrace %d", i);
		got = sscanf(p, "\n#2 0x%lx in %63s", &a2, f2);
		EXPECT_EQ(2, got);
		EXPECT_STREQ("main", f2);
		/* and nothing after main() */
		EXPECT_EQ(NULL, memmem(p, end - p, "\n#3 ", 4)) {
			TH_LOG("backtrace %d: %.*s", i, (int)(end - p), p);
		}
		p = end;
	}
	ug_expect_returns(_metadata, pid, UG_CALLS);
}

/* Is @ip in ug_body() or ug_caller(), of a program whose ug_body is @base? */
static bool ug_in_text(uint64_t ip, uint64_t base)
{
	return ip >= base &&
	       ip < base + (ug_caller_end - (const char *)ug_body);
}

/* The offset of @ip from ug_body @base, for messages. */
#define UG_OFF(ip, base)	((long)((ip) - (base)))

/*
 * The stops @pcs (@n of them) of a single-step from the ret of
 * return-probed ug_body() (ug_body at @base) back into ug_caller(), and one
 * more: the first at the return address the kernel put there (@ra), then
 * those of its trampoline, none in the program, then exactly at the
 * instruction after the call and at the one after that. Stock 6.1 steps
 * its trampoline's int3 and the instruction after the call at once: it
 * stops at ug_caller_next, then at ug_caller_last.
 */
static void ug_expect_ret_steps(struct __test_metadata *_metadata,
				const uint64_t *pcs, int n, uint64_t base,
				uint64_t ra)
{
	uint64_t caller_ret = base + (ug_caller_ret - (const char *)ug_body);
	uint64_t next = base + (ug_caller_next - (const char *)ug_body);
	uint64_t last = base + (ug_caller_last - (const char *)ug_body);
	int i;

	/* the return probe replaced the return address */
	ASSERT_FALSE(ug_in_text(ra, base)) TH_LOG("return address %#lx",
						  (unsigned long)ra);
	ASSERT_LE(3, n);
	EXPECT_EQ(ra, pcs[0]);
	for (i = 1; i < n - 2; i++) {
		EXPECT_FALSE(ug_in_text(pcs[i], base)) {
			TH_LOG("stop %d at ug_body%+ld", i, UG_OFF(pcs[i], base));
		}
	}
	if (ut_impl_is_stock()) {
		EXPECT_EQ(3, n);
		EXPECT_EQ(next, pcs[n - 2]) {
			TH_LOG("stop %d at ug_body%+ld", n - 2,
			       UG_OFF(pcs[n - 2], base));
		}
		EXPECT_EQ(last, pcs[n - 1]);
		UT_STOCK_FAILS("a step from the trampoline runs ug_caller_ret too");
		return;
	}
	EXPECT_EQ(caller_ret, pcs[n - 2]) {
		TH_LOG("stop %d of %d at ug_body%+ld, ug_caller_ret is ug_body%+ld",
		       n - 2, n, UG_OFF(pcs[n - 2], base),
		       UG_OFF(caller_ret, base));
	}
	EXPECT_EQ(next, pcs[n - 1]) {
		TH_LOG("stop %d at ug_body%+ld, ug_caller_next is ug_body%+ld",
		       n - 1, UG_OFF(pcs[n - 1], base), UG_OFF(next, base));
	}
}

/*
 * gdb's stepi over the ret of return-probed ug_body() stops at the return
 * address the kernel put there, then at each instruction of the kernel's
 * trampoline, then exactly at the instruction after the call, and then at
 * the one after it.
 */
TEST_F_TIMEOUT(gdb_ret, gdb_stepi_ret, UG_TIMEOUT)
{
	struct ug_ctx *c = &self->c;
	const char *target = ut_helper(UG_TARGET);
	long v[UG_MAX_VALS];
	uint64_t pcs[UG_MAX_VALS];
	int status, n, i;
	pid_t pid;

	/* a smoke run keeps gdb_break_ret_and_caller */
	if (ut_heavy_client(_metadata))
		return;
	if (ug_stock_warns(_metadata))
		return;
	if (ug_start(_metadata, c, true))
		return;
	ASSERT_EQ(0, ug_retprobe(c, target));
	status = ug_gdb(c, "caller", UG_CALLS,
			"break *ug_body_ret\n"
			"run\n"
			"printf \"@@base %%ld\\n\", (long)&ug_body\n"
			"printf \"@@ra %%ld\\n\", (long)" UG_GDB_RA "\n"
			"stepi\n"
			"printf \"@@pc %%ld\\n\", (long)$pc\n"
			"set $lo = (long)&ug_body\n"
			"set $hi = (long)&ug_caller_end\n"
			"set $n = 1\n"
			"while ((long)$pc < $lo || (long)$pc >= $hi) && $n < 16\n"
			"stepi\n"
			"printf \"@@pc %%ld\\n\", (long)$pc\n"
			"set $n = $n + 1\n"
			"end\n"
			"stepi\n"
			"printf \"@@pc %%ld\\n\", (long)$pc\n"
			"delete\n"
			"continue\n");
	pid = ug_gdb_done(_metadata, c, status, ug_caller_sum(UG_CALLS));
	n = ug_values(c, "pc", v);
	ASSERT_GE(UG_MAX_VALS, n);
	for (i = 0; i < n; i++)
		pcs[i] = v[i];
	ug_expect_ret_steps(_metadata, pcs, n, ug_value(c, "base"),
			    ug_value(c, "ra"));
	if (_metadata->passed == 0)
		TH_LOG("gdb: %s", c->out);
	ug_expect_returns(_metadata, pid, UG_CALLS);
}

/*
 * The si_code of a single-step over the instruction at @prev of @pid:
 * UG_SYSCALL_CODE over a system call, TRAP_TRACE over any other.
 */
static int ug_step_code(pid_t pid, uint64_t prev)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, prev, 0);
	if (!errno && (word & UG_SYSCALL_MASK) == UG_SYSCALL)
		return UG_SYSCALL_CODE;
	return TRAP_TRACE;
}

/*
 * PTRACE_SINGLESTEP over the ret of return-probed ug_body() stops at the
 * return address the kernel put there, then at each instruction of the
 * kernel's trampoline, then exactly at the instruction after the call and
 * at the one after it; each stop a single-step's SIGTRAP, and none left
 * over for the child.
 */
TEST_F_TIMEOUT(gdb_ret, ptrace_step_ret, UG_TIMEOUT)
{
	struct ug_ctx *c = &self->c;
	struct ug_stop st[UG_MAX_VALS];
	uint64_t pcs[UG_MAX_VALS], ra, prev;
	int status, n = 0, extra, code;
	uintptr_t pc;
	pid_t pid;

	if (ug_stock_warns(_metadata))
		return;
	if (ug_start(_metadata, c, false))
		return;
	ASSERT_EQ(0, ug_retprobe(c, ut_self_exe()));
	pid = ug_pt_child(c, ug_caller, ug_caller_sum(UG_PT_CALLS));
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, ug_pt_run_to(pid, (uintptr_t)ug_body_ret));
	ASSERT_EQ(0, ug_pt_ra(pid, &ra));
	ASSERT_EQ(0, ut_tracee_pc(pid, &pc, 0));
	prev = pc;
	/* the ret, then the trampoline until back in ug_caller(), then one */
	do {
		ASSERT_EQ(0, ug_pt_step(pid, &st[n]));
		pcs[n] = st[n].ip;
		code = ug_step_code(pid, prev);
		EXPECT_EQ(SIGTRAP, st[n].sig) TH_LOG("stop %d", n);
		EXPECT_EQ(code, st[n].code) {
			TH_LOG("stop %d at %#lx: si_code %d", n,
			       (unsigned long)st[n].ip, st[n].code);
		}
		prev = st[n].ip;
		n++;
	} while (n < 16 && st[n - 1].sig == SIGTRAP &&
		 !ug_in_text(st[n - 1].ip, (uintptr_t)ug_body));
	ASSERT_EQ(0, ug_pt_step(pid, &st[n]));
	pcs[n] = st[n].ip;
	EXPECT_EQ(SIGTRAP, st[n].sig);
	EXPECT_EQ(TRAP_TRACE, st[n].code);
	n++;
	status = ug_pt_finish(c, pid, &extra);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("child status %#x", status);
	}
	EXPECT_EQ(0, extra);
	ug_expect_ret_steps(_metadata, pcs, n, (uintptr_t)ug_body, ra);
	ug_expect_returns(_metadata, pid, UG_PT_CALLS);
}

TEST_HARNESS_MAIN
