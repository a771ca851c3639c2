// SPDX-License-Identifier: GPL-2.0
/*
 * ubench: guest instructions per uprobes operation, for make bench.
 *
 * Run in a guest booted with QEMU -icount shift=0,sleep=off (make bench
 * does that): CLOCK_MONOTONIC then advances one nanosecond per guest
 * instruction, so every figure is an instruction count, the same on every
 * run however busy the host is. Statically linked, so that the same binary
 * runs under every kernel. Probes its own code through uprobe_events.
 *
 * Output, one line per row: "@@BENCH key|label|value|span|base" (the
 * harness builds the table from the rows of each kernel). Per-hit rows are
 * the cost of a probed call minus that of the same call unprobed. span and
 * base number the timed loops of the two (-1: none), in the order their
 * ub_mark() calls came: make bench's QEMU plugin (exccount.c) counts the
 * traps, steps, system calls and page faults between the two marks of
 * each loop, and the harness turns them into counts per call.
 *
 * With no argument it prints every row. For work on one area, in a guest
 * of make vm ICOUNT=1 EXTRA=dir: "ubench pair" prints getppid, the nop hit
 * and the return-probe rows, "ubench reg N P" the registration rows of N
 * probes in P processes, and "ubench spin ..." (below) runs probed calls.
 *
 * "ubench scale" is the exception: wall-clock rows, for a guest with two
 * vCPUs and no -icount (see scale_rows()).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TR "/sys/kernel/tracing/"
/* ours: jump sites on or off (stock has no such parameter: traps) */
#define JUMP_SITES "/sys/module/uprobes/parameters/jump_sites"
#define NCALLS		20000	/* calls per measurement */
#define UB_MANY		10000	/* probe sites in ub_many */

typedef void (*fn_t)(void);

/* What each target's probed instruction is on this architecture. */
#if defined(__aarch64__)
#define UB_L_PUSH	"stp x29,x30,[sp,#-16]!"
#define UB_L_POP	"ldp x29,x30,[sp],#16"
#define UB_L_MOV	"mov x0,x1"
#define UB_L_ADD	"add x0,x0,#1"
#define UB_L_RIP_LOAD	"adrp x0,x (simulated)"
#define UB_L_RIP_STORE	"add x0,x0,x0,uxtx (out of line)"
#define UB_L_CALL	"bl"
#define UB_L_JMP	"b"
#define UB_L_JCC	"cbz (taken)"
#define UB_ARGS4	" a=%x0 b=%x1 c=%x2 d=%x3"
#define UB_STRARG	" s=+0(%x0):string"
#define UB_L_STRARG	"+0(%x0):string"
#define UB_LIBC		"/usr/lib/aarch64-linux-gnu/libc.so.6"
#define UB_JUMP_SITES	0
#define UB_NOP_BYTES	4	/* ub_many's nops, one probe site each */
#else
#define UB_L_PUSH	"push %rbp"
#define UB_L_POP	"pop %rbp"
#define UB_L_MOV	"mov %rdi,%rax"
#define UB_L_ADD	"add $1,%rax"
#define UB_L_RIP_LOAD	"mov x(%rip),%rax"
#define UB_L_RIP_STORE	"mov %rax,x(%rip)"
#define UB_L_CALL	"call rel32"
#define UB_L_JMP	"jmp"
#define UB_L_JCC	"jz (taken)"
#define UB_ARGS4	" a=%di b=%si c=%dx d=%cx"
#define UB_STRARG	" s=+0(%di):string"
#define UB_L_STRARG	"+0(%di):string"
#define UB_LIBC		"/usr/lib/x86_64-linux-gnu/libc.so.6"
#define UB_JUMP_SITES	1
#define UB_NOP_BYTES	1
#endif

#define TARGET(name) void ub_##name(void); extern char ub_##name##_at[]
TARGET(nop); TARGET(push); TARGET(pop); TARGET(mov); TARGET(add);
TARGET(rip_load); TARGET(rip_store); TARGET(call); TARGET(jmp); TARGET(jcc);
TARGET(ret); TARGET(retfn); TARGET(sdt); TARGET(many); TARGET(nop5);
TARGET(sdt5); TARGET(mov5);
void ub_leaf(void);
void ub_mark(void);
void ub_strarg(const char *s);
extern char ub_strarg_at[];
extern unsigned short ub_sem, ub_sem5;

