// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_tracefs: uprobe and uretprobe events defined through tracefs on
 * functions of this very binary: hit counts, fetch arguments, profile
 * counts, and event definition/removal rules.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_targets.h"
#include "uprobe_util.h"

/* ---- probe targets ---- */

long tfs_sink;
uint64_t tfs_global = 0x1111;
/*
 * A variable in the read-only data segment, which (like the text) maps
 * file offsets to the same link-time addresses; the test makes its page
 * writable to change it.
 */
const uint64_t tfs_ro_global __section(".rodata.tfs") __used = 0x2222;

noipa long tfs_func(long a, long b)
{
	return a * 7 + b;
}

noipa long tfs_square(long x)
{
	return x * x + 1;
}

noipa long tfs_strlen(const char *s)
{
	return strlen(s);
}

noipa long tfs_read_global(void)
{
	return UT_READ_ONCE(tfs_global);
}

noipa long tfs_read_ro_global(void)
{
	return UT_READ_ONCE(tfs_ro_global);
}

/* ---- helpers ---- */

/* Define "KIND:GRP/EV SELF:OFFSET(sym) ARGS"; returns 0 or -errno. */
static int probe_sym(const char *kind, const char *grp, const char *ev,
		     const char *sym, const char *args)
{
	int64_t off = ut_elf_sym_offset(ut_self_exe(), sym);

	if (off < 0)
		return -ENOENT;
	return ut_probe_add("%s:%s/%s %s:0x%lx%s%s", kind, grp, ev,
			    ut_self_exe(), (unsigned long)off,
			    args ? " " : "", args ? args : "");
}

FIXTURE(tfs) {
	char grp[64];
};

FIXTURE_SETUP(tfs)
{
}

FIXTURE_TEARDOWN(tfs)
{
	if (self->grp[0])
		ut_group_cleanup(self->grp);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)

/* N calls of a probed function give exactly N events from this process. */
TEST_F(tfs, p_event_count)
{
	int i;

	if (START("ust_count"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_count_e", "tfs_func", NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_count_e", true));
	for (i = 0; i < 5; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 1));
	ASSERT_EQ(5, ut_trace_count("ust_count_e", getpid()));
	ASSERT_EQ(5, ut_trace_count("ust_count_e", 0));
}

/*
 * An event defined without a name is named "p_FILE_0xOFFSET", FILE being
 * the file's name cut at its first '.', '-' or '_', for a return probe too.
 */
TEST_F(tfs, default_names)
{
	const char *base = strrchr(ut_self_exe(), '/') + 1;
	int64_t off[2];
	char name[2][64];
	int i;

	if (START("ust_dflt"))
		return;
	off[0] = ut_elf_sym_offset(ut_self_exe(), "tfs_func");
	off[1] = ut_elf_sym_offset(ut_self_exe(), "tfs_square");
	ASSERT_LT(0, off[0]);
	ASSERT_LT(0, off[1]);
	ASSERT_EQ(0, ut_probe_add("p:%s/ %s:0x%lx", self->grp, ut_self_exe(),
				  (unsigned long)off[0]));
	ASSERT_EQ(0, ut_probe_add("r:%s/ %s:0x%lx", self->grp, ut_self_exe(),
				  (unsigned long)off[1]));
	for (i = 0; i < 2; i++) {
		snprintf(name[i], sizeof(name[i]), "p_%.*s_0x%lx",
			 (int)strcspn(base, ".-_"), base, (unsigned long)off[i]);
		EXPECT_TRUE(ut_uprobe_events_has(self->grp, name[i])) {
			TH_LOG("no event %s/%s", self->grp, name[i]);
		}
	}
}

