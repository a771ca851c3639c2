/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions of the helper libraries: libuprobe_needed.so (utlib_*, linked
 * into uprobe_target) and libuprobe_dl.so (utdl_*, loaded with dlopen()).
 * utXX_func(x) computes a value, utXX_mark(x) fires the SDT marker
 * utXX:mark when its semaphore is set (returning 1 if it fired) and
 * utXX_sem() returns that semaphore.
 */
#ifndef LIBUPROBE_H
#define LIBUPROBE_H

int utlib_func(int x);
int utlib_mark(int x);
unsigned int utlib_sem(void);

int utdl_func(int x);
int utdl_mark(int x);
unsigned int utdl_sem(void);

#endif /* LIBUPROBE_H */
