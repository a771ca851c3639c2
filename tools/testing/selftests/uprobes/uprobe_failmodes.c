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

/* *@ran: whether this call ran the marker (found its semaphore set) */
noipa long fm_work(long x, int *ran)
{
	*ran = 0;
	if (SEM(fm_work_semaphore)) {
		DTRACE_PROBE1(fm, work, x);
		*ran = 1;
	}
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

/*
 * The phase of a probe that one thread enables and disables while others
 * watch: 4k settled off (before the first enable or after a disable
 * returned), 4k + 1 enabling, 4k + 2 settled on (after the enable returned,
 * before the disable is called), 4k + 3 disabling.
 */
#define PH_OFF(k)	(4UL * (k))
#define PH_ON(k)	(4UL * (k) + 2)

static unsigned long ph_load(unsigned long *ph)
{
	return __atomic_load_n(ph, __ATOMIC_ACQUIRE);
}

/*
 * Move to phase @v: what was done before is seen by whoever sees @v, and
 * what is done after (the next enable or disable) is not seen before it.
 */
static void ph_set(unsigned long *ph, unsigned long v)
{
	__atomic_store_n(ph, v, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Wait until *@seen[i] (every @stride bytes, @n of them) is @v, up to 20
 * seconds or until fm_stop; true if they all got there.
 */
static bool ph_wait(unsigned long *seen, size_t stride, int n, unsigned long v)
{
	int i, ms;

	for (ms = 0; ms < 20000 && !UT_READ_ONCE(fm_stop); ms++) {
		for (i = 0; i < n; i++)
			if (ph_load((unsigned long *)((char *)seen + i * stride)) != v)
				break;
		if (i == n)
			return true;
		usleep(1000);
	}
	return false;
}

static unsigned long fm_phase;

struct trigger {
	pthread_t th;
	pthread_barrier_t *bar;
	unsigned long seen;	/* the last phase a whole call fell in */
	long calls, bad;
	long ran;	/* calls that ran the marker */
	long must;	/* calls wholly inside a settled on phase */
	long wrong;	/* calls wholly inside a settled phase that ran the
			 * marker when off or not when on
			 */
};

/*
 * Call fm_work until told to stop, and at least 1000 times, noting which
 * calls ran the marker and which phase they fell in wholly.
 */
static void *trigger_fn(void *arg)
{
	struct trigger *t = arg;
	unsigned long p0, p1;
	int ran;
	long i;

	pthread_barrier_wait(t->bar);
	for (i = 0; !UT_READ_ONCE(fm_stop) || i < 1000; i++) {
		p0 = ph_load(&fm_phase);
		if (fm_work(i, &ran) != i * 5 + 2)
			t->bad++;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		p1 = ph_load(&fm_phase);
		t->ran += ran;
		if (p0 != p1 || (p0 & 1))
			continue;
		if (p0 % 4 == 2)
			t->must++;
		if (ran != (p0 % 4 == 2))
			t->wrong++;
		__atomic_store_n(&t->seen, p0, __ATOMIC_RELEASE);
	}
	t->calls = i;
	return NULL;
}

/*
 * #1: a guarded marker toggled under running threads: semaphore, hits.
 *
 * A semaphore-guarded marker is enabled and disabled 40 times while 4
 * threads run it.  The semaphore is 1 after each enable and 0 after each
 * disable, and the threads agree: every call made wholly between an
 * enable's return and the next disable ran the marker, none made wholly
 * after a disable returned (and before the next enable) did.  No SIGTRAP,
 * every result right.
 *
 * uprobe_profile's count cannot be known exactly: a call that overlaps an
 * enable or a disable may find the semaphore set and run the marker before
 * or after the breakpoint is written or removed, which no thread can see.
 * So the count is bounded by what can be seen: at least the calls made
 * wholly inside an enabled phase (each ran the marker over a breakpoint
 * that was in place all along: a hit), at most the calls that ran the
 * marker at all (a hit needs the breakpoint executed).  A correct kernel
 * can give any value in between, so no tighter bound holds; a lost hit
 * of a settled call or a hit counted twice or from nowhere is caught as
 * long as the overlapping calls do not make up for it.  The main thread
 * holds each settled phase until every thread made a whole call in it.
 * (Each cycle waits for RCU grace periods, about 80 ms under TCG while the
 * threads trap continuously.)
 */
TEST_F_TIMEOUT(fm, attach_detach_threads, 180)
{
	long ran = 0, must = 0, wrong = 0, hits;
	int i, sem_on = 0, sem_off = 0, stuck = 0;
	struct trigger t[4] = {};
	pthread_barrier_t bar;
	struct ut_sdt_note n;

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
		ASSERT_EQ(0, pthread_create(&t[i].th, NULL, trigger_fn, &t[i]));
	}
	pthread_barrier_wait(&bar);
	for (i = 0; i < 40; i++) {
		ph_set(&fm_phase, PH_OFF(i) + 1);
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmloop_e", true));
		ph_set(&fm_phase, PH_ON(i));
		sem_on += SEM(fm_work_semaphore) == 1;
		stuck += !ph_wait(&t[0].seen, sizeof(t[0]), 4, PH_ON(i));
		ph_set(&fm_phase, PH_ON(i) + 1);
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fmloop_e", false));
		ph_set(&fm_phase, PH_OFF(i + 1));
		sem_off += SEM(fm_work_semaphore) == 0;
		stuck += !ph_wait(&t[0].seen, sizeof(t[0]), 4, PH_OFF(i + 1));
	}
	UT_WRITE_ONCE(fm_stop, 1);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(t[i].th, NULL));
		EXPECT_EQ(0, t[i].bad);
		EXPECT_LE(1000, t[i].calls);
		ran += t[i].ran;
		must += t[i].must;
		wrong += t[i].wrong;
	}
	hits = ut_profile_hits("ust_fmloop_e");
	TH_LOG("%ld hits: %ld calls in enabled phases, %ld ran the marker",
	       hits, must, ran);
	EXPECT_EQ(40, sem_on);
	EXPECT_EQ(40, sem_off);
	EXPECT_EQ(0, stuck);
	EXPECT_EQ(0, wrong);
	EXPECT_LE(4 * 40, must);
	EXPECT_LE(must, hits);
	EXPECT_GE(ran, hits);
	EXPECT_EQ(0, UT_READ_ONCE(fm_sigtrap));
	EXPECT_EQ(0, SEM(fm_work_semaphore));
	EXPECT_EQ(12, fm_work(2, &i));
	EXPECT_EQ(0, i);
	EXPECT_EQ(hits, ut_profile_hits("ust_fmloop_e"));
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

#define FR_CYCLES	25	/* enable/disable cycles */
#define FR_MAX		4000	/* forks at most */
#define FR_CALLS	10	/* calls of fm_pure by each child */

/* what a child of fork_vs_register saw, in memory shared with the parent */
struct fr_kid {
	/* the phase before its fork (read by the parent), after it */
	unsigned long f0, f1;
	/* the phase before its look, between its look and calls, after */
	unsigned long p0, pm, p1;
	int bp, sem, bad;
};

struct fr_shared {
	unsigned long phase;	/* of ust_fmfork_e, as for fm_phase */
	unsigned long checked;	/* the last settled phase a child was checked in */
	struct fr_kid kid[FR_MAX];
};

struct toggler {
	const char *grp;
	struct fr_shared *sh;
	long cycles;	/* completed; -1 on an error of tracefs */
	int bad;	/* cycles where this process's state was wrong */
	int stuck;	/* settled phases in which no child was checked */
};

/*
 * Enable and disable GRP/ust_fmfork_e FR_CYCLES times, checking this
 * process's breakpoint and counter after each, and holding each settled
 * phase until a child was checked in it.
 */
static void *toggle_fn(void *arg)
{
	struct toggler *t = arg;
	unsigned long *ph = &t->sh->phase;
	long i;

	for (i = 0; i < FR_CYCLES; i++) {
		ph_set(ph, PH_OFF(i) + 1);
		if (ut_event_enable(t->grp, "ust_fmfork_e", true))
			break;
		ph_set(ph, PH_ON(i));
		t->bad += SEM(fm_ref[0]) != 1 || !ut_is_bp((void *)fm_pure);
		t->stuck += !ph_wait(&t->sh->checked, 0, 1, PH_ON(i));
		ph_set(ph, PH_ON(i) + 1);
		if (ut_event_enable(t->grp, "ust_fmfork_e", false))
			break;
		ph_set(ph, PH_OFF(i + 1));
		t->bad += SEM(fm_ref[0]) != 0 || ut_is_bp((void *)fm_pure);
		t->stuck += !ph_wait(&t->sh->checked, 0, 1, PH_OFF(i + 1));
	}
	t->cycles = i == FR_CYCLES ? i : -1;
	UT_WRITE_ONCE(fm_stop, 1);
	return NULL;
}

/*
 * A child of fork_vs_register: wait for the change under way (if any) to
 * end, look, call fm_pure, note it all in @k.
 */
static void fr_child(struct fr_shared *sh, struct fr_kid *k)
{
	long sum = 0;
	int j;

	k->f1 = ph_load(&sh->phase);
	for (j = 0; j < 20000 && (ph_load(&sh->phase) & 1); j++)
		usleep(500);
	k->p0 = ph_load(&sh->phase);
	k->bp = ut_is_bp((void *)fm_pure);
	k->sem = SEM(fm_ref[0]);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	k->pm = ph_load(&sh->phase);
	for (j = 0; j < FR_CALLS; j++)
		sum += fm_pure(j);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	k->p1 = ph_load(&sh->phase);
	k->bad = sum != 3 * FR_CALLS * (FR_CALLS - 1) / 2 + FR_CALLS;
	_exit(0);
}

/*
 * #13: a child forked while a probe is toggled has the probe's last state.
 *
 * A process forks nonstop while another of its threads enables and
 * disables a probe (with a reference counter) 25 times.  A child that
 * looks at itself in a settled phase (wholly after an enable or a disable
 * returned and before the next began) sees the state of that phase,
 * whenever its fork began: the breakpoint and a counter of 1 when on,
 * neither when off; its 10 calls made in a settled phase are 10 hits when
 * on, none when off; so is the parent after each change.  A child forked
 * while a change runs waits for it to end before it looks, so that forks
 * that cross a walk are checked; some must have.  Each change waits until
 * a child did both in its settled phase.  Children that overlap a change
 * anyway exit normally, with 0 to 10 hits.
 * uprobe_profile counts every traced hit, and may count more only for
 * calls of overlapping children: a hit while the event is being enabled
 * or disabled can be counted but not traced.
 */
TEST_F_TIMEOUT(fm, fork_vs_register, 240)
{
	struct toggler tg = { .grp = self->grp };
	int n, on, hits, sum = 0, slack = 0, status, bad = 0, raced = 0;
	int looks[2] = { 0, 0 }, calls[2] = { 0, 0 };
	long prof;
	struct fr_shared *sh;
	struct fr_kid *k;
	pthread_t th;
	pid_t pid;

	if (START("ust_fmfork"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	self->map[0].p = (char *)sh;
	self->map[0].len = sizeof(*sh);
	tg.sh = sh;
	ASSERT_EQ(0, define_at(self->grp, "ust_fmfork_e", sym_off("fm_pure"),
			       ref_off(0)));
	ASSERT_EQ(0, pthread_create(&th, NULL, toggle_fn, &tg));
	for (n = 0; n < FR_MAX && !UT_READ_ONCE(fm_stop); n++) {
		k = &sh->kid[n];
		k->f0 = ph_load(&sh->phase);
		pid = fork();
		if (pid < 0)
			break;
		if (pid == 0)
			fr_child(sh, k);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) || k->bad) {
			TH_LOG("child %d: status 0x%x, bad %d", n, status,
			       k->bad);
			bad++;
			continue;
		}
		hits = ut_trace_count("ust_fmfork_e", pid);
		sum += hits;
		if (hits < 0 || hits > FR_CALLS) {
			TH_LOG("child %d: %d hits", n, hits);
			bad++;
			continue;
		}
		if (k->p0 == k->pm && !(k->p0 & 1)) {
			on = k->p0 % 4 == 2;
			looks[on]++;
			raced += (k->f0 & 1) || k->f0 != k->f1;
			if (k->bp != on || k->sem != on) {
				TH_LOG("child %d (probe %s): breakpoint %d, counter %d",
				       n, on ? "on" : "off", k->bp, k->sem);
				bad++;
			}
		}
		if (k->pm == k->p1 && !(k->pm & 1)) {
			on = k->pm % 4 == 2;
			calls[on]++;
			if (hits != on * FR_CALLS) {
				TH_LOG("child %d (probe %s): %d hits",
				       n, on ? "on" : "off", hits);
				bad++;
			}
		} else {
			slack += FR_CALLS - hits;
		}
		if (k->p0 == k->p1 && !(k->p0 & 1))
			__atomic_store_n(&sh->checked, k->p0, __ATOMIC_RELEASE);
	}
	UT_WRITE_ONCE(fm_stop, 1);
	ASSERT_EQ(0, pthread_join(th, NULL));
	TH_LOG("%d forks; settled on/off looks %d/%d (%d forked in a change), calls %d/%d",
	       n, looks[1], looks[0], raced, calls[1], calls[0]);
	EXPECT_EQ(FR_CYCLES, tg.cycles);
	EXPECT_EQ(0, tg.bad);
	EXPECT_EQ(0, tg.stuck);
	EXPECT_EQ(0, bad);
	EXPECT_LE(FR_CYCLES, looks[1]);
	EXPECT_LE(FR_CYCLES, looks[0]);
	EXPECT_LE(FR_CYCLES, calls[1]);
	EXPECT_LE(FR_CYCLES, calls[0]);
	EXPECT_LT(0, raced);
	prof = ut_profile_hits("ust_fmfork_e");
	EXPECT_LE(sum, prof);
	EXPECT_GE(sum + slack, prof);
	EXPECT_EQ(0, SEM(fm_ref[0]));
	EXPECT_FALSE(ut_is_bp((void *)fm_pure));
}

#define FK_KIDS		16
#define FK_CYCLES	100

/* the forker's live children, shared with the test */
struct fk_ring {
	int stop;
	unsigned long phase;	/* of ust_fmwalk_e, as for fm_phase */
	pid_t kid[FK_KIDS];	/* 0: free */
	unsigned long born[FK_KIDS][2];	/* the phase before and after its fork */
};

/*
 * Fork children that only wait to be killed, nonstop, FK_KIDS alive at a
 * time (the oldest is killed first), until @r->stop; note the phases each
 * fork began and ended in.
 */
static void fork_nonstop(struct fk_ring *r)
{
	unsigned long n, p0;
	pid_t pid;
	int i;

	for (n = 0; !UT_READ_ONCE(r->stop); n++) {
		i = n % FK_KIDS;
		pid = r->kid[i];
		if (pid) {
			__atomic_store_n(&r->kid[i], 0, __ATOMIC_SEQ_CST);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		p0 = ph_load(&r->phase);
		pid = fork();
		if (pid == 0) {
			for (;;)
				pause();
		}
		UT_WRITE_ONCE(r->born[i][0], p0);
		UT_WRITE_ONCE(r->born[i][1], ph_load(&r->phase));
		__atomic_store_n(&r->kid[i], pid > 0 ? pid : 0,
				 __ATOMIC_RELEASE);
	}
	for (i = 0; i < FK_KIDS; i++) {
		if (r->kid[i] > 0) {
			kill(r->kid[i], SIGKILL);
			waitpid(r->kid[i], NULL, 0);
		}
	}
	_exit(0);
}

/* what the test saw of the forker's children in one settled phase */
struct fk_look {
	int looked;	/* children read */
	int raced;	/* of them, forked while the last change ran */
	int bad;	/* of them, not showing what they should */
};

/*
 * Read fm_pure's first UT_BP_SIZE bytes in each of the forker's live
 * children and compare them with @want, counting into @l; children that
 * were killed while we looked are not counted.  @change is the phase of
 * the enable or disable that just returned.
 */
static void kids_look(struct fk_ring *r, const void *want, struct fk_look *l,
		      unsigned long change)
{
	uint8_t b[UT_BP_SIZE];
	bool raced;
	pid_t pid;
	int i;

	for (i = 0; i < FK_KIDS; i++) {
		pid = __atomic_load_n(&r->kid[i], __ATOMIC_ACQUIRE);
		if (pid <= 0)
			continue;
		raced = UT_READ_ONCE(r->born[i][0]) <= change &&
			UT_READ_ONCE(r->born[i][1]) >= change;
		if (ut_proc_read(pid, (uintptr_t)fm_pure, b, UT_BP_SIZE) ||
		    __atomic_load_n(&r->kid[i], __ATOMIC_SEQ_CST) != pid)
			continue;
		l->looked++;
		l->raced += raced;
		l->bad += !!memcmp(b, want, UT_BP_SIZE);
	}
}

/*
 * kids_look() until it has read at least one child (the forker may be
 * between a kill and a fork of every slot): the phase does not change
 * meanwhile, so a later look is as good. At most about a second.
 */
static void kids_look_some(struct fk_ring *r, const void *want,
			   struct fk_look *l, unsigned long change)
{
	int tries, before = l->looked;

	for (tries = 0; tries < 1000 && l->looked == before; tries++) {
		if (tries)
			usleep(1000);
		kids_look(r, want, l, change);
	}
}

/*
 * #13: enable and disable reach every child of a process forking nonstop.
 *
 * A process forks nonstop while a probe is enabled and disabled 100
 * times (each a walk over the mms that map it): once an enable returns every
 * child shows the breakpoint, once a disable returns none does, however the
 * forks fell against the walks.  Every cycle must read children after
 * both, and some of them must have been forked while the enable or disable
 * just done ran, or the test has shown nothing: it cycles on (up to four
 * times as long) until both races happened.
 */
TEST_F_TIMEOUT(fm, fork_vs_walk_text, 300)
{
	struct fk_look on = {}, off = {};
	int i, status, blind = 0, cycles = ut_scaled(FK_CYCLES, 2);
	uint8_t orig[UT_BP_SIZE];
	bool failed = false;
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
	/* until a fork has raced both an enable and a disable (4x at most) */
	for (i = 0; i < 4 * cycles; i++) {
		int seen_on = on.looked, seen_off = off.looked;

		if (i >= cycles && on.raced && off.raced)
			break;
		ph_set(&r->phase, PH_OFF(i) + 1);
		if (ut_event_enable(self->grp, "ust_fmwalk_e", true)) {
			failed = true;
			break;
		}
		ph_set(&r->phase, PH_ON(i));
		kids_look_some(r, UT_BP, &on, PH_OFF(i) + 1);
		ph_set(&r->phase, PH_ON(i) + 1);
		if (ut_event_enable(self->grp, "ust_fmwalk_e", false)) {
			failed = true;
			break;
		}
		ph_set(&r->phase, PH_OFF(i + 1));
		kids_look_some(r, orig, &off, PH_ON(i) + 1);
		blind += on.looked == seen_on || off.looked == seen_off;
	}
	UT_WRITE_ONCE(r->stop, 1);
	ASSERT_EQ(forker, waitpid(forker, &status, 0));
	TH_LOG("%d cycles; read after enables: %d (%d forked in one), after disables: %d (%d)",
	       i, on.looked, on.raced, off.looked, off.raced);
	EXPECT_FALSE(failed);
	EXPECT_LE(cycles, i);
	EXPECT_EQ(0, blind);
	EXPECT_LT(0, on.raced);
	EXPECT_LT(0, off.raced);
	EXPECT_EQ(0, on.bad);
	EXPECT_EQ(0, off.bad);
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
 * and the hit count exactly the number of calls (run out of line on
 * ours too: insn.signal_storm_out_of_line).
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
	/* counted by uprobe_profile: the trace buffer may be too small */
	EXPECT_EQ(i, ut_profile_hits("ust_fmstorm_e"));
}

TEST_HARNESS_MAIN
