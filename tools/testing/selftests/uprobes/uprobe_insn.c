// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_insn: a uprobe on one instruction must not change what the
 * program computes.  Each test probes one instruction kind (targets are in
 * uprobe_targets.S and uprobe_targets_arm64.S), checks exact results and
 * the exact hit count.  Kinds that exist on one architecture only are
 * tested there: x86-64's multi-byte nop, push, pop, %rip-relative operands
 * and rel32 jump; arm64's store and load pairs with writeback,
 * pc-relative addresses, cbz, tbnz, the literal load, and the instructions
 * it emulates (uprobes.emulate).
 * On both, a debugger (ptrace) single-stepping over probed instructions,
 * and breaking, stepping and going on at one, sees what it sees without
 * the probes.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "../kselftest_harness.h"
#include "uprobe_targets.h"
#include "uprobe_util.h"

noipa long ui_ind_target(long x)
{
	return x ^ 0x5a5a;
}

FIXTURE(insn) {
	char grp[64];
	char ev[64];
};

FIXTURE_SETUP(insn)
{
}

FIXTURE_TEARDOWN(insn)
{
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/*
 * Put an enabled probe on label ui_<name>_insn, in group ust_<name> (into
 * @grp), event ust_<name>_e (into @ev).  Returns 0 or -errno.
 */
static int probe_insn(char *grp, char *ev, const char *name)
{
	char label[64];
	int64_t off;
	int ret;

	snprintf(grp, 64, "ust_%s", name);
	snprintf(ev, 64, "ust_%s_e", name);
	snprintf(label, sizeof(label), "ui_%s_insn", name);
	ut_group_cleanup(grp);
	if (ut_trace_clear())
		return -EIO;
	off = ut_elf_sym_offset(ut_self_exe(), label);
	if (off < 0)
		return -ENOENT;
	ret = ut_probe_add("p:%s/%s %s:0x%lx", grp, ev, ut_self_exe(),
			   (unsigned long)off);
	if (ret)
		return ret;
	return ut_event_enable(grp, ev, true);
}

/* Probe instruction @name; returns true if the test was skipped. */
static bool probe(struct __test_metadata *_metadata, char *grp, char *ev,
		  const char *name)
{
	if (ut_no_tracefs(_metadata))
		return true;
	ASSERT_EQ(0, probe_insn(grp, ev, name));
	return false;
}

#define PROBE(name)	probe(_metadata, self->grp, self->ev, name)
#define HITS()		ut_trace_count(self->ev, getpid())

/* A probed nop: results and hit count unchanged. */
TEST_F(insn, nop)
{
	if (PROBE("nop"))
		return;
	EXPECT_EQ(1, ui_nop(0));
	EXPECT_EQ(-99, ui_nop(-100));
	EXPECT_EQ(0x1000, ui_nop(0xfff));
	EXPECT_EQ(3, HITS());
}

#if defined(__x86_64__)
/* A probed multi-byte nopl. */
TEST_F(insn, nopl)
{
	if (PROBE("nopl"))
		return;
	EXPECT_EQ(2, ui_nopl(0));
	EXPECT_EQ(44, ui_nopl(42));
	EXPECT_EQ(2, HITS());
}

/* the stack ui_push_on() pushes on, room for a signal frame below */
static long wp_stack[8192];

/*
 * A user-mode hardware watchpoint of @type on the 8 bytes at @addr, counted
 * by perf as a debugger's would trigger: its fd, or -1 after a SKIP.
 */
static int watch(struct __test_metadata *_metadata, void *addr, int type)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = type;
	attr.bp_addr = (uintptr_t)addr;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		SKIP(return -1, "CONFIG_HAVE_HW_BREAKPOINT: %s says %s",
		     "perf_event_open(PERF_TYPE_BREAKPOINT)", strerror(errno));
	return fd;
}

static uint64_t watched(int fd)
{
	uint64_t count = 0;

	if (read(fd, &count, sizeof(count)) != sizeof(count))
		return -1;
	return count;
}

/*
 * A hardware watchpoint (a debugger's: user mode only) on the stack slot a
 * probed push writes sees every push, as without the probe: 5 unprobed
 * and 5 probed pushes, 10 counted, 5 hits. Stock 6.1 emulates the push in
 * the kernel, which the watchpoint does not see: 5 counted.
 */
TEST_F(insn, push_watched)
{
	long *top = &wp_stack[8192];
	uint64_t count;
	long i;
	int fd;

	fd = watch(_metadata, &top[-1], HW_BREAKPOINT_W);
	if (fd < 0)
		return;
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i, ui_push_on(i, top));
	ASSERT_EQ(5, watched(fd));
	if (PROBE("push_on")) {
		close(fd);
		return;
	}
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i + 100, ui_push_on(i + 100, top));
	EXPECT_EQ(5, HITS());
	count = watched(fd);
	close(fd);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(5, count);
		UT_STOCK_FAILS("the watchpoint saw %llu of the 5 probed pushes",
			       (unsigned long long)count - 5);
		return;
	}
	EXPECT_EQ(10, count) {
		TH_LOG("the watchpoint saw %llu of the 5 probed pushes",
		       (unsigned long long)count - 5);
	}
}

/*
 * Stock 6.1 single-steps a RIP-relative mov and a pop out of line, and so
 * does ours with @layer (the parameter of the emulation or the booster
 * that runs it without a step) off. Under QEMU's TCG a data breakpoint
 * hit by a single-stepped instruction raises a second #DB at the first
 * instruction of the kernel's #DB handler, and the guest stalls (IST
 * recursion): those tests do not run there.
 */
static bool steps_it(struct __test_metadata *_metadata, const char *layer)
{
	if (ut_impl_is_stock()) {
		TH_LOG("not run on stock 6.1: it single-steps the instruction, %s",
		       "which a watchpoint stalls under TCG");
		return true;
	}
	if (ut_bool_param(layer) != 0)
		return false;
	TH_LOG("not run with %s=0: the instruction is single-stepped, %s",
	       layer, "which a watchpoint stalls under TCG");
	return true;
}

/*
 * A read/write watchpoint on the global a probed RIP-relative load reads
 * counts every load, probed or not: 5 + 5.
 */
TEST_F(insn, riprel_load_watched)
{
	long i;
	int fd;

	if (steps_it(_metadata, UT_EMULATE))
		return;
	fd = watch(_metadata, &ui_data, HW_BREAKPOINT_R | HW_BREAKPOINT_W);
	if (fd < 0)
		return;
	ui_data = 0x1234;	/* a write before the count starts */
	ASSERT_EQ(1, watched(fd));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0x1234, ui_riprel_load());
	ASSERT_EQ(6, watched(fd));
	if (PROBE("riprel_load")) {
		close(fd);
		return;
	}
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0x1234, ui_riprel_load());
	EXPECT_EQ(5, HITS());
	EXPECT_EQ(11, watched(fd));
	close(fd);
}

/*
 * A write watchpoint on the global a probed RIP-relative store writes
 * counts every store, probed or not (the load after it is not a write).
 */
TEST_F(insn, riprel_store_watched)
{
	long i;
	int fd;

	if (steps_it(_metadata, UT_EMULATE))
		return;
	fd = watch(_metadata, &ui_store_word, HW_BREAKPOINT_W);
	if (fd < 0)
		return;
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i, ui_riprel_store(i));
	ASSERT_EQ(5, watched(fd));
	if (PROBE("riprel_store")) {
		close(fd);
		return;
	}
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i + 7, ui_riprel_store(i + 7));
	EXPECT_EQ(5, HITS());
	EXPECT_EQ(10, watched(fd));
	close(fd);
}

/* DR7 for DR0: enabled (L0), 8 bytes (LEN0 = 10), on writes (RW0 = 01). */
#define WP_DR7_W8_DR0	(1UL | 1UL << 16 | 2UL << 18)
/* The same on reads and writes (RW0 = 11). */
#define WP_DR7_RW8_DR0	(1UL | 3UL << 16 | 2UL << 18)

/*
 * Trace @pid until it stops with something other than a SIGTRAP or exits:
 * each SIGTRAP must be DR0's (DR6.B0, TRAP_HWBKPT), reported at @ip, both
 * in the registers and in si_addr. Returns the number of those stops (-1
 * if ptrace failed); *@status gets the last wait status.
 */
static int watch_stops(struct __test_metadata *_metadata, pid_t pid,
		       unsigned long ip, int *status)
{
	struct user_regs_struct regs;
	siginfo_t si;
	long dr6;
	int n = 0;

	for (;;) {
		if (ptrace(PTRACE_CONT, pid, 0, 0) ||
		    waitpid(pid, status, 0) != pid)
			return -1;
		if (!WIFSTOPPED(*status) || WSTOPSIG(*status) != SIGTRAP)
			return n;
		if (ptrace(PTRACE_GETSIGINFO, pid, 0, &si) ||
		    ptrace(PTRACE_GETREGS, pid, 0, &regs))
			return -1;
		dr6 = ptrace(PTRACE_PEEKUSER, pid,
			     offsetof(struct user, u_debugreg[6]), 0);
		EXPECT_EQ(TRAP_HWBKPT, si.si_code);
		EXPECT_EQ(ip, (unsigned long)si.si_addr);
		EXPECT_EQ(ip, regs.rip);
		EXPECT_EQ(1, dr6 & 0xf);
		n++;
	}
}