/* The address printed in each record is the function's runtime address. */
TEST_F(tfs, p_event_ip)
{
	char **recs;
	uint64_t ip;
	int i, n;

	if (START("ust_ip"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_ip_e", "tfs_func", NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_ip_e", true));
	for (i = 0; i < 3; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 1));
	n = ut_trace_records("ust_ip_e", getpid(), &recs);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_ip(recs[i], &ip, NULL));
		EXPECT_EQ((uint64_t)(uintptr_t)&tfs_func, ip);
	}
	ut_free_records(recs, n);
}

/* UT_ARG0/UT_ARG1 fetch the first two arguments, UT_IP the probed address. */
TEST_F(tfs, fetch_regs)
{
	static const long a[] = { 3, -9, 0x7fffffffffffL, 0 };
	static const long b[] = { 11, 42, -1, 0x5a5a };
	uint64_t v;
	char **recs;
	int i, n;

	if (START("ust_regs"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_regs_e", "tfs_func",
			       "a=" UT_ARG0 " b=" UT_ARG1 " ip=" UT_IP));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_regs_e", true));
	for (i = 0; i < 4; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(a[i], b[i]));
	n = ut_trace_records("ust_regs_e", getpid(), &recs);
	ASSERT_EQ(4, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_u64(recs[i], "a", &v));
		EXPECT_EQ((uint64_t)a[i], v);
		ASSERT_EQ(0, ut_rec_u64(recs[i], "b", &v));
		EXPECT_EQ((uint64_t)b[i], v);
		ASSERT_EQ(0, ut_rec_u64(recs[i], "ip", &v));
		EXPECT_EQ((uint64_t)(uintptr_t)&tfs_func, v);
	}
	ut_free_records(recs, n);
}

/* Typed fetches: s32, u8 and x16 views of argument registers. */
TEST_F(tfs, fetch_typed)
{
	char **recs;
	uint64_t v;
	int n;

	if (START("ust_typed"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_typed_e", "tfs_func",
			       "s=" UT_ARG0 ":s32 u=" UT_ARG1 ":u8 x=" UT_ARG1 ":x16"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_typed_e", true));
	UT_WRITE_ONCE(tfs_sink, tfs_func(-5, 0x12345));
	n = ut_trace_records("ust_typed_e", getpid(), &recs);
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, ut_rec_u64(recs[0], "s", &v));
	EXPECT_EQ(-5, (int64_t)v);
	ASSERT_EQ(0, ut_rec_u64(recs[0], "u", &v));
	EXPECT_EQ(0x45ULL, v);
	ASSERT_EQ(0, ut_rec_u64(recs[0], "x", &v));
	EXPECT_EQ(0x2345ULL, v);
	EXPECT_NE(NULL, strstr(recs[0], "x=0x2345"));
	ut_free_records(recs, n);
}

/* An r probe reports $retval and the probed function's address. */
TEST_F(tfs, fetch_retval)
{
	uint64_t v, ip, func;
	char **recs;
	int i, n;

	if (START("ust_ret"))
		return;
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_ret_e", "tfs_square",
			       "ret=$retval"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_ret_e", true));
	for (i = 0; i < 4; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_square(i));
	n = ut_trace_records("ust_ret_e", getpid(), &recs);
	ASSERT_EQ(4, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_u64(recs[i], "ret", &v));
		EXPECT_EQ((uint64_t)(i * i + 1), v);
		ASSERT_EQ(0, ut_rec_ip(recs[i], &ip, &func));
		EXPECT_EQ((uint64_t)(uintptr_t)&tfs_square, func);
	}
	ut_free_records(recs, n);
}

/*
 * @+OFFSET with a global variable's file offset reads the variable.
 * (Stock resolves @+OFFSET against the base at which the probed file offset
 * is mapped, see fetch_mem_offset_base, so the variable is one whose
 * segment maps file offsets to the same addresses as the text; checked.)
 */
