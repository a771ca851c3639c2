// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_sites: the per-mm sites of the uprobes core (issue 21, items 3-7).
 *
 * - One process cannot make a registration fail for everyone: an
 *   unprivileged process that changed its private copy of the probed
 *   byte, wrote 0xffff into its own SDT semaphore, or holds a shared
 *   executable mapping of the file is skipped and named in the kernel log,
 *   while a normal process is traced with exact counts (item 3).
 * - An enable that fails in one mm while its threads run through the
 *   probed address, where that mm put its own breakpoint: every one of its
 *   calls traps exactly once, into its own handler (item 4; run it on the
 *   debug kernel for KASAN).
 * - dlopen, dlclose, the old base occupied, dlopen again: the new copy's
 *   semaphore is 1 while traced and its marker is counted (item 5).
 * - A program moving its probed page away and back in a loop while the
 *   probe is enabled and disabled in a loop never gets SIGTRAP (item 6).
 * - fork and MADV_DONTFORK text, and fork with its n-th allocation
 *   failed: a child never inherits a site it cannot have, nor a breakpoint
 *   without its site (item 7).
 *
 * A test of something stock 6.1 gets wrong says so: with
 * UPROBE_TEST_IMPL=stock it asserts the stock failure, logs it and passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <link.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "libuprobe.h"
#include "uprobe_targets.h"
#include "uprobe_util.h"

#define PAGE		4096UL
#define MAX_CHILDREN	3
#define NOBODY		65534
#define RECORD_CMD	UT_TRACEFS "/options/record-cmd"

/*
 * FOREIGN_BP: a breakpoint a debugger writes, UT_BP_SIZE bytes (x86: int3;
 * arm64: BRK #0, gdb's); a SIGTRAP handler steps over it (ut_uc_skip_bp()).
 * CHANGED_AT, CHANGED_TO: a byte of fm_pure's first instruction that a
 * process changes in its private copy, keeping the function's result for
 * small arguments (x86: its REX.W prefix becomes a nop, "nop; lea
 * 1(%rdi,%rdi,2), %eax"; arm64: "add x0, x0, x0, lsl #1" becomes its
 * 32-bit form, "add w0, w0, w0, lsl #1").
 * RET42: code returning 42; RET_FILL: UT_BP_SIZE bytes of a return.
 */
#if defined(__x86_64__)
#define FOREIGN_BP	"\xcc"
#define CHANGED_AT	0
#define CHANGED_TO	0x90
#define RET42		"\xb8\x2a\x00\x00\x00\xc3"	/* mov $42, %eax; ret */
#define RET_FILL	"\xc3"
#elif defined(__aarch64__)
#define FOREIGN_BP	"\x00\x00\x20\xd4"
#define CHANGED_AT	3
#define CHANGED_TO	0x0b
#define RET42		"\x40\x05\x80\xd2\xc0\x03\x5f\xd6"	/* mov x0, #42; ret */
#define RET_FILL	"\xc0\x03\x5f\xd6"
#endif

/*
 * The first UT_BP_SIZE bytes at @p as a little-endian number: an
 * instruction's first byte (x86) or the instruction (arm64).
 */
static long insn_word(const void *p)
{
	const uint8_t *b = p;
	long w = 0;
	int i;

	for (i = UT_BP_SIZE - 1; i >= 0; i--)
		w = w << 8 | b[i];
	return w;
}

/* The breakpoint a probe writes, as insn_word() reads it. */
static long bp_word(void)
{
	return insn_word(UT_BP);
}

/* Write @len bytes of code at @at, which must be writable. */
static void write_code(void *at, const void *code, size_t len)
{
	memcpy(at, code, len);
	__builtin___clear_cache((char *)at, (char *)at + len);
}

/* Install @fn as the SIGTRAP handler, with its siginfo and ucontext. */
static int on_sigtrap(void (*fn)(int sig, siginfo_t *si, void *ucv))
{
	struct sigaction sa = { .sa_sigaction = fn, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGTRAP, &sa, NULL);
}

/* reference counters for the probes of this file */
unsigned short sites_ref[4] __section(".probes") __used;

FIXTURE(sites) {
	char grp[64];
	struct ut_child child[MAX_CHILDREN];
	int nchild;
	int kmsg;
	char tmp[PATH_MAX];	/* a file to remove */
	void *map;		/* a mapping to remove */
	size_t map_len;
	bool fi_used;		/* fault injection knobs to restore */
	char record_cmd[8];	/* tracing option record-cmd to restore */
};

FIXTURE_SETUP(sites)
{
	self->kmsg = -1;
}

FIXTURE_TEARDOWN(sites)
{
	int i;

	for (i = 0; i < self->nchild; i++)
		ut_child_kill(&self->child[i]);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
	if (self->tmp[0])
		unlink(self->tmp);
	if (self->map)
		munmap(self->map, self->map_len);
	if (self->fi_used)
		ut_fi_restore();
	if (self->record_cmd[0])
		ut_write_file(RECORD_CMD, self->record_cmd, false);
	if (self->kmsg >= 0)
		close(self->kmsg);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)

/* File offset of symbol @sym of this binary (-1 if absent). */
static int64_t sym_off(const char *sym)
{
	return ut_elf_sym_offset(ut_self_exe(), sym);
}

/* File offset of sites_ref[@i]. */
static uint64_t ref_off(int i)
{
	return sym_off("sites_ref") + i * sizeof(sites_ref[0]);
}

/* Sum of fm_pure(i) = 3i + 1 over i < n. */
static long pure_sum(long n)
{
	return 3 * n * (n - 1) / 2 + n;
}

