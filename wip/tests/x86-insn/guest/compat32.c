// SPDX-License-Identifier: GPL-2.0+
/*
 * A 64-bit static program that runs a little 32-bit code (compat32_asm.S):
 * a probe hit there is a compat-mode hit, even without
 * CONFIG_IA32_EMULATION. compat32.sh puts probes on the labels of
 * compat32_asm.S; see there for what each one checks.
 *
 *   compat32 N [low]	run c32_func N times; exit 0 if every call gave
 *			the result it should have. With "low", first fill
 *			the address space above 4 GiB with PROT_NONE
 *			mappings, so that the XOL area the kernel maps on the
 *			first hit lands below 4 GiB, where 32-bit code can
 *			reach it (as in a real compat process).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

unsigned long call32(unsigned long eax, void *stack_top);

#define TASK_TOP	0x7ffffffff000UL	/* TASK_SIZE_MAX, 4-level paging */
#define LOW_TOP		0x100000000UL
#define GUARD		(4UL << 20)		/* left free below the stack */

/* Map PROT_NONE over [start, end) & [LOW_TOP, TASK_TOP). */
static int fill(unsigned long start, unsigned long end)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE;

	if (start < LOW_TOP)
		start = LOW_TOP;
	if (end > TASK_TOP)
		end = TASK_TOP;
	if (start >= end)
		return 0;
	if (mmap((void *)start, end - start, PROT_NONE, flags, -1, 0) != (void *)start) {
		perror("mmap PROT_NONE");
		return -1;
	}
	return 0;
}

/* Leave no room above 4 GiB for a new mapping (but below the stack). */
static int fill_high(void)
{
	unsigned long prev = 0, start, end, vmas[256][2];
	char line[512];
	int i, n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (n < 256 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (strstr(line, "[stack]"))
			start = start > GUARD ? start - GUARD : 0;
		vmas[n][0] = start;
		vmas[n++][1] = end;
	}
	fclose(f);
	for (i = 0; i < n; i++) {
		if (fill(prev, vmas[i][0]))
			return -1;
		prev = vmas[i][1];
	}
	return fill(prev, TASK_TOP);
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 1;
	unsigned long sum = 0, want = 0, r;
	char *stack;

	if (argc > 2 && !strcmp(argv[2], "low") && fill_high())
		return 2;
	stack = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (stack == MAP_FAILED || (uintptr_t)stack + 65536 > 0xffffffffUL) {
		perror("mmap");
		return 2;
	}
	for (i = 0; i < n; i++) {
		r = call32(i * 10, stack + 65536 - 64);
		sum += (uint32_t)r;
		want += i * 10 + 4;
	}
	printf("sum %lu want %lu\n", sum, want);
	return sum == want ? 0 : 1;
}
