// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_badinput: malformed uprobe definitions are rejected with the right
 * errno and error_log message, and leave no event behind; definitions that
 * are only detected at enable time fail to enable and stay disabled.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_util.h"

#define GRP	"ust_bad"

/* two counters used as reference counter offsets */
unsigned short bad_ref_a[2] __section(".probes") __used;

noipa long bad_func(long x)
{
	return x - 1;
}

/* the breakpoint instruction at the global label bad_int3_insn (never executed) */
asm(".pushsection .text\n"
	".globl bad_int3\n"
	".type bad_int3, @function\n"
	"bad_int3:\n"
	".globl bad_int3_insn\n"
	"bad_int3_insn:\n"
	"	" UT_BP_ASM "\n"
	"	ret\n"
	".size bad_int3, .-bad_int3\n"
	".popsection\n");

FIXTURE(bad) {
	bool used;
};

FIXTURE_SETUP(bad)
{
}

FIXTURE_TEARDOWN(bad)
{
	if (self->used)
		ut_group_cleanup(GRP);
}

/* Start a test using group GRP; returns true if it was skipped. */
static bool start(struct __test_metadata *_metadata, bool *used)
{
	if (ut_no_tracefs(_metadata))
		return true;
	*used = true;
	ut_group_cleanup(GRP);
	ASSERT_EQ(0, ut_error_log_clear());
	return false;
}

#define START()		start(_metadata, &self->used)

static unsigned long func_off(void)
{
	return (unsigned long)ut_elf_sym_offset(ut_self_exe(), "bad_func");
}

/*
 * Check that the last write failed with -@err (@ret), that error_log now
 * holds "trace_uprobe: error: @msg", and that event @ev does not exist.
 */
static void expect_rejected(struct __test_metadata *_metadata, int ret,
			    int err, const char *msg, const char *ev)
{
	char *log = ut_error_log(), line[256];

	ASSERT_NE(NULL, log);
	EXPECT_EQ(-err, ret);
	snprintf(line, sizeof(line), "trace_uprobe: error: %s\n", msg);
	EXPECT_NE(NULL, strstr(log, line)) {
		TH_LOG("error_log:\n%s", log);
	}
	free(log);
	EXPECT_FALSE(ut_event_dir_exists(GRP, ev));
	EXPECT_FALSE(ut_uprobe_events_has(GRP, ev));
}

#define EXPECT_REJECTED(ret, err, msg, ev) \
	expect_rejected(_metadata, ret, err, msg, ev)

/* A file that does not exist. */
TEST_F(bad, missing_file)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/nofile /nonexistent/ust_file:0x100");
	EXPECT_REJECTED(ret, ENOENT, "Failed to find the given file", "nofile");
}

/* A directory is not a regular file. */
TEST_F(bad, directory)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/dir %s:0x100", ut_self_dir());
	EXPECT_REJECTED(ret, EINVAL, "Not a regular file", "dir");
}

/* A character device (/dev/null) is not a regular file. */
TEST_F(bad, char_device)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/devnull /dev/null:0x0");
	EXPECT_REJECTED(ret, EINVAL, "Not a regular file", "devnull");
}

/* An offset that is not a number. */
TEST_F(bad, malformed_offset)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/badoff %s:0x12zz", ut_self_exe());
	EXPECT_REJECTED(ret, EINVAL, "Invalid uprobe offset", "badoff");
}

/*
 * "PATH:SYMBOL" does not parse as a uprobe at all (the character after the
 * last ':' must be a digit): EINVAL with no error_log entry.
 */
TEST_F(bad, symbol_offset)
{
	char *log;
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/symoff %s:bad_func", ut_self_exe());
	EXPECT_EQ(-EINVAL, ret);
	log = ut_error_log();
	ASSERT_NE(NULL, log);
	EXPECT_STREQ("", log);
	free(log);
	EXPECT_FALSE(ut_event_dir_exists(GRP, "symoff"));
	EXPECT_FALSE(ut_uprobe_events_has(GRP, "symoff"));
}

