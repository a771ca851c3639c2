// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_lifetime: uprobes across the life of processes and mappings:
 * processes started before and after enabling, fork, exec, threads,
 * dlopen/dlclose, and restoration of the original text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_util.h"

#define MAX_CHILDREN	4

noipa long lt_func(long x)
{
	return x + 1000;
}

long (*lt_fact_ptr)(long n);

/* recursion through a pointer read each time, so it is not made a loop */
noipa long lt_fact(long n)
{
	long (*fn)(long n) = UT_READ_ONCE(lt_fact_ptr);

	return n <= 1 ? 1 : n * fn(n - 1);
}

FIXTURE(life) {
	char grp[64];
	struct ut_child child[MAX_CHILDREN];
	int nchild;
};

FIXTURE_SETUP(life)
{
}

FIXTURE_TEARDOWN(life)
{
	int i;

	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)

/* Define (not enable) "KIND:GRP/EV FILE:OFFSET(sym) ARGS". */
static int probe_file_sym(const char *kind, const char *grp, const char *ev,
			  const char *file, const char *sym, const char *args)
{
	int64_t off = ut_elf_sym_offset(file, sym);

	if (off < 0)
		return -ENOENT;
	return ut_probe_add("%s:%s/%s %s:0x%lx%s%s", kind, grp, ev, file,
			    (unsigned long)off, args ? " " : "",
			    args ? args : "");
}

#define START_TARGET()	\
	ut_spawn_target(self->child, &self->nchild, MAX_CHILDREN)

/* Send a command expecting "ok VALUE"; returns VALUE or -1. */
static long cmd_ok(struct ut_child *c, const char *cmd)
{
	char buf[256];

	if (ut_cmd(c, buf, sizeof(buf), "%s", cmd) || strncmp(buf, "ok", 2))
		return -1;
	return buf[2] ? atol(buf + 3) : 0;
}

/* Sum of uttgt_func(i) = 2i + 1 over i < n. */
static long tgt_sum(long n)
{
	return n * n;
}

/* A process started before the probe is enabled gets exactly N hits. */
TEST_F(life, started_before_enable)
{
	int t;

	if (START("ust_before"))
		return;
	t = START_TARGET();
	ASSERT_LE(0, t);
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_before_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_before_e", true));
	EXPECT_EQ(tgt_sum(5), cmd_ok(&self->child[t], "call 5"));
	EXPECT_EQ(5, ut_trace_count("ust_before_e", self->child[t].pid));
	EXPECT_EQ(5, ut_trace_count("ust_before_e", 0));
}

/* A process started after the probe is enabled gets exactly N hits. */
TEST_F(life, started_after_enable)
{
	int t;

	if (START("ust_after"))
		return;
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_after_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_after_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	EXPECT_EQ(tgt_sum(4), cmd_ok(&self->child[t], "call 4"));
	EXPECT_EQ(4, ut_trace_count("ust_after_e", self->child[t].pid));
	EXPECT_EQ(4, ut_trace_count("ust_after_e", 0));
}

