// SPDX-License-Identifier: GPL-2.0
/*
 * Guest instructions per probe hit, for a guest booted with ICOUNT=1 (QEMU
 * -icount shift=0: CLOCK_MONOTONIC advances 1 ns per guest instruction).
 *
 * Probes this program's own functions through uprobe_events (tracing_on=0,
 * so no ring-buffer write is counted), calls each N times and prints the
 * cost per call with and without the probe. Until make bench exists:
 *   gcc -static -O2 -o hitcost *.c *.S
 *   make vm IMPL=... ICOUNT=1 EXTRA=wip/tests/hitcost CMD='./run.sh'
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hitcost.h"

#define TR "/sys/kernel/tracing/"

static const char *self;

static void put(const char *file, const char *s, int append)
{
	int fd = open(file, O_WRONLY | (append ? O_APPEND : O_TRUNC));

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
		fprintf(stderr, "write %s to %s failed\n", s, file);
		exit(1);
	}
	close(fd);
}

/* File offset of @addr in this program's own mapping. */
static unsigned long file_off(void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi, off;
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &lo, &hi,
			   &off, path) == 4 && a >= lo && a < hi) {
			fclose(f);
			return a - lo + off;
		}
	}
	fclose(f);
	exit(1);
}

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static double per_call(void (*fn)(void), long n)
{
	unsigned long long t0 = now();

	for (long i = 0; i < n; i++)
		fn();
	return (double)(now() - t0) / n;
}

static void measure(const char *name, const char *how, void (*fn)(void),
		    int ret, long n)
{
	char def[512], en[256];
	double off, on;

	per_call(fn, n / 10);
	off = per_call(fn, n);
	snprintf(def, sizeof(def), "p:hc/%s %s:%#lx\n", name, self,
		 file_off((void *)fn));
	put(TR "uprobe_events", def, 1);
	if (ret) {
		snprintf(def, sizeof(def), "r:hc/%s_r %s:%#lx\n", name, self,
			 file_off((void *)fn));
		put(TR "uprobe_events", def, 1);
	}
	put(TR "events/hc/enable", "1", 0);
	per_call(fn, n / 10);
	on = per_call(fn, n);
	put(TR "events/hc/enable", "0", 0);
	snprintf(en, sizeof(en), "-:hc/%s\n", name);
	put(TR "uprobe_events", en, 1);
	if (ret) {
		snprintf(en, sizeof(en), "-:hc/%s_r\n", name);
		put(TR "uprobe_events", en, 1);
	}
	printf("%-10s %-14s %6.0f probed %6.0f unprobed %6.0f per hit\n",
	       name, how, on, off, on - off);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;

	self = realpath("/proc/self/exe", NULL);
	put(TR "tracing_on", "0", 0);
	printf("guest instructions per call (ICOUNT=1), %ld calls each\n", n);
	measure("nop", "emulated", hc_nop, 0, n);
	measure("push_rbp", "emulated", hc_push, 0, n);
	measure("add_rax", "stepped", hc_add, 0, n);
	measure("rip_load", "stepped", hc_rip, 0, n);
	measure("nop_ret", "entry+return", hc_retfn, 1, n);
	return 0;
}
