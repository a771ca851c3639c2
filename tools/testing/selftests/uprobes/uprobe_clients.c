// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_clients: the tools people attach uprobes with, run unmodified on
 * uprobe_target: bpftrace (uprobe:, uretprobe:, usdt: with a semaphore),
 * libbpf, which loads uprobe_clients.bpf.o and attaches its programs with
 * bpf_program__attach_uprobe_opts() and bpf_program__attach_usdt(), bcc's
 * funccount and trace, stress-ng's uprobe stressor (alone and beside its
 * ptrace and sigtrap stressors), python3's subprocess (vfork()) with the
 * C library's vfork() return-probed, and perf record's
 * callchains through a return-probed frame.
 * The harness runs this suite in a chroot of the build machine's root
 * (CONFIG=full and debug), where Debian's packages of the tools are.
 *
 * A tool runs as a child whose stdout and stderr go to one pipe; its
 * output is kept, for the values it prints and for the log of a failure.
 * Every test asserts exact counts and values, and the SDT semaphore while
 * the tool is attached and after it is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "uprobe_clients.h"
#include "uprobe_util.h"

#define MAX_CHILDREN	2
/*
 * a tool under TCG, with a debug kernel, may take this long to attach (bcc
 * compiles its program with clang first: 94 to over 120 s seen)
 */
#define TOOL_START_MS	240000
/* ... and this long to print what it found (bpftrace reads symbols at exit) */
#define TOOL_STOP_MS	240000
/* a bpftrace or bcc test may wait for both: its timeout is 600 s */

/* A tool started by a test, and what it printed. */
struct tool {
	pid_t pid;
	int from;		/* its stdout and stderr */
	char out[16384];
	size_t len;
	int resend_ms;		/* stop signal again after this long mute */
};

