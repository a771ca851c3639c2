/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the uprobes selftests: tracefs access, ELF symbol and
 * SDT note parsing, /proc/PID/{mem,maps} access and a tiny helper-process
 * protocol (line based commands over pipes).
 */
#ifndef UPROBE_UTIL_H
#define UPROBE_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UT_TRACEFS	"/sys/kernel/tracing"
#define UT_UPROBE_PMU	"/sys/bus/event_source/devices/uprobe"

/* a function the compiler must call as is: no inlining, cloning, IPA */
#ifndef noipa
#define noipa __attribute__((noipa))
#endif

/* single, untorn accesses to memory that others (the kernel) change */
#define UT_READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define UT_WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* ---- the target architecture ---- */

/*
 * UT_ARG0, UT_ARG1: the fetch-arg registers holding a function's first two
 * integer arguments, UT_IP the program counter's, and UT_SDT_ARG0 the SDT
 * note's operand of a long passed in the first;
 * UT_SDT_REG: the register tick's markers pin their int argument to, with
 * its note operand UT_SDT_REG_NOTE and fetch-arg UT_SDT_REG_FETCH;
 * UT_BP: the breakpoint a probe writes, as UT_BP_SIZE bytes in memory
 * (x86: int3; arm64: BRK #0x5, little endian), and UT_BP_ASM in assembly;
 * UT_TRAP_BYTE: a byte that memory filled with traps wherever execution
 * lands in it (x86: int3; arm64: 0, UDF #0);
 * UT_UC_PC(uc), UT_UC_ARG0(uc): the program counter and the first integer
 * argument's register in a signal handler's ucontext_t.
 */
#if defined(__x86_64__)
#define UT_ARG0			"%di"
#define UT_ARG1			"%si"
#define UT_IP			"%ip"
#define UT_SDT_ARG0		"-8@%rdi"
#define UT_SDT_REG		"ebx"
#define UT_SDT_REG_NOTE		"-4@%ebx"
#define UT_SDT_REG_FETCH	"%bx"
#define UT_BP			"\xcc"
#define UT_BP_ASM		"int3"
#define UT_TRAP_BYTE		0xcc
#define UT_UC_PC(uc)		((uc)->uc_mcontext.gregs[REG_RIP])
#define UT_UC_ARG0(uc)		((uc)->uc_mcontext.gregs[REG_RDI])
#elif defined(__aarch64__)
#define UT_ARG0			"%x0"
#define UT_ARG1			"%x1"
#define UT_IP			"%pc"
#define UT_SDT_ARG0		"-8@x0"
#define UT_SDT_REG		"x19"
#define UT_SDT_REG_NOTE		"-4@x19"
#define UT_SDT_REG_FETCH	"%x19"
#define UT_BP			"\xa0\x00\x20\xd4"
#define UT_BP_ASM		"brk #0x5"
#define UT_TRAP_BYTE		0x00
#define UT_UC_PC(uc)		((uc)->uc_mcontext.pc)
#define UT_UC_ARG0(uc)		((uc)->uc_mcontext.regs[0])
#else
#error "the uprobes selftests know no breakpoint for this architecture"
#endif
#define UT_BP_SIZE		(sizeof(UT_BP) - 1)
/*
 * In a SIGTRAP handler (SA_SIGINFO, its ucontext @ucv) for a breakpoint of
 * the program's own at @bp: resume after it (x86 reports the pc past it,
 * arm64 at it).
 */
static inline void ut_uc_skip_bp(void *ucv, uintptr_t bp)
{
	ucontext_t *uc = ucv;

	if ((uintptr_t)UT_UC_PC(uc) == bp)
		UT_UC_PC(uc) += UT_BP_SIZE;
}

/*
 * Is our probe patched in at @p of this process: the breakpoint, or (x86-64)
 * a jump site's jump into a stub area ([uprobes-stubs] in its maps)?
 */
bool ut_is_bp(const void *p);
/* The same for UT_SITE_BYTES @bytes, read from @addr of process @pid. */
bool ut_is_bp_in(pid_t pid, uint64_t addr, const void *bytes);
#define UT_SITE_BYTES		8

