// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_torture: a bounded torture run, in the spirit of rcutorture.
 * Unprivileged worker processes (uid 65534) do, at random, what a process
 * may do to itself around probed code: call it and check every result,
 * fork, vfork (from a return-probed function), threads, exec, a second
 * mapping of the text (called, moved by mremap(), unmapped), madvise() and
 * mprotect() of the probed page, /proc/self/mem reads and writes of the
 * original bytes over a probed site, process_vm_readv(), ptrace peeks and
 * single-steps of a child, signals on an alternate stack, restartable
 * sequences around a probed nop in two threads, and probed calls on a
 * stack whose pages a userfaultfd serves late. Meanwhile root enables,
 * disables, deletes and defines again entry and return probes on that code
 * through tracefs (with arguments fetched from the stack, some from pages
 * not there yet), opens and closes perf uprobe events, and turns jump sites
 * on and off. Invariants: every result exact, every rseq addition
 * counted, no worker or child killed by a
 * signal it did not ask for, every debugger read the original text, no
 * event of the run left in uprobe_stats and the text the file's once all
 * probes are gone; the harness checks the console (lockdep, KASAN,
 * DEBUG_VM on the debug kernel).
 *
 * UPROBE_TORTURE_SECONDS (default 20, 60 on a lockdep kernel) bounds the
 * run, UPROBE_TORTURE_SEED (default: the time) seeds it; both are printed,
 * and a failure says how to run it again: make torture SEED=N SECONDS=S.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_fivebyte.h"
#include "uprobe_util.h"

#define TT_GRP		"utort"
#define TT_WORKERS	3
#define TT_HELPER_ARG	"--torture-helper"
#define TT_NOBODY	65534

/* Worker failure bits, also the exit status of its children. */
#define TT_WRONG	0x01	/* a probed function's result */
#define TT_TORN		0x02	/* a debugger read not the original text */
#define TT_CHILD	0x04	/* a child failed or died of a signal */
#define TT_SETUP	0x08	/* a system call that must work failed */
#define TT_RSEQ		0x10	/* an rseq addition lost */

static long nop5_want(long seed)
{
	return 3 * seed + 3 + ((unsigned long)seed < 1000);
}

static long mov5_want(long seed)
{
	return nop5_want(seed) + 0x12345678;
}

/* Where vfork() children return from: return-probed by the run. */
noipa pid_t tt_vfork(void)
{
	return vfork();
}

/* exit_group() without a call: a vfork child must not write the stack. */
static inline void tt_raw_exit(long code)
{
	asm volatile("syscall" : : "a" ((long)SYS_exit_group), "D" (code)
		     : "rcx", "r11", "memory");
	__builtin_unreachable();
}

/* Calls of both probed leaves; the failure bits. */
static int tt_calls(unsigned int *rs, int n)
{
	long seed;
	int i;

	for (i = 0; i < n; i++) {
		seed = rand_r(rs) % 2000;
		if (fb_nop5_leaf(seed) != nop5_want(seed) ||
		    fb_mov5_leaf(seed) != mov5_want(seed))
			return TT_WRONG;
	}
	return 0;
}

/* "BINARY TT_HELPER_ARG N": an exec'd worker child, N calls, then exit. */
static void __attribute__((constructor)) tt_helper(int argc, char **argv)
{
	unsigned int rs = getpid();

	if (argc != 3 || strcmp(argv[1], TT_HELPER_ARG))
		return;
	_exit(tt_calls(&rs, strtol(argv[2], NULL, 0)));
}

/* The text at fb_nop5_at before any probe: what a debugger must read. */
static unsigned char tt_orig[8];
static int tt_sig_bad;	/* set by the handler, read after raise() */

static void tt_sig_handler(int sig)
{
	char scratch[256];
	long seed = sig * 7;

	memset(scratch, sig, sizeof(scratch));
	asm volatile("" : : "r" (scratch) : "memory");
	if (fb_mov5_leaf(seed) != mov5_want(seed))
		UT_WRITE_ONCE(tt_sig_bad, 1);
}

/* The last operation of the worker, for the report of its failure. */
static int tt_last_op;
#define TT_NR_OPS	14
/* Operations not done (UPROBE_TORTURE_SKIP: a mask of 1 << op) */
static unsigned int tt_skip_ops;

