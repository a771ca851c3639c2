// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_clients: the tools people attach uprobes with, run unmodified on
 * uprobe_target: bpftrace (uprobe:, uretprobe:, usdt: with a semaphore),
 * and libbpf, which loads uprobe_clients.bpf.o and attaches its programs
 * with bpf_program__attach_uprobe_opts() and bpf_program__attach_usdt().
 * The harness runs this suite in a chroot of the build machine's root
 * (CONFIG=full and debug), where Debian's packages of the tools are.
 *
 * A tool runs as a child whose stdout and stderr go to one pipe; its
 * output is kept, for the values it prints and for the log of a failure.
 * Every test asserts exact counts and values, and the SDT semaphore while
 * the tool is attached and after it is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "uprobe_clients.h"
#include "uprobe_util.h"

#define MAX_CHILDREN	2
/* a tool under TCG, with a debug kernel, may take this long to attach */
#define TOOL_START_MS	120000
#define TOOL_STOP_MS	60000

/* A tool started by a test, and what it printed. */
struct tool {
	pid_t pid;
	int from;		/* its stdout and stderr */
	char out[16384];
	size_t len;
};

/* Start @argv[0] (found in PATH) with stdout and stderr into one pipe. */
static int tool_start(struct tool *t, const char *const argv[])
{
	int fds[2];
	pid_t pid;

	t->pid = -1;
	t->len = 0;
	t->out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	t->pid = pid;
	t->from = fds[0];
	return 0;
}

/* Read the tool's output until a line equal to @line; 0 or -errno. */
static int tool_wait_line(struct tool *t, const char *line, int timeout_ms)
{
	char buf[1024];
	int ret;

	for (;;) {
		ret = ut_readline(t->from, buf, sizeof(buf), timeout_ms);
		if (ret)
			return ret;
		t->len += snprintf(t->out + t->len, sizeof(t->out) - t->len,
				   "%s\n", buf);
		if (t->len >= sizeof(t->out))
			t->len = sizeof(t->out) - 1;
		if (!strcmp(buf, line))
			return 0;
	}
}

/*
 * Send @sig (unless 0), read the rest of the output and reap the tool;
 * returns its wait status, or -1 when it did not end in time.
 */
static int tool_stop(struct tool *t, int sig)
{
	char buf[1024];
	int status;

	if (t->pid <= 0)
		return -1;
	if (sig)
		kill(t->pid, sig);
	while (!ut_readline(t->from, buf, sizeof(buf), TOOL_STOP_MS)) {
		t->len += snprintf(t->out + t->len, sizeof(t->out) - t->len,
				   "%s\n", buf);
		if (t->len >= sizeof(t->out))
			t->len = sizeof(t->out) - 1;
	}
	close(t->from);
	t->from = -1;
	kill(t->pid, SIGKILL);
	if (waitpid(t->pid, &status, 0) != t->pid)
		status = -1;
	t->pid = -1;
	return status;
}

/* The value bpftrace printed for map @name ("@name: VALUE"); -1 if none. */
static long long tool_map(const struct tool *t, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s: ", name);
	p = strstr(t->out, key);
	if (!p)
		return -1;
	return strtoll(p + strlen(key), NULL, 0);
}

FIXTURE(clients) {
	struct ut_child child[MAX_CHILDREN];
	int nchild;
	struct tool tool;
	char prog[1024];
	struct bpf_object *obj;
	struct bpf_link *link;
	int perf_fd;
	char grp[64];
};

FIXTURE_SETUP(clients)
{
	self->tool.pid = -1;
	self->tool.from = -1;
	self->perf_fd = -1;
}

