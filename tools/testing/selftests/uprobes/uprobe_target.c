// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_target: a probe target process driven by line commands on stdin,
 * answering one line per command on stdout.  It is linked against
 * libuprobe_needed.so and can dlopen() libuprobe_dl.so.
 *
 *   ping                 -> "pong"
 *   call N               -> calls uttgt_func(0..N-1), "ok SUM"
 *   sem                  -> value of its own SDT semaphore
 *   mark N               -> fires uttgt:mark N times (if enabled), "ok FIRED"
 *   libcall N | libsem | libmark N    same for libuprobe_needed.so
 *   dlopen | dlclose | dlcall N | dlsem | dlmark N   same for libuprobe_dl.so
 *   fork N               -> child calls uttgt_func N times and exits,
 *                           "ok CHILD_PID EXIT_STATUS"
 *   threads T N          -> T threads each call uttgt_func N times,
 *                           "ok TID1 TID2 ..."
 *   exec PATH [ARGS...]  -> execv(PATH, ARGS); no reply
 *   exit                 -> exits with status 0
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libuprobe.h"
#include "uprobe_util.h"

unsigned short uttgt_mark_semaphore __section(".probes") __used;

noipa int uttgt_func(int x)
{
	return x * 2 + 1;
}

noipa int uttgt_mark(int x)
{
	if (UT_READ_ONCE(uttgt_mark_semaphore)) {
		DTRACE_PROBE1(uttgt, mark, x);
		return 1;
	}
	return 0;
}

static long call_n(int (*fn)(int), long n)
{
	long i, sum = 0;

	for (i = 0; i < n; i++)
		sum += fn(i);
	return sum;
}

struct thr {
	pthread_t th;
	long n;
	pid_t tid;
	pthread_barrier_t *bar;
};

static void *thread_fn(void *arg)
{
	struct thr *t = arg;

	t->tid = syscall(SYS_gettid);
	pthread_barrier_wait(t->bar);
	call_n(uttgt_func, t->n);
	return NULL;
}

static void reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void do_threads(int nthr, long n)
{
	struct thr t[16];
	pthread_barrier_t bar;
	char buf[512];
	int i, len;

	if (nthr < 1 || nthr > 16) {
		reply("err threads");
		return;
	}
	pthread_barrier_init(&bar, NULL, nthr);
	for (i = 0; i < nthr; i++) {
		t[i].n = n;
		t[i].bar = &bar;
		pthread_create(&t[i].th, NULL, thread_fn, &t[i]);
	}
	len = snprintf(buf, sizeof(buf), "ok");
	for (i = 0; i < nthr; i++) {
		pthread_join(t[i].th, NULL);
		len += snprintf(buf + len, sizeof(buf) - len, " %d", t[i].tid);
	}
	pthread_barrier_destroy(&bar);
	reply("%s", buf);
}

static void do_exec(char *args)
{
	char *argv[16], *save = NULL, *tok;
	int argc = 0;

	for (tok = strtok_r(args, " ", &save); tok && argc < 15;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (!argc) {
		reply("err exec");
		return;
	}
	fflush(stdout);
	execv(argv[0], argv);
	reply("err exec failed");
}

int main(int argc, char **argv)
{
	int (*dl_func)(int) = NULL, (*dl_mark)(int) = NULL;
	unsigned int (*dl_sem)(void) = NULL;
	char line[512];
	void *dl = NULL;

	(void)argc;
	(void)argv;
	/* never read ahead: the rest of stdin may belong to an exec'ed image */
	setvbuf(stdin, NULL, _IONBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		char cmd[32] = "";
		long a = 0, b = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%31s %ld %ld", cmd, &a, &b) < 1)
			continue;
		if (!strcmp(cmd, "exit"))
			break;

		if (!strcmp(cmd, "ping")) {
			reply("pong");
		} else if (!strcmp(cmd, "call")) {
			reply("ok %ld", call_n(uttgt_func, a));
		} else if (!strcmp(cmd, "sem")) {
			reply("%u", UT_READ_ONCE(uttgt_mark_semaphore));
		} else if (!strcmp(cmd, "mark")) {
			reply("ok %ld", call_n(uttgt_mark, a));
		} else if (!strcmp(cmd, "libcall")) {
			reply("ok %ld", call_n(utlib_func, a));
		} else if (!strcmp(cmd, "libsem")) {
			reply("%u", utlib_sem());
		} else if (!strcmp(cmd, "libmark")) {
			reply("ok %ld", call_n(utlib_mark, a));
		} else if (!strcmp(cmd, "dlopen")) {
			dl = dlopen(ut_helper("libuprobe_dl.so"), RTLD_NOW);
			if (dl) {
				dl_func = (int (*)(int))dlsym(dl, "utdl_func");
				dl_mark = (int (*)(int))dlsym(dl, "utdl_mark");
				dl_sem = (unsigned int (*)(void))dlsym(dl, "utdl_sem");
			}
			if (dl && dl_func && dl_mark && dl_sem)
				reply("ok");
			else
				reply("err %s", dlerror());
		} else if (!strcmp(cmd, "dlclose")) {
			if (!dl || dlclose(dl))
				reply("err dlclose");
			else
				reply("ok");
			dl = NULL;
			dl_func = NULL;
			dl_mark = NULL;
			dl_sem = NULL;
		} else if (!strcmp(cmd, "dlcall") && dl_func) {
			reply("ok %ld", call_n(dl_func, a));
		} else if (!strcmp(cmd, "dlmark") && dl_mark) {
			reply("ok %ld", call_n(dl_mark, a));
		} else if (!strcmp(cmd, "dlsem") && dl_sem) {
			reply("%u", dl_sem());
		} else if (!strcmp(cmd, "fork")) {
			pid_t pid;
			int status = -1;

			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				call_n(uttgt_func, a);
				_exit(0);
			}
			if (pid > 0)
				waitpid(pid, &status, 0);
			reply("ok %d %d", pid, status);
		} else if (!strcmp(cmd, "threads")) {
			do_threads(a, b);
		} else if (!strcmp(cmd, "exec")) {
			do_exec(line + 5);
		} else {
			reply("err unknown command '%s'", line);
		}
	}
	return 0;
}