TEST_F(tfs, fetch_mem_file_offset)
{
	static const uint64_t vals[] = { 0x1122334455667788ULL, 0, 42 };
	uint64_t *var = (uint64_t *)&tfs_ro_global;
	const char *exe = ut_self_exe();
	uintptr_t page = (uintptr_t)var & ~4095UL;
	int64_t off;
	char **recs, args[64];
	uint64_t v;
	int i, n;

	if (START("ust_memoff"))
		return;
	off = ut_elf_sym_offset(exe, "tfs_ro_global");
	ASSERT_LT(0, off);
	ASSERT_EQ(ut_elf_sym_vaddr(exe, "tfs_ro_global") - off,
		  ut_elf_sym_vaddr(exe, "tfs_read_ro_global") -
		  ut_elf_sym_offset(exe, "tfs_read_ro_global"));
	ASSERT_EQ(0, mprotect((void *)page, 4096, PROT_READ | PROT_WRITE));
	snprintf(args, sizeof(args), "g=@+0x%lx:u64", (unsigned long)off);
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_memoff_e",
			       "tfs_read_ro_global", args));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_memoff_e", true));
	for (i = 0; i < 3; i++) {
		UT_WRITE_ONCE(*var, vals[i]);
		UT_WRITE_ONCE(tfs_sink, tfs_read_ro_global());
	}
	n = ut_trace_records("ust_memoff_e", getpid(), &recs);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_u64(recs[i], "g", &v));
		EXPECT_EQ(vals[i], v);
	}
	ut_free_records(recs, n);
}

/*
 * @+OFFSET is resolved as (probed address - probe's file offset) + OFFSET:
 * in tick, whose data segment is mapped one page above its file offset,
 * @+<link address of tick_loop2_semaphore> on tick:loop1 reads the
 * semaphore (1 while tick:loop2 is probed with its reference counter).
 */
TEST_F(tfs, fetch_mem_offset_base)
{
	const char *tick = ut_helper("tick");
	const char *const argv[] = { tick, "3", "0", NULL };
	struct ut_sdt_note l1, l2;
	char out[256], **recs;
	uint64_t v;
	int i, n;

	if (START("ust_membase"))
		return;
	ASSERT_EQ(0, ut_sdt_find(tick, "tick", "loop1", &l1));
	ASSERT_EQ(0, ut_sdt_find(tick, "tick", "loop2", &l2));
	ASSERT_NE(0ULL, l2.sem_off);
	/* the text maps offsets 1:1, the data segment does not */
	ASSERT_EQ(l1.pc, l1.pc_off);
	ASSERT_NE(l2.sem, l2.sem_off);
	ASSERT_EQ(0, ut_probe_add("p:%s/ust_membase_2 %s:0x%lx(0x%lx)",
				  self->grp, tick, (unsigned long)l2.pc_off,
				  (unsigned long)l2.sem_off));
	ASSERT_EQ(0, ut_probe_add("p:%s/ust_membase_1 %s:0x%lx s=@+0x%lx:u16",
				  self->grp, tick, (unsigned long)l1.pc_off,
				  (unsigned long)(l2.sem - (l1.pc - l1.pc_off))));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_membase_2", true));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_membase_1", true));
	ASSERT_EQ(0, ut_run(argv, out, sizeof(out)));
	EXPECT_STREQ("hi: 0\nhi: 1\nhi: 2\ntick: done, loop2 semaphore=1\n",
		     out);
	n = ut_trace_records("ust_membase_1", 0, &recs);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_u64(recs[i], "s", &v));
		EXPECT_EQ(1ULL, v);
	}
	ut_free_records(recs, n);
	EXPECT_EQ(3, ut_trace_count("ust_membase_2", 0));
}

/* @ADDR reads user memory at an absolute address. */
TEST_F(tfs, fetch_mem_abs)
{
	char **recs, args[64];
	uint64_t v;
	int n;

	if (START("ust_memabs"))
		return;
	snprintf(args, sizeof(args), "g=@0x%lx:x64",
		 (unsigned long)(uintptr_t)&tfs_global);
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_memabs_e",
			       "tfs_read_global", args));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_memabs_e", true));
	UT_WRITE_ONCE(tfs_global, 0xdeadbeefcafeULL);
	UT_WRITE_ONCE(tfs_sink, tfs_read_global());
	n = ut_trace_records("ust_memabs_e", getpid(), &recs);
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, ut_rec_u64(recs[0], "g", &v));
	EXPECT_EQ(0xdeadbeefcafeULL, v);
	ut_free_records(recs, n);
}