/*
 * Run 5 unprobed and then 5 probed ui_push_on() (or, @pop, ui_pop_from())
 * in a child whose debugger watches the stack slot they write (read) with
 * DR0. Returns the number of watchpoint stops of the probed calls after
 * checking those of the unprobed ones (5), the child's exit and the hits.
 */
static int watch_ptrace(struct __test_metadata *_metadata,
			struct _test_data_insn *self, bool pop)
{
	unsigned long next = pop ? (unsigned long)ui_pop_from_insn + 1 :
			     (unsigned long)ui_push_on_insn + 1;
	long *top = &wp_stack[8192];
	int status, before, after;
	pid_t pid;
	long i;

	pid = fork();
	ASSERT_LE(0, pid) return -1;
	if (!pid) {
		top[-1] = 42;
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(3);
		raise(SIGSTOP);
		for (i = 0; i < 10; i++) {
			if (i == 5)
				raise(SIGUSR1);
			if (pop ? ui_pop_from(top) != 42 :
			    ui_push_on(i, top) != i)
				_exit(2);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0)) return -1;
	ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP)
		return -1;
	ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid,
			    offsetof(struct user, u_debugreg[0]), &top[-1]))
		return -1;
	ASSERT_EQ(0, ptrace(PTRACE_POKEUSER, pid,
			    offsetof(struct user, u_debugreg[7]),
			    pop ? WP_DR7_RW8_DR0 : WP_DR7_W8_DR0))
		return -1;
	before = watch_stops(_metadata, pid, next, &status);
	EXPECT_EQ(5, before);
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGUSR1 ||
	    PROBE(pop ? "pop_from" : "push_on")) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ASSERT_TRUE(0) {
			TH_LOG("child not stopped by SIGUSR1 or no probe");
		}
		return -1;
	}
	after = watch_stops(_metadata, pid, next, &status);
	if (!WIFEXITED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(5, ut_trace_count(self->ev, pid));
	return after;
}

/*
 * A debugger's watchpoint (ptrace, DR0/DR7) on the slot a probed push
 * writes stops the task right after every push, probed or not, with DR6
 * saying DR0 and the ip of the next instruction: 5 and 5 stops. Stock 6.1
 * emulates the push unseen: no stop for the probed ones.
 */
TEST_F(insn, push_watched_ptrace)
{
	int after;

	if (ut_no_tracefs(_metadata))
		return;
	after = watch_ptrace(_metadata, self, false);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(0, after);
		UT_STOCK_FAILS("the debugger stopped after %d of the 5 probed pushes",
			       after);
		return;
	}
	EXPECT_EQ(5, after);
}

/*
 * The same for a pop (run out of line with no second trap): the debugger
 * is stopped after each probed pop at the next instruction of the program,
 * never at the copy's address.
 */
TEST_F(insn, pop_watched_ptrace)
{
	if (ut_no_tracefs(_metadata) || steps_it(_metadata, UT_BOOST))
		return;
	EXPECT_EQ(5, watch_ptrace(_metadata, self, true));
}

/* A probed push stores the value and moves %rsp by exactly 8. */
TEST_F(insn, push)
{
	if (PROBE("push"))
		return;
	EXPECT_EQ(8, ui_push(0));
	EXPECT_EQ(0x123456789aL + 8, ui_push(0x123456789aL));
	EXPECT_EQ(-8 + 8, ui_push(-8));
	EXPECT_EQ(3, HITS());
}

/* A probed pop loads the value and moves %rsp by exactly 8. */
TEST_F(insn, pop)
{
	if (PROBE("pop"))
		return;
	EXPECT_EQ(8, ui_pop(0));
	EXPECT_EQ(0x7777 + 8, ui_pop(0x7777));
	EXPECT_EQ(2, HITS());
}

#endif /* __x86_64__ */

/* A probed register to register mov. */
TEST_F(insn, mov_reg_reg)
{
	if (PROBE("mov"))
		return;
	EXPECT_EQ(2, ui_mov(1, 2));
	EXPECT_EQ(-5, ui_mov(0x10, -5));
	EXPECT_EQ(0, ui_mov(9, 0));
	EXPECT_EQ(3, HITS());
}

/* A probed add computes the sum and the carry flag consumed by adc. */
TEST_F(insn, add)
{
	if (PROBE("add"))
		return;
	EXPECT_EQ(12, ui_add(5, 7));
	/* 0xffff...ff + 2 = 1 with carry set, adc adds it: 2 */
	EXPECT_EQ(2, ui_add(-1, 2));
	EXPECT_EQ(0, ui_add(0, 0));
	EXPECT_EQ(3, HITS());
}

/* The start and end of this process's XOL area ("[uprobes]"); 0 if none. */
static unsigned long xol_area(unsigned long *end)
{
	unsigned long start = 0, lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[uprobes]") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		start = lo;
		*end = hi;
		break;
	}
	fclose(f);
	return start;
}

/*
 * After a hit that ran the add out of line, the first page of the XOL
 * area holds nothing but a filler byte and the copies: no kernel memory
 * left uninitialised (CVE-2024-49975). At most 256 other bytes.
 */
TEST_F(insn, xol_page_initialised)
{
	unsigned long start, end, i, other = 0;
	unsigned int count[256] = { 0 }, filler = 0;
	const unsigned char *page;

	if (PROBE("add"))
		return;
	EXPECT_EQ(12, ui_add(5, 7));
	EXPECT_EQ(1, HITS());
	start = xol_area(&end);
	ASSERT_NE(0, start);
#if defined(__aarch64__)
	SKIP(return, "the XOL area is execute-only on arm64: not readable");
#endif
	page = (const unsigned char *)start;
	for (i = 0; i < 4096; i++)
		count[page[i]]++;
	for (i = 0; i < 256; i++)
		if (count[i] > count[filler])
			filler = i;
	other = 4096 - count[filler];
	EXPECT_GE(256, other) {
		TH_LOG("%lu bytes of the XOL page are not the filler 0x%02x",
		       other, filler);
	}
}

/*
 * In a child (which has an XOL area of its own once it hits): hit the
 * probed add, then @op its XOL area (munmap, or mremap to another place:
 * @moved tells whether that worked), then hit it again. Exits 0 if both
 * adds were right, 2 if not, 3 if @op failed other than with EINVAL, 5 if
 * there was no XOL area.
 */
static void xol_child(bool unmap)
{
	unsigned long start, end;
	void *dst, *to;

	if (ui_add(5, 7) != 12)
		_exit(2);
	start = xol_area(&end);
	if (!start)
		_exit(5);
	if (unmap) {
		if (munmap((void *)start, end - start))
			_exit(3);
		_exit(ui_add(1, 2) == 3 ? 0 : 2);
	}
	dst = mmap(NULL, end - start, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (dst == MAP_FAILED)
		_exit(3);
	to = mremap((void *)start, end - start, end - start,
		    MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (to == MAP_FAILED && errno != EINVAL)
		_exit(3);
	_exit(ui_add(1, 2) == 3 ? (to == MAP_FAILED ? 0 : 4) : 2);
}

/* Run xol_child(@unmap); its wait status, *@hits its hits. */
static int xol_run(struct __test_metadata *_metadata,
		   struct _test_data_insn *self, bool unmap, int *hits)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid)
		xol_child(unmap);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	*hits = ut_trace_count(self->ev, pid);
	TH_LOG("child: %s %d, %d hits",
	       WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
	       *hits);
	return status;
}

/*
 * mremap() of the XOL area (where tasks' slots and return addresses
 * point) is refused with EINVAL and the probe keeps working: 2 hits, both
 * adds right. Stock 6.1 moves it, and its next out-of-line step faults
 * (expected there).
 */