/* A debugger read @b at fb_nop5_at, not the original text: say so. */
static int tt_torn(const void *b)
{
	const unsigned char *c = b;

	printf("# torture: op %d read %02x %02x %02x %02x %02x %02x %02x %02x",
	       tt_last_op, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
	printf(" at the site, not %02x %02x %02x %02x %02x %02x %02x %02x\n",
	       tt_orig[0], tt_orig[1], tt_orig[2], tt_orig[3], tt_orig[4],
	       tt_orig[5], tt_orig[6], tt_orig[7]);
	fflush(stdout);
	return TT_TORN;
}

/* Reap @pid: 0 if it exited 0, else TT_CHILD (and log why). */
static int tt_reap(pid_t pid, const char *what)
{
	int st;

	if (pid < 0)
		return TT_SETUP;
	if (waitpid(pid, &st, 0) != pid)
		return TT_SETUP;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	printf("# torture: %s child %d: status %#x\n", what, pid, st);
	return TT_CHILD;
}

/* A worker's fatal signal: say in which operation, then die of it. */
static void tt_fatal(int sig)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "# torture: signal %d in op %d\n",
			 sig, tt_last_op);

	if (write(1, msg, n) < 0)
		_exit(128 + sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void *tt_thread(void *arg)
{
	unsigned int rs = (uintptr_t)arg;

	return (void *)(uintptr_t)tt_calls(&rs, 200);
}

/* A debugger's view of the probed site: the original bytes. */
static int tt_mem_op(unsigned int *rs)
{
	unsigned char b[8];
	int fd, ret = 0, at;

	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return TT_SETUP;
	if (pread(fd, b, sizeof(b), (uintptr_t)fb_nop5_at) != sizeof(b))
		ret |= TT_SETUP;
	else if (memcmp(b, tt_orig, sizeof(b)) && !ut_impl_is_stock())
		ret |= tt_torn(b);	/* stock 6.1 shows its int3 */
	/* Put original bytes back over the site: the whole nop, or its tail. */
	at = rand_r(rs) & 1 ? 3 : 0;
	if (pwrite(fd, tt_orig + at, 5 - at, (uintptr_t)fb_nop5_at + at) !=
	    5 - at)
		ret |= TT_SETUP;
	close(fd);
	return ret | tt_calls(rs, 20);
}

/* A second mapping of the probed text: called, maybe moved, unmapped. */
static int tt_alias_op(unsigned int *rs, int64_t leaf_off)
{
	long page = sysconf(_SC_PAGESIZE);
	int64_t pg = leaf_off & ~(int64_t)(page - 1);
	long (*fn)(long seed);
	char *map, *moved;
	int ret = 0;
	long seed = rand_r(rs) % 2000;

	map = ut_map_file(ut_self_exe(), pg, 2 * page, PROT_READ | PROT_EXEC,
			  MAP_PRIVATE, false);
	if (map == MAP_FAILED)
		return TT_SETUP;
	fn = (long (*)(long))(map + (leaf_off - pg));
	if (fn(seed) != nop5_want(seed))
		ret |= TT_WRONG;
	/* Moved onto a reservation of its own. */
	moved = rand_r(rs) & 1 ? mmap(NULL, 2 * page, PROT_NONE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
				 MAP_FAILED;
	if (moved != MAP_FAILED) {
		moved = mremap(map, 2 * page, 2 * page, MREMAP_MAYMOVE |
			       MREMAP_FIXED, moved);
		if (moved != MAP_FAILED) {
			map = moved;
			fn = (long (*)(long))(map + (leaf_off - pg));
			if (fn(seed) != nop5_want(seed))
				ret |= TT_WRONG;
		}
	}
	munmap(map, 2 * page);
	return ret;
}

/* A traced child: peeks at the site, steps it a while, lets it finish. */
static int tt_ptrace_op(unsigned int *rs)
{
	long word, seed = rand_r(rs) % 2000;
	int st, i, ret = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return TT_SETUP;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(TT_SETUP);
		raise(SIGSTOP);
		_exit(fb_nop5_leaf(seed) == nop5_want(seed) &&
		      fb_mov5_leaf(seed) == mov5_want(seed) ? 0 : TT_WRONG);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return TT_SETUP;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, fb_nop5_at, NULL);
	if (errno)
		ret |= TT_SETUP;
	else if (memcmp(&word, tt_orig, sizeof(word)) && !ut_impl_is_stock())
		ret |= tt_torn(&word);
	for (i = 0; i < 40; i++) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, 0) ||
		    waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			break;
		if (WSTOPSIG(st) != SIGTRAP) {
			printf("# torture: stepped child %d stopped by signal %d\n",
			       pid, WSTOPSIG(st));
			ret |= TT_CHILD;
			break;
		}
	}
	if (WIFSTOPPED(st))
		ptrace(PTRACE_CONT, pid, NULL, 0);
	return ret | tt_reap(pid, "traced");
}

