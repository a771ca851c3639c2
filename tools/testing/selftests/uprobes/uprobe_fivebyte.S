/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe targets of uprobe_fivebyte (x86-64): instructions of five bytes,
 * the sites that a jump can replace, in functions that can tell whether a
 * probe disturbed them. The probed bytes are spelled out, so that the
 * assembler cannot pick another encoding.
 */
	.text

/* Before the site: seed, seed + 1 and seed + 2 into the red zone, %edx = 0. */
.macro REDZONE_STORE
	mov	%rdi, -8(%rsp)
	lea	1(%rdi), %rax
	mov	%rax, -64(%rsp)
	lea	2(%rdi), %rax
	mov	%rax, -128(%rsp)
	xor	%edx, %edx
.endm

/* After it: %rax = the three words + (the carry flag the cmp left). */
.macro REDZONE_SUM
	setb	%dl
	mov	-8(%rsp), %rax
	add	-64(%rsp), %rax
	add	-128(%rsp), %rax
	add	%rdx, %rax
.endm

/*
 * long fb_nop5_leaf(long seed): a leaf that keeps three words in its red
 * zone (the 128 bytes below %rsp, as far down as -128(%rsp)) and its flags
 * across the probed 5-byte nop at fb_nop5_at. Returns 3 * seed + 3, plus 1
 * if seed < 1000 (unsigned).
 */
	.globl	fb_nop5_leaf, fb_nop5_at, fb_nop5_end
	.type	fb_nop5_leaf, @function
fb_nop5_leaf:
	REDZONE_STORE
	cmp	$1000, %rdi
fb_nop5_at:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00	/* nopl 0x0(%rax,%rax,1) */
	REDZONE_SUM
	ret
fb_nop5_end:
	.size	fb_nop5_leaf, . - fb_nop5_leaf

/*
 * long fb_mov5_leaf(long seed): the same around a probed 5-byte
 * mov $0x12345678,%ecx at fb_mov5_at, which must also clear the upper half
 * of %rcx. Returns 3 * seed + 3 + (seed < 1000) + 0x12345678.
 */
	.globl	fb_mov5_leaf, fb_mov5_at
	.type	fb_mov5_leaf, @function
fb_mov5_leaf:
	REDZONE_STORE
	mov	$-1, %rcx
	cmp	$1000, %rdi
fb_mov5_at:
	.byte	0xb9, 0x78, 0x56, 0x34, 0x12	/* mov $0x12345678,%ecx */
	REDZONE_SUM
	add	%rcx, %rax
	ret
	.size	fb_mov5_leaf, . - fb_mov5_leaf

/*
 * long fb_framed(long x): a function with a frame pointer whose probed
 * 5-byte nop (fb_framed_at) is after the prologue; returns x + 7.
 * fb_framed_caller(x) calls it; fb_framed_ret is that call's return
 * address, what a stack walk from the probe must show as the caller.
 */
	.globl	fb_framed, fb_framed_at, fb_framed_caller, fb_framed_ret
	.type	fb_framed, @function
fb_framed:
	push	%rbp
	mov	%rsp, %rbp
fb_framed_at:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00	/* nopl 0x0(%rax,%rax,1) */
	lea	7(%rdi), %rax
	pop	%rbp
	ret
	.size	fb_framed, . - fb_framed

	.type	fb_framed_caller, @function
fb_framed_caller:
	push	%rbp
	mov	%rsp, %rbp
	call	fb_framed
fb_framed_ret:
	pop	%rbp
	ret
	.size	fb_framed_caller, . - fb_framed_caller

/*
 * long fb_rseq_nop5(struct rseq *rs, long *counts), fb_rseq_mov5(rs,
 * counts), fb_rseq_step(rs, counts) and fb_rseq_riprel(rs, counts): one
 * restartable sequence each that adds 1 to counts[rs->cpu_id], with a
 * probed instruction between the load and the store that commits: a 5-byte
 * nop at fb_rseq_nop5_at, a mov $imm32,%edx at fb_rseq_mov5_at, a
 * cmp fb_rseq_one(%rip),%rsp at fb_rseq_step_at (RIP-relative and naming
 * %rsp: stepped out of line with a scratch register, no boost, no
 * emulation, no jump site), or at fb_rseq_riprel_at the addition itself,
 * add fb_rseq_one(%rip),%rcx (boosted with a scratch register that the
 * slot restores; a jump site where they are on). Return 0 once committed,
 * 1 when the kernel aborted the sequence (the caller tries again). A
 * preemption anywhere between the load and the commit must abort it, or
 * the store puts back a count that another thread of the CPU has moved on
 * meanwhile. An abort that finds %rsi (the scratch register of the two
 * RIP-relative forms) changed returns 2. RSEQ_ADD's @site is the probed instruction; with @add, the
 * addition to the count in %rcx follows it.
 */
	.pushsection .rodata
	.balign	8
fb_rseq_one:
	.quad	1
	.popsection

.macro RSEQ_ADD name, add, site:vararg
	.pushsection .data
	.balign	32
\name\()_cs:				/* struct rseq_cs */
	.long	0, 0				/* version, flags */
	.quad	.L\name\()_start			/* start_ip */
	.quad	.L\name\()_commit - .L\name\()_start	/* post_commit_offset */
	.quad	.L\name\()_abort			/* abort_ip */
	.popsection

	.globl	\name, \name\()_at
	.type	\name, @function
\name:
	mov	%rsi, %r8			/* checked at an abort */
	lea	\name\()_cs(%rip), %rax
	mov	%rax, 8(%rdi)			/* rs->rseq_cs */
.L\name\()_start:
	mov	4(%rdi), %eax			/* rs->cpu_id */
	mov	(%rsi,%rax,8), %rcx
\name\()_at:
	\site
	.if	\add
	add	$1, %rcx
	.endif
	mov	%rcx, (%rsi,%rax,8)		/* the commit */
.L\name\()_commit:
	xor	%eax, %eax
	ret
	.long	0x53053053			/* RSEQ_SIG, glibc's on x86 */
.L\name\()_abort:
	mov	$1, %eax
	cmp	%rsi, %r8			/* a scratch register given back? */
	je	1f
	mov	$2, %eax
1:
	ret
	.size	\name, . - \name
.endm

	RSEQ_ADD fb_rseq_nop5, 1, .byte 0x0f, 0x1f, 0x44, 0x00, 0x00	/* nopl 0x0(%rax,%rax,1) */
	RSEQ_ADD fb_rseq_mov5, 1, .byte 0xba, 0x78, 0x56, 0x34, 0x12	/* mov $0x12345678,%edx */
	RSEQ_ADD fb_rseq_step, 1, cmp fb_rseq_one(%rip), %rsp
	RSEQ_ADD fb_rseq_riprel, 0, add fb_rseq_one(%rip), %rcx

	.section .note.GNU-stack, "", @progbits
