// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_core: tests of the uprobes core (issue 3): the probed page shared
 * again after removal, registration racing threads that hit the probe,
 * signals and SIGKILL while a probed instruction runs out of line,
 * mappings that cannot take a breakpoint, error unwinding under fault
 * injection, the signal of a program's own breakpoint instruction, and the
 * stock 6.1 bugs found so far.  Numbers in brackets are
 * those of the FAILURE-MODES checklist.
 *
 * A test of something stock 6.1 gets wrong says so: with
 * UPROBE_TEST_IMPL=stock it asserts the stock failure, logs it and passes.
 *
 * On arm64 every test runs but the two of x86 instructions (syscall,
 * pushf), which skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_targets.h"
#include "uprobe_util.h"

#define PAGE		4096UL
#define HPAGE		(2UL << 20)
#define MAX_CHILDREN	3
#define NMAPS		4
#define ENOTSUPP	524	/* the kernel's, not user space's ENOTSUP */
#define X86_TF		0x100UL
#define RECORD_CMD	UT_TRACEFS "/options/record-cmd"
#define FI_SWEEPS	3	/* sweeps of fail-nth for a core failure */

/* reference counters for the probes of this file */
unsigned short core_ref[4] __section(".probes") __used;

#define SEM(i)		UT_READ_ONCE(core_ref[i])

noipa long core_work(long x)
{
	return 3 * x + 1;
}

FIXTURE(core) {
	char grp[64];
	struct ut_child child[MAX_CHILDREN];
	int nchild;
	struct {
		void *p;
		size_t len;
	} map[NMAPS];
	int perf_fd;
	int kmsg;
	char tmp[PATH_MAX];	/* a file to remove */
	char mnt[64];		/* a mount point to unmount and remove */
	char huge_nr[32];	/* vm.nr_hugepages to restore */
	bool fi_used;		/* fault injection knobs to restore */
	char record_cmd[8];	/* tracing option record-cmd to restore */
};

FIXTURE_SETUP(core)
{
	self->perf_fd = -1;
	self->kmsg = -1;
}

FIXTURE_TEARDOWN(core)
{
	int i;

	if (self->perf_fd >= 0)
		close(self->perf_fd);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	for (i = 0; i < NMAPS; i++)
		if (self->map[i].p)
			munmap(self->map[i].p, self->map[i].len);
	if (self->tmp[0])
		unlink(self->tmp);
	if (self->mnt[0]) {
		umount(self->mnt);
		rmdir(self->mnt);
	}
	if (self->huge_nr[0])
		ut_write_file("/proc/sys/vm/nr_hugepages", self->huge_nr,
			      false);
	if (self->fi_used)
		ut_fi_restore();
	if (self->record_cmd[0])
		ut_write_file(RECORD_CMD, self->record_cmd, false);
	if (self->kmsg >= 0)
		close(self->kmsg);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)
#define START_TARGET()	\
	ut_spawn_target(self->child, &self->nchild, MAX_CHILDREN)
#define HITS(ev)	ut_trace_count(ev, getpid())

/* File offset of symbol @sym of this binary (-1 if absent). */
static int64_t sym_off(const char *sym)
{
	return ut_elf_sym_offset(ut_self_exe(), sym);
}

/* File offset of core_ref[@i]. */
static uint64_t ref_off(int i)
{
	return sym_off("core_ref") + i * sizeof(core_ref[0]);
}

/* Note mapping @p of @len bytes for the teardown; returns @p. */
static void *keep_map(struct _test_data_core *self, void *p, size_t len)
{
	int i;

	if (p == MAP_FAILED)
		return p;
	for (i = 0; i < NMAPS; i++) {
		if (!self->map[i].p) {
			self->map[i].p = p;
			self->map[i].len = len;
			break;
		}
	}
	return p;
}

/* Map @len bytes of this binary from @pgoff, kept for the teardown. */
static char *map_exe(struct _test_data_core *self, uint64_t pgoff, size_t len,
		     int prot, int flags)
{
	return keep_map(self, ut_map_file(ut_self_exe(), pgoff, len, prot,
					  flags, false), len);
}

/* fm_pure as mapped at @base, a mapping of this file from @pgoff. */
static long (*pure_in(char *base, uint64_t pgoff))(long)
{
	return (long (*)(long))(base + sym_off("fm_pure") - pgoff);
}

/* pread() @len bytes of @path at @off; 0 or -1. */
static int file_bytes(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, off);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* Send a command expecting "ok VALUE"; returns VALUE or -1. */
static long cmd_ok(struct ut_child *c, const char *cmd)
{
	char buf[256];

	if (ut_cmd(c, buf, sizeof(buf), "%s", cmd) || strncmp(buf, "ok", 2))
		return -1;
	return buf[2] ? atol(buf + 3) : 0;
}

/* Send a command expecting a number; returns it or -1. */
static long cmd_num(struct ut_child *c, const char *cmd)
{
	char buf[256], *end;
	long v;

	if (ut_cmd(c, buf, sizeof(buf), "%s", cmd))
		return -1;
	v = strtol(buf, &end, 10);
	return end == buf || *end ? -1 : v;
}

/* Sum of uttgt_func(i) = 2i + 1 over i < n. */
static long tgt_sum(long n)
{
	return n * n;
}

/* Copy this binary to a new file in /tmp, removed by the teardown. */
static int tmp_copy(struct _test_data_core *self, const char *name)
{
	int fd;

	snprintf(self->tmp, sizeof(self->tmp), "/tmp/%s.XXXXXX", name);
	fd = mkstemp(self->tmp);
	if (fd < 0) {
		self->tmp[0] = '\0';
		return -errno;
	}
	close(fd);
	return ut_copy_file(ut_self_exe(), self->tmp);
}

/* what the signal handlers saw */
static int core_sigtrap, core_sigusr1, core_stop;
static uint64_t core_sig_pc;

static void count_sigtrap(int sig)
{
	__atomic_add_fetch(&core_sigtrap, 1, __ATOMIC_RELAXED);
}

static void usr1_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	UT_WRITE_ONCE(core_sig_pc, UT_UC_PC(uc));
	__atomic_add_fetch(&core_sigusr1, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* 1. the probed page is shared with the page cache again              */

/*
 * A running process's probed page is an anonymous copy only while the
 * probe is enabled: before enabling and after disabling, its text mapping
 * holds no anonymous page (the page-cache page is mapped again) and the
 * page's bytes are the file's.
 */
TEST_F(core, page_shared_again_after_disable)
{
	const char *tgt = ut_helper("uprobe_target");
	uint8_t file[PAGE], mem[PAGE];
	uint64_t va, pva;
	struct ut_child *c;
	int64_t off;
	int t;

	if (START("ust_coreshare"))
		return;
	off = ut_elf_sym_offset(tgt, "uttgt_func");
	ASSERT_LT(0, off);
	ASSERT_EQ(0, file_bytes(tgt, off & ~(PAGE - 1), file, PAGE));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	va = ut_fileoff_to_vaddr(c->pid, tgt, off);
	ASSERT_NE(0ULL, va);
	pva = va & ~(PAGE - 1);
	EXPECT_EQ(0, ut_smaps_anon_kb(c->pid, va));

	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coreshare_e", tgt, off, 0));
	EXPECT_EQ(tgt_sum(3), cmd_ok(c, "call 3"));
	EXPECT_EQ(3, ut_trace_count("ust_coreshare_e", c->pid));
	EXPECT_EQ((long)(PAGE / 1024), ut_smaps_anon_kb(c->pid, va));
	ASSERT_EQ(0, ut_proc_read(c->pid, pva, mem, PAGE));
	EXPECT_TRUE(ut_is_bp_in(c->pid, va, mem + off % PAGE));

	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coreshare_e", false));
	EXPECT_EQ(0, ut_smaps_anon_kb(c->pid, va));
	ASSERT_EQ(0, ut_proc_read(c->pid, pva, mem, PAGE));
	EXPECT_EQ(0, memcmp(file, mem, PAGE));
	EXPECT_EQ(tgt_sum(2), cmd_ok(c, "call 2"));
	EXPECT_EQ(3, ut_trace_count("ust_coreshare_e", c->pid));
	EXPECT_EQ(0, ut_smaps_anon_kb(c->pid, va));
}

/* ------------------------------------------------------------------ */
/* 2. register/unregister while threads hit the probe                  */

#define NTHR		8
#define CYCLES		30

struct worker {
	pthread_t th;
	long calls;	/* calls completed, stored with release order */
	long bad;
};

/* Call core_work() until core_stop, counting the calls. */
static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	long i = 0;

	while (!UT_READ_ONCE(core_stop)) {
		if (core_work(i) != 3 * i + 1)
			w->bad++;
		i++;
		__atomic_store_n(&w->calls, i, __ATOMIC_RELEASE);
	}
	return NULL;
}