/*
 * Copy this binary to a new file in /tmp, mode 0755 (so that user nobody
 * can map it), removed by the teardown; the file's name in *@name.
 */
static int tmp_copy(struct _test_data_sites *self, const char *prefix,
		    const char **name)
{
	int fd, ret;

	snprintf(self->tmp, sizeof(self->tmp), "/tmp/%s.XXXXXX", prefix);
	fd = mkstemp(self->tmp);
	if (fd < 0) {
		self->tmp[0] = '\0';
		return -errno;
	}
	close(fd);
	ret = ut_copy_file(ut_self_exe(), self->tmp);
	if (!ret && chmod(self->tmp, 0755))
		ret = -errno;
	if (name)
		*name = strrchr(self->tmp, '/') + 1;
	return ret;
}

/*
 * Stock 6.1 keeps a probe whose counter it failed to decrement (a full
 * semaphore, foreign_int3_failing_enable), and that probe names its file's
 * inode without holding it: a later copy's inode at the freed one's address
 * finds it, and a probe there with another counter offset is refused. True,
 * with that logged as the stock failure, when @ret is that refusal.
 */
static bool stock_stale_probe(struct __test_metadata *_metadata, int ret)
{
	if (ret != -EINVAL || !ut_impl_is_stock())
		return false;
	UT_STOCK_FAILS("a probe of a deleted copy holds this inode's address: refused");
	return true;
}

/* pread() @len bytes of @path at @off; 0 or -1. */
static int file_bytes(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, off);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* Lines logged since @fd was opened that report a kernel bug. */
static int console_bugs(int fd, char *log, size_t size)
{
	static const char *const bad[] = {
		"BUG", "WARNING", "KASAN", "general protection", "Oops",
	};
	char buf[16384] = "";
	unsigned int i;
	int n = 0;

	/* read once, then count in what was read */
	if (ut_kmsg_count(fd, "\n", NULL, buf, sizeof(buf)) < 0)
		return -1;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (strstr(buf, bad[i]))
			n++;
	if (log)
		snprintf(log, size, "%s", buf);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* helper processes: fork()ed, driven by line commands over pipes      */

enum wk_kind {
	WK_NORMAL,	/* maps the copy's text and data privately */
	WK_BYTE,	/* ... and changes its copy of the probed byte */
	WK_SEM,		/* ... and sets its semaphore to 0xffff */
	WK_SHARED,	/* maps the text MAP_SHARED, PROT_READ | PROT_EXEC */
};

struct wk_args {
	const char *path;	/* the probed copy of this binary */
	uint64_t off;		/* fm_pure's file offset */
	uint64_t ref;		/* sites_ref[0]'s file offset */
	enum wk_kind kind;
	bool unpriv;		/* run as user and group nobody */
	const char *comm;
};

static void say(int fd, const char *fmt, ...) __printf(2, 3);

static void say(int fd, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	if (write(fd, buf, n) != n)
		_exit(3);
}

/*
 * The helper process: maps the page of fm_pure and the page of
 * sites_ref[0] of the copy, does what its kind says, answers "ready" and
 * then, per line: "call N" -> "ok SUM" of fm_pure(0..N-1) through its
 * mapping, "sem" -> its semaphore, "byte" -> its probed instruction
 * (insn_word()), "exit".
 */
static void wk_main(int in, int out, const struct wk_args *a)
{
	uint64_t pgoff = a->off & ~(PAGE - 1), rpgoff = a->ref & ~(PAGE - 1);
	unsigned short *sem;
	long (*fn)(long x);
	char line[64];
	char *text, *data;
	long i, n, sum;

	if (prctl(PR_SET_NAME, a->comm))
		_exit(2);
	if (a->unpriv && (setgroups(0, NULL) || setgid(NOBODY) ||
			  setuid(NOBODY)))
		_exit(4);
	text = ut_map_file(a->path, pgoff, PAGE, PROT_READ | PROT_EXEC,
			   a->kind == WK_SHARED ? MAP_SHARED : MAP_PRIVATE,
			   false);
	data = ut_map_file(a->path, rpgoff, PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE, false);
	if (text == MAP_FAILED || data == MAP_FAILED)
		_exit(5);
	fn = (long (*)(long))(text + a->off - pgoff);
	sem = (unsigned short *)(data + a->ref - rpgoff);
	if (a->kind == WK_BYTE) {
		if (mprotect(text, PAGE, PROT_READ | PROT_WRITE))
			_exit(6);
		write_code(text + a->off - pgoff + CHANGED_AT,
			   (uint8_t[]){ CHANGED_TO }, 1);
		if (mprotect(text, PAGE, PROT_READ | PROT_EXEC))
			_exit(7);
	}
	if (a->kind == WK_SEM)
		UT_WRITE_ONCE(*sem, 0xffff);
	say(out, "ready");
	while (!ut_readline(in, line, sizeof(line), -1)) {
		if (sscanf(line, "call %ld", &n) == 1) {
			for (i = 0, sum = 0; i < n; i++)
				sum += fn(i);
			say(out, "ok %ld", sum);
		} else if (!strcmp(line, "sem")) {
			say(out, "%u", UT_READ_ONCE(*sem));
		} else if (!strcmp(line, "byte")) {
			say(out, "%ld", insn_word(text + a->off - pgoff));
		} else {
			break;
		}
	}
	_exit(0);
}

/*
 * fork() a helper process as self->child[*]; @fn runs in it with the ends
 * of its pipes and never returns. Returns its index or -1.
 */
static int start_child(struct _test_data_sites *self,
		       void (*fn)(int in, int out, const void *arg),
		       const void *arg)
{
	struct ut_child *c;
	int in[2], out[2];
	char buf[32];

	if (self->nchild >= MAX_CHILDREN)
		return -1;
	if (pipe2(in, O_CLOEXEC))
		return -1;
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	c = &self->child[self->nchild++];
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(in[1]);
		close(out[0]);
		fn(in[0], out[1], arg);
		_exit(1);
	}
	close(in[0]);
	close(out[1]);
	c->to = in[1];
	c->from = out[0];
	if (ut_readline(c->from, buf, sizeof(buf), 10000) ||
	    strcmp(buf, "ready"))
		return -1;
	return self->nchild - 1;
}

