// SPDX-License-Identifier: GPL-2.0
/*
 * tick [N] [USEC]: the SDT demo program. Loops N times (default 10),
 * sleeping USEC microseconds (default 100000) between iterations. Each
 * iteration fires the plain marker tick:loop1 and, only while its
 * semaphore tick_loop2_semaphore is non-zero (i.e. a probe with a
 * reference counter is attached), the marker tick:loop2. Both markers
 * carry the loop index as their only argument, in %ebx ("-4@%ebx") on x86
 * and in x19 ("-4@x19") on arm64 (UT_SDT_REG).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "uprobe_util.h"

unsigned short tick_loop2_semaphore __section(".probes") __used;

#define TICK_LOOP2_ENABLED() \
	__builtin_expect(UT_READ_ONCE(tick_loop2_semaphore), 0)

/* The marker argument is pinned to UT_SDT_REG so that it reads UT_SDT_REG_NOTE. */
static __always_inline void tick_loop2(int i)
{
	register int idx asm(UT_SDT_REG) = i;

	DTRACE_PROBE1(tick, loop2, idx);
}

/*
 * tick:loop1 is a plain marker: emit its note with a zero semaphore address
 * by overriding the two <sys/sdt.h> hooks that refer to the semaphore.
 */
#undef _SDT_SEMAPHORE
#define _SDT_SEMAPHORE(p, n)	_SDT_ASM_1(_SDT_ASM_ADDR 0)
#undef _SDT_NOTE_SEMAPHORE_USE
#define _SDT_NOTE_SEMAPHORE_USE(p, n)

static __always_inline void tick_loop1(int i)
{
	register int idx asm(UT_SDT_REG) = i;

	DTRACE_PROBE1(tick, loop1, idx);
}

int main(int argc, char **argv)
{
	long n = 10, usec = 100000;
	int i;

	if (argc > 1)
		n = strtol(argv[1], NULL, 0);
	if (argc > 2)
		usec = strtol(argv[2], NULL, 0);

	for (i = 0; i < n; i++) {
		tick_loop1(i);
		if (TICK_LOOP2_ENABLED())
			tick_loop2(i);
		printf("hi: %d\n", i);
		fflush(stdout);
		if (usec)
			usleep(usec);
	}
	printf("tick: done, loop2 semaphore=%u\n",
	       UT_READ_ONCE(tick_loop2_semaphore));
	return 0;
}