/* $stack at a function's first instruction equals the stack pointer there. */
TEST_F(tfs, fetch_stack)
{
	uint64_t v, sp[3];
	char **recs;
	int i, n;

	if (START("ust_stack"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_stack_e", "tfs_get_sp",
			       "sp=$stack"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_stack_e", true));
	for (i = 0; i < 3; i++)
		sp[i] = tfs_get_sp();
	n = ut_trace_records("ust_stack_e", getpid(), &recs);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_u64(recs[i], "sp", &v));
		EXPECT_EQ(sp[i], v);
	}
	ut_free_records(recs, n);
}

/* $stackN fetches the N-th word on the stack. */
TEST_F(tfs, fetch_stackn)
{
	char **recs;
	uint64_t v;
	long r;
	int n;

	if (START("ust_stackn"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_stackn_e",
			       "tfs_stackn_probe",
			       "s0=$stack0 s1=$stack1 s2=$stack2"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_stackn_e", true));
	r = tfs_stackn(0xa1, 0xb2);
	EXPECT_EQ(0xa1 + 0xb2, r);
	n = ut_trace_records("ust_stackn_e", getpid(), &recs);
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, ut_rec_u64(recs[0], "s0", &v));
	EXPECT_EQ(0xb2ULL, v);
	ASSERT_EQ(0, ut_rec_u64(recs[0], "s1", &v));
	EXPECT_EQ(0xa1ULL, v);
	ASSERT_EQ(0, ut_rec_u64(recs[0], "s2", &v));
	EXPECT_EQ(0x1234ULL, v);
	ut_free_records(recs, n);
}

/* +0(UT_ARG0):string fetches the NUL terminated string argument. */
TEST_F(tfs, fetch_string)
{
	static const char * const strs[] = { "hello", "uprobes in 6.1", "" };
	char **recs, s[64];
	int i, n;

	if (START("ust_string"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_string_e", "tfs_strlen",
			       "s=+0(" UT_ARG0 "):string"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_string_e", true));
	for (i = 0; i < 3; i++)
		EXPECT_EQ((long)strlen(strs[i]), tfs_strlen(strs[i]));
	n = ut_trace_records("ust_string_e", getpid(), &recs);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ut_rec_str(recs[i], "s", s, sizeof(s)));
		EXPECT_STREQ(strs[i], s);
	}
	ut_free_records(recs, n);
}

/* $comm fetches the task's comm. */
TEST_F(tfs, fetch_comm)
{
	char **recs, s[64];
	int n;

	if (START("ust_comm"))
		return;
	ASSERT_EQ(0, prctl(PR_SET_NAME, "ust-comm-t", 0, 0, 0));
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_comm_e", "tfs_func",
			       "c=$comm"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_comm_e", true));
	UT_WRITE_ONCE(tfs_sink, tfs_func(1, 2));
	n = ut_trace_records("ust_comm_e", getpid(), &recs);
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, ut_rec_str(recs[0], "c", s, sizeof(s)));
	EXPECT_STREQ("ust-comm-t", s);
	ut_free_records(recs, n);
}