/*
 * Turn jump sites on or off (UT_JUMP_SITES, ours only); the old setting
 * (0 or 1), or -1 where the kernel has no such parameter (stock).
 */
int ut_jump_sites(bool on);
#define UT_JUMP_SITES	"/sys/module/uprobes/parameters/jump_sites"
/* The bool parameter at @path: 1 on, 0 off, -1 if there is none. */
int ut_bool_param(const char *path);
/* Turn boosting on or off (UT_BOOST, ours only); as ut_jump_sites(). */
int ut_boost(bool on);
#define UT_BOOST	"/sys/module/uprobes/parameters/boost"
/* Turn x86-64's system call returns on or off; as ut_jump_sites(). */
int ut_syscall_returns(bool on);
#define UT_SYSCALL_RETURNS	"/sys/module/uprobes/parameters/syscall_returns"
/* Turn x86's emulation beyond the base set on or off; as ut_jump_sites(). */
int ut_emulate(bool on);
#define UT_EMULATE	"/sys/module/uprobes/parameters/emulate"

/*
 * The counters HITS EMULATED STEPPED BOOSTED MISSED of GRP/EV's last line
 * in uprobe_stats into @v; 0, or -1 if it has none (or, stock, no file).
 */
int ut_stats_counts(const char *grp, const char *ev, unsigned long long v[5]);

/*
 * The pc of stopped tracee @pid in *@pc, and then, unless @set is 0, @set
 * as its new pc; 0 or -1.
 */
int ut_tracee_pc(pid_t pid, uintptr_t *pc, uintptr_t set);

/* ---- generic file helpers ---- */

/* Read a whole file into a malloc()ed NUL terminated buffer (NULL on error). */
char *ut_read_file(const char *path, size_t *lenp);
/* Write @buf to @path (O_APPEND if @append, else O_TRUNC); 0 or -errno. */
int ut_write_file(const char *path, const char *buf, bool append);
bool ut_file_exists(const char *path);

/* ---- tracefs ---- */

/* true when tracefs with uprobe_events is available */
bool ut_tracefs_ok(void);
/* Append one definition to uprobe_events; returns 0 or -errno. */
int ut_probe_add(const char *fmt, ...) __printf(1, 2);
/* Append one definition to dynamic_events; returns 0 or -errno. */
int ut_dynevent_add(const char *fmt, ...) __printf(1, 2);
/* Remove GRP/EV ("-:GRP/EV"); returns 0 or -errno. */
int ut_probe_del(const char *grp, const char *ev);
/* Write 1/0 to events/GRP/EV/enable; returns 0 or -errno. */
int ut_event_enable(const char *grp, const char *ev, bool on);
/* 1 when events/GRP/EV/enable reads 1, 0 when it reads 0, else -1. */
int ut_event_enabled(const char *grp, const char *ev);
/* true when events/GRP/EV exists */
bool ut_event_dir_exists(const char *grp, const char *ev);
/* true when events/GRP exists */
bool ut_group_dir_exists(const char *grp);
/* true when uprobe_events has a line defining GRP/EV */
bool ut_uprobe_events_has(const char *grp, const char *ev);
/* Disable and remove every uprobe event of group @grp; returns how many. */
int ut_group_cleanup(const char *grp);
/* Empty the trace buffer. */
int ut_trace_clear(void);
/*
 * Collect the trace records of event @ev (pid @pid, or any when pid <= 0).
 * Returns the number of records; when @recs is not NULL it receives a
 * malloc()ed array of malloc()ed strings: the text after "EV: ".
 */
