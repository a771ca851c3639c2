// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_sdt: SDT markers with semaphores, probed as
 * "PATH:OFFSET(REF_CTR_OFFSET)" (both FILE offsets).  The kernel keeps the
 * semaphore (reference counter) non-zero while a probe is attached, in
 * every process mapping the file, whenever it was started.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_util.h"

#define MAX_CHILDREN	2

/* marker usdt:one, and usdt:dup which sits at two places in the code */
unsigned short usdt_one_semaphore __section(".probes") __used;
unsigned short usdt_dup_semaphore __section(".probes") __used;

#define SEM(s)	UT_READ_ONCE(s)

/* Fires usdt:one when enabled; returns 1 if it fired. */
noipa int sdt_one(long x)
{
	if (SEM(usdt_one_semaphore)) {
		DTRACE_PROBE1(usdt, one, x);
		return 1;
	}
	return 0;
}

noipa int sdt_dup_a(long x)
{
	if (SEM(usdt_dup_semaphore)) {
		DTRACE_PROBE1(usdt, dup, x);
		return 1;
	}
	return 0;
}

noipa int sdt_dup_b(long x)
{
	if (SEM(usdt_dup_semaphore)) {
		DTRACE_PROBE1(usdt, dup, x + 100);
		return 1;
	}
	return 0;
}

FIXTURE(sdt) {
	char grp[64];
	struct ut_child child[MAX_CHILDREN];
	int nchild;
};

FIXTURE_SETUP(sdt)
{
}

FIXTURE_TEARDOWN(sdt)
{
	int i;

	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)

/* Define GRP/EV on a marker, with (@refctr) or without its semaphore. */
static int probe_note(const char *grp, const char *ev, const char *file,
		      const struct ut_sdt_note *n, bool refctr,
		      const char *args)
{
	char ref[64] = "";

	if (refctr)
		snprintf(ref, sizeof(ref), "(0x%lx)", (unsigned long)n->sem_off);
	return ut_probe_add("p:%s/%s %s:0x%lx%s%s%s", grp, ev, file,
			    (unsigned long)n->pc_off, ref, args ? " " : "",
			    args ? args : "");
}

/* Find marker @name of @provider in @file (the n-th one when repeated). */
static int find_note(const char *file, const char *provider, const char *name,
		     int nth, struct ut_sdt_note *out)
{
	struct ut_sdt_note notes[32];
	int i, n;

	n = ut_sdt_notes(file, notes, 32);
	for (i = 0; i < n; i++) {
		if (strcmp(notes[i].provider, provider) ||
		    strcmp(notes[i].name, name))
			continue;
		if (nth-- == 0) {
			*out = notes[i];
			return 0;
		}
	}
	return -1;
}

#define START_TARGET()	\
	ut_spawn_target(self->child, &self->nchild, MAX_CHILDREN)

/* The semaphore as seen through /proc/PID/mem; -1 on error. */
static long sem_mem(pid_t pid, const char *file, const struct ut_sdt_note *n)
{
	uint64_t va = ut_fileoff_to_data_vaddr(pid, file, n->sem_off);
	uint16_t v;

	if (!va || ut_proc_read_u16(pid, va, &v))
		return -1;
	return v;
}

/* The SDT notes parse to the semaphore's real address in this process. */
TEST_F(sdt, note_offsets)
{
	struct ut_sdt_note n;

	ASSERT_EQ(0, find_note(ut_self_exe(), "usdt", "one", 0, &n));
	ASSERT_NE(0ULL, n.sem_off);
	EXPECT_EQ((uintptr_t)&usdt_one_semaphore,
		  ut_fileoff_to_data_vaddr(getpid(), ut_self_exe(), n.sem_off));
	EXPECT_EQ(n.sem_off,
		  (uint64_t)ut_elf_sym_offset(ut_self_exe(), "usdt_one_semaphore"));
	EXPECT_STREQ(UT_SDT_ARG0, n.args);
	ASSERT_EQ(0, find_note(ut_helper("tick"), "tick", "loop1", 0, &n));
	EXPECT_EQ(0ULL, n.sem_off);
	EXPECT_STREQ(UT_SDT_REG_NOTE, n.args);
	ASSERT_EQ(0, find_note(ut_helper("tick"), "tick", "loop2", 0, &n));
	EXPECT_NE(0ULL, n.sem_off);
	EXPECT_STREQ(UT_SDT_REG_NOTE, n.args);
}