static long calls_sum(struct worker *w)
{
	long s = 0;
	int i;

	for (i = 0; i < NTHR; i++)
		s += __atomic_load_n(&w[i].calls, __ATOMIC_ACQUIRE);
	return s;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * CYCLES enable/disable cycles of GRP/EV (on core_work, with reference
 * counter core_ref[1] when @sem) while NTHR threads call core_work(): in
 * each cycle every call made after enabling returned is counted (give or
 * take the one call per thread in flight), no call is counted that did not
 * run while the probe could be there, nothing is counted once disabling
 * returned, and with @sem the counter is 1 while enabled and 0 after.
 */
static void toggle_under_load(struct __test_metadata *_metadata,
			      const char *grp, const char *ev, bool sem)
{
	long cb, c0, c1, c2, h0, h1, h2, in_window = 0, hits = 0;
	bool stock_lost = false;
	struct worker w[NTHR];
	int i, cyc;

	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_NE(SIG_ERR, signal(SIGTRAP, count_sigtrap));
	ASSERT_EQ(0, ut_define_at(grp, ev, ut_self_exe(), sym_off("core_work"),
				  sem ? ref_off(1) : 0));
	ASSERT_EQ(0, ut_profile_hits(ev));
	memset(w, 0, sizeof(w));
	for (i = 0; i < NTHR; i++)
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, worker_fn, &w[i]));
	for (cyc = 0; cyc < CYCLES; cyc++) {
		h0 = ut_profile_hits(ev);
		cb = calls_sum(w);
		ASSERT_EQ(0, ut_event_enable(grp, ev, true));
		c0 = calls_sum(w);
		if (sem)
			EXPECT_EQ(1, SEM(1));
		sleep_ms(20);
		c1 = calls_sum(w);
		ASSERT_EQ(0, ut_event_enable(grp, ev, false));
		c2 = calls_sum(w);
		h1 = ut_profile_hits(ev);
		if (sem)
			EXPECT_EQ(0, SEM(1));
		sleep_ms(5);
		h2 = ut_profile_hits(ev);
		EXPECT_EQ(h1, h2) {
			TH_LOG("cycle %d: hits after disabling", cyc);
		}
		if (ut_stock_lost_hits(_metadata, h1 - h0, c1 - c0 - NTHR)) {
			stock_lost = true;
		} else {
			EXPECT_GE(h1 - h0, c1 - c0 - NTHR) {
				TH_LOG("cycle %d: lost hits: %ld hits, %ld calls after enabling",
				       cyc, h1 - h0, c1 - c0);
			}
		}
		EXPECT_LE(h1 - h0, c2 - cb + NTHR) {
			TH_LOG("cycle %d: phantom hits: %ld hits, %ld calls in all",
			       cyc, h1 - h0, c2 - cb);
		}
		in_window += c1 - c0;
		hits += h1 - h0;
	}
	UT_WRITE_ONCE(core_stop, 1);
	for (i = 0; i < NTHR; i++) {
		ASSERT_EQ(0, pthread_join(w[i].th, NULL));
		EXPECT_EQ(0, w[i].bad);
	}
	/* stock 6.1 on arm64 races: a thread may get the SIGTRAP */
	if (ut_impl_is_stock() && UT_READ_ONCE(core_sigtrap))
		UT_STOCK_FAILS("%d SIGTRAP reached the program",
			       UT_READ_ONCE(core_sigtrap));
	else
		EXPECT_EQ(0, UT_READ_ONCE(core_sigtrap));
	EXPECT_LE(CYCLES, in_window);
	if (!stock_lost)
		EXPECT_LE(in_window - CYCLES * NTHR, hits);
	if (sem)
		EXPECT_EQ(0, SEM(1));
	EXPECT_EQ(hits, ut_profile_hits(ev));
	EXPECT_EQ(31, core_work(10));
}

/*
 * [#1] 30 enable/disable cycles while 8 threads call the probed function:
 * no lost hit once enabling returned, no phantom hit, none after
 * disabling, no SIGTRAP, every result right.
 */
TEST_F_TIMEOUT(core, toggle_while_8_threads_hit, 300)
{
	if (START("ust_coretog"))
		return;
	toggle_under_load(_metadata, self->grp, "ust_coretog_e", false);
}

/*
 * [#1] The same with a reference counter: it is 1 while enabled and
 * exactly 0 after every disable.
 */
TEST_F_TIMEOUT(core, toggle_while_8_threads_hit_semaphore, 300)
{
	if (START("ust_coretogs"))
		return;
	toggle_under_load(_metadata, self->grp, "ust_coretogs_e", true);
}

/* ------------------------------------------------------------------ */
/* 3. a signal and SIGKILL while the probed load is blocked in a fault */

/*
 * A userfaultfd with one new anonymous page (in *@pagep) registered for
 * missing-page faults: the fd, or -errno.
 */
static int uffd_page(char **pagep)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	char *page;
	int fd, err;

	fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		goto fail;
	reg.range.start = (uintptr_t)page;
	reg.range.len = PAGE;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg))
		goto fail;
	*pagep = page;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

/*
 * Wait for the next page fault message of @fd; the address of the page
 * (without UFFD_FEATURE_EXACT_ADDRESS the kernel reports the page), or 0.
 */
static uint64_t uffd_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return 0;
	if (read(fd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return 0;
	return msg.arg.pagefault.address;
}

/*
 * uffd_page() (kept for the teardown) and, in *@srcp, a page to resolve
 * its fault with, holding 0x0123456789abcdef at 0x40; the fd or -errno.
 */
static int uffd_with_source(struct _test_data_core *self, char **pagep,
			    char **srcp)
{
	int fd = uffd_page(pagep);

	if (fd < 0)
		return fd;
	keep_map(self, *pagep, PAGE);
	*srcp = keep_map(self, mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), PAGE);
	if (*srcp == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	*(long *)(*srcp + 0x40) = 0x0123456789abcdefL;
	return fd;
}

/* SKIP and return true when userfaultfd() is missing. */
static bool no_uffd(struct __test_metadata *_metadata)
{
	char *page;
	int fd = uffd_page(&page);

	if (fd < 0 && !ut_file_exists("/proc/sys/vm/unprivileged_userfaultfd"))
		SKIP(return true, "CONFIG_USERFAULTFD not enabled (no userfaultfd())");
	ASSERT_LE(0, fd) {
		TH_LOG("userfaultfd: %s", strerror(-fd));
	}
	close(fd);
	munmap(page, PAGE);
	return false;
}

struct loader {
	pthread_t th;
	long *p;
	long ret;
	uint64_t regs[CORE_LD_NREGS];
};

static void *loader_fn(void *arg)
{
	struct loader *l = arg;

	l->ret = core_ld(l->p, l->regs);
	return NULL;
}

/* Check the registers core_ld() saw after its load of @p. */
static void expect_regs(struct __test_metadata *_metadata,
			const uint64_t *regs, long *p)
{
	int i;

	for (i = 0; i < CORE_LD_NREGS - 1; i++) {
		uint64_t want = i == CORE_LD_RDI ? (uintptr_t)p :
				CORE_LD_REG(i);

		EXPECT_EQ(want, regs[i]) {
			TH_LOG("register %d after the probed load", i);
		}
	}
	EXPECT_EQ(CORE_LD_FLAGS & CORE_FLAGS_MASK,
		  regs[CORE_LD_FLAGS_IDX] & CORE_FLAGS_MASK);
}

/*
 * [#18] SIGUSR1 arrives while the probed load, run out of line, sleeps in
 * a userfaultfd fault; the fault is then resolved: the load returns the
 * right value, the handler ran once, after the load, the probe hit once,
 * and every other register and the flags are intact.
 */
TEST_F(core, signal_while_step_blocked)
{
	struct sigaction sa = {
		.sa_sigaction = usr1_handler,
		.sa_flags = SA_SIGINFO,
	};
	struct uffdio_copy copy = { .len = PAGE };
	struct loader l = { .ret = -1 };
	struct timespec ts;
	char *page, *src;
	uint64_t addr;
	int uffd;

	if (START("ust_coresig"))
		return;
	if (no_uffd(_metadata))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_NE(SIG_ERR, signal(SIGTRAP, count_sigtrap));
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	uffd = uffd_with_source(self, &page, &src);
	ASSERT_LE(0, uffd);
	l.p = (long *)(page + 0x40);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coresig_e", ut_self_exe(),
				 sym_off("core_ld_insn"), 0));

	ASSERT_EQ(0, pthread_create(&l.th, NULL, loader_fn, &l));
	addr = uffd_wait(uffd, 10000);
	ASSERT_EQ((uintptr_t)page, addr);
	EXPECT_EQ(1, ut_trace_count("ust_coresig_e", 0));
	ASSERT_EQ(0, pthread_kill(l.th, SIGUSR1));
	/* the signal ends that wait: the load faults again */
	addr = uffd_wait(uffd, 10000);
	ASSERT_EQ((uintptr_t)page, addr);
	copy.dst = (uintptr_t)page;
	copy.src = (uintptr_t)src;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy));
	ASSERT_EQ((long)PAGE, (long)copy.copy);
	ASSERT_EQ(0, clock_gettime(CLOCK_REALTIME, &ts));
	ts.tv_sec += 10;
	ASSERT_EQ(0, pthread_timedjoin_np(l.th, NULL, &ts));
	close(uffd);

	EXPECT_EQ(0x0123456789abcdefL, l.ret);
	EXPECT_EQ(1, UT_READ_ONCE(core_sigusr1));
	EXPECT_EQ((uintptr_t)core_ld_next, UT_READ_ONCE(core_sig_pc));
	expect_regs(_metadata, l.regs, l.p);
	EXPECT_EQ(1, ut_trace_count("ust_coresig_e", 0));
	EXPECT_EQ(0, UT_READ_ONCE(core_sigtrap));
}