static void wk_entry(int in, int out, const void *arg)
{
	wk_main(in, out, arg);
}

/* ------------------------------------------------------------------ */
/* 3. one process cannot make a registration fail for everyone        */

/*
 * A helper of @kind, unprivileged, named @comm, maps a copy of this binary
 * before a probe on its fm_pure with reference counter sites_ref[0] is
 * enabled; a normal (root) helper maps it before the enable (@late: after
 * it).  Enabling succeeds, the normal helper's semaphore is 1 and its
 * calls are counted, the odd helper keeps its byte and semaphore and is
 * not counted, one kernel log line names it and the file, and disabling
 * leaves the normal helper's semaphore at 0.  Stock 6.1 logs nothing, and
 * patches a changed byte or a full semaphore anyway: the odd helper's
 * byte becomes the breakpoint and then the file's byte again (its own change is
 * lost), its semaphore wraps from 0xffff to 0 (and the breakpoint stays after
 * disabling), and its calls are counted.
 */
static void odd_mm(struct __test_metadata *_metadata,
		   struct _test_data_sites *self, enum wk_kind kind,
		   const char *comm, bool late)
{
	bool stock_patches = ut_impl_is_stock() && kind != WK_SHARED;
	struct wk_args odd_args, nrm_args;
	long byte0, sem0, nlog, sem_on, file_byte;
	uint8_t file_insn[UT_BP_SIZE];
	struct ut_child *odd, *nrm = NULL;
	char who[64], log[8192] = "";
	const char *name;
	int o, n, ret;

	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, tmp_copy(self, "ust_sites_odd", &name));
	ASSERT_EQ(0, file_bytes(self->tmp, sym_off("fm_pure"), file_insn,
				UT_BP_SIZE));
	file_byte = insn_word(file_insn);
	odd_args = (struct wk_args){
		.path = self->tmp, .off = sym_off("fm_pure"),
		.ref = ref_off(0), .kind = kind, .unpriv = true,
		.comm = comm,
	};
	nrm_args = odd_args;
	nrm_args.kind = WK_NORMAL;
	nrm_args.unpriv = false;
	nrm_args.comm = "ust_normal";
	o = start_child(self, wk_entry, &odd_args);
	ASSERT_LE(0, o);
	odd = &self->child[o];
	if (!late) {
		n = start_child(self, wk_entry, &nrm_args);
		ASSERT_LE(0, n);
		nrm = &self->child[n];
	}
	byte0 = ut_ask(odd, "byte");
	sem0 = ut_ask(odd, "sem");
	ASSERT_LE(0, byte0);
	ASSERT_LE(0, sem0);

	ASSERT_EQ(0, ut_define_at(self->grp, "ust_sites_odd_e", self->tmp,
				  odd_args.off, odd_args.ref));
	ret = ut_event_enable(self->grp, "ust_sites_odd_e", true);
	if (stock_stale_probe(_metadata, ret))
		return;
	ASSERT_EQ(0, ret) {
		TH_LOG("enabling failed (%s) because of one process's mm",
		       strerror(-ret));
	}
	if (late) {
		n = start_child(self, wk_entry, &nrm_args);
		ASSERT_LE(0, n);
		nrm = &self->child[n];
	}
	EXPECT_EQ(1, ut_ask(nrm, "sem"));
	EXPECT_EQ(pure_sum(3), ut_ask(nrm, "call 3"));
	EXPECT_EQ(3, ut_trace_count("ust_sites_odd_e", nrm->pid));
	EXPECT_EQ(pure_sum(2), ut_ask(odd, "call 2"));
	sem_on = ut_ask(odd, "sem");
	if (stock_patches) {
		EXPECT_EQ(bp_word(), ut_ask(odd, "byte"));
		EXPECT_EQ((sem0 + 1) & 0xffff, sem_on);
		EXPECT_EQ(2, ut_trace_count("ust_sites_odd_e", odd->pid));
	} else {
		EXPECT_EQ(byte0, ut_ask(odd, "byte"));
		EXPECT_EQ(sem0, sem_on);
		EXPECT_EQ(0, ut_trace_count("ust_sites_odd_e", odd->pid));
	}

	snprintf(who, sizeof(who), "%s[%d]", comm, odd->pid);
	nlog = ut_kmsg_count(self->kmsg, who, name, log, sizeof(log));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(0, nlog);
		UT_STOCK_FAILS("no log line names %s", who);
	} else {
		EXPECT_EQ(1, nlog) {
			TH_LOG("no line with \"%s\" and \"%s\"; kernel log: %s",
			       who, name, log);
		}
	}

	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sites_odd_e", false));
	EXPECT_EQ(0, ut_ask(nrm, "sem"));
	EXPECT_EQ(pure_sum(2), ut_ask(nrm, "call 2"));
	EXPECT_EQ(3, ut_trace_count("ust_sites_odd_e", nrm->pid));
	if (stock_patches) {
		/* with the full semaphore, stock leaves its breakpoint behind */
		EXPECT_EQ(kind == WK_SEM ? bp_word() : file_byte,
			  ut_ask(odd, "byte"));
		EXPECT_EQ(0, ut_ask(odd, "sem"));
		EXPECT_EQ(2, ut_trace_count("ust_sites_odd_e", odd->pid));
		UT_STOCK_FAILS("odd process patched: byte %#lx, semaphore %#lx -> %#lx, 2 hits",
			       byte0, sem0, sem_on);
	} else {
		EXPECT_EQ(byte0, ut_ask(odd, "byte"));
		EXPECT_EQ(sem0, ut_ask(odd, "sem"));
		EXPECT_EQ(0, ut_trace_count("ust_sites_odd_e", odd->pid));
	}
}

