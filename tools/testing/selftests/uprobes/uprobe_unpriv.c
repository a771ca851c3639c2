// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_unpriv: what an unprivileged process (uid and gid 65534) can do
 * to its own jump sites while root traces it (x86-64, jump sites only;
 * issue 41, items 1, 4 and 5):
 * - debugger accesses of a jump site from several threads or processes at
 *   once (/proc/self/mem, process_vm_readv(), ptrace peeks and pokes) while
 *   a thread runs through it: results exact, every read of the site the
 *   original instruction, the kernel unharmed;
 * - another process putting the original bytes back over a jump site
 *   under running threads: no thread ever runs a half-written jump;
 * - a stub area unmapped by the program and a new one mapped at its
 *   address: the old site's jump never reaches the new area's stubs.
 * Root makes the probes; the workloads run in children that dropped their
 * privileges. Every test SKIPs where the kernel has no jump sites (stock).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_fivebyte.h"
#include "uprobe_util.h"

#define NOBODY		65534	/* the unprivileged uid and gid */
#define JMP_REL32	0xe9
#define RACE_SECONDS	8
#define SPIN_THREADS	4
#define PTRACE_PEERS	4	/* tracer threads: two pokers, two peekers */
#define MAX_STUBS	16

static long nop5_want(long seed)
{
	return 3 * seed + 3 + ((unsigned long)seed < 1000);
}

static long mov5_want(long seed)
{
	return nop5_want(seed) + 0x12345678;
}

static void count(long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* The first byte of the instruction at @at, as this process runs it. */
static unsigned char text_byte(const char *at)
{
	return UT_READ_ONCE(*(const unsigned char *)at);
}

/* File offset of @sym, a symbol of this binary. */
static int64_t off_of(const char *sym)
{
	return ut_elf_sym_offset(ut_self_exe(), sym);
}

/* Become uid and gid 65534, still able to access its own memory. */
static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	/* the uid change made the process undumpable: /proc/self/mem EACCES */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* /proc/@pid/mem (0: this process's), read-write; an fd or -1. */
static int open_mem(pid_t pid)
{
	char path[64];

	if (!pid)
		return open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* Seconds since @t0 (CLOCK_MONOTONIC). */
static long seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - t0->tv_sec;
}

/* Read this process's [uprobes-stubs] areas into @lo/@hi; how many, or -1. */
static int stub_areas(unsigned long *lo, unsigned long *hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	if (!f)
		return -1;
	while (n < MAX_STUBS && fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes-stubs]") &&
		    sscanf(line, "%lx-%lx", &lo[n], &hi[n]) == 2)
			n++;
	fclose(f);
	return n;
}

/* Unmap this process's stub areas; how many there were, or -1. */
static int unmap_stub_areas(void)
{
	unsigned long lo[MAX_STUBS], hi[MAX_STUBS];
	int i, n = stub_areas(lo, hi);

	for (i = 0; i < n; i++)
		if (munmap((void *)lo[i], hi[i] - lo[i]))
			return -1;
	return n;
}

/*
 * What the processes of a test share (a MAP_SHARED page, so that the
 * counts survive a child that dies): the site's original bytes, a stop
 * flag, the pids to kill, and the counts.
 */
struct shared {
	unsigned char orig[16];	/* the text at fb_nop5_at, unprobed */
	unsigned char orig_mov[8];	/* at fb_mov5_at */
	int stop;
	int tstop;		/* the tracer threads' stop flag */
	int mem;		/* the /proc/self/mem of a race child */
	int vm_readers;		/* readers use process_vm_readv() */
	pid_t grandchild;	/* for the teardown */
	pid_t tid[PTRACE_PEERS];	/* the target's parked threads */
	int status;		/* a grandchild's wait status */
	long calls[SPIN_THREADS], bad[SPIN_THREADS];
	long jumps_seen, orig_seen;	/* the site after a call */
	long writes[2], reads[2], torn, errors;
	unsigned char end_byte[2];	/* nop5 and mov5 sites at the end */
	unsigned long area[2];	/* stub areas: the first, then the new one */
	long result;		/* fb_nop5_leaf() after the new area */
};

FIXTURE(unpriv) {
	char grp[64];
	struct shared *sh;
	pid_t child;
	int jump_was;
};

FIXTURE_SETUP(unpriv)
{
	self->child = -1;
	/* -1 where the kernel has no jump sites (stock): START() skips */
	self->jump_was = ut_jump_sites(true);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memcpy(self->sh->orig, fb_nop5_at, sizeof(self->sh->orig));
	memcpy(self->sh->orig_mov, fb_mov5_at, sizeof(self->sh->orig_mov));
	self->sh->status = -1;	/* no wait status: not a normal exit */
}

FIXTURE_TEARDOWN(unpriv)
{
	if (self->sh == MAP_FAILED)
		return;
	if (self->sh->grandchild > 0)
		kill(self->sh->grandchild, SIGKILL);
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	munmap(self->sh, sizeof(*self->sh));
	if (self->grp[0])
		ut_group_cleanup(self->grp);
	if (self->jump_was >= 0)
		ut_jump_sites(self->jump_was);
}

/* SKIP where the kernel has no jump sites; else ut_start() with group @g. */
static bool start(struct __test_metadata *_metadata, int jump_was, char *grp,
		  size_t size, const char *g)
{
	if (jump_was < 0)
		SKIP(return true, "no %s: no jump sites here (stock 6.1, or built without)",
		     UT_JUMP_SITES);
	if (ut_start(_metadata, grp, size, g))
		return true;
	/* the workloads' threads run on every CPU */
	EXPECT_EQ(0, ut_unpin_cpu());
	return false;
}

#define START(g)	start(_metadata, self->jump_was, self->grp, \
			      sizeof(self->grp), g)

