// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_pages: how the uprobes core patches and restores pages (issue 21,
 * items 1 and 2).  Numbers in brackets are those of the FAILURE-MODES
 * checklist.
 *
 * zero_page_skipped [#10]: an unprivileged process maps a tmpfs file's page
 * privately, fills it with the shared zero page through userfaultfd
 * (UFFD_USER_MODE_ONLY, UFFDIO_ZEROPAGE) and makes it executable; a probe on
 * a "00 00" instruction (add %al,(%rax)) there is enabled.  The enable
 * succeeds, that process is skipped with a kernel log line naming it, its
 * page still reads zero, the zero page stays zero for everyone, and the
 * probe counts in a normal process mapping the same file.
 *
 * huge_tmpfs_text [#26]: code in a tmpfs huge=always file, PMD-mapped
 * privately and executable, probed, hit, unprobed and hit again: exact
 * counts, the file's bytes back, no warning (6.1 warns in mm/rmap.c, with
 * CONFIG_DEBUG_VM, when a subpage of a large folio is mapped unlocked).
 *
 * memfd_text [#25]: code in a memfd, probed through its /proc/PID/fd link:
 * exact counts, the memfd's bytes unchanged, the mapping restored.
 *
 * restore_maps_file_page, mlocked_text_gets_file_page: the removal of the
 * last breakpoint in a page maps the file's own page back at once (present,
 * the page a shared mapping sees, no anonymous copy left), mlock()ed or not.
 *
 * truncated_under_probe [#25]: the probed file truncated below the probe
 * while a process runs it: SIGBUS for that process, disabling works,
 * enabling again fails with EINVAL, and with the bytes back it counts.
 *
 * overlayfs_text [#25]: a probe defined on a file through an overlayfs
 * mount is on the real (lower) file: a mapping through the overlay and one
 * of the lower file are both counted.
 *
 * restore_vs_odirect [#26]: enable and disable a probe 300 times while one
 * task rewrites the probed page with the same bytes through O_DIRECT (which
 * invalidates and unmaps the page cache page) on an ext2 file system on a
 * loop device, and another task calls the probed function: it never dies
 * of SIGTRAP, always computes the right value, ends with the file's bytes
 * in the file's current page cache page (not one deleted from the cache),
 * and the probe still counts exactly afterwards.
 *
 * ro_thp_text [#26]: code in an ext2 file, mapped privately and executable
 * and collapsed into a read-only file huge page (MADV_COLLAPSE), probed,
 * hit, unprobed: exact counts, the file's bytes back, and the text can be
 * collapsed into a huge page again.
 *
 * The code is x86-64's or arm64's (pg_inc); zero_page_skipped needs an
 * instruction of zero bytes and runs on x86-64 only.
 *
 * Each test checks the kernel log for BUG, WARNING, Oops, "Bad page" and
 * "Bad rss-counter" lines.  A test of something stock 6.1 gets wrong says
 * so: with UPROBE_TEST_IMPL=stock it asserts the stock failure, logs it and
 * passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/loop.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_util.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif

#define PAGE		4096UL
#define HPAGE		(2UL << 20)
#define NOBODY		65534
#define MAX_PIDS	4
#define LOG_SIZE	65536

/*
 * The code the tests write into their files.  x86-64: pg_addal: rax = rdi,
 * then add %al,(%rax) (bytes 00 00, PG_ADDAL_INSN bytes in), ret: adds the
 * low byte of the pointer it is given to the byte it points to; its probed
 * instruction is all zero bytes, as the zero page is (arm64 has no such
 * instruction: the zero page's bytes are UDF #0).  pg_inc returns its
 * argument + 1; the probe is on the add (PG_INC_INSN bytes in).
 */
#if defined(__x86_64__)
static const uint8_t pg_addal[] = {
	0x48, 0x89, 0xf8,		/* mov %rdi,%rax */
	0x00, 0x00,			/* add %al,(%rax) */
	0xc3,				/* ret */
};

#define PG_ADDAL_INSN	3

static const uint8_t pg_inc[] = {
	0x48, 0x89, 0xf8,		/* mov %rdi,%rax */
	0x48, 0x83, 0xc0, 0x01,		/* add $1,%rax */
	0xc3,				/* ret */
};

#define PG_INC_INSN	3
#elif defined(__aarch64__)
static const uint8_t pg_inc[] = {
	0x1f, 0x20, 0x03, 0xd5,		/* nop */
	0x00, 0x04, 0x00, 0x91,		/* add x0, x0, #1 */
	0xc0, 0x03, 0x5f, 0xd6,		/* ret */
};

#define PG_INC_INSN	4
#endif

FIXTURE(pages) {
	char grp[64];
	char ovl[128];		/* an overlay mount point to unmount first */
	char mnt[64];		/* a mount point to unmount and remove */
	char img[PATH_MAX];	/* a file system image to remove */
	int loop_fd;		/* a loop device to detach */
	pid_t pid[MAX_PIDS];	/* processes to kill and reap */
	struct {
		void *p;
		size_t len;
	} map[2];
	int kmsg;
	char log[LOG_SIZE];	/* the kernel log since the start */
};

FIXTURE_SETUP(pages)
{
	self->loop_fd = -1;
	self->kmsg = -1;
}

FIXTURE_TEARDOWN(pages)
{
	int i;

	if (self->grp[0])
		ut_group_cleanup(self->grp);
	for (i = 0; i < MAX_PIDS; i++) {
		if (self->pid[i] > 0) {
			kill(self->pid[i], SIGKILL);
			waitpid(self->pid[i], NULL, 0);
		}
	}
	for (i = 0; i < 2; i++)
		if (self->map[i].p)
			munmap(self->map[i].p, self->map[i].len);
	if (self->ovl[0])
		umount(self->ovl);
	if (self->mnt[0]) {
		umount(self->mnt);
		rmdir(self->mnt);
	}
	if (self->loop_fd >= 0) {
		ioctl(self->loop_fd, LOOP_CLR_FD, 0);
		close(self->loop_fd);
	}
	if (self->img[0])
		unlink(self->img);
	if (self->kmsg >= 0)
		close(self->kmsg);
}

/* Claim event group @g for this test; returns true if it was skipped. */
#define START(g)	ut_start(_metadata, self->grp, sizeof(self->grp), g)
#define HITS(ev)	ut_trace_count(ev, getpid())

/* Note process @pid for the teardown. */
static void keep_pid(struct _test_data_pages *self, pid_t pid)
{
	int i;

	for (i = 0; i < MAX_PIDS; i++) {
		if (self->pid[i] <= 0) {
			self->pid[i] = pid;
			return;
		}
	}
}

/* Reap process @pid noted with keep_pid(); its wait status or -1. */
static int reap(struct _test_data_pages *self, pid_t pid)
{
	int i, status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	for (i = 0; i < MAX_PIDS; i++)
		if (self->pid[i] == pid)
			self->pid[i] = 0;
	return status;
}

/* Note mapping @p of @len bytes for the teardown; returns @p. */
static void *keep_map(struct _test_data_pages *self, void *p, size_t len)
{
	int i;

	if (p == MAP_FAILED)
		return p;
	for (i = 0; i < 2; i++) {
		if (!self->map[i].p) {
			self->map[i].p = p;
			self->map[i].len = len;
			break;
		}
	}
	return p;
}

/* Mount a tmpfs with options @opts on a new directory (self->mnt); -errno. */
static int mount_tmpfs(struct _test_data_pages *self, const char *opts)
{
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/ust_pages.XXXXXX");
	if (!mkdtemp(self->mnt)) {
		self->mnt[0] = '\0';
		return -errno;
	}
	if (mount("tmpfs", self->mnt, "tmpfs", 0, opts)) {
		int err = -errno;

		rmdir(self->mnt);
		self->mnt[0] = '\0';
		return err;
	}
	return 0;
}

/* Create @path (mode 0755) holding the @len bytes of @buf; 0 or -errno. */
static int make_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pwrite(fd, buf, len, 0);
	if (n != (ssize_t)len || fsync(fd)) {
		close(fd);
		return n < 0 ? -errno : -EIO;
	}
	return close(fd) ? -errno : 0;
}

/*
 * Read the kernel log since ut_kmsg_open() into self->log and return how
 * many lines report a kernel problem (BUG, WARNING, Oops, bad page state,
 * rss-counter mismatch, KASAN, general protection fault).
 */
static int console_problems(struct _test_data_pages *self)
{
	static const char *const bad[] = {
		"BUG", "WARNING", "Oops", "Bad page", "Bad rss-counter",
		"KASAN", "general protection",
	};
	size_t len;
	char *rec;
	int n = 0;
	unsigned int i;

	len = strlen(self->log);
	if (len && len + 3 < sizeof(self->log)) {	/* " | " between */
		strcpy(self->log + len, " | ");
		len += 3;
	}
	if (len + 1 < sizeof(self->log))
		ut_kmsg_count(self->kmsg, "", NULL, self->log + len,
			      sizeof(self->log) - len);
	len = strlen(self->log);
	if (len >= 3 && !strcmp(self->log + len - 3, " | "))
		self->log[len - 3] = '\0';
	for (rec = self->log; rec && *rec; ) {
		char *end = strstr(rec, " | ");
		size_t rlen = end ? (size_t)(end - rec) : strlen(rec);

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			char *hit = strstr(rec, bad[i]);

			if (hit && hit < rec + rlen) {
				n++;
				break;
			}
		}
		rec = end ? end + 3 : NULL;
	}
	return n;
}

/* Expect no kernel problem reported since ut_kmsg_open(). */
static void expect_console_clean(struct __test_metadata *_metadata,
				 struct _test_data_pages *self)
{
	EXPECT_EQ(0, console_problems(self)) {
		TH_LOG("kernel log: %s", self->log);
	}
}

#define PM_PRESENT	0x8000000000000000ULL
#define PM_FILE		0x2000000000000000ULL	/* file page or shared anonymous */
#define PM_PFN		0x007fffffffffffffULL

/* The pagemap entry of @addr in process @pid, or 0. */
static uint64_t pagemap_of(pid_t pid, uint64_t addr)
{
	char path[64];
	uint64_t ent;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), addr / PAGE * 8) != sizeof(ent))
		ent = 0;
	close(fd);
	return ent;
}