/* Child of sigkill_while_step_blocked: block in the probed load. */
static void blocked_load_child(int ready)
{
	struct loader l;
	char *page;
	int uffd;

	uffd = uffd_page(&page);
	if (uffd < 0)
		_exit(2);
	l.p = (long *)(page + 0x40);
	if (pthread_create(&l.th, NULL, loader_fn, &l))
		_exit(3);
	if (uffd_wait(uffd, 10000) != (uintptr_t)page)
		_exit(4);
	if (write(ready, "b", 1) != 1)
		_exit(5);
	sleep(60);
	_exit(6);
}

/*
 * [#18] SIGKILL while the probed load of a process, run out of line,
 * sleeps in a userfaultfd fault: the process dies by SIGKILL, the probe
 * still works in a new process, and the reference counter is 1 while
 * enabled and 0 after.
 */
TEST_F(core, sigkill_while_step_blocked)
{
	uint64_t regs[CORE_LD_NREGS];
	int p[2], status;
	long val = 0x5a5a;
	pid_t pid;
	char b;

	if (START("ust_corekill"))
		return;
	if (no_uffd(_metadata))
		return;
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_corekill_e", ut_self_exe(),
				 sym_off("core_ld_insn"), ref_off(2)));
	EXPECT_EQ(1, SEM(2));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[0]);
		blocked_load_child(p[1]);
	}
	close(p[1]);
	EXPECT_EQ(1, read(p[0], &b, 1));
	close(p[0]);
	EXPECT_EQ(1, ut_trace_count("ust_corekill_e", 0));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		TH_LOG("status 0x%x", status);
	}

	/* a new process still hits the probe, with the right results */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		long v = 0x77;

		if (core_ld(&v, regs) != 0x77 || SEM(2) != 1)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("status 0x%x", status);
	}
	EXPECT_EQ(1, ut_trace_count("ust_corekill_e", pid));
	EXPECT_EQ(0x5a5a, core_ld(&val, regs));
	expect_regs(_metadata, regs, &val);
	EXPECT_EQ(1, HITS("ust_corekill_e"));
	EXPECT_EQ(1, SEM(2));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_corekill_e", false));
	EXPECT_EQ(0, SEM(2));
}

/* The CLONE_VM child of parked_run(): the load, then exit. */
static int loader_process(void *arg)
{
	struct loader *l = arg;

	l->ret = core_ld(l->p, l->regs);
	return 0;
}

/*
 * How many of the CORE_RUN_INSNS probes GRP/ust_coreslot_r<i> uprobe_stats
 * shows stepped or boosted at least once, each in an XOL slot of its own.
 */
static int run_probes_in_slots(const char *grp)
{
	char *buf, *line, *save, name[128], loc[4200];
	unsigned long long v[5];
	int n = 0;

	buf = ut_read_file(UT_TRACEFS "/uprobe_stats", NULL);
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%127s %4199s %llu %llu %llu %llu %llu", name,
			   loc, &v[0], &v[1], &v[2], &v[3], &v[4]) == 7 &&
		    !strncmp(name, grp, strlen(grp)) &&
		    strstr(name, "/ust_coreslot_r") && v[2] + v[3] > 0)
			n++;
	free(buf);
	return n;
}

/*
 * The probed load of core_ld(), run out of line, sleeps in a userfaultfd
 * fault in a thread (@process false) or in a CLONE_VM process (@process)
 * while its probe is disabled, so that its XOL slot retires with a task
 * in it; after a grace period CORE_RUN_INSNS new probes need more slots
 * than one page has. Then the fault is resolved: the load completes in a
 * slot that was not given to another instruction.
 */
static void parked_run(struct __test_metadata *_metadata,
		       struct _test_data_core *self, bool process)
{
	struct uffdio_copy copy = { .len = PAGE };
	struct loader *l;
	char *page, *src, *stack, ev[64];
	struct timespec ts;
	int uffd, i, status;
	pid_t pid = 0;

	if (no_uffd(_metadata))
		return;
	uffd = uffd_with_source(self, &page, &src);
	ASSERT_LE(0, uffd);
	stack = keep_map(self, mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
			 16 * PAGE);
	ASSERT_NE(MAP_FAILED, stack);
	l = (struct loader *)stack;	/* shared with a CLONE_VM child */
	l->ret = -1;
	l->p = (long *)(page + 0x40);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coreslot_ld", ut_self_exe(),
				 sym_off("core_ld_insn"), 0));
	if (process) {
		pid = clone(loader_process, stack + 16 * PAGE, CLONE_VM | SIGCHLD,
			    l);
		ASSERT_LT(0, pid);
	} else {
		ASSERT_EQ(0, pthread_create(&l->th, NULL, loader_fn, l));
	}
	ASSERT_EQ((uintptr_t)page, uffd_wait(uffd, 10000));
	EXPECT_EQ(1, ut_trace_count("ust_coreslot_ld", 0));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coreslot_ld", false));
	usleep(300 * 1000);	/* an SRCU grace period, many times over */
	for (i = 0; i < CORE_RUN_INSNS; i++) {
		snprintf(ev, sizeof(ev), "ust_coreslot_r%d", i);
		ASSERT_EQ(0, ut_probe_at(self->grp, ev, ut_self_exe(),
					 sym_off("core_run_insns") +
					 i * core_run_step, 0));
	}
	for (i = 0; i < 3; i++)
		EXPECT_EQ(5 + CORE_RUN_INSNS * 3L, core_run(5, 3));
	if (!ut_impl_is_stock())
		EXPECT_EQ(CORE_RUN_INSNS, run_probes_in_slots(self->grp));

	copy.dst = (uintptr_t)page;
	copy.src = (uintptr_t)src;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy));
	if (process) {
		ASSERT_EQ(pid, waitpid(pid, &status, __WALL));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			TH_LOG("the CLONE_VM child: status 0x%x", status);
		}
	} else {
		ASSERT_EQ(0, clock_gettime(CLOCK_REALTIME, &ts));
		ts.tv_sec += 10;
		ASSERT_EQ(0, pthread_timedjoin_np(l->th, NULL, &ts));
	}
	close(uffd);
	EXPECT_EQ(0x0123456789abcdefL, l->ret);
	expect_regs(_metadata, l->regs, l->p);
	EXPECT_EQ(5 + CORE_RUN_INSNS * 2L, core_run(5, 2));
}

/*
 * A thread asleep in a fault in an XOL slot keeps that slot from
 * being reused after its probe went away.
 */
TEST_F(core, slot_kept_while_thread_sleeps_in_it)
{
	if (START("ust_coreslot"))
		return;
	parked_run(_metadata, self, false);
}

/* The same for a CLONE_VM process (not a thread) sharing the mm. */
TEST_F(core, slot_kept_while_clone_vm_process_sleeps_in_it)
{
	if (START("ust_coreslot"))
		return;
	parked_run(_metadata, self, true);
}

/* ------------------------------------------------------------------ */
/* 4. mappings that cannot take a breakpoint                           */

/*
 * Map the page of fm_pure of a copy of this binary (made in self->tmp),
 * read-only and executable, with @flags (MAP_SHARED or MAP_PRIVATE);
 * returns the mapping, the file offset of fm_pure in *@off and its page
 * offset in *@pgoff.
 */
static char *map_copy(struct _test_data_core *self, int flags, uint64_t *off,
		      uint64_t *pgoff)
{
	*off = sym_off("fm_pure");
	*pgoff = *off & ~(PAGE - 1);
	return keep_map(self, ut_map_file(self->tmp, *pgoff, PAGE,
					  PROT_READ | PROT_EXEC, flags, false),
			PAGE);
}