/* Define and enable event @ev of @grp at symbol @sym. */
static int probe_sym(const char *grp, const char *ev, const char *sym)
{
	return ut_probe_at(grp, ev, ut_self_exe(), off_of(sym), 0);
}

/* Fork the test's child, which runs @fn as uid 65534 and exits with it. */
static pid_t fork_unpriv(struct shared *sh, int (*fn)(struct shared *sh))
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(drop_to_nobody() ? 99 : fn(sh));
	return pid;
}

/* Wait for the test's child; its wait status, or -1. */
static int wait_child(pid_t *child)
{
	int st;

	if (waitpid(*child, &st, 0) != *child)
		return -1;
	*child = -1;
	return st;
}

/* ---- item 1: concurrent debugger accesses of a jump site ---- */

/*
 * Calls through the probed nop5, which becomes a jump again at the first
 * hit after a write took it out; what the site is after each call.
 */
static void *race_caller(void *arg)
{
	struct shared *sh = arg;
	long seed, n = 0;

	while (!UT_READ_ONCE(sh->stop)) {
		seed = n++ % 2000;
		if (fb_nop5_leaf(seed) != nop5_want(seed))
			count(&sh->bad[0]);
		count(text_byte(fb_nop5_at) == JMP_REL32 ? &sh->jumps_seen :
			      &sh->orig_seen);
		count(&sh->calls[0]);
	}
	return NULL;
}

/* Writes of the original byte at the site + 3 (@arg 0) or + 4 (@arg 1). */
struct race_arg {
	struct shared *sh;
	int which;
};

static void *race_writer(void *arg)
{
	struct race_arg *a = arg;
	struct shared *sh = a->sh;
	off_t at = (uintptr_t)fb_nop5_at + 3 + a->which;

	while (!UT_READ_ONCE(sh->stop)) {
		if (pwrite(sh->mem, &sh->orig[3 + a->which], 1, at) == 1)
			count(&sh->writes[a->which]);
		else
			count(&sh->errors);
	}
	return NULL;
}

/*
 * Reads of the site's 8 bytes: through /proc/self/mem, which must show
 * the original instruction, or with process_vm_readv(), which shows the
 * live text (a jump or not: only the read's success is checked).
 */
static void *race_reader(void *arg)
{
	struct race_arg *a = arg;
	struct shared *sh = a->sh;
	unsigned char b[8];
	struct iovec local = { b, sizeof(b) };
	struct iovec remote = { fb_nop5_at, sizeof(b) };
	ssize_t n;

	while (!UT_READ_ONCE(sh->stop)) {
		if (sh->vm_readers)
			n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		else
			n = pread(sh->mem, b, sizeof(b), (uintptr_t)fb_nop5_at);
		if (n != sizeof(b)) {
			count(&sh->errors);
			continue;
		}
		count(&sh->reads[a->which]);
		if (!sh->vm_readers && memcmp(b, sh->orig, sizeof(b)))
			count(&sh->torn);
	}
	return NULL;
}

/*
 * The unprivileged child of the race: a caller, two writers (+3, +4), two
 * readers, RACE_SECONDS long. 0, or 2 at a failed setup (the counts in
 * @sh are the results).
 */