/* The PFN mapped at @addr in process @pid (0 when not present). */
static int64_t pfn_of(pid_t pid, uint64_t addr)
{
	uint64_t ent = pagemap_of(pid, addr);

	return ent & PM_PRESENT ? (int64_t)(ent & PM_PFN) : 0;
}

/* The sum of smaps fields @a and @b (kB) of the mapping holding @addr. */
static long smaps_kb(uint64_t addr, const char *a, const char *b)
{
	char *buf = ut_read_file("/proc/self/smaps", NULL);
	char *line, *save = NULL;
	bool in = false;
	long kb = -1;

	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi;
		char *colon = strchr(line, ':');

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    (!colon || colon > strchr(line, ' '))) {
			if (in)
				break;
			in = addr >= lo && addr < hi;
			if (in)
				kb = 0;
			continue;
		}
		if (in && (!strncmp(line, a, strlen(a)) ||
			   !strncmp(line, b, strlen(b))))
			kb += atol(colon + 1);
	}
	free(buf);
	return kb;
}

/* ------------------------------------------------------------------ */
/* [#10] the shared zero page in a private file mapping                */

#ifdef PG_ADDAL_INSN
/* Lines of self->log that contain @a, @b and @c. */
static int log_lines(struct _test_data_pages *self, const char *a,
		     const char *b, const char *c)
{
	char *rec, *end, line[1024];
	int n = 0;

	for (rec = self->log; rec && *rec; rec = end ? end + 3 : NULL) {
		end = strstr(rec, " | ");
		snprintf(line, sizeof(line), "%.*s",
			 (int)(end ? end - rec : (long)strlen(rec)), rec);
		if (strstr(line, a) && strstr(line, b) && strstr(line, c))
			n++;
	}
	return n;
}