static const char *self;

static void put(const char *file, const char *s, int append)
{
	int fd = open(file, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	size_t len = strlen(s);

	if (fd < 0 || write(fd, s, len) != (ssize_t)len) {
		fprintf(stderr, "ubench: writing '%.60s' to %s failed\n", s, file);
		exit(1);
	}
	close(fd);
}

/* File offset of @addr in this program's own file mappings. */
static unsigned long file_off(const void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi, off;
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &lo, &hi,
			   &off, path) == 4 && a >= lo && a < hi &&
		    !strcmp(path, self)) {
			fclose(f);
			return a - lo + off;
		}
	}
	fprintf(stderr, "ubench: %p is not in %s\n", addr, self);
	exit(1);
}

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The timed loops so far, the last one's number, and that of the loop the
 * next rows subtract (-1: none): see row().
 */
static int loops, last_loop = -1, base_loop = -1;

/* Instructions per call of @fn, after a warm-up. */
static double per_call(fn_t fn)
{
	unsigned long long t0, t;
	long i;

	for (i = 0; i < NCALLS / 10; i++)
		fn();
	ub_mark();
	t0 = now();
	for (i = 0; i < NCALLS; i++)
		fn();
	t = now() - t0;
	ub_mark();
	last_loop = loops++;
	return (double)t / NCALLS;
}

/* per_call() of the unprobed call the next rows subtract. */
static double base_call(fn_t fn)
{
	double v = per_call(fn);

	base_loop = last_loop;
	last_loop = -1;
	return v;
}

static void getppid_loop(void)
{
	syscall(SYS_getppid);
}

/*
 * A row whose value comes from the last per_call() (minus the one of the
 * last base_call(), if any) names both loops; any other row names none.
 */
static void row(const char *key, const char *label, double v)
{
	printf("@@BENCH %s|%s|%.0f|%d|%d\n", key, label, v, last_loop,
	       last_loop < 0 ? -1 : base_loop);
	fflush(stdout);
	last_loop = -1;
}

static void define(const char *kind, const char *ev, const void *at,
		   const char *extra)
{
	char def[512];

	snprintf(def, sizeof(def), "%s:ub/%s %s:%#lx%s\n", kind, ev, self,
		 file_off(at), extra ? extra : "");
	put(TR "uprobe_events", def, 1);
}

