/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host check of the unwind rule of arch/x86/entry/vdso/vuretprobe.S: the
 * same FDE and stub layout, with a common code that returns through the
 * table itself instead of making the system call.
 *	g++ -O2 -fno-omit-frame-pointer -DVDSO_LAYOUT -o model-vdso \
 *		model.cc bt.cc stubs-vdso.S && ./model-vdso
 */
#define NSTUBS	16
	.text
	.globl	ut_stubs
	.balign	16
	.cfi_startproc simple
	.cfi_def_cfa	%rsp, 1
	.cfi_escape	0x16, 0x07, 0x02, 0x31, 0x1c
	.cfi_escape	0x16, 0x10, 0x16, 0x39, 0x1c, 0x06, 0x23, 0x08, 0x12, \
			0x94, 0x04, 0x0c, 0x00, 0x00, 0x00, 0x80, 0x27, \
			0x0c, 0x00, 0x00, 0x00, 0x80, 0x1c, 0x22, 0x06
common:
	mov	-8(%rsp), %r11
	movslq	8(%r11), %r10
	lea	8(%r11, %r10), %r11
	jmp	*(%r11)
	.balign	16, 0xcc
ut_stubs:
	.set	stub, 0
	.rept	NSTUBS
	.byte	0xe9
	.long	common - (. + 4)
	.byte	0xcc, 0xcc, 0xcc
	.long	ut_table + 8 * stub - .
	.byte	0xcc, 0xcc, 0xcc, 0xcc
	.set	stub, stub + 1
	.endr
	.cfi_endproc

	.data
	.globl	ut_table
	.balign	8
ut_table:
	.skip	8 * NSTUBS

	.section .note.GNU-stack, "", @progbits