int ut_trace_records(const char *ev, pid_t pid, char ***recs);
int ut_trace_count(const char *ev, pid_t pid);
void ut_free_records(char **recs, int n);
/* Parse "NAME=VALUE" from a record; numbers accept 0x.. or decimal. */
int ut_rec_u64(const char *rec, const char *name, uint64_t *val);
int ut_rec_str(const char *rec, const char *name, char *buf, size_t size);
/* The probe address printed in "(0x...)" (or "(0xRET <- 0xFUNC)"). */
int ut_rec_ip(const char *rec, uint64_t *ip, uint64_t *func);
/* Clear error_log; read it (malloc()ed, NULL on error). */
int ut_error_log_clear(void);
char *ut_error_log(void);
/* Hit count of event @ev in uprobe_profile, -1 when not listed. */
long ut_profile_hits(const char *ev);
/* The same, for the probe of @ev on file @path (any file when NULL). */
long ut_profile_hits_at(const char *path, const char *ev);
/*
 * Define GRP/EV at file offset @off of @path, with reference counter file
 * offset @ref (0: none); 0 or -errno.
 */
int ut_define_at(const char *grp, const char *ev, const char *path,
		 uint64_t off, uint64_t ref);
/* Define GRP/EV as ut_define_at() does and enable it; 0 or -errno. */
int ut_probe_at(const char *grp, const char *ev, const char *path,
		uint64_t off, uint64_t ref);

/* ---- perf ---- */

struct perf_event_attr;

/* The uprobe PMU's type, or -1 when it is absent. */
long ut_pmu_type(void);
/*
 * First bit of the PMU format field @name ("config:LO" or "config:LO-HI");
 * *@hi (if not NULL) receives the last. -1 on error.
 */
int ut_pmu_format_bit(const char *name, int *hi);
/*
 * Fill @attr for a uprobe PMU event on @path:@offset; @ret selects a
 * return probe, @ref_ctr (non-zero) the reference counter file offset.
 * 0 or -1.
 */
int ut_uprobe_attr(struct perf_event_attr *attr, const char *path,
		   uint64_t offset, bool ret, uint64_t ref_ctr);
/* perf_event_open(@attr) for task @pid on any CPU; the fd or -errno. */
int ut_perf_open(struct perf_event_attr *attr, pid_t pid);
/*
 * perf_event_open() a uprobe PMU event on @path:@offset with reference
 * counter file offset @ref_ctr (0: none), for task @pid on any CPU.
 * Returns the fd or -errno.
 */
int ut_uprobe_perf_open(const char *path, uint64_t offset, uint64_t ref_ctr,
			pid_t pid);

/* ---- ELF ---- */

/* These read ELF64 files, and ELF32 ones (i686 programs) as well. */

/* File offset of symbol @sym in ELF file @path (st_value - p_vaddr + p_offset). */
int64_t ut_elf_sym_offset(const char *path, const char *sym);
/* Virtual address (st_value) of symbol @sym, or -1. */
int64_t ut_elf_sym_vaddr(const char *path, const char *sym);
/* File offset of the link-time virtual address @vaddr, or -1. */
int64_t ut_elf_vaddr_to_offset(const char *path, uint64_t vaddr);

struct ut_sdt_note {
	char provider[64];
	char name[64];
	char args[256];
	uint64_t pc;		/* link-time address, adjusted for .stapsdt.base */
	uint64_t sem;		/* link-time address of semaphore, 0 if none */
	uint64_t pc_off;	/* file offset of the marker */
	uint64_t sem_off;	/* file offset of the semaphore, 0 if none */
};

/* Parse .note.stapsdt; returns the number of notes (up to @max) or -1. */
int ut_sdt_notes(const char *path, struct ut_sdt_note *notes, int max);
/* Find one marker; 0 on success, -1 if absent. */
int ut_sdt_find(const char *path, const char *provider, const char *name,
		struct ut_sdt_note *note);

/* ---- processes ---- */

/* Absolute path of the directory holding /proc/self/exe. */
const char *ut_self_dir(void);
/* Absolute path of /proc/self/exe. */
const char *ut_self_exe(void);
/* Absolute path of helper file @name next to the test binary. */
const char *ut_helper(const char *name);

/*
 * Read @len bytes at @addr of @pid's memory as the task sees it
 * (process_vm_readv()): breakpoints included, unlike a debugger's view
 * through ptrace or /proc/PID/mem, which ours shows the instructions under
 * a probe's breakpoint. 0 or -errno.
 */