/* uprobe_profile counts exactly the hits of the event. */
TEST_F(tfs, profile_hits)
{
	int i;

	if (START("ust_prof"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_prof_e", "tfs_func", NULL));
	ASSERT_EQ(0, ut_profile_hits("ust_prof_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_prof_e", true));
	for (i = 0; i < 17; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	EXPECT_EQ(17, ut_profile_hits("ust_prof_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_prof_e", false));
	for (i = 0; i < 4; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	EXPECT_EQ(17, ut_profile_hits("ust_prof_e"));
}

/* Only calls made while the event is enabled are recorded. */
TEST_F(tfs, enable_window)
{
	int i;

	if (START("ust_window"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_window_e", "tfs_func",
			       NULL));
	for (i = 0; i < 3; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_window_e", true));
	for (i = 0; i < 4; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_window_e", false));
	for (i = 0; i < 5; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_window_e", true));
	for (i = 0; i < 2; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	EXPECT_EQ(6, ut_trace_count("ust_window_e", getpid()));
}

/* Two events at the same address each record every call. */
TEST_F(tfs, two_events_same_address)
{
	int i;

	if (START("ust_twin"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_twin_a", "tfs_func", NULL));
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_twin_b", "tfs_func",
			       "x=" UT_ARG0));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_twin_a", true));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_twin_b", true));
	for (i = 0; i < 6; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	EXPECT_EQ(6, ut_trace_count("ust_twin_a", getpid()));
	EXPECT_EQ(6, ut_trace_count("ust_twin_b", getpid()));
	/* disabling one leaves the other working */
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_twin_a", false));
	for (i = 0; i < 2; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	EXPECT_EQ(6, ut_trace_count("ust_twin_a", getpid()));
	EXPECT_EQ(8, ut_trace_count("ust_twin_b", getpid()));
}

/* p and r probes on one function interleave as entry, return per call. */
TEST_F(tfs, entry_and_return_order)
{
	char *buf, *line, *save = NULL, seq[64] = "", expect[64] = "";
	int i;

	if (START("ust_pair"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_pair_in", "tfs_square",
			       "x=" UT_ARG0 ":u64"));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_pair_out", "tfs_square",
			       "r=$retval:u64"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pair_in", true));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pair_out", true));
	for (i = 0; i < 3; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_square(i + 2));
	EXPECT_EQ(3, ut_trace_count("ust_pair_in", getpid()));
	EXPECT_EQ(3, ut_trace_count("ust_pair_out", getpid()));

	/* the sequence of records must be in2 out5 in3 out10 in4 out17 */
	for (i = 0; i < 3; i++)
		snprintf(expect + strlen(expect), sizeof(expect) - strlen(expect),
			 "i%d o%d ", i + 2, (i + 2) * (i + 2) + 1);
	buf = ut_read_file(UT_TRACEFS "/trace", NULL);
	ASSERT_NE(NULL, buf);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p;

		p = strstr(line, " ust_pair_in: ");
		if (p)
			p = strstr(p, " x=");
		if (p)
			snprintf(seq + strlen(seq), sizeof(seq) - strlen(seq),
				 "i%ld ", atol(p + 3));
		p = strstr(line, " ust_pair_out: ");
		if (p)
			p = strstr(p, " r=");
		if (p)
			snprintf(seq + strlen(seq), sizeof(seq) - strlen(seq),
				 "o%ld ", atol(p + 3));
	}
	free(buf);
	EXPECT_STREQ(expect, seq);
}

/* Removing an enabled event fails with EBUSY and keeps the event. */
TEST_F(tfs, delete_enabled_ebusy)
{
	if (START("ust_busy"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_busy_e", "tfs_func", NULL));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_busy_e", true));
	EXPECT_EQ(-EBUSY, ut_probe_del(self->grp, "ust_busy_e"));
	EXPECT_TRUE(ut_event_dir_exists(self->grp, "ust_busy_e"));
	EXPECT_TRUE(ut_uprobe_events_has(self->grp, "ust_busy_e"));
	/* and it is still live */
	UT_WRITE_ONCE(tfs_sink, tfs_func(1, 1));
	EXPECT_EQ(1, ut_trace_count("ust_busy_e", getpid()));
}

/* "-:GRP/EV" removes the event: no events dir, no uprobe_events line. */
TEST_F(tfs, delete_removes_event)
{
	if (START("ust_del"))
		return;
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_del_e", "tfs_func", NULL));
	ASSERT_TRUE(ut_event_dir_exists(self->grp, "ust_del_e"));
	ASSERT_TRUE(ut_uprobe_events_has(self->grp, "ust_del_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_del_e", true));
	UT_WRITE_ONCE(tfs_sink, tfs_func(1, 1));
	ASSERT_EQ(1, ut_trace_count("ust_del_e", getpid()));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_del_e", false));
	ASSERT_EQ(0, ut_probe_del(self->grp, "ust_del_e"));
	EXPECT_FALSE(ut_event_dir_exists(self->grp, "ust_del_e"));
	EXPECT_FALSE(ut_group_dir_exists(self->grp));
	EXPECT_FALSE(ut_uprobe_events_has(self->grp, "ust_del_e"));
	EXPECT_EQ(-1, ut_profile_hits("ust_del_e"));
	/* calls after removal record nothing */
	ASSERT_EQ(0, ut_trace_clear());
	UT_WRITE_ONCE(tfs_sink, tfs_func(1, 1));
	EXPECT_EQ(0, ut_trace_count("ust_del_e", getpid()));
	/* removing it again fails: it no longer exists */
	EXPECT_EQ(-ENOENT, ut_probe_del(self->grp, "ust_del_e"));
}

/* uprobe_events lists a definition in its canonical form. */
TEST_F(tfs, uprobe_events_listing)
{
	char *buf, expect[4200];
	int64_t off;

	if (START("ust_list"))
		return;
	off = ut_elf_sym_offset(ut_self_exe(), "tfs_func");
	ASSERT_LT(0, off);
	ASSERT_EQ(0, probe_sym("p", self->grp, "ust_list_p", "tfs_func",
			       "a=" UT_ARG0));
	ASSERT_EQ(0, probe_sym("r", self->grp, "ust_list_r", "tfs_func",
			       "v=$retval"));
	buf = ut_read_file(UT_TRACEFS "/uprobe_events", NULL);
	ASSERT_NE(NULL, buf);
	snprintf(expect, sizeof(expect), "p:%s/ust_list_p %s:0x%016lx a=%s\n",
		 self->grp, ut_self_exe(), (unsigned long)off, UT_ARG0);
	EXPECT_NE(NULL, strstr(buf, expect)) {
		TH_LOG("missing '%s' in:\n%s", expect, buf);
	}
	snprintf(expect, sizeof(expect),
		 "r:%s/ust_list_r %s:0x%016lx v=$retval\n",
		 self->grp, ut_self_exe(), (unsigned long)off);
	EXPECT_NE(NULL, strstr(buf, expect)) {
		TH_LOG("missing '%s' in:\n%s", expect, buf);
	}
	free(buf);
}

/* A uprobe defined through dynamic_events behaves like uprobe_events. */
TEST_F(tfs, dynamic_events_interface)
{
	int64_t off;
	int i;

	if (START("ust_dyn"))
		return;
	if (!ut_file_exists(UT_TRACEFS "/dynamic_events"))
		SKIP(return, "CONFIG_DYNAMIC_EVENTS not enabled");
	off = ut_elf_sym_offset(ut_self_exe(), "tfs_func");
	ASSERT_LT(0, off);
	ASSERT_EQ(0, ut_dynevent_add("p:%s/ust_dyn_e %s:0x%lx a=%s",
				     self->grp, ut_self_exe(),
				     (unsigned long)off, UT_ARG0));
	ASSERT_TRUE(ut_uprobe_events_has(self->grp, "ust_dyn_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_dyn_e", true));
	for (i = 0; i < 4; i++)
		UT_WRITE_ONCE(tfs_sink, tfs_func(i, 0));
	EXPECT_EQ(4, ut_trace_count("ust_dyn_e", getpid()));
}

TEST_HARNESS_MAIN
