// SPDX-License-Identifier: GPL-2.0
/*
 * Helper shared library loaded with dlopen() by uprobe_target and the
 * tests: a probe target function and an SDT marker with a semaphore.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "libuprobe.h"
#include "uprobe_util.h"

unsigned short utdl_mark_semaphore __section(".probes") __used;

noipa int utdl_func(int x)
{
	return x * 5 + 2;
}

/* Fires utdl:mark when enabled; returns 1 if it fired. */
noipa int utdl_mark(int x)
{
	if (UT_READ_ONCE(utdl_mark_semaphore)) {
		DTRACE_PROBE1(utdl, mark, x);
		return 1;
	}
	return 0;
}

noipa unsigned int utdl_sem(void)
{
	return UT_READ_ONCE(utdl_mark_semaphore);
}
