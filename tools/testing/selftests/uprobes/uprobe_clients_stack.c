// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_clients_stack [N [wait]]: the call chain main -> uc_top ->
 * uc_mid -> uc_leaf, N times (default 10), with frame pointers and unwind
 * tables, then prints the sum of the results; with "wait", it then reads
 * stdin to its end before it exits (so that a tool can still read its
 * maps). uprobe_clients probes uc_leaf_body (uc_leaf past its prologue,
 * so that a frame-pointer walk from there sees every caller; a function
 * symbol of its own, which tools attach to by name; arm64's perf tests
 * probe uc_leaf, see uprobe_clients.c) while uc_mid has a return probe,
 * and checks the callchains perf and bpftrace sample there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uprobe_util.h"

int uc_leaf(int x);

#if defined(__x86_64__)
asm(".text\n"
	".globl uc_leaf\n"
	".type uc_leaf, @function\n"
	"uc_leaf:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	".size uc_leaf, .-uc_leaf\n"
	".globl uc_leaf_body\n"
	".type uc_leaf_body, @function\n"
	"uc_leaf_body:\n"
	"	lea 1(%rdi), %eax\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size uc_leaf_body, .-uc_leaf_body\n");
#elif defined(__aarch64__)
/* the frame record (x29, x30) pushed, x29 pointing at it */
asm(".text\n"
	".globl uc_leaf\n"
	".type uc_leaf, %function\n"
	"uc_leaf:\n"
	"	.cfi_startproc\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	mov x29, sp\n"
	"	.cfi_def_cfa_register 29\n"
	".size uc_leaf, .-uc_leaf\n"
	".globl uc_leaf_body\n"
	".type uc_leaf_body, %function\n"
	"uc_leaf_body:\n"
	"	add w0, w0, #1\n"
	"	ldp x29, x30, [sp], #16\n"
	"	.cfi_def_cfa sp, 0\n"
	"	.cfi_restore 29\n"
	"	.cfi_restore 30\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size uc_leaf_body, .-uc_leaf_body\n");
#else
#error "uc_leaf: no assembly for this architecture"
#endif

noipa int uc_mid(int x)
{
	return uc_leaf(x) * 2;
}

noipa int uc_top(int x)
{
	return uc_mid(x) + 3;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? strtol(argv[1], NULL, 0) : 10, sum = 0;
	char line[16];

	for (i = 0; i < n; i++)
		sum += uc_top(i);
	printf("%ld\n", sum);
	fflush(stdout);
	/* "wait": until stdin is closed */
	if (argc > 2 && !strcmp(argv[2], "wait"))
		while (fgets(line, sizeof(line), stdin))
			;
	return 0;
}