/* A PATH without ":OFFSET" is likewise EINVAL with no error_log entry. */
TEST_F(bad, missing_offset)
{
	char *log;
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/nooff %s", ut_self_exe());
	EXPECT_EQ(-EINVAL, ret);
	log = ut_error_log();
	ASSERT_NE(NULL, log);
	EXPECT_STREQ("", log);
	free(log);
	EXPECT_FALSE(ut_event_dir_exists(GRP, "nooff"));
}

/* A bad suffix after the offset (only %return is valid). */
TEST_F(bad, bad_offset_suffix)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/badsuf %s:0x%lx%%foo", ut_self_exe(),
			   func_off());
	EXPECT_REJECTED(ret, EINVAL, "Invalid probed address suffix",
			"badsuf");
}

/* A reference counter offset that is not a number. */
TEST_F(bad, malformed_ref_ctr)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/badref %s:0x%lx(0xzz)", ut_self_exe(),
			   func_off());
	EXPECT_REJECTED(ret, EINVAL, "Invalid reference counter offset",
			"badref");
}

/* A reference counter without the closing brace. */
TEST_F(bad, ref_ctr_unclosed)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/openref %s:0x%lx(0x10", ut_self_exe(),
			   func_off());
	EXPECT_REJECTED(ret, EINVAL, "Reference counter brace is not closed",
			"openref");
}

/* Garbage after the reference counter. */
TEST_F(bad, ref_ctr_suffix)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/sufref %s:0x%lx(0x10)xyz", ut_self_exe(),
			   func_off());
	EXPECT_REJECTED(ret, EINVAL, "Reference counter has wrong suffix",
			"sufref");
}

/* A fetch argument naming no register. */
TEST_F(bad, bad_register)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/badreg %s:0x%lx x=%%nosuchreg",
			   ut_self_exe(), func_off());
	EXPECT_REJECTED(ret, EINVAL, "Invalid register name", "badreg");
}

/* $retval on an entry probe. */
TEST_F(bad, retval_on_entry)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/retp %s:0x%lx r=$retval",
			   ut_self_exe(), func_off());
	EXPECT_REJECTED(ret, EINVAL, "$retval is not available on probe",
			"retp");
}

/* An unknown fetch type. */
TEST_F(bad, bad_type)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/badtype %s:0x%lx x=%s:u7",
			   ut_self_exe(), func_off(), UT_ARG0);
	EXPECT_REJECTED(ret, EINVAL, "Unknown type is specified", "badtype");
}

/* An event name that is not a C identifier. */
TEST_F(bad, bad_event_name)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/1bad %s:0x%lx", ut_self_exe(),
			   func_off());
	EXPECT_REJECTED(ret, EINVAL,
			"Event name must follow the same rules as C identifiers",
			"1bad");
}

/* Deleting an event that does not exist fails with ENOENT. */
TEST_F(bad, delete_missing)
{
	if (START())
		return;
	EXPECT_EQ(-ENOENT, ut_probe_del(GRP, "never_defined"));
}

/*
 * Check what stock 6.1 does with a definition it takes although no probe
 * can ever be registered for it (@ret its write): the event exists, and
 * enabling fails with EINVAL, leaving it disabled.
 */
static void expect_enable_fails(struct __test_metadata *_metadata, int ret,
				const char *ev)
{
	char path[256], *en;

	ASSERT_EQ(0, ret);
	EXPECT_EQ(-EINVAL, ut_event_enable(GRP, ev, true));
	snprintf(path, sizeof(path), UT_TRACEFS "/events/" GRP "/%s/enable",
		 ev);
	en = ut_read_file(path, NULL);
	ASSERT_NE(NULL, en);
	EXPECT_STREQ("0\n", en);
	free(en);
	EXPECT_EQ(0, ut_probe_del(GRP, ev));
	EXPECT_FALSE(ut_event_dir_exists(GRP, ev));
}

/*
 * An offset beyond the end of the file is refused when it is defined:
 * EINVAL, "Invalid uprobe offset". Stock 6.1 checks it only on enable
 * (expected there).
 */
