/* SPDX-License-Identifier: GPL-2.0 */
/* Functions whose first instruction hitcost probes. */
	.data
hc_var:	.quad 1
	.text
	.globl hc_nop, hc_push, hc_add, hc_rip, hc_retfn
hc_nop:
	nop
	ret
hc_push:
	push %rbp
	pop %rbp
	ret
hc_add:
	add $1, %rax
	ret
hc_rip:
	mov hc_var(%rip), %rax
	ret
hc_retfn:
	nop
	ret
	.section .note.GNU-stack, "", @progbits
