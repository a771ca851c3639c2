// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_perf: uprobes through perf: perf_event_open() with the "uprobe"
 * PMU (entry and return probes, reference counter, per-task and inherited
 * counting: forked children, threads, CLONE_VM children, enable_on_exec, an
 * exited leader), and the perf tool's SDT support ("perf probe
 * sdt_tick:loop2").
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_util.h"

#define PERF_BIN	"/usr/bin/perf"
#define PMU_CHILDREN	20
#define CC_CPUS		16
#define CC_CHILDREN	40
#define CC_CALLS	50
#define CC_PAGES	64
/* argv[1] that makes the binary run pmu_exec_image() instead of the tests */
#define PMU_EXEC_ARG	"--uprobe-perf-exec"
#define PMU_EXEC_CALLS	6
#define PMU_THREADS	4
#define PMU_CLONE_CALLS	13
#define PMU_CLONE_STACK	(64 * 1024)
#define PMU_LEADER_CALLS	3
#define PMU_WORKER_CALLS	8

unsigned short uperf_mark_semaphore __section(".probes") __used;

#define SEM(s)	UT_READ_ONCE(s)

long perf_sink;

noipa long perf_func(long x)
{
	return x * 11;
}

noipa int perf_mark(long x)
{
	if (SEM(uperf_mark_semaphore)) {
		DTRACE_PROBE1(uperf, mark, x);
		return 1;
	}
	return 0;
}

/* Return -x - 1 for x < 0; exit the process, inside the call, else. */
noipa long perf_exit_in(long x)
{
	if (x >= 0)
		_exit(0);
	return -x - 1;
}

static void call_n(int n)
{
	int i;

	for (i = 0; i < n; i++)
		UT_WRITE_ONCE(perf_sink, perf_func(i));
}

/*
 * The new image of pmu.enable_on_exec: when run with PMU_EXEC_ARG, call
 * perf_func() PMU_EXEC_CALLS times and exit 0, before the test harness
 * starts.
 */
static void __attribute__((constructor)) pmu_exec_image(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], PMU_EXEC_ARG))
		return;
	call_n(PMU_EXEC_CALLS);
	_exit(0);
}

static uint64_t read_count(int fd)
{
	uint64_t v = (uint64_t)-1;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return (uint64_t)-1;
	return v;
}

/* SKIP (returning true) without the uprobe PMU. */
static bool no_pmu(struct __test_metadata *_metadata)
{
	if (ut_pmu_type() >= 0)
		return false;
	SKIP(return true, "CONFIG_UPROBE_EVENTS not enabled (no "
	     UT_UPROBE_PMU ")");
}

/* SKIP (returning true) without reference counter support in the PMU. */
static bool no_refctr(struct __test_metadata *_metadata)
{
	if (ut_file_exists(UT_UPROBE_PMU "/format/ref_ctr_offset"))
		return false;
	SKIP(return true, "uprobe PMU has no ref_ctr_offset format");
}

FIXTURE(pmu) {
	int fd[2];
	pid_t child;
};

FIXTURE_SETUP(pmu)
{
	self->fd[0] = -1;
	self->fd[1] = -1;
	self->child = -1;
}

FIXTURE_TEARDOWN(pmu)
{
	if (self->fd[0] >= 0)
		close(self->fd[0]);
	if (self->fd[1] >= 0)
		close(self->fd[1]);
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
}

static int64_t self_off(const char *sym)
{
	return ut_elf_sym_offset(ut_self_exe(), sym);
}

/* The uprobe PMU advertises retprobe as config:0, ref_ctr as config:32-63. */
TEST_F(pmu, format)
{
	int hi = -1;

	if (no_pmu(_metadata))
		return;
	EXPECT_EQ(0, ut_pmu_format_bit("retprobe", NULL));
	if (no_refctr(_metadata))
		return;
	EXPECT_EQ(32, ut_pmu_format_bit("ref_ctr_offset", &hi));
	EXPECT_EQ(63, hi);
}

