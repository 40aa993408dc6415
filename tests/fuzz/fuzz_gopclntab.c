// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the Go function-table reader (user/elf/gopclntab.c):
 * the input is a .gopclntab, parsed straight from libFuzzer's buffer
 * (with a text start of 0x401000 for 1.18+ tables whose own is 0).
 * Asserted for every function the reader gives: its name lies inside the
 * input, is 1..GOPCLNTAB_NAME_MAX bytes without a NUL and is followed by
 * one (inside the input), and its range is not empty nor wrapped; at
 * most GOPCLNTAB_MAX_FUNCS functions.  (Their order is not asserted: a
 * hostile table's ranges may overlap, as a hostile .symtab's may.)
 *
 * Seed corpus (tests/fuzz/corpus/gopclntab): real sections cut with
 * `objcopy -O binary --only-section=.gopclntab` from go1.19 binaries of
 * `package main; func main() {}` (amd64 and GOARCH=386: the 1.18 layout
 * with 8- and 4-byte pointers), and small tables in the 1.16, 1.18 and
 * 1.20 layouts (8- and 4-byte pointers, either byte order) written by
 * tests/unit/test_gopclntab.c (GOPCLNTAB_SEEDS=DIR).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab t;
	struct gopclntab_func f;

	if (gopclntab__open(&t, data, size, 0x401000))
		return 0;
	if (t.nfunc > GOPCLNTAB_MAX_FUNCS)
		abort();
	for (uint64_t i = 0; i < t.nfunc; i++) {
		const uint8_t *n;

		if (gopclntab__func(&t, i, &f))
			continue;
		n = (const uint8_t *)f.name;
		if (n < data || n >= data + size || f.name_len < 1 ||
		    f.name_len > GOPCLNTAB_NAME_MAX || f.name_len >= (size_t)(data + size - n) ||
		    n[f.name_len] != 0 || memchr(n, 0, f.name_len))
			abort();
		if (f.end <= f.start)
			abort();
	}
	return 0;
}