int ut_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int ut_proc_read_u16(pid_t pid, uint64_t addr, uint16_t *val);
int ut_proc_read_u8(pid_t pid, uint64_t addr, uint8_t *val);
/* Start of the lowest mapping of @path (0 when not mapped). */
uint64_t ut_map_base(pid_t pid, const char *path);
/* Virtual address where file offset @off of @path is mapped (0 if none). */
uint64_t ut_fileoff_to_vaddr(pid_t pid, const char *path, uint64_t off);
/*
 * The same in the private writable mapping that holds @off, where a
 * reference counter at @off lives: a text mapping may cover the same file
 * offset (arm64's 64K-aligned segments of a small file).
 */
uint64_t ut_fileoff_to_data_vaddr(pid_t pid, const char *path, uint64_t off);
/* true when @path appears in /proc/PID/maps */
bool ut_is_mapped(pid_t pid, const char *path);

/* A helper process driven through its stdin/stdout. */
struct ut_child {
	pid_t pid;
	int to;		/* write end: child's stdin */
	int from;	/* read end: child's stdout */
};

/* Start @argv[0] (absolute path) with pipes; 0 or -errno. */
int ut_spawn(const char *const argv[], struct ut_child *c);
/*
 * Start uprobe_target as @child[*@nchild] (at most @max) and wait until it
 * answers; returns its index or -1.
 */
int ut_spawn_target(struct ut_child *child, int *nchild, int max);
/* Send one command line, read one reply line (10 s timeout); 0 or -errno. */
int ut_cmd(struct ut_child *c, char *reply, size_t size, const char *fmt, ...)
	__printf(4, 5);
/* Send @cmd; the number in an "ok N" or "N" reply, 0 for "ok", else -1. */
long ut_ask(struct ut_child *c, const char *cmd);
/* Wait up to @timeout_ms for @fd to be readable (or at EOF); 0 or -errno. */
int ut_wait_input(int fd, int timeout_ms);
/* Read one line of output (10 s timeout); 0 or -errno. */
int ut_readline(int fd, char *buf, size_t size, int timeout_ms);
/* Close pipes, wait for exit; returns the wait status or -1. */
int ut_child_wait(struct ut_child *c);
/* Kill (SIGKILL) and reap, if still there. */
void ut_child_kill(struct ut_child *c);
/*
 * Pin the calling process (and what it starts later) to the CPU it runs
 * on, so that its trace records are in program order; or undo that.
 */
int ut_pin_cpu(void);
int ut_unpin_cpu(void);
/* Run @argv to completion, capturing stdout+stderr into @out; wait status. */
int ut_run(const char *const argv[], char *out, size_t size);

/*
 * true when the harness says the kernel under test is the untouched base
 * tree (UPROBE_TEST_IMPL=stock on the kernel command line): tests of
 * behaviour stock 6.1 gets wrong then expect the stock failure.  Unset
 * means not stock, so that outside the harness every test is strict.
 */
bool ut_impl_is_stock(void);

/*
 * true on a kernel with lockdep (/proc/lockdep: the debug config), which
 * runs the suites several times slower under TCG. Loops whose length only
 * sets how long a race or a sampler is given use ut_scaled() for it.
 */
bool ut_slow_kernel(void);

/* @n, or @n / @div (at least 1) on a slow kernel. */
static inline long ut_scaled(long n, long div)
{
	return ut_slow_kernel() ? (n + div - 1) / div : n;
}

/* ---- mappings ---- */

/*
 * mmap() @len bytes of @path from page-aligned file offset @pgoff, the file
 * opened read-only (or read-write with @rdwr); MAP_FAILED on error.
 */
void *ut_map_file(const char *path, uint64_t pgoff, size_t len, int prot,
		  int flags, bool rdwr);
/*
 * The "Anonymous:" size in kB of the mapping of task @pid that contains
 * @addr, from /proc/PID/smaps; -1 when there is none.
 */
long ut_smaps_anon_kb(pid_t pid, uint64_t addr);
/* Copy file @src to @dst (created with mode 0755); 0 or -errno. */
int ut_copy_file(const char *src, const char *dst);