/*
 * Count the kernel log lines since self->kmsg was opened that name this
 * process (as "COMM[PID]") and the file self->tmp.
 */
static int log_names_me(struct _test_data_core *self, const char *comm,
			char *log, size_t size)
{
	char who[64];

	snprintf(who, sizeof(who), "%s[%d]", comm, getpid());
	return ut_kmsg_count(self->kmsg, who, strrchr(self->tmp, '/') + 1, log,
			     size);
}

/*
 * [#9] A file whose only mapping is MAP_SHARED, read-only and executable:
 * enabling a tracefs probe on it succeeds (one process's mapping never
 * fails a registration, issue 21), nothing is patched, nothing is counted,
 * and one kernel log line names the process and the file.  Stock 6.1
 * enables it too but logs nothing.
 */
TEST_F(core, shared_only_mapping_skipped_tracefs)
{
	uint8_t orig[16], now[16];
	char log[4096] = "";
	uint64_t off, pgoff;
	char *a;
	int ret, n;

	if (START("ust_coreshr"))
		return;
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, prctl(PR_SET_NAME, "ust_shrcomm"));
	ASSERT_EQ(0, tmp_copy(self, "ust_coreshr"));
	a = map_copy(self, MAP_SHARED, &off, &pgoff);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, file_bytes(self->tmp, off, orig, 16));
	EXPECT_EQ(13, pure_in(a, pgoff)(4));
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_coreshr_e", self->tmp, off,
				  0));
	ret = ut_event_enable(self->grp, "ust_coreshr_e", true);
	EXPECT_EQ(0, ret) {
		TH_LOG("enabling failed: %s", strerror(-ret));
	}
	EXPECT_EQ(1, ut_event_enabled(self->grp, "ust_coreshr_e"));
	EXPECT_EQ(0, memcmp(orig, a + off - pgoff, 16));
	ASSERT_EQ(0, file_bytes(self->tmp, off, now, 16));
	EXPECT_EQ(0, memcmp(orig, now, 16));
	EXPECT_EQ(16, pure_in(a, pgoff)(5));
	EXPECT_EQ(0, HITS("ust_coreshr_e"));
	n = log_names_me(self, "ust_shrcomm", log, sizeof(log));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(0, n);
		UT_STOCK_FAILS("no log line for the skipped mapping");
	} else {
		EXPECT_EQ(1, n) {
			TH_LOG("kernel log since the start: %s", log);
		}
	}
}

/*
 * [#9] The same through perf_event_open() with the uprobe PMU for this
 * process: the event opens, nothing is patched, it counts 0, and one log
 * line names the process and the file.  Stock 6.1 logs nothing.
 */
TEST_F(core, shared_only_mapping_skipped_perf)
{
	uint64_t off, pgoff, cnt = 0;
	uint8_t orig[16], now[16];
	char log[4096] = "";
	char *a;
	int fd, n;

	if (ut_no_tracefs(_metadata))
		return;
	if (ut_pmu_type() < 0)
		SKIP(return, "CONFIG_UPROBE_EVENTS not enabled (no uprobe PMU)");
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, prctl(PR_SET_NAME, "ust_shpcomm"));
	ASSERT_EQ(0, tmp_copy(self, "ust_coreshp"));
	a = map_copy(self, MAP_SHARED, &off, &pgoff);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, file_bytes(self->tmp, off, orig, 16));
	fd = ut_uprobe_perf_open(self->tmp, off, 0, getpid());
	ASSERT_LE(0, fd) {
		TH_LOG("perf_event_open failed: %s", strerror(-fd));
	}
	self->perf_fd = fd;
	EXPECT_EQ(0, memcmp(orig, a + off - pgoff, 16));
	EXPECT_EQ(16, pure_in(a, pgoff)(5));
	ASSERT_EQ(0, file_bytes(self->tmp, off, now, 16));
	EXPECT_EQ(0, memcmp(orig, now, 16));
	ASSERT_EQ((ssize_t)sizeof(cnt), read(fd, &cnt, sizeof(cnt)));
	EXPECT_EQ(0ULL, cnt);
	n = log_names_me(self, "ust_shpcomm", log, sizeof(log));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(0, n);
		UT_STOCK_FAILS("no log line for the skipped mapping");
	} else {
		EXPECT_EQ(1, n) {
			TH_LOG("kernel log since the start: %s", log);
		}
	}
}

/*
 * Mount hugetlbfs on a new directory (self->mnt) with two free huge pages,
 * and make a file there holding fm_pure's code at @off; its path goes to
 * self->tmp.  Returns 0, or a SKIP reason.
 */
static const char *huge_file(struct _test_data_core *self, uint64_t off)
{
	char *fs, *buf;
	int fd;

	fs = ut_read_file("/proc/filesystems", NULL);
	if (!fs || !strstr(fs, "\thugetlbfs\n")) {
		free(fs);
		return "CONFIG_HUGETLBFS not enabled (no hugetlbfs in /proc/filesystems)";
	}
	free(fs);
	buf = ut_read_file("/proc/sys/vm/nr_hugepages", NULL);
	if (!buf)
		return "no /proc/sys/vm/nr_hugepages";
	snprintf(self->huge_nr, sizeof(self->huge_nr), "%s", buf);
	free(buf);
	/* one for the file, one reserved for the private mapping */
	if (ut_write_file("/proc/sys/vm/nr_hugepages", "2\n", false))
		return "cannot reserve huge pages";
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/ust_huge.XXXXXX");
	if (!mkdtemp(self->mnt)) {
		self->mnt[0] = '\0';
		return "mkdtemp failed";
	}
	if (mount("none", self->mnt, "hugetlbfs", 0, NULL)) {
		rmdir(self->mnt);
		self->mnt[0] = '\0';
		return "cannot mount hugetlbfs";
	}
	snprintf(self->tmp, sizeof(self->tmp), "%s/code", self->mnt);
	fd = open(self->tmp, O_RDWR | O_CREAT, 0755);
	if (fd < 0)
		return "cannot create a hugetlbfs file";
	buf = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (buf == MAP_FAILED)
		return "no free huge page";
	memcpy(buf + off, (void *)fm_pure, 64);
	munmap(buf, HPAGE);
	return NULL;
}

/*
 * [#9] A hugetlbfs file mapped privately and executable cannot take the
 * breakpoint: enabling fails with EOPNOTSUPP and the code is unchanged.
 * Stock 6.1 refuses it with EIO.
 */
TEST_F(core, hugetlbfs_mapping_refused)
{
	const uint64_t off = 0x140;
	const char *why;
	long (*fn)(long x);
	char *h;
	int ret;

	if (START("ust_corehuge"))
		return;
	why = huge_file(self, off);
	if (why)
		SKIP(return, "%s", why);
	h = keep_map(self, ut_map_file(self->tmp, 0, HPAGE,
				       PROT_READ | PROT_EXEC, MAP_PRIVATE,
				       false), HPAGE);
	ASSERT_NE(MAP_FAILED, h);
	fn = (long (*)(long))(h + off);
	EXPECT_EQ(7, fn(2));
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_corehuge_e", self->tmp, off,
				  0));
	ret = ut_event_enable(self->grp, "ust_corehuge_e", true);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(-EIO, ret);
		UT_STOCK_FAILS("enabling returned %d, not -EOPNOTSUPP", ret);
	} else {
		EXPECT_EQ(-EOPNOTSUPP, ret);
	}
	EXPECT_EQ(0, ut_event_enabled(self->grp, "ust_corehuge_e"));
	EXPECT_EQ(0, memcmp(h + off, (void *)fm_pure, 64));
	EXPECT_EQ(10, fn(3));
	EXPECT_EQ(0, HITS("ust_corehuge_e"));
}

/*
 * A file that is not mapped anywhere yet: enabling succeeds, a private
 * executable mapping made afterwards gets the breakpoint and counts, a
 * shared one made afterwards keeps the file's bytes.
 */
TEST_F(core, unmapped_file_enable_succeeds)
{
	uint64_t off, pgoff;
	uint8_t orig[16];
	char *priv, *shr;

	if (START("ust_coreunm"))
		return;
	ASSERT_EQ(0, tmp_copy(self, "ust_coreunm"));
	off = sym_off("fm_pure");
	ASSERT_EQ(0, file_bytes(self->tmp, off, orig, 16));
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coreunm_e", self->tmp, off, 0));
	priv = map_copy(self, MAP_PRIVATE, &off, &pgoff);
	ASSERT_NE(MAP_FAILED, priv);
	shr = map_copy(self, MAP_SHARED, &off, &pgoff);
	ASSERT_NE(MAP_FAILED, shr);
	EXPECT_TRUE(ut_is_bp(priv + off - pgoff));
	EXPECT_EQ(0, memcmp(orig, shr + off - pgoff, 16));
	EXPECT_EQ(7, pure_in(priv, pgoff)(2));
	EXPECT_EQ(10, pure_in(shr, pgoff)(3));
	EXPECT_EQ(1, HITS("ust_coreunm_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coreunm_e", false));
	EXPECT_EQ(0, memcmp(orig, priv + off - pgoff, 16));
}