TEST_F(insn, xol_mremap_refused)
{
	int status, hits;

	if (PROBE("add"))
		return;
	status = xol_run(_metadata, self, false, &hits);
	EXPECT_EQ(2, hits);
	if (ut_impl_is_stock()) {
		EXPECT_TRUE(WIFSIGNALED(status));
		UT_STOCK_FAILS("mremap moved the XOL area; the next hit failed");
		return;
	}
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * A program that unmaps its XOL area and then hits the probe is the only
 * one hurt: it dies of SIGSEGV (its copy's slot is gone) after 2 hits;
 * this process's probe goes on working.
 */
TEST_F(insn, xol_munmap_then_hit)
{
	int status, hits;

	if (PROBE("add"))
		return;
	status = xol_run(_metadata, self, true, &hits);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	EXPECT_EQ(2, hits);
	EXPECT_EQ(7, ui_add(3, 4));
	EXPECT_EQ(1, HITS());
}

/* the probes of tf_self_step and ptrace_step, in ui_tf_region() */
static const char *const tf_probes[] = { "tf_nop", "tf_add", "tf_push",
					 "tf_rip" };
#define TF_PROBES	4
#define TF_MAX_IPS	64

/* Where the steps through ui_tf_region() stopped, in order. */
static uintptr_t tf_ips[TF_MAX_IPS];
static int tf_n;

static void tf_record(uintptr_t ip)
{
	if (ip >= (uintptr_t)ui_tf_region && ip < (uintptr_t)ui_tf_region_end &&
	    tf_n < TF_MAX_IPS)
		tf_ips[tf_n++] = ip;
}

/* Probe the instructions of ui_tf_region(); true if skipped or failed. */
static bool tf_probe_all(struct __test_metadata *_metadata,
			 struct _test_data_insn *self)
{
	int i;

	if (ut_no_tracefs(_metadata))
		return true;
	for (i = 0; i < TF_PROBES; i++) {
		ASSERT_EQ(0, probe_insn(self->grp, self->ev, tf_probes[i]))
			return true;
	}
	return false;
}

/* Each probe of ui_tf_region() was hit @n times by @pid; groups removed. */
static void tf_expect_hits(struct __test_metadata *_metadata, pid_t pid,
			   int n)
{
	char grp[64], ev[64];
	int i;

	for (i = 0; i < TF_PROBES; i++) {
		snprintf(ev, sizeof(ev), "ust_%s_e", tf_probes[i]);
		EXPECT_EQ(n, ut_trace_count(ev, pid)) {
			TH_LOG("probe %s", tf_probes[i]);
		}
	}
	/* (a group's removal empties the trace) */
	for (i = 0; i < TF_PROBES; i++) {
		snprintf(grp, sizeof(grp), "ust_%s", tf_probes[i]);
		ut_group_cleanup(grp);
	}
}

/*
 * A child traced by this process, stopped before it calls ui_tf_region(5)
 * (it exits 0 if the result is right); its pid, or -1.
 */
static pid_t tf_traced_child(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(3);
		raise(SIGSTOP);
		_exit(ui_tf_region(5) == 106 ? 0 : 2);
	}
	if (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status))
		return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * Single-step (PTRACE_SINGLESTEP) a child through ui_tf_region(5) and
 * record where it stopped in it (tf_ips, tf_n); the child's wait status.
 */
static int tf_ptrace_run(struct __test_metadata *_metadata)
{
	int status, steps = 0;
	uintptr_t pc;
	bool inside = false;
	pid_t pid;

	tf_n = 0;
	pid = tf_traced_child();
	if (pid < 0)
		return -1;
	while (steps++ < 100000) {
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) ||
		    waitpid(pid, &status, 0) != pid)
			goto kill;
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP ||
		    ut_tracee_pc(pid, &pc, 0))
			break;
		tf_record(pc);
		if (pc >= (uintptr_t)ui_tf_region &&
		    pc < (uintptr_t)ui_tf_region_end)
			inside = true;
		else if (inside)
			break;
	}
	if (WIFSTOPPED(status) &&
	    (ptrace(PTRACE_CONT, pid, 0, 0) ||
	     waitpid(pid, &status, 0) != pid))
		goto kill;
	return status;
kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * A debugger single-stepping (PTRACE_SINGLESTEP) through the same probed
 * instructions stops after each one exactly as without the probes; the
 * probes hit once each, the child's result is right. arm64's 6.1 code
 * ends the debugger's step with the step of the copy (one stop in the
 * probed code): a stock 6.1 that stops elsewhere is logged as its failure.
 */
TEST_F(insn, ptrace_step)
{
	uintptr_t ref[TF_MAX_IPS];
	int i, nref, status;

	UT_WRITE_ONCE(ui_data, 100);
	status = tf_ptrace_run(_metadata);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	nref = tf_n;
	memcpy(ref, tf_ips, sizeof(ref));
	EXPECT_EQ(7, nref);
	if (tf_probe_all(_metadata, self))
		return;
	status = tf_ptrace_run(_metadata);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("child status %#x", status);
	}
	if (ut_impl_is_stock() && tf_n != nref) {
		/* arm64: the step ends the debugger's single-step */
		UT_STOCK_FAILS("%d stops in the probed code instead of %d",
			       tf_n, nref);
		tf_expect_hits(_metadata, 0, 1);
		return;
	}
	EXPECT_EQ(nref, tf_n);
	for (i = 0; i < nref && i < tf_n; i++)
		EXPECT_EQ(ref[i] - (uintptr_t)ui_tf_region,
			  tf_ips[i] - (uintptr_t)ui_tf_region);
	/* the hits are the child's: its pid is gone, count them all */
	tf_expect_hits(_metadata, 0, 1);
}

/* A debugger's breakpoint instruction, over the first bytes of @word. */
static long dbg_bp_word(long word)
{
#if defined(__x86_64__)
	return (word & ~0xffL) | 0xcc;			/* int3 */
#else
	return (word & ~0xffffffffL) | 0xd4200000L;	/* BRK #0 */
#endif
}

/* One stop of the tracee: signal, si_code, pc - ui_tf_region. */
struct dbg_stop {
	int sig;
	int code;
	long pc;
};

/*
 * What a debugger that breaks at ui_tf_add_insn sees, as gdb does it:
 * its breakpoint written over the instruction (the word read first, then
 * the breakpoint), the stop there, the instruction put back, a step over
 * it, the breakpoint written again, and the run to the end. The stops in
 * @st[3] (breakpoint, step, exit status in .code); 0 or -1.
 */
static int dbg_session(struct dbg_stop st[3])
{
	uintptr_t at = (uintptr_t)ui_tf_add_insn, pc;
	long orig, bp;
	siginfo_t si;
	int status, i;
	pid_t pid;

	memset(st, 0, 3 * sizeof(*st));
	pid = tf_traced_child();
	if (pid < 0)
		return -1;
	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, at, 0);
	if (errno)
		goto kill;
	bp = dbg_bp_word(orig);
	if (ptrace(PTRACE_POKETEXT, pid, at, bp))
		goto kill;
	for (i = 0; i < 2; i++) {
		if (ptrace(i ? PTRACE_SINGLESTEP : PTRACE_CONT, pid, 0, 0) ||
		    waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
		    ptrace(PTRACE_GETSIGINFO, pid, 0, &si) ||
		    ut_tracee_pc(pid, &pc, i ? 0 : at))
			goto kill;
		st[i].sig = WSTOPSIG(status);
		st[i].code = si.si_code;
		st[i].pc = (long)(pc - (uintptr_t)ui_tf_region);
		/* at the breakpoint: the instruction back, to step over it */
		if (ptrace(PTRACE_POKETEXT, pid, at, i ? bp : orig))
			goto kill;
	}
	if (ptrace(PTRACE_CONT, pid, 0, 0) || waitpid(pid, &status, 0) != pid)
		goto kill;
	st[2].code = status;
	return 0;
kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * A debugger's breakpoint on a probed instruction, as gdb uses one (break,
 * step over it, go on), sees exactly the stops, signals and pcs it sees
 * without the probe, and the probe counts that execution once. On arm64
 * 6.1's default is_trap_insn() takes the debugger's BRK #0 for new code
 * and switches the probe off (0 hits); a stock 6.1 that differs in any of
 * these is logged as its failure.
 */
TEST_F(insn, ptrace_breakpoint_over_probe)
{
	struct dbg_stop plain[3], probed[3];
	int i, ret;
	long hits;

	UT_WRITE_ONCE(ui_data, 100);
	ASSERT_EQ(0, dbg_session(plain));
	EXPECT_EQ(SIGTRAP, plain[0].sig);
	EXPECT_EQ(SIGTRAP, plain[1].sig);
	EXPECT_TRUE(WIFEXITED(plain[2].code) && !WEXITSTATUS(plain[2].code));
	if (PROBE("tf_add"))
		return;
	ret = dbg_session(probed);
	hits = ut_trace_count(self->ev, 0);	/* the child's pid is gone */
	if (ut_impl_is_stock() &&
	    (ret || hits != 1 || memcmp(plain, probed, sizeof(plain)))) {
		UT_STOCK_FAILS("session %d, %ld hits, stops %s",
			       ret, hits, memcmp(plain, probed, sizeof(plain)) ?
			       "differ" : "the same");
		return;
	}
	ASSERT_EQ(0, ret);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(plain[i].sig, probed[i].sig);
		EXPECT_EQ(plain[i].code, probed[i].code) {
			TH_LOG("stop %d: si_code %d with the probe, %d without",
			       i, probed[i].code, plain[i].code);
		}
		EXPECT_EQ(plain[i].pc, probed[i].pc) {
			TH_LOG("stop %d: pc +%ld with the probe, +%ld without",
			       i, probed[i].pc, plain[i].pc);
		}
	}
	EXPECT_EQ(1, hits);
}

/*
 * The signal storm of signal_storm_out_of_line, on a probed instruction
 * that runs out of line: x86-64's RIP-relative add (with a scratch
 * register), arm64's add of an extended register (with a branch back).
 */
#if defined(__x86_64__)
#define STORM_INSN	"rip_add"
static bool storm_call(long i)
{
	return ui_rip_add(i) == 2 * i + 1000 + 8;
}
#else
#define STORM_INSN	"add"
static bool storm_call(long i)
{
	return ui_add(i, 1000) == i + 1000;
}
#endif

static int storm_stop;
static long storm_signals, storm_in_xol;
static unsigned long storm_xol_lo, storm_xol_hi;

static void storm_sig(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned long ip = UT_UC_PC(uc);

	storm_signals++;
	if (ip >= storm_xol_lo && ip < storm_xol_hi)
		storm_in_xol++;
}

static void *storm_thread(void *arg)
{
	pid_t tid = *(pid_t *)arg;

	while (!UT_READ_ONCE(storm_stop))
		syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
	return NULL;
}