/* An entry uprobe perf event counts exactly the calls of this task. */
TEST_F(pmu, entry_count)
{
	struct perf_event_attr attr;

	if (no_pmu(_metadata))
		return;
	ASSERT_LT(0, self_off("perf_func"));
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    false, 0));
	attr.disabled = 1;
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	call_n(3);
	EXPECT_EQ(0ULL, read_count(self->fd[0]));
	ASSERT_EQ(0, ioctl(self->fd[0], PERF_EVENT_IOC_ENABLE, 0));
	call_n(7);
	ASSERT_EQ(0, ioctl(self->fd[0], PERF_EVENT_IOC_DISABLE, 0));
	call_n(2);
	EXPECT_EQ(7ULL, read_count(self->fd[0]));
}

/* A return uprobe perf event counts exactly the returns. */
TEST_F(pmu, return_count)
{
	struct perf_event_attr attr;

	if (no_pmu(_metadata))
		return;
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    true, 0));
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	call_n(5);
	EXPECT_EQ(5ULL, read_count(self->fd[0]));
}

/* Entry and return events on one function both count every call. */
TEST_F(pmu, entry_and_return)
{
	struct perf_event_attr attr;

	if (no_pmu(_metadata))
		return;
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    false, 0));
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]);
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    true, 0));
	self->fd[1] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[1]);
	call_n(9);
	EXPECT_EQ(9ULL, read_count(self->fd[0]));
	EXPECT_EQ(9ULL, read_count(self->fd[1]));
}

/* The semaphore is 1 while a perf event with ref_ctr_offset is open. */
TEST_F(pmu, semaphore_while_open)
{
	struct perf_event_attr attr;
	struct ut_sdt_note n;
	int i, fired = 0;

	if (no_pmu(_metadata))
		return;
	if (no_refctr(_metadata))
		return;
	ASSERT_EQ(0, ut_sdt_find(ut_self_exe(), "uperf", "mark", &n));
	ASSERT_NE(0ULL, n.sem_off);
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), n.pc_off, false,
				    n.sem_off));
	EXPECT_EQ(0, SEM(uperf_mark_semaphore));
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	EXPECT_EQ(1, SEM(uperf_mark_semaphore));
	for (i = 0; i < 6; i++)
		fired += perf_mark(i);
	EXPECT_EQ(6, fired);
	EXPECT_EQ(6ULL, read_count(self->fd[0]));
	close(self->fd[0]);
	self->fd[0] = -1;
	EXPECT_EQ(0, SEM(uperf_mark_semaphore));
	EXPECT_EQ(0, perf_mark(1));
}

/*
 * A ref_ctr_offset beyond the file's end is taken, as 6.1 takes it (bcc
 * 0.26 on arm64 passes an uninitialised one and sets the semaphore
 * itself): the event opens and counts every hit.
 */
TEST_F(pmu, ref_ctr_beyond_eof)
{
	struct perf_event_attr attr;
	struct stat st;

	if (no_pmu(_metadata))
		return;
	if (no_refctr(_metadata))
		return;
	ASSERT_EQ(0, stat(ut_self_exe(), &st));
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    false, (st.st_size + 0x10000) & ~1ULL));
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	call_n(5);
	EXPECT_EQ(5ULL, read_count(self->fd[0]));
}

/* An event opened on another task counts that task's calls only. */
TEST_F(pmu, other_task)
{
	struct perf_event_attr attr;
	int go[2], status;
	char c;

	if (no_pmu(_metadata))
		return;
	ASSERT_EQ(0, pipe(go));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		call_n(4);
		_exit(0);
	}
	close(go[0]);
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    false, 0));
	self->fd[0] = ut_perf_open(&attr, self->child);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	call_n(3);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(4ULL, read_count(self->fd[0]));
	close(go[1]);
}

/*
 * With attr.inherit, the calls of forked children are added on their exit,
 * also when perf swaps the contexts of parent and child (both run on one
 * CPU, the child right after the parent blocks in waitpid()): the child
 * then runs with the parent's event, whose target is the parent.
 * FAILURE-MODES #24. Stock 6.1 loses hits of an entry probe in every
 * round: on the fast config every child's and the parent's later calls
 * (2 of 82), on the full one 26 of 82; it counts all of them for a return
 * probe.
 */
static void inherit_children(struct __test_metadata *_metadata,
			     struct _test_data_pmu *self, bool ret)
{
	struct perf_event_attr attr;
	int i, status, lost = 0;
	cpu_set_t one;
	uint64_t n, was;
	pid_t pid;