static int remote_race_child(struct shared *sh)
{
	struct race_arg wa[2], ra[2];
	unsigned char b[8];
	pthread_t t[5];
	int i, n = 0;

	sh->mem = open_mem(0);
	/* /proc/self/mem shows the original instruction, not our jump */
	if (sh->mem < 0 || pread(sh->mem, b, sizeof(b), (uintptr_t)fb_nop5_at) !=
	    sizeof(b) || memcmp(b, sh->orig, sizeof(b)))
		return 2;
	/* the first hit makes the jump */
	if (fb_nop5_leaf(1) != nop5_want(1) || text_byte(fb_nop5_at) != JMP_REL32)
		return 2;
	if (pthread_create(&t[n++], NULL, race_caller, sh))
		return 2;
	for (i = 0; i < 2; i++) {
		wa[i].sh = sh;
		wa[i].which = i;
		ra[i] = wa[i];
		if (pthread_create(&t[n++], NULL, race_writer, &wa[i]) ||
		    pthread_create(&t[n++], NULL, race_reader, &ra[i]))
			return 2;
	}
	sleep(RACE_SECONDS);
	UT_WRITE_ONCE(sh->stop, 1);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/*
 * The race's results in @sh: every result right, every read of the site
 * the original instruction (@torn counted only where checked), no access
 * failed, every thread made progress, the probe counted hits.
 */
static void race_check(struct __test_metadata *_metadata,
		       const struct shared *sh, const char *writes,
		       const char *reads)
{
	TH_LOG("%ld calls: the site a jump after %ld, the original after %ld, %ld wrong",
	       sh->calls[0], sh->jumps_seen, sh->orig_seen, sh->bad[0]);
	TH_LOG("%ld+%ld %s, %ld+%ld %s, %ld torn, %ld failed",
	       sh->writes[0], sh->writes[1], writes, sh->reads[0],
	       sh->reads[1], reads, sh->torn, sh->errors);
	EXPECT_EQ(0, sh->bad[0]);
	EXPECT_EQ(0, sh->torn);
	EXPECT_EQ(0, sh->errors);
	EXPECT_LT(0, sh->calls[0]);
	EXPECT_LT(0, sh->writes[0]);
	EXPECT_LT(0, sh->writes[1]);
	EXPECT_LT(0, sh->reads[0]);
	EXPECT_LT(0, sh->reads[1]);
	EXPECT_LT(0, ut_profile_hits("fb_nop5"));
}

/*
 * Run the race in an unprivileged child (*@child while it runs), the
 * readers through /proc/self/mem or (@vm_readers) process_vm_readv(),
 * and check its results.
 */
static void remote_race(struct __test_metadata *_metadata, const char *grp,
			pid_t *child, struct shared *sh, bool vm_readers)
{
	int st;

	ASSERT_EQ(0, probe_sym(grp, "fb_nop5", "fb_nop5_at"));
	sh->vm_readers = vm_readers;
	*child = fork_unpriv(sh, remote_race_child);
	ASSERT_LE(0, *child);
	st = wait_child(child);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		TH_LOG("child status %#x (exit 2: setup, 99: no uid 65534)", st);
	}
	race_check(_metadata, sh, "writes", vm_readers ?
		   "process_vm_readv() reads" : "reads");
}

/*
 * Unprivileged threads writing the original bytes into a jump site and
 * reading it through /proc/self/mem while a thread runs through it.
 */
TEST_F_TIMEOUT(unpriv, proc_mem_race, 120)
{
	if (START("uup_memrace"))
		return;
	remote_race(_metadata, self->grp, &self->child, self->sh, false);
}

/* The same with process_vm_readv() readers (live text: reads succeed). */
TEST_F_TIMEOUT(unpriv, proc_mem_race_vm_readv, 120)
{
	if (START("uup_vmrace"))
		return;
	remote_race(_metadata, self->grp, &self->child, self->sh, true);
}

/*
 * A thread of the ptrace target: parked (in pause()) until stopped by its
 * tracer thread; its tid in sh->tid[@arg].
 */
struct park_arg {
	struct shared *sh;
	int i;
};

static void *parked(void *arg)
{
	struct park_arg *p = arg;

	UT_WRITE_ONCE(p->sh->tid[p->i], gettid());
	while (!UT_READ_ONCE(p->sh->stop))
		pause();
	return NULL;
}

/*
 * The ptrace target: PTRACE_PEERS parked threads for the tracer's threads
 * to stop and access the memory through, and the main thread calling
 * through the jump site until the stop flag. 0, or 2 at a failed setup.
 */