/*
 * A SIGUSR1 storm from another thread while a probed instruction that
 * runs out of line (STORM_INSN) runs at least 2000 times, until 50
 * signals were handled: every result right, every call a hit
 * (uprobe_profile), and no signal frame ever shows the XOL area. The loop
 * starts once the first signal came, so a storm thread that a loaded host
 * schedules late does not stretch it to its 200000-call bound.
 */
TEST_F_TIMEOUT(insn, signal_storm_out_of_line, 120)
{
	struct sigaction sa = { .sa_sigaction = storm_sig,
				.sa_flags = SA_SIGINFO }, old;
	long i, bad = 0;
	pthread_t th;
	pid_t tid;

	UT_WRITE_ONCE(ui_data, 1000);
	if (PROBE(STORM_INSN))
		return;
	EXPECT_TRUE(storm_call(1));	/* maps the XOL area */
	storm_xol_lo = xol_area(&storm_xol_hi);
	ASSERT_NE(0, storm_xol_lo);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old));
	tid = syscall(SYS_gettid);
	UT_WRITE_ONCE(storm_stop, 0);
	ASSERT_EQ(0, pthread_create(&th, NULL, storm_thread, &tid));
	while (!UT_READ_ONCE(storm_signals))
		sched_yield();
	for (i = 0; i < 2000 ||
	     (UT_READ_ONCE(storm_signals) < 50 && i < 200000); i++)
		if (!storm_call(i))
			bad++;
	UT_WRITE_ONCE(storm_stop, 1);
	ASSERT_EQ(0, pthread_join(th, NULL));
	sigaction(SIGUSR1, &old, NULL);
	EXPECT_EQ(0, bad);
	EXPECT_LE(50, UT_READ_ONCE(storm_signals));
	EXPECT_EQ(0, storm_in_xol);
	EXPECT_EQ(i + 1, ut_profile_hits(self->ev));
}

#if defined(__x86_64__)
#define X86_TF		0x100UL

static void tf_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	tf_record(uc->uc_mcontext.gregs[REG_RIP]);
}

/* ui_tf_region(@x) with EFLAGS.TF set (switched below the red zone). */
static noipa long tf_run(long x)
{
	long r;

	tf_n = 0;
	asm volatile("add $-128, %%rsp\n\tpushfq\n\torq %0, (%%rsp)\n\t"
		     "popfq\n\tsub $-128, %%rsp" : : "i" (X86_TF)
		     : "memory", "cc");
	r = ui_tf_region(x);
	asm volatile("add $-128, %%rsp\n\tpushfq\n\tandq %0, (%%rsp)\n\t"
		     "popfq\n\tsub $-128, %%rsp" : : "i" (~X86_TF)
		     : "memory", "cc");
	return r;
}

/*
 * A program single-stepping itself (EFLAGS.TF and a SIGTRAP handler)
 * through probed instructions of every kind traps after each instruction
 * exactly as without the probes, the probes hit once each, the result the
 * same: the kernel's own stepping neither eats nor adds a trap.
 */
TEST_F(insn, tf_self_step)
{
	struct sigaction sa = { .sa_sigaction = tf_trap,
				.sa_flags = SA_SIGINFO }, old;
	uintptr_t ref[TF_MAX_IPS];
	int i, nref;

	ASSERT_EQ(0, sigaction(SIGTRAP, &sa, &old));
	UT_WRITE_ONCE(ui_data, 100);
	EXPECT_EQ(106, tf_run(5));
	nref = tf_n;
	memcpy(ref, tf_ips, sizeof(ref));
	EXPECT_EQ(7, nref);
	if (tf_probe_all(_metadata, self))
		goto out;
	EXPECT_EQ(106, tf_run(5));
	EXPECT_EQ(nref, tf_n);
	for (i = 0; i < nref && i < tf_n; i++)
		EXPECT_EQ(ref[i] - (uintptr_t)ui_tf_region,
			  tf_ips[i] - (uintptr_t)ui_tf_region);
	tf_expect_hits(_metadata, getpid(), 1);
out:
	sigaction(SIGTRAP, &old, NULL);
}

/* an instruction uprobes must refuse, at label ui_ref_<name> */
struct refused {
	const char *name;
	int ours;	/* -errno enabling it gives here */
	int stock;	/* and on stock 6.1: 0 if it takes it */
};

#define ENOTSUPP	524	/* the kernel's, not user space's ENOTSUP */

static const struct refused refused[] = {
	{ "int3", -ENOTSUPP, -ENOTSUPP },
	{ "int1", -ENOTSUPP, -ENOTSUPP },
	{ "int80", -ENOTSUPP, -ENOTSUPP },
	{ "syscall", -ENOTSUPP, 0 },
	{ "sysenter", -ENOTSUPP, 0 },
	{ "hlt", -ENOTSUPP, -ENOTSUPP },
	{ "cli", -ENOTSUPP, -ENOTSUPP },
	{ "sti", -ENOTSUPP, -ENOTSUPP },
	{ "in", -ENOTSUPP, -ENOTSUPP },
	{ "out", -ENOTSUPP, -ENOTSUPP },
	{ "insb", -ENOTSUPP, -ENOTSUPP },
	{ "outsb", -ENOTSUPP, -ENOTSUPP },
	{ "lock_add", -ENOTSUPP, -ENOTSUPP },
	{ "ud2", -ENOTSUPP, 0 },
	{ "ud1", -ENOTSUPP, 0 },
	{ "mov_ss", -ENOTSUPP, -ENOTSUPP },
	{ "pop_fs", -ENOTSUPP, 0 },
	{ "iretq", -ENOTSUPP, -ENOTSUPP },
	{ "popf", -ENOTSUPP, 0 },
	{ "es_mov", -ENOTSUPP, -ENOTSUPP },
	{ "ljmp", -ENOTSUPP, 0 },
	{ "lret", -ENOTSUPP, 0 },
	{ "sgdt", -ENOTSUPP, 0 },
	{ "xbegin", -ENOTSUPP, 0 },
	{ "mov_cr", -ENOTSUPP, 0 },
};

/*
 * Each instruction uprobes must refuse (traps, system calls, I/O,
 * interrupt flag, lock and segment prefixes, segment loads, popf, far
 * transfers, xbegin, privileged ones) fails to enable with its errno and
 * leaves the text untouched. Stock 6.1 takes some (the table says which).
 */
TEST_F(insn, refused_opcodes)
{
	const struct refused *r;
	char sym[64], ev[64];
	uint8_t *insn, first;
	int64_t off, base = ut_elf_sym_offset(ut_self_exe(), "ui_refused");
	int ret, stock_takes = 0;

	if (ut_no_tracefs(_metadata))
		return;
	ASSERT_LT(0, base);
	snprintf(self->grp, sizeof(self->grp), "ust_refused");
	ut_group_cleanup(self->grp);
	for (r = refused; r < refused + sizeof(refused) / sizeof(*r); r++) {
		snprintf(sym, sizeof(sym), "ui_ref_%s", r->name);
		snprintf(ev, sizeof(ev), "ust_ref_%s", r->name);
		off = ut_elf_sym_offset(ut_self_exe(), sym);
		ASSERT_LT(0, off);
		/* the same section: file offsets and addresses differ alike */
		insn = (uint8_t *)ui_refused + (off - base);
		first = *insn;
		ASSERT_EQ(0, ut_define_at(self->grp, ev, ut_self_exe(), off, 0));
		ret = ut_event_enable(self->grp, ev, true);
		EXPECT_EQ(ut_impl_is_stock() ? r->stock : r->ours, ret) {
			TH_LOG("%s: enabling gave %d", r->name, ret);
		}
		if (!ret) {
			stock_takes++;
			EXPECT_EQ(0, ut_event_enable(self->grp, ev, false));
		}
		EXPECT_EQ(first, *insn) {
			TH_LOG("%s: its first byte is now %#x", r->name, *insn);
		}
		EXPECT_EQ(0, ut_probe_del(self->grp, ev));
	}
	if (stock_takes)
		UT_STOCK_FAILS("it takes %d of them", stock_takes);
}

/* RIP-relative add (stepped with a scratch register): same sums, 3 hits. */
TEST_F(insn, rip_add)
{
	UT_WRITE_ONCE(ui_data, 1000);
	EXPECT_EQ(2 * 5 + 1000 + 8, ui_rip_add(5));
	if (PROBE("rip_add"))
		return;
	EXPECT_EQ(2 * 5 + 1000 + 8, ui_rip_add(5));
	EXPECT_EQ(2 * -9 + 1000 + 8, ui_rip_add(-9));
	UT_WRITE_ONCE(ui_data, -1);
	EXPECT_EQ(2 * 7 - 1 + 8, ui_rip_add(7));
	EXPECT_EQ(3, HITS());
}

/* The same add encoded with a REX.B prefix bit, which RIP-relative ignores. */
TEST_F(insn, rip_add_rexb)
{
	UT_WRITE_ONCE(ui_data, 1000);
	EXPECT_EQ(2 * 5 + 1000 + 8, ui_rip_add_rexb(5));
	if (PROBE("rip_add_rexb"))
		return;
	EXPECT_EQ(2 * 5 + 1000 + 8, ui_rip_add_rexb(5));
	EXPECT_EQ(2 * -9 + 1000 + 8, ui_rip_add_rexb(-9));
	EXPECT_EQ(2, HITS());
}

/*
 * RIP-relative cmpxchg (%rax implicit): a matching compare stores, a
 * failing one loads %rax; the words around the target stay.
 */