/* The uprobe_sdt_info and uprobe_sym_offset tools print the same offsets. */
TEST_F(sdt, cli_tools)
{
	const char *tick = ut_helper("tick");
	const char *const info[] = { ut_helper("uprobe_sdt_info"), tick, NULL };
	const char *const sym[] = { ut_helper("uprobe_sym_offset"), tick,
				    "tick_loop2_semaphore", NULL };
	struct ut_sdt_note l1, l2;
	char out[512], expect[512];

	ASSERT_EQ(0, ut_sdt_find(tick, "tick", "loop1", &l1));
	ASSERT_EQ(0, ut_sdt_find(tick, "tick", "loop2", &l2));
	snprintf(expect, sizeof(expect),
		 "tick loop1 0x%lx 0x0\ntick loop2 0x%lx 0x%lx\n",
		 (unsigned long)l1.pc_off, (unsigned long)l2.pc_off,
		 (unsigned long)l2.sem_off);
	ASSERT_EQ(0, ut_run(info, out, sizeof(out)));
	EXPECT_STREQ(expect, out);
	snprintf(expect, sizeof(expect), "0x%lx\n", (unsigned long)l2.sem_off);
	ASSERT_EQ(0, ut_run(sym, out, sizeof(out)));
	EXPECT_STREQ(expect, out);
}

/* The semaphore is 0, and the guarded marker silent, without probes. */
TEST_F(sdt, semaphore_zero_without_probe)
{
	struct ut_sdt_note n;
	int t;

	if (START("ust_semzero"))
		return;
	EXPECT_EQ(0, SEM(usdt_one_semaphore));
	EXPECT_EQ(0, sdt_one(1));
	ASSERT_EQ(0, find_note(ut_helper("uprobe_target"), "uttgt", "mark", 0,
			       &n));
	t = START_TARGET();
	ASSERT_LE(0, t);
	EXPECT_EQ(0, ut_ask(&self->child[t], "sem"));
	EXPECT_EQ(0, sem_mem(self->child[t].pid, ut_helper("uprobe_target"),
			     &n));
	EXPECT_EQ(0, ut_ask(&self->child[t], "mark 3"));
}

/* One enabled probe sets this running process's semaphore to exactly 1. */
TEST_F(sdt, semaphore_one_while_enabled)
{
	struct ut_sdt_note n;
	int i, fired = 0;

	if (START("ust_semone"))
		return;
	ASSERT_EQ(0, find_note(ut_self_exe(), "usdt", "one", 0, &n));
	ASSERT_EQ(0, probe_note(self->grp, "ust_semone_e", ut_self_exe(), &n,
				true, "x=" UT_ARG0));
	EXPECT_EQ(0, SEM(usdt_one_semaphore));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_semone_e", true));
	EXPECT_EQ(1, SEM(usdt_one_semaphore));
	for (i = 0; i < 4; i++)
		fired += sdt_one(i);
	EXPECT_EQ(4, fired);
	EXPECT_EQ(4, ut_trace_count("ust_semone_e", getpid()));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_semone_e", false));
	EXPECT_EQ(0, SEM(usdt_one_semaphore));
	EXPECT_EQ(0, sdt_one(9));
}