FIXTURE_TEARDOWN(clients)
{
	int i;

	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	if (self->tool.pid > 0) {
		kill(self->tool.pid, SIGKILL);
		waitpid(self->tool.pid, NULL, 0);
	}
	if (self->tool.from >= 0)
		close(self->tool.from);
	bpf_link__destroy(self->link);
	bpf_object__close(self->obj);
	if (self->perf_fd >= 0)
		close(self->perf_fd);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

#define START_TARGET()	\
	ut_spawn_target(self->child, &self->nchild, MAX_CHILDREN)

/* SKIP unless bpftrace can run here; true when skipped. */
static bool no_bpftrace(struct __test_metadata *_metadata)
{
	if (!ut_file_exists("/proc/sys/kernel/unprivileged_bpf_disabled"))
		SKIP(return true, "CONFIG_BPF_SYSCALL not enabled");
	if (!ut_file_exists("/usr/bin/bpftrace"))
		SKIP(return true, "no bpftrace (Debian package bpftrace)");
	return false;
}

/*
 * Run bpftrace on program @prog (its BEGIN probe prints "ready" once every
 * probe is attached) and wait for that line.
 */
static int bpftrace_start(struct tool *t, const char *prog)
{
	const char *const argv[] = { "bpftrace", "-e", prog, NULL };
	int ret;

	ret = tool_start(t, argv);
	if (ret)
		return ret;
	return tool_wait_line(t, "ready", TOOL_START_MS);
}

/* bpftrace's uprobe: counts every call of a running process, with arg0. */
TEST_F(clients, bpftrace_uprobe_args)
{
	int c;

	if (no_bpftrace(_metadata))
		return;
	c = START_TARGET();
	ASSERT_LE(0, c);
	snprintf(self->prog, sizeof(self->prog),
		 "BEGIN { printf(\"ready\\n\"); } "
		 "uprobe:%s:uttgt_func { @n = count(); @s = sum(arg0); }",
		 ut_helper("uprobe_target"));
	ASSERT_EQ(0, bpftrace_start(&self->tool, self->prog))
		TH_LOG("bpftrace: %s", self->tool.out);
	/* uttgt_func(0..99): 2x + 1 each, 10000 in all */
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
	EXPECT_EQ(0, tool_stop(&self->tool, SIGINT))
		TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(100, tool_map(&self->tool, "@n"))
		TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(4950, tool_map(&self->tool, "@s"))
		TH_LOG("bpftrace: %s", self->tool.out);
}

/* bpftrace's uretprobe: one hit per return, retval as the function returned it. */
TEST_F(clients, bpftrace_uretprobe_retval)
{
	int c;

	if (no_bpftrace(_metadata))
		return;
	c = START_TARGET();
	ASSERT_LE(0, c);
	snprintf(self->prog, sizeof(self->prog),
		 "BEGIN { printf(\"ready\\n\"); } "
		 "uretprobe:%s:uttgt_func { @n = count(); @r = sum(retval); }",
		 ut_helper("uprobe_target"));
	ASSERT_EQ(0, bpftrace_start(&self->tool, self->prog))
		TH_LOG("bpftrace: %s", self->tool.out);
	/* uttgt_func(x) = 2x + 1 for x in 0..99 */
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
	EXPECT_EQ(0, tool_stop(&self->tool, SIGINT))
		TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(100, tool_map(&self->tool, "@n"))
		TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(10000, tool_map(&self->tool, "@r"))
		TH_LOG("bpftrace: %s", self->tool.out);
	/* the returns went back to their callers: the target still answers */
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
}

/*
 * Start bpftrace on the usdt marker uttgt:mark of uprobe_target, with
 * one target running before it attaches and one started after.
 */
static void usdt_attach(struct __test_metadata *_metadata,
			FIXTURE_DATA(clients) *self, int *c0, int *c1)
{
	*c0 = START_TARGET();
	ASSERT_LE(0, *c0);
	EXPECT_EQ(0, ut_ask(&self->child[*c0], "sem"));
	snprintf(self->prog, sizeof(self->prog),
		 "BEGIN { printf(\"ready\\n\"); } "
		 "usdt:%s:uttgt:mark { @n = count(); @a = sum(arg0); }",
		 ut_helper("uprobe_target"));
	ASSERT_EQ(0, bpftrace_start(&self->tool, self->prog))
		TH_LOG("bpftrace: %s", self->tool.out);
	*c1 = START_TARGET();
	ASSERT_LE(0, *c1);
	/* the semaphore counts bpftrace's one probe in both processes */
	EXPECT_EQ(1, ut_ask(&self->child[*c0], "sem"));
	EXPECT_EQ(1, ut_ask(&self->child[*c1], "sem"));
	/* "mark N" fires uttgt:mark with 0..N-1 when its semaphore is set */
	EXPECT_EQ(50, ut_ask(&self->child[*c0], "mark 50"));
	EXPECT_EQ(30, ut_ask(&self->child[*c1], "mark 30"));
}

/* bpftrace's usdt: on a guarded marker: semaphore 1 while attached, 0 after it exits. */
TEST_F(clients, bpftrace_usdt_semaphore)
{
	int c0, c1;

	if (no_bpftrace(_metadata))
		return;
	usdt_attach(_metadata, self, &c0, &c1);
	EXPECT_EQ(0, tool_stop(&self->tool, SIGINT))
		TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(80, tool_map(&self->tool, "@n"))
		TH_LOG("bpftrace: %s", self->tool.out);
	/* 0+..+49 + 0+..+29 */
	EXPECT_EQ(1225 + 435, tool_map(&self->tool, "@a"))
		TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(0, ut_ask(&self->child[c0], "sem"));
	EXPECT_EQ(0, ut_ask(&self->child[c1], "sem"));
	EXPECT_EQ(0, ut_ask(&self->child[c0], "mark 5"));
}

/* A SIGKILLed bpftrace leaves the semaphore 0 in every process, as an exit does. */
TEST_F(clients, bpftrace_usdt_killed)
{
	int c0, c1, status;

	if (no_bpftrace(_metadata))
		return;
	usdt_attach(_metadata, self, &c0, &c1);
	status = tool_stop(&self->tool, SIGKILL);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("status %#x, bpftrace: %s", status, self->tool.out);
	EXPECT_EQ(0, ut_ask(&self->child[c0], "sem"));
	EXPECT_EQ(0, ut_ask(&self->child[c1], "sem"));
	EXPECT_EQ(0, ut_ask(&self->child[c1], "mark 5"));
}

/*
 * Open and load uprobe_clients.bpf.o into self->obj; SKIP when the kernel
 * has no bpf(). Returns true when the test cannot go on.
 */
static bool bpf_load(struct __test_metadata *_metadata,
		     FIXTURE_DATA(clients) *self)
{
	int ret;

	if (!ut_file_exists("/proc/sys/kernel/unprivileged_bpf_disabled"))
		SKIP(return true, "CONFIG_BPF_SYSCALL not enabled");
	self->obj = bpf_object__open_file(ut_helper("uprobe_clients.bpf.o"),
					  NULL);
	ret = libbpf_get_error(self->obj);
	if (ret)
		self->obj = NULL;
	EXPECT_EQ(0, ret);
	if (ret)
		return true;
	ret = bpf_object__load(self->obj);
	EXPECT_EQ(0, ret);
	return ret != 0;
}

/* Slot @slot of the "counts" map; -1 on error. */
static long long bpf_count(FIXTURE_DATA(clients) *self, unsigned int slot)
{
	struct bpf_map *map = bpf_object__find_map_by_name(self->obj, "counts");
	unsigned long long v;

	if (!map || bpf_map_lookup_elem(bpf_map__fd(map), &slot, &v))
		return -1;
	return v;
}

/* Attach program @name to uttgt_func of uprobe_target as libbpf users do. */
static int bpf_attach_func(FIXTURE_DATA(clients) *self, const char *name,
			   bool retprobe, bool refctr)
{
	const char *path = ut_helper("uprobe_target");
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe);
	struct bpf_program *prog;
	struct ut_sdt_note n;
	int64_t off;

	prog = bpf_object__find_program_by_name(self->obj, name);
	off = ut_elf_sym_offset(path, "uttgt_func");
	if (!prog || off < 0 || ut_sdt_find(path, "uttgt", "mark", &n))
		return -ENOENT;
	/* the semaphore of uttgt:mark, which "sem" and "mark" show */
	if (refctr)
		opts.ref_ctr_offset = n.sem_off;
	self->link = bpf_program__attach_uprobe_opts(prog, -1, path, off,
						     &opts);
	return libbpf_get_error(self->link) ? -errno : 0;
}