/*
 * [#9] A private and a shared executable mapping of one file: enabling
 * succeeds, the private mapping is patched and counts, the shared one
 * keeps the file's bytes, and the kernel log has one line naming the
 * process and the file.  Stock 6.1 logs nothing.
 */
TEST_F(core, shared_and_private_mappings)
{
	uint64_t off, pgoff;
	uint8_t orig[16];
	char *priv, *shr, log[4096] = "";
	const char *name;
	int n;

	if (START("ust_coremix"))
		return;
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, prctl(PR_SET_NAME, "ust_mixcomm"));
	ASSERT_EQ(0, tmp_copy(self, "ust_coremix"));
	name = strrchr(self->tmp, '/') + 1;
	priv = map_copy(self, MAP_PRIVATE, &off, &pgoff);
	ASSERT_NE(MAP_FAILED, priv);
	shr = map_copy(self, MAP_SHARED, &off, &pgoff);
	ASSERT_NE(MAP_FAILED, shr);
	ASSERT_EQ(0, file_bytes(self->tmp, off, orig, 16));

	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coremix_e", self->tmp, off, 0));
	EXPECT_TRUE(ut_is_bp(priv + off - pgoff));
	EXPECT_EQ(0, memcmp(orig + UT_BP_SIZE, priv + off - pgoff + UT_BP_SIZE,
			    16 - UT_BP_SIZE));
	EXPECT_EQ(0, memcmp(orig, shr + off - pgoff, 16));
	EXPECT_EQ(7, pure_in(priv, pgoff)(2));
	EXPECT_EQ(10, pure_in(shr, pgoff)(3));
	EXPECT_EQ(1, HITS("ust_coremix_e"));
	n = ut_kmsg_count(self->kmsg, "ust_mixcomm", name, log, sizeof(log));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(0, n);
		UT_STOCK_FAILS("no log line for the refused mapping");
	} else {
		EXPECT_EQ(1, n) {
			TH_LOG("kernel log since the start: %s", log);
		}
	}
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coremix_e", false));
	EXPECT_EQ(0, memcmp(orig, priv + off - pgoff, 16));
	EXPECT_EQ(0, memcmp(orig, shr + off - pgoff, 16));
}

/* ------------------------------------------------------------------ */
/* 6. error unwinding under fault injection                            */

/* Write @val to the open file @fd; 0 or -errno. */
static int fd_write(int fd, const char *val)
{
	ssize_t n = write(fd, val, strlen(val));

	return n < 0 ? -errno : 0;
}

/*
 * Start a fault-injection test: failslab and fail_page_alloc set up for
 * fail-nth, and task-name recording off (the first enabled event starts
 * it through sched tracepoints, whose registration does not unwind a
 * failure cleanly: a WARNING in tracepoint_probe_unregister() on stock
 * 6.1 too; it is not uprobes code). The fail-nth fd, or -1 after a SKIP
 * or a failure.
 */
static int fi_start(struct __test_metadata *_metadata,
		    struct _test_data_core *self)
{
	char *buf_rc;
	int nth;

	nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth < 0 && errno == ENOENT)
		SKIP(return -1, "%s not enabled (no /proc/thread-self/fail-nth)",
		     "CONFIG_FAULT_INJECTION");
	ASSERT_LE(0, nth) return -1;
	if (!ut_file_exists(UT_FI_DIR "/failslab"))
		SKIP(goto close_nth, "%s not enabled",
		     "CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS");
	if (!ut_file_exists(UT_FI_DIR "/fail_page_alloc"))
		SKIP(goto close_nth, "CONFIG_FAIL_PAGE_ALLOC or _DEBUG_FS not enabled");
	self->fi_used = true;
	ASSERT_EQ(0, ut_fi_setup()) goto close_nth;
	buf_rc = ut_read_file(RECORD_CMD, NULL);
	ASSERT_NE(NULL, buf_rc) goto close_nth;
	snprintf(self->record_cmd, sizeof(self->record_cmd), "%s", buf_rc);
	free(buf_rc);
	ASSERT_EQ(0, ut_write_file(RECORD_CMD, "0", false)) goto close_nth;
	return nth;
close_nth:
	close(nth);
	return -1;
}

/*
 * Count the failures fault injection logged (with their stack traces)
 * since @kmsg was opened, in *@all, and return how many of them happened
 * inside the core's registration: a reliable frame (no "? ") of
 * uprobe_register_refctr() or of what it tail-calls, __uprobe_register().
 */
static int fi_core_failures(int kmsg, int *all)
{
	bool in_core = false;
	char rec[8192], *text;
	int core = 0;
	ssize_t n;

	*all = 0;
	for (;;) {
		n = read(kmsg, rec, sizeof(rec) - 1);
		if (n < 0 && (errno == EPIPE || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		text[strcspn(text, "\n")] = '\0';
		if (strstr(text, "FAULT_INJECTION: forcing a failure")) {
			(*all)++;
			in_core = false;
		} else if (*all && !in_core && !strstr(text, "? ") &&
			   (strstr(text, " uprobe_register_refctr+") ||
			    strstr(text, " __uprobe_register+"))) {
			in_core = true;
			core++;
		}
	}
	return core;
}

/*
 * Enable a probe with a reference counter on @ntgt running processes,
 * with the n-th allocation of the enabling task failed, for n = 1, 2, ...
 * until none is left to fail. With @other, another event on the same
 * marker is enabled all along: the enable being failed is a later
 * consumer of a probe in place. A failed enable leaves each process as it
 * was: the counter at 0 (1 with @other), the text as the file's (the
 * page-cache page, no anonymous copy; with @other, the other event goes on
 * counting every hit) and the process running without SIGTRAP; a
 * successful one counts every hit, and disabling then leaves the same.
 * At least one injected failure must strike inside the core's
 * registration (its stack traces in the kernel log say where), in one of
 * FI_SWEEPS sweeps of n.
 */
static void enable_fi_run(struct __test_metadata *_metadata,
			  struct _test_data_core *self, int ntgt, bool other)
{
	const char *tgt = ut_helper("uprobe_target");
	long left, hits[MAX_CHILDREN] = { 0 }, ohits[MAX_CHILDREN] = { 0 };
	int t[MAX_CHILDREN], nth, en, n, i, failed = 0, ret, logged, in_core = 0;
	int sweep, all = 0;
	char path[PATH_MAX], buf[64];
	uint8_t file[16], mem[16];
	uint64_t va[MAX_CHILDREN];
	struct ut_sdt_note note;
	struct ut_child *c;
	long sem = other;

	nth = fi_start(_metadata, self);
	if (nth < 0)
		return;
	/* a stack trace per injected failure, to see where it struck */
	ASSERT_EQ(0, ut_write_file(UT_FI_DIR "/failslab/verbose", "2", false));
	ASSERT_EQ(0, ut_write_file(UT_FI_DIR "/fail_page_alloc/verbose", "2",
				   false));
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);

	ASSERT_EQ(0, ut_sdt_find(tgt, "uttgt", "mark", &note));
	ASSERT_NE(0ULL, note.sem_off);
	ASSERT_EQ(0, file_bytes(tgt, note.pc_off, file, sizeof(file)));
	for (i = 0; i < ntgt; i++) {
		t[i] = START_TARGET();
		ASSERT_LE(0, t[i]);
		va[i] = ut_fileoff_to_vaddr(self->child[t[i]].pid, tgt,
					    note.pc_off);
		ASSERT_NE(0ULL, va[i]);
	}
	if (other)
		ASSERT_EQ(0, ut_probe_at(self->grp, "ust_corefi_o", tgt,
					 note.pc_off, note.sem_off));
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_corefi_e", tgt, note.pc_off,
				  note.sem_off));
	snprintf(path, sizeof(path), UT_TRACEFS "/events/%s/ust_corefi_e/enable",
		 self->grp);
	en = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, en);

	/*
	 * The kernel's own allocations (stack depot pages, RCU's batches)
	 * come and go in the sequence and can take the places the core's had:
	 * a sweep that struck none of the core's is run again.
	 */
	for (sweep = 0; sweep < FI_SWEEPS && !in_core; sweep++) {
		for (n = 1; n <= 200; n++) {
			ASSERT_EQ(0, ut_fail_nth_set(nth, n));
			ret = fd_write(en, "1");
			left = ut_fail_nth_get(nth);
			ASSERT_EQ(0, ut_fail_nth_set(nth, 0));
			snprintf(buf, sizeof(buf), "n=%d: enable %s", n,
				 ret ? strerror(-ret) : "succeeded");
			if (ret) {
				failed++;
				EXPECT_EQ(0, ut_event_enabled(self->grp, "ust_corefi_e"));
			}
			for (i = 0; i < ntgt; i++) {
				c = &self->child[t[i]];
				if (!ret) {
					EXPECT_EQ(1, cmd_num(c, "sem")) {
						TH_LOG("%s, process %d", buf, i);
					}
					EXPECT_EQ(3, cmd_ok(c, "mark 3"));
					hits[i] += 3;
					ohits[i] += other ? 3 : 0;
				}
				EXPECT_EQ(hits[i], ut_trace_count("ust_corefi_e", c->pid)) {
					TH_LOG("%s, process %d", buf, i);
				}
			}
			if (!ret)
				ASSERT_EQ(0, fd_write(en, "0"));
			for (i = 0; i < ntgt; i++) {
				c = &self->child[t[i]];
				EXPECT_EQ(sem, cmd_num(c, "sem")) {
					TH_LOG("%s, process %d", buf, i);
				}
				if (!other) {
					ASSERT_EQ(0, ut_proc_read(c->pid, va[i], mem,
								  sizeof(mem)));
					EXPECT_EQ(0, memcmp(file, mem, sizeof(mem))) {
						TH_LOG("%s, process %d: text differs from the file",
						       buf, i);
					}
					EXPECT_EQ(0, ut_smaps_anon_kb(c->pid, va[i])) {
						TH_LOG("%s, process %d: anonymous copy left",
						       buf, i);
					}
				}
				EXPECT_EQ(other ? 2 : 0, cmd_ok(c, "mark 2")) {
					TH_LOG("%s, process %d", buf, i);
				}
				ohits[i] += other ? 2 : 0;
				EXPECT_EQ(tgt_sum(2), cmd_ok(c, "call 2")) {
					TH_LOG("%s, process %d: target gone", buf, i);
				}
				EXPECT_EQ(hits[i], ut_trace_count("ust_corefi_e", c->pid));
				if (other)
					EXPECT_EQ(ohits[i],
						  ut_trace_count("ust_corefi_o", c->pid)) {
						TH_LOG("%s, process %d: the other event",
						       buf, i);
					}
			}
			if (left)	/* nothing was failed: all calls were seen */
				break;
		}
		TH_LOG("%d enables failed of %d runs", failed, n);
		EXPECT_LE(n, 200);
		in_core += fi_core_failures(self->kmsg, &logged);
		all += logged;
	}
	EXPECT_LT(0, failed);
	TH_LOG("%d of %d injected failures struck in the core's registration, %d sweep%s",
	       in_core, all, sweep, sweep > 1 ? "s" : "");
	EXPECT_LT(0, in_core);
	close(en);
	close(nth);
}