/* Two events on the same marker share the counter: it is 1, not 2. */
TEST_F(sdt, two_events_same_marker)
{
	struct ut_sdt_note n;

	if (START("ust_sem2same"))
		return;
	ASSERT_EQ(0, find_note(ut_self_exe(), "usdt", "one", 0, &n));
	ASSERT_EQ(0, probe_note(self->grp, "ust_sem2same_a", ut_self_exe(), &n,
				true, NULL));
	ASSERT_EQ(0, probe_note(self->grp, "ust_sem2same_b", ut_self_exe(), &n,
				true, NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2same_a", true));
	EXPECT_EQ(1, SEM(usdt_one_semaphore));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2same_b", true));
	EXPECT_EQ(1, SEM(usdt_one_semaphore));
	EXPECT_EQ(1, sdt_one(5));
	EXPECT_EQ(1, ut_trace_count("ust_sem2same_a", getpid()));
	EXPECT_EQ(1, ut_trace_count("ust_sem2same_b", getpid()));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2same_a", false));
	EXPECT_EQ(1, SEM(usdt_one_semaphore));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2same_b", false));
	EXPECT_EQ(0, SEM(usdt_one_semaphore));
}

/*
 * Two markers sharing one semaphore (usdt:dup at two places): each enabled
 * probe location holds one reference.
 */
TEST_F(sdt, two_markers_shared_semaphore)
{
	struct ut_sdt_note a, b;

	if (START("ust_sem2loc"))
		return;
	ASSERT_EQ(0, find_note(ut_self_exe(), "usdt", "dup", 0, &a));
	ASSERT_EQ(0, find_note(ut_self_exe(), "usdt", "dup", 1, &b));
	ASSERT_NE(a.pc_off, b.pc_off);
	ASSERT_EQ(a.sem_off, b.sem_off);
	ASSERT_EQ(0, probe_note(self->grp, "ust_sem2loc_a", ut_self_exe(), &a,
				true, NULL));
	ASSERT_EQ(0, probe_note(self->grp, "ust_sem2loc_b", ut_self_exe(), &b,
				true, NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2loc_a", true));
	EXPECT_EQ(1, SEM(usdt_dup_semaphore));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2loc_b", true));
	EXPECT_EQ(2, SEM(usdt_dup_semaphore));
	EXPECT_EQ(1, sdt_dup_a(1));
	EXPECT_EQ(1, sdt_dup_b(1));
	EXPECT_EQ(1, ut_trace_count("ust_sem2loc_a", getpid()));
	EXPECT_EQ(1, ut_trace_count("ust_sem2loc_b", getpid()));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2loc_a", false));
	EXPECT_EQ(1, SEM(usdt_dup_semaphore));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sem2loc_b", false));
	EXPECT_EQ(0, SEM(usdt_dup_semaphore));
}

/* A process started before enabling: 0, then 1 while enabled, then 0. */
TEST_F(sdt, target_started_before)
{
	const char *tgt = ut_helper("uprobe_target");
	struct ut_sdt_note n;
	struct ut_child *c;
	int t;

	if (START("ust_tgtbefore"))
		return;
	ASSERT_EQ(0, find_note(tgt, "uttgt", "mark", 0, &n));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	EXPECT_EQ(0, ut_ask(c, "sem"));
	ASSERT_EQ(0, probe_note(self->grp, "ust_tgtbefore_e", tgt, &n, true,
				NULL));
	EXPECT_EQ(0, ut_ask(c, "sem"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_tgtbefore_e", true));
	EXPECT_EQ(1, ut_ask(c, "sem"));
	EXPECT_EQ(1, sem_mem(c->pid, tgt, &n));
	EXPECT_EQ(3, ut_ask(c, "mark 3"));
	EXPECT_EQ(3, ut_trace_count("ust_tgtbefore_e", c->pid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_tgtbefore_e", false));
	EXPECT_EQ(0, ut_ask(c, "sem"));
	EXPECT_EQ(0, sem_mem(c->pid, tgt, &n));
	EXPECT_EQ(0, ut_ask(c, "mark 3"));
}

/* A process started after enabling sees exactly 1 from the start. */
TEST_F(sdt, target_started_after)
{
	const char *tgt = ut_helper("uprobe_target");
	struct ut_sdt_note n;
	struct ut_child *c;
	int t;

	if (START("ust_tgtafter"))
		return;
	ASSERT_EQ(0, find_note(tgt, "uttgt", "mark", 0, &n));
	ASSERT_EQ(0, probe_note(self->grp, "ust_tgtafter_e", tgt, &n, true,
				NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_tgtafter_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	EXPECT_EQ(1, ut_ask(c, "sem"));
	EXPECT_EQ(1, sem_mem(c->pid, tgt, &n));
	EXPECT_EQ(2, ut_ask(c, "mark 2"));
	EXPECT_EQ(2, ut_trace_count("ust_tgtafter_e", c->pid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_tgtafter_e", false));
	EXPECT_EQ(0, ut_ask(c, "sem"));
}

/*
 * A semaphore in a library mapped by ld.so at start-up (mmap of the file,
 * MAP_FIXED segments, RELRO mprotect) is exactly 1, then 0.
 */
TEST_F(sdt, needed_library_semaphore)
{
	const char *lib = ut_helper("libuprobe_needed.so");
	struct ut_sdt_note n;
	struct ut_child *c;
	int t;

	if (START("ust_libsem"))
		return;
	ASSERT_EQ(0, find_note(lib, "utlib", "mark", 0, &n));
	ASSERT_EQ(0, probe_note(self->grp, "ust_libsem_e", lib, &n, true,
				NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_libsem_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	EXPECT_EQ(1, ut_ask(c, "libsem"));
	EXPECT_EQ(1, sem_mem(c->pid, lib, &n));
	EXPECT_EQ(4, ut_ask(c, "libmark 4"));
	EXPECT_EQ(4, ut_trace_count("ust_libsem_e", c->pid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_libsem_e", false));
	EXPECT_EQ(0, ut_ask(c, "libsem"));
	EXPECT_EQ(0, sem_mem(c->pid, lib, &n));
}

/* The same library semaphore for a process started before enabling. */
TEST_F(sdt, needed_library_semaphore_before)
{
	const char *lib = ut_helper("libuprobe_needed.so");
	struct ut_sdt_note n;
	struct ut_child *c;
	int t;

	if (START("ust_libsemb"))
		return;
	ASSERT_EQ(0, find_note(lib, "utlib", "mark", 0, &n));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	EXPECT_EQ(0, ut_ask(c, "libsem"));
	ASSERT_EQ(0, probe_note(self->grp, "ust_libsemb_e", lib, &n, true,
				NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_libsemb_e", true));
	EXPECT_EQ(1, ut_ask(c, "libsem"));
	EXPECT_EQ(1, sem_mem(c->pid, lib, &n));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_libsemb_e", false));
	EXPECT_EQ(0, ut_ask(c, "libsem"));
}

/* A semaphore in a dlopen()ed library: 1 after each dlopen, 0 when off. */
TEST_F(sdt, dlopen_library_semaphore)
{
	const char *lib = ut_helper("libuprobe_dl.so");
	struct ut_sdt_note n;
	struct ut_child *c;
	int t;

	if (START("ust_dlsem"))
		return;
	ASSERT_EQ(0, find_note(lib, "utdl", "mark", 0, &n));
	ASSERT_EQ(0, probe_note(self->grp, "ust_dlsem_e", lib, &n, true,
				NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_dlsem_e", true));
	t = START_TARGET();
	ASSERT_LE(0, t);
	c = &self->child[t];
	ASSERT_EQ(0, ut_ask(c, "dlopen"));
	EXPECT_EQ(1, ut_ask(c, "dlsem"));
	EXPECT_EQ(2, ut_ask(c, "dlmark 2"));
	ASSERT_EQ(0, ut_ask(c, "dlclose"));
	ASSERT_EQ(0, ut_ask(c, "dlopen"));
	EXPECT_EQ(1, ut_ask(c, "dlsem"));
	EXPECT_EQ(3, ut_ask(c, "dlmark 3"));
	EXPECT_EQ(5, ut_trace_count("ust_dlsem_e", c->pid));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_dlsem_e", false));
	EXPECT_EQ(0, ut_ask(c, "dlsem"));
	EXPECT_EQ(0, ut_ask(c, "dlmark 3"));
}

/* A child forked while enabled has 1, and 0 once the probe is disabled. */
TEST_F(sdt, fork_child_semaphore)
{
	int req[2], rsp[2], status;
	struct ut_sdt_note n;
	unsigned short v;
	pid_t pid;
	char c;

	if (START("ust_forksem"))
		return;
	ASSERT_EQ(0, find_note(ut_self_exe(), "usdt", "one", 0, &n));
	ASSERT_EQ(0, probe_note(self->grp, "ust_forksem_e", ut_self_exe(), &n,
				true, NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_forksem_e", true));
	ASSERT_EQ(1, SEM(usdt_one_semaphore));
	ASSERT_EQ(0, pipe(req));
	ASSERT_EQ(0, pipe(rsp));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(req[1]);
		close(rsp[0]);
		/* report the semaphore on each request byte */
		while (read(req[0], &c, 1) == 1) {
			v = SEM(usdt_one_semaphore);
			if (write(rsp[1], &v, sizeof(v)) != sizeof(v))
				_exit(2);
		}
		_exit(0);
	}
	close(req[0]);
	close(rsp[1]);
	ASSERT_EQ(1, write(req[1], "?", 1));
	ASSERT_EQ((ssize_t)sizeof(v), read(rsp[0], &v, sizeof(v)));
	EXPECT_EQ(1, v);
	EXPECT_EQ(1, sem_mem(pid, ut_self_exe(), &n));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_forksem_e", false));
	ASSERT_EQ(1, write(req[1], "?", 1));
	ASSERT_EQ((ssize_t)sizeof(v), read(rsp[0], &v, sizeof(v)));
	EXPECT_EQ(0, v);
	EXPECT_EQ(0, sem_mem(pid, ut_self_exe(), &n));
	EXPECT_EQ(0, SEM(usdt_one_semaphore));
	close(req[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(rsp[0]);
}

/* Run tick to completion; returns its exit status, output in @out. */
static int run_tick(const char *n, char *out, size_t size)
{
	const char *const argv[] = { ut_helper("tick"), n, "0", NULL };

	return ut_run(argv, out, size);
}

/*
 * tick:loop2 probed with its reference counter: tick (started after
 * enabling) sees semaphore=1 and every iteration fires with i read from
 * the marker's register (UT_SDT_REG_FETCH).
 */
TEST_F(sdt, tick_loop2_refctr)
{
	const char *tick = ut_helper("tick");
	struct ut_sdt_note n;
	char out[512], **recs;
	uint64_t v;
	int i, cnt, status;

	if (START("ust_tick2"))
		return;
	ASSERT_EQ(0, find_note(tick, "tick", "loop2", 0, &n));
	ASSERT_EQ(0, probe_note(self->grp, "ust_tick2_e", tick, &n, true,
				"i=" UT_SDT_REG_FETCH ":s32"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_tick2_e", true));
	status = run_tick("5", out, sizeof(out));
	EXPECT_EQ(0, status);
	EXPECT_STREQ("hi: 0\nhi: 1\nhi: 2\nhi: 3\nhi: 4\n"
		     "tick: done, loop2 semaphore=1\n", out);
	cnt = ut_trace_records("ust_tick2_e", 0, &recs);
	ASSERT_EQ(5, cnt);
	for (i = 0; i < cnt; i++) {
		ASSERT_EQ(0, ut_rec_u64(recs[i], "i", &v));
		EXPECT_EQ((uint64_t)i, v);
	}
	ut_free_records(recs, cnt);
}

/*
 * Without the reference counter the semaphore stays 0, so the guarded
 * tick:loop2 never runs while the plain tick:loop1 fires every iteration.
 */
TEST_F(sdt, tick_without_refctr)
{
	const char *tick = ut_helper("tick");
	struct ut_sdt_note n1, n2;
	char out[512];
	int status;

	if (START("ust_tickplain"))
		return;
	ASSERT_EQ(0, find_note(tick, "tick", "loop1", 0, &n1));
	ASSERT_EQ(0, find_note(tick, "tick", "loop2", 0, &n2));
	ASSERT_EQ(0, probe_note(self->grp, "ust_tickplain_1", tick, &n1, false,
				"i=" UT_SDT_REG_FETCH ":s32"));
	ASSERT_EQ(0, probe_note(self->grp, "ust_tickplain_2", tick, &n2, false,
				NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_tickplain_1", true));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_tickplain_2", true));
	status = run_tick("4", out, sizeof(out));
	EXPECT_EQ(0, status);
	EXPECT_STREQ("hi: 0\nhi: 1\nhi: 2\nhi: 3\n"
		     "tick: done, loop2 semaphore=0\n", out);
	EXPECT_EQ(4, ut_trace_count("ust_tickplain_1", 0));
	EXPECT_EQ(0, ut_trace_count("ust_tickplain_2", 0));
}

TEST_HARNESS_MAIN