#define ZP_FN		0x100UL		/* pg_addal's file offset */
#define ZP_COMM		"ust_zpchild"
#define ZP_FILE		"ust_zpfile"

/* what the unprivileged child reports */
struct zp_report {
	int err;		/* 0, or the errno of step @step */
	int step;
	uint64_t addr;		/* its mapping of the file's page */
	uint8_t insn[2];	/* the bytes at the probed offset */
	int nonzero;		/* non-zero bytes in the page */
};

/*
 * The unprivileged child: map @path's first page PROT_NONE MAP_PRIVATE,
 * fill it with the zero page through userfaultfd, make it readable and
 * executable, report, then report its bytes on each command byte 'c' read
 * from @cmd until 'q'.
 */
static void zp_child(const char *path, int cmd, int rep)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zp = { .mode = 0 };
	struct zp_report r = { 0 };
	uint8_t *p = NULL;
	int fd = -1, uffd = -1;
	char c;

	r.step = 1;
	if (prctl(PR_SET_NAME, ZP_COMM) || setgroups(0, NULL) ||
	    setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		goto fail;
	r.step = 2;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		goto fail;
	r.step = 3;
	p = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	r.step = 4;
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		goto fail;
	r.step = 5;
	reg.range.start = (uintptr_t)p;
	reg.range.len = PAGE;
	if (ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg))
		goto fail;
	r.step = 6;
	zp.range = reg.range;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp))
		goto fail;
	r.step = 7;
	if (mprotect(p, PAGE, PROT_READ | PROT_EXEC))
		goto fail;
	r.addr = (uintptr_t)p;
	r.step = 0;
	for (;;) {
		unsigned long i;

		r.insn[0] = UT_READ_ONCE(p[ZP_FN + PG_ADDAL_INSN]);
		r.insn[1] = UT_READ_ONCE(p[ZP_FN + PG_ADDAL_INSN + 1]);
		r.nonzero = 0;
		for (i = 0; i < PAGE; i++)
			r.nonzero += UT_READ_ONCE(p[i]) != 0;
		if (write(rep, &r, sizeof(r)) != sizeof(r))
			_exit(3);
		if (read(cmd, &c, 1) != 1 || c != 'c')
			break;
	}
	_exit(0);
fail:
	r.err = errno;
	if (write(rep, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	_exit(2);
}

/* Read one report of the zero-page child; 0 or -1. */
static int zp_read(int fd, struct zp_report *r)
{
	return read(fd, r, sizeof(*r)) == sizeof(*r) ? 0 : -1;
}

/*
 * A new process maps 1 MiB of anonymous memory, reads it all (each page
 * read-faults to the shared zero page) and reports how many bytes are not
 * zero; -1 on error.
 */
static long fresh_nonzero(void)
{
	const size_t len = 1UL << 20;
	long *res = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long n = -1;
	int status;
	pid_t pid;

	if (res == MAP_FAILED)
		return -1;
	*res = -1;
	pid = fork();
	if (pid == 0) {
		uint8_t *m = mmap(NULL, len, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long cnt = 0;
		size_t i;

		if (m == MAP_FAILED)
			_exit(1);
		for (i = 0; i < len; i++)
			cnt += UT_READ_ONCE(m[i]) != 0;
		*res = cnt;
		_exit(0);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0)
		n = *res;
	munmap(res, PAGE);
	return n;
}

/*
 * [#10] A probe on a "00 00" instruction of a file page that one
 * unprivileged process has mapped as the shared zero page (userfaultfd
 * UFFDIO_ZEROPAGE): enabling succeeds, that process is skipped with a
 * kernel log line naming it and the file, the zero page stays zero (its
 * mapping and fresh anonymous memory), and a normal mapping of the file
 * counts its hits exactly.  Stock 6.1 refuses the zero page by failing the
 * whole registration (EINVAL): no process is traced.
 */
TEST_F(pages, zero_page_skipped)
{
	const int calls = 5;
	static uint8_t page[PAGE], target;
	uint8_t *(*fn)(uint8_t *p);
	uint8_t *text, want;
	struct zp_report r;
	int cmd[2], rep[2], ret, i;
	char path[PATH_MAX];
	int64_t zpfn, cpfn;
	uint8_t *anon;
	pid_t pid;

	if (!ut_file_exists("/proc/sys/vm/unprivileged_userfaultfd"))
		SKIP(return, "CONFIG_USERFAULTFD not enabled (no userfaultfd())");
	if (START("ust_pgzero"))
		return;
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, mount_tmpfs(self, "mode=0755"));
	snprintf(path, sizeof(path), "%s/" ZP_FILE, self->mnt);
	memcpy(page + ZP_FN, pg_addal, sizeof(pg_addal));
	ASSERT_EQ(0, make_file(path, page, PAGE));

	/* the normal process: this one, mapping the file before the enable */
	text = keep_map(self, ut_map_file(path, 0, PAGE, PROT_READ | PROT_EXEC,
					  MAP_PRIVATE, false), PAGE);
	ASSERT_NE(MAP_FAILED, text);
	fn = (uint8_t *(*)(uint8_t *))(text + ZP_FN);
	target = 1;
	want = 1 + (uint8_t)(uintptr_t)&target;
	ASSERT_EQ(&target, fn(&target));
	ASSERT_EQ(want, target);

	/* the unprivileged one, with the zero page at the probed offset */
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(rep));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		zp_child(path, cmd[0], rep[1]);
	}
	keep_pid(self, pid);
	close(cmd[0]);
	close(rep[1]);
	ASSERT_EQ(0, zp_read(rep[0], &r));
	ASSERT_EQ(0, r.step) {
		TH_LOG("child step %d: %s", r.step, strerror(r.err));
	}
	ASSERT_EQ(0, r.insn[0]);
	ASSERT_EQ(0, r.insn[1]);
	ASSERT_EQ(0, r.nonzero);
	/* it is the zero page: the PFN of a read-faulted anonymous page */
	anon = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, anon);
	keep_map(self, (void *)anon, PAGE);
	ASSERT_EQ(0, UT_READ_ONCE(anon[0]));
	zpfn = pfn_of(getpid(), (uintptr_t)anon);
	cpfn = pfn_of(pid, r.addr);
	ASSERT_LT(0, zpfn);
	ASSERT_EQ(zpfn, cpfn);

	ASSERT_EQ(0, ut_define_at(self->grp, "ust_pgzero_e", path,
				  ZP_FN + PG_ADDAL_INSN, 0));
	ret = ut_event_enable(self->grp, "ust_pgzero_e", true);

	/* the zero page is intact, for the child and for everyone */
	ASSERT_EQ(1, write(cmd[1], "c", 1));
	ASSERT_EQ(0, zp_read(rep[0], &r));
	EXPECT_EQ(0, r.insn[0]);
	EXPECT_EQ(0, r.insn[1]);
	EXPECT_EQ(0, r.nonzero);
	EXPECT_EQ(zpfn, pfn_of(pid, r.addr));
	EXPECT_EQ(0, fresh_nonzero());

	/* the normal process is traced, exactly */
	for (i = 0; i < calls; i++) {
		EXPECT_EQ(&target, fn(&target));
		want += (uint8_t)(uintptr_t)&target;
	}
	EXPECT_EQ(want, target);
	ut_kmsg_count(self->kmsg, "", NULL, self->log, sizeof(self->log));
	if (ut_impl_is_stock()) {
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_EQ(0, HITS("ust_pgzero_e"));
		EXPECT_EQ(0, log_lines(self, "not probing", ZP_COMM, ZP_FILE));
		UT_STOCK_FAILS("enabling returned %d: no process is traced", ret);
	} else {
		ASSERT_EQ(0, ret);
		EXPECT_TRUE(ut_is_bp(text + ZP_FN + PG_ADDAL_INSN));
		EXPECT_EQ(calls, HITS("ust_pgzero_e"));
		EXPECT_EQ(1, log_lines(self, "not probing", ZP_COMM "[", ZP_FILE)) {
			TH_LOG("kernel log: %s", self->log);
		}
		ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgzero_e", false));
	}
	EXPECT_EQ(0, memcmp(text, page, PAGE));

	/* still the zero page after the disable, and after the child exits */
	ASSERT_EQ(1, write(cmd[1], "c", 1));
	ASSERT_EQ(0, zp_read(rep[0], &r));
	EXPECT_EQ(0, r.nonzero);
	EXPECT_EQ(zpfn, pfn_of(pid, r.addr));
	ASSERT_EQ(1, write(cmd[1], "q", 1));
	ret = reap(self, pid);
	EXPECT_TRUE(WIFEXITED(ret) && WEXITSTATUS(ret) == 0) {
		TH_LOG("child status 0x%x", ret);
	}
	close(cmd[1]);
	close(rep[0]);
	EXPECT_EQ(0, fresh_nonzero());
	expect_console_clean(_metadata, self);
}
#else
/* [#10] needs an instruction of zero bytes (see pg_addal): x86-64 only. */
TEST_F(pages, zero_page_skipped)
{
	SKIP(return, "no probe-able instruction is all zero bytes on this architecture");
}
#endif