/*
 * An unprivileged process that changed its private copy of the probed
 * byte is skipped and logged; enabling succeeds and a normal process is
 * traced.
 */
TEST_F_TIMEOUT(sites, changed_byte_mm_skipped, 120)
{
	if (START("ust_sites_byte"))
		return;
	odd_mm(_metadata, self, WK_BYTE, "ust_oddbyte", false);
}

/*
 * An unprivileged process whose semaphore is 0xffff is skipped (no breakpoint,
 * its counter untouched) and logged; a normal process is traced.
 */
TEST_F_TIMEOUT(sites, full_semaphore_mm_skipped, 120)
{
	if (START("ust_sites_sem"))
		return;
	odd_mm(_metadata, self, WK_SEM, "ust_oddsem", false);
}

/*
 * An unprivileged process holding the only (shared, executable) mapping
 * of the file when the probe is enabled is skipped and logged; enabling
 * succeeds and a normal process mapping the file afterwards is traced.
 */
TEST_F_TIMEOUT(sites, shared_exec_mm_skipped, 120)
{
	if (START("ust_sites_shr"))
		return;
	odd_mm(_metadata, self, WK_SHARED, "ust_oddshr", true);
}

/* ------------------------------------------------------------------ */
/* 4. an enable failing in an mm whose threads run through the site    */

#define SPIN_THREADS	3
#define SPIN_CYCLES	2000
#define SPIN_SECONDS	60

static long spin_traps, spin_bad;
static int spin_stop;

static uintptr_t spin_bp;

static void spin_trap(int sig, siginfo_t *si, void *ucv)
{
	__atomic_add_fetch(&spin_traps, 1, __ATOMIC_RELAXED);
	ut_uc_skip_bp(ucv, spin_bp);
}

static void *spin_fn(void *arg)
{
	long *calls = arg, i = 0;

	while (!UT_READ_ONCE(spin_stop)) {
		if (ui_nop(i) != i + 1)
			__atomic_add_fetch(&spin_bad, 1, __ATOMIC_RELAXED);
		i++;
		__atomic_store_n(calls, i, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The helper of foreign_int3_failing_enable: its own breakpoint
 * (FOREIGN_BP) on ui_nop's nop (its SIGTRAP handler counts and resumes
 * after it, which skips the nop),
 * sites_ref[1] at 0xffff, SPIN_THREADS threads calling ui_nop(); "stop"
 * -> "ok CALLS TRAPS BAD".
 */
static void spin_entry(int in, int out, const void *arg)
{
	char *insn = (char *)ui_nop + (uintptr_t)arg;
	char *page = (char *)((uintptr_t)insn & ~(PAGE - 1));
	long calls[SPIN_THREADS] = { 0 }, sum = 0;
	pthread_t th[SPIN_THREADS];
	char line[64];
	int i;

	spin_bp = (uintptr_t)insn;
	if (on_sigtrap(spin_trap))
		_exit(2);
	if (mprotect(page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC))
		_exit(3);
	write_code(insn, FOREIGN_BP, UT_BP_SIZE);
	if (mprotect(page, PAGE, PROT_READ | PROT_EXEC))
		_exit(4);
	UT_WRITE_ONCE(sites_ref[1], 0xffff);
	for (i = 0; i < SPIN_THREADS; i++)
		if (pthread_create(&th[i], NULL, spin_fn, &calls[i]))
			_exit(5);
	say(out, "ready");
	if (ut_readline(in, line, sizeof(line), -1) || strcmp(line, "stop"))
		_exit(6);
	UT_WRITE_ONCE(spin_stop, 1);
	for (i = 0; i < SPIN_THREADS; i++) {
		pthread_join(th[i], NULL);
		sum += calls[i];
	}
	say(out, "ok %ld %ld %ld", sum, spin_traps, spin_bad);
	_exit(0);
}

/*
 * A process put its own breakpoint on the probed nop and set the probe's
 * semaphore to 0xffff, and SPIN_THREADS threads call the function while
 * the probe is enabled and disabled SPIN_CYCLES times: each call traps
 * into its own handler exactly once (its breakpoint is neither taken over nor
 * removed), no call goes wrong, the console stays clean (KASAN on the
 * debug kernel: the failing install's site must be freed by RCU), and
 * nothing of the probe outlives its event.
 */
TEST_F_TIMEOUT(sites, foreign_int3_failing_enable, 600)
{
	long calls = -1, traps = -1, bad = -1;
	int t, n, cyc, failed = 0, first_err = 0, ret, nbug;
	char buf[128], log[16384];
	double t0;

	if (START("ust_sites_int3"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_sites_int3_e", ut_self_exe(),
				  sym_off("ui_nop_insn"), ref_off(1)));
	/* where ui_nop_insn is, relative to ui_nop */
	t = start_child(self, spin_entry,
			(void *)(sym_off("ui_nop_insn") - sym_off("ui_nop")));
	ASSERT_LE(0, t);
	t0 = now_s();
	for (cyc = 0; cyc < SPIN_CYCLES && now_s() - t0 < SPIN_SECONDS; cyc++) {
		ret = ut_event_enable(self->grp, "ust_sites_int3_e", true);
		if (ret) {
			failed++;
			if (!first_err)
				first_err = ret;
			continue;
		}
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sites_int3_e",
					     false));
	}
	ASSERT_EQ(0, ut_cmd(&self->child[t], buf, sizeof(buf), "stop"));
	n = sscanf(buf, "ok %ld %ld %ld", &calls, &traps, &bad);
	ASSERT_EQ(3, n);
	EXPECT_EQ(0, ut_child_wait(&self->child[t]));
	TH_LOG("%d cycles in %.1f s, %d enables failed (first: %s), %ld calls, %ld traps",
	       cyc, now_s() - t0, failed, strerror(-first_err), calls, traps);
	EXPECT_LT(0, calls);
	EXPECT_EQ(0, bad);
	if (ut_impl_is_stock()) {
		EXPECT_GT(calls, traps);
		UT_STOCK_FAILS("%ld calls trapped %ld times into the handler",
			       calls, traps);
	} else {
		EXPECT_EQ(calls, traps);
		EXPECT_EQ(0, failed);
	}
	nbug = console_bugs(self->kmsg, log, sizeof(log));
	EXPECT_EQ(0, nbug) {
		TH_LOG("kernel log: %s", log);
	}
	/* nothing of the probe outlives its event: the site takes another */
	ASSERT_EQ(0, ut_probe_del(self->grp, "ust_sites_int3_e"));
	ret = ut_probe_at(self->grp, "ust_sites_int3_e", ut_self_exe(),
			  sym_off("ui_nop_insn"), 0);
	if (ret == -EINVAL && ut_impl_is_stock())
		UT_STOCK_FAILS("the probe outlived its event: another counter offset is refused");
	else
		EXPECT_EQ(0, ret);
}

