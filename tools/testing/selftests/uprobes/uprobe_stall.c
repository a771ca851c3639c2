// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_stall: a probe hit that an unprivileged process stalls forever
 * must not stall root's tracing (issue 41, item 2).
 *
 * The process points its stack at a private mapping of a file of its own
 * FUSE mount (a user namespace of uid 65534 and /dev/fuse) whose READ its
 * server never answers, and runs stall_target(), whose first instruction,
 * push %rbp (arm64: stp x29, x30, [sp, #-16]!), is probed: the hit's
 * user-memory access (the emulated push or store pair, x86's return probe
 * reading the return address, or the event's fetch of an argument from
 * that page) then waits in that page fault for as long as the process
 * likes. Meanwhile root disables
 * the event, reads uprobe_profile and uprobe_stats, enables and disables
 * another event, and deletes the stalled one: each must return within
 * OP_BOUND_S seconds. Killing the process and its server then ends
 * everything that was waiting (OP_RELEASE_S).
 *
 * Every root operation runs in a child of its own, so that the test never
 * hangs on one; the stalled process is always killed at the end (and by
 * its parent's death), so a wait it blocked completes.
 *
 * Stock 6.1 holds uprobe->register_rwsem while it hijacks the return
 * address and while the event's handler fetches: with the return probe
 * and with the fetch, the disable of that very event waits there (under
 * event_mutex). The test expects that stock failure.
 *
 * x86-64 and arm64 (the target and the stack switch are assembly). An
 * arm64 return probe reads no memory (the return address is in x30): its
 * variant stalls in the store pair run out of line, as the entry probe's
 * on stock 6.1, which steps that instruction.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/fuse.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_targets.h"
#include "uprobe_util.h"

#define PAGE		4096UL
#define FILE_PAGES	4		/* size of the FUSE file */
#define NOBODY		65534		/* the unprivileged user */
#define FUSE_ROOT	1		/* FUSE_ROOT_ID */
#define FUSE_FILE	2		/* the node id of the file */
#define FILE_NAME	"f"
#define OP_BOUND_S	10		/* root's operations: seconds each */
#define OP_RELEASE_S	20		/* seconds after the kill */
#define OP_ALARM_S	120		/* an operation's child dies after */

#if defined(__x86_64__)
/*
 * CALL_TOP, JUMP_SP: from the end of the file's pages, the stack pointer
 * stall_call() and stall_jump() get, so that the first access to the last
 * page is the probed push (the call's return address lands above it), or
 * for the jump, the return address at [sp].
 */
#define CALL_TOP	8
#define JUMP_SP		(-8)
/* stock 6.1 emulates the push: its fault is the hit's */
#define STOCK_STEPS_TARGET	false

/* the probed function: push %rbp first */
__attribute__((naked)) noipa __used void stall_target(void)
{
	asm volatile("push %rbp\n\t"
		     "mov %rsp, %rbp\n\t"
		     "pop %rbp\n\t"
		     "ret");
}

/* Call stall_target() with %rsp = @top (%rdi), then come back. */
__attribute__((naked)) noipa __used void stall_call(void *top)
{
	asm volatile("push %rbx\n\t"
		     "mov %rsp, %rbx\n\t"
		     "mov %rdi, %rsp\n\t"
		     "call stall_target\n\t"
		     "mov %rbx, %rsp\n\t"
		     "pop %rbx\n\t"
		     "ret");
}

/*
 * Jump to stall_target() with %rsp = @sp (%rdi), its return address at
 * [@sp]; it never comes back (the process is killed meanwhile).
 */
__attribute__((naked)) noipa __used void stall_jump(void *sp)
{
	asm volatile("mov %rdi, %rsp\n\t"
		     "jmp stall_target");
}
#elif defined(__aarch64__)
/* sp stays 16-byte aligned; the probed store pair writes below it */
#define CALL_TOP	0
#define JUMP_SP		0
/* stock 6.1 steps the store pair out of line: its fault is the program's */
#define STOCK_STEPS_TARGET	true

/*
 * In top-level assembly (gcc has no naked functions on arm64):
 * stall_target(), the probed function, a store pair of the frame record
 * first; stall_call(@top), which calls stall_target() with sp = @top (x0)
 * and comes back; stall_jump(@sp), which jumps to stall_target() with
 * sp = @sp and never comes back (the process is killed meanwhile);
 * prototypes in uprobe_targets.h.
 */
asm(".text\n"
	".globl stall_target\n"
	".type stall_target, %function\n"
	"stall_target:\n"
	"\tstp x29, x30, [sp, #-16]!\n"
	"\tmov x29, sp\n"
	"\tldp x29, x30, [sp], #16\n"
	"\tret\n"
	".size stall_target, . - stall_target\n"
	".globl stall_call\n"
	".type stall_call, %function\n"
	"stall_call:\n"
	"\tstp x29, x30, [sp, #-16]!\n"
	"\tmov x29, sp\n"
	"\tmov sp, x0\n"
	"\tbl stall_target\n"
	"\tmov sp, x29\n"
	"\tldp x29, x30, [sp], #16\n"
	"\tret\n"
	".size stall_call, . - stall_call\n"
	".globl stall_jump\n"
	".type stall_jump, %function\n"
	"stall_jump:\n"
	"\tmov sp, x0\n"
	"\tb stall_target\n"
	".size stall_jump, . - stall_jump\n");
#endif

/* the function of the other event, which root enables meanwhile */
noipa int stall_other(int x)
{
	return x + 1;
}

/* root's operations while the hit is stalled, in this order */
enum { OP_DISABLE, OP_PROFILE, OP_STATS, OP_OTHER, OP_DELETE, NR_OPS };

static const char *const op_name[NR_OPS] = {
	[OP_DISABLE] = "disable the stalled event",
	[OP_PROFILE] = "read uprobe_profile",
	[OP_STATS] = "read uprobe_stats",
	[OP_OTHER] = "enable, hit and disable another event",
	[OP_DELETE] = "delete the stalled event",
};

/* what the server tells the test (one byte, then the data said) */
#define NOTE_ERROR	'E'	/* int stage, int errno */
#define NOTE_PID	'P'	/* pid_t of the stalling process */
#define NOTE_READ	'R'	/* a READ arrived (and waits) */

enum { STAGE_CREDS, STAGE_USERNS, STAGE_IDMAP, STAGE_DEV, STAGE_MOUNT };

/* ---- the FUSE server, in its user namespace ---- */

struct server_cfg {
	const char *dev;	/* a fuse device node that nobody may open */
	const char *mnt;	/* the mount point */
	int note;		/* write end: to the test */
	bool ret_probe;		/* how the stalling process enters */
};

static void note_error(int note, int stage, int err)
{
	char b[1 + 2 * sizeof(int)] = { NOTE_ERROR };

	memcpy(b + 1, &stage, sizeof(int));
	memcpy(b + 1 + sizeof(int), &err, sizeof(int));
	if (write(note, b, sizeof(b)) != sizeof(b))
		_exit(3);
	_exit(2);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static void fuse_reply(int fd, uint64_t unique, int error, const void *arg,
		       size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 256];
	struct fuse_out_header *oh = (void *)buf;

	if (len > 256)
		_exit(4);
	oh->len = sizeof(*oh) + len;
	oh->error = error;
	oh->unique = unique;
	if (len)
		memcpy(buf + sizeof(*oh), arg, len);
	/* ENOENT: the request was interrupted meanwhile */
	if (write(fd, buf, oh->len) != (ssize_t)oh->len && errno != ENOENT)
		_exit(5);
}

static void fill_attr(struct fuse_attr *a, uint64_t node)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->nlink = node == FUSE_ROOT ? 2 : 1;
	a->mode = node == FUSE_ROOT ? S_IFDIR | 0755 : S_IFREG | 0644;
	a->size = node == FUSE_ROOT ? 0 : FILE_PAGES * PAGE;
	a->blocks = a->size / 512;
	a->blksize = PAGE;
}

/*
 * Serve the mount: the root directory and one regular file FILE_NAME of
 * FILE_PAGES pages; a READ is read and never answered (the test is told of
 * the first); other requests are answered. Returns when the device goes.
 */
static void fuse_serve(int fd, int note)
{
	static char buf[FUSE_MIN_READ_BUFFER * 16];
	bool told = false;

	for (;;) {
		struct fuse_in_header *ih = (void *)buf;
		void *in = buf + sizeof(*ih);
		ssize_t n = read(fd, buf, sizeof(buf));
		union {
			struct fuse_init_out init;
			struct fuse_entry_out entry;
			struct fuse_attr_out attr;
			struct fuse_open_out open;
		} out;

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*ih))
			return;		/* ENODEV: aborted */
		memset(&out, 0, sizeof(out));
		switch (ih->opcode) {
		case FUSE_INIT: {
			struct fuse_init_in *ii = in;

			/* no async read, writeback cache nor splice */
			out.init.major = FUSE_KERNEL_VERSION;
			out.init.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
					 ii->minor : FUSE_KERNEL_MINOR_VERSION;
			out.init.max_readahead = ii->max_readahead;
			out.init.max_write = PAGE;
			fuse_reply(fd, ih->unique, 0, &out.init,
				   sizeof(out.init));
			break;
		}
		case FUSE_LOOKUP:
			if (ih->nodeid != FUSE_ROOT || strcmp(in, FILE_NAME)) {
				fuse_reply(fd, ih->unique, -ENOENT, NULL, 0);
				break;
			}
			out.entry.nodeid = FUSE_FILE;
			out.entry.generation = 1;
			out.entry.entry_valid = 3600;
			out.entry.attr_valid = 3600;
			fill_attr(&out.entry.attr, FUSE_FILE);
			fuse_reply(fd, ih->unique, 0, &out.entry,
				   sizeof(out.entry));
			break;
		case FUSE_GETATTR:
			out.attr.attr_valid = 3600;
			fill_attr(&out.attr.attr, ih->nodeid);
			fuse_reply(fd, ih->unique, 0, &out.attr,
				   sizeof(out.attr));
			break;
		case FUSE_OPEN:
			out.open.fh = 1;
			fuse_reply(fd, ih->unique, 0, &out.open,
				   sizeof(out.open));
			break;
		case FUSE_READ:
			/* held: the page fault that asked waits for ever */
			if (!told && write(note, (char []){ NOTE_READ }, 1) != 1)
				_exit(6);
			told = true;
			break;
		case FUSE_FLUSH:
		case FUSE_RELEASE:
			fuse_reply(fd, ih->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;		/* no reply */
		default:
			fuse_reply(fd, ih->unique, -EOPNOTSUPP, NULL, 0);
			break;
		}
	}
}

/*
 * The stalling process (the server's child, in its namespaces, without
 * the device): stack on the FUSE file, then into stall_target(). An entry
 * probe's emulated push is the first access to the file's last page (the
 * call's return address is in the anonymous page above it); x86's return
 * probe's read of the return address is, when it enters by a jump.
 */
static void staller(const char *mnt, bool ret_probe)
{
	char path[256];
	char *area;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(path, sizeof(path), "%s/" FILE_NAME, mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(10);
	area = mmap(NULL, (FILE_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		_exit(11);
	area[FILE_PAGES * PAGE] = 1;
	if (mmap(area, FILE_PAGES * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED, fd, 0) != area)
		_exit(12);
	if (ret_probe)
		stall_jump(area + FILE_PAGES * PAGE + JUMP_SP);
	else
		stall_call(area + FILE_PAGES * PAGE + CALL_TOP);
	_exit(13);
}

/*
 * The server process: become nobody, then root of a user and mount
 * namespace of its own, mount the FUSE file system, start the stalling
 * process and serve. Never returns.
 */
static void server(const struct server_cfg *c)
{
	char opts[128], b[1 + sizeof(pid_t)] = { NOTE_PID };
	pid_t parent = getppid(), pid;
	int fd;

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		note_error(c->note, STAGE_CREDS, errno);
	/* the uid change made /proc/self root's: make it ours again */
	prctl(PR_SET_DUMPABLE, 1);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		note_error(c->note, STAGE_USERNS, errno);
	if (write_str("/proc/self/setgroups", "deny") ||
	    write_str("/proc/self/uid_map", "0 65534 1") ||
	    write_str("/proc/self/gid_map", "0 65534 1"))
		note_error(c->note, STAGE_IDMAP, errno);
	/* set after the credentials changed, which clear it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(7);
	fd = open(c->dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		note_error(c->note, STAGE_DEV, errno);
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (mount("stall", c->mnt, "fuse", MS_NOSUID | MS_NODEV, opts))
		note_error(c->note, STAGE_MOUNT, errno);
	pid = fork();
	if (pid < 0)
		_exit(8);
	if (pid == 0) {
		/* without the device: its death must end the connection */
		close(fd);
		close(c->note);
		staller(c->mnt, c->ret_probe);
	}
	memcpy(b + 1, &pid, sizeof(pid));
	if (write(c->note, b, sizeof(b)) != sizeof(b))
		_exit(9);
	fuse_serve(fd, c->note);
	_exit(0);
}

/* ---- the test ---- */

FIXTURE(stall) {
	char grp[64];
	char dir[64];		/* fuse node and mount point, to remove */
	char dev[96];
	char mnt[96];
	pid_t server;
	pid_t staller;
	int note;		/* read end: from the server */
	pid_t op[NR_OPS];	/* root's operations still running */
	int op_status[NR_OPS];
	long *res;		/* shared: each operation's result */
};

FIXTURE_VARIANT(stall) {
	bool ret_probe;
	bool fetch;
};

/* the probe's hit emulates push %rbp onto the FUSE page */
FIXTURE_VARIANT_ADD(stall, entry) {
	.ret_probe = false,
};

/* the return probe's hijack reads the return address on the FUSE page */
FIXTURE_VARIANT_ADD(stall, ret) {
	.ret_probe = true,
};

/* the entry probe's event fetches the word below the stack pointer there */
FIXTURE_VARIANT_ADD(stall, fetch) {
	.ret_probe = false,
	.fetch = true,
};

FIXTURE_SETUP(stall)
{
	self->note = -1;
	self->res = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
}

/* Wait up to @ms for child @pid; its wait status, or -1 while it runs. */
static int wait_bounded(pid_t pid, int ms)
{
	int status, i;

	for (i = 0; i <= ms / 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	return -1;
}

/* Kill the stalling process and its server, and reap them (bounded). */
static void release(struct _test_data_stall *self)
{
	if (self->staller > 0)
		kill(self->staller, SIGKILL);
	if (self->server > 0)
		kill(self->server, SIGKILL);
	if (self->server > 0 && wait_bounded(self->server, 1000 * OP_RELEASE_S) != -1)
		self->server = 0;
	/* ours again as the subreaper once the server is gone */
	if (self->staller > 0 && wait_bounded(self->staller, 1000 * OP_RELEASE_S) != -1)
		self->staller = 0;
}

FIXTURE_TEARDOWN(stall)
{
	int i;

	release(self);
	for (i = 0; i < NR_OPS; i++)
		if (self->op[i] > 0 && wait_bounded(self->op[i], 1000 * OP_RELEASE_S) == -1)
			kill(self->op[i], SIGKILL);
	if (self->note >= 0)
		close(self->note);
	if (self->grp[0])
		ut_group_cleanup(self->grp);
	if (self->dir[0]) {
		unlink(self->dev);
		rmdir(self->mnt);
		rmdir(self->dir);
	}
	munmap(self->res, PAGE);
}

/*
 * Read one note of @len bytes from the server within @ms into @buf; the
 * note's kind, or 0 on timeout or EOF.
 */
static char read_note(int fd, void *buf, size_t len, int ms)
{
	char kind;

	if (ut_wait_input(fd, ms) || read(fd, &kind, 1) != 1)
		return 0;
	if (kind == NOTE_ERROR)
		len = 2 * sizeof(int);
	else if (kind == NOTE_READ)
		len = 0;
	if (len && (ut_wait_input(fd, 1000) ||
		    read(fd, buf, len) != (ssize_t)len))
		return 0;
	return kind;
}

/*
 * Start the FUSE server and the stalling process, and wait until the hit
 * waits in the FUSE READ. 0; or 1 when the test was skipped.
 */
static noipa int start_stall(struct __test_metadata *_metadata,
			     struct _test_data_stall *self, bool ret_probe)
{
	struct server_cfg cfg = { .ret_probe = ret_probe };
	int p[2], err[2];
	char kind;

	if (!ut_file_exists("/dev/fuse"))
		SKIP(return 1, "CONFIG_FUSE_FS not enabled (no /dev/fuse)");
	/*
	 * Distributions let everyone open /dev/fuse (mode 0666); devtmpfs
	 * makes it 0600: a node of our own has the distributions' mode.
	 */
	snprintf(self->dir, sizeof(self->dir), "/tmp/uprobe_stall.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chmod(self->dir, 0755));
	snprintf(self->dev, sizeof(self->dev), "%s/fuse", self->dir);
	snprintf(self->mnt, sizeof(self->mnt), "%s/mnt", self->dir);
	ASSERT_EQ(0, mknod(self->dev, S_IFCHR, makedev(10, 229)));
	ASSERT_EQ(0, chmod(self->dev, 0666));
	ASSERT_EQ(0, mkdir(self->mnt, 0755));
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	cfg.dev = self->dev;
	cfg.mnt = self->mnt;
	cfg.note = p[1];
	self->server = fork();
	ASSERT_LE(0, self->server);
	if (self->server == 0) {
		close(p[0]);
		server(&cfg);
	}
	close(p[1]);
	self->note = p[0];

	kind = read_note(self->note, &self->staller, sizeof(self->staller),
			 10000);
	if (kind == NOTE_ERROR) {
		memcpy(err, &self->staller, sizeof(err));
		self->staller = 0;
		if (err[0] == STAGE_USERNS && err[1] == EINVAL)
			SKIP(return 1, "CONFIG_USER_NS not enabled (no CLONE_NEWUSER)");
		if (err[0] == STAGE_USERNS)
			SKIP(return 1, "no user namespace for uid %d: %s",
			     NOBODY, strerror(err[1]));
		if (err[0] == STAGE_MOUNT && err[1] == ENODEV)
			SKIP(return 1, "CONFIG_FUSE_FS not enabled (no fuse file system)");
	}
	ASSERT_EQ(NOTE_PID, kind) {
		if (kind == NOTE_ERROR)
			TH_LOG("server setup stage %d: %s", err[0],
			       strerror(err[1]));
	}
	ASSERT_LT(0, self->staller);
	ASSERT_EQ(NOTE_READ, read_note(self->note, NULL, 0, 10000)) {
		TH_LOG("the FUSE READ of the stalled hit never came");
	}
	return 0;
}

/* Is @addr inside the [uprobes] (XOL) mapping of @pid? */
static bool in_xol_area(pid_t pid, unsigned long long addr)
{
	unsigned long long lo, hi;
	char path[64], line[512];
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!in && fgets(line, sizeof(line), f))
		in = strstr(line, "[uprobes]\n") &&
		     sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		     addr >= lo && addr < hi;
	fclose(f);
	return in;
}

/*
 * The stalling process waits in a page fault, not in a system call
 * ("-1 SP PC" in /proc/PID/syscall), with its ip at the probed
 * instruction (the hit waits in the kernel for the page) or, ours, in the
 * XOL area: a hit whose emulated push would fault runs the push from its
 * slot instead, and the fault is then the program's own, in user mode.
 * Stock 6.1 on arm64 steps the store pair from its slot too.
 */
static void expect_in_hit(struct __test_metadata *_metadata, pid_t pid)
{
	unsigned long long sp, pc;
	char path[64], *buf;
	long nr;
	int n;

	usleep(100000);
	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	buf = ut_read_file(path, NULL);
	ASSERT_NE(NULL, buf);
	n = sscanf(buf, "%ld %llx %llx", &nr, &sp, &pc);
	EXPECT_EQ(3, n) {
		TH_LOG("%s: %s", path, buf);
	}
	EXPECT_EQ(-1, nr);
	EXPECT_TRUE((uintptr_t)stall_target == pc ||
		    ((!ut_impl_is_stock() || STOCK_STEPS_TARGET) &&
		     in_xol_area(pid, pc))) {
		TH_LOG("%s: %s (stall_target at %p)", path, buf, stall_target);
	}
	if ((uintptr_t)stall_target != pc)
		TH_LOG("the stalled fault is the program's own, in its XOL slot at %#llx",
		       pc);
	free(buf);
}

/* Root's operation @op, in its child; its result in *@res. */
static void run_op(const char *grp, int op, long *res)
{
	char *buf;
	int en;

	alarm(OP_ALARM_S);
	switch (op) {
	case OP_DISABLE:
		*res = ut_event_enable(grp, "stall", false);
		/*
		 * Still enabled is wrong; gone is not: a late disable (stock)
		 * may finish after the late delete.
		 */
		en = ut_event_enabled(grp, "stall");
		if (!*res && (en > 0 ||
			      (en < 0 && ut_event_dir_exists(grp, "stall"))))
			*res = -1000;
		break;
	case OP_PROFILE:
		*res = ut_profile_hits("stall");
		break;
	case OP_STATS:
		/* ours only; stock 6.1 has none */
		*res = 0;
		if (!ut_file_exists(UT_TRACEFS "/uprobe_stats"))
			break;
		buf = ut_read_file(UT_TRACEFS "/uprobe_stats", NULL);
		*res = buf && buf[0] ? 0 : -1;
		free(buf);
		break;
	case OP_OTHER:
		*res = ut_probe_at(grp, "other", ut_self_exe(),
				   ut_elf_sym_offset(ut_self_exe(), "stall_other"),
				   0);
		if (*res)
			break;
		if (stall_other(41) != 42) {
			*res = -1000;
			break;
		}
		/* its hits; the trace records, only logged */
		*res = ut_profile_hits("other");
		res[NR_OPS] = ut_trace_count("other", getpid());
		if (ut_event_enable(grp, "other", false))
			*res = -1001;
		break;
	case OP_DELETE:
		*res = ut_probe_del(grp, "stall");
		break;
	}
	_exit(0);
}

/* what each operation must have given */
static long op_want(int op)
{
	switch (op) {
	case OP_PROFILE:
	case OP_OTHER:
		return 1;	/* one hit */
	default:
		return 0;
	}
}

/*
 * While an unprivileged process stalls a hit of the probe in a page fault
 * on its own FUSE file, root disables the event, reads uprobe_profile and
 * uprobe_stats, enables, hits and disables another event and deletes the
 * stalled one, each within OP_BOUND_S seconds; after the process and its
 * server are killed, every operation has completed with its exact result
 * and the event is gone.
 */
TEST_F_TIMEOUT(stall, root_ops_bounded, 180)
{
	bool stock_waits = (variant->ret_probe || variant->fetch) &&
			   ut_impl_is_stock();
	bool late[NR_OPS] = { false };
	struct timespec t0, t1;
	int64_t off;
	int i;

	if (ut_start(_metadata, self->grp, sizeof(self->grp), "ust_stall"))
		return;
	off = ut_elf_sym_offset(ut_self_exe(), "stall_target");
	ASSERT_LT(0, off);
	ASSERT_EQ(0, ut_probe_add("%s:%s/stall %s:0x%llx%s",
				  variant->ret_probe ? "r" : "p", self->grp,
				  ut_self_exe(), (unsigned long long)off,
				  variant->fetch ? " below=-8(%sp):x64" : ""));
	ASSERT_EQ(0, ut_event_enable(self->grp, "stall", true));
	if (start_stall(_metadata, self, variant->ret_probe))
		return;
	/* stock 6.1's handler waits in the breakpoint's trap */
	if (!variant->fetch || !ut_impl_is_stock())
		expect_in_hit(_metadata, self->staller);
	/* an entry probe's record is written before the push */
	if (!variant->ret_probe && !variant->fetch)
		EXPECT_EQ(1, ut_trace_count("stall", self->staller));

	for (i = 0; i < NR_OPS; i++) {
		self->res[i] = -9999;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		self->op[i] = fork();
		ASSERT_LE(0, self->op[i]);
		if (self->op[i] == 0)
			run_op(self->grp, i, &self->res[i]);
		self->op_status[i] = wait_bounded(self->op[i], 1000 * OP_BOUND_S);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (self->op_status[i] != -1) {
			self->op[i] = 0;
			continue;
		}
		late[i] = true;
		TH_LOG("%s: still waiting after %.1f s", op_name[i],
		       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	for (i = 0; i < NR_OPS; i++) {
		if (stock_waits && late[i]) {
			UT_STOCK_FAILS("%s waits for the hijack, under uprobe->register_rwsem",
				       op_name[i]);
			continue;
		}
		EXPECT_FALSE(late[i]) {
			TH_LOG("%s: not done within %d s of the stall",
			       op_name[i], OP_BOUND_S);
		}
	}

	/* killing the process releases everything */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	release(self);
	EXPECT_EQ(0, self->server);
	EXPECT_EQ(0, self->staller);
	for (i = 0; i < NR_OPS; i++) {
		if (!late[i])
			continue;
		self->op_status[i] = wait_bounded(self->op[i], 1000 * OP_RELEASE_S);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		EXPECT_NE(-1, self->op_status[i]) {
			TH_LOG("%s: still waiting %d s after the kill",
			       op_name[i], OP_RELEASE_S);
			continue;
		}
		self->op[i] = 0;
		TH_LOG("%s: done %.1f s after the kill", op_name[i],
		       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	for (i = 0; i < NR_OPS; i++) {
		if (self->op[i])
			continue;
		EXPECT_TRUE(WIFEXITED(self->op_status[i]) &&
			    !WEXITSTATUS(self->op_status[i])) {
			TH_LOG("%s: status 0x%x", op_name[i], self->op_status[i]);
		}
		EXPECT_EQ(op_want(i), self->res[i]) {
			TH_LOG("%s: result %ld (%ld)", op_name[i], self->res[i],
			       self->res[NR_OPS + i]);
		}
	}
	TH_LOG("the other event's hit left %ld trace records",
	       self->res[NR_OPS + OP_OTHER]);
	EXPECT_FALSE(ut_uprobe_events_has(self->grp, "stall"));
	EXPECT_FALSE(ut_event_dir_exists(self->grp, "stall"));
	EXPECT_EQ(0, ut_probe_del(self->grp, "other"));
}

TEST_HARNESS_MAIN
