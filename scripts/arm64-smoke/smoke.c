// SPDX-License-Identifier: GPL-2.0
/* arm64 smoke test target: a probed leaf and a probed non-leaf function. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long leaf(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline)) long outer(long x)
{
	long r = leaf(x) + 2;

	__asm__ volatile("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100, i, s = 0;

	for (i = 0; i < n; i++)
		s += outer(i);
	printf("sum %ld\n", s);
	return 0;
}