/* [#2] enable_fi_run() on one process, the probe's first consumer. */
TEST_F_TIMEOUT(core, enable_under_fault_injection, 600)
{
	if (START("ust_corefi"))
		return;
	enable_fi_run(_metadata, self, 1, false);
}

/* [#2] The same on 3 processes: a walk failing part-way over their mms. */
TEST_F_TIMEOUT(core, enable_under_fault_injection_3_processes, 600)
{
	if (START("ust_corefi"))
		return;
	enable_fi_run(_metadata, self, MAX_CHILDREN, false);
}

/* [#2] The same, the enable a later consumer beside an enabled event. */
TEST_F_TIMEOUT(core, enable_under_fault_injection_beside_enabled, 600)
{
	if (START("ust_corefi"))
		return;
	enable_fi_run(_metadata, self, MAX_CHILDREN, true);
}

/* Number of the disable test's targets: more than a walk keeps on its stack. */
#define FD_TARGETS	3

/* What stock 6.1 got wrong in the disable test (it is not asserted there). */
static int fd_stock_wrong;

/* Expect @ok; on stock 6.1 count it instead. */
#define FD_EXPECT(ok, fmt, ...) do {					\
	bool __ok = (ok);						\
	if (ut_impl_is_stock())						\
		fd_stock_wrong += !__ok;				\
	else								\
		EXPECT_TRUE(__ok) {					\
			TH_LOG(fmt, ##__VA_ARGS__);			\
		}							\
} while (0)

/*
 * The disable test's targets: each has the counter @on, the file's text
 * if !@on, and counts @on ? @n : 0 more hits for "mark @n" (*@hits, per
 * target). @what says when, for the log.
 */
static void fd_check(struct __test_metadata *_metadata,
		     struct _test_data_core *self, const uint8_t *file,
		     const uint64_t *va, long *hits, int on, int n,
		     const char *what)
{
	char cmd[16];
	uint8_t mem[16];
	long got;
	int i;

	snprintf(cmd, sizeof(cmd), "mark %d", n);
	for (i = 0; i < FD_TARGETS; i++) {
		struct ut_child *c = &self->child[i];

		got = cmd_num(c, "sem");
		FD_EXPECT(got == on, "%s: target %d: counter %ld", what, i, got);
		ASSERT_EQ(0, ut_proc_read(c->pid, va[i], mem, sizeof(mem)));
		if (!on) {
			FD_EXPECT(!memcmp(file, mem, sizeof(mem)),
				  "%s: target %d: text differs from the file",
				  what, i);
			FD_EXPECT(!ut_smaps_anon_kb(c->pid, va[i]),
				  "%s: target %d: anonymous copy left", what, i);
		}
		got = cmd_ok(c, cmd);
		FD_EXPECT(got == (on ? n : 0), "%s: target %d: %s gave %ld",
			  what, i, cmd, got);
		hits[i] += on ? n : 0;
		got = ut_trace_count("ust_corefd_e", c->pid);
		FD_EXPECT(got == hits[i], "%s: target %d: %ld hits, not %ld",
			  what, i, got, hits[i]);
		hits[i] = got;
	}
}

/*
 * [#3] Disabling a probe with a reference counter in 3 processes, with
 * the n-th allocation of the disabling task failed, for n = 1, 2, ...
 * until none is left to fail: the disable either fails leaving the probe
 * whole (enabled, counters 1, every hit counted) or takes it out whole
 * (counters 0, the file's text, no anonymous copy, no hit); either way
 * enabling it again works and a clean disable leaves everything as the
 * file has it. Stock 6.1 leaves breakpoints and anonymous copies behind
 * (expected there).
 */
TEST_F_TIMEOUT(core, disable_under_fault_injection, 600)
{
	const char *tgt = ut_helper("uprobe_target");
	char path[PATH_MAX], buf[64];
	int i, nth, en, n, failed = 0, ret, on;
	long left, hits[FD_TARGETS] = { 0 };
	uint64_t va[FD_TARGETS];
	struct ut_sdt_note note;
	uint8_t file[16];

	if (START("ust_corefd"))
		return;
	nth = fi_start(_metadata, self);
	if (nth < 0)
		return;

	ASSERT_EQ(0, ut_sdt_find(tgt, "uttgt", "mark", &note));
	ASSERT_NE(0ULL, note.sem_off);
	ASSERT_EQ(0, file_bytes(tgt, note.pc_off, file, sizeof(file)));
	for (i = 0; i < FD_TARGETS; i++) {
		ASSERT_EQ(i, START_TARGET());
		va[i] = ut_fileoff_to_vaddr(self->child[i].pid, tgt,
					    note.pc_off);
		ASSERT_NE(0ULL, va[i]);
	}
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_corefd_e", tgt, note.pc_off,
				  note.sem_off));
	snprintf(path, sizeof(path), UT_TRACEFS "/events/%s/ust_corefd_e/enable",
		 self->grp);
	en = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, en);

	for (n = 1; n <= 200; n++) {
		ASSERT_EQ(0, fd_write(en, "1"));
		fd_check(_metadata, self, file, va, hits, 1, 3,
			 "enabled");
		ASSERT_EQ(0, ut_fail_nth_set(nth, n));
		ret = fd_write(en, "0");
		left = ut_fail_nth_get(nth);
		ASSERT_EQ(0, ut_fail_nth_set(nth, 0));
		failed += !!ret;
		snprintf(buf, sizeof(buf), "n=%d: disable %s", n,
			 ret ? strerror(-ret) : "succeeded");
		/* whole either way: enabled, or gone */
		on = ut_event_enabled(self->grp, "ust_corefd_e");
		FD_EXPECT(on == 0 || (ret && on == 1), "%s: enabled reads %d",
			  buf, on);
		fd_check(_metadata, self, file, va, hits, on, 2, buf);
		/* and it can be enabled again, and disabled cleanly */
		ret = fd_write(en, "1");
		FD_EXPECT(!ret, "%s: enabling again: %s", buf, strerror(-ret));
		fd_check(_metadata, self, file, va, hits, 1, 3, buf);
		ASSERT_EQ(0, fd_write(en, "0"));
		fd_check(_metadata, self, file, va, hits, 0, 1, buf);
		if (left)	/* nothing was failed */
			break;
	}
	TH_LOG("%d disables failed of %d runs", failed, n);
	EXPECT_LE(n, 200);
	EXPECT_LT(1, n);	/* some allocation of the disable was failed */
	close(en);
	close(nth);
	if (ut_impl_is_stock()) {
		/* a failed allocation leaves breakpoints behind (FM #3) */
		EXPECT_LT(0, fd_stock_wrong);
		UT_STOCK_FAILS("%d checks failed after injected failures",
			       fd_stock_wrong);
	}
}