	if (no_pmu(_metadata))
		return;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    ret, 0));
	attr.inherit = 1;
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]);
	call_n(2);
	was = 2;
	for (i = 0; i < PMU_CHILDREN; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			call_n(3);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		call_n(1);
		n = read_count(self->fd[0]);
		if (n != was + 4)
			lost++;
		was = n;
	}
	n = read_count(self->fd[0]);
	if (ut_impl_is_stock() && !ret) {
		/* hits lost in every round */
		EXPECT_EQ(PMU_CHILDREN, lost);
		EXPECT_GT(2ULL + 4 * PMU_CHILDREN, n);
		UT_STOCK_FAILS("counted %llu of %d", (unsigned long long)n,
			       2 + 4 * PMU_CHILDREN);
		return;
	}
	EXPECT_EQ(0, lost);
	EXPECT_EQ(2ULL + 4 * PMU_CHILDREN, n);
}

/* Forked children are counted, also through a context swap (above). */
TEST_F(pmu, inherit)
{
	inherit_children(_metadata, self, false);
}

/* The same with a return probe on the function. */
TEST_F(pmu, inherit_return)
{
	inherit_children(_metadata, self, true);
}

/*
 * enable_on_exec with inherit on a waiting child (perf stat -- PROG): the
 * exec'd image's calls count, the child's calls before exec do not.
 */
TEST_F(pmu, enable_on_exec)
{
	const char *exe = ut_self_exe();
	struct perf_event_attr attr;
	int go[2], status;
	char c;

	if (no_pmu(_metadata))
		return;
	ASSERT_EQ(0, pipe(go));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		char *const argv[] = { (char *)exe, PMU_EXEC_ARG, NULL };

		close(go[1]);
		call_n(2);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		call_n(5);
		execv(exe, argv);
		_exit(3);
	}
	close(go[0]);
	ASSERT_EQ(0, ut_uprobe_attr(&attr, exe, self_off("perf_func"), false,
				    0));
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	attr.inherit = 1;
	self->fd[0] = ut_perf_open(&attr, self->child);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	call_n(3);
	EXPECT_EQ(0ULL, read_count(self->fd[0]));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("child status 0x%x", status);
	}
	EXPECT_EQ((uint64_t)PMU_EXEC_CALLS, read_count(self->fd[0]));
	close(go[1]);
}

/* One thread of pmu.threads. */
struct pmu_thread {
	pthread_barrier_t *bar;
	pid_t tid;
	int calls;
};

/*
 * Say the tid (first barrier), wait for the tid event (second), call
 * perf_func() @calls times, and wait until every thread has (third).
 */
static void *pmu_thread_fn(void *arg)
{
	struct pmu_thread *t = arg;

	t->tid = syscall(SYS_gettid);
	pthread_barrier_wait(t->bar);
	pthread_barrier_wait(t->bar);
	call_n(t->calls);
	pthread_barrier_wait(t->bar);
	return NULL;
}

/*
 * An inherited event on this process, opened before its threads start,
 * counts the calls of every thread; an event on one thread's tid only that
 * thread's. No thread exits before all the calls are made (calls after an
 * exit: clone_vm_child).
 */
TEST_F(pmu, threads)
{
	struct pmu_thread t[PMU_THREADS];
	pthread_t th[PMU_THREADS];
	struct perf_event_attr attr;
	pthread_barrier_t bar;
	uint64_t sum = 0;
	int i;

	if (no_pmu(_metadata))
		return;
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    false, 0));
	attr.inherit = 1;
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	call_n(3);
	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, PMU_THREADS + 1));
	for (i = 0; i < PMU_THREADS; i++) {
		t[i].bar = &bar;
		t[i].tid = -1;
		t[i].calls = 11 * (i + 1);
		sum += t[i].calls;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, pmu_thread_fn, &t[i]));
	}
	pthread_barrier_wait(&bar);
	attr.inherit = 0;
	self->fd[1] = ut_perf_open(&attr, t[1].tid);
	ASSERT_LE(0, self->fd[1]) {
		TH_LOG("perf_event_open(tid %d): %s", t[1].tid,
		       strerror(-self->fd[1]));
	}
	pthread_barrier_wait(&bar);
	call_n(4);
	pthread_barrier_wait(&bar);
	for (i = 0; i < PMU_THREADS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	pthread_barrier_destroy(&bar);
	EXPECT_EQ(3 + 4 + sum, read_count(self->fd[0]));
	EXPECT_EQ((uint64_t)t[1].calls, read_count(self->fd[1]));
}