TEST_F(bad, offset_beyond_eof)
{
	struct stat st;
	int ret;

	if (START())
		return;
	ASSERT_EQ(0, stat(ut_self_exe(), &st));
	ret = ut_probe_add("p:" GRP "/eof %s:0x%lx", ut_self_exe(),
			   (unsigned long)st.st_size + 0x10000);
	if (ut_impl_is_stock()) {
		expect_enable_fails(_metadata, ret, "eof");
		UT_STOCK_FAILS("it accepts an offset beyond the file's end");
		return;
	}
	EXPECT_REJECTED(ret, EINVAL, "Invalid uprobe offset", "eof");
}

/*
 * An offset where no instruction can start (not a multiple of the
 * breakpoint's size: arm64's 4 bytes) is refused when the probe is
 * enabled, with EINVAL, and nothing is written: the function runs as
 * before. The definition takes it, as 6.1's does (ftracetest's
 * uprobe_syntax_errors.tc defines "p /bin/sh:10" and expects the error
 * further on). On x86 every byte may start an instruction.
 */
TEST_F(bad, unaligned_offset)
{
	int ret;

	if (UT_BP_SIZE == 1)
		SKIP(return, "every offset may start an instruction here");
	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/unal %s:0x%lx", ut_self_exe(),
			   func_off() + 2);
	expect_enable_fails(_metadata, ret, "unal");
	EXPECT_EQ(19, bad_func(20));
}

/*
 * A reference counter (a 2-byte SDT semaphore) at an odd offset is
 * refused when it is defined: EINVAL, "Invalid reference counter
 * offset". Stock 6.1 checks it only on enable (expected there).
 */
TEST_F(bad, ref_ctr_odd)
{
	int ret;

	if (START())
		return;
	ret = ut_probe_add("p:" GRP "/oddref %s:0x%lx(0x%lx)", ut_self_exe(),
			   func_off(), func_off() + 1);
	if (ut_impl_is_stock()) {
		expect_enable_fails(_metadata, ret, "oddref");
		UT_STOCK_FAILS("it accepts an odd reference counter offset");
		return;
	}
	EXPECT_REJECTED(ret, EINVAL, "Invalid reference counter offset",
			"oddref");
}

/*
 * The same for a reference counter beyond the end of the file. Stock 6.1
 * even enables that probe, whose counter is never set (expected there).
 */
TEST_F(bad, ref_ctr_beyond_eof)
{
	struct stat st;
	int ret;

	if (START())
		return;
	ASSERT_EQ(0, stat(ut_self_exe(), &st));
	ret = ut_probe_add("p:" GRP "/eofref %s:0x%lx(0x%lx)", ut_self_exe(),
			   func_off(), (unsigned long)st.st_size + 0x10000);
	if (ut_impl_is_stock()) {
		ASSERT_EQ(0, ret);
		EXPECT_EQ(0, ut_event_enable(GRP, "eofref", true));
		EXPECT_EQ(0, ut_event_enable(GRP, "eofref", false));
		UT_STOCK_FAILS("it enables a probe whose counter no mapping holds");
		return;
	}
	EXPECT_REJECTED(ret, EINVAL, "Invalid reference counter offset",
			"eofref");
}

/*
 * Fixed-size arguments whose record cannot fit a trace record (8 arrays
 * of 64 u64, 4 KiB) are refused when defined: E2BIG, "Event too big"
 * (the trace_probe library's bound, 3 KiB); strings are cut to fit.
 */
TEST_F(bad, record_too_big)
{
	char args[512] = "";
	int i, ret, n = 0;

	if (START())
		return;
	for (i = 0; i < 8; i++)
		n += snprintf(args + n, sizeof(args) - n,
			      " a%d=+0(%%sp):u64[64]", i);
	ret = ut_probe_add("p:" GRP "/big %s:0x%lx%s", ut_self_exe(),
			   func_off(), args);
	EXPECT_REJECTED(ret, E2BIG, "Event too big (too many fields?)", "big");
}

