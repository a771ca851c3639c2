// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_failmodes: regression tests for failure modes that uprobes
 * implementations have shipped (the numbers are those of the project's
 * FAILURE-MODES checklist): register/unregister racing running threads and
 * fork, probed text that is mapped twice, split or moved, reference counter
 * validation, the file's bytes, shared executable mappings, and faults and
 * signals around a probed instruction.  On arm64 every test runs but the
 * fault fix-up of an x86 load through x86 registers, which skips.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_targets.h"
#include "uprobe_util.h"

#define PAGE		4096UL

/* marker fm:work, guarded by its semaphore */
unsigned short fm_work_semaphore __section(".probes") __used;
/* reference counters for probes on fm_pure, which has no marker */
unsigned short fm_ref[4] __section(".probes") __used;

#define SEM(s)	UT_READ_ONCE(s)

noipa long fm_work(long x)
{
	if (SEM(fm_work_semaphore))
		DTRACE_PROBE1(fm, work, x);
	return x * 5 + 2;
}

/* fork()s; returns x + 2 in the parent, x + 1 in the child */
noipa long fm_forker(long x, pid_t *pidp)
{
	pid_t pid = fork();

	*pidp = pid;
	if (pid < 0)
		return -1;
	return pid ? x + 2 : x + 1;
}

/* signal counters and the stop flag of helper threads */
static int fm_sigtrap, fm_sigusr1, fm_stop;

static void count_sigtrap(int sig)
{
	__atomic_add_fetch(&fm_sigtrap, 1, __ATOMIC_RELAXED);
}

static void count_sigusr1(int sig)
{
	__atomic_add_fetch(&fm_sigusr1, 1, __ATOMIC_RELAXED);
}

/* a mapping that the fixture teardown unmaps */
struct fm_map {
	char *p;
	size_t len;
};

FIXTURE(fm) {
	char grp[64];
	struct fm_map map[2];
	int perf_fd;
};

FIXTURE_SETUP(fm)
{
	self->perf_fd = -1;
}

FIXTURE_TEARDOWN(fm)
{
	int i;

	if (self->perf_fd >= 0)
		close(self->perf_fd);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
	for (i = 0; i < 2; i++)
		if (self->map[i].p)
			munmap(self->map[i].p, self->map[i].len);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)

/* File offset of symbol @sym of this binary (-1 if absent). */
static int64_t sym_off(const char *sym)
{
	return ut_elf_sym_offset(ut_self_exe(), sym);
}

/* File offset of fm_ref[@i]. */
static uint64_t ref_off(int i)
{
	return sym_off("fm_ref") + i * sizeof(fm_ref[0]);
}

/*
 * Define GRP/EV at file offset @off of this binary, with reference counter
 * file offset @ref (0: none); 0 or -errno.
 */
static int define_at(const char *grp, const char *ev, uint64_t off,
		     uint64_t ref)
{
	return ut_define_at(grp, ev, ut_self_exe(), off, ref);
}

/* Define and enable GRP/EV as define_at() does; 0 or -errno. */
static int probe_at(const char *grp, const char *ev, uint64_t off,
		    uint64_t ref)
{
	return ut_probe_at(grp, ev, ut_self_exe(), off, ref);
}

/*
 * Map @len bytes of this binary from page-aligned file offset @pgoff, and
 * note the mapping in @m; MAP_FAILED on error.
 */
static char *map_exe(struct fm_map *m, uint64_t pgoff, size_t len, int prot,
		     int flags)
{
	char *p;
	int fd;

	fd = open(ut_self_exe(), O_RDONLY);
	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, len, prot, flags, fd, pgoff);
	close(fd);
	if (p != MAP_FAILED) {
		m->p = p;
		m->len = len;
	}
	return p;
}

/* fm_pure as mapped at @base, a mapping of the file from @pgoff. */
static long (*pure_in(char *base, uint64_t pgoff))(long)
{
	return (long (*)(long))(base + sym_off("fm_pure") - pgoff);
}

#define HITS(ev)	ut_trace_count(ev, getpid())

struct trigger {
	pthread_t th;
	pthread_barrier_t *bar;
	long calls;
	long bad;
};

/* Call fm_work until told to stop, and at least 1000 times. */
static void *trigger_fn(void *arg)
{
	struct trigger *t = arg;
	long i;

	pthread_barrier_wait(t->bar);
	for (i = 0; !UT_READ_ONCE(fm_stop) || i < 1000; i++)
		if (fm_work(i) != i * 5 + 2)
			t->bad++;
	t->calls = i;
	return NULL;
}