/* The child of pmu.clone_vm_child: PMU_CLONE_CALLS calls, nothing else. */
static int pmu_clone_fn(void *arg)
{
	long i;

	for (i = 0; i < PMU_CLONE_CALLS; i++)
		UT_WRITE_ONCE(perf_sink, perf_func(i));
	return 0;
}

/*
 * An inherited event counts the calls of a clone(CLONE_VM) child, in the
 * parent's mm, and the parent's after the child has exited. The child
 * runs on the parent's CPU while the parent waits, so perf swaps their
 * contexts: the child exits with the parent's. FAILURE-MODES #24. Stock
 * 6.1 then loses the parent's later calls: the event it runs with has the
 * exited child, with no mm, as its target.
 */
TEST_F(pmu, clone_vm_child)
{
	struct perf_event_attr attr;
	uint64_t n;
	char *stack;
	int status;

	if (no_pmu(_metadata))
		return;
	stack = mmap(NULL, PMU_CLONE_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	ASSERT_NE(MAP_FAILED, stack);
	ASSERT_EQ(0, ut_pin_cpu());
	ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(), self_off("perf_func"),
				    false, 0));
	attr.inherit = 1;
	self->fd[0] = ut_perf_open(&attr, 0);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	call_n(3);
	self->child = clone(pmu_clone_fn, stack + PMU_CLONE_STACK,
			    CLONE_VM | SIGCHLD, NULL);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("child status 0x%x", status);
	}
	call_n(2);
	n = read_count(self->fd[0]);
	munmap(stack, PMU_CLONE_STACK);
	if (ut_impl_is_stock()) {
		EXPECT_EQ((uint64_t)3 + PMU_CLONE_CALLS, n);
		UT_STOCK_FAILS("counted %llu of %d", (unsigned long long)n,
			       3 + PMU_CLONE_CALLS + 2);
		return;
	}
	EXPECT_EQ((uint64_t)3 + PMU_CLONE_CALLS + 2, n);
}

/* pmu.zombie_leader's pipes: to the leader, to the worker, from the worker */
static int zl_pipe[3][2];
enum { ZL_LEADER, ZL_WORKER, ZL_TID };

/*
 * pmu.zombie_leader's worker thread: fix the perf context it runs with
 * (opening an event on itself changes the context's generation, so perf
 * swaps it no more), send its tid, wait for the go, call perf_func()
 * PMU_WORKER_CALLS times and end the process.
 */