/*
 * More than 128 arguments are refused: E2BIG, "Event too big (too many
 * fields?)". Stock 6.1 takes the definition and silently drops every
 * argument past the 128th (expected there).
 */
TEST_F(bad, too_many_args)
{
	char args[129 * 12] = "", *list;
	int i, ret, n = 0;

	if (START())
		return;
	for (i = 0; i <= 128; i++)
		n += snprintf(args + n, sizeof(args) - n, " a%d=%s", i,
			      UT_ARG0);
	ret = ut_probe_add("p:" GRP "/many %s:0x%lx%s", ut_self_exe(),
			   func_off(), args);
	if (ut_impl_is_stock()) {
		ASSERT_EQ(0, ret);
		list = ut_read_file(UT_TRACEFS "/uprobe_events", NULL);
		ASSERT_NE(NULL, list);
		EXPECT_NE(NULL, strstr(list, " a127=" UT_ARG0 "\n"));
		EXPECT_EQ(NULL, strstr(list, " a128="));
		free(list);
		UT_STOCK_FAILS("it drops the 129th argument silently");
		return;
	}
	EXPECT_REJECTED(ret, E2BIG, "Event too big (too many fields?)", "many");
}

/*
 * A probe on a breakpoint instruction (uprobes' own: int3, BRK #0x5) cannot
 * be installed in a running process that maps the file (here: this test
 * itself); the event stays disabled.
 */
TEST_F(bad, int3_instruction)
{
	int64_t off;
	char *en;
	int ret;

	if (START())
		return;
	off = ut_elf_sym_offset(ut_self_exe(), "bad_int3_insn");
	ASSERT_LT(0, off);
	ASSERT_EQ(0, ut_probe_add("p:" GRP "/int3 %s:0x%lx", ut_self_exe(),
				  (unsigned long)off));
	ret = ut_event_enable(GRP, "int3", true);
	EXPECT_EQ(-524 /* ENOTSUPP */, ret);
	en = ut_read_file(UT_TRACEFS "/events/" GRP "/int3/enable", NULL);
	ASSERT_NE(NULL, en);
	EXPECT_STREQ("0\n", en);
	free(en);
}

/*
 * A second event at the same address with a different reference counter
 * is rejected when it is defined: EINVAL, no error_log entry.
 */
TEST_F(bad, ref_ctr_mismatch)
{
	int64_t sem;
	char *log;
	int ret;

	if (START())
		return;
	sem = ut_elf_sym_offset(ut_self_exe(), "bad_ref_a");
	ASSERT_LT(0, sem);
	ASSERT_EQ(0, ut_probe_add("p:" GRP "/refa %s:0x%lx(0x%lx)",
				  ut_self_exe(), func_off(),
				  (unsigned long)sem));
	ASSERT_EQ(0, ut_error_log_clear());
	ret = ut_probe_add("p:" GRP "/refb %s:0x%lx(0x%lx)", ut_self_exe(),
			   func_off(), (unsigned long)sem + 2);
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_FALSE(ut_event_dir_exists(GRP, "refb"));
	EXPECT_FALSE(ut_uprobe_events_has(GRP, "refb"));
	log = ut_error_log();
	ASSERT_NE(NULL, log);
	EXPECT_STREQ("", log);
	free(log);
	/* the first one is unaffected */
	EXPECT_EQ(0, ut_event_enable(GRP, "refa", true));
	EXPECT_EQ(1, UT_READ_ONCE(bad_ref_a[0]));
	EXPECT_EQ(0, UT_READ_ONCE(bad_ref_a[1]));
}

/* perf_event_open() on the uprobe PMU with a missing file fails. */
TEST(perf_missing_file)
{
	int fd;

	if (ut_pmu_type() < 0)
		SKIP(return, "CONFIG_UPROBE_EVENTS not enabled (no uprobe PMU)");
	fd = ut_uprobe_perf_open("/nonexistent/ust_file", 0x100, 0, 0);
	EXPECT_EQ(-ENOENT, fd);
	if (fd >= 0)
		close(fd);
}

TEST_HARNESS_MAIN