TEST_F(insn, rip_cmpxchg)
{
	if (PROBE("rip_cmpxchg"))
		return;
	UT_WRITE_ONCE(ui_store_word, 10);
	EXPECT_EQ(10 + 3 + 20 + 10, ui_rip_cmpxchg(10, 20));
	EXPECT_EQ(20, UT_READ_ONCE(ui_store_word));
	EXPECT_EQ(20 + 3 + 30 + 10, ui_rip_cmpxchg(10, 30));
	EXPECT_EQ(20, UT_READ_ONCE(ui_store_word));
	EXPECT_EQ(0x5555555555555555L, UT_READ_ONCE(ui_store_guard_lo));
	EXPECT_EQ(0xaaaaaaaaaaaaaaaaUL, (unsigned long)UT_READ_ONCE(ui_store_guard_hi));
	EXPECT_EQ(2, HITS());
}

/*
 * RIP-relative cmpxchg16b (%rdx:%rax and %rcx:%rbx implicit): a matching
 * compare stores the new pair, a failing one loads the old one into
 * %rdx:%rax; the bystander %rsi, the out pointer in %rdi and the words
 * around the pair stay, 2 hits.
 */
TEST_F(insn, rip_cmpxchg16b)
{
	unsigned int a, b, c, d;
	uint64_t out[6];
	int i;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_CMPXCHG16B))
		SKIP(return, "the CPU has no cmpxchg16b");
	if (PROBE("rip_cmpxchg16b"))
		return;
	UT_WRITE_ONCE(ui_pair[0], 10);
	UT_WRITE_ONCE(ui_pair[1], 20);
	ui_rip_cmpxchg16b(out, 10, 20, 30, 40);
	EXPECT_EQ(10, out[0]);
	EXPECT_EQ(20, out[1]);
	EXPECT_EQ(30, out[2]);
	EXPECT_EQ(40, out[3]);
	EXPECT_EQ(0x5151, out[4]);
	EXPECT_EQ(1, out[5]);
	EXPECT_EQ(30, UT_READ_ONCE(ui_pair[0]));
	EXPECT_EQ(40, UT_READ_ONCE(ui_pair[1]));
	ui_rip_cmpxchg16b(out, 10, 20, 50, 60);
	EXPECT_EQ(30, out[0]);
	EXPECT_EQ(40, out[1]);
	EXPECT_EQ(50, out[2]);
	EXPECT_EQ(60, out[3]);
	EXPECT_EQ(0x5151, out[4]);
	EXPECT_EQ(0, out[5]);
	EXPECT_EQ(30, UT_READ_ONCE(ui_pair[0]));
	EXPECT_EQ(40, UT_READ_ONCE(ui_pair[1]));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0x5555555555555555UL, UT_READ_ONCE(ui_pair_guard_lo[i]));
		EXPECT_EQ(0xaaaaaaaaaaaaaaaaUL, UT_READ_ONCE(ui_pair_guard_hi[i]));
	}
	EXPECT_EQ(2, HITS());
}

/*
 * RIP-relative shl by %cl (the count implicit in %cl): the variable
 * shifted, %rcx and the bystanders %rax and %rdx kept, 2 hits.
 */
TEST_F(insn, rip_shl_cl)
{
	if (PROBE("rip_shl_cl"))
		return;
	UT_WRITE_ONCE(ui_data, 3);
	EXPECT_EQ(0x77 + 0x99 + 4, ui_rip_shl_cl(4));
	EXPECT_EQ(48, UT_READ_ONCE(ui_data));
	EXPECT_EQ(0x77 + 0x99 + 1, ui_rip_shl_cl(1));
	EXPECT_EQ(96, UT_READ_ONCE(ui_data));
	EXPECT_EQ(0x5555555555555555L, UT_READ_ONCE(ui_store_guard_lo));
	EXPECT_EQ(2, HITS());
}

static long mulx_expect(long x, long y)
{
	unsigned __int128 p = (unsigned __int128)(unsigned long)x *
			      (unsigned long)y;

	return (long)((unsigned long)p + 7 * (unsigned long)(p >> 64) + 3);
}

/*
 * RIP-relative mulx (VEX, BMI2: %rdx implicit, a destination in
 * VEX.vvvv): the 128-bit product, 2 hits.
 */
TEST_F(insn, rip_mulx)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_BMI2))
		SKIP(return, "the CPU has no BMI2 (mulx)");
	UT_WRITE_ONCE(ui_data, 0x100000001L);
	EXPECT_EQ(mulx_expect(0x300000005L, 0x100000001L),
		  ui_rip_mulx(0x300000005L));
	if (PROBE("rip_mulx"))
		return;
	EXPECT_EQ(mulx_expect(0x300000005L, 0x100000001L),
		  ui_rip_mulx(0x300000005L));
	EXPECT_EQ(mulx_expect(-3, 0x100000001L), ui_rip_mulx(-3));
	EXPECT_EQ(2, HITS());
}

/*
 * RIP-relative pcmpestri (SSE4.2: %rax and %rdx implicit, result in
 * %rcx): where "upr" starts in "hello uprobes!!!" (6), and that "xyz"
 * is nowhere (16), 2 hits.
 */
TEST_F(insn, rip_pcmpestri)
{
	static const char upr[16] = "upr", xyz[16] = "xyz";
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_2))
		SKIP(return, "the CPU has no SSE4.2 (pcmpestri)");
	EXPECT_EQ(6 + 15, ui_rip_pcmpestri(upr, 3));
	if (PROBE("rip_pcmpestri"))
		return;
	EXPECT_EQ(6 + 15, ui_rip_pcmpestri(upr, 3));
	EXPECT_EQ(16 + 15, ui_rip_pcmpestri(xyz, 3));
	EXPECT_EQ(2, HITS());
}

/* A probed %rip relative load reads the right variable. */
TEST_F(insn, riprel_load)
{
	if (PROBE("riprel_load"))
		return;
	UT_WRITE_ONCE(ui_data, 0x0123456789abcdefL);
	EXPECT_EQ(0x0123456789abcdefL, ui_riprel_load());
	UT_WRITE_ONCE(ui_data, -3);
	EXPECT_EQ(-3, ui_riprel_load());
	EXPECT_EQ(2, HITS());
}

/* A probed %rip relative store writes exactly the right 8 bytes. */
TEST_F(insn, riprel_store)
{
	if (PROBE("riprel_store"))
		return;
	EXPECT_EQ(0x1122334455667788L, ui_riprel_store(0x1122334455667788L));
	EXPECT_EQ(0x1122334455667788L, UT_READ_ONCE(ui_store_word));
	EXPECT_EQ(77, ui_riprel_store(77));
	EXPECT_EQ(77, UT_READ_ONCE(ui_store_word));
	EXPECT_EQ(0x5555555555555555L, UT_READ_ONCE(ui_store_guard_lo));
	EXPECT_EQ(0xaaaaaaaaaaaaaaaaUL,
		  (unsigned long)UT_READ_ONCE(ui_store_guard_hi));
	EXPECT_EQ(2, HITS());
}

/* A probed %rip relative lea yields the variable's address. */
TEST_F(insn, riprel_lea)
{
	if (PROBE("riprel_lea"))
		return;
	EXPECT_EQ((long)(uintptr_t)&ui_data, ui_riprel_lea());
	EXPECT_EQ((long)(uintptr_t)&ui_data, ui_riprel_lea());
	EXPECT_EQ(2, HITS());
}

#endif /* __x86_64__ */

#if defined(__aarch64__)
/* A probed stp with pre-index writeback stores the pair, sp moves by 16. */
TEST_F(insn, stp_pre_index)
{
	if (PROBE("stp"))
		return;
	EXPECT_EQ(5 - 3 + 16, ui_stp(5, 3));
	EXPECT_EQ(-0x123456789aL + 16, ui_stp(0, 0x123456789aL));
	EXPECT_EQ(16, ui_stp(-7, -7));
	EXPECT_EQ(3, HITS());
}

/* A probed ldp with post-index writeback loads the pair, sp moves by 16. */
TEST_F(insn, ldp_post_index)
{
	if (PROBE("ldp"))
		return;
	EXPECT_EQ(5 - 3 + 16, ui_ldp(5, 3));
	EXPECT_EQ(0x7777 + 16, ui_ldp(0x7777, 0));
	EXPECT_EQ(2, HITS());
}

/* The labels of ui_frame's instructions, ui_frame_<name>_insn. */
static const char *const frame_insns[] = {
	"frame_bti", "frame_stp", "frame_mov_fp", "frame_str", "frame_sub",
	"frame_stur", "frame_mov", "frame_str_w", "frame_ldur",
	"frame_ldr_w", "frame_add", "frame_ldr", "frame_ldp",
};

/* The columns of ut_stats_counts() */
enum { ST_HITS, ST_EMULATED, ST_STEPPED, ST_BOOSTED, ST_MISSED };

/*
 * Probe each instruction of ui_frame in turn and call it three times:
 * exact results, three hits, and (ours) uprobe_stats says each hit ran
 * the way column @how counts (ST_EMULATED, ST_STEPPED or ST_BOOSTED).
 * False if the test is to end.
 */