/* Start @argv[0] (found in PATH) with stdout and stderr into one pipe. */
static int tool_start(struct tool *t, const char *const argv[])
{
	int fds[2];
	pid_t pid;

	t->pid = -1;
	t->len = 0;
	t->resend_ms = 0;
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

		/* a writable working directory (the chroot's / is not) */
		if (chdir("/tmp"))
			_exit(126);
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

/* Append @text to the tool's output, as much as fits. */
static void tool_note(struct tool *t, const char *text)
{
	t->len += snprintf(t->out + t->len, sizeof(t->out) - t->len, "%s",
			   text);
	if (t->len >= sizeof(t->out))
		t->len = sizeof(t->out) - 1;
}

/* Read the tool's output until a line that starts with @line; 0 or -errno. */
static int tool_wait_line(struct tool *t, const char *line, int timeout_ms)
{
	char buf[1024];
	int ret;

	for (;;) {
		ret = ut_readline(t->from, buf, sizeof(buf), timeout_ms);
		if (ret)
			return ret;
		tool_note(t, buf);
		tool_note(t, "\n");
		if (!strncmp(buf, line, strlen(line)))
			return 0;
	}
}

/* Is @nr a system call a tool waits in for time or events? */
static bool waiting_syscall(long nr)
{
	static const long waits[] = {
		SYS_clock_nanosleep, SYS_epoll_pwait, SYS_pselect6, SYS_ppoll,
#ifdef SYS_nanosleep
		SYS_nanosleep,
#endif
#ifdef SYS_epoll_wait
		SYS_epoll_wait,
#endif
#ifdef SYS_select
		SYS_select,
#endif
#ifdef SYS_poll
		SYS_poll,
#endif
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(waits); i++)
		if (waits[i] == nr)
			return true;
	return false;
}

/*
 * Wait until the tool's main thread waits in a system call for time or
 * events (/proc/PID/syscall): past its start-up, in the loop that a
 * SIGINT ends as it means to. 0, or -ETIMEDOUT after @timeout_ms.
 */
static int tool_wait_idle(struct tool *t, int timeout_ms)
{
	char path[64], *buf;
	int waited;

	snprintf(path, sizeof(path), "/proc/%d/syscall", t->pid);
	for (waited = 0; waited < timeout_ms; waited += 10) {
		buf = ut_read_file(path, NULL);
		if (buf && waiting_syscall(strtol(buf, NULL, 10))) {
			free(buf);
			return 0;
		}
		free(buf);
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/*
 * The tool did not end: append where each of its threads is (state, CPU
 * times, kernel stack) to its output, for the log of the failing test.
 */
static void tool_note_threads(struct tool *t)
{
	static const char *const files[] = { "stat", "wchan", "stack" };
	char path[320], line[320], *buf;	/* d_name: up to 255 */
	struct dirent *d;
	unsigned int i;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(line, sizeof(line), "[did not end: thread %s]\n",
			 d->d_name);
		tool_note(t, line);
		for (i = 0; i < ARRAY_SIZE(files); i++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%s/%s",
				 t->pid, d->d_name, files[i]);
			buf = ut_read_file(path, NULL);
			snprintf(line, sizeof(line), "%s: ", files[i]);
			tool_note(t, line);
			tool_note(t, buf ? buf : "(unreadable)");
			tool_note(t, "\n");
			free(buf);
		}
	}
	closedir(dir);
}

/*
 * Wait up to @timeout_ms for the tool's next output; 0 when there is some.
 * A tool with resend_ms set that printed nothing since @sig gets @sig once
 * more after resend_ms, as a user presses Ctrl-C again (where its threads
 * were then goes to its output first).
 */
static int tool_quiet(struct tool *t, int sig, int timeout_ms, bool *armed)
{
	int r;

	if (*armed && t->resend_ms && sig && t->resend_ms < timeout_ms) {
		*armed = false;
		r = ut_wait_input(t->from, t->resend_ms);
		if (r != -ETIMEDOUT)
			return r;
		tool_note_threads(t);
		tool_note(t, "[no output: the signal sent again]\n");
		/* in the log even if the test passes: a lost signal is news */
		ksft_print_msg("tool %d mute %d ms after signal %d: sent again\n",
			       t->pid, t->resend_ms, sig);
		kill(t->pid, sig);
		timeout_ms -= t->resend_ms;
	}
	return ut_wait_input(t->from, timeout_ms);
}

/*
 * Send @sig (unless 0), read the rest of the output and reap the tool;
 * returns its wait status (SIGKILL's when it did not end in time, with
 * where its threads were appended to the output).
 */
static int tool_stop(struct tool *t, int sig)
{
	bool armed = true;
	char buf[1024];
	int status, ret;

	if (t->pid <= 0)
		return -1;
	if (sig)
		kill(t->pid, sig);
	for (;;) {
		ret = tool_quiet(t, sig, TOOL_STOP_MS, &armed);
		if (!ret)
			ret = ut_readline(t->from, buf, sizeof(buf),
					  TOOL_STOP_MS);
		if (ret)
			break;
		tool_note(t, buf);
		tool_note(t, "\n");
	}
	if (ret == -ETIMEDOUT)
		tool_note_threads(t);
	close(t->from);
	t->from = -1;
	kill(t->pid, SIGKILL);
	if (waitpid(t->pid, &status, 0) != t->pid)
		status = -1;
	t->pid = -1;
	return status;
}

/*
 * The number the tool printed right after @name framed by @before and
 * @after in its output; -1 if it printed no such thing.
 */
static long long tool_value(const struct tool *t, const char *before,
			    const char *name, const char *after)
{
	char key[80];
	const char *p;

	snprintf(key, sizeof(key), "%s%s%s", before, name, after);
	p = strstr(t->out, key);
	if (!p)
		return -1;
	return strtoll(p + strlen(key), NULL, 0);
}

/* The value bpftrace printed for map @name ("@name: VALUE"); -1 if none. */
static long long tool_map(const struct tool *t, const char *name)
{
	return tool_value(t, "\n", name, ": ");
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

/* bpftrace runs BEGIN once every probe of its program is attached */
#define BT_READY	"BEGIN { printf(\"ready\\n\"); }"

/* Run bpftrace on program @prog, which starts with BT_READY, until "ready". */
static int bpftrace_start(struct tool *t, const char *prog)
{
	const char *const argv[] = { "bpftrace", "-e", prog, NULL };
	int ret;

	ret = tool_start(t, argv);
	if (ret)
		return ret;
	/*
	 * bpftrace 0.17 notes a SIGINT in a flag that its event loop reads
	 * only when epoll_wait() fails with EINTR: one that arrives while
	 * the loop is between two epoll_wait() calls (say, as one returns
	 * after its 100 ms) is never acted on.
	 */
	t->resend_ms = 60000;
	return tool_wait_line(t, "ready", TOOL_START_MS);
}

/* bpftrace's uprobe: counts every call of a running process, with arg0. */
TEST_F_TIMEOUT(clients, bpftrace_uprobe_args, 600)
{
	int c;

	if (no_bpftrace(_metadata))
		return;
	c = START_TARGET();
	ASSERT_LE(0, c);
	snprintf(self->prog, sizeof(self->prog),
		 "%s uprobe:%s:uttgt_func { @n = count(); @s = sum(arg0); }",
		 BT_READY, ut_helper("uprobe_target"));
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
TEST_F_TIMEOUT(clients, bpftrace_uretprobe_retval, 600)
{
	int c;

	if (no_bpftrace(_metadata))
		return;
	c = START_TARGET();
	ASSERT_LE(0, c);
	snprintf(self->prog, sizeof(self->prog),
		 "%s uretprobe:%s:uttgt_func { @n = count(); @r = sum(retval); }",
		 BT_READY, ut_helper("uprobe_target"));
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
			struct _test_data_clients *self, int *c0, int *c1)
{
	*c0 = START_TARGET();
	ASSERT_LE(0, *c0);
	EXPECT_EQ(0, ut_ask(&self->child[*c0], "sem"));
	snprintf(self->prog, sizeof(self->prog),
		 "%s usdt:%s:uttgt:mark { @n = count(); @a = sum(arg0); }",
		 BT_READY, ut_helper("uprobe_target"));
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
TEST_F_TIMEOUT(clients, bpftrace_usdt_semaphore, 600)
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
TEST_F_TIMEOUT(clients, bpftrace_usdt_killed, 600)
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
		     struct _test_data_clients *self)
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
static long long bpf_count(struct _test_data_clients *self, unsigned int slot)
{
	struct bpf_map *map = bpf_object__find_map_by_name(self->obj, "counts");
	unsigned long long v;

	if (!map || bpf_map_lookup_elem(bpf_map__fd(map), &slot, &v))
		return -1;
	return v;
}

/* Attach program @name to uttgt_func of uprobe_target as libbpf users do. */
static int bpf_attach_func(struct _test_data_clients *self, const char *name,
			   bool retprobe, bool refctr)
{
	struct bpf_uprobe_opts opts = { .sz = sizeof(opts),
					.retprobe = retprobe };
	const char *path = ut_helper("uprobe_target");
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
	ASSERT_EQ((ssize_t)sizeof(perf_count),
		  read(self->perf_fd, &perf_count, sizeof(perf_count)));
	EXPECT_EQ(100ULL, perf_count);
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

/* SKIP unless bcc's tools can run here; true when skipped. */
static bool no_bcc(struct __test_metadata *_metadata)
{
	if (!ut_file_exists("/proc/sys/kernel/unprivileged_bpf_disabled"))
		SKIP(return true, "CONFIG_BPF_SYSCALL not enabled");
	if (!ut_file_exists("/sys/kernel/kheaders.tar.xz"))
		SKIP(return true, "CONFIG_IKHEADERS not enabled");
	if (!ut_file_exists("/usr/sbin/funccount-bpfcc"))
		SKIP(return true, "no bcc (Debian package bpfcc-tools)");
	return false;
}

/* The count funccount printed for @func ("FUNC  COUNT" lines); -1 if none. */
static long funccount_of(const struct tool *t, const char *func)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", func);
	p = strstr(t->out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* bcc's funccount on a uprobe: the exact number of calls. */
TEST_F_TIMEOUT(clients, bcc_funccount_uprobe, 600)
{
	char spec[512];
	/* unbuffered: it says it is attached on a pipe, not at its exit */
	const char *const argv[] = { "env", "PYTHONUNBUFFERED=1",
				     "funccount-bpfcc", spec, NULL };
	int c;

	if (no_bcc(_metadata))
		return;
	c = START_TARGET();
	ASSERT_LE(0, c);
	snprintf(spec, sizeof(spec), "%s:uttgt_func",
		 ut_helper("uprobe_target"));
	ASSERT_EQ(0, tool_start(&self->tool, argv));
	/* "Tracing 1 functions for ..." once attached */
	ASSERT_EQ(0, tool_wait_line(&self->tool, "Tracing 1 functions",
				    TOOL_START_MS))
		TH_LOG("funccount: %s", self->tool.out);
	/* a SIGINT before its loop would kill it with a traceback */
	ASSERT_EQ(0, tool_wait_idle(&self->tool, TOOL_START_MS));
	EXPECT_EQ(10000, ut_ask(&self->child[c], "call 100"));
	EXPECT_EQ(0, tool_stop(&self->tool, SIGINT))
		TH_LOG("funccount: %s", self->tool.out);
	EXPECT_EQ(100, funccount_of(&self->tool, "uttgt_func"))
		TH_LOG("funccount: %s", self->tool.out);
}

/*
 * bcc's trace on a guarded USDT marker of a process (-p: bcc sets the
 * semaphore itself): one line per hit with its argument; semaphore 1,
 * then 0.
 */
TEST_F_TIMEOUT(clients, bcc_trace_usdt, 600)
{
	char spec[512], pid[16];
	const char *const argv[] = { "trace-bpfcc", "-p", pid, spec, NULL };
	long sum = 0, n = 0;
	const char *p;
	int c, status;

	/* bcc_funccount_uprobe keeps bcc in a smoke run */
	if (ut_heavy_client(_metadata) || no_bcc(_metadata))
		return;
	c = START_TARGET();
	ASSERT_LE(0, c);
	snprintf(pid, sizeof(pid), "%d", self->child[c].pid);
	snprintf(spec, sizeof(spec), "u:%s:mark \"uc_x=%%d\", arg1",
		 ut_helper("uprobe_target"));
	ASSERT_EQ(0, tool_start(&self->tool, argv));
	/* the header, printed once the probe is attached */
	ASSERT_EQ(0, tool_wait_line(&self->tool, "PID", TOOL_START_MS))
		TH_LOG("trace: %s", self->tool.out);
	EXPECT_EQ(1, ut_ask(&self->child[c], "sem"));
	EXPECT_EQ(50, ut_ask(&self->child[c], "mark 50"));
	/* trace prints as it goes: give it time to drain its buffer */
	sleep(2);
	/* it ends by itself on SIGINT (with status 1) */
	status = tool_stop(&self->tool, SIGINT);
	EXPECT_TRUE(WIFEXITED(status))
		TH_LOG("status %#x, trace: %s", status, self->tool.out);
	for (p = strstr(self->tool.out, "uc_x="); p; p = strstr(p, "uc_x=")) {
		p += 5;
		sum += strtol(p, NULL, 10);
		n++;
	}
	EXPECT_EQ(50, n) TH_LOG("trace: %s", self->tool.out);
	EXPECT_EQ(1225, sum) TH_LOG("trace: %s", self->tool.out);
	EXPECT_EQ(0, ut_ask(&self->child[c], "sem"));
}

/*
 * Bogo ops of stressor @name in "stress-ng --metrics-brief" output
 * ("... metrc: [PID] NAME  BOGO-OPS ..."); -1 if none.
 */
static long long stressor_ops(const struct tool *t, const char *name)
{
	return tool_value(t, "] ", name, " ");
}

/* No uprobe event is defined, and uprobe_stats (if any) lists no probe. */
static void expect_no_probes(struct __test_metadata *_metadata)
{
	char *events, *stats;
	const char *p;

	events = ut_read_file(UT_TRACEFS "/uprobe_events", NULL);
	ASSERT_NE(NULL, events);
	EXPECT_STREQ("", events);
	free(events);
	/* uprobe_stats, where the kernel has it: its header and no probe */
	stats = ut_read_file(UT_TRACEFS "/uprobe_stats", NULL);
	if (stats) {
		p = strchr(stats, '\n');
		EXPECT_TRUE(p && !p[1]) TH_LOG("uprobe_stats: %s", stats);
		free(stats);
	}
}

/*
 * stress-ng's uprobe stressor for a bounded time: it succeeds, its probes
 * fired, and it leaves no uprobe event or probe behind. One worker: its
 * workers share trace_pipe, a second one gets EBUSY and leaves its probe
 * defined (stress-ng 0.15).
 */
TEST_F_TIMEOUT(clients, stress_ng_uprobe, 300)
{
	const char *const argv[] = { "stress-ng", "--uprobe", "1", "--timeout",
				     "20s", "--metrics-brief", NULL };
	long long ops;
	int status;

	if (ut_no_tracefs(_metadata))
		return;
	if (!ut_file_exists("/usr/bin/stress-ng"))
		SKIP(return, "no stress-ng (Debian package stress-ng)");
	ASSERT_EQ(0, tool_start(&self->tool, argv));
	status = tool_stop(&self->tool, 0);
	EXPECT_EQ(0, status) TH_LOG("stress-ng: %s", self->tool.out);
	ops = stressor_ops(&self->tool, "uprobe");
	EXPECT_LT(0, ops) TH_LOG("stress-ng: %s", self->tool.out);
	expect_no_probes(_metadata);
}

/* The path of the libc this process runs with, into @buf; 0 or -1. */
static int self_libc(char *buf, size_t size)
{
	char *maps, *line, *save = NULL;
	const char *path;
	int ret = -1;

	maps = ut_read_file("/proc/self/maps", NULL);
	if (!maps)
		return -1;
	for (line = strtok_r(maps, "\n", &save); line && ret;
	     line = strtok_r(NULL, "\n", &save)) {
		path = strchr(line, '/');
		if (path && strstr(path, "/libc.so.") &&
		    (size_t)snprintf(buf, size, "%s", path) < size)
			ret = 0;
	}
	free(maps);
	return ret;
}

/*
 * stress-ng's uprobe, ptrace and sigtrap stressors together, with an entry
 * and a return probe on libc's getppid(), which the ptrace stressor's
 * traced child calls between its syscall stops: every stressor succeeds,
 * the traced child hits both probes and each return matches an entry
 * (but for calls in flight when the probes are toggled and the traced
 * child, killed inside one), nothing is left behind.
 */
TEST_F_TIMEOUT(clients, stress_ng_tracing_stressors, 300)
{
	const char *const argv[] = { "stress-ng", "--uprobe", "1", "--ptrace",
				     "1", "--sigtrap", "1", "--timeout", "20s",
				     "--metrics-brief", NULL };
	long long ops_uprobe, ops_ptrace, ops_sigtrap;
	char libc[PATH_MAX];
	long entry, ret;
	int64_t off;
	int status;

	if (ut_start(_metadata, self->grp, sizeof(self->grp), "uclients"))
		return;
	if (!ut_file_exists("/usr/bin/stress-ng"))
		SKIP(return, "no stress-ng (Debian package stress-ng)");
	/* the stressors run on every CPU */
	ASSERT_EQ(0, ut_unpin_cpu());
	/* the libc of this root, which stress-ng loads too */
	ASSERT_EQ(0, self_libc(libc, sizeof(libc)));
	off = ut_elf_sym_offset(libc, "getppid");
	ASSERT_LT(0, off);
	ASSERT_EQ(0, ut_probe_add("p:%s/entry %s:0x%llx", self->grp, libc,
				  (unsigned long long)off));
	ASSERT_EQ(0, ut_probe_add("r:%s/ret %s:0x%llx", self->grp, libc,
				  (unsigned long long)off));
	ASSERT_EQ(0, ut_event_enable(self->grp, "entry", true));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ret", true));
	ASSERT_EQ(0, tool_start(&self->tool, argv));
	status = tool_stop(&self->tool, 0);
	/* entry on before ret and off after it: no return without its entry */
	ASSERT_EQ(0, ut_event_enable(self->grp, "ret", false));
	ASSERT_EQ(0, ut_event_enable(self->grp, "entry", false));
	EXPECT_EQ(0, status) TH_LOG("stress-ng: %s", self->tool.out);
	ops_uprobe = stressor_ops(&self->tool, "uprobe");
	ops_ptrace = stressor_ops(&self->tool, "ptrace");
	ops_sigtrap = stressor_ops(&self->tool, "sigtrap");
	EXPECT_LT(0, ops_uprobe) TH_LOG("stress-ng: %s", self->tool.out);
	EXPECT_LT(0, ops_ptrace) TH_LOG("stress-ng: %s", self->tool.out);
	EXPECT_LT(0, ops_sigtrap) TH_LOG("stress-ng: %s", self->tool.out);
	entry = ut_profile_hits("entry");
	ret = ut_profile_hits("ret");
	/* the traced child's getppid() calls, each seen at entry and return */
	EXPECT_LT(0, entry);
	EXPECT_LE(ret, entry);
	/* calls in flight at a toggle, and the traced child killed in one */
	EXPECT_GE(ret + 16, entry) TH_LOG("%ld entries, %ld returns", entry, ret);
	ASSERT_EQ(0, ut_probe_del(self->grp, "entry"));
	ASSERT_EQ(0, ut_probe_del(self->grp, "ret"));
	/* stress-ng removed its own probe */
	expect_no_probes(_metadata);
}

#define PY_RUNS	10

/*
 * Debian's python3 runs subprocess.run() PY_RUNS times (vfork(), since
 * Python 3.10) with the C library's vfork() entry- and return-probed:
 * every child runs and exits 0, python3 exits 0, each vfork() is counted
 * once (uprobe_profile counts a return probe's entries too) and recorded
 * twice at return (the child's return, then the parent's). Stock 6.1
 * copies pending returns to a vfork child too.
 */
TEST_F_TIMEOUT(clients, python_subprocess_vfork_probed, 300)
{
	static const char script[] =
		"import subprocess\n"
		"n = sum(subprocess.run(['/bin/true'], close_fds=True).returncode == 0\n"
		"        for _ in range(%d))\n"
		"print('ran', n)\n";
	const char *const argv[] = { "/usr/bin/python3", "-c", self->prog,
				     NULL };
	char libc[PATH_MAX], want[32];
	int64_t off;
	int status;

	if (ut_start(_metadata, self->grp, sizeof(self->grp), "upyvfk"))
		return;
	if (!ut_file_exists("/usr/bin/python3"))
		SKIP(return, "no python3 (Debian package python3)");
	ASSERT_EQ(0, self_libc(libc, sizeof(libc)));
	off = ut_elf_sym_offset(libc, "vfork");
	ASSERT_LT(0, off);
	ASSERT_EQ(0, ut_probe_add("p:%s/entry %s:0x%llx", self->grp, libc,
				  (unsigned long long)off));
	ASSERT_EQ(0, ut_probe_add("r:%s/ret %s:0x%llx", self->grp, libc,
				  (unsigned long long)off));
	ASSERT_EQ(0, ut_event_enable(self->grp, "entry", true));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ret", true));
	snprintf(self->prog, sizeof(self->prog), script, PY_RUNS);
	ASSERT_EQ(0, tool_start(&self->tool, argv));
	status = tool_stop(&self->tool, 0);
	EXPECT_EQ(0, status) TH_LOG("python3: %s", self->tool.out);
	snprintf(want, sizeof(want), "ran %d\n", PY_RUNS);
	EXPECT_NE(NULL, strstr(self->tool.out, want)) {
		TH_LOG("python3: %s", self->tool.out);
	}
	EXPECT_EQ(PY_RUNS, ut_profile_hits("entry"));
	EXPECT_EQ(PY_RUNS, ut_profile_hits("ret"));
	EXPECT_EQ(2 * PY_RUNS, ut_trace_count("ret", 0));
}

/*
 * Where perf record's tests probe uc_leaf: past its prologue, so that a
 * frame-pointer walk sees every caller. arm64's perf adds a leaf's caller
 * from the link register itself, and would show it twice past the leaf's
 * frame record: there, the leaf's first instruction.
 */
#ifdef __aarch64__
#define UC_PERF_LEAF	"uc_leaf"
#else
#define UC_PERF_LEAF	"uc_leaf_body"
#endif

/*
 * Count the samples of "perf script -F ip,sym" output @out whose chains
 * start UC_PERF_LEAF, uc_mid, uc_top, main; log the first frame that
 * differs.
 */
static int good_chains(struct __test_metadata *_metadata, char *out)
{
	static const char *const want[] = { UC_PERF_LEAF, "uc_mid",
					    "uc_top", "main" };
	unsigned int depth = ARRAY_SIZE(want);
	char *save = NULL, *line;
	int good = 0, bad = 0;
	bool ok = false;

	/* frames are "IP SYM" lines; a sample's first is the leaf's */
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char ip[32], sym[128];

		if (sscanf(line, " %31s %127s", ip, sym) != 2)
			continue;
		if (!strcmp(sym, want[0])) {
			depth = 0;
			ok = true;
		}
		if (depth >= ARRAY_SIZE(want))
			continue;
		if (ok && strcmp(sym, want[depth])) {
			ok = false;
			if (!bad++)
				TH_LOG("frame %u is %s %s, not %s", depth, ip,
				       sym, want[depth]);
		}
		if (++depth == ARRAY_SIZE(want) && ok)
			good++;
	}
	return good;
}

/*
 * perf record with call graphs of kind @cg on a uprobe inside a function
 * whose caller has a pending return probe: every sampled chain shows the
 * real callers, not the return trampoline.
 */
static void perf_record_through_return_probe(struct __test_metadata *_metadata,
					     struct _test_data_clients *self,
					     const char *cg)
{
	const char *path = ut_helper("uprobe_clients_stack");
	const char *data = "/tmp/uclients-perf.data";
	const char *const record[] = { "/usr/bin/perf", "record", "-q", "-e",
		"uclients:leaf", "--call-graph", cg, "-o", data, "--", path,
		"20", NULL };
	const char *const script[] = { "/usr/bin/perf", "script", "-i", data,
		"-F", "ip,sym", NULL };
	static char out[1 << 16];
	int64_t body, mid;
	int good;

	if (ut_start(_metadata, self->grp, sizeof(self->grp), "uclients"))
		return;
	if (!ut_file_exists("/usr/bin/perf"))
		SKIP(return, "no perf (Debian package linux-perf)");
	body = ut_elf_sym_offset(path, UC_PERF_LEAF);
	mid = ut_elf_sym_offset(path, "uc_mid");
	ASSERT_LT(0, body);
	ASSERT_LT(0, mid);
	ASSERT_EQ(0, ut_probe_add("p:%s/leaf %s:0x%llx", self->grp, path,
				  (unsigned long long)body));
	ASSERT_EQ(0, ut_probe_add("r:%s/mid %s:0x%llx", self->grp, path,
				  (unsigned long long)mid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "mid", true));
	EXPECT_EQ(0, ut_run(record, out, sizeof(out))) TH_LOG("%s", out);
	/* uc_top(i) = 2 * (i + 1) + 3 for i in 0..19 */
	EXPECT_NE(NULL, strstr(out, "480\n")) TH_LOG("%s", out);
	EXPECT_EQ(20, ut_profile_hits("mid"));
	EXPECT_EQ(0, ut_run(script, out, sizeof(out))) TH_LOG("%s", out);
	good = good_chains(_metadata, out);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(0, good);
		UT_STOCK_FAILS("the caller of a return-probed frame is the trampoline");
		return;
	}
	EXPECT_EQ(20, good);
}

/* perf record -g (frame pointers) through a pending return probe: real callers. */
TEST_F_TIMEOUT(clients, perf_record_fp_through_return_probe, 300)
{
	perf_record_through_return_probe(_metadata, self, "fp");
}

/* perf record --call-graph dwarf (stack copies) through a pending return probe: real callers. */
TEST_F_TIMEOUT(clients, perf_record_dwarf_through_return_probe, 300)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	/* the copy is mended where the architecture tells where the word is */
	SKIP(return, "x86-64 and arm64 only: the return address's place is not known");
#endif
	perf_record_through_return_probe(_metadata, self, "dwarf");
}

/*
 * Check the ustack keys bpftrace printed at exit in @out. A stack with
 * uc_mid in it must have no bare address (an unknown frame, such as the
 * return trampoline) before main; it is good when uc_top and main follow
 * (not so at uc_mid's first instructions, where a frame-pointer walk
 * misses the caller). Returns the number of good stacks, or -1 (logged)
 * for a bad one.
 */
static long good_ustacks(struct __test_metadata *_metadata, const char *out)
{
	const char *p = out, *end;
	long good = 0;

	while ((p = strstr(p, "@[\n"))) {
		const char *mid, *top, *main_, *hex;
		char stack[2048];
		size_t len;

		end = strstr(p, "]: ");
		if (!end)
			break;
		len = (size_t)(end - p);
		if (len >= sizeof(stack))
			len = sizeof(stack) - 1;
		memcpy(stack, p, len);
		stack[len] = '\0';
		p = end;
		mid = strstr(stack, "uc_mid+");
		if (!mid)
			continue;
		main_ = strstr(mid, "main+");
		hex = strstr(mid, "0x");
		if (!main_ || (hex && hex < main_)) {
			TH_LOG("bad stack: %s", stack);
			return -1;
		}
		top = strstr(mid, "uc_top+");
		if (top && top < main_)
			good++;
	}
	return good;
}

/* The hit count bpftrace printed for its first stack with uc_mid in it. */
static long ustack_hits(const char *out)
{
	const char *p = strstr(out, "uc_mid+");

	p = p ? strstr(p, "]: ") : NULL;
	return p ? strtol(p + 3, NULL, 10) : -1;
}

/*
 * bpftrace's ustack from a uprobe inside a function whose caller has a
 * pending return probe: every stack shows the real callers.
 */
TEST_F_TIMEOUT(clients, bpftrace_ustack_through_return_probe, 600)
{
	const char *path = ut_helper("uprobe_clients_stack");
	const char *const run[] = { path, "20", "wait", NULL };
	char out[256];
	int64_t mid;
	long good;

	if (no_bpftrace(_metadata))
		return;
	if (ut_start(_metadata, self->grp, sizeof(self->grp), "uclients"))
		return;
	mid = ut_elf_sym_offset(path, "uc_mid");
	ASSERT_LT(0, mid);
	ASSERT_EQ(0, ut_probe_add("r:%s/mid %s:0x%llx", self->grp, path,
				  (unsigned long long)mid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "mid", true));
	snprintf(self->prog, sizeof(self->prog),
		 "%s uprobe:%s:uc_leaf_body { @[ustack] = count(); }",
		 BT_READY, path);
	ASSERT_EQ(0, bpftrace_start(&self->tool, self->prog))
		TH_LOG("bpftrace: %s", self->tool.out);
	/* it waits, so that bpftrace can read its symbols when it prints */
	ASSERT_EQ(0, ut_spawn(run, &self->child[self->nchild]));
	self->nchild++;
	ASSERT_EQ(0, ut_readline(self->child[0].from, out, sizeof(out),
				 TOOL_START_MS));
	EXPECT_STREQ("480", out);
	EXPECT_EQ(0, tool_stop(&self->tool, SIGINT))
		TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(0, ut_child_wait(&self->child[0]));
	EXPECT_EQ(20, ut_profile_hits("mid"));
	good = good_ustacks(_metadata, self->tool.out);
	if (ut_impl_is_stock()) {
		EXPECT_EQ(-1, good) TH_LOG("bpftrace: %s", self->tool.out);
		UT_STOCK_FAILS("the caller of a return-probed frame is the trampoline");
		return;
	}
	EXPECT_EQ(1, good) TH_LOG("bpftrace: %s", self->tool.out);
	EXPECT_EQ(20, ustack_hits(self->tool.out))
		TH_LOG("bpftrace: %s", self->tool.out);
}

/*
 * bpftrace's profile:hz taking user stacks while processes run through a
 * probe and a return probe, some of them exiting: no stack shows the
 * trampoline where a caller should be.
 */
TEST_F_TIMEOUT(clients, bpftrace_profile_ustack_while_probed, 600)
{
	const char *path = ut_helper("uprobe_clients_stack");
	long n = ut_scaled(50000, 5), good, hits;
	char calls[32], want[64], out[256];
	const char *const wait[] = { path, calls, "wait", NULL };
	const char *const run[] = { path, calls, NULL };
	int64_t body, mid;
	int i;

	/* bpftrace_ustack_through_return_probe keeps ustack in a smoke run */
	if (ut_heavy_client(_metadata))
		return;
	snprintf(calls, sizeof(calls), "%ld", n);
	snprintf(want, sizeof(want), "%ld", n * (n + 4));
	if (no_bpftrace(_metadata))
		return;
	if (ut_start(_metadata, self->grp, sizeof(self->grp), "uclients"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	body = ut_elf_sym_offset(path, "uc_leaf_body");
	mid = ut_elf_sym_offset(path, "uc_mid");
	ASSERT_LT(0, body);
	ASSERT_LT(0, mid);
	ASSERT_EQ(0, ut_probe_add("p:%s/leaf %s:0x%llx", self->grp, path,
				  (unsigned long long)body));
	ASSERT_EQ(0, ut_probe_add("r:%s/mid %s:0x%llx", self->grp, path,
				  (unsigned long long)mid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "leaf", true));
	ASSERT_EQ(0, ut_event_enable(self->grp, "mid", true));
	snprintf(self->prog, sizeof(self->prog),
		 "%s profile:hz:997 /comm == \"uprobe_clients_\"/ { @[ustack] = count(); }",
		 BT_READY);
	ASSERT_EQ(0, bpftrace_start(&self->tool, self->prog))
		TH_LOG("bpftrace: %s", self->tool.out);
	/*
	 * Two that wait (bpftrace reads their symbols when it prints), and
	 * three that exit while sampled, each with n * (n + 4) as result.
	 */
	for (i = 0; i < MAX_CHILDREN; i++) {
		ASSERT_EQ(0, ut_spawn(wait, &self->child[i]));
		self->nchild++;
	}
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, ut_run(run, out, sizeof(out))) TH_LOG("%s", out);
		out[strcspn(out, "\n")] = 0;
		EXPECT_STREQ(want, out);
	}
	for (i = 0; i < MAX_CHILDREN; i++) {
		ASSERT_EQ(0, ut_readline(self->child[i].from, out, sizeof(out),
					 TOOL_START_MS));
		EXPECT_STREQ(want, out);
	}
	EXPECT_EQ(0, tool_stop(&self->tool, SIGINT))
		TH_LOG("bpftrace: %s", self->tool.out);
	for (i = 0; i < MAX_CHILDREN; i++)
		EXPECT_EQ(0, ut_child_wait(&self->child[i]));
	self->nchild = 0;
	hits = ut_profile_hits("mid");
	if (!ut_stock_lost_hits(_metadata, hits, 5 * n))
		EXPECT_EQ(5 * n, hits);
	/*
	 * Stock 6.1 never shows such a stack whole: a sample through uc_mid
	 * has the trampoline where its caller should be (-1), or none was
	 * symbolized (0: seen in the arm64 guest, whose samples in the
	 * target showed bare addresses only).
	 */
	if (ut_impl_is_stock()) {
		EXPECT_GE(0, good_ustacks(_metadata, self->tool.out))
			TH_LOG("bpftrace: %s", self->tool.out);
		UT_STOCK_FAILS("the caller of a return-probed frame is the trampoline");
		return;
	}
	/*
	 * How many samples fell in uc_leaf or uc_mid (or in their probes)
	 * depends on the kernel's speed: a debug kernel spends the time in
	 * its checks. None may show a bare address where a caller should be.
	 */
	good = good_ustacks(_metadata, self->tool.out);
	EXPECT_LE(0, good) TH_LOG("bpftrace: %s", self->tool.out);
	TH_LOG("%ld stacks through uc_mid with all their callers", good);
	EXPECT_NE(NULL, strstr(self->tool.out, "]: "))
		TH_LOG("no sample: %s", self->tool.out);
}

TEST_HARNESS_MAIN