/* ------------------------------------------------------------------ */
/* [#26] text in a tmpfs huge=always file, PMD-mapped                  */

#define TH_FN		0x3100UL	/* pg_inc's file offset: a tail page */

/*
 * Write @path: HPAGE bytes, zero but for pg_inc at TH_FN (the bytes in
 * *@bufp, malloc()ed), and map it whole, privately and executable, at a
 * 2 MiB aligned address in a reservation kept for the teardown; NULL on
 * failure.
 */
static uint8_t *huge_text(struct _test_data_pages *self, const char *path,
			  uint8_t **bufp)
{
	uint8_t *buf = calloc(1, HPAGE), *text;
	uintptr_t aligned;
	void *resv;
	int fd;

	*bufp = buf;
	if (!buf)
		return NULL;
	memcpy(buf + TH_FN, pg_inc, sizeof(pg_inc));
	if (make_file(path, buf, HPAGE))
		return NULL;
	resv = keep_map(self, mmap(NULL, 2 * HPAGE, PROT_NONE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
			2 * HPAGE);
	if (resv == MAP_FAILED)
		return NULL;
	aligned = ((uintptr_t)resv + HPAGE - 1) & ~(HPAGE - 1);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	text = mmap((void *)aligned, HPAGE, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_FIXED, fd, 0);
	close(fd);
	return text == (void *)aligned ? text : NULL;
}

/*
 * [#26] pg_inc in a tmpfs huge=always file, mapped privately and
 * executable at a 2 MiB boundary (one PMD): probed, called 7 times,
 * unprobed, called 3 times: 7 hits, the file's bytes back, no warning.
 */
TEST_F(pages, huge_tmpfs_text)
{
	const int calls = 7, after = 3;
	long (*fn)(long x);
	char path[PATH_MAX];
	uint8_t *buf, *text;
	uintptr_t aligned;
	long kb;
	int ret, i;

	if (!ut_file_exists("/sys/kernel/mm/transparent_hugepage/enabled"))
		SKIP(return, "CONFIG_TRANSPARENT_HUGEPAGE not enabled");
	if (START("ust_pghuge"))
		return;
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ret = mount_tmpfs(self, "huge=always,mode=0755");
	if (ret == -EINVAL)
		SKIP(return, "tmpfs refuses huge=always (CONFIG_TRANSPARENT_HUGEPAGE, or no PSE)");
	ASSERT_EQ(0, ret);
	snprintf(path, sizeof(path), "%s/ust_pghuge_text", self->mnt);
	text = huge_text(self, path, &buf);
	ASSERT_NE(NULL, text);
	aligned = (uintptr_t)text;
	fn = (long (*)(long))(text + TH_FN);
	EXPECT_EQ(3, fn(2));
	kb = smaps_kb(aligned, "ShmemPmdMapped:", "FilePmdMapped:");
	ASSERT_EQ((long)(HPAGE >> 10), kb) {
		TH_LOG("the text is not PMD-mapped (%ld kB)", kb);
	}

	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_pghuge_e", path,
				 TH_FN + PG_INC_INSN, 0));
	EXPECT_TRUE(ut_is_bp(text + TH_FN + PG_INC_INSN));
	for (i = 0; i < calls; i++)
		EXPECT_EQ(i + 1, fn(i));
	EXPECT_EQ(calls, HITS("ust_pghuge_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pghuge_e", false));
	for (i = 0; i < after; i++)
		EXPECT_EQ(i + 101, fn(i + 100));
	EXPECT_EQ(calls, HITS("ust_pghuge_e"));
	EXPECT_EQ(0, memcmp(text, buf, HPAGE));
	/* and once more, after the restore */
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pghuge_e", true));
	EXPECT_EQ(6, fn(5));
	EXPECT_EQ(calls + 1, HITS("ust_pghuge_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pghuge_e", false));
	EXPECT_EQ(0, memcmp(text, buf, HPAGE));
	free(buf);
	EXPECT_EQ(0, munmap(text, HPAGE));
	expect_console_clean(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* [#25] a memfd, and a file truncated under its probe                 */

#define MF_FN		0x100UL		/* pg_inc's file offset */

typedef long (*inc_fn)(long x);

/* A private executable mapping of page 0 of @fd (kept for the teardown). */
static inc_fn map_inc(struct _test_data_pages *self, int fd)
{
	uint8_t *text = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			     fd, 0);

	if (text == MAP_FAILED)
		return NULL;
	keep_map(self, text, PAGE);
	return (inc_fn)(text + MF_FN);
}

/*
 * Code in a memfd (no name in any file system: the probe's path is its
 * /proc/self/fd link): the probe counts every call of a private
 * executable mapping, the results are right, the memfd's bytes never
 * change, and disabling leaves the mapping as the memfd.
 */
TEST_F(pages, memfd_text)
{
	uint8_t buf[PAGE] = { 0 }, now[PAGE];
	char path[64];
	inc_fn fn;
	int fd, i;

	if (START("ust_pgmfd"))
		return;
	fd = memfd_create("ust_pgmfd", MFD_CLOEXEC);
	ASSERT_LE(0, fd);
	memcpy(buf + MF_FN, pg_inc, sizeof(pg_inc));
	ASSERT_EQ((ssize_t)PAGE, pwrite(fd, buf, PAGE, 0));
	fn = map_inc(self, fd);
	ASSERT_NE(NULL, fn);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", getpid(), fd);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_pgmfd_e", path,
				 MF_FN + PG_INC_INSN, 0));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i + 1, fn(i));
	EXPECT_EQ(5, HITS("ust_pgmfd_e"));
	ASSERT_EQ((ssize_t)PAGE, pread(fd, now, PAGE, 0));
	EXPECT_EQ(0, memcmp(buf, now, PAGE));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgmfd_e", false));
	EXPECT_EQ(8, fn(7));
	EXPECT_EQ(5, HITS("ust_pgmfd_e"));
	EXPECT_EQ(0, memcmp(buf, (uint8_t *)fn - MF_FN, PAGE));
	close(fd);
}