static bool frame_each_insn(struct __test_metadata *_metadata, char *grp,
			    char *ev, int how)
{
	int col;

	unsigned long long v[5] = { 0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(frame_insns); i++) {
		if (probe(_metadata, grp, ev, frame_insns[i]))
			return false;
		EXPECT_EQ(1 + 2 + 2 + 1, ui_frame(1, 2)) TH_LOG("%s", ev);
		EXPECT_EQ(-5 + -1 + 0xffffffffL + 1, ui_frame(-5, -1));
		EXPECT_EQ(7 + 0x100000003L + 3 + 1, ui_frame(7, 0x100000003L));
		EXPECT_EQ(3, ut_trace_count(ev, getpid())) TH_LOG("%s", ev);
		if (ut_impl_is_stock()) {
			EXPECT_EQ(-1, ut_stats_counts(grp, ev, v));
		} else {
			EXPECT_EQ(0, ut_stats_counts(grp, ev, v)) TH_LOG("%s", ev);
			EXPECT_EQ(3ULL, v[ST_HITS]) TH_LOG("%s: hits", ev);
			for (col = ST_EMULATED; col <= ST_MISSED; col++)
				EXPECT_EQ(col == how ? 3ULL : 0ULL, v[col])
					TH_LOG("%s: column %d", ev, col);
		}
		ut_group_cleanup(grp);
	}
	grp[0] = '\0';
	return true;
}

/*
 * Every instruction of a compiler's function entry and exit, probed, is
 * emulated with exact results: no single-step. Stock 6.1 steps them all
 * and has no uprobe_stats to say so.
 */
TEST_F(insn, frame_insns_emulated)
{
	if (frame_each_insn(_metadata, self->grp, self->ev, ST_EMULATED) &&
	    ut_impl_is_stock())
		UT_STOCK_FAILS("no uprobe_stats: 6.1 steps every instruction");
}

/*
 * With uprobes.emulate=0 the same instructions run out of line, each
 * copy followed by its branch back: boosted, no single-step.
 */
TEST_F(insn, frame_insns_boosted_unemulated)
{
	int was = ut_emulate(false);

	if (ut_impl_is_stock()) {
		EXPECT_EQ(-1, was);
		UT_STOCK_FAILS("no uprobes.emulate parameter");
		return;
	}
	ASSERT_LE(0, was);
	frame_each_insn(_metadata, self->grp, self->ev, ST_BOOSTED);
	EXPECT_EQ(0, ut_emulate(was));
}

/* With uprobes.emulate=0 and uprobes.boost=0 they are stepped, as in 6.1. */
TEST_F(insn, frame_insns_stepped_unemulated_unboosted)
{
	int was = ut_emulate(false), boost = ut_boost(false);

	if (ut_impl_is_stock()) {
		EXPECT_EQ(-1, was);
		EXPECT_EQ(-1, boost);
		UT_STOCK_FAILS("no uprobes.emulate and uprobes.boost parameters");
		return;
	}
	ASSERT_LE(0, was);
	ASSERT_LE(0, boost);
	frame_each_insn(_metadata, self->grp, self->ev, ST_STEPPED);
	EXPECT_EQ(0, ut_emulate(was));
	EXPECT_EQ(0, ut_boost(boost));
}

/* What ui_alu() computes, by C's rules. */
static long alu_ref(long x)
{
	uint64_t u = x, w6 = (uint32_t)(u + 1);
	uint64_t lo = u < 1, lt = x < 1;
	uint64_t vs = (uint32_t)u == 0x7fffffff, cs = (uint32_t)u == 0xffffffff;

	return 0x12345678 ^ 0xffffffffUL ^ w6 << 8 ^ lo << 40 ^ lt << 41 ^
	       vs << 42 ^ cs << 43;
}

/*
 * movz, movk, movn, cmp and adds with an immediate, probed in turn, give
 * exact results and flags (carry, overflow, signed and unsigned order at
 * their edges), each hit emulated (ours).
 */
TEST_F(insn, alu_insns_emulated)
{
	static const char *const names[] = {
		"alu_movz", "alu_movk", "alu_movn", "alu_cmp", "alu_adds",
	};
	static const long xs[] = {
		0, 1, 2, -1, 0x7fffffff, 0xffffffff, 0x80000000,
		LONG_MIN, 0x7fffffffffffffffL,
	};
	unsigned long long v[5] = { 0 };
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (PROBE(names[i]))
			return;
		for (k = 0; k < ARRAY_SIZE(xs); k++)
			EXPECT_EQ(alu_ref(xs[k]), ui_alu(xs[k]))
				TH_LOG("%s: x %#lx", names[i], xs[k]);
		EXPECT_EQ((int)ARRAY_SIZE(xs), HITS()) TH_LOG("%s", names[i]);
		if (ut_impl_is_stock()) {
			EXPECT_EQ(-1, ut_stats_counts(self->grp, self->ev, v));
		} else {
			EXPECT_EQ(0, ut_stats_counts(self->grp, self->ev, v));
			EXPECT_EQ(ARRAY_SIZE(xs), v[1]) TH_LOG("%s: emulated", names[i]);
			EXPECT_EQ(0ULL, v[2]) TH_LOG("%s: stepped", names[i]);
		}
		/* each in a group of its own: the teardown removes the last */
		ut_group_cleanup(self->grp);
		EXPECT_FALSE(ut_uprobe_events_has(self->grp, self->ev));
	}
	if (ut_impl_is_stock())
		UT_STOCK_FAILS("no uprobe_stats: 6.1 steps these");
}

/* NZCV, as mrs reads it, of the @bits-bit AddWithCarry(@a, @b, @cin). */
static uint64_t nzcv_add(uint64_t a, uint64_t b, int cin, int bits)
{
	uint64_t mask = bits == 64 ? ~0ULL : 0xffffffffULL, res;
	unsigned __int128 usum;
	__int128 ssum, sa, sb, sres;

	a &= mask;
	b &= mask;
	usum = (unsigned __int128)a + b + cin;
	res = (uint64_t)usum & mask;
	sa = bits == 64 ? (int64_t)a : (int32_t)a;
	sb = bits == 64 ? (int64_t)b : (int32_t)b;
	sres = bits == 64 ? (int64_t)res : (int32_t)res;
	ssum = sa + sb + cin;
	return (res >> (bits - 1)) << 31 | (uint64_t)!res << 30 |
	       (uint64_t)(usum >> bits != 0) << 29 | (uint64_t)(ssum != sres) << 28;
}

static uint64_t nzcv_logic(uint64_t res, int bits)
{
	return (res >> (bits - 1) & 1) << 31 | (uint64_t)!res << 30;
}

/* What ui_a_@name(@x, @y) computes, by C's rules. */
static long alu_reg_ref(const char *name, long x, long y)
{
	uint64_t u = x, v = y;
	uint32_t w = u, wy = v;

	if (!strcmp(name, "cmp"))
		return nzcv_add(u, ~v, 1, 64);
	if (!strcmp(name, "cmn_w"))
		return nzcv_add(w, (uint32_t)(v << 3), 0, 32);
	if (!strcmp(name, "sub_asr"))
		return u - (uint64_t)(y >> 4);
	if (!strcmp(name, "and_lsl"))
		return u & v << 3;
	if (!strcmp(name, "eor_w_ror"))
		return w ^ (wy >> 7 | wy << 25);
	if (!strcmp(name, "orn_asr"))
		return u | ~(uint64_t)(y >> 5);
	if (!strcmp(name, "tst"))
		return nzcv_logic(u & v, 64);
	if (!strcmp(name, "bics_w"))
		return (uint64_t)(w & ~wy) | nzcv_logic(w & ~wy, 32) << 32;
	if (!strcmp(name, "lsr"))
		return u >> 13;
	if (!strcmp(name, "asr_w"))
		return (uint32_t)((int32_t)w >> 3);
	if (!strcmp(name, "lsl"))
		return u << 9;
	if (!strcmp(name, "sbfx"))
		return (int64_t)(u << 52) >> 56;
	if (!strcmp(name, "sxtw"))
		return (int32_t)w;
	if (!strcmp(name, "uxtb"))
		return u & 0xff;
	if (!strcmp(name, "bfi"))
		return (u & ~(0xffffULL << 8)) | (v & 0xffff) << 8;
	if (!strcmp(name, "sbfiz"))
		return (uint64_t)((int64_t)(u << 54) >> 54) << 40;
	if (!strcmp(name, "madd"))
		return u * v + v;
	if (!strcmp(name, "msub_w"))
		return (uint32_t)(wy - w * wy);
	if (!strcmp(name, "csel"))
		return u > v ? x : y;
	if (!strcmp(name, "cset"))
		return x < y;
	if (!strcmp(name, "csneg"))
		return x == y ? u : -v;
	if (!strcmp(name, "csinv_w"))
		return (int32_t)w >= (int32_t)wy ? w : ~wy;
	if (!strcmp(name, "ldr_reg"))
		return ((long *)(uintptr_t)y)[x];
	if (!strcmp(name, "ldrb_sxtw"))
		return ((unsigned char *)(uintptr_t)y)[(int32_t)w];
	return x;	/* str_reg */
}

/*
 * Register-only instructions (shifted-register arithmetic and logic with
 * their flags, bitfield moves, multiply-add, conditional selects) and
 * loads and stores with a register offset, probed one at a time, give
 * what C computes for operands at the carry, overflow and sign edges,
 * and each hit is emulated (ours; stock 6.1 steps them).
 */