/* The probed page writable for a while: split from its mapping, merged back. */
static int tt_mprotect_op(unsigned int *rs)
{
	long page = sysconf(_SC_PAGESIZE);
	void *pg = (void *)((uintptr_t)fb_nop5_at & ~(uintptr_t)(page - 1));
	int ret;

	if (mprotect(pg, page, PROT_READ | PROT_WRITE | PROT_EXEC))
		return TT_SETUP;
	ret = tt_calls(rs, 50);
	if (mprotect(pg, page, PROT_READ | PROT_EXEC))
		ret |= TT_SETUP;
	return ret;
}

#define TT_RSEQ_ADDS	2000
#define TT_RSEQ_CPUS	1024	/* room for every rseq cpu_id */

struct tt_rseq {
	long *counts;
	int bad;
};

/* TT_RSEQ_ADDS additions to counts[cpu] across a probed nop, under rseq. */
static void *tt_rseq_thread(void *arg)
{
	struct tt_rseq *r = arg;
	struct rseq *rs = ut_rseq_area();
	int i;

	if (!rs || (int)UT_READ_ONCE(rs->cpu_id) < 0) {
		r->bad = TT_SETUP;
		return NULL;
	}
	for (i = 0; i < TT_RSEQ_ADDS; i++) {
		while (fb_rseq_nop5(rs, r->counts))
			;	/* aborted: again */
		if (!(i % 64))
			sched_yield();
	}
	return NULL;
}

/*
 * Two threads add to per-CPU counts in restartable sequences around a
 * probed nop: a preemption between load and commit must abort, or an
 * addition is lost.
 */
static int tt_rseq_op(void)
{
	struct tt_rseq r = { .counts = calloc(TT_RSEQ_CPUS, sizeof(long)) };
	pthread_t t;
	long sum = 0;
	int i;

	if (!r.counts || !ut_rseq_area())
		goto out;	/* glibc without rseq: nothing to do */
	if (pthread_create(&t, NULL, tt_rseq_thread, &r)) {
		r.bad = TT_SETUP;
		goto out;
	}
	tt_rseq_thread(&r);
	pthread_join(t, NULL);
	for (i = 0; i < TT_RSEQ_CPUS; i++)
		sum += r.counts[i];
	if (!r.bad && sum != 2 * TT_RSEQ_ADDS) {
		printf("# torture: rseq: %ld additions of %d\n", sum,
		       2 * TT_RSEQ_ADDS);
		r.bad = TT_RSEQ;
	}
out:
	free(r.counts);
	return r.bad;
}

#define TT_UFFD_PAGES	4

struct tt_uffd {
	int fd;
	unsigned int seed;
	int stop;
};

/*
 * Serve the stack's missing pages with zeroes, each a little late (the fd
 * is O_NONBLOCK: poll() tells when a fault waits).
 */