/* ------------------------------------------------------------------ */
/* 5. dlclose, the old base occupied, dlopen again                     */

/* Lowest start and highest end of the mappings of @path in this process. */
static int map_extent(const char *path, uint64_t *lo, uint64_t *hi)
{
	char line[PATH_MAX + 128], file[PATH_MAX];
	unsigned long s, e;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	*lo = UINT64_MAX;
	*hi = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %s", &s, &e,
			   file) != 3 || strcmp(file, path))
			continue;
		if (s < *lo)
			*lo = s;
		if (e > *hi)
			*hi = e;
	}
	fclose(f);
	return *hi ? 0 : -1;
}

struct dl_lib {
	void *h;
	int (*mark)(int x);
	unsigned int (*sem)(void);
};

static int dl_load(struct dl_lib *l, const char *path)
{
	l->h = dlopen(path, RTLD_NOW);
	if (!l->h)
		return -1;
	l->mark = (int (*)(int))dlsym(l->h, "utdl_mark");
	l->sem = (unsigned int (*)(void))dlsym(l->h, "utdl_sem");
	return l->mark && l->sem ? 0 : -1;
}

static int dl_marks(struct dl_lib *l, int n)
{
	int i, fired = 0;

	for (i = 0; i < n; i++)
		fired += l->mark(i);
	return fired;
}

/*
 * A probe with its semaphore on libuprobe_dl.so's utdl:mark, the library
 * dlopen()ed, dlclose()d, its old address range taken by a PROT_NONE
 * placeholder, and dlopen()ed again at a new base: the new copy's
 * semaphore is 1 while traced and its markers fire and are counted
 * exactly; disabling leaves it 0.
 */
TEST_F_TIMEOUT(sites, dlclose_reload_elsewhere, 120)
{
	const char *lib = ut_helper("libuprobe_dl.so");
	struct ut_sdt_note note;
	uint64_t lo, hi, lo2, hi2;
	struct dl_lib l;
	void *p;

	if (START("ust_sites_dl"))
		return;
	ASSERT_EQ(0, ut_sdt_find(lib, "utdl", "mark", &note));
	ASSERT_NE(0ULL, note.sem_off);
	ASSERT_EQ(0, dl_load(&l, lib));
	ASSERT_EQ(0, map_extent(lib, &lo, &hi));
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_sites_dl_e", lib, note.pc_off,
				 note.sem_off));
	EXPECT_EQ(1U, l.sem());
	EXPECT_EQ(3, dl_marks(&l, 3));
	EXPECT_EQ(3, ut_trace_count("ust_sites_dl_e", getpid()));

	ASSERT_EQ(0, dlclose(l.h));
	ASSERT_FALSE(ut_is_mapped(getpid(), lib));
	p = mmap((void *)lo, hi - lo, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ((void *)lo, p);
	self->map = p;
	self->map_len = hi - lo;
	ASSERT_EQ(0, dl_load(&l, lib));
	ASSERT_EQ(0, map_extent(lib, &lo2, &hi2));
	ASSERT_TRUE(hi2 <= lo || lo2 >= hi) {
		TH_LOG("reloaded at %#lx-%#lx over the old %#lx-%#lx",
		       (unsigned long)lo2, (unsigned long)hi2,
		       (unsigned long)lo, (unsigned long)hi);
	}
	EXPECT_EQ(1U, l.sem());
	EXPECT_EQ(4, dl_marks(&l, 4));
	EXPECT_EQ(7, ut_trace_count("ust_sites_dl_e", getpid()));

	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sites_dl_e", false));
	EXPECT_EQ(0U, l.sem());
	EXPECT_EQ(0, dl_marks(&l, 2));
	EXPECT_EQ(7, ut_trace_count("ust_sites_dl_e", getpid()));
	EXPECT_EQ(0, dlclose(l.h));
}

