/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A user-space model of an unwindable return trampoline: NSTUBS stubs of
 * 8 bytes, stub i returning to table[i] (the "original return address"),
 * and one FDE for all of them whose return-address rule is
 *	RA = *(*(CFA - 8) + D)
 * where the hijacked return slot still holds the stub's address while an
 * exception unwinds, and D = table - stubs.
 *
 * Model for giving the kernel's return trampoline unwind information
 * (issue 5): there the stubs would be in the vDSO (which dl_iterate_phdr
 * reports, static binaries included) and the table a per-mm page at the
 * constant distance D. Build and run on the host:
 *	g++ -O2 -fno-omit-frame-pointer -o model model.cc bt.cc stubs.S
 *	./model		(and the same with -static)
 * It prints the backtrace through the stubs, then 5 calls, 2 of them
 * throwing through three hijacked frames, and "ok".
 */
#define NSTUBS	16
#define D	0xff	/* table - stubs: .org 0x100 below, stubs at +1 */

	.section .uttramp, "awx", @progbits
	.globl ut_stubs, ut_table
	.cfi_startproc simple
	/*
	 * CFA = rsp + 1: odd, so that no real frame has it (the unwinder
	 * tells frames apart by CFA, and the stub moves no stack).
	 * rsp = CFA - 1: DW_CFA_val_expression, reg 7, 2 bytes: lit1, minus.
	 * rip = *(*(CFA - 9) + D): DW_CFA_val_expression, reg 16, 7 bytes:
	 * lit9, minus, deref, plus_uconst 0xff 0x01, deref.
	 */
	.cfi_def_cfa %rsp, 1
	.cfi_escape 0x16, 0x07, 0x02, 0x31, 0x1c
	.cfi_escape 0x16, 0x10, 0x07, 0x39, 0x1c, 0x06, 0x23, 0xff, 0x01, 0x06
	nop			/* the unwinder looks up pc - 1 */
ut_stubs:
	.rept NSTUBS
1:	jmp	*(1b + D)(%rip)		/* to table[i]: 6 bytes */
	int3
	int3
	.endr
	.cfi_endproc
	.org	0x100
ut_table:
	.skip	8 * NSTUBS

	.section .note.GNU-stack, "", @progbits