/*
 * Probe the first instruction of a memfd page mapped privately, hit it once,
 * disable the probe; mlock() the page first if @lock. The page mapped there
 * afterwards is returned in *@ent (pagemap) and compared with the page a
 * shared mapping of the memfd sees.
 */
static void hit_and_restore(struct __test_metadata *_metadata,
			    struct _test_data_pages *self, const char *ev,
			    bool lock)
{
	uint8_t buf[PAGE] = { 0 };
	uint64_t ent, addr;
	char path[64];
	uint8_t *seen;
	inc_fn fn;
	int fd;

	fd = memfd_create(ev, MFD_CLOEXEC);
	ASSERT_LE(0, fd);
	memcpy(buf + MF_FN, pg_inc, sizeof(pg_inc));
	ASSERT_EQ((ssize_t)PAGE, pwrite(fd, buf, PAGE, 0));
	fn = map_inc(self, fd);
	ASSERT_NE(NULL, fn);
	addr = (uintptr_t)fn - MF_FN;
	seen = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, seen);
	keep_map(self, seen, PAGE);
	ASSERT_EQ(pg_inc[0], seen[MF_FN]);
	if (lock && mlock((void *)addr, PAGE))
		SKIP(return, "mlock() refused (RLIMIT_MEMLOCK): %s",
		     strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", getpid(), fd);
	ASSERT_EQ(0, ut_probe_at(self->grp, ev, path, MF_FN + PG_INC_INSN, 0));
	EXPECT_EQ(4, fn(3));
	EXPECT_EQ(1, HITS(ev));
	EXPECT_EQ((long)(PAGE / 1024),
		  smaps_kb(addr, "Anonymous:", "Anonymous:"));
	ASSERT_EQ(0, ut_event_enable(self->grp, ev, false));
	ent = pagemap_of(getpid(), addr);
	if (ut_impl_is_stock() && !(ent & PM_PRESENT)) {
		UT_STOCK_FAILS("the page is not mapped after the removal");
		EXPECT_EQ(6, fn(5));
		close(fd);
		return;
	}
	EXPECT_NE(0ULL, ent & PM_PRESENT);
	EXPECT_NE(0ULL, ent & PM_FILE);
	EXPECT_EQ(pfn_of(getpid(), (uintptr_t)seen), pfn_of(getpid(), addr));
	EXPECT_EQ(0, smaps_kb(addr, "Anonymous:", "Anonymous:"));
	EXPECT_EQ(6, fn(5));
	EXPECT_EQ(1, HITS(ev));
	if (lock)
		munlock((void *)addr, PAGE);
	close(fd);
}

/*
 * Removing the last breakpoint of a page maps the file's own page there
 * again at once (present before the process touches it), with no
 * anonymous copy left. A stock 6.1 that leaves the page to the next fault
 * is logged as its failure.
 */
TEST_F(pages, restore_maps_file_page)
{
	if (START("ust_pgrst"))
		return;
	hit_and_restore(_metadata, self, "ust_pgrst_e", false);
}

/*
 * The same for an mlock()ed page: it stays present and is the file's page
 * after the removal.
 */