/* The hit rows of one target: tracing off, then recording. */
static void hit(const char *name, const char *label, fn_t fn, const void *at)
{
	char key[64], lab[128];
	double off = base_call(fn);

	define("p", name, at, NULL);
	put(TR "events/ub/enable", "1", 0);
	put(TR "tracing_on", "0", 0);
	snprintf(key, sizeof(key), "hit_%s", name);
	snprintf(lab, sizeof(lab), "hit: %s", label);
	row(key, lab, per_call(fn) - off);
	put(TR "tracing_on", "1", 0);
	snprintf(key, sizeof(key), "rec_%s", name);
	snprintf(lab, sizeof(lab), "hit, recording: %s", label);
	row(key, lab, per_call(fn) - off);
	put(TR "tracing_on", "0", 0);
	put(TR "events/ub/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
}

/* ub_strarg (a nop) with a string in its first argument register. */
static void strarg(void)
{
	ub_strarg(UB_LIBC);
}

/* A recorded hit at @at (called by @fn) of a probe with arguments @args. */
static void rec_args(const char *key, const char *label, fn_t fn,
		     const void *at, const char *args)
{
	double off = base_call(fn);

	define("p", "args", at, args);
	put(TR "events/ub/enable", "1", 0);
	put(TR "tracing_on", "1", 0);
	row(key, label, per_call(fn) - off);
	put(TR "tracing_on", "0", 0);
	put(TR "events/ub/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
}

/*
 * A hit on ub_nop counted by a perf event of the uprobe PMU on this
 * process (what perf stat -e uprobe... does): no trace file, no BPF. The
 * count must match the calls.
 */
/* A uprobe-PMU event on this process at @at (attributes cached). */
static int uprobe_pmu_open(const void *at)
{
	static struct perf_event_attr attr = { .size = sizeof(attr) };
	static const void *attr_at;
	FILE *f;
	int fd;

	if (attr_at != at) {
		f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
		if (!f || fscanf(f, "%u", &attr.type) != 1) {
			fprintf(stderr, "ubench: no uprobe PMU\n");
			exit(1);
		}
		fclose(f);
		attr.config1 = (unsigned long)self;
		attr.config2 = file_off(at);
		attr.exclude_kernel = 1;
		attr_at = at;
	}
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		perror("ubench: perf_event_open(uprobe)");
		exit(1);
	}
	return fd;
}

static void perf_count_row(void)
{
	double off = base_call(ub_nop), on;
	long long count = 0;
	int fd = uprobe_pmu_open(ub_nop_at);

	on = per_call(ub_nop) - off;
	if (read(fd, &count, sizeof(count)) != sizeof(count) ||
	    count != NCALLS + NCALLS / 10) {
		fprintf(stderr, "ubench: perf counted %lld hits\n", count);
		exit(1);
	}
	close(fd);
	row("perf_count_nop", "hit, counted by perf: nop", on);
}

/*
 * Target "preg" of spin, and the perf registration row: what a BPF tool
 * does per probe, a uprobe-PMU event on this process opened and closed.
 */
static void perf_reregister(void)
{
	close(uprobe_pmu_open(ub_nop_at));
}

/*
 * Another event stays open meanwhile, as a tool attaching many probes has
 * them: perf allocates its per-CPU trace buffers (4 x 8 KiB per CPU) for
 * the first trace event a system opens and frees them with the last.
 */
static void perf_reg_row(void)
{
	unsigned long long t0;
	int i, other;

	other = uprobe_pmu_open(ub_leaf);
	perf_reregister();	/* warm-up */
	t0 = now();
	for (i = 0; i < 100; i++)
		perf_reregister();
	row("perf_reg_1", "perf_event_open + close of a uprobe-PMU event, 1 process",
	    (double)(now() - t0) / 100);
	close(other);
}

static void return_rows(void)
{
	double off = base_call(ub_retfn);

	define("p", "retfn", ub_retfn_at, NULL);
	define("r", "retfn_r", ub_retfn_at, NULL);
	put(TR "events/ub/enable", "1", 0);
	row("ret_pair", "probe + return probe: nop; ret", per_call(ub_retfn) - off);
	put(TR "tracing_on", "1", 0);
	row("rec_ret_pair", "probe + return probe, recording",
	    per_call(ub_retfn) - off);
	put(TR "tracing_on", "0", 0);
	put(TR "events/ub/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
}

/*
 * Jump sites on or off, where the kernel has them; returns the setting
 * before (-1: no such setting).
 */
static int jump_sites(int on)
{
	int fd = open(JUMP_SITES, O_RDWR), was = -1;
	char c;

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) == 1)
		was = c == 'Y' || c == '1';
	if (pwrite(fd, on ? "1" : "0", 1, 0) != 1)
		fprintf(stderr, "ubench: cannot write %s\n", JUMP_SITES);
	close(fd);
	return was;
}

/*
 * A 5-byte nop and a 5-byte mov, with breakpoints and as jump sites; an
 * SDT marker as a jump site too.
 */