/* ------------------------------------------------------------------ */
/* 6. mremap of the probed page racing enable and disable              */

#define AWAY_SECONDS	45

/* shared with the child of mremap_loop_while_toggling */
struct away_ctl {
	int stop;	/* set by the test: finish the current loop and exit */
	long loops;	/* loops completed */
};

/*
 * Map 3 pages of @path around fm_pure's page (file offset @off) and, until
 * @ctl->stop, call fm_pure there, move its page away with mremap, call it
 * there, move it back. Returns 0 when every call and move was right.
 */
static int away_loop(const char *path, uint64_t off, struct away_ctl *ctl)
{
	uint64_t pgoff = (off & ~(PAGE - 1)) - PAGE, in_pg = off % PAGE;
	long (*home)(long x), (*there)(long x), i;
	char *a, *hole, *p;

	a = ut_map_file(path, pgoff, 3 * PAGE, PROT_READ | PROT_EXEC,
			MAP_PRIVATE, false);
	hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || hole == MAP_FAILED)
		return 10;
	home = (long (*)(long))(a + PAGE + in_pg);
	there = (long (*)(long))(hole + in_pg);
	for (i = 0; !UT_READ_ONCE(ctl->stop); i++) {
		if (home(i) != 3 * i + 1)
			return 11;
		p = mremap(a + PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
			   hole);
		if (p != hole)
			return 12;
		if (there(i) != 3 * i + 1)
			return 13;
		p = mremap(hole, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
			   a + PAGE);
		if (p != a + PAGE)
			return 14;
		UT_WRITE_ONCE(ctl->loops, i + 1);
	}
	return 0;
}

/*
 * A process calls fm_pure and moves its page away and back in a loop
 * while the probe on it is enabled and disabled in a loop for
 * AWAY_SECONDS: it never gets SIGTRAP (no breakpoint is left without its site),
 * exits 0, and the console stays clean.  Not run on stock 6.1, whose
 * mremap of a probed page logs "BUG: Bad rss-counter state" (#11).
 */
TEST_F_TIMEOUT(sites, mremap_loop_while_toggling, 300)
{
	int status = -1, cycles = 0, nbug;
	struct away_ctl *ctl;
	char log[16384];
	uint64_t off;
	double t0;
	pid_t pid;

	if (ut_impl_is_stock()) {
		UT_STOCK_FAILS("a moved probed page logs \"BUG: Bad rss-counter\" (#11): not run");
		return;
	}
	if (START("ust_sites_away"))
		return;
	ASSERT_EQ(0, ut_unpin_cpu());
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, tmp_copy(self, "ust_sites_away", NULL));
	off = sym_off("fm_pure");
	ASSERT_LE(PAGE, off);
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_sites_away_e", self->tmp, off,
				  0));
	ctl = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	self->map = ctl;
	self->map_len = PAGE;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(away_loop(self->tmp, off, ctl));
	t0 = now_s();
	while (now_s() - t0 < AWAY_SECONDS &&
	       waitpid(pid, &status, WNOHANG) == 0) {
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sites_away_e",
					     true));
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sites_away_e",
					     false));
		cycles++;
	}
	UT_WRITE_ONCE(ctl->stop, 1);
	if (status == -1)
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%d enable/disable cycles, %ld loops, %d hits", cycles,
	       UT_READ_ONCE(ctl->loops),
	       ut_trace_count("ust_sites_away_e", pid));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (WIFSIGNALED(status))
			TH_LOG("killed by signal %d (%s)", WTERMSIG(status),
			       strsignal(WTERMSIG(status)));
		else
			TH_LOG("exit status %d", WEXITSTATUS(status));
	}
	EXPECT_LT(0, cycles);
	EXPECT_LT(0, UT_READ_ONCE(ctl->loops));
	nbug = console_bugs(self->kmsg, log, sizeof(log));
	EXPECT_EQ(0, nbug) {
		TH_LOG("kernel log: %s", log);
	}
}

/* ------------------------------------------------------------------ */
/* 7. fork                                                             */

enum df_mode {
	DF_OTHER,	/* anonymous code, another instruction at the address */
	DF_INT3,	/* the same with the child's own breakpoint there */
	DF_SAME,	/* the probed file's page mapped again there */
};

static int df_traps;
static uintptr_t df_bp;

static void df_trap(int sig, siginfo_t *si, void *ucv)
{
	__atomic_add_fetch(&df_traps, 1, __ATOMIC_RELAXED);
	ut_uc_skip_bp(ucv, df_bp);
}

/*
 * In the child of dontfork(): map something at @page (where the parent's
 * MADV_DONTFORK mapping of @path from @pgoff is) and call the code at
 * @page + @in_pg. Exits 0 when it did what @mode expects.
 */