TEST_F(pages, mlocked_text_gets_file_page)
{
	if (START("ust_pgmlk"))
		return;
	hit_and_restore(_metadata, self, "ust_pgmlk_e", true);
}

/*
 * A probed file is truncated below the probe while a process runs the
 * probed code: that process's next call dies of SIGBUS (the page is gone),
 * disabling works, enabling again is refused with EINVAL (the offset is
 * past the end), and once the file has its bytes back the probe counts a
 * new mapping's calls.
 */
TEST_F(pages, truncated_under_probe)
{
	uint8_t buf[2 * PAGE] = { 0 };
	char path[PATH_MAX];
	inc_fn fn;
	int fd, go[2], back[2], status;
	pid_t pid;
	char c;

	if (START("ust_pgtrunc"))
		return;
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	snprintf(path, sizeof(path), "/tmp/ust_pgtrunc.%d", getpid());
	memcpy(buf + PAGE + MF_FN, pg_inc, sizeof(pg_inc));
	ASSERT_EQ(0, make_file(path, buf, sizeof(buf)));
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_pgtrunc_e", path,
				 PAGE + MF_FN + PG_INC_INSN, 0));
	/* one pipe per direction: a reader of its own byte would wait forever */
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(back));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t *text;

		fd = open(path, O_RDONLY);
		text = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			    fd, PAGE);
		if (fd < 0 || text == MAP_FAILED)
			_exit(2);
		fn = (inc_fn)(text + MF_FN);
		if (fn(1) != 2)
			_exit(3);
		if (write(go[1], "c", 1) != 1 || read(back[0], &c, 1) != 1)
			_exit(4);
		fn(2);		/* SIGBUS: the page is past the end now */
		_exit(5);
	}
	keep_pid(self, pid);
	ASSERT_EQ(1, read(go[0], &c, 1));
	EXPECT_EQ(1, ut_trace_count("ust_pgtrunc_e", pid));
	ASSERT_EQ(0, truncate(path, PAGE));
	ASSERT_EQ(1, write(back[1], "t", 1));
	status = reap(self, pid);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) {
		TH_LOG("child: status 0x%x", status);
	}
	EXPECT_EQ(1, ut_trace_count("ust_pgtrunc_e", pid));
	EXPECT_EQ(0, ut_event_enable(self->grp, "ust_pgtrunc_e", false));
	EXPECT_EQ(-EINVAL, ut_event_enable(self->grp, "ust_pgtrunc_e", true));
	EXPECT_EQ(0, ut_event_enabled(self->grp, "ust_pgtrunc_e"));

	ASSERT_EQ(0, make_file(path, buf, sizeof(buf)));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgtrunc_e", true));
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	fn = (inc_fn)((uint8_t *)keep_map(self,
			mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			     fd, PAGE), PAGE) + MF_FN);
	close(fd);
	EXPECT_EQ(10, fn(9));
	EXPECT_EQ(1, HITS("ust_pgtrunc_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgtrunc_e", false));
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);
	unlink(path);
	expect_console_clean(_metadata, self);
}

/*
 * A probe defined on a file seen through an overlayfs mount goes on the
 * real file (the lower layer's): calls through a mapping of the overlay's
 * file and through one of the lower file are all counted, and disabling
 * restores both.
 */
TEST_F(pages, overlayfs_text)
{
	char dir[5][96], opts[512], path[128];
	static const char *const sub[5] = {
		"lower", "upper", "work", "merged", "lower/f"
	};
	uint8_t buf[PAGE] = { 0 };
	inc_fn via_ovl, via_lower;
	int fd, i;

	if (START("ust_pgovl"))
		return;
	ASSERT_EQ(0, mount_tmpfs(self, "mode=0755"));
	for (i = 0; i < 5; i++) {
		snprintf(dir[i], sizeof(dir[i]), "%s/%s", self->mnt, sub[i]);
		if (i < 4)
			ASSERT_EQ(0, mkdir(dir[i], 0755));
	}
	memcpy(buf + MF_FN, pg_inc, sizeof(pg_inc));
	ASSERT_EQ(0, make_file(dir[4], buf, PAGE));
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 dir[0], dir[1], dir[2]);
	if (mount("overlay", dir[3], "overlay", 0, opts)) {
		if (errno == ENODEV)
			SKIP(return, "CONFIG_OVERLAY_FS not enabled");
		ASSERT_EQ(0, -errno);
	}
	snprintf(self->ovl, sizeof(self->ovl), "%s", dir[3]);
	snprintf(path, sizeof(path), "%s/f", dir[3]);
	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_pgovl_e", path,
				 MF_FN + PG_INC_INSN, 0));
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	via_ovl = map_inc(self, fd);
	close(fd);
	ASSERT_NE(NULL, via_ovl);
	fd = open(dir[4], O_RDONLY);
	ASSERT_LE(0, fd);
	via_lower = map_inc(self, fd);
	close(fd);
	ASSERT_NE(NULL, via_lower);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i + 1, via_ovl(i));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(i + 11, via_lower(i + 10));
	EXPECT_EQ(5, HITS("ust_pgovl_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgovl_e", false));
	EXPECT_EQ(0, memcmp(buf, (uint8_t *)via_ovl - MF_FN, PAGE));
	EXPECT_EQ(0, memcmp(buf, (uint8_t *)via_lower - MF_FN, PAGE));
	EXPECT_EQ(8, via_ovl(7));
	EXPECT_EQ(5, HITS("ust_pgovl_e"));
}

/* ------------------------------------------------------------------ */
/* [#26] restore racing page cache invalidation by O_DIRECT writes     */

#define OD_FN		0x200UL		/* pg_inc's file offset */
#define OD_CYCLES	300
#define OD_IMG_KB	8192

/* what the racing tasks count, in a shared page */
struct od_shared {
	int stop;
	long calls;
	long bad;		/* wrong results */
	long writes;
	int write_err;		/* errno of the first failed write */
	int differ;		/* the mapping's bytes differ from the file's */
	uint64_t addr;		/* the caller's mapping */
	int parked;		/* the caller has stopped and checked */
	int done;		/* the caller may exit */
};

