/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The corpus of uprobe_corpus: ordinary C functions compiled with -O2
 * (uprobe_corpus_code.c) into their own section, uprobe_corpus, whose
 * instruction boundaries the build lists in uprobe_corpus.insns.
 */
#ifndef UPROBE_CORPUS_H
#define UPROBE_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "uprobe_util.h"

/* the corpus section: with noipa, each function kept as it is */
#define __corpus	__section("uprobe_corpus")

uint32_t uc_adler32(const uint8_t *buf, size_t len);
uint32_t uc_crc32(const uint8_t *buf, size_t len);
void uc_isort(int *a, int n);
void uc_qsort(int *a, int lo, int hi);
size_t uc_strlen(const char *s);
void uc_strrev(char *s);
unsigned int uc_tokens(const char *s, char sep, unsigned int *lens,
		       unsigned int max);
long uc_switch(unsigned int op, long x);

/* Run every corpus function on fixed inputs; a hash of all results. */
uint64_t uc_run(void);

/* the corpus section, as the linker bounds it */
extern char __start_uprobe_corpus[], __stop_uprobe_corpus[];

#endif /* UPROBE_CORPUS_H */