static void df_child(char *page, uint64_t in_pg, const char *path,
		     uint64_t pgoff, enum df_mode mode)
{
	long (*fn)(long x) = (long (*)(long))(page + in_pg);
	size_t i;
	char *p;
	int fd;

	if (mode == DF_SAME) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(19);
		p = mmap(page, PAGE, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, pgoff);
		if (p != page)
			_exit(20);
		_exit(fn(5) == 16 ? 0 : 21);
	}
	df_bp = (uintptr_t)page + in_pg;
	if (on_sigtrap(df_trap))
		_exit(22);
	p = mmap(page, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != page)
		_exit(23);
	for (i = 0; i < PAGE; i += UT_BP_SIZE)
		memcpy(p + i, RET_FILL, UT_BP_SIZE);
	if (mode == DF_INT3) {
		memcpy(p + in_pg, FOREIGN_BP, UT_BP_SIZE);
		memcpy(p + in_pg + UT_BP_SIZE, RET42, sizeof(RET42) - 1);
	} else {
		memcpy(p + in_pg, RET42, sizeof(RET42) - 1);
	}
	__builtin___clear_cache(p, p + PAGE);
	if (mprotect(p, PAGE, PROT_READ | PROT_EXEC))
		_exit(24);
	if (fn(5) != 42)
		_exit(25);
	if (UT_READ_ONCE(df_traps) != (mode == DF_INT3 ? 1 : 0))
		_exit(26);
	_exit(0);
}

/*
 * The page of fm_pure of a copy of this binary, mapped privately and
 * marked MADV_DONTFORK, probed and hit once; fork; the child maps what
 * @mode says at that address and calls it: it exits 0 (no SIGTRAP, no
 * wrong result, exactly its own traps) and has @child_hits hits.
 */
static void dontfork(struct __test_metadata *_metadata,
		     struct _test_data_sites *self, enum df_mode mode,
		     int child_hits)
{
	uint64_t off, pgoff;
	int status = -1, ret;
	char *a;
	pid_t pid;

	ASSERT_EQ(0, tmp_copy(self, "ust_sites_df", NULL));
	off = sym_off("fm_pure");
	pgoff = off & ~(PAGE - 1);
	a = ut_map_file(self->tmp, pgoff, PAGE, PROT_READ | PROT_EXEC,
			MAP_PRIVATE, false);
	ASSERT_NE(MAP_FAILED, a);
	self->map = a;
	self->map_len = PAGE;
	ASSERT_EQ(0, madvise(a, PAGE, MADV_DONTFORK));
	ret = ut_probe_at(self->grp, "ust_sites_df_e", self->tmp, off, 0);
	if (stock_stale_probe(_metadata, ret))
		return;
	ASSERT_EQ(0, ret);
	EXPECT_EQ(7, ((long (*)(long))(a + off - pgoff))(2));
	EXPECT_EQ(1, ut_trace_count("ust_sites_df_e", getpid()));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		df_child(a, off - pgoff, self->tmp, pgoff, mode);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (WIFSIGNALED(status))
			TH_LOG("child killed by signal %d (%s)",
			       WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			TH_LOG("child exit status %d", WEXITSTATUS(status));
	}
	EXPECT_EQ(child_hits, ut_trace_count("ust_sites_df_e", pid));
	EXPECT_EQ(10, ((long (*)(long))(a + off - pgoff))(3));
	EXPECT_EQ(2, ut_trace_count("ust_sites_df_e", getpid()));
}

/*
 * Probed MADV_DONTFORK text; the child maps other code (another
 * instruction at the probed address) there: no SIGTRAP, no hit.
 */
TEST_F_TIMEOUT(sites, dontfork_child_other_code, 120)
{
	if (START("ust_sites_df1"))
		return;
	dontfork(_metadata, self, DF_OTHER, 0);
}

/*
 * Probed MADV_DONTFORK text; the child maps code with its own breakpoint at
 * the probed address: the child's handler gets exactly that one SIGTRAP,
 * the code's result is its own, no hit is counted.
 */
TEST_F_TIMEOUT(sites, dontfork_child_own_int3, 120)
{
	if (START("ust_sites_df2"))
		return;
	dontfork(_metadata, self, DF_INT3, 0);
}

/*
 * Probed MADV_DONTFORK text; the child maps the probed file's page there
 * again: it gets the breakpoint and its call is counted.
 */
TEST_F_TIMEOUT(sites, dontfork_child_maps_probed_file, 120)
{
	if (START("ust_sites_df3"))
		return;
	dontfork(_metadata, self, DF_SAME, 1);
}

#define FORK_PROBES	3
#define FORK_MAX_NTH	3000

/* not ui_nop: foreign_int3_failing_enable probes it with a counter */
static const char *const fork_syms[FORK_PROBES] = {
	"fm_pure", "ui_mov", "ui_ret",
};

/* The child of fork_under_fault_injection: each probed function once. */
static int fork_child_calls(void)
{
	if (fm_pure(4) != 13 || ui_mov(4, 5) != 5 || ui_ret(4) != 5)
		return 1;
	return 0;
}

struct fork_toggler {
	pthread_t th;
	const char *grp;
	bool stop;
	int cycles, err;
};

/* Enable and disable ust_sites_fork_t until told to stop; 0 or -errno. */
static void *fork_toggle_fn(void *arg)
{
	struct fork_toggler *t = arg;

	while (!UT_READ_ONCE(t->stop) && !t->err) {
		t->err = ut_event_enable(t->grp, "ust_sites_fork_t", true);
		if (!t->err)
			t->err = ut_event_enable(t->grp, "ust_sites_fork_t",
						 false);
		t->cycles++;
	}
	return NULL;
}

/*
 * Three probes enabled in this process, then fork with its n-th
 * allocation failed, for n = 1, 2, ... until none is left to fail: every
 * child that was created runs the probed functions without SIGTRAP and
 * each of its calls is counted; so are this process's own calls. With
 * @toggle, another thread enables and disables a fourth probe (with a
 * reference counter, on ui_add) all along, so that registrations walk
 * the file's mappings while a failed fork tears its half-copied mm down;
 * its counter ends at 0.
 */