static void *tt_uffd_server(void *arg)
{
	struct tt_uffd *u = arg;
	struct uffdio_zeropage zp;
	struct uffd_msg msg;
	struct pollfd pfd = { .fd = u->fd, .events = POLLIN };
	long page = sysconf(_SC_PAGESIZE);

	while (!UT_READ_ONCE(u->stop)) {
		if (poll(&pfd, 1, 10) <= 0)
			continue;
		if (read(u->fd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		usleep(rand_r(&u->seed) % 2000);
		zp.range.start = msg.arg.pagefault.address & ~(page - 1);
		zp.range.len = page;
		zp.mode = 0;
		/* mapped meanwhile: the faulting thread still waits */
		if (ioctl(u->fd, UFFDIO_ZEROPAGE, &zp) && errno == EEXIST)
			ioctl(u->fd, UFFDIO_WAKE, &zp.range);
	}
	return NULL;
}

/* fb_nop5_leaf(@seed) run with stack pointer @sp (as in uprobe_fivebyte). */
static long tt_nop5_on_stack(long seed, void *sp)
{
	long ret;

	asm volatile("mov %%rsp, %%rbx\n\t"
		     "mov %[sp], %%rsp\n\t"
		     "call fb_nop5_leaf\n\t"
		     "mov %%rbx, %%rsp"
		     : "=a" (ret), "+D" (seed)
		     : [sp] "r" (sp)
		     : "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11",
		       "memory", "cc");
	return ret;
}

/*
 * Probed calls (entry, return and jump sites, fetches below the stack
 * pointer) on a stack whose pages a userfaultfd of this process serves
 * late, user faults only (what an unprivileged process may ask for): the
 * kernel's own accesses there fail rather than wait.
 */
static int tt_uffd_op(unsigned int *rs)
{
	long page = sysconf(_SC_PAGESIZE), seed;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct tt_uffd u = { .seed = rand_r(rs) };
	size_t len = TT_UFFD_PAGES * page;
	int ret = 0, i;
	pthread_t t;
	char *stk;

	u.fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK |
		       UFFD_USER_MODE_ONLY);
	if (u.fd < 0)
		return 0;	/* no CONFIG_USERFAULTFD: nothing to do */
	stk = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (uintptr_t)stk;
	reg.range.len = len;
	if (stk == MAP_FAILED || ioctl(u.fd, UFFDIO_API, &api) ||
	    ioctl(u.fd, UFFDIO_REGISTER, &reg) ||
	    pthread_create(&t, NULL, tt_uffd_server, &u)) {
		ret = TT_SETUP;
		goto close;
	}
	for (i = 0; i < 20; i++) {
		/* anywhere in the stack, at least a red zone above its end */
		char *sp = stk + 256 + (rand_r(rs) % (len - 512) & ~15UL);

		seed = rand_r(rs) % 2000;
		if (tt_nop5_on_stack(seed, sp) != nop5_want(seed))
			ret |= TT_WRONG;
	}
	UT_WRITE_ONCE(u.stop, 1);
	pthread_join(t, NULL);
close:
	if (stk != MAP_FAILED)
		munmap(stk, len);
	close(u.fd);
	return ret;
}

/* One operation of a worker, chosen by @rs; the failure bits. */
static int tt_op(unsigned int *rs, int64_t leaf_off)
{
	char arg[16], *argv[4];
	struct iovec l, r;
	unsigned char b[8];
	pthread_t t;
	void *res;
	pid_t pid;
	int ret;

	tt_last_op = rand_r(rs) % TT_NR_OPS;
	if (tt_skip_ops & (1U << tt_last_op))
		tt_last_op = 0;
	switch (tt_last_op) {
	case 0:
	case 1:
		return tt_calls(rs, 100);
	case 2:
		pid = fork();
		if (pid == 0)
			_exit(tt_calls(rs, 100));
		return tt_reap(pid, "forked");
	case 3:
		pid = tt_vfork();
		if (pid == 0)
			tt_raw_exit(0);
		return tt_reap(pid, "vfork");
	case 4:
		if (pthread_create(&t, NULL, tt_thread,
				   (void *)(uintptr_t)rand_r(rs)))
			return TT_SETUP;
		ret = tt_calls(rs, 100);
		pthread_join(t, &res);
		return ret | (int)(uintptr_t)res;
	case 5:
		snprintf(arg, sizeof(arg), "%d", 50);
		argv[0] = (char *)ut_self_exe();
		argv[1] = TT_HELPER_ARG;
		argv[2] = arg;
		argv[3] = NULL;
		pid = fork();
		if (pid == 0) {
			execv(argv[0], argv);
			_exit(TT_SETUP);
		}
		return tt_reap(pid, "exec'd");
	case 6:
		return tt_mem_op(rs);
	case 7:
		l.iov_base = b;
		l.iov_len = sizeof(b);
		r.iov_base = fb_nop5_at;
		r.iov_len = sizeof(b);
		ret = process_vm_readv(getpid(), &l, 1, &r, 1, 0) ==
		      sizeof(b) ? 0 : TT_SETUP;
		return ret | tt_calls(rs, 20);
	case 8:
		return tt_alias_op(rs, leaf_off);
	case 10:
		return tt_mprotect_op(rs);
	case 11:
		return tt_rseq_op();
	case 12:
		return tt_uffd_op(rs);
	case 9:
		madvise((void *)((uintptr_t)fb_nop5_at &
				 ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1)),
			sysconf(_SC_PAGESIZE), rand_r(rs) & 1 ?
			MADV_DONTNEED : MADV_DONTFORK);
		ret = tt_calls(rs, 50);
		madvise((void *)((uintptr_t)fb_nop5_at &
				 ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1)),
			sysconf(_SC_PAGESIZE), MADV_DOFORK);
		return ret;
	default:
		if (rand_r(rs) & 1)
			return tt_ptrace_op(rs);
		raise(SIGUSR1);
		ret = UT_READ_ONCE(tt_sig_bad) ? TT_WRONG : 0;
		UT_WRITE_ONCE(tt_sig_bad, 0);
		return ret | tt_calls(rs, 20);
	}
}

