// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the unwind-table builder (user/unwind/cfi_table.c,
 * cfi_scan.c, cfi_row.c) over a whole ELF file: the input is written to
 * one memfd (rewritten for every input) and built into a table.  The
 * table must be sorted, its rows of known kinds, and every row found
 * again by cfi_table__lookup.  The same file is built again in steps
 * (cfi_build__step with an expired deadline: one unit a step), which must
 * give the same result and the same rows.
 *
 * Seed corpus (tests/fuzz/corpus/cfi), written by
 * `build/tests/test_cfi_table --write-corpus tests/fuzz/corpus/cfi`: the
 * fixture of the unit test (tests/unit/fixtures/cfi_fixture.S) with
 * .eh_frame and with .debug_frame only, and its hostile variants (FDE
 * length and CIE pointer outside the section, .eh_frame_hdr with 2^31
 * FDEs or a garbage table, a CIE augmentation that overruns, a rule for
 * register 132,120,576, a 4 GiB FDE, 32-bit, big-endian and aarch64
 * headers, truncations) and FDEs in reverse address order (the sort in
 * steps); plus small-static-stripped, the CFI of
 *	static int f(int x) { return x * 3 + 1; }
 *	void _start(void) { volatile int v = 0; for (;;) v = f(v); }
 * built with `gcc -O2 -fasynchronous-unwind-tables -nostdlib -static -s
 * -Wl,-z,max-page-size=64`.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwind/cfi_table.h"
#include "util/log.h"

static int memfd = -1;

/* The build in steps differs from the one-shot build (err, *once). */
static bool stepped(int err, const struct cfi_table *once)
{
	struct cfi_table t = { 0 };
	struct cfi_build *b;
	int e = cfi_build__start(memfd, "fuzz", 1u << 16, &b);
	bool differs;

	if (!e)
		do
			e = cfi_build__step(b, 1, &t);
		while (e == -EAGAIN);
	cfi_build__free(b);
	differs = e != err || t.nr_rows != once->nr_rows ||
		  (t.nr_rows && memcmp(t.rows, once->rows, t.nr_rows * sizeof(*t.rows)));
	cfi_table__free(&t);
	return differs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_table t;
	int err;

	log_verbosity = -1;
	if (memfd < 0)
		memfd = memfd_create("cfi", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, 0) ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size)
		return 0;
	err = cfi_table__build(memfd, "fuzz", 1u << 16, &t);
	if (stepped(err, &t))
		abort();
	if (err) {
		if (t.nr_rows || t.rows || t.segs)
			abort();	/* a failure leaves the table empty */
		return 0;
	}
	for (size_t i = 0; i < t.nr_rows; i++) {
		const struct prec_unwind_row *r = &t.rows[i];

		if ((i && t.rows[i - 1].pc >= r->pc) || r->cfa_kind > PREC_CFA_NONE ||
		    cfi_table__lookup(&t, t.base + r->pc) != r)
			abort();
	}
	if (!t.nr_segs || t.nr_rows > 1u << 16)
		abort();
	cfi_table__free(&t);
	return 0;
}
