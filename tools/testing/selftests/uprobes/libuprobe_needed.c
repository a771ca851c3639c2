// SPDX-License-Identifier: GPL-2.0
/*
 * Helper shared library that uprobe_target is linked against (DT_NEEDED),
 * so ld.so maps it at start-up.  It carries a probe target function and an
 * SDT marker guarded by a semaphore.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "libuprobe.h"
#include "uprobe_util.h"

unsigned short utlib_mark_semaphore __section(".probes") __used;

noipa int utlib_func(int x)
{
	return x * 3 + 1;
}

/* Fires utlib:mark when enabled; returns 1 if it fired. */
noipa int utlib_mark(int x)
{
	if (UT_READ_ONCE(utlib_mark_semaphore)) {
		DTRACE_PROBE1(utlib, mark, x);
		return 1;
	}
	return 0;
}

noipa unsigned int utlib_sem(void)
{
	return UT_READ_ONCE(utlib_mark_semaphore);
}