TEST_F(insn, alu_reg_insns_emulated)
{
	static const struct {
		const char *name;
		long (*fn)(long x, long y);
		bool mem;
	} ops[] = {
#define A(n, m) { #n, ui_a_##n, m }
		A(cmp, 0), A(cmn_w, 0), A(sub_asr, 0), A(and_lsl, 0),
		A(eor_w_ror, 0), A(orn_asr, 0), A(tst, 0), A(bics_w, 0),
		A(lsr, 0), A(asr_w, 0), A(lsl, 0), A(sbfx, 0), A(sxtw, 0),
		A(uxtb, 0), A(bfi, 0), A(sbfiz, 0), A(madd, 0), A(msub_w, 0),
		A(csel, 0), A(cset, 0), A(csneg, 0), A(csinv_w, 0),
		A(ldr_reg, 1), A(ldrb_sxtw, 1), A(str_reg, 1),
#undef A
	};
	static const long xy[][2] = {
		{ 0, 0 }, { 1, 2 }, { -1, 1 }, { 0x7fffffffffffffffL, -1 },
		{ LONG_MIN, 1 }, { 0x7fffffff, 1 },
		{ 0xffffffffL, 0xffffffffL }, { -5, -5 },
		{ 0x123456789abcdef0L, 0x0fedcba987654321L },
		{ 0x80000000L, 0x7fffffffL },
	};
	static const long idx[] = { 0, 3, -2, 7 };
	long buf[16], want, got;
	unsigned long long v[5] = { 0 };
	char name[32];
	size_t i, k, n;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		snprintf(name, sizeof(name), "a_%s", ops[i].name);
		if (PROBE(name))
			return;
		n = ops[i].mem ? ARRAY_SIZE(idx) : ARRAY_SIZE(xy);
		for (k = 0; k < n; k++) {
			long x = ops[i].mem ? idx[k] : xy[k][0];
			long y = ops[i].mem ? (long)(uintptr_t)&buf[8] : xy[k][1];

			for (size_t b = 0; b < ARRAY_SIZE(buf); b++)
				buf[b] = 0x0101010101010101L * (long)(b + 3) + b;
			want = alu_reg_ref(ops[i].name, x, y);
			got = ops[i].fn(x, y);
			EXPECT_EQ(want, got)
				TH_LOG("%s(%#lx, %#lx)", ops[i].name, x, y);
			if (!strcmp(ops[i].name, "str_reg"))
				EXPECT_EQ(x, buf[8 + x]) TH_LOG("str_reg: stored");
		}
		EXPECT_EQ((int)n, HITS()) TH_LOG("%s", ops[i].name);
		if (ut_impl_is_stock()) {
			EXPECT_EQ(-1, ut_stats_counts(self->grp, self->ev, v));
		} else {
			EXPECT_EQ(0, ut_stats_counts(self->grp, self->ev, v));
			EXPECT_EQ(n, v[1]) TH_LOG("%s: emulated", ops[i].name);
			EXPECT_EQ(0ULL, v[2]) TH_LOG("%s: stepped", ops[i].name);
		}
		/* each in a group of its own: the teardown removes the last */
		ut_group_cleanup(self->grp);
		EXPECT_FALSE(ut_uprobe_events_has(self->grp, self->ev));
	}
	if (ut_impl_is_stock())
		UT_STOCK_FAILS("no uprobe_stats: 6.1 steps these");
}

/*
 * An stp into a page not yet faulted in runs out of line with its branch
 * back (boosted), which faults the page in, and is emulated once the page
 * is there; both store the pair.
 */
TEST_F(insn, stp_untouched_page_boosted)
{
	long page = sysconf(_SC_PAGESIZE), *a, *b;
	unsigned long long v[5];
	unsigned char in_core;
	char *map;

	map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	a = (long *)(map + page);
	b = (long *)(map + 3 * page);
	a[-1] = 0;
	if (PROBE("stp_far"))
		goto unmap;
	ASSERT_EQ(0, mincore(map + 2 * page, page, &in_core));
	ASSERT_EQ(0, in_core & 1);
	EXPECT_EQ(a - 2, ui_stp_far(a, 10));
	EXPECT_EQ(b - 2, ui_stp_far(b, 20));
	EXPECT_EQ(b - 2, ui_stp_far(b, 30));
	EXPECT_EQ(10, a[-2]);
	EXPECT_EQ(11, a[-1]);
	EXPECT_EQ(30, b[-2]);
	EXPECT_EQ(31, b[-1]);
	EXPECT_EQ(3, HITS());
	if (ut_impl_is_stock()) {
		EXPECT_EQ(-1, ut_stats_counts(self->grp, self->ev, v));
		UT_STOCK_FAILS("no uprobe_stats: 6.1 steps every hit");
		goto unmap;
	}
	ASSERT_EQ(0, ut_stats_counts(self->grp, self->ev, v));
	EXPECT_EQ(3ULL, v[ST_HITS]);
	EXPECT_EQ(2ULL, v[ST_EMULATED]);
	EXPECT_EQ(0ULL, v[ST_STEPPED]);
	EXPECT_EQ(1ULL, v[ST_BOOSTED]);
unmap:
	munmap(map, 3 * page);
}

/* How far a B reaches either way: a boosted copy's branch back. */
#define BRANCH_REACH	(128UL << 20)

/* The distance between @a and @b. */
static unsigned long distance(unsigned long a, unsigned long b)
{
	return a > b ? a - b : b - a;
}

/*
 * The XOL area that a hit maps lies within a branch's reach of the probed
 * code, so that a copy there can branch back to it. Stock 6.1 maps it at
 * the top of the address space, out of that reach.
 */
TEST_F(insn, xol_area_near_code)
{
	unsigned long lo, hi, code = (unsigned long)ui_add_insn;

	if (PROBE("add"))
		return;
	EXPECT_EQ(12, ui_add(5, 7));	/* maps the XOL area */
	EXPECT_EQ(1, HITS());
	lo = xol_area(&hi);
	ASSERT_NE(0, lo);
	TH_LOG("code %#lx, XOL area %#lx-%#lx", code, lo, hi);
	if (ut_impl_is_stock() && (distance(lo, code) >= BRANCH_REACH ||
				   distance(hi, code) >= BRANCH_REACH)) {
		UT_STOCK_FAILS("the XOL area is %#lx bytes from the code",
			       distance(lo, code));
		return;
	}
	EXPECT_GT(BRANCH_REACH, distance(lo, code));
	EXPECT_GT(BRANCH_REACH, distance(hi, code));
}

/* ui_add's type */
typedef long (*add_fn)(long x, long y);

/*
 * The page of the test binary that holds ui_add, mapped once more at a
 * free address 1 to 8 GiB below it; ui_add there (the probe is installed
 * in that mapping too), or NULL. *@map gets the mapping.
 */
static add_fn map_add_far(void **map)
{
	long page = sysconf(_SC_PAGESIZE);
	int64_t off = ut_elf_sym_offset(ut_self_exe(), "ui_add_insn");
	unsigned long code = (unsigned long)ui_add_insn, at;
	void *m = MAP_FAILED;
	int fd, i;

	if (off < 0)
		return NULL;
	fd = open(ut_self_exe(), O_RDONLY);
	if (fd < 0)
		return NULL;
	for (i = 1; i <= 8 && m == MAP_FAILED; i++) {
		at = (code - ((unsigned long)i << 30)) & ~(page - 1);
		m = mmap((void *)at, page, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd,
			 off & ~(page - 1));
	}
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	*map = m;
	return (add_fn)((char *)m + (off & (page - 1)));
}

/*
 * ui_add's code mapped a second time, more than a branch's reach from the
 * XOL area that its first hit mapped near the first mapping: a copy there
 * could not branch back, so those hits are stepped; the others are
 * boosted; every sum right. Stock 6.1 steps them all and has no
 * uprobe_stats.
 */
TEST_F(insn, boost_out_of_reach_stepped)
{
	unsigned long long v[5] = { 0 };
	unsigned long lo, hi;
	add_fn far;
	void *map = NULL;

	if (PROBE("add"))
		return;
	EXPECT_EQ(12, ui_add(5, 7));	/* maps the XOL area */
	lo = xol_area(&hi);
	ASSERT_NE(0, lo);
	far = map_add_far(&map);
	ASSERT_NE(NULL, far) TH_LOG("no room 1-8 GiB below the code");
	TH_LOG("XOL area %#lx-%#lx, far copy %p", lo, hi, map);
	EXPECT_LE(BRANCH_REACH, distance(lo, (unsigned long)far));
	EXPECT_LE(BRANCH_REACH, distance(hi, (unsigned long)far));
	EXPECT_EQ(3, far(1, 2));
	EXPECT_EQ(12, far(5, 7));
	EXPECT_EQ(3, ui_add(1, 2));
	EXPECT_EQ(4, HITS());
	munmap(map, sysconf(_SC_PAGESIZE));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(-1, ut_stats_counts(self->grp, self->ev, v));
		UT_STOCK_FAILS("no uprobe_stats: 6.1 steps every hit");
		return;
	}
	ASSERT_EQ(0, ut_stats_counts(self->grp, self->ev, v));
	EXPECT_EQ(4ULL, v[ST_HITS]);
	EXPECT_EQ(2ULL, v[ST_STEPPED]);
	EXPECT_EQ(2ULL, v[ST_BOOSTED]);
}