/* Disabling a probe stops the hits of a process that keeps running. */
TEST_F(life, disable_while_running)
{
	int t;

	if (START("ust_disrun"))
		return;
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_disrun_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_disrun_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	EXPECT_EQ(tgt_sum(3), cmd_ok(&self->child[t], "call 3"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_disrun_e", false));
	EXPECT_EQ(tgt_sum(6), cmd_ok(&self->child[t], "call 6"));
	EXPECT_EQ(3, ut_trace_count("ust_disrun_e", self->child[t].pid));
}

/* Two processes running the probed code are counted separately. */
TEST_F(life, two_processes)
{
	int a, b;

	if (START("ust_twoproc"))
		return;
	a = START_TARGET();
	ASSERT_LE(0, a);
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_twoproc_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_twoproc_e", true));
	b = START_TARGET();
	ASSERT_LE(0, b);
	EXPECT_EQ(tgt_sum(3), cmd_ok(&self->child[a], "call 3"));
	EXPECT_EQ(tgt_sum(7), cmd_ok(&self->child[b], "call 7"));
	EXPECT_EQ(tgt_sum(2), cmd_ok(&self->child[a], "call 2"));
	EXPECT_EQ(5, ut_trace_count("ust_twoproc_e", self->child[a].pid));
	EXPECT_EQ(7, ut_trace_count("ust_twoproc_e", self->child[b].pid));
	EXPECT_EQ(12, ut_trace_count("ust_twoproc_e", 0));
}

/* After fork, child and parent hits are each counted exactly. */
TEST_F(life, fork_counts)
{
	char buf[128];
	int t, n, cpid, status;

	if (START("ust_fork"))
		return;
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_fork_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_fork_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	EXPECT_EQ(tgt_sum(2), cmd_ok(&self->child[t], "call 2"));
	ASSERT_EQ(0, ut_cmd(&self->child[t], buf, sizeof(buf), "fork 3"));
	n = sscanf(buf, "ok %d %d", &cpid, &status);
	ASSERT_EQ(2, n) {
		TH_LOG("reply '%s'", buf);
	}
	ASSERT_LT(0, cpid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(tgt_sum(4), cmd_ok(&self->child[t], "call 4"));
	EXPECT_EQ(3, ut_trace_count("ust_fork_e", cpid));
	EXPECT_EQ(6, ut_trace_count("ust_fork_e", self->child[t].pid));
	EXPECT_EQ(9, ut_trace_count("ust_fork_e", 0));
}

/*
 * A child forked while a probe is enabled carries the breakpoint; disabling
 * restores the original bytes in the child too, and the child then runs the
 * function without hits.
 */
TEST_F(life, fork_child_text_restored)
{
	int go[2], done[2], status;
	uint8_t orig[UT_SITE_BYTES], b[UT_SITE_BYTES];
	uint64_t addr = (uintptr_t)&lt_func;
	int64_t off;
	pid_t pid;
	char c;
	int fd;

	if (START("ust_forktext"))
		return;
	off = ut_elf_sym_offset(ut_self_exe(), "lt_func");
	ASSERT_LT(0, off);
	fd = open(ut_self_exe(), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(orig), pread(fd, orig, sizeof(orig), off));
	close(fd);
	ASSERT_FALSE(ut_is_bp(orig));
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_forktext_e",
				    ut_self_exe(), "lt_func", NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_forktext_e", true));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		long r = 0;

		/* one hit while enabled, then wait, then one call after */
		r += lt_func(1);
		if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		r += lt_func(2);
		_exit(r == 1001 + 1002 ? 0 : 3);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	ASSERT_EQ(0, ut_proc_read(pid, addr, b, sizeof(b)));
	EXPECT_TRUE(ut_is_bp_in(pid, addr, b));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_forktext_e", false));
	ASSERT_EQ(0, ut_proc_read(pid, addr, b, sizeof(b)));
	EXPECT_EQ(0, memcmp(orig, b, sizeof(b)));
	ASSERT_EQ(0, ut_proc_read(getpid(), addr, b, sizeof(b)));
	EXPECT_EQ(0, memcmp(orig, b, sizeof(b)));
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, ut_trace_count("ust_forktext_e", pid));
	EXPECT_EQ(0, ut_trace_count("ust_forktext_e", getpid()));
}

/*
 * exec of another program drops the old image's breakpoints: the new
 * program runs correctly and adds no events.
 */
TEST_F(life, exec_other_binary)
{
	char buf[128];
	int t, i, status;

	if (START("ust_execo"))
		return;
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_execo_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_execo_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	EXPECT_EQ(tgt_sum(2), cmd_ok(&self->child[t], "call 2"));
	snprintf(buf, sizeof(buf), "exec %s 3 0", ut_helper("tick"));
	ASSERT_EQ(0, ut_cmd(&self->child[t], buf, sizeof(buf), "%s", buf));
	EXPECT_STREQ("hi: 0", buf);
	for (i = 1; i < 3; i++) {
		char expect[16];

		snprintf(expect, sizeof(expect), "hi: %d", i);
		ASSERT_EQ(0, ut_readline(self->child[t].from, buf, sizeof(buf),
					 10000));
		EXPECT_STREQ(expect, buf);
	}
	ASSERT_EQ(0, ut_readline(self->child[t].from, buf, sizeof(buf), 10000));
	EXPECT_STREQ("tick: done, loop2 semaphore=0", buf);
	status = ut_child_wait(&self->child[t]);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(2, ut_trace_count("ust_execo_e", 0));
}

/* exec of the probed binary itself: probes apply again to the new image. */
TEST_F(life, exec_same_binary)
{
	char buf[128];
	int t;

	if (START("ust_execs"))
		return;
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_execs_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_execs_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	EXPECT_EQ(tgt_sum(2), cmd_ok(&self->child[t], "call 2"));
	/* "exec ..." gives no reply; the new image answers "ping" */
	snprintf(buf, sizeof(buf), "exec %s\n", ut_helper("uprobe_target"));
	ASSERT_EQ((ssize_t)strlen(buf),
		  write(self->child[t].to, buf, strlen(buf)));
	ASSERT_EQ(0, ut_cmd(&self->child[t], buf, sizeof(buf), "ping"));
	ASSERT_STREQ("pong", buf);
	EXPECT_EQ(tgt_sum(3), cmd_ok(&self->child[t], "call 3"));
	EXPECT_EQ(5, ut_trace_count("ust_execs_e", self->child[t].pid));
}

/* Hits in a dlopen()ed library are exact across dlopen, dlclose, dlopen. */
TEST_F(life, dlopen_dlclose)
{
	const char *lib = ut_helper("libuprobe_dl.so");
	struct ut_child *c;
	int t;

	if (START("ust_dlopen"))
		return;
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_dlopen_e", lib,
				    "utdl_func", NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_dlopen_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	ASSERT_FALSE(ut_is_mapped(c->pid, lib));
	ASSERT_EQ(0, cmd_ok(c, "dlopen"));
	ASSERT_TRUE(ut_is_mapped(c->pid, lib));
	EXPECT_EQ(5 * 3 + 2 * 3, cmd_ok(c, "dlcall 3"));
	EXPECT_EQ(3, ut_trace_count("ust_dlopen_e", c->pid));
	ASSERT_EQ(0, cmd_ok(c, "dlclose"));
	ASSERT_FALSE(ut_is_mapped(c->pid, lib));
	EXPECT_EQ(3, ut_trace_count("ust_dlopen_e", c->pid));
	ASSERT_EQ(0, cmd_ok(c, "dlopen"));
	EXPECT_EQ(5 * 1 + 2 * 2, cmd_ok(c, "dlcall 2"));
	EXPECT_EQ(5, ut_trace_count("ust_dlopen_e", c->pid));
	ASSERT_EQ(0, cmd_ok(c, "dlclose"));
	EXPECT_EQ(5, ut_trace_count("ust_dlopen_e", 0));
}

/* A probe in a library mapped by ld.so at start-up (DT_NEEDED). */
TEST_F(life, needed_library)
{
	int t;

	if (START("ust_needed"))
		return;
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_needed_e",
				    ut_helper("libuprobe_needed.so"),
				    "utlib_func", "x=" UT_ARG0));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_needed_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	/* utlib_func(i) = 3i + 1 */
	EXPECT_EQ(3 * 6 + 4, cmd_ok(&self->child[t], "libcall 4"));
	EXPECT_EQ(4, ut_trace_count("ust_needed_e", self->child[t].pid));
}

