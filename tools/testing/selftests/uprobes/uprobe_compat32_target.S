/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 32-bit (i386) code of uprobe_compat32_target, in assembly so that
 * the probed instructions are exact: c32_insns() runs one instruction of
 * each kind uprobe_clients_compat32 probes, each at a global label
 * c32_i_<kind>, and c32_call3() calls a function and checks that it left
 * %esp where its calling convention says.
 */

#include "uprobe_asm.inc"

	.data
	.balign 4
	.globl c32_acc, c32_last, c32_bad_sp
c32_acc:	.long 0		/* the running sum of c32_insns' x + 7 */
c32_last:	.long 0		/* c32_acc after the last c32_insns() */
c32_bad_sp:	.long 0		/* calls after which %esp was wrong */
c32_tab:	.long 10, 100	/* read by c32_modes */
c32_fnptr:	.long c32_dbl	/* c32_modes' call and jump targets */
c32_jmpptr:	.long c32_m_landing
c32_src:	.ascii "abcdefgh"	/* c32_modes copies it to c32_dst */
c32_dst:	.long 0, 0

	.text

/*
 * int c32_insns(int x) (cdecl): with y = x + 7, adds y to c32_acc, copies
 * c32_acc to c32_last and returns 3 * y + c32_acc, plus 1000 when y is
 * odd. The absolute-address forms (ModRM mod 00, r/m 101) would be
 * RIP-relative in 64-bit code.
 */
FUNC(c32_insns)
LABEL(c32_i_push)
	push	%ebp			/* 55 */
	mov	%esp, %ebp
LABEL(c32_i_nop)
	nop				/* 90 */
LABEL(c32_i_load)
	mov	8(%ebp), %eax		/* 8b 45 08: a load through %ebp */
LABEL(c32_i_add)
	add	$7, %eax		/* 83 c0 07 */
LABEL(c32_i_mov)
	mov	%eax, %ecx		/* 89 c1 */
LABEL(c32_i_absrmw)
	add	%ecx, c32_acc		/* 01 0d abs32 */
LABEL(c32_i_absload)
	mov	c32_acc, %edx		/* 8b 15 abs32 */
LABEL(c32_i_absstore)
	mov	%edx, c32_last		/* 89 15 abs32 */
LABEL(c32_i_call)
	call	c32_leaf		/* e8 rel32 */
LABEL(c32_i_after_call)
	add	%edx, %eax
	test	$1, %cl
LABEL(c32_i_jcc)
	jz	1f			/* 74 rel8 */
	add	$1000, %eax
1:	pop	%ebp
	ret
END(c32_insns)

/* c32_insns' callee: %eax = 3 * %ecx */
FUNC(c32_leaf)
	lea	(%ecx, %ecx, 2), %eax
LABEL(c32_i_ret)
	ret				/* c3 */
END(c32_leaf)

/*
 * int c32_modes(int x) (cdecl): 2 * x + 4304 + 0x68676665, through
 * instructions that are 32-bit only (inc, dec, pusha, popa) or that mean
 * something else in 64-bit code (an absolute lea, call and jmp through
 * absolute pointers: RIP-relative there; jecxz: jrcxz), loop, push imm32,
 * pushf, a rep movsb of 8 bytes, leave. (0x68676665 is "efgh".)
 */
FUNC(c32_modes)
	push	%ebp
	mov	%esp, %ebp
	push	%ebx
	push	%esi
	push	%edi
	mov	8(%ebp), %eax
LABEL(c32_m_inc)
	inc	%eax			/* 40: a REX prefix in 64-bit code */
LABEL(c32_m_lea_abs)
	lea	c32_tab, %esi		/* 8d 35 abs32 */
	add	4(%esi), %eax		/* + 100 */
LABEL(c32_m_call_abs)
	call	*c32_fnptr		/* ff 15 abs32: c32_dbl, %eax * 2 */
LABEL(c32_m_jmp_abs)
	jmp	*c32_jmpptr		/* ff 25 abs32: to c32_m_landing */
	mov	$0xdead, %eax
	jmp	3f
LABEL(c32_m_landing)
	mov	$3, %ecx
1:	add	%ecx, %eax		/* + 3 + 2 + 1 */
LABEL(c32_m_loop)
	loop	1b			/* e2 rel8: taken twice, then not */
LABEL(c32_m_jecxz)
	jecxz	2f			/* e3 rel8: taken */
	add	$5000, %eax
2:
LABEL(c32_m_dec)
	dec	%ecx			/* 49: a REX prefix in 64-bit code */
	add	%ecx, %eax		/* - 1 */
LABEL(c32_m_pusha)
	pusha				/* 60 */
	mov	$0x77, %eax
LABEL(c32_m_popa)
	popa				/* 61 */
LABEL(c32_m_push_imm)
	push	$0x1000			/* 68 imm32 */
	pop	%edx
	add	%edx, %eax		/* + 0x1000 */
	stc
LABEL(c32_m_pushf)
	pushf				/* 9c */
	pop	%edx
	and	$0x101, %edx		/* CF, and TF if it leaked */
	add	%edx, %eax		/* + 1 */
	movl	$0, c32_dst + 4
	lea	c32_src, %esi
	lea	c32_dst, %edi
	mov	$8, %ecx
	cld
LABEL(c32_m_rep)
	rep movsb			/* f3 a4 */
	add	c32_dst + 4, %eax	/* + "efgh" */
3:	pop	%edi
	pop	%esi
	pop	%ebx
LABEL(c32_m_leave)
	leave				/* c9 */
	ret
END(c32_modes)

/* c32_modes' callee through c32_fnptr: %eax * 2 */
FUNC(c32_dbl)
	add	%eax, %eax
	ret
END(c32_dbl)

/*
 * int c32_call3(void *fn, int a, int b, int c, int popped) (cdecl): calls
 * fn(a, b, c) and returns what it returns. A callee that pops @popped
 * bytes of its arguments (ret $popped) leaves %esp 12 - @popped bytes
 * below where it was before the arguments were pushed; when it is not
 * there, c32_bad_sp is incremented (and %esp put right).
 */
FUNC(c32_call3)
	push	%ebp
	mov	%esp, %ebp
	push	%esi
	push	%edi
	lea	-12(%esp), %edi
	add	24(%ebp), %edi		/* where %esp must be after the call */
	pushl	20(%ebp)
	pushl	16(%ebp)
	pushl	12(%ebp)
	call	*8(%ebp)
LABEL(c32_call3_ret)
	cmp	%esp, %edi
	je	1f
	incl	c32_bad_sp
1:	lea	-8(%ebp), %esp
	pop	%edi
	pop	%esi
	pop	%ebp
	ret
END(c32_call3)

	.section .note.GNU-stack, "", @progbits