/* ------------------------------------------------------------------ */
/* 7. stock 6.1 bugs found so far                                      */

/*
 * Check a reference counter that was @enabled while the probe was enabled
 * and is @after once disabled: @want (the number of patched mms) and 0.
 * Stock 6.1 counts some VMA operations more than once: there it must be
 * above @want and stay above 0 (the exact values depend on the layout).
 */
static void expect_sem_or_stock(struct __test_metadata *_metadata, int want,
				int enabled, int after)
{
	if (ut_impl_is_stock()) {
		EXPECT_LT(want, enabled);
		EXPECT_LT(0, after);
		UT_STOCK_FAILS("the counter is %d while enabled, %d after, not %d and 0",
			       enabled, after, want);
	} else {
		EXPECT_EQ(want, enabled);
		EXPECT_EQ(0, after);
	}
}

/*
 * [#4] The probed text mapped twice more in one process (before and after
 * enabling): its reference counter is 1 while enabled (one mm) and 0 after
 * disabling.  Stock 6.1 counts every mapping (5, then 2 left).
 */
TEST_F(core, double_mmap_semaphore)
{
	uint64_t off = sym_off("fm_pure"), pgoff = off & ~(PAGE - 1);
	int sem_enabled;
	char *a, *b;

	if (START("ust_coredbl"))
		return;
	a = map_exe(self, pgoff, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coredbl_e", ut_self_exe(),
				 off, ref_off(0)));
	b = map_exe(self, pgoff, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, b);
	EXPECT_EQ(16, pure_in(a, pgoff)(5));
	EXPECT_EQ(19, pure_in(b, pgoff)(6));
	EXPECT_EQ(22, fm_pure(7));
	EXPECT_EQ(3, HITS("ust_coredbl_e"));
	sem_enabled = SEM(0);
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coredbl_e", false));
	expect_sem_or_stock(_metadata, 1, sem_enabled, SEM(0));
}

/*
 * [#5] A process maps a copy's probed text but never the page of the
 * probe's reference counter, is hit and exits; then a process mapping both
 * pages finds the counter at 1 while the probe is enabled and at 0 after,
 * and its call is counted.
 */
TEST_F(core, counter_page_never_mapped)
{
	uint64_t off = sym_off("fm_pure"), pgoff = off & ~(PAGE - 1);
	uint64_t ref = ref_off(3), rpg = ref & ~(PAGE - 1);
	int go[2], done[2], status;
	char *text, *data, c;
	pid_t pid;

	if (START("ust_corenoref"))
		return;
	ASSERT_EQ(0, tmp_copy(self, "ust_corenoref"));
	ASSERT_NE(pgoff, rpg);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		text = ut_map_file(self->tmp, pgoff, PAGE, PROT_READ | PROT_EXEC,
				   MAP_PRIVATE, false);
		if (text == MAP_FAILED)
			_exit(2);
		if (write(done[1], "m", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		if (pure_in(text, pgoff)(5) != 16 || pure_in(text, pgoff)(6) != 19)
			_exit(4);
		_exit(0);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_corenoref_e", self->tmp, off,
				 ref));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("child: status 0x%x", status);
	}
	EXPECT_EQ(2, ut_trace_count("ust_corenoref_e", pid));

	data = keep_map(self, ut_map_file(self->tmp, rpg, PAGE,
					  PROT_READ | PROT_WRITE, MAP_PRIVATE,
					  false), PAGE);
	ASSERT_NE(MAP_FAILED, data);
	text = keep_map(self, ut_map_file(self->tmp, pgoff, PAGE,
					  PROT_READ | PROT_EXEC, MAP_PRIVATE,
					  false), PAGE);
	ASSERT_NE(MAP_FAILED, text);
	EXPECT_EQ(1, UT_READ_ONCE(*(uint16_t *)(data + ref - rpg)));
	EXPECT_EQ(22, pure_in(text, pgoff)(7));
	EXPECT_EQ(1, HITS("ust_corenoref_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_corenoref_e", false));
	EXPECT_EQ(0, UT_READ_ONCE(*(uint16_t *)(data + ref - rpg)));
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/*
 * [#4] A probed 3-page copy split by mprotect (a neighbour page, the
 * probed page, then merged back): the reference counter is 1 while
 * enabled and 0 after disabling.  Stock 6.1 counts the splits (3, then 1
 * left).
 */
TEST_F(core, mprotect_split_semaphore)
{
	uint64_t off = sym_off("fm_pure"), pgoff = (off & ~(PAGE - 1)) - PAGE;
	int sem_enabled;
	char *a;

	if (START("ust_coresplit"))
		return;
	ASSERT_LE(PAGE, off);
	a = map_exe(self, pgoff, 3 * PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coresplit_e", ut_self_exe(),
				 off, ref_off(0)));
	ASSERT_EQ(0, mprotect(a, PAGE, PROT_READ));
	ASSERT_EQ(0, mprotect(a + PAGE, PAGE, PROT_READ));
	ASSERT_EQ(0, mprotect(a, 3 * PAGE, PROT_READ | PROT_EXEC));
	EXPECT_EQ(7, pure_in(a, pgoff)(2));
	EXPECT_EQ(1, HITS("ust_coresplit_e"));
	sem_enabled = SEM(0);
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coresplit_e", false));
	expect_sem_or_stock(_metadata, 1, sem_enabled, SEM(0));
}

/*
 * [#4] The probed page of a copy moved away with mremap: the reference
 * counter is 1 while enabled and 0 after disabling.  Stock 6.1 counts the
 * move (4, then 2 left).
 */
TEST_F(core, mremap_away_semaphore)
{
	uint64_t off = sym_off("fm_pure"), pgoff = (off & ~(PAGE - 1)) - PAGE;
	char *a, *hole, *moved;
	int sem_enabled;

	if (START("ust_coremove"))
		return;
	ASSERT_LE(PAGE, off);
	a = map_exe(self, pgoff, 3 * PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, a);
	hole = keep_map(self, mmap(NULL, PAGE, PROT_NONE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), PAGE);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coremove_e", ut_self_exe(),
				 off, ref_off(0)));
	moved = mremap(a + PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
		       hole);
	ASSERT_EQ(hole, moved);
	EXPECT_EQ(10, pure_in(moved - PAGE, pgoff)(3));
	EXPECT_EQ(1, HITS("ust_coremove_e"));
	sem_enabled = SEM(0);
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coremove_e", false));
	expect_sem_or_stock(_metadata, 1, sem_enabled, SEM(0));
}

/*
 * [#9] A probe with a reference counter enabled while a MAP_SHARED
 * executable mapping of the file exists: the counter is 1 while enabled
 * and 0 after.  Stock 6.1 counts the shared mapping too (2, then 1 left).
 */
TEST_F(core, shared_mapping_semaphore)
{
	uint64_t off = sym_off("fm_pure"), pgoff = off & ~(PAGE - 1);
	int sem_enabled;
	char *a;

	if (START("ust_coreshsem"))
		return;
	a = map_exe(self, pgoff, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coreshsem_e", ut_self_exe(),
				 off, ref_off(0)));
	EXPECT_EQ(22, fm_pure(7));
	EXPECT_EQ(16, pure_in(a, pgoff)(5));
	EXPECT_EQ(1, HITS("ust_coreshsem_e"));
	sem_enabled = SEM(0);
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_coreshsem_e", false));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(2, sem_enabled);
		EXPECT_EQ(1, SEM(0));
		UT_STOCK_FAILS("the counter is %d while enabled, %d after, not 1 and 0",
			       sem_enabled, SEM(0));
	} else {
		EXPECT_EQ(1, sem_enabled);
		EXPECT_EQ(0, SEM(0));
	}
}

#ifdef __x86_64__
/*
 * [#20] A probe on a syscall instruction is refused when enabled
 * (ENOTSUPP) and the text is left alone.  Stock 6.1 accepts it, and the
 * probed syscall then kills the process with SIGSEGV.
 */