static int ptrace_target(struct shared *sh)
{
	struct park_arg p[PTRACE_PEERS];
	pthread_t t;
	int i;

	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 2;
	for (i = 0; i < PTRACE_PEERS; i++) {
		p[i].sh = sh;
		p[i].i = i;
		if (pthread_create(&t, NULL, parked, &p[i]) ||
		    pthread_detach(t))
			return 2;
	}
	race_caller(sh);
	return 0;
}

/*
 * A tracer thread: seize and stop target thread sh->tid[@arg], then poke
 * the original word at the site + 3 or + 4 (@arg 0, 1) or peek the site
 * (@arg 2, 3) until the tracers' stop flag; detach.
 */
static void *tracer(void *arg)
{
	struct park_arg *p = arg;
	struct shared *sh = p->sh;
	pid_t tid = sh->tid[p->i];
	uintptr_t at = (uintptr_t)fb_nop5_at;
	long w, want;
	int st;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) ||
	    ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
	    waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
		count(&sh->errors);
		return NULL;
	}
	memcpy(&w, &sh->orig[3 + (p->i & 1)], sizeof(w));
	memcpy(&want, sh->orig, sizeof(want));
	while (!UT_READ_ONCE(sh->tstop)) {
		if (p->i < 2) {
			if (ptrace(PTRACE_POKETEXT, tid, at + 3 + p->i, w))
				count(&sh->errors);
			else
				count(&sh->writes[p->i]);
			continue;
		}
		errno = 0;
		w = ptrace(PTRACE_PEEKTEXT, tid, at, 0);
		if (errno) {
			count(&sh->errors);
			continue;
		}
		count(&sh->reads[p->i - 2]);
		if (w != want)
			count(&sh->torn);
	}
	if (ptrace(PTRACE_DETACH, tid, 0, 0))
		count(&sh->errors);
	return NULL;
}

/*
 * The unprivileged tracer: forks the target (its child: any ptrace scope
 * allows that), makes its jump site (the target's first call), then
 * PTRACE_PEERS threads poke and peek it for RACE_SECONDS. The target's
 * wait status in sh->status; 0, or 2 at a failed setup.
 */
static int ptrace_tracer(struct shared *sh)
{
	struct park_arg p[PTRACE_PEERS];
	pthread_t t[PTRACE_PEERS];
	struct timespec t0;
	int i, n = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		_exit(ptrace_target(sh));
	sh->grandchild = pid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* the threads parked, the jump made by the target's calls */
	for (i = 0; i < PTRACE_PEERS; i++)
		while (!UT_READ_ONCE(sh->tid[i]) && seconds_since(&t0) < 10)
			usleep(1000);
	while (UT_READ_ONCE(sh->calls[0]) < 10 && seconds_since(&t0) < 10)
		usleep(1000);
	for (i = 0; i < PTRACE_PEERS; i++) {
		p[i].sh = sh;
		p[i].i = i;
		if (!sh->tid[i] || pthread_create(&t[n++], NULL, tracer, &p[i]))
			goto out;
	}
	sleep(RACE_SECONDS);
out:
	/* the target's threads detached before it stops and exits */
	UT_WRITE_ONCE(sh->tstop, 1);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	UT_WRITE_ONCE(sh->stop, 1);
	if (waitpid(pid, &sh->status, 0) != pid)
		return 2;
	return n == PTRACE_PEERS ? 0 : 2;
}

/*
 * The same race through ptrace: an unprivileged tracer's threads, each the
 * tracer of one stopped thread of the target, poke the original words at
 * the site + 3 and + 4 and peek the site (the original instruction) while
 * the target's main thread runs through it.
 */
TEST_F_TIMEOUT(unpriv, ptrace_poke_race, 120)
{
	struct shared *sh = self->sh;
	int st;

	if (START("uup_ptrace"))
		return;
	ASSERT_EQ(0, probe_sym(self->grp, "fb_nop5", "fb_nop5_at"));
	self->child = fork_unpriv(sh, ptrace_tracer);
	ASSERT_LE(0, self->child);
	st = wait_child(&self->child);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		TH_LOG("tracer status %#x (exit 2: setup, 99: no uid 65534)", st);
	}
	EXPECT_TRUE(WIFEXITED(sh->status) && WEXITSTATUS(sh->status) == 0) {
		TH_LOG("target status %#x", sh->status);
	}
	race_check(_metadata, sh, "pokes", "peeks");
}

/* ---- item 4: the original bytes put back under running threads ---- */

