// SPDX-License-Identifier: GPL-2.0
/*
 * The corpus of uprobe_corpus: real functions (a checksum, a CRC, two
 * sorts, string routines, a switch with a jump table) compiled with -O2
 * into section uprobe_corpus, and uc_run(), which runs them all on fixed
 * inputs and hashes the results.  The build disassembles the section into
 * uprobe_corpus.insns, the list of instruction boundaries the test probes.
 *
 * Keep the inputs small: under QEMU TCG every probe hit costs a trap, and
 * the test runs the corpus once per instruction boundary.
 */
#include "uprobe_corpus.h"

#define UC_NINTS	16

static const char uc_text[] = "Probe every instruction, expect the same.";
static const int uc_ints[UC_NINTS] = {
	42, -7, 19, 0, 1000, -300, 5, 5, 64, -1, 23, 8, 77, -42, 16, 3,
};

static const char uc_csv[] = "alpha,beta,,gamma,delta,e";

noipa __corpus uint32_t uc_adler32(const uint8_t *buf, size_t len)
{
	uint32_t a = 1, b = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		a = (a + buf[i]) % 65521;
		b = (b + a) % 65521;
	}
	return (b << 16) | a;
}

/* CRC-32 (IEEE 802.3), bit by bit */
noipa __corpus uint32_t uc_crc32(const uint8_t *buf, size_t len)
{
	uint32_t crc = 0xffffffff;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= buf[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	return ~crc;
}

noipa __corpus void uc_isort(int *a, int n)
{
	int i, j, v;

	for (i = 1; i < n; i++) {
		v = a[i];
		for (j = i - 1; j >= 0 && a[j] > v; j--)
			a[j + 1] = a[j];
		a[j + 1] = v;
	}
}

/* quicksort of a[lo..hi], Lomuto partition, recursing on both halves */
noipa __corpus void uc_qsort(int *a, int lo, int hi)
{
	int i, j, p, t;

	if (lo >= hi)
		return;
	p = a[hi];
	for (i = lo, j = lo; j < hi; j++) {
		if (a[j] < p) {
			t = a[i];
			a[i] = a[j];
			a[j] = t;
			i++;
		}
	}
	a[hi] = a[i];
	a[i] = p;
	uc_qsort(a, lo, i - 1);
	uc_qsort(a, i + 1, hi);
}

noipa __corpus size_t uc_strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return p - s;
}

noipa __corpus void uc_strrev(char *s)
{
	char *e = s + uc_strlen(s), t;

	while (s < --e) {
		t = *s;
		*s++ = *e;
		*e = t;
	}
}

/*
 * Split @s at @sep; store up to @max token lengths in @lens (empty tokens
 * too); return the number of tokens.
 */
noipa __corpus unsigned int uc_tokens(const char *s, char sep,
				      unsigned int *lens, unsigned int max)
{
	unsigned int n = 0, len = 0;

	for (;; s++) {
		if (*s == sep || !*s) {
			if (n < max)
				lens[n] = len;
			n++;
			len = 0;
			if (!*s)
				break;
		} else {
			len++;
		}
	}
	return n;
}

/* dense enough for gcc -O2 to dispatch through a jump table */
noipa __corpus long uc_switch(unsigned int op, long x)
{
	switch (op) {
	case 0:
		return x + 7;
	case 1:
		return x * 3;
	case 2:
		return x ^ 0x55aa;
	case 3:
		return x - 11;
	case 4:
		return x << 3;
	case 5:
		return x >> 2;
	case 6:
		return ~x;
	case 7:
		return x * x;
	case 8:
		return x / 7;
	case 9:
		return x % 13;
	case 10:
		return x & 0xf0f0;
	case 11:
		return x | 0x101;
	case 12:
		return -x;
	case 13:
		return x > 100 ? x - 100 : x + 100;
	default:
		return -1;
	}
}

/* FNV-1a, one 64-bit value at a time */
static inline uint64_t uc_mix(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 0x100000001b3ULL;
	return h;
}

noipa __corpus uint64_t uc_run(void)
{
	const unsigned int nints = UC_NINTS;
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned int lens[8], i, n;
	char str[sizeof(uc_text)];
	int a[16], b[16];

	h = uc_mix(h, uc_adler32((const uint8_t *)uc_text, sizeof(uc_text) - 1));
	h = uc_mix(h, uc_crc32((const uint8_t *)uc_text, 12));
	for (i = 0; i < nints; i++) {
		a[i] = uc_ints[i];
		b[i] = uc_ints[nints - 1 - i];
	}
	uc_isort(a, 10);
	uc_qsort(b, 0, nints - 1);
	for (i = 0; i < nints; i++)
		h = uc_mix(h, (uint64_t)a[i] << 32 | (uint32_t)b[i]);
	for (i = 0; i < sizeof(uc_text); i++)
		str[i] = uc_text[i];
	h = uc_mix(h, uc_strlen(str));
	uc_strrev(str);
	h = uc_mix(h, uc_adler32((const uint8_t *)str, sizeof(str) - 1));
	n = uc_tokens(uc_csv, ',', lens, 8);
	h = uc_mix(h, n);
	for (i = 0; i < n && i < 8; i++)
		h = uc_mix(h, lens[i]);
	for (i = 0; i < 16; i++)
		h = uc_mix(h, uc_switch(i, (long)i * 37 - 200));
	return h;
}