static void jump_rows(void)
{
	char ref[64];
	double leaf;

	hit("nop5", "nop5", ub_nop5, ub_nop5_at);
	hit("mov5", "mov $imm32,%ecx", ub_mov5, ub_mov5_at);
	jump_sites(1);
	hit("nop5_jump", "nop5, jump site", ub_nop5, ub_nop5_at);
	hit("mov5_jump", "mov $imm32,%ecx, jump site", ub_mov5, ub_mov5_at);
	leaf = base_call(ub_leaf);
	snprintf(ref, sizeof(ref), "(%#lx)", file_off(&ub_sem5));
	define("p", "sdt5", ub_sdt5_at, ref);
	put(TR "events/ub/enable", "1", 0);
	row("sdt5_jump", "SDT marker (nop5), traced, jump site",
	    per_call(ub_sdt5) - leaf);
	put(TR "events/ub/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
	jump_sites(0);
}

static void sdt_rows(void)
{
	char ref[64];
	double leaf = base_call(ub_leaf);

	row("sdt_off", "SDT marker, not traced: the guard",
	    per_call(ub_sdt) - leaf);
	snprintf(ref, sizeof(ref), "(%#lx)", file_off(&ub_sem));
	/* the reference counter goes after the offset: PATH:OFF(REF) */
	define("p", "sdt", ub_sdt_at, ref);
	put(TR "events/ub/enable", "1", 0);
	if (!ub_sem)
		fprintf(stderr, "ubench: the SDT semaphore stayed 0\n");
	row("sdt_on", "SDT marker, traced", per_call(ub_sdt) - leaf);
	put(TR "events/ub/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
}

/* Define @n probes on ub_many's nops as ub_m/m<i>, a few lines a write. */
static void define_many(int n)
{
	char buf[4096];
	unsigned long base = file_off(ub_many_at);
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++) {
		len += snprintf(buf + len, sizeof(buf) - len,
				"p:ub_m/m%d %s:%#lx\n", i, self,
				base + i * UB_NOP_BYTES);
		if (len > sizeof(buf) - 512 || i == n - 1) {
			put(TR "uprobe_events", buf, 1);
			len = 0;
		}
	}
}

/* Register and unregister @n probes with the binary mapped by @procs. */
static void reg_rows(int n, int procs)
{
	pid_t kids[64];
	int p[2], i, status;
	unsigned long long t0;
	char key[64], lab[128];
	double on, off;

	if (pipe(p))
		exit(1);
	for (i = 0; i < procs - 1; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			char c;

			close(p[1]);
			_exit(read(p[0], &c, 1) < 0);
		}
	}
	close(p[0]);
	define_many(n);
	t0 = now();
	put(TR "events/ub_m/enable", "1", 0);
	on = (double)(now() - t0) / n;
	t0 = now();
	put(TR "events/ub_m/enable", "0", 0);
	off = (double)(now() - t0) / n;
	put(TR "uprobe_events", "", 0);
	close(p[1]);
	for (i = 0; i < procs - 1; i++)
		waitpid(kids[i], &status, 0);
	snprintf(key, sizeof(key), "reg_%d_%d", n, procs);
	snprintf(lab, sizeof(lab), "register %d probe%s, %d process%s (per probe)",
		 n, n > 1 ? "s" : "", procs, procs > 1 ? "es" : "");
	row(key, lab, on);
	snprintf(key, sizeof(key), "unreg_%d_%d", n, procs);
	snprintf(lab, sizeof(lab), "unregister %d probe%s, %d process%s (per probe)",
		 n, n > 1 ? "s" : "", procs, procs > 1 ? "es" : "");
	row(key, lab, off);
}

/* One thread of scale_rows(): @calls calls of @fn on CPU @cpu. */
struct scaler {
	pthread_t thread;
	int cpu;
	long calls;
	fn_t fn;
	pthread_barrier_t *start;
};

static void *scaler_run(void *arg)
{
	struct scaler *sc = arg;
	cpu_set_t set;
	long i;

	CPU_ZERO(&set);
	CPU_SET(sc->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("ubench: sched_setaffinity");
		exit(1);
	}
	pthread_barrier_wait(sc->start);
	for (i = 0; i < sc->calls; i++)
		sc->fn();
	return NULL;
}

/* Wall-clock nanoseconds for @nthreads threads (CPUs 0..) to make @calls each. */
static unsigned long long scale_run(fn_t fn, int nthreads, long calls)
{
	struct scaler sc[2];
	pthread_barrier_t start;
	unsigned long long t0;
	int i;

	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		sc[i] = (struct scaler){ .cpu = i, .calls = calls, .fn = fn,
					 .start = &start };
		if (pthread_create(&sc[i].thread, NULL, scaler_run, &sc[i])) {
			fprintf(stderr, "ubench: pthread_create failed\n");
			exit(1);
		}
	}
	pthread_barrier_wait(&start);
	t0 = now();
	for (i = 0; i < nthreads; i++)
		pthread_join(sc[i].thread, NULL);
	pthread_barrier_destroy(&start);
	return now() - t0;
}

/* A word both threads of shared_add() write: the control that shares. */
static long shared_word;

static void shared_add(void)
{
	__atomic_fetch_add(&shared_word, 1, __ATOMIC_RELAXED);
}

/*
 * One scaling row: the wall time of two threads of this process, on two
 * vCPUs, each making as many calls of @fn as one thread makes in about
 * SCALE_NS alone, as a percentage of that thread's time: 100 when nothing
 * is shared, 200 when the two run one after the other. Best of
 * SCALE_TRIES, each ratio from runs next to each other, so that host noise
 * counts as little as it can.
 */
