// SPDX-License-Identifier: GPL-2.0
/*
 * Hijack return addresses the way a return probe does, with stubs that
 * carry unwind information (stubs.S), then throw through the hijacked
 * frames: the exception must be caught and normal returns must work.
 */
#include <stdio.h>
#include <stdint.h>

extern "C" char ut_stubs[];
extern "C" uintptr_t ut_table[];
static int next_slot;

/* Replace the return address at @slot by stub i, keeping it in table[i]. */
static void hijack(uintptr_t *slot)
{
	int i = next_slot++ % 16;

	ut_table[i] = *slot;
#ifdef VDSO_LAYOUT
	*slot = (uintptr_t)(ut_stubs + 16 * i);
#else
	*slot = (uintptr_t)(ut_stubs + 8 * i);
#endif
}

#define HIJACK() hijack((uintptr_t *)__builtin_frame_address(0) + 1)

extern "C" void bt(void);
static int do_throw;

__attribute__((noinline)) long f3(long x)
{
	HIJACK();
	if (do_throw == 2)
		bt();
	if (do_throw)
		throw x + 1000;
	return x + 1;
}

__attribute__((noinline)) long f2(long x)
{
	HIJACK();
	return f3(x) + 10;
}

__attribute__((noinline)) long f1(long x)
{
	HIJACK();
	return f2(x) + 100;
}

int main(void)
{
	long r, bad = 0;

	setvbuf(stdout, NULL, _IONBF, 0);

	do_throw = 2;
	try { f1(99); } catch (long v) { }
	for (int i = 0; i < 5; i++) {
		do_throw = i & 1;
		try {
			r = f1(i);
		} catch (long v) {
			r = -v;
		}
		long want = do_throw ? -(i + 1000) : i + 111;
		printf("call %d: %ld (want %ld)\n", i, r, want);
		bad += r != want;
	}
	printf("%s\n", bad ? "FAIL" : "ok");
	return !!bad;
}