/* Each thread of a process is counted exactly (pid = thread id). */
TEST_F(life, threads)
{
	char buf[256], *p, *end;
	int t, n = 0;

	if (START("ust_threads"))
		return;
	/* let the threads run on every CPU */
	ASSERT_EQ(0, ut_unpin_cpu());
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_threads_e",
				    ut_helper("uprobe_target"), "uttgt_func",
				    NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_threads_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	ASSERT_EQ(0, ut_cmd(&self->child[t], buf, sizeof(buf), "threads 4 25"));
	ASSERT_EQ(0, strncmp(buf, "ok ", 3));
	for (p = buf + 3; *p; p = end) {
		long tid = strtol(p, &end, 10);

		if (end == p)
			break;
		EXPECT_EQ(25, ut_trace_count("ust_threads_e", tid));
		n++;
	}
	EXPECT_EQ(4, n);
	EXPECT_EQ(100, ut_trace_count("ust_threads_e", 0));
}

/*
 * The breakpoint is visible in /proc/PID/mem exactly while the probe
 * is enabled; disabling or removing restores the original text.
 */
TEST_F(life, text_restored)
{
	const char *tgt = ut_helper("uprobe_target");
	uint8_t file[16], mem[16];
	uint64_t va;
	int64_t off;
	int t, fd;

	if (START("ust_text"))
		return;
	off = ut_elf_sym_offset(tgt, "uttgt_func");
	ASSERT_LT(0, off);
	fd = open(tgt, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(16, pread(fd, file, 16, off));
	close(fd);
	ASSERT_FALSE(ut_is_bp(file));
	t = START_TARGET();
	ASSERT_LE(0, t);
	va = ut_fileoff_to_vaddr(self->child[t].pid, tgt, off);
	ASSERT_NE(0ULL, va);

	ASSERT_EQ(0, ut_proc_read(self->child[t].pid, va, mem, 16));
	EXPECT_EQ(0, memcmp(file, mem, 16));
	ASSERT_EQ(0, probe_file_sym("p", self->grp, "ust_text_e", tgt,
				    "uttgt_func", NULL));
	/* defined but not enabled: untouched */
	ASSERT_EQ(0, ut_proc_read(self->child[t].pid, va, mem, 16));
	EXPECT_EQ(0, memcmp(file, mem, 16));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_text_e", true));
	ASSERT_EQ(0, ut_proc_read(self->child[t].pid, va, mem, 16));
	EXPECT_TRUE(ut_is_bp_in(self->child[t].pid, va, mem));
	EXPECT_EQ(0, memcmp(file + UT_BP_SIZE, mem + UT_BP_SIZE,
			    16 - UT_BP_SIZE));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_text_e", false));
	ASSERT_EQ(0, ut_proc_read(self->child[t].pid, va, mem, 16));
	EXPECT_EQ(0, memcmp(file, mem, 16));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_text_e", true));
	ASSERT_EQ(0, ut_proc_read(self->child[t].pid, va, mem, 16));
	EXPECT_TRUE(ut_is_bp_in(self->child[t].pid, va, mem));
	EXPECT_EQ(tgt_sum(2), cmd_ok(&self->child[t], "call 2"));
	EXPECT_EQ(2, ut_trace_count("ust_text_e", self->child[t].pid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_text_e", false));
	ASSERT_EQ(0, ut_probe_del(self->grp, "ust_text_e"));
	ASSERT_EQ(0, ut_proc_read(self->child[t].pid, va, mem, 16));
	EXPECT_EQ(0, memcmp(file, mem, 16));
	EXPECT_EQ(tgt_sum(2), cmd_ok(&self->child[t], "call 2"));
}

/* A uretprobe on a recursive function fires once per return, innermost first. */
TEST_F(life, retprobe_recursion)
{
	static const uint64_t expect[] = { 1, 2, 6, 24, 120, 720 };
	char **recs;
	uint64_t v;
	int i, n;

	if (START("ust_recur"))
		return;
	ASSERT_EQ(0, probe_file_sym("r", self->grp, "ust_recur_e",
				    ut_self_exe(), "lt_fact", "r=$retval"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_recur_e", true));
	UT_WRITE_ONCE(lt_fact_ptr, lt_fact);
	EXPECT_EQ(720, lt_fact(6));
	n = ut_trace_records("ust_recur_e", getpid(), &recs);
	ASSERT_EQ(6, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_u64(recs[i], "r", &v));
		EXPECT_EQ(expect[i], v);
	}
	ut_free_records(recs, n);
}

TEST_HARNESS_MAIN