/* libbpf's uprobe with ref_ctr_offset: exact hits and arguments; semaphore 1, then 0. */
TEST_F(clients, libbpf_uprobe_ref_ctr)
{
	int c;

	c = START_TARGET();
	ASSERT_LE(0, c);
	if (bpf_load(_metadata, self))
		return;
	ASSERT_EQ(0, bpf_attach_func(self, "uc_entry", false, true));
	EXPECT_EQ(1, ut_ask(&self->child[c], "sem"));
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
	EXPECT_EQ(100, bpf_count(self, UC_ENTRY_HITS));
	EXPECT_EQ(4950, bpf_count(self, UC_ENTRY_SUM));
	bpf_link__destroy(self->link);
	self->link = NULL;
	EXPECT_EQ(0, ut_ask(&self->child[c], "sem"));
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
	EXPECT_EQ(100, bpf_count(self, UC_ENTRY_HITS));
}

/* libbpf's uretprobe: one hit per return, with the value returned. */
TEST_F(clients, libbpf_uretprobe)
{
	int c;

	c = START_TARGET();
	ASSERT_LE(0, c);
	if (bpf_load(_metadata, self))
		return;
	ASSERT_EQ(0, bpf_attach_func(self, "uc_return", true, false));
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
	EXPECT_EQ(100, bpf_count(self, UC_RETURN_HITS));
	EXPECT_EQ(10000, bpf_count(self, UC_RETURN_SUM));
	EXPECT_EQ(0, bpf_count(self, UC_ENTRY_HITS));
}