/* A spinning thread: fb_nop5_leaf() (even @arg) or fb_mov5_leaf(). */
static void *spinner(void *arg)
{
	struct park_arg *p = arg;
	struct shared *sh = p->sh;
	bool mov = p->i & 1;
	long seed, n = 0, r;

	while (!UT_READ_ONCE(sh->stop)) {
		seed = n++ % 2000;
		r = mov ? fb_mov5_leaf(seed) : fb_nop5_leaf(seed);
		if (r != (mov ? mov5_want(seed) : nop5_want(seed)))
			count(&sh->bad[p->i]);
		count(&sh->calls[p->i]);
	}
	return NULL;
}

/*
 * The spinning process: SPIN_THREADS threads through both sites until the
 * stop flag, then one more call of each function; the sites' first bytes
 * then in sh->end_byte. 0, or 2 at a failed setup.
 */
static int spin_process(struct shared *sh)
{
	struct park_arg p[SPIN_THREADS];
	pthread_t t[SPIN_THREADS];
	int i;

	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 2;
	for (i = 0; i < SPIN_THREADS; i++) {
		p[i].sh = sh;
		p[i].i = i;
		if (pthread_create(&t[i], NULL, spinner, &p[i]))
			return 2;
	}
	for (i = 0; i < SPIN_THREADS; i++)
		pthread_join(t[i], NULL);
	if (fb_nop5_leaf(7) != nop5_want(7))
		count(&sh->bad[0]);
	if (fb_mov5_leaf(7) != mov5_want(7))
		count(&sh->bad[1]);
	sh->end_byte[0] = text_byte(fb_nop5_at);
	sh->end_byte[1] = text_byte(fb_mov5_at);
	return 0;
}

/* Fewer than the 100 writes of each site that the restore test wants. */
static bool few_writes(struct shared *sh)
{
	return UT_READ_ONCE(sh->writes[0]) <= 100 ||
	       UT_READ_ONCE(sh->writes[1]) <= 100;
}

/*
 * The unprivileged writer: forks the spinning process (its child), waits
 * for both sites to be jumps, then writes the five original bytes over
 * each site through /proc/PID/mem for RACE_SECONDS (on a slow machine up
 * to five times longer, until each site had 100 writes), or until the
 * spinning process dies. Its wait status in sh->status; 0, or 2 at a failed setup.
 */