/*
 * Make an ext2 image in self->img, attach it to a free loop device
 * (self->loop_fd) and mount it on a new directory (self->mnt).  Returns
 * NULL, or a SKIP reason.
 */
static const char *ext2_mount(struct _test_data_pages *self)
{
	char dev[32], cmd[PATH_MAX + 128], out[1024];
	const char *const argv[] = { "/bin/sh", "-c", cmd, NULL };
	char *fs = ut_read_file("/proc/filesystems", NULL);
	int ctl, nr, img, status;

	if (!fs || !strstr(fs, "\text2\n")) {
		free(fs);
		return "CONFIG_EXT2_FS not enabled (no ext2 in /proc/filesystems)";
	}
	free(fs);
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return "CONFIG_BLK_DEV_LOOP not enabled (no /dev/loop-control)";
	snprintf(self->img, sizeof(self->img), "/tmp/ust_pages_img.XXXXXX");
	img = mkstemp(self->img);
	if (img < 0) {
		self->img[0] = '\0';
		close(ctl);
		return "mkstemp failed";
	}
	close(img);
	snprintf(cmd, sizeof(cmd),
		 "PATH=/sbin:/usr/sbin:$PATH mke2fs -F -b 4096 %s %d 2>&1",
		 self->img, OD_IMG_KB);
	status = ut_run(argv, out, sizeof(out));
	if (status) {
		close(ctl);
		fprintf(stderr, "# mke2fs: status 0x%x: %s\n", status, out);
		return "mke2fs failed (busybox mke2fs in PATH?)";
	}
	nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (nr < 0)
		return "no free loop device";
	snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
	self->loop_fd = open(dev, O_RDWR | O_CLOEXEC);
	if (self->loop_fd < 0)
		return "cannot open the loop device";
	img = open(self->img, O_RDWR | O_CLOEXEC);
	if (img < 0)
		return "cannot open the image";
	if (ioctl(self->loop_fd, LOOP_SET_FD, img)) {
		close(img);
		close(self->loop_fd);
		self->loop_fd = -1;
		return "LOOP_SET_FD failed";
	}
	close(img);
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/ust_pages.XXXXXX");
	if (!mkdtemp(self->mnt)) {
		self->mnt[0] = '\0';
		return "mkdtemp failed";
	}
	if (mount(dev, self->mnt, "ext2", 0, NULL)) {
		fprintf(stderr, "# mount %s: %s\n", dev, strerror(errno));
		rmdir(self->mnt);
		self->mnt[0] = '\0';
		return "cannot mount the ext2 image";
	}
	return NULL;
}

/* Rewrite @path's first page with @page through O_DIRECT until told to stop. */
static void od_writer(const char *path, const uint8_t *page,
		      struct od_shared *sh)
{
	void *buf;
	int fd;

	if (posix_memalign(&buf, PAGE, PAGE))
		_exit(1);
	memcpy(buf, page, PAGE);
	fd = open(path, O_WRONLY | O_DIRECT);
	if (fd < 0) {
		sh->write_err = errno;
		_exit(1);
	}
	while (!UT_READ_ONCE(sh->stop)) {
		if (pwrite(fd, buf, PAGE, 0) != (ssize_t)PAGE) {
			sh->write_err = errno ? errno : EIO;
			_exit(1);
		}
		__atomic_add_fetch(&sh->writes, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/* Call pg_inc in a private mapping of @path until told to stop. */
static void od_caller(const char *path, const uint8_t *page,
		      struct od_shared *sh)
{
	uint8_t *text = ut_map_file(path, 0, PAGE, PROT_READ | PROT_EXEC,
				    MAP_PRIVATE, false);
	long (*fn)(long x), i;

	if (text == MAP_FAILED)
		_exit(1);
	fn = (long (*)(long))(text + OD_FN);
	for (i = 0; !UT_READ_ONCE(sh->stop); i++) {
		if (fn(i) != i + 1)
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->calls, 1, __ATOMIC_RELAXED);
	}
	/* the breakpoint is gone for good: the file's bytes */
	sh->differ = memcmp(text, page, PAGE) != 0;
	sh->addr = (uintptr_t)text;
	UT_WRITE_ONCE(sh->parked, 1);
	while (!UT_READ_ONCE(sh->done))
		usleep(1000);
	_exit(0);
}

/*
 * [#26] A probe enabled and disabled 300 times while one task rewrites the
 * probed page with the same bytes through O_DIRECT (invalidating the page
 * cache page) and another calls the probed function: the caller is never
 * killed, always computes the right value and ends with the file's bytes;
 * the probe then counts 3 calls of 3; the kernel log stays clean.
 */
TEST_F_TIMEOUT(pages, restore_vs_odirect, 300)
{
	static uint8_t page[PAGE];
	struct od_shared *sh;
	uint8_t *text, *shared, now[PAGE];
	uint64_t ent;
	long (*fn)(long x);
	char path[PATH_MAX];
	const char *why;
	pid_t writer, caller;
	int i, fails = 0, first = 0, status, fd;

	if (START("ust_pgodirect"))
		return;
	/* the racing tasks on all CPUs */
	ASSERT_EQ(0, ut_unpin_cpu());
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	why = ext2_mount(self);
	if (why)
		SKIP(return, "%s", why);
	snprintf(path, sizeof(path), "%s/ust_pgodirect_text", self->mnt);
	memcpy(page + OD_FN, pg_inc, sizeof(pg_inc));
	ASSERT_EQ(0, make_file(path, page, PAGE));
	sh = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	keep_map(self, sh, PAGE);
	ASSERT_EQ(0, ut_define_at(self->grp, "ust_pgodirect_e", path,
				  OD_FN + PG_INC_INSN, 0));

	caller = fork();
	ASSERT_LE(0, caller);
	if (caller == 0)
		od_caller(path, page, sh);
	keep_pid(self, caller);
	writer = fork();
	ASSERT_LE(0, writer);
	if (writer == 0)
		od_writer(path, page, sh);
	keep_pid(self, writer);

	for (i = 0; i < OD_CYCLES; i++) {
		int on = ut_event_enable(self->grp, "ust_pgodirect_e", true);
		int off = ut_event_enable(self->grp, "ust_pgodirect_e", false);

		if ((on || off) && !fails++)
			first = on ? on : off;
	}
	UT_WRITE_ONCE(sh->stop, 1);
	status = reap(self, writer);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("writer status 0x%x: %s", status,
		       strerror(sh->write_err));
	}
	/*
	 * A page cache page the caller maps is the file's current one, not
	 * one the invalidation deleted from the cache.
	 */
	for (i = 0; i < 10000 && !UT_READ_ONCE(sh->parked); i++)
		usleep(1000);
	EXPECT_EQ(1, UT_READ_ONCE(sh->parked));
	ent = pagemap_of(caller, sh->addr);
	if ((ent & PM_PRESENT) && (ent & PM_FILE)) {
		shared = keep_map(self, ut_map_file(path, 0, PAGE, PROT_READ,
						    MAP_SHARED, false), PAGE);
		ASSERT_NE(MAP_FAILED, shared);
		ASSERT_EQ(page[OD_FN], UT_READ_ONCE(shared[OD_FN]));
		EXPECT_EQ(pfn_of(getpid(), (uintptr_t)shared), (int64_t)(ent & PM_PFN)) {
			TH_LOG("the caller maps a page no longer in the page cache");
		}
		munmap(shared, PAGE);
		self->map[1].p = NULL;
	}
	UT_WRITE_ONCE(sh->done, 1);
	status = reap(self, caller);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("caller status 0x%x%s", status,
		       WIFSIGNALED(status) && WTERMSIG(status) == SIGTRAP ?
		       ": killed by SIGTRAP" : "");
	}
	TH_LOG("%d cycles: %ld calls, %ld O_DIRECT writes, %d traced hits",
	       OD_CYCLES, sh->calls, sh->writes,
	       ut_trace_count("ust_pgodirect_e", caller));
	EXPECT_EQ(0, fails) {
		TH_LOG("%d enables or disables failed, the first with %d",
		       fails, first);
	}
	EXPECT_LT(0, sh->calls);
	EXPECT_LT(0, sh->writes);
	EXPECT_EQ(0, sh->bad);
	EXPECT_EQ(0, sh->differ);