static void fork_fi_run(struct __test_metadata *_metadata,
			struct _test_data_sites *self, bool toggle)
{
	struct fork_toggler tog = { .grp = self->grp };
	int nth, n, i, status, created = 0, bad = 0, ret;
	char ev[32], *buf_rc;
	long left = 0;
	pid_t pid;

	nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth < 0 && errno == ENOENT)
		SKIP(return, "CONFIG_FAULT_INJECTION not enabled (no /proc/thread-self/fail-nth)");
	ASSERT_LE(0, nth);
	if (!ut_file_exists(UT_FI_DIR "/failslab"))
		SKIP(return, "CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS not enabled");
	if (!ut_file_exists(UT_FI_DIR "/fail_page_alloc"))
		SKIP(return, "CONFIG_FAIL_PAGE_ALLOC or _DEBUG_FS not enabled");
	self->fi_used = true;
	ASSERT_EQ(0, ut_fi_setup());
	/* as in uprobe_core's enable_under_fault_injection */
	buf_rc = ut_read_file(RECORD_CMD, NULL);
	ASSERT_NE(NULL, buf_rc);
	snprintf(self->record_cmd, sizeof(self->record_cmd), "%s", buf_rc);
	free(buf_rc);
	ASSERT_EQ(0, ut_write_file(RECORD_CMD, "0", false));
	for (i = 0; i < FORK_PROBES; i++) {
		snprintf(ev, sizeof(ev), "ust_sites_fork_%d", i);
		ASSERT_EQ(0, ut_probe_at(self->grp, ev, ut_self_exe(),
					 sym_off(fork_syms[i]), 0));
	}
	ASSERT_EQ(0, fork_child_calls());
	if (toggle) {
		ASSERT_EQ(0, ut_probe_at(self->grp, "ust_sites_fork_t",
					 ut_self_exe(), sym_off("ui_add"),
					 ref_off(2)));
		EXPECT_EQ(1, UT_READ_ONCE(sites_ref[2]));
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_sites_fork_t",
					     false));
		ASSERT_EQ(0, pthread_create(&tog.th, NULL, fork_toggle_fn,
					    &tog));
	}
	/* The fault left armed after the last fork must not hit our rseq area. */
	ASSERT_EQ(0, ut_rseq_unregister());

	for (n = 1; n <= FORK_MAX_NTH; n++) {
		fflush(stdout);
		fflush(stderr);
		ASSERT_EQ(0, ut_fail_nth_set(nth, n));
		pid = fork();
		if (pid == 0)
			_exit(fork_child_calls());
		left = ut_fail_nth_get(nth);
		ASSERT_EQ(0, ut_fail_nth_set(nth, 0));
		if (pid < 0) {
			ASSERT_TRUE(errno == ENOMEM || errno == EAGAIN) {
				TH_LOG("n=%d: fork: %s", n, strerror(errno));
			}
			continue;
		}
		created++;
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			bad++;
			if (WIFSIGNALED(status))
				TH_LOG("n=%d: child killed by signal %d (%s)",
				       n, WTERMSIG(status),
				       strsignal(WTERMSIG(status)));
			else
				TH_LOG("n=%d: child exit status %d", n,
				       WEXITSTATUS(status));
		}
		for (i = 0; i < FORK_PROBES; i++) {
			snprintf(ev, sizeof(ev), "ust_sites_fork_%d", i);
			ret = ut_trace_count(ev, pid);
			EXPECT_EQ(1, ret) {
				TH_LOG("n=%d: %s hit %d times in the child",
				       n, fork_syms[i], ret);
			}
		}
		if (left)	/* nothing was failed */
			break;
		if (bad > 5)
			break;
	}
	TH_LOG("%d children created in %d forks", created, n);
	EXPECT_LE(n, FORK_MAX_NTH);
	if (toggle) {
		UT_WRITE_ONCE(tog.stop, true);
		ASSERT_EQ(0, pthread_join(tog.th, NULL));
		EXPECT_EQ(0, tog.err) {
			TH_LOG("toggling: %s", strerror(-tog.err));
		}
		TH_LOG("%d enable/disable cycles meanwhile", tog.cycles);
		EXPECT_LT(0, tog.cycles);
		EXPECT_EQ(0, UT_READ_ONCE(sites_ref[2]));
		EXPECT_EQ(0, ut_event_enable(self->grp, "ust_sites_fork_t",
					     true));
		EXPECT_EQ(1, UT_READ_ONCE(sites_ref[2]));
		EXPECT_EQ(8, ui_add(3, 5));
		EXPECT_EQ(1, ut_trace_count("ust_sites_fork_t", getpid()));
	}
	EXPECT_EQ(0, fork_child_calls());
	for (i = 0; i < FORK_PROBES; i++) {
		snprintf(ev, sizeof(ev), "ust_sites_fork_%d", i);
		EXPECT_EQ(2, ut_trace_count(ev, getpid()));
	}
	close(nth);
}

/* [#14] Forks failing at each allocation in turn (fork_fi_run()). */
TEST_F_TIMEOUT(sites, fork_under_fault_injection, 900)
{
	if (START("ust_sites_fork"))
		return;
	fork_fi_run(_metadata, self, false);
}

/* [#14] The same while another thread enables and disables a probe. */
TEST_F_TIMEOUT(sites, fork_under_fault_injection_while_toggling, 900)
{
	if (START("ust_sites_fork"))
		return;
	fork_fi_run(_metadata, self, true);
}

TEST_HARNESS_MAIN