/*
 * #1: 40 enable/disable cycles of a semaphore-guarded marker while 4
 * threads run it: no SIGTRAP, every result right, the semaphore ends at 0.
 * (Each cycle waits for RCU grace periods, about 80 ms under TCG while the
 * threads trap continuously; 150 cycles took about 25 s on the fast kernel.)
 */
TEST_F_TIMEOUT(fm, attach_detach_threads, 180)
{
	struct trigger t[4];
	pthread_barrier_t bar;
	struct ut_sdt_note n;
	int i;

	if (START("ust_fmloop"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_NE(SIG_ERR, signal(SIGTRAP, count_sigtrap));
	ASSERT_EQ(0, ut_sdt_find(ut_self_exe(), "fm", "work", &n));
	ASSERT_NE(0ULL, n.sem_off);
	ASSERT_EQ(0, define_at(self->grp, "ust_fmloop_e", n.pc_off,
			       n.sem_off));
	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, 5));
	for (i = 0; i < 4; i++) {
		t[i].bar = &bar;
		t[i].bad = 0;
		ASSERT_EQ(0, pthread_create(&t[i].th, NULL, trigger_fn, &t[i]));
	}
	pthread_barrier_wait(&bar);
	for (i = 0; i < 40; i++) {
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmloop_e", true));
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmloop_e", false));
	}
	UT_WRITE_ONCE(fm_stop, 1);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(t[i].th, NULL));
		EXPECT_EQ(0, t[i].bad);
		EXPECT_LE(1000, t[i].calls);
	}
	EXPECT_EQ(0, UT_READ_ONCE(fm_sigtrap));
	EXPECT_EQ(0, SEM(fm_work_semaphore));
	EXPECT_EQ(12, fm_work(2));
}

/*
 * #4: the probed page mapped twice more, before and after enabling: every
 * mapping gets the breakpoint, each call is counted once, and disabling
 * restores all of them.
 */
