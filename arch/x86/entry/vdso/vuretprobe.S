/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwindable return trampoline of x86-64 return probes.
 *
 * A return probe replaces a function's return address with one of the
 * stubs below, stub i for the mm's return-table slot i, where the kernel
 * has written the real return address (arch/x86/kernel/uprobes/return.c;
 * Documentation/trace/uprobes.rst, "Return probes"). The table is a page
 * of the vvar area per mm (uretprobe_table, vdso-layout.lds.S; mapped by
 * vvar_fault()).
 *
 * When the function returns, the stub jumps to the common code, which
 * keeps the three registers a system call clobbers in the red zone below
 * %rsp and makes the uretprobe system call; the kernel runs the return
 * handlers and resumes at the real return address with every register as
 * the function left it. The int3 after the syscall only runs if the call
 * was skipped (a ptrace tracer); it traps to the same end.
 *
 * When instead an unwinder walks through the function (a C++ exception, a
 * backtrace), it finds the stub's address as the return address and looks
 * it up here, in the vDSO, which the C library reports among the loaded
 * objects. The single FDE for all of this code says:
 *	CFA = %rsp + 1	an odd CFA, which no real frame has: unwinders tell
 *			frames apart by CFA, and this frame moves no stack
 *	%rsp = CFA - 1	the stack pointer after the function returned
 *	%rip = *(p + sext(*(s32 *)p)), where p = *(%rsp - 8) + 8
 *			the return address slot, just popped, still holds
 *			the stub's address (unwinding runs below it, and the
 *			common code saves below it); each stub carries at +8
 *			the pc-relative offset of its table slot
 * and every other register is unchanged. So the unwinder continues in the
 * real caller, and an exception thrown through a return-probed function is
 * caught where it would have been without the probe.
 *
 * Stub layout, 16 bytes each:
 *	+0	jmp uretprobe_common	(e9, rel32)
 *	+5	int3 x3
 *	+8	.long &uretprobe_table[i] - .
 *	+12	int3 x4
 */
#include <linux/linkage.h>
#include <asm/unistd.h>

#define URETPROBE_STUBS		512	/* a page of 8-byte table slots */

	.hidden	uretprobe_table

	.code64
	.section .text, "ax"

	.balign	16
	.cfi_startproc simple
	.cfi_def_cfa	%rsp, 1
	/* DW_CFA_val_expression %rsp (7), 2 bytes: lit1, minus */
	.cfi_escape	0x16, 0x07, 0x02, 0x31, 0x1c
	/*
	 * DW_CFA_val_expression %rip (16), 22 bytes: lit9, minus, deref,
	 * plus_uconst 8, dup, deref_size 4, const4u 1 << 31, xor,
	 * const4u 1 << 31, minus, plus, deref.
	 */
	.cfi_escape	0x16, 0x10, 0x16, 0x39, 0x1c, 0x06, 0x23, 0x08, 0x12, \
			0x94, 0x04, 0x0c, 0x00, 0x00, 0x00, 0x80, 0x27, \
			0x0c, 0x00, 0x00, 0x00, 0x80, 0x1c, 0x22, 0x06
SYM_INNER_LABEL(uretprobe_common, SYM_L_GLOBAL)
	mov	%rax, -16(%rsp)
	mov	%rcx, -24(%rsp)
	mov	%r11, -32(%rsp)
	mov	$__NR_uretprobe, %eax
	syscall
SYM_INNER_LABEL(uretprobe_syscall_end, SYM_L_GLOBAL)
	int3
	.balign	16, 0xcc

	/* Stub 0 starts past the common code: pc - 1 is still in the FDE. */
SYM_INNER_LABEL(uretprobe_stubs, SYM_L_GLOBAL)
	.set	stub, 0
	.rept	URETPROBE_STUBS
	.byte	0xe9
	.long	uretprobe_common - (. + 4)
	.byte	0xcc, 0xcc, 0xcc
	.long	uretprobe_table + 8 * stub - .
	.byte	0xcc, 0xcc, 0xcc, 0xcc
	.set	stub, stub + 1
	.endr
SYM_INNER_LABEL(uretprobe_stubs_end, SYM_L_GLOBAL)
	.cfi_endproc