static void *zl_worker(void *arg)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
	};
	pid_t tid = syscall(SYS_gettid);
	char c;

	if (syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0) < 0)
		_exit(10);
	if (write(zl_pipe[ZL_TID][1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(11);
	if (read(zl_pipe[ZL_WORKER][0], &c, 1) != 1)
		_exit(12);
	call_n(PMU_WORKER_CALLS);
	_exit(0);
}

/*
 * pmu.zombie_leader's leader: wait for the event, call perf_func()
 * PMU_LEADER_CALLS times, start the worker on this CPU, wait for the go
 * and exit, leaving the process to the worker.
 */
static void zl_leader(void)
{
	pthread_t th;
	char c;

	if (read(zl_pipe[ZL_LEADER][0], &c, 1) != 1)
		_exit(20);
	call_n(PMU_LEADER_CALLS);
	if (ut_pin_cpu())
		_exit(21);
	if (pthread_create(&th, NULL, zl_worker, NULL))
		_exit(22);
	if (read(zl_pipe[ZL_LEADER][0], &c, 1) != 1)
		_exit(23);
	pthread_exit(NULL);
}

/* Wait up to 10 s for the leader of @pid to be a zombie; true if it is. */
static bool leader_zombie(pid_t pid)
{
	char path[64], *s;
	bool z = false;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	for (i = 0; i < 10000 && !z; i++) {
		s = ut_read_file(path, NULL);
		z = s && strstr(s, "\nState:\tZ");
		free(s);
		if (!z)
			usleep(1000);
	}
	return z;
}

/*
 * An inherited event on a process counts the calls a thread makes after
 * the leader has exited (a zombie while the process lives), and an event
 * on that thread's tid counts them too. The worker first runs right after
 * the leader on the leader's CPU, so perf swaps their contexts: the worker
 * runs with the leader's, whose event's target is the leader.
 * FAILURE-MODES #24. Stock 6.1 matches a target by its mm, which a zombie
 * has not, and counts none of the worker's calls on that event.
 */
TEST_F(pmu, zombie_leader)
{
	const char *exe = ut_self_exe();
	struct perf_event_attr attr;
	int i, status = -1;
	uint64_t n;
	pid_t tid;

	if (no_pmu(_metadata))
		return;
	/*
	 * The leader's new thread inherits the event, whose path perf reads
	 * from the leader's memory again: exe is set before fork.
	 */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pipe(zl_pipe[i]));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		close(zl_pipe[ZL_LEADER][1]);
		close(zl_pipe[ZL_WORKER][1]);
		close(zl_pipe[ZL_TID][0]);
		zl_leader();
		_exit(24);
	}
	close(zl_pipe[ZL_LEADER][0]);
	close(zl_pipe[ZL_WORKER][0]);
	close(zl_pipe[ZL_TID][1]);
	ASSERT_EQ(0, ut_uprobe_attr(&attr, exe, self_off("perf_func"), false,
				    0));
	attr.inherit = 1;
	self->fd[0] = ut_perf_open(&attr, self->child);
	ASSERT_LE(0, self->fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->fd[0]));
	}
	ASSERT_EQ(1, write(zl_pipe[ZL_LEADER][1], "o", 1));
	ASSERT_EQ((ssize_t)sizeof(tid),
		  read(zl_pipe[ZL_TID][0], &tid, sizeof(tid))) {
		if (waitpid(self->child, &status, 0) == self->child)
			self->child = -1;
		TH_LOG("child status 0x%x", status);
	}
	ASSERT_NE(self->child, tid);
	attr.inherit = 0;
	self->fd[1] = ut_perf_open(&attr, tid);
	ASSERT_LE(0, self->fd[1]) {
		TH_LOG("perf_event_open(tid %d): %s", tid,
		       strerror(-self->fd[1]));
	}
	ASSERT_EQ(1, write(zl_pipe[ZL_LEADER][1], "x", 1));
	ASSERT_TRUE(leader_zombie(self->child));
	ASSERT_EQ(1, write(zl_pipe[ZL_WORKER][1], "g", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("child status 0x%x", status);
	}
	close(zl_pipe[ZL_LEADER][1]);
	close(zl_pipe[ZL_WORKER][1]);
	close(zl_pipe[ZL_TID][0]);
	EXPECT_EQ((uint64_t)PMU_WORKER_CALLS, read_count(self->fd[1]));
	n = read_count(self->fd[0]);
	/*
	 * Stock loses the worker's calls only when perf did swap the
	 * contexts, which this test cannot force: when it did not (seen in
	 * the arm64 guest), the worker's own inherited event counts them.
	 */
	if (ut_impl_is_stock()) {
		EXPECT_TRUE(n == PMU_LEADER_CALLS ||
			    n == PMU_LEADER_CALLS + PMU_WORKER_CALLS)
			TH_LOG("counted %llu", (unsigned long long)n);
		UT_STOCK_FAILS("counted %llu of %d", (unsigned long long)n,
			       PMU_LEADER_CALLS + PMU_WORKER_CALLS);
		return;
	}
	EXPECT_EQ((uint64_t)PMU_LEADER_CALLS + PMU_WORKER_CALLS, n);
}

/* One system-wide sampling event on one CPU, and its ring buffer. */
struct cc_event {
	int fd;
	char *buf;
	size_t len;
};

/* Open @attr on @cpu for all tasks, with a ring buffer; 0 or -errno. */
static int cc_open(struct cc_event *e, struct perf_event_attr *attr, int cpu)
{
	long page = sysconf(_SC_PAGESIZE);

	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_CALLCHAIN;
	attr->exclude_callchain_kernel = 1;
	attr->disabled = 1;
	e->fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (e->fd < 0)
		return -errno;
	e->len = (1 + CC_PAGES) * page;
	e->buf = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd,
		      0);
	if (e->buf == MAP_FAILED)
		return -errno;
	return 0;
}

