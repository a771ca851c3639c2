// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_compat32_target: the 32-bit (i686, static) probe target of
 * uprobe_clients_compat32, driven by line commands on stdin and answering
 * one line per command on stdout (as uprobe_target does):
 *
 *   ping       -> "pong"
 *   insns N    -> c32_acc = 0, then c32_insns(0 .. N-1): "ok SUM"
 *   acc | last | badsp   -> c32_acc, c32_last, c32_bad_sp
 *   modes N    -> sum of c32_modes(0 .. N-1): "ok SUM"
 *   cdecl N    -> sum of c32_cdecl(i - 3, i + 1), i = 0 .. N-1: "ok SUM"
 *   stdcall N  -> sum of c32_stdcall(i, i + 1, i + 2) through c32_call3()
 *   pair N     -> sum of p.a - p.b, p = c32_pair(i - 2) through c32_call3()
 *   tri N      -> c32_tri(N) (cdecl, recursive): "ok TRI"
 *   trs N      -> c32_trs(N) (stdcall, recursive) through c32_call3()
 *   sem        -> its SDT semaphore c32_mark_semaphore
 *   mark N     -> fires c32:mark (argument i) for i = 0 .. N-1 while the
 *                 semaphore is set: "ok FIRED"
 *   exit       -> exits with status 0
 *
 * The functions are its own (not libc's), noipa so that the compiler calls
 * them as they are written: cdecl, stdcall (the callee pops its arguments,
 * ret $12) and a struct returned by value (the callee pops the pointer to
 * the caller's result, ret $4).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uprobe_compat32_target.h"

#ifndef noipa
#define noipa __attribute__((noipa))
#endif
#define c32_stdcall_abi __attribute__((stdcall))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

unsigned short c32_mark_semaphore __section(".probes") __used;

struct c32_pair {
	int a, b;
};

noipa int c32_cdecl(int a, int b)
{
	return a * b - 5;
}

noipa c32_stdcall_abi int c32_stdcall(int a, int b, int c)
{
	return a * 100 + b * 10 - c;
}

noipa struct c32_pair c32_pair(int x)
{
	struct c32_pair p = { x * 7, x - 9 };

	return p;
}

/* n + (n - 1) + ... + 1; the empty asm keeps the recursion a recursion */
noipa int c32_tri(int n)
{
	int r;

	if (n <= 0)
		return 0;
	r = c32_tri(n - 1);
	asm volatile("" : "+r"(r));
	return n + r;
}

/* the same with stdcall: each call pops its argument (ret $4) */
noipa c32_stdcall_abi int c32_trs(int n)
{
	int r;

	if (n <= 0)
		return 0;
	r = c32_trs(n - 1);
	asm volatile("" : "+r"(r));
	return n + r;
}

/* the marker's argument is pinned to %ebx: its note reads "-4@%ebx" */
noipa int c32_mark(int i)
{
	register int idx asm("ebx") = i;

	if (__atomic_load_n(&c32_mark_semaphore, __ATOMIC_RELAXED)) {
		DTRACE_PROBE1(c32, mark, idx);
		return 1;
	}
	return 0;
}

static void reply(const char *fmt, long long v)
{
	printf(fmt, v);
	putchar('\n');
	fflush(stdout);
}

static long long run(const char *cmd, int n)
{
	long long sum = 0;
	struct c32_pair p;
	int i;

	if (!strcmp(cmd, "tri"))
		return c32_tri(n);
	if (!strcmp(cmd, "trs"))
		return c32_call3(c32_trs, n, 0, 0, 4);
	if (!strcmp(cmd, "insns"))
		c32_acc = 0;
	for (i = 0; i < n; i++) {
		if (!strcmp(cmd, "insns")) {
			sum += c32_insns(i);
		} else if (!strcmp(cmd, "modes")) {
			sum += c32_modes(i);
		} else if (!strcmp(cmd, "cdecl")) {
			sum += c32_cdecl(i - 3, i + 1);
		} else if (!strcmp(cmd, "stdcall")) {
			sum += c32_call3(c32_stdcall, i, i + 1, i + 2, 12);
		} else if (!strcmp(cmd, "pair")) {
			memset(&p, 0, sizeof(p));
			c32_call3(c32_pair, (int)&p, i - 2, 0, 4);
			sum += p.a - p.b;
		} else if (!strcmp(cmd, "mark")) {
			sum += c32_mark(i);
		}
	}
	return sum;
}

int main(void)
{
	static const char * const runs[] = {
		"insns", "modes", "cdecl", "stdcall", "pair", "tri", "trs", "mark",
	};
	char line[128];
	unsigned int k;

	setvbuf(stdin, NULL, _IONBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		char cmd[32] = "";
		int n = 0;

		if (sscanf(line, "%31s %d", cmd, &n) < 1)
			continue;
		if (!strcmp(cmd, "exit"))
			break;
		if (!strcmp(cmd, "ping")) {
			printf("pong\n");
			fflush(stdout);
			continue;
		}
		if (!strcmp(cmd, "acc") || !strcmp(cmd, "last") ||
		    !strcmp(cmd, "badsp") || !strcmp(cmd, "sem")) {
			reply("%lld", !strcmp(cmd, "acc") ? c32_acc :
				      !strcmp(cmd, "last") ? c32_last :
				      !strcmp(cmd, "badsp") ? c32_bad_sp :
				      c32_mark_semaphore);
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(runs); k++)
			if (!strcmp(cmd, runs[k]))
				break;
		if (k < ARRAY_SIZE(runs))
			reply("ok %lld", run(cmd, n));
		else
			reply("err unknown command %lld", 0);
	}
	return 0;
}