/* A worker: unprivileged, ops until @deadline; exits with the bits. */
static void tt_worker(unsigned int seed, time_t deadline, int64_t leaf_off)
{
	static char altstack[64 * 1024];
	struct sigaction sa = { .sa_handler = tt_sig_handler,
				.sa_flags = SA_ONSTACK | SA_RESTART };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	unsigned int rs = seed;
	long ops = 0;
	int ret = 0;

	if (setgroups(0, NULL) || setresgid(TT_NOBODY, TT_NOBODY, TT_NOBODY) ||
	    setresuid(TT_NOBODY, TT_NOBODY, TT_NOBODY) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) || sigaltstack(&ss, NULL) ||
	    sigaction(SIGUSR1, &sa, NULL))
		_exit(TT_SETUP);
	signal(SIGSEGV, tt_fatal);
	signal(SIGILL, tt_fatal);
	signal(SIGTRAP, tt_fatal);
	signal(SIGBUS, tt_fatal);
	while (!ret && time(NULL) < deadline) {
		ret = tt_op(&rs, leaf_off);
		ops++;
	}
	printf("# torture: worker %d (seed %u): %ld ops, status %#x (last op %d)\n",
	       getpid(), seed, ops, ret, tt_last_op);
	fflush(stdout);
	_exit(ret);
}

/*
 * The root side's events: entry and return probes on the workers' code,
 * some with arguments from the stack (the red zone, and a page below it
 * that may not be there: a fetch that needs a fault).
 */
static const struct {
	const char *ev, *type, *sym, *args;
} tt_events[] = {
	{ "nop5", "p", "fb_nop5_at", " rz=-8(%sp):s64 far=-4096(%sp):x64" },
	{ "mov5", "p", "fb_mov5_at", "" },
	{ "leaf_ret", "r", "fb_nop5_leaf", " ret=$retval" },
	{ "vfork_ret", "r", "tt_vfork", "" },
	{ "rseq_nop5", "p", "fb_rseq_nop5_at", " cpu=+4(%di):u32" },
};

#define TT_NR_EVENTS	ARRAY_SIZE(tt_events)

static int tt_define(int i)
{
	return ut_probe_add("%s:%s/%s %s:%#llx%s", tt_events[i].type, TT_GRP,
			    tt_events[i].ev, ut_self_exe(),
			    (unsigned long long)ut_elf_sym_offset(ut_self_exe(),
								  tt_events[i].sym),
			    tt_events[i].args);
}

/* How long the run lasts: the environment's, else by kernel config. */
static int tt_seconds(void)
{
	const char *env = getenv("UPROBE_TORTURE_SECONDS");

	if (env)
		return atoi(env);
	return ut_slow_kernel() ? 60 : 20;
}

FIXTURE(torture) {
	pid_t workers[TT_WORKERS];
	int jump_was;
};

FIXTURE_SETUP(torture)
{
	memset(self->workers, 0, sizeof(self->workers));
	self->jump_was = -1;
}

FIXTURE_TEARDOWN(torture)
{
	int i;

	for (i = 0; i < TT_WORKERS; i++) {
		if (self->workers[i] > 0) {
			kill(self->workers[i], SIGKILL);
			waitpid(self->workers[i], NULL, 0);
		}
	}
	ut_group_cleanup(TT_GRP);
	if (self->jump_was >= 0)
		ut_jump_sites(self->jump_was);
}

/*
 * Unprivileged workers doing everything above at random while root churns
 * the probes: every worker exits 0, no event left, the text restored.
 */