/*
 * Count @e's samples (those with a user callchain whose first entry is
 * @ip, when @ip is not 0) and lost records (*@lost).
 */
static long cc_samples(struct cc_event *e, uint64_t ip, long *lost)
{
	struct perf_event_mmap_page *mp = (void *)e->buf;
	char *data = e->buf + mp->data_offset;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t pos, nr, i, *v;
	struct perf_event_header *h;
	long n = 0;

	for (pos = 0; pos + sizeof(*h) <= head && pos < mp->data_size;
	     pos += h->size) {
		h = (void *)(data + pos);
		if (!h->size)
			break;
		if (h->type == PERF_RECORD_LOST)
			(*lost)++;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		v = (uint64_t *)(h + 1);	/* ip, pid/tid, nr, ips[] */
		nr = v[2];
		if (!ip) {
			n++;
			continue;
		}
		for (i = 0; i + 1 < nr; i++)
			if (v[3 + i] == PERF_CONTEXT_USER) {
				n += v[4 + i] == ip;
				break;
			}
	}
	return n;
}

/*
 * Sampling with user callchains on every CPU, for all tasks: an entry and
 * a return probe on perf_exit_in() and the CPU clock, while 40 children
 * each call it 50 times and then exit inside a 51st call, a return still
 * pending (FAILURE-MODES #15: run on CONFIG=debug for KASAN). Every entry
 * is a sample whose callchain starts at perf_exit_in, each return is
 * counted (stock 6.1 now and then counts one more: logged as its
 * failure), no record is lost.
 */