/*
 * A probe on a pc-relative literal load reads the right variable, emulated
 * and, with uprobes.emulate=0, stepped from a copy that loads through its
 * destination register. Stock 6.1 can neither step it out of line nor
 * simulate it: it refuses the probe with EINVAL, leaving no breakpoint.
 */
TEST_F(insn, ldr_literal)
{
	unsigned long long v[5] = { 0 };
	int ret, was, pass;

	if (ut_no_tracefs(_metadata))
		return;
	ret = probe_insn(self->grp, self->ev, "ldr_literal");
	if (ut_impl_is_stock()) {
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_EQ(0, ut_event_enabled(self->grp, self->ev));
		EXPECT_FALSE(ut_is_bp(ui_ldr_literal_insn));
		UT_WRITE_ONCE(ui_data, -3);
		EXPECT_EQ(-3, ui_ldr_literal());
		EXPECT_EQ(0, HITS());
		UT_STOCK_FAILS("a literal load cannot be probed");
		return;
	}
	ASSERT_EQ(0, ret);
	was = ut_emulate(true);
	ASSERT_LE(0, was);
	for (pass = 0; pass < 2; pass++) {
		ASSERT_LE(0, ut_emulate(pass == 0));
		UT_WRITE_ONCE(ui_data, 0x0123456789abcdefL);
		EXPECT_EQ(0x0123456789abcdefL, ui_ldr_literal());
		UT_WRITE_ONCE(ui_data, -3);
		EXPECT_EQ(-3, ui_ldr_literal());
	}
	EXPECT_EQ(0, ut_emulate(was));
	EXPECT_EQ(4, HITS());
	EXPECT_EQ(0, ut_stats_counts(self->grp, self->ev, v));
	EXPECT_EQ(2ULL, v[1]);	/* emulated */
	EXPECT_EQ(2ULL, v[2]);	/* stepped */
}

/* A probed adr yields the variable's address. */
TEST_F(insn, adr)
{
	if (PROBE("adr"))
		return;
	EXPECT_EQ((long)(uintptr_t)&ui_data, ui_adr());
	EXPECT_EQ((long)(uintptr_t)&ui_data, ui_adr());
	EXPECT_EQ(2, HITS());
}

/* A probed adrp yields the address of the variable's 4 KiB page. */
TEST_F(insn, adrp)
{
	if (PROBE("adrp"))
		return;
	EXPECT_EQ((long)((uintptr_t)&ui_data & ~(uintptr_t)0xfff), ui_adrp());
	EXPECT_EQ((long)((uintptr_t)&ui_data & ~(uintptr_t)0xfff), ui_adrp());
	EXPECT_EQ(2, HITS());
}

/* A probed cbz, taken and not taken. */
TEST_F(insn, cbz)
{
	if (PROBE("cbz"))
		return;
	EXPECT_EQ(100, ui_cbz(0));
	EXPECT_EQ(200, ui_cbz(1));
	EXPECT_EQ(200, ui_cbz(0x100000000L));
	EXPECT_EQ(3, HITS());
}

/* A probed tbnz on bit 33, taken and not taken. */
TEST_F(insn, tbnz)
{
	if (PROBE("tbnz"))
		return;
	EXPECT_EQ(100, ui_tbnz(0x200000000L));
	EXPECT_EQ(200, ui_tbnz(0x1ffffffffL));
	EXPECT_EQ(100, ui_tbnz(-1));
	EXPECT_EQ(3, HITS());
}
#endif /* __aarch64__ */

/* A probed call reaches the callee with the right return address. */
TEST_F(insn, call)
{
	if (PROBE("call"))
		return;
	EXPECT_EQ((long)(uintptr_t)ui_call_ret, ui_call(0));
	EXPECT_EQ((long)(uintptr_t)ui_call_ret, ui_call(1));
	EXPECT_EQ((long)(uintptr_t)ui_call_ret, ui_call(2));
	EXPECT_EQ(3, HITS());
}

/* A probed indirect call through a register. */
TEST_F(insn, call_indirect)
{
	if (PROBE("call_ind"))
		return;
	EXPECT_EQ(0x5a5a ^ 1, ui_call_ind(ui_ind_target, 1));
	EXPECT_EQ(0x5a5a ^ 0x1234, ui_call_ind(ui_ind_target, 0x1234));
	EXPECT_EQ(2, HITS());
}

/* A probed jump skips the code it jumps over. */
TEST_F(insn, jmp)
{
	if (PROBE("jmp"))
		return;
	EXPECT_EQ(11, ui_jmp(10));
	EXPECT_EQ(0, ui_jmp(-1));
	EXPECT_EQ(2, HITS());
}

#if defined(__x86_64__)
static long ui_ind_callee(long x)
{
	return 3 * x;
}

/*
 * A probed call through a pointer at the top of the stack reads the
 * pointer before it pushes the return address over it: call *(%rsp).
 */
TEST_F(insn, call_mem)
{
	if (PROBE("call_mem"))
		return;
	EXPECT_EQ(3 * 7 + 1, ui_call_mem(ui_ind_callee, 7));
	EXPECT_EQ(3 * 9 + 1, ui_call_mem(ui_ind_callee, 9));
	EXPECT_EQ(2, HITS());
}

/* A probed jmp with a 32-bit displacement. */
TEST_F(insn, jmp32)
{
	if (PROBE("jmp32"))
		return;
	EXPECT_EQ(13, ui_jmp32(10));
	EXPECT_EQ(3, ui_jmp32(0));
	EXPECT_EQ(2, HITS());
}

#endif /* __x86_64__ */

/* A probed conditional jump that is taken. */
TEST_F(insn, jcc_taken)
{
	if (PROBE("jcc"))
		return;
	EXPECT_EQ(100, ui_jcc(5, 5));
	EXPECT_EQ(100, ui_jcc(-1, -1));
	EXPECT_EQ(100, ui_jcc(0, 0));
	EXPECT_EQ(3, HITS());
}

/* A probed conditional jump that is not taken. */
TEST_F(insn, jcc_not_taken)
{
	if (PROBE("jcc"))
		return;
	EXPECT_EQ(200, ui_jcc(5, 6));
	EXPECT_EQ(200, ui_jcc(-1, 1));
	EXPECT_EQ(200, ui_jcc(0, 0x100000000L));
	EXPECT_EQ(3, HITS());
}

/* A probed ret returns to the caller with the right value. */
TEST_F(insn, ret)
{
	if (PROBE("ret"))
		return;
	EXPECT_EQ(1, ui_ret(0));
	EXPECT_EQ(100, ui_ret(99));
	EXPECT_EQ(2, HITS());
}

/* what the SIGSEGV handler saw */
static uint64_t segv_addr, segv_pc;
static int segv_count, segv_code;

static void segv_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	UT_WRITE_ONCE(segv_count, UT_READ_ONCE(segv_count) + 1);
	UT_WRITE_ONCE(segv_addr, (uintptr_t)si->si_addr);
	UT_WRITE_ONCE(segv_code, si->si_code);
	UT_WRITE_ONCE(segv_pc, UT_UC_PC(uc));
	UT_UC_PC(uc) = (uintptr_t)ui_fault_fixup;
}

/*
 * A probed faulting load: SIGSEGV arrives as without the probe, with the
 * same si_addr and si_code, and the ucontext's pc is the original load.
 */
TEST_F(insn, fault)
{
	struct sigaction sa = {
		.sa_sigaction = segv_handler,
		.sa_flags = SA_SIGINFO,
	};
	uint64_t base_addr, base_pc;
	int base_code, i;
	char *page;
	long *bad;

	if (ut_no_tracefs(_metadata))
		return;
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	bad = (long *)(page + 0x48);
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));

	/* baseline, without the probe */
	EXPECT_EQ(0x5ee, ui_fault(bad));
	ASSERT_EQ(1, UT_READ_ONCE(segv_count));
	base_addr = UT_READ_ONCE(segv_addr);
	base_pc = UT_READ_ONCE(segv_pc);
	base_code = UT_READ_ONCE(segv_code);
	EXPECT_EQ((uintptr_t)bad, base_addr);
	EXPECT_EQ((uintptr_t)ui_fault_insn, base_pc);
	EXPECT_EQ(SEGV_ACCERR, base_code);

	ASSERT_EQ(0, probe_insn(self->grp, self->ev, "fault"));
	for (i = 0; i < 3; i++) {
		UT_WRITE_ONCE(segv_addr, 0);
		UT_WRITE_ONCE(segv_pc, 0);
		UT_WRITE_ONCE(segv_code, 0);
		EXPECT_EQ(0x5ee, ui_fault(bad));
		EXPECT_EQ(i + 2, UT_READ_ONCE(segv_count));
		EXPECT_EQ(base_addr, UT_READ_ONCE(segv_addr));
		EXPECT_EQ(base_pc, UT_READ_ONCE(segv_pc));
		EXPECT_EQ(base_code, UT_READ_ONCE(segv_code));
	}
	/* the load still works on good memory */
	UT_WRITE_ONCE(ui_data, 31337);
	EXPECT_EQ(31337, ui_fault(&ui_data));
	EXPECT_EQ(4, UT_READ_ONCE(segv_count));
	EXPECT_EQ(4, HITS());
	munmap(page, 4096);
}

TEST_HARNESS_MAIN
