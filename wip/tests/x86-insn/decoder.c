// SPDX-License-Identifier: GPL-2.0+
/*
 * The base tree's x86 instruction decoder (its tools/ copy, identical to
 * arch/x86/lib/), built for the user-space test. The Makefile names the
 * files and generates inat-tables.c as the kernel build does.
 */
#include AUP_INAT_C
#include AUP_INSN_C