TEST_F(core, syscall_insn_refused)
{
	int ret, status;
	pid_t pid;

	if (START("ust_coresysc"))
		return;
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_coresysc_e", ut_self_exe(),
				  sym_off("core_syscall_insn"), 0));
	ret = ut_event_enable(self->grp, "ust_coresysc_e", true);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(core_getpid() == getpid() ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(0, ret);
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) {
			TH_LOG("status 0x%x", status);
		}
		UT_STOCK_FAILS("enabling returned %d, the syscall killed the child (0x%x)",
			       ret, status);
	} else {
		EXPECT_EQ(-ENOTSUPP, ret);
		EXPECT_EQ(0, ut_event_enabled(self->grp, "ust_coresysc_e"));
		EXPECT_NE(0xcc, *(uint8_t *)core_syscall_insn);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			TH_LOG("status 0x%x", status);
		}
		if (ret)	/* refused: safe to run here too */
			EXPECT_EQ(getpid(), core_getpid());
		EXPECT_EQ(0, ut_trace_count("ust_coresysc_e", 0));
	}
}
#else
/*
 * [#20] is x86-64 only: it is about x86's syscall instruction, which stock
 * x86 uprobes accept and run out of line; arm64 refuses a probe on svc in
 * its instruction decoder, stock 6.1 too.
 */
TEST_F(core, syscall_insn_refused)
{
	SKIP(return, "x86-64 only: probes syscall (arm64 refuses svc, stock 6.1 too)");
}
#endif

/*
 * Child of mremap_away_and_back: map a 3-page copy of the text, move the
 * probed page away and back, run it, then disable @grp/@ev and exit.
 * Exits 0 when every result is right.
 */
static void away_and_back_child(const char *grp, const char *ev)
{
	uint64_t off = sym_off("fm_pure"), pgoff = (off & ~(PAGE - 1)) - PAGE;
	char *a, *hole, *p;

	a = ut_map_file(ut_self_exe(), pgoff, 3 * PAGE, PROT_READ | PROT_EXEC,
			MAP_PRIVATE, false);
	hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || hole == MAP_FAILED)
		_exit(10);
	if (pure_in(a, pgoff)(1) != 4)
		_exit(11);
	p = mremap(a + PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	if (p != hole)
		_exit(12);
	if (pure_in(p - PAGE, pgoff)(2) != 7)
		_exit(13);
	p = mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, a + PAGE);
	if (p != a + PAGE)
		_exit(14);
	if (pure_in(a, pgoff)(3) != 10)
		_exit(15);
	if (ut_event_enable(grp, ev, false))
		_exit(16);
	if (memcmp(a + off - pgoff, (void *)fm_pure, 16))
		_exit(17);
	if (pure_in(a, pgoff)(4) != 13)
		_exit(18);
	_exit(0);
}

/*
 * Run on every CPU in turn: a CPU that still borrows the mm of a process
 * that exited (lazy TLB) then switches away from it and drops it, so the
 * kernel's checks of that mm's counters have run when this returns.
 */
static int settle_exited_mms(void)
{
	cpu_set_t all, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(all), &all))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return -errno;
		sleep_ms(10);
	}
	return sched_setaffinity(0, sizeof(all), &all) ? -errno : 0;
}

/*
 * [#11] The probed page of a copy moved away with mremap and back, the
 * probe disabled, then the process exits: results stay right and the
 * kernel logs no "Bad rss-counter state" (no anonymous page orphaned).
 * Skipped on stock 6.1, which logs that BUG, failing the whole run.
 */
TEST_F(core, mremap_away_and_back)
{
	char log[8192] = "";
	int status;
	pid_t pid;

	if (ut_impl_is_stock())
		SKIP(return, "stock 6.1 logs \"BUG: Bad rss-counter state\" (#11): fails the run");
	if (START("ust_coreback"))
		return;
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_coreback_e", ut_self_exe(),
				 sym_off("fm_pure"), ref_off(3)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		away_and_back_child(self->grp, "ust_coreback_e");
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("status 0x%x", status);
	}
	EXPECT_EQ(3, ut_trace_count("ust_coreback_e", pid));
	EXPECT_EQ(0, SEM(3));
	ASSERT_EQ(0, settle_exited_mms());
	EXPECT_EQ(0, ut_kmsg_count(self->kmsg, "Bad rss-counter", NULL, log,
				   sizeof(log))) {
		TH_LOG("kernel log: %s", log);
	}
}

#ifdef __x86_64__
/*
 * [#18] A probed pushf pushes the program's flags, TF clear, the same as
 * without the probe.  Stock 6.1 pushes its own TF (0x346, not 0x246).
 */
TEST_F(core, pushf_flags)
{
	unsigned long base, probed;

	if (START("ust_corepushf"))
		return;
	base = core_pushf();
	EXPECT_EQ(0x246UL, base);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_corepushf_e", ut_self_exe(),
				 sym_off("core_pushf_insn"), 0));
	probed = core_pushf();
	EXPECT_EQ(1, HITS("ust_corepushf_e"));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(base | X86_TF, probed);
		UT_STOCK_FAILS("pushf pushed %#lx, not %#lx", probed, base);
	} else {
		EXPECT_EQ(base, probed);
	}
}
#else
/*
 * This [#18] case is x86-64 only: pushf and the trap flag (TF) a step out
 * of line sets in the pushed flags are x86's; arm64 has no instruction
 * that stores its single-step state to memory.
 */
TEST_F(core, pushf_flags)
{
	SKIP(return, "x86-64 only: pushf and the trap flag (TF) of a step out of line");
}
#endif

/* ------------------------------------------------------------------ */
/* the program's own breakpoint instruction                            */

/* what a child saw of its own breakpoint's SIGTRAP */
struct own_bp_report {
	int traps;
	int code;
	int64_t addr;	/* si_addr - core_own_bp_insn */
	int64_t pc;	/* the handler's pc - core_own_bp_insn */
};

static struct own_bp_report own_bp_seen;

static void own_bp_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t bp = (uintptr_t)core_own_bp_insn;

	own_bp_seen.traps++;
	own_bp_seen.code = si->si_code;
	own_bp_seen.addr = (int64_t)((uintptr_t)si->si_addr - bp);
	own_bp_seen.pc = (int64_t)((uintptr_t)UT_UC_PC(uc) - bp);
	ut_uc_skip_bp(uc, bp);
}

/*
 * Fork a child that calls core_work() (@probed: the probe is enabled, so
 * the child's mm has a site of ours) and then runs core_own_bp(); its
 * report of the SIGTRAP in *@r. 0 or -1.
 */
static int own_bp_child(bool probed, struct own_bp_report *r)
{
	int fd[2], status;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct sigaction sa = {
			.sa_sigaction = own_bp_handler,
			.sa_flags = SA_SIGINFO,
		};

		close(fd[0]);
		if (sigaction(SIGTRAP, &sa, NULL))
			_exit(2);
		if (probed && core_work(1) != 4)
			_exit(3);
		core_own_bp();
		if (write(fd[1], &own_bp_seen, sizeof(own_bp_seen)) !=
		    sizeof(own_bp_seen))
			_exit(4);
		_exit(0);
	}
	close(fd[1]);
	memset(r, 0, sizeof(*r));
	if (read(fd[0], r, sizeof(*r)) != sizeof(*r))
		r->traps = -1;
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return r->traps == 1 ? 0 : -1;
}

/*
 * A program's own breakpoint instruction (uprobes' opcode where no probe
 * is) gets the same SIGTRAP in a process with a probe as in one without:
 * si_code, si_addr and the pc its handler sees. On arm64, a kernel that
 * leaves that SIGTRAP to the uprobes core sends SI_KERNEL without an
 * address instead of TRAP_BRKPT: a stock 6.1 that differs is logged as
 * its failure.
 */
TEST_F(core, own_breakpoint_signal)
{
	struct own_bp_report plain, probed;

	if (START("ust_ownbp"))
		return;
	ASSERT_EQ(0, own_bp_child(false, &plain));
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_ownbp_e", ut_self_exe(),
				 sym_off("core_work"), 0));
	ASSERT_EQ(0, own_bp_child(true, &probed));
	EXPECT_EQ(1, ut_profile_hits("ust_ownbp_e"));
	if (ut_impl_is_stock() && (plain.code != probed.code ||
				   plain.addr != probed.addr ||
				   plain.pc != probed.pc)) {
		UT_STOCK_FAILS("probed: si_code %d, si_addr %+lld, pc %+lld; not: %d, %+lld, %+lld",
			       probed.code, (long long)probed.addr,
			       (long long)probed.pc, plain.code,
			       (long long)plain.addr, (long long)plain.pc);
		return;
	}
	EXPECT_EQ(plain.code, probed.code);
	EXPECT_EQ(plain.addr, probed.addr);
	EXPECT_EQ(plain.pc, probed.pc);
}

TEST_HARNESS_MAIN