/* ---- kernel log ---- */

/* Open /dev/kmsg non-blocking, positioned after the last record; fd or -errno. */
int ut_kmsg_open(void);
/*
 * Read the records logged since ut_kmsg_open() or the last call, and
 * count those whose text contains @a and (unless NULL) @b.  The records
 * read are appended to @log (up to @size, NUL terminated, " | " between
 * records) when it is not NULL.  Returns the count or -errno.
 */
int ut_kmsg_count(int fd, const char *a, const char *b, char *log,
		  size_t size);

/* ---- helpers for kselftest_harness.h based tests ---- */
#ifdef __KSELFTEST_HARNESS_H
/* Log that stock 6.1 shows the failure a test expects from it. */
#define UT_STOCK_FAILS(fmt, ...) \
	TH_LOG("stock 6.1 fails this as expected: " fmt, ##__VA_ARGS__)

/*
 * Stock 6.1 counts an event's hits for uprobe_profile with one plain
 * increment that every CPU shares, so hits taken at once on two CPUs may
 * count once. True, with that logged as the stock failure, when the
 * kernel is stock and @got is short of @want but not 0.
 */
static inline bool ut_stock_lost_hits(struct __test_metadata *_metadata,
				      long got, long want)
{
	if (!ut_impl_is_stock() || got >= want || got <= 0)
		return false;
	UT_STOCK_FAILS("uprobe_profile counted %ld of %ld hits taken on several CPUs at once",
		       got, want);
	return true;
}

/*
 * SKIP the current test and return true under UT_CLIENTS=smoke (make check
 * CLIENTS=smoke), which keeps one client test of each tool and kind: for a
 * test whose time is a tool's own start-up under emulation (bcc compiling
 * its program, one more gdb session) and whose kernel paths a kept test
 * also takes.
 */
static inline bool ut_heavy_client(struct __test_metadata *_metadata)
{
	const char *c = getenv("UT_CLIENTS");

	if (!c || strcmp(c, "smoke"))
		return false;
	SKIP(return true, "UT_CLIENTS=smoke: a heavy client test");
}

/* SKIP the current test and return true when uprobe events are missing. */
static inline bool ut_no_tracefs(struct __test_metadata *_metadata)
{
	if (ut_tracefs_ok())
		return false;
	SKIP(return true, "CONFIG_UPROBE_EVENTS not enabled (no "
	     UT_TRACEFS "/uprobe_events)");
}

/*
 * Start a tracefs test using event group @name (copied to @grp, which the
 * fixture teardown cleans up): remove leftovers of the group, clear the
 * trace, and pin to one CPU.  Returns true when the test was skipped.
 */
static inline bool ut_start(struct __test_metadata *_metadata, char *grp,
			    size_t size, const char *name)
{
	const char *only = getenv("UT_ONLY");

	/* UT_ONLY=TEXT runs only the tests whose names contain TEXT */
	if (only && !strstr(_metadata->name, only))
		SKIP(return true, "UT_ONLY=%s", only);
	if (ut_no_tracefs(_metadata))
		return true;
	snprintf(grp, size, "%s", name);
	ut_group_cleanup(grp);
	ASSERT_EQ(0, ut_trace_clear());
	ASSERT_EQ(0, ut_pin_cpu());
	return false;
}
#endif

/* Fault injection through debugfs and /proc/self/task/TID/fail-nth. */
#define UT_FI_DIR	"/sys/kernel/debug"
int ut_fi_setup(void);
void ut_fi_restore(void);
int ut_fail_nth_set(int fd, unsigned int n);
long ut_fail_nth_get(int fd);
struct rseq;
/* This thread's rseq area, which glibc registered; NULL if it has none. */
struct rseq *ut_rseq_area(void);
/*
 * Take this thread's rseq area back from the kernel (0 or -errno): a fault
 * still armed when fork() returns would otherwise fail the copy-on-write of
 * the area at the kernel's rseq update, which kills the parent (SIGSEGV).
 */
int ut_rseq_unregister(void);

#endif /* UPROBE_UTIL_H */