	/* the file is unchanged, and the probe still counts exactly */
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ((ssize_t)PAGE, pread(fd, now, PAGE, 0));
	close(fd);
	EXPECT_EQ(0, memcmp(now, page, PAGE));
	text = keep_map(self, ut_map_file(path, 0, PAGE, PROT_READ | PROT_EXEC,
					  MAP_PRIVATE, false), PAGE);
	ASSERT_NE(MAP_FAILED, text);
	fn = (long (*)(long))(text + OD_FN);
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgodirect_e", true));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i + 1, fn(i));
	EXPECT_EQ(3, HITS("ust_pgodirect_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgodirect_e", false));
	EXPECT_EQ(0, memcmp(text, page, PAGE));
	expect_console_clean(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* [#26] read-only file THP text                                       */

/*
 * Collapse the huge page at @text, retrying what MADV_COLLAPSE calls a
 * transient failure (EAGAIN: a page locked, or not yet on an LRU list);
 * its PMD-mapped file kB, or -errno.
 */
static long collapse(uint8_t *text)
{
	int i, ret;

	for (i = 0; i < 50; i++) {
		ret = madvise(text, HPAGE, MADV_COLLAPSE) ? -errno : 0;
		if (ret != -EAGAIN)
			break;
		usleep(20 * 1000);
	}
	if (ret)
		return ret;
	return smaps_kb((uintptr_t)text, "FilePmdMapped:", "FilePmdMapped:");
}

/*
 * Text of an ext2 file collapsed into a huge page: probing it splits what
 * it must, the probe counts every call, disabling gives back the file's
 * bytes, and the text collapses into a huge page again.
 */
TEST_F_TIMEOUT(pages, ro_thp_text, 120)
{
	const int calls = 7;
	char path[PATH_MAX];
	uint8_t *buf, *text;
	const char *why;
	inc_fn fn;
	long kb;
	int i;

	if (START("ust_pgrothp"))
		return;
	self->kmsg = ut_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	why = ext2_mount(self);
	if (why)
		SKIP(return, "%s", why);
	snprintf(path, sizeof(path), "%s/ust_pgrothp_text", self->mnt);
	text = huge_text(self, path, &buf);
	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, madvise(text, HPAGE, MADV_HUGEPAGE));
	fn = (inc_fn)(text + TH_FN);
	EXPECT_EQ(3, fn(2));
	kb = collapse(text);
	if (kb == -EINVAL)
		SKIP(return, "MADV_COLLAPSE of file text refused (CONFIG_READ_ONLY_THP_FOR_FS)");
	ASSERT_EQ((long)(HPAGE >> 10), kb) {
		TH_LOG("the text was not collapsed (%ld)", kb);
	}

	ASSERT_EQ(0, ut_probe_at(self->grp, "ust_pgrothp_e", path,
				 TH_FN + PG_INC_INSN, 0));
	EXPECT_TRUE(ut_is_bp(text + TH_FN + PG_INC_INSN));
	for (i = 0; i < calls; i++)
		EXPECT_EQ(i + 1, fn(i));
	EXPECT_EQ(calls, HITS("ust_pgrothp_e"));
	ASSERT_EQ(0, ut_event_enable(self->grp, "ust_pgrothp_e", false));
	EXPECT_EQ(101, fn(100));
	EXPECT_EQ(calls, HITS("ust_pgrothp_e"));
	EXPECT_EQ(0, memcmp(text, buf, HPAGE));
	kb = collapse(text);
	EXPECT_EQ((long)(HPAGE >> 10), kb) {
		TH_LOG("no huge page again after the probe went (%ld)", kb);
	}
	EXPECT_EQ(0, memcmp(text, buf, HPAGE));
	EXPECT_EQ(6, fn(5));
	free(buf);
	EXPECT_EQ(0, munmap(text, HPAGE));
	expect_console_clean(_metadata, self);
}

TEST_HARNESS_MAIN