#define SCALE_NS	300000000ull
#define SCALE_TRIES	3
static void scale_row(const char *key, const char *label, fn_t fn)
{
	long calls = 1000;
	double best = 0, r;
	int k;

	while (scale_run(fn, 1, calls) < SCALE_NS / 4)	/* also the warm-up */
		calls *= 2;
	calls *= 4;
	for (k = 0; k < SCALE_TRIES; k++) {
		unsigned long long one = scale_run(fn, 1, calls);

		r = 100.0 * scale_run(fn, 2, calls) / one;
		if (!k || r < best)
			best = r;
	}
	row(key, label, best);
}

/*
 * Wall-clock rows (no -icount, two vCPUs): the same probe hit by threads on
 * two CPUs at once, between two controls: an unprobed call (nothing
 * shared: what two vCPUs of this host give) and an atomic add to one word
 * (a cache line both write: what sharing one costs here).
 */
static int scale_rows(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "ubench: scale needs two CPUs\n");
		return 1;
	}
	put(TR "events/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
	put(TR "tracing_on", "0", 0);
	scale_row("scale_loop", "2 vCPUs, wall time vs 1 (%): unprobed call",
		  ub_leaf);
	scale_row("scale_shared",
		  "2 vCPUs, wall time vs 1 (%): atomic add to one word", shared_add);
	define("p", "nop", ub_nop_at, NULL);
	put(TR "events/ub/enable", "1", 0);
	scale_row("scale_nop", "2 vCPUs, wall time vs 1 (%): hit: nop", ub_nop);
	put(TR "events/ub/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
	define("p", "retfn", ub_retfn_at, NULL);
	define("r", "retfn_r", ub_retfn_at, NULL);
	put(TR "events/ub/enable", "1", 0);
	scale_row("scale_ret_pair",
		  "2 vCPUs, wall time vs 1 (%): probe + return probe", ub_retfn);
	put(TR "events/ub/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
	printf("@@BENCH-END\n");
	return 0;
}

/* Target "reg" of spin: the probe unregistered and registered again. */
static void reregister(void)
{
	put(TR "events/ub/enable", "0", 0);
	put(TR "events/ub/enable", "1", 0);
}

/* Target "reg_many" of spin: UB_MANY probes unregistered and registered again. */
static void reregister_many(void)
{
	put(TR "events/ub_m/enable", "0", 0);
	put(TR "events/ub_m/enable", "1", 0);
}

static const struct {
	const char *name;
	fn_t fn;
	const char *at;
} targets[] = {
	{ "nop", ub_nop, ub_nop_at }, { "push", ub_push, ub_push_at },
	{ "pop", ub_pop, ub_pop_at }, { "mov", ub_mov, ub_mov_at },
	{ "add", ub_add, ub_add_at },
	{ "rip_load", ub_rip_load, ub_rip_load_at },
	{ "rip_store", ub_rip_store, ub_rip_store_at },
	{ "call", ub_call, ub_call_at }, { "jmp", ub_jmp, ub_jmp_at },
	{ "jcc", ub_jcc, ub_jcc_at }, { "ret", ub_ret, ub_ret_at },
	{ "retfn", ub_retfn, ub_retfn_at }, { "strarg", strarg, ub_strarg_at },
	{ "reg", reregister, ub_nop_at }, { "preg", perf_reregister, ub_nop_at },
	{ "reg_many", reregister_many, ub_nop_at },
	{ "nop5", ub_nop5, ub_nop5_at }, { "nop5j", ub_nop5, ub_nop5_at },
	{ "mov5", ub_mov5, ub_mov5_at }, { "mov5j", ub_mov5, ub_mov5_at },
};

/*
 * "ubench spin TARGET N [r] [NAME=FETCH...]": N calls of a probed target
 * (with a return probe too if r, the probe fetching the arguments given),
 * for profiling the hit path; TARGET reg unregisters and registers the
 * probe (on ub_nop, not called) N times instead, reg_many does so with
 * UB_MANY probes at once (the events of a group), and preg opens and
 * closes a uprobe-PMU perf event there, for profiling those.
 */
static int spin(char **argv)
{
	char args[256] = "";
	bool ret = false;
	unsigned int i;
	long n = atol(argv[3]), k;
	size_t len = 0;
	int other;

	for (k = 4; argv[k]; k++) {
		if (!strcmp(argv[k], "r"))
			ret = true;
		else
			len += snprintf(args + len, sizeof(args) - len, " %s",
					argv[k]);
		if (len >= sizeof(args))
			return 1;
	}

	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		if (!strcmp(argv[2], targets[i].name))
			break;
	if (i == sizeof(targets) / sizeof(targets[0]))
		return 1;
	put(TR "uprobe_events", "", 0);
	define("p", targets[i].name, targets[i].at, args);
	if (ret)
		define("r", "ret", targets[i].at, NULL);
	/* nop5j, mov5j: nop5 and mov5 as jump sites */
	jump_sites(!strcmp(targets[i].name, "nop5j") ||
		   !strcmp(targets[i].name, "mov5j"));
	put(TR "events/ub/enable", "1", 0);
	if (targets[i].fn == reregister_many) {
		define_many(UB_MANY);
		put(TR "events/ub_m/enable", "1", 0);
	}
	/* preg: another event open, as in perf_reg_row() */
	other = targets[i].fn == perf_reregister ? uprobe_pmu_open(ub_leaf) : -1;
	for (k = 0; k < n; k++)
		targets[i].fn();
	if (other >= 0)
		close(other);
	put(TR "events/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
	return 0;
}

int main(int argc, char **argv)
{
	static const int nprobes[] = { 1, 100, UB_MANY };
	unsigned int i;

	self = realpath("/proc/self/exe", NULL);
	if (!self)
		return 1;
	if (argc >= 4 && !strcmp(argv[1], "spin"))
		return spin(argv);
	/* Breakpoints, but in the rows that say "jump site" (the guest ends) */
	jump_sites(0);
	if (argc >= 2 && !strcmp(argv[1], "scale"))
		return scale_rows();
	put(TR "events/enable", "0", 0);
	put(TR "uprobe_events", "", 0);
	put(TR "tracing_on", "0", 0);
	printf("@@BENCH-CALLS %d\n", NCALLS);	/* per timed loop */
	if (argc >= 2 && !strcmp(argv[1], "pair")) {
		row("getppid", "getppid() (a kernel round trip)",
		    per_call(getppid_loop));
		hit("nop", "nop", ub_nop, ub_nop_at);
		if (UB_JUMP_SITES)
			jump_rows();
		return_rows();
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "reg")) {
		int n = atoi(argv[2]), procs = atoi(argv[3]);

		/* define_many() has UB_MANY sites, reg_rows() room for 64 */
		if (n < 1 || n > UB_MANY || procs < 1 || procs > 64)
			return 1;
		reg_rows(n, procs);
		return 0;
	}
	row("loop", "loop: call of an unprobed function", per_call(ub_leaf));
	row("getppid", "getppid() (a kernel round trip)", per_call(getppid_loop));
	hit("nop", "nop", ub_nop, ub_nop_at);
	hit("push", UB_L_PUSH, ub_push, ub_push_at);
	hit("pop", UB_L_POP, ub_pop, ub_pop_at);
	hit("mov", UB_L_MOV, ub_mov, ub_mov_at);
	hit("add", UB_L_ADD, ub_add, ub_add_at);
	hit("rip_load", UB_L_RIP_LOAD, ub_rip_load, ub_rip_load_at);
	hit("rip_store", UB_L_RIP_STORE, ub_rip_store, ub_rip_store_at);
	hit("call", UB_L_CALL, ub_call, ub_call_at);
	hit("jmp", UB_L_JMP, ub_jmp, ub_jmp_at);
	hit("jcc", UB_L_JCC, ub_jcc, ub_jcc_at);
	hit("ret", "ret", ub_ret, ub_ret_at);
	if (UB_JUMP_SITES)
		jump_rows();
	rec_args("rec_args4", "hit, recording: nop, 4 register arguments",
		 ub_nop, ub_nop_at, UB_ARGS4);
	rec_args("rec_string", "hit, recording: nop, " UB_L_STRARG,
		 strarg, ub_strarg_at, UB_STRARG);
	perf_count_row();
	return_rows();
	sdt_rows();
	for (i = 0; i < sizeof(nprobes) / sizeof(nprobes[0]); i++) {
		reg_rows(nprobes[i], 1);
		reg_rows(nprobes[i], 50);
	}
	perf_reg_row();
	printf("@@BENCH-END\n");
	return 0;
}
