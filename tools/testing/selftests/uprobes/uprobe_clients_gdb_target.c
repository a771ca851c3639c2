// SPDX-License-Identifier: GPL-2.0
/*
 * The program uprobe_clients_gdb runs under gdb: "uprobe_clients_gdb_target
 * body N" calls ug_body(0), ..., ug_body(N - 1), "caller N" ug_caller()
 * the same way, each from target_call(); it prints its pid before the
 * calls and the sum of their results after them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uprobe_clients_gdb.h"
#include "uprobe_util.h"

/* One call, from a frame of its own (no tail call) for gdb's backtrace. */
static noipa long target_call(const char *kind, long x)
{
	long r = strcmp(kind, "caller") ? ug_body(x) : ug_caller(x);

	asm volatile("" : "+r" (r));
	return r;
}

int main(int argc, char **argv)
{
	long i, n, sum = 0;

	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	/* ug_data's page mapped: an emulated load from it cannot fault */
	if (UT_READ_ONCE(ug_data) != UG_DATA)
		return 3;
	/* on a line of its own, whatever gdb printed before */
	printf("\n@@pid %d\n", getpid());
	fflush(stdout);
	for (i = 0; i < n; i++)
		sum += target_call(argv[1], i);
	printf("\n@@result %ld\n", sum);
	return 0;
}
