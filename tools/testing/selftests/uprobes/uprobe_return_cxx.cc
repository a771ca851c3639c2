// SPDX-License-Identifier: GPL-2.0
/*
 * C++ probe targets of uprobe_return: a C++ exception thrown in
 * ur_cxx_f3() unwinds through ur_cxx_f2() and ur_cxx_f1() (all three
 * return-probed by the test) and is caught in ur_cxx_call(); one thrown
 * in ur_cxx_g3() unwinds through ur_cxx_g2() and is caught in
 * return-probed ur_cxx_g1().
 */

#include "uprobe_return.h"

/* a function the compiler must call as is: no inlining, cloning, IPA */
#define noipa __attribute__((noipa))

static int ur_cxx_throw;
int (*ur_cxx_f3_hook)(void);

/*
 * x + 1, or throws x + 1000 (a long) while ur_cxx_throw is set (and, when
 * it is 2, ur_cxx_f3_hook() says so)
 */
extern "C" noipa long ur_cxx_f3(long x)
{
	int t = __atomic_load_n(&ur_cxx_throw, __ATOMIC_RELAXED);

	if (t == 2 && ur_cxx_f3_hook)
		t = ur_cxx_f3_hook();
	if (t)
		throw x + 1000;
	return x + 1;
}

/* ur_cxx_f3(x) + 10 */
extern "C" noipa long ur_cxx_f2(long x)
{
	return ur_cxx_f3(x) + 10;
}

/* ur_cxx_f2(x) + 100 */
extern "C" noipa long ur_cxx_f1(long x)
{
	return ur_cxx_f2(x) + 100;
}

/*
 * ur_cxx_f1(x), with ur_cxx_f3() throwing when @do_throw: then minus
 * the value caught (-(x + 1000)).
 */
extern "C" noipa long ur_cxx_call(long x, int do_throw)
{
	long r;

	__atomic_store_n(&ur_cxx_throw, do_throw, __ATOMIC_RELAXED);
	try {
		r = ur_cxx_f1(x);
	} catch (long v) {
		r = -v;
	}
	__atomic_store_n(&ur_cxx_throw, 0, __ATOMIC_RELAXED);
	return r;
}

/* x + 1, or throws x + 1000 (a long) when @do_throw */
static noipa long ur_cxx_g3(long x, int do_throw)
{
	if (do_throw)
		throw x + 1000;
	return x + 1;
}

/* ur_cxx_g3(x) + 10 */
static noipa long ur_cxx_g2(long x, int do_throw)
{
	return ur_cxx_g3(x, do_throw) + 10;
}

/* ur_cxx_g2(x) + 100, or minus the value caught: -(x + 1000) */
extern "C" noipa long ur_cxx_g1(long x, int do_throw)
{
	try {
		return ur_cxx_g2(x, do_throw) + 100;
	} catch (long v) {
		return -v;
	}
}