TEST_F_TIMEOUT(pmu, callchain_while_exiting, 120)
{
	struct cc_event ent[CC_CPUS], ret[CC_CPUS], clk[CC_CPUS];
	long n_ent = 0, n_ret = 0, s_ent = 0, s_clk = 0, lost = 0;
	int ncpu, c, i, k, status;
	struct perf_event_attr attr;
	pid_t pid;

	if (no_pmu(_metadata))
		return;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LT(0, ncpu);
	if (ncpu > CC_CPUS)
		ncpu = CC_CPUS;
	for (c = 0; c < ncpu; c++) {
		ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(),
					    self_off("perf_exit_in"), false,
					    0));
		attr.sample_period = 1;
		ASSERT_EQ(0, cc_open(&ent[c], &attr, c));
		ASSERT_EQ(0, ut_uprobe_attr(&attr, ut_self_exe(),
					    self_off("perf_exit_in"), true, 0));
		attr.sample_period = 1;
		ASSERT_EQ(0, cc_open(&ret[c], &attr, c));
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		attr.freq = 1;
		attr.sample_freq = 4000;
		ASSERT_EQ(0, cc_open(&clk[c], &attr, c));
	}
	for (c = 0; c < ncpu; c++) {
		ASSERT_EQ(0, ioctl(ent[c].fd, PERF_EVENT_IOC_ENABLE, 0));
		ASSERT_EQ(0, ioctl(ret[c].fd, PERF_EVENT_IOC_ENABLE, 0));
		ASSERT_EQ(0, ioctl(clk[c].fd, PERF_EVENT_IOC_ENABLE, 0));
	}
	for (k = 0; k < CC_CHILDREN; k++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			for (i = 0; i < CC_CALLS; i++)
				if (perf_exit_in(-1 - i) != i)
					_exit(1);
			perf_exit_in(0);
			_exit(2);
		}
	}
	for (k = 0; k < CC_CHILDREN; k++) {
		pid = wait(&status);
		ASSERT_LT(0, pid);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			TH_LOG("child %d: status 0x%x", pid, status);
		}
	}
	for (c = 0; c < ncpu; c++) {
		ioctl(ent[c].fd, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(ret[c].fd, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(clk[c].fd, PERF_EVENT_IOC_DISABLE, 0);
		n_ent += read_count(ent[c].fd);
		n_ret += read_count(ret[c].fd);
		s_ent += cc_samples(&ent[c], (uintptr_t)perf_exit_in, &lost);
		cc_samples(&ret[c], 0, &lost);
		s_clk += cc_samples(&clk[c], 0, &lost);
	}
	EXPECT_EQ(CC_CHILDREN * (CC_CALLS + 1), n_ent);
	if (ut_impl_is_stock() && n_ret != CC_CHILDREN * CC_CALLS)
		/* seen once in four runs on CONFIG=full: 2001 */
		UT_STOCK_FAILS("it counted %ld returns of %d", n_ret,
			       CC_CHILDREN * CC_CALLS);
	else
		EXPECT_EQ(CC_CHILDREN * CC_CALLS, n_ret);
	EXPECT_EQ(n_ent, s_ent);
	EXPECT_EQ(0, lost);
	EXPECT_LT(0, s_clk);
	TH_LOG("%ld CPU clock samples", s_clk);
	for (c = 0; c < ncpu; c++) {
		munmap(ent[c].buf, ent[c].len);
		munmap(ret[c].buf, ret[c].len);
		munmap(clk[c].buf, clk[c].len);
		close(ent[c].fd);
		close(ret[c].fd);
		close(clk[c].fd);
	}
}

/* The "perf" tool: run @argv (a NULL terminated list after "perf"). */
static int run_perf(char *out, size_t size, const char *const args[])
{
	const char *argv[16];
	int i;

	argv[0] = PERF_BIN;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	return ut_run(argv, out, size);
}

FIXTURE(perftool) {
	char home[64];
	bool probed;
};

FIXTURE_SETUP(perftool)
{
}

FIXTURE_TEARDOWN(perftool)
{
	char out[4096];

	if (self->probed) {
		const char *const del[] = { "probe", "-q", "-d", "sdt_tick:*",
					    NULL };

		run_perf(out, sizeof(out), del);
	}
	if (self->home[0]) {
		const char *const rm[] = { "/bin/rm", "-rf", self->home, NULL };

		ut_run(rm, out, sizeof(out));
	}
}

/*
 * perf probe on the SDT marker tick:loop2 (via the build-id cache) sets the
 * semaphore, so perf stat counts every one of its 7 iterations.
 */
TEST_F_TIMEOUT(perftool, perf_probe_sdt, 110)
{
	const char *tick = ut_helper("tick");
	const char *const cache[] = { "buildid-cache", "--add", tick, NULL };
	const char *const probe[] = { "probe", "-x", tick, "sdt_tick:loop2",
				      NULL };
	const char *const stat[] = { "stat", "-x,", "-e", "sdt_tick:loop2",
				     "--", tick, "7", "1000", NULL };
	const char *const del[] = { "probe", "-d", "sdt_tick:*", NULL };
	char out[16384], *line, *save = NULL;
	long count = -1;
	int status;

	if (ut_no_tracefs(_metadata))
		return;
	if (!ut_file_exists(PERF_BIN))
		SKIP(return, PERF_BIN " not installed");
	snprintf(self->home, sizeof(self->home), "/tmp/ust_perf.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->home));
	ASSERT_EQ(0, setenv("HOME", self->home, 1));

	status = run_perf(out, sizeof(out), cache);
	ASSERT_EQ(0, status) {
		TH_LOG("perf buildid-cache: %s", out);
	}
	self->probed = true;
	status = run_perf(out, sizeof(out), probe);
	ASSERT_EQ(0, status) {
		TH_LOG("perf probe: %s", out);
	}
	ASSERT_TRUE(ut_event_dir_exists("sdt_tick", "loop2"));

	status = run_perf(out, sizeof(out), stat);
	ASSERT_EQ(0, status) {
		TH_LOG("perf stat: %s", out);
	}
	EXPECT_NE(NULL, strstr(out, "tick: done, loop2 semaphore=1\n")) {
		TH_LOG("perf stat output:\n%s", out);
	}
	/* the CSV line: "7,,sdt_tick:loop2,..." */
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, ",sdt_tick:loop2,")) {
			count = atol(line);
			break;
		}
	}
	EXPECT_EQ(7, count);

	status = run_perf(out, sizeof(out), del);
	EXPECT_EQ(0, status) {
		TH_LOG("perf probe -d: %s", out);
	}
	self->probed = false;
	EXPECT_FALSE(ut_group_dir_exists("sdt_tick"));
}

TEST_HARNESS_MAIN