static int restore_writer(struct shared *sh)
{
	struct timespec t0;
	unsigned char b[2];
	pid_t pid;
	int fd, i;

	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		_exit(spin_process(sh));
	sh->grandchild = pid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = -1;
	while (seconds_since(&t0) < 10) {
		if (fd < 0)
			fd = open_mem(pid);
		if (fd >= 0 &&
		    pread(fd, b, 1, (uintptr_t)fb_nop5_at) == 1 &&
		    pread(fd, b + 1, 1, (uintptr_t)fb_mov5_at) == 1 &&
		    UT_READ_ONCE(sh->calls[SPIN_THREADS - 1]) > 0)
			break;
		usleep(1000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* RACE_SECONDS, longer on a slow machine until 100 writes of each */
	while (fd >= 0 && (seconds_since(&t0) < RACE_SECONDS ||
			   (few_writes(sh) && seconds_since(&t0) < 5 * RACE_SECONDS)) &&
	       waitpid(pid, &sh->status, WNOHANG) == 0) {
		for (i = 0; i < 2; i++) {
			const unsigned char *o = i ? sh->orig_mov : sh->orig;
			uintptr_t at = (uintptr_t)(i ? fb_mov5_at : fb_nop5_at);

			if (pwrite(fd, o, 5, at) == 5)
				count(&sh->writes[i]);
			else
				count(&sh->errors);
		}
		usleep(100);
	}
	UT_WRITE_ONCE(sh->stop, 1);
	if (waitpid(pid, &sh->status, 0) != pid)
		return 2;
	return fd >= 0 ? 0 : 2;
}

/*
 * Another unprivileged process writes the original five bytes over two jump
 * sites through /proc/PID/mem thousands of times while threads run through
 * them: no thread gets a wrong result or a signal, and the sites are
 * jumps again at the end.
 */
TEST_F_TIMEOUT(unpriv, restore_under_running_threads, 120)
{
	struct shared *sh = self->sh;
	long calls = 0, bad = 0;
	int i, st;

	if (START("uup_restore"))
		return;
	ASSERT_EQ(0, probe_sym(self->grp, "fb_nop5", "fb_nop5_at"));
	ASSERT_EQ(0, probe_sym(self->grp, "fb_mov5", "fb_mov5_at"));
	self->child = fork_unpriv(sh, restore_writer);
	ASSERT_LE(0, self->child);
	st = wait_child(&self->child);
	for (i = 0; i < SPIN_THREADS; i++) {
		calls += sh->calls[i];
		bad += sh->bad[i];
		EXPECT_LT(0, sh->calls[i]);
	}
	TH_LOG("%ld calls, %ld wrong; %ld+%ld writes (%ld failed); sites %#x %#x at the end",
	       calls, bad, sh->writes[0], sh->writes[1], sh->errors,
	       sh->end_byte[0], sh->end_byte[1]);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		TH_LOG("writer status %#x (exit 2: setup, 99: no uid 65534)", st);
	}
	/* no wrong result and no signal in any thread */
	EXPECT_TRUE(WIFEXITED(sh->status) && WEXITSTATUS(sh->status) == 0) {
		TH_LOG("spinning process status %#x", sh->status);
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, sh->errors);
	EXPECT_LT(100, sh->writes[0]);
	EXPECT_LT(100, sh->writes[1]);
	EXPECT_LT(0, ut_profile_hits("fb_nop5"));
	EXPECT_LT(0, ut_profile_hits("fb_mov5"));
	EXPECT_EQ(JMP_REL32, sh->end_byte[0]);
	EXPECT_EQ(JMP_REL32, sh->end_byte[1]);
}

/* ---- item 5: a stub area unmapped, a new one at its address ---- */

/*
 * A jump site at fb_nop5_at, its stub area unmapped, a jump site at
 * fb_mov5_at (a new area), then fb_nop5_leaf(3): its result in
 * sh->result; exit 0 for its own result, 1 for fb_mov5_leaf()'s, 3 for
 * another; 2 at a failed setup.
 */
static int unmap_child(struct shared *sh)
{
	unsigned long lo[MAX_STUBS], hi[MAX_STUBS];

	if (fb_nop5_leaf(1) != nop5_want(1) ||
	    text_byte(fb_nop5_at) != JMP_REL32 || stub_areas(lo, hi) != 1)
		return 2;
	sh->area[0] = lo[0];
	if (unmap_stub_areas() != 1 || stub_areas(lo, hi) != 0)
		return 2;
	if (fb_mov5_leaf(2) != mov5_want(2) ||
	    text_byte(fb_mov5_at) != JMP_REL32 || stub_areas(lo, hi) != 1)
		return 2;
	sh->area[1] = lo[0];
	sh->result = fb_nop5_leaf(3);
	return sh->result == nop5_want(3) ? 0 :
	       sh->result == mov5_want(3) ? 1 : 3;
}

/*
 * An unprivileged program unmaps the stub area of a jump site, another
 * site's area lands at its address: the first site's function then returns
 * its own result or dies of SIGSEGV, never the other function's result.
 */
TEST_F(unpriv, stub_area_unmapped_no_alias)
{
	struct shared *sh = self->sh;
	int st;

	if (START("uup_alias"))
		return;
	ASSERT_EQ(0, probe_sym(self->grp, "fb_nop5", "fb_nop5_at"));
	ASSERT_EQ(0, probe_sym(self->grp, "fb_mov5", "fb_mov5_at"));
	self->child = fork_unpriv(sh, unmap_child);
	ASSERT_LE(0, self->child);
	st = wait_child(&self->child);
	TH_LOG("stub areas at %#lx, then %#lx", sh->area[0], sh->area[1]);
	TH_LOG("fb_nop5_leaf(3): %s (%#lx; own %#lx, fb_mov5_leaf's %#lx)",
	       WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) :
	       !WEXITSTATUS(st) ? "its own result" :
	       WEXITSTATUS(st) == 1 ? "fb_mov5_leaf's result" : "wrong",
	       sh->result, nop5_want(3), mov5_want(3));
	ASSERT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	/* the new area at the old one's address: the case at stake */
	EXPECT_NE(0UL, sh->area[0]);
	EXPECT_EQ(sh->area[0], sh->area[1]);
	EXPECT_TRUE((WIFEXITED(st) && WEXITSTATUS(st) == 0) ||
		    (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)) {
		TH_LOG("child status %#x", st);
	}
	/* fb_mov5_leaf() was called once: its handler never ran for nop5 */
	EXPECT_EQ(1, ut_profile_hits("fb_mov5"));
}

TEST_HARNESS_MAIN