TEST_F(fm, double_mmap)
{
	uint64_t off = sym_off("fm_pure"), pgoff = off & ~(PAGE - 1);
	char *a, *b;

	if (START("ust_fmdbl"))
		return;
	a = map_exe(&self->map[0], pgoff, PAGE, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmdbl_e", off, 0));
	b = map_exe(&self->map[1], pgoff, PAGE, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, b);
	EXPECT_TRUE(ut_is_bp((void *)fm_pure));
	EXPECT_TRUE(ut_is_bp(a + off - pgoff));
	EXPECT_TRUE(ut_is_bp(b + off - pgoff));
	EXPECT_EQ(16, pure_in(a, pgoff)(5));
	EXPECT_EQ(19, pure_in(b, pgoff)(6));
	EXPECT_EQ(22, fm_pure(7));
	EXPECT_EQ(3, HITS("ust_fmdbl_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmdbl_e", false));
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
	EXPECT_EQ(0, memcmp(a + off - pgoff, (char *)fm_pure, 16));
	EXPECT_EQ(0, memcmp(b + off - pgoff, (char *)fm_pure, 16));
	EXPECT_EQ(16, pure_in(a, pgoff)(5));
	EXPECT_EQ(19, pure_in(b, pgoff)(6));
	EXPECT_EQ(3, HITS("ust_fmdbl_e"));
}

/*
 * #4: splitting a probed 3-page copy with mprotect (a neighbour page, the
 * probed page itself, then merging back) keeps the breakpoint, calls are
 * counted exactly, and disabling restores the text.
 */
TEST_F(fm, mprotect_split)
{
	uint64_t off = sym_off("fm_pure"), pgoff = (off & ~(PAGE - 1)) - PAGE;
	char *a;

	if (START("ust_fmsplit"))
		return;
	ASSERT_LE(PAGE, off);
	a = map_exe(&self->map[0], pgoff, 3 * PAGE, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmsplit_e", off, 0));
	ASSERT_EQ(0, mprotect(a, PAGE, PROT_READ));
	EXPECT_TRUE(ut_is_bp(a + off - pgoff));
	EXPECT_EQ(4, pure_in(a, pgoff)(1));
	ASSERT_EQ(0, mprotect(a + PAGE, PAGE, PROT_READ));
	EXPECT_TRUE(ut_is_bp(a + off - pgoff));
	ASSERT_EQ(0, mprotect(a, 3 * PAGE, PROT_READ | PROT_EXEC));
	EXPECT_TRUE(ut_is_bp(a + off - pgoff));
	EXPECT_EQ(7, pure_in(a, pgoff)(2));
	EXPECT_EQ(2, HITS("ust_fmsplit_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmsplit_e", false));
	EXPECT_EQ(0, memcmp(a + off - pgoff, (char *)fm_pure, 16));
	EXPECT_EQ(10, pure_in(a, pgoff)(3));
	EXPECT_EQ(2, HITS("ust_fmsplit_e"));
}

/*
 * #4: the probed page of a copy moved elsewhere with mremap keeps its
 * breakpoint: calls there are counted exactly, and disabling restores it.
 */
TEST_F(fm, mremap_away)
{
	uint64_t off = sym_off("fm_pure"), pgoff = (off & ~(PAGE - 1)) - PAGE;
	char *a, *hole, *moved;

	if (START("ust_fmmove"))
		return;
	ASSERT_LE(PAGE, off);
	a = map_exe(&self->map[0], pgoff, 3 * PAGE, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, a);
	hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	self->map[1].p = hole;
	self->map[1].len = PAGE;
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmmove_e", off, 0));
	EXPECT_EQ(7, pure_in(a, pgoff)(2));
	moved = mremap(a + PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
		       hole);
	ASSERT_EQ(hole, moved);
	EXPECT_TRUE(ut_is_bp(moved + off - pgoff - PAGE));
	EXPECT_EQ(10, pure_in(moved - PAGE, pgoff)(3));
	EXPECT_EQ(2, HITS("ust_fmmove_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmmove_e", false));
	EXPECT_EQ(0, memcmp(moved + off - pgoff - PAGE, (char *)fm_pure, 16));
	EXPECT_EQ(13, pure_in(moved - PAGE, pgoff)(4));
	EXPECT_EQ(2, HITS("ust_fmmove_e"));
}

/*
 * #6: an odd reference counter offset is refused with EINVAL when the
 * event is defined (stock 6.1: when it is enabled); nothing stays
 * enabled, counted or patched.
 */
TEST_F(fm, odd_ref_ctr)
{
	uint64_t off = sym_off("fm_pure");
	int ret;

	if (START("ust_fmodd"))
		return;
	ret = define_at(self->grp, "ust_fmodd_e", off, ref_off(0) + 1);
	if (ut_impl_is_stock()) {
		ASSERT_EQ(0, ret);
		EXPECT_EQ(-EINVAL, ut_event_enable(self->grp, "ust_fmodd_e",
						   true));
		EXPECT_EQ(0, ut_event_enabled(self->grp, "ust_fmodd_e"));
	} else {
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_FALSE(ut_uprobe_events_has(self->grp, "ust_fmodd_e"));
	}
	EXPECT_EQ(0, SEM(fm_ref[0]));
	EXPECT_EQ(0, SEM(fm_ref[1]));
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
	EXPECT_EQ(4, fm_pure(1));
	EXPECT_EQ(0, HITS("ust_fmodd_e"));
}

/*
 * #6: an odd reference counter offset given to perf_event_open() is
 * refused with EINVAL; nothing is counted or patched.
 */
TEST_F(fm, odd_ref_ctr_perf)
{
	int fd;

	if (ut_no_tracefs(_metadata))
		return;
	fd = ut_uprobe_perf_open(ut_self_exe(), sym_off("fm_pure"),
				 ref_off(0) + 1, 0);
	if (fd == -ENOENT)
		SKIP(return, "CONFIG_UPROBE_EVENTS not enabled (no uprobe PMU)");
	if (fd >= 0)
		self->perf_fd = fd;
	EXPECT_EQ(-EINVAL, fd);
	EXPECT_EQ(0, SEM(fm_ref[0]));
	EXPECT_EQ(0, SEM(fm_ref[1]));
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
	EXPECT_EQ(4, fm_pure(1));
}

/*
 * The first probe's counter after the mismatched registration failed
 * (@failed) and after the first probe went away (@after): 1 and 0.  Stock
 * 6.1 leaves the failed registration's +1 behind: 2 and 1.
 */
static void expect_mismatch_counter(struct __test_metadata *_metadata,
				    int failed, int after)
{
	if (ut_impl_is_stock()) {
		EXPECT_EQ(2, failed);
		EXPECT_EQ(1, after);
		UT_STOCK_FAILS("first counter %d after the refusal, %d at the end, not 1 and 0",
			       failed, after);
	} else {
		EXPECT_EQ(1, failed);
		EXPECT_EQ(0, after);
	}
}

/*
 * #7: while a tracefs probe with one reference counter is enabled, a perf
 * uprobe on the same inode:offset with another counter fails with EINVAL,
 * and the first probe still fires.  The first counter stays exactly 1,
 * the second 0, and both are 0 after disabling (stock 6.1 leaks a +1).
 */
TEST_F(fm, ref_ctr_mismatch_perf)
{
	uint64_t off = sym_off("fm_pure");
	int fd, r1_failed;

	if (START("ust_fmmis"))
		return;
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmmis_e", off, ref_off(0)));
	EXPECT_EQ(1, SEM(fm_ref[0]));
	fd = ut_uprobe_perf_open(ut_self_exe(), off, ref_off(2), 0);
	if (fd == -ENOENT)
		SKIP(return, "CONFIG_UPROBE_EVENTS not enabled (no uprobe PMU)");
	if (fd >= 0)
		self->perf_fd = fd;
	EXPECT_EQ(-EINVAL, fd);
	r1_failed = SEM(fm_ref[0]);
	EXPECT_EQ(0, SEM(fm_ref[2]));
	EXPECT_EQ(4, fm_pure(1));
	EXPECT_EQ(1, HITS("ust_fmmis_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmmis_e", false));
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
	EXPECT_EQ(0, SEM(fm_ref[2]));
	expect_mismatch_counter(_metadata, r1_failed, SEM(fm_ref[0]));
}

/*
 * #7: while a perf uprobe with one reference counter is open, a tracefs
 * probe on the same inode:offset with another counter fails to enable
 * with EINVAL and stays disabled; the perf probe still counts.  The first
 * counter stays exactly 1, the second 0, and both are 0 after the perf
 * probe is closed (stock 6.1 leaks a +1).
 */
TEST_F(fm, ref_ctr_mismatch_tracefs)
{
	uint64_t off = sym_off("fm_pure"), cnt = 0;
	int fd, r1_failed;

	if (START("ust_fmmis2"))
		return;
	fd = ut_uprobe_perf_open(ut_self_exe(), off, ref_off(0), 0);
	if (fd == -ENOENT)
		SKIP(return, "CONFIG_UPROBE_EVENTS not enabled (no uprobe PMU)");
	ASSERT_LE(0, fd);
	self->perf_fd = fd;
	EXPECT_EQ(1, SEM(fm_ref[0]));
	ASSERT_EQ(0, define_at(self->grp, "ust_fmmis2_e", off, ref_off(2)));
	EXPECT_EQ(-EINVAL, ut_event_enable(self->grp, "ust_fmmis2_e", true));
	EXPECT_EQ(0, ut_event_enabled(self->grp, "ust_fmmis2_e"));
	r1_failed = SEM(fm_ref[0]);
	EXPECT_EQ(0, SEM(fm_ref[2]));
	EXPECT_EQ(4, fm_pure(1));
	EXPECT_EQ(0, HITS("ust_fmmis2_e"));
	ASSERT_EQ((ssize_t)sizeof(cnt), read(fd, &cnt, sizeof(cnt)));
	EXPECT_EQ(1ULL, cnt);
	close(fd);
	self->perf_fd = -1;
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
	EXPECT_EQ(0, SEM(fm_ref[2]));
	expect_mismatch_counter(_metadata, r1_failed, SEM(fm_ref[0]));
}

/*
 * #7: while a perf uprobe with one reference counter is open, a second
 * perf uprobe on the same inode:offset with another counter fails with
 * EINVAL; the first counter stays exactly 1, the second 0, and both are 0
 * after the first is closed (stock 6.1 leaks a +1).
 */
TEST_F(fm, ref_ctr_mismatch_perf_perf)
{
	uint64_t off = sym_off("fm_pure"), cnt = 0;
	int fd, fd2, r1_failed;

	if (ut_no_tracefs(_metadata))
		return;
	fd = ut_uprobe_perf_open(ut_self_exe(), off, ref_off(1), 0);
	if (fd == -ENOENT)
		SKIP(return, "CONFIG_UPROBE_EVENTS not enabled (no uprobe PMU)");
	ASSERT_LE(0, fd);
	self->perf_fd = fd;
	EXPECT_EQ(1, SEM(fm_ref[1]));
	fd2 = ut_uprobe_perf_open(ut_self_exe(), off, ref_off(3), 0);
	if (fd2 >= 0)
		close(fd2);
	EXPECT_EQ(-EINVAL, fd2);
	r1_failed = SEM(fm_ref[1]);
	EXPECT_EQ(0, SEM(fm_ref[3]));
	EXPECT_EQ(4, fm_pure(1));
	ASSERT_EQ((ssize_t)sizeof(cnt), read(fd, &cnt, sizeof(cnt)));
	EXPECT_EQ(1ULL, cnt);
	close(fd);
	self->perf_fd = -1;
	EXPECT_EQ(0, SEM(fm_ref[3]));
	expect_mismatch_counter(_metadata, r1_failed, SEM(fm_ref[1]));
}

/*
 * #7: once a tracefs probe with one reference counter is disabled, a perf
 * uprobe on the same inode:offset with another counter is accepted and
 * counts: nothing uses the first counter any more, which stays 0; the
 * second is 1 while the perf probe is open and 0 after.
 */
TEST_F(fm, ref_ctr_after_disable_perf)
{
	uint64_t off = sym_off("fm_pure"), cnt = 0;
	int fd;

	if (START("ust_fmmis3"))
		return;
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmmis3_e", off, ref_off(0)));
	EXPECT_EQ(1, SEM(fm_ref[0]));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmmis3_e", false));
	EXPECT_EQ(0, SEM(fm_ref[0]));
	fd = ut_uprobe_perf_open(ut_self_exe(), off, ref_off(2), 0);
	if (fd == -ENOENT)
		SKIP(return, "CONFIG_UPROBE_EVENTS not enabled (no uprobe PMU)");
	ASSERT_LE(0, fd);
	self->perf_fd = fd;
	EXPECT_EQ(0, SEM(fm_ref[0]));
	EXPECT_EQ(1, SEM(fm_ref[2]));
	EXPECT_EQ(4, fm_pure(1));
	ASSERT_EQ((ssize_t)sizeof(cnt), read(fd, &cnt, sizeof(cnt)));
	EXPECT_EQ(1ULL, cnt);
	close(fd);
	self->perf_fd = -1;
	EXPECT_EQ(0, SEM(fm_ref[2]));
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
}

/*
 * #8: while probed, read() of the file and a MAP_SHARED view show the
 * original bytes; only private executable mappings show the breakpoint.
 */
TEST_F(fm, file_bytes_unchanged)
{
	uint64_t off = sym_off("fm_pure"), pgoff = off & ~(PAGE - 1);
	size_t len0, len1;
	char *before, *during, *shared, *priv;
	uint8_t orig[16], now[16];
	int fd;

	if (START("ust_fmfile"))
		return;
	before = ut_read_file(ut_self_exe(), &len0);
	ASSERT_NE(NULL, before);
	memcpy(orig, before + off, sizeof(orig));
	ASSERT_FALSE(ut_is_bp(orig));
	shared = map_exe(&self->map[0], pgoff, PAGE, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, shared);
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmfile_e", off, 0));
	priv = map_exe(&self->map[1], pgoff, PAGE, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE);
	ASSERT_NE(MAP_FAILED, priv);

	fd = open(ut_self_exe(), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(16, pread(fd, now, 16, off));
	close(fd);
	EXPECT_EQ(0, memcmp(orig, now, 16));
	during = ut_read_file(ut_self_exe(), &len1);
	ASSERT_NE(NULL, during);
	ASSERT_EQ(len0, len1);
	EXPECT_EQ(0, memcmp(before, during, len0));
	EXPECT_EQ(0, memcmp(orig, shared + off - pgoff, 16));
	EXPECT_TRUE(ut_is_bp((void *)fm_pure));
	EXPECT_TRUE(ut_is_bp(priv + off - pgoff));
	EXPECT_EQ(0, memcmp(orig + UT_BP_SIZE, priv + off - pgoff + UT_BP_SIZE,
			    16 - UT_BP_SIZE));
	EXPECT_EQ(4, fm_pure(1));
	EXPECT_EQ(1, HITS("ust_fmfile_e"));

	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmfile_e", false));
	EXPECT_EQ(0, memcmp(orig, (char *)fm_pure, 16));
	EXPECT_EQ(0, memcmp(orig, priv + off - pgoff, 16));
	EXPECT_EQ(0, memcmp(orig, shared + off - pgoff, 16));
	free(during);
	during = ut_read_file(ut_self_exe(), &len1);
	ASSERT_NE(NULL, during);
	ASSERT_EQ(len0, len1);
	EXPECT_EQ(0, memcmp(before, during, len0));
	free(during);
	free(before);
}

/*
 * #9: MAP_SHARED|PROT_EXEC mappings of the probed file, made before and
 * after enabling, get no breakpoint: original bytes, no events from calls
 * through them, while calls through the normal text are counted.
 */
TEST_F(fm, shared_exec_no_breakpoint)
{
	uint64_t off = sym_off("fm_pure"), pgoff = off & ~(PAGE - 1);
	char *a, *b;
	uint8_t orig[16];

	if (START("ust_fmshx"))
		return;
	memcpy(orig, (char *)fm_pure, sizeof(orig));
	a = map_exe(&self->map[0], pgoff, PAGE, PROT_READ | PROT_EXEC,
		    MAP_SHARED);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmshx_e", off, 0));
	b = map_exe(&self->map[1], pgoff, PAGE, PROT_READ | PROT_EXEC,
		    MAP_SHARED);
	ASSERT_NE(MAP_FAILED, b);
	EXPECT_TRUE(ut_is_bp((void *)fm_pure));
	EXPECT_EQ(0, memcmp(orig, a + off - pgoff, 16));
	EXPECT_EQ(0, memcmp(orig, b + off - pgoff, 16));
	EXPECT_EQ(16, pure_in(a, pgoff)(5));
	EXPECT_EQ(19, pure_in(b, pgoff)(6));
	EXPECT_EQ(0, HITS("ust_fmshx_e"));
	EXPECT_EQ(22, fm_pure(7));
	EXPECT_EQ(1, HITS("ust_fmshx_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmshx_e", false));
	EXPECT_EQ(0, memcmp(orig, (char *)fm_pure, 16));
	EXPECT_EQ(0, memcmp(orig, a + off - pgoff, 16));
	EXPECT_EQ(0, memcmp(orig, b + off - pgoff, 16));
}

/* The value of "ret=" in the single record of @ev by @pid; -1 if not one. */
static long one_retval(const char *ev, pid_t pid)
{
	uint64_t v = (uint64_t)-1;
	char **recs;
	int n;

	n = ut_trace_records(ev, pid, &recs);
	if (n == 1 && ut_rec_u64(recs[0], "ret", &v))
		v = (uint64_t)-1;
	ut_free_records(recs, n);
	return n == 1 ? (long)v : -1;
}

/*
 * #13: fork() inside a return-probed function: parent and child each
 * return the right value to the right place, with one return event each.
 */
TEST_F(fm, fork_in_retprobed_function)
{
	int status;
	pid_t pid;
	long r;

	if (START("ust_fmforkret"))
		return;
	ASSERT_EQ(0, ut_probe_add("r:%s/ust_fmforkret_e %s:0x%lx ret=$retval",
				  self->grp, ut_self_exe(),
				  (unsigned long)sym_off("fm_forker")));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmforkret_e", true));
	r = fm_forker(40, &pid);
	if (pid == 0)
		_exit(r == 41 ? 0 : 1);
	ASSERT_LT(0, pid);
	EXPECT_EQ(42, r);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("child status 0x%x", status);
	}
	EXPECT_EQ(42, one_retval("ust_fmforkret_e", getpid()));
	EXPECT_EQ(41, one_retval("ust_fmforkret_e", pid));
	EXPECT_EQ(2, ut_trace_count("ust_fmforkret_e", 0));
}

struct toggler {
	const char *grp;
	int ready;	/* write end of a pipe: one byte after the first cycle */
	long cycles;	/* -1 on error */
};

/* Enable and disable GRP/ust_fmfork_e until fm_stop. */
static void *toggle_fn(void *arg)
{
	struct toggler *t = arg;
	long i;

	for (i = 0; i == 0 || !UT_READ_ONCE(fm_stop); i++) {
		if (ut_event_enable(t->grp, "ust_fmfork_e", true) ||
		    ut_event_enable(t->grp, "ust_fmfork_e", false)) {
			i = -1;
			break;
		}
		if (i == 0 && write(t->ready, "r", 1) != 1) {
			i = -1;
			break;
		}
	}
	close(t->ready);
	t->cycles = i;
	return NULL;
}

/*
 * #13: 200 forks while another thread enables and disables a probe on the
 * code the children run: every child exits normally with the right status.
 */
TEST_F(fm, fork_vs_register)
{
	struct toggler tg = { .grp = self->grp };
	int i, j, status, bad = 0, p[2];
	pthread_t th;
	pid_t pid;
	char c;

	if (START("ust_fmfork"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_EQ(0, define_at(self->grp, "ust_fmfork_e", sym_off("fm_pure"),
			       0));
	ASSERT_EQ(0, pipe(p));
	tg.ready = p[1];
	ASSERT_EQ(0, pthread_create(&th, NULL, toggle_fn, &tg));
	ASSERT_EQ(1, read(p[0], &c, 1));
	close(p[0]);
	for (i = 0; i < 200; i++) {
		pid = fork();
		if (pid < 0)
			break;
		if (pid == 0) {
			long sum = 0;

			for (j = 0; j < 20; j++)
				sum += fm_pure(j);
			/* 3 * 190 + 20 */
			_exit(sum == 590 ? i % 100 : 200);
		}
		if (waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != i % 100) {
			TH_LOG("child %d: status 0x%x", i, status);
			bad++;
		}
	}
	UT_WRITE_ONCE(fm_stop, 1);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(200, i);
	EXPECT_EQ(0, bad);
	EXPECT_LT(0L, tg.cycles);
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
}

#define FK_KIDS		16

/* the forker's live children, shared with the test */
struct fk_ring {
	int stop;
	pid_t kid[FK_KIDS];	/* 0: free */
};

/*
 * Fork children that only wait to be killed, nonstop, FK_KIDS alive at a
 * time (the oldest is killed first), until @r->stop.
 */
static void fork_nonstop(struct fk_ring *r)
{
	unsigned long n;
	pid_t pid;
	int i;

	for (n = 0; !UT_READ_ONCE(r->stop); n++) {
		i = n % FK_KIDS;
		pid = r->kid[i];
		if (pid) {
			UT_WRITE_ONCE(r->kid[i], 0);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = fork();
		if (pid == 0) {
			for (;;)
				pause();
		}
		UT_WRITE_ONCE(r->kid[i], pid > 0 ? pid : 0);
	}
	for (i = 0; i < FK_KIDS; i++) {
		if (r->kid[i] > 0) {
			kill(r->kid[i], SIGKILL);
			waitpid(r->kid[i], NULL, 0);
		}
	}
	_exit(0);
}

/*
 * How many of the forker's live children show at fm_pure UT_BP_SIZE first
 * bytes other than @want (children that died while we looked are skipped).
 */
static int kids_not_showing(struct fk_ring *r, const void *want)
{
	uint8_t b[UT_BP_SIZE];
	int i, bad = 0;
	pid_t pid;

	for (i = 0; i < FK_KIDS; i++) {
		pid = UT_READ_ONCE(r->kid[i]);
		if (pid <= 0 ||
		    ut_proc_read(pid, (uintptr_t)fm_pure, b, UT_BP_SIZE))
			continue;
		if (memcmp(b, want, UT_BP_SIZE) &&
		    UT_READ_ONCE(r->kid[i]) == pid)
			bad++;
	}
	return bad;
}

/*
 * #13: a process forks nonstop while a probe is enabled and disabled 100
 * times (each a walk over the mms that map it): once an enable returns every
 * child shows the breakpoint, once a disable returns none does, however the
 * forks fell against the walks.
 */
TEST_F_TIMEOUT(fm, fork_vs_walk_text, 300)
{
	int i, bad_on = 0, bad_off = 0, status;
	uint8_t orig[UT_BP_SIZE];
	struct fk_ring *r;
	pid_t forker;

	memcpy(orig, (void *)fm_pure, UT_BP_SIZE);
	if (START("ust_fmwalk"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_FALSE(ut_is_bp(orig));
	ASSERT_EQ(0, define_at(self->grp, "ust_fmwalk_e", sym_off("fm_pure"),
			       0));
	r = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	self->map[0].p = (char *)r;
	self->map[0].len = PAGE;
	forker = fork();
	ASSERT_LE(0, forker);
	if (forker == 0)
		fork_nonstop(r);
	for (i = 0; i < 100; i++) {
		if (ut_event_enable(self->grp, "ust_fmwalk_e", true))
			break;
		bad_on += kids_not_showing(r, UT_BP);
		if (ut_event_enable(self->grp, "ust_fmwalk_e", false))
			break;
		bad_off += kids_not_showing(r, orig);
	}
	UT_WRITE_ONCE(r->stop, 1);
	ASSERT_EQ(forker, waitpid(forker, &status, 0));
	EXPECT_EQ(100, i);
	EXPECT_EQ(0, bad_on);
	EXPECT_EQ(0, bad_off);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* what the SIGSEGV handler saw */
static long fm_good = 0x600d;
static uint64_t fm_segv_addr, fm_segv_pc;
static int fm_segv;

/* Record the fault and point the faulting load at fm_good. */
static void segv_fix_pointer(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	UT_WRITE_ONCE(fm_segv, UT_READ_ONCE(fm_segv) + 1);
	UT_WRITE_ONCE(fm_segv_addr, (uintptr_t)si->si_addr);
	UT_WRITE_ONCE(fm_segv_pc, UT_UC_PC(uc));
	UT_UC_ARG0(uc) = (uintptr_t)&fm_good;
}

/*
 * #17: a probed load faults, the SIGSEGV handler fixes the pointer and
 * returns: si_addr is the data address, the pc the original load, the
 * re-executed load returns the right value, and the probe hits twice.
 */
TEST_F(fm, fault_fixup_reexec)
{
	struct sigaction sa = {
		.sa_sigaction = segv_fix_pointer,
		.sa_flags = SA_SIGINFO,
	};
	char *page;
	long *bad;
	int i;

	if (START("ust_fmsegv"))
		return;
	page = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	self->map[0].p = page;
	self->map[0].len = PAGE;
	bad = (long *)(page + 0x80);
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmsegv_e",
			      sym_off("ui_fault_insn"), 0));
	for (i = 0; i < 3; i++) {
		UT_WRITE_ONCE(fm_segv_addr, 0);
		UT_WRITE_ONCE(fm_segv_pc, 0);
		EXPECT_EQ(0x600d, ui_fault(bad));
		EXPECT_EQ(i + 1, UT_READ_ONCE(fm_segv));
		EXPECT_EQ((uintptr_t)bad, UT_READ_ONCE(fm_segv_addr));
		EXPECT_EQ((uintptr_t)ui_fault_insn, UT_READ_ONCE(fm_segv_pc));
	}
	EXPECT_EQ(6, HITS("ust_fmsegv_e"));
	UT_WRITE_ONCE(ui_data, 42);
	EXPECT_EQ(42, ui_fault(&ui_data));
	EXPECT_EQ(3, UT_READ_ONCE(fm_segv));
	EXPECT_EQ(7, HITS("ust_fmsegv_e"));
}

/* Send SIGUSR1 to thread *@arg until fm_stop. */
static void *storm_fn(void *arg)
{
	pid_t tid = *(pid_t *)arg;

	while (!UT_READ_ONCE(fm_stop))
		syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
	return NULL;
}

/*
 * #18: a SIGUSR1 storm from another thread while a probed instruction is
 * run at least 1000 times (until 50 signals were handled): results right
 * and the hit count exactly the number of calls.
 */
TEST_F(fm, signal_storm)
{
	struct sigaction sa = { .sa_handler = count_sigusr1 };
	long i, bad = 0;
	pid_t tid;
	pthread_t th;

	if (START("ust_fmstorm"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, probe_at(self->grp, "ust_fmstorm_e", sym_off("fm_pure"),
			      0));
	tid = syscall(SYS_gettid);
	ASSERT_EQ(0, pthread_create(&th, NULL, storm_fn, &tid));
	for (i = 0; i < 1000 ||
	     (UT_READ_ONCE(fm_sigusr1) < 50 && i < 100000); i++)
		if (fm_pure(i) != 3 * i + 1)
			bad++;
	UT_WRITE_ONCE(fm_stop, 1);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, bad);
	EXPECT_LE(50, UT_READ_ONCE(fm_sigusr1));
	EXPECT_EQ(i, HITS("ust_fmstorm_e"));
}

TEST_HARNESS_MAIN