TEST_F_TIMEOUT(torture, random_ops_while_probes_churn, 900)
{
	const char *env = getenv("UPROBE_TORTURE_SEED");
	unsigned int seed = env ? strtoul(env, NULL, 0) : (unsigned int)time(NULL);
	int64_t leaf_off = ut_elf_sym_offset(ut_self_exe(), "fb_nop5_leaf");
	int64_t mov5_off = ut_elf_sym_offset(ut_self_exe(), "fb_mov5_at");
	bool defined[TT_NR_EVENTS] = {}, on[TT_NR_EVENTS] = {};
	int secs = tt_seconds(), i, st, perf_fd = -1, jump = 1;
	long cycles = 0, max_hits = 0, hits;
	unsigned int rs = seed;
	char *stats, *line, grp[64];
	time_t deadline;

	if (ut_start(_metadata, grp, sizeof(grp), TT_GRP))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_LT(0, leaf_off);
	memcpy(tt_orig, fb_nop5_at, sizeof(tt_orig));
	env = getenv("UPROBE_TORTURE_SKIP");
	tt_skip_ops = env ? strtoul(env, NULL, 0) : 0;
	self->jump_was = ut_jump_sites(true);
	ksft_print_msg("torture: seed %u, %d s (reproduce: make torture SEED=%u SECONDS=%d)\n",
		       seed, secs, seed, secs);
	for (i = 0; i < (int)TT_NR_EVENTS; i++) {
		ASSERT_EQ(0, tt_define(i));
		defined[i] = true;
	}
	deadline = time(NULL) + secs;
	fflush(stdout);
	for (i = 0; i < TT_WORKERS; i++) {
		self->workers[i] = fork();
		ASSERT_LE(0, self->workers[i]);
		if (self->workers[i] == 0)
			tt_worker(seed + i + 1, deadline, leaf_off);
	}
	while (time(NULL) < deadline) {
		i = rand_r(&rs) % TT_NR_EVENTS;
		switch (rand_r(&rs) % 6) {
		case 0:
		case 1:
			if (defined[i] && !ut_event_enable(TT_GRP,
							   tt_events[i].ev,
							   !on[i]))
				on[i] = !on[i];
			break;
		case 2:
			if (!defined[i]) {
				defined[i] = !tt_define(i);
				break;
			}
			hits = ut_profile_hits(tt_events[i].ev);
			max_hits = hits > max_hits ? hits : max_hits;
			if (on[i] && !ut_event_enable(TT_GRP, tt_events[i].ev,
						      false))
				on[i] = false;
			if (!on[i] && !ut_probe_del(TT_GRP, tt_events[i].ev))
				defined[i] = false;
			break;
		case 3:
			jump = !jump;
			if (self->jump_was >= 0)
				ut_jump_sites(jump);
			break;
		case 4:
			if (perf_fd >= 0) {
				close(perf_fd);
				perf_fd = -1;
				break;
			}
			perf_fd = ut_uprobe_perf_open(ut_self_exe(), mov5_off, 0,
						      self->workers[rand_r(&rs) %
								    TT_WORKERS]);
			break;
		default:
			usleep(rand_r(&rs) % 20000);
			break;
		}
		cycles++;
	}
	if (perf_fd >= 0)
		close(perf_fd);
	for (i = 0; i < TT_WORKERS; i++) {
		ASSERT_EQ(self->workers[i], waitpid(self->workers[i], &st, 0));
		/* stock 6.1 steps the nop out of line, unseen by rseq */
		if (ut_impl_is_stock() && WIFEXITED(st) &&
		    (WEXITSTATUS(st) & TT_RSEQ)) {
			UT_STOCK_FAILS("worker %d lost rseq additions", i);
			st &= ~(TT_RSEQ << 8);
		}
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			TH_LOG("worker %d: status %#x (bits: 1 wrong, 2 torn, 4 child,",
			       i, st);
			TH_LOG("  8 setup, 16 rseq)");
			TH_LOG("reproduce: make torture SEED=%u SECONDS=%d",
			       seed, secs);
		}
		self->workers[i] = 0;
	}
	for (i = 0; i < (int)TT_NR_EVENTS; i++) {
		hits = ut_profile_hits(tt_events[i].ev);
		max_hits = hits > max_hits ? hits : max_hits;
	}
	ut_group_cleanup(TT_GRP);
	/* No event of the run left behind, the text the file's again. */
	stats = ut_read_file(UT_TRACEFS "/uprobe_stats", NULL);
	line = stats ? strstr(stats, TT_GRP "/") : NULL;
	EXPECT_EQ(NULL, line) {
		TH_LOG("left in uprobe_stats: %.60s", line);
	}
	free(stats);
	EXPECT_EQ(0, memcmp(tt_orig, fb_nop5_at, sizeof(tt_orig)));
	EXPECT_LT(0, max_hits);
	ksft_print_msg("torture: %ld root cycles, most hits of one event %ld\n",
		       cycles, max_hits);
}

TEST_HARNESS_MAIN