/* libbpf's bpf_program__attach_usdt(): marker hits and argument; semaphore 1, then 0. */
TEST_F(clients, libbpf_usdt)
{
	struct bpf_program *prog;
	int c0, c1;

	c0 = START_TARGET();
	ASSERT_LE(0, c0);
	if (bpf_load(_metadata, self))
		return;
	prog = bpf_object__find_program_by_name(self->obj, "uc_mark");
	ASSERT_NE(NULL, prog);
	self->link = bpf_program__attach_usdt(prog, -1,
					      ut_helper("uprobe_target"),
					      "uttgt", "mark", NULL);
	ASSERT_EQ(0, libbpf_get_error(self->link)) {
		self->link = NULL;
	}
	c1 = START_TARGET();
	ASSERT_LE(0, c1);
	EXPECT_EQ(1, ut_ask(&self->child[c0], "sem"));
	EXPECT_EQ(1, ut_ask(&self->child[c1], "sem"));
	EXPECT_EQ(50, ut_ask(&self->child[c0], "mark 50"));
	EXPECT_EQ(30, ut_ask(&self->child[c1], "mark 30"));
	EXPECT_EQ(80, bpf_count(self, UC_MARK_HITS));
	EXPECT_EQ(1225 + 435, bpf_count(self, UC_MARK_SUM));
	bpf_link__destroy(self->link);
	self->link = NULL;
	EXPECT_EQ(0, ut_ask(&self->child[c0], "sem"));
	EXPECT_EQ(0, ut_ask(&self->child[c1], "sem"));
}

/*
 * One function probed through BPF, the perf PMU and tracefs at once: each
 * counts every call, and the semaphore stays 1 until the last one goes.
 */
TEST_F(clients, libbpf_perf_tracefs_together)
{
	const char *path = ut_helper("uprobe_target");
	struct ut_sdt_note n;
	uint64_t perf_count;
	int64_t off;
	int c;

	if (ut_start(_metadata, self->grp, sizeof(self->grp), "uclients"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	c = START_TARGET();
	ASSERT_LE(0, c);
	if (bpf_load(_metadata, self))
		return;
	off = ut_elf_sym_offset(path, "uttgt_func");
	ASSERT_LE(0, off);
	ASSERT_EQ(0, ut_sdt_find(path, "uttgt", "mark", &n));
	ASSERT_EQ(0, bpf_attach_func(self, "uc_entry", false, true));
	self->perf_fd = ut_uprobe_perf_open(path, off, n.sem_off,
					    self->child[c].pid);
	ASSERT_LE(0, self->perf_fd);
	ASSERT_EQ(0, ut_probe_add("p:%s/func %s:0x%llx(0x%llx) x=%s", self->grp,
				  path, (unsigned long long)off,
				  (unsigned long long)n.sem_off, UT_ARG0));
	ASSERT_EQ(0, ut_event_enable(self->grp, "func", true));
	/* one breakpoint, so the semaphore is 1 for the three consumers */
	EXPECT_EQ(1, ut_ask(&self->child[c], "sem"));
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
	EXPECT_EQ(100, bpf_count(self, UC_ENTRY_HITS));
	ASSERT_EQ(sizeof(perf_count),
		  read(self->perf_fd, &perf_count, sizeof(perf_count)));
	EXPECT_EQ(100, perf_count);
	EXPECT_EQ(100, ut_trace_count("func", self->child[c].pid));
	EXPECT_EQ(100, ut_profile_hits("func"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "func", false));
	EXPECT_EQ(1, ut_ask(&self->child[c], "sem"));
	close(self->perf_fd);
	self->perf_fd = -1;
	EXPECT_EQ(1, ut_ask(&self->child[c], "sem"));
	bpf_link__destroy(self->link);
	self->link = NULL;
	EXPECT_EQ(0, ut_ask(&self->child[c], "sem"));
}

TEST_HARNESS_MAIN
