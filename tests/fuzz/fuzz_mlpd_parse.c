// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the .mlpd parser alone (jit/mlpd.h): the header, then
 * every buffer and event straight from the fuzzer's buffer (gzip inflated
 * in memory) — no files, no merger.  The budget caps the inflated stream
 * at 256 KiB (over 30x the largest seed inflated), as --jit-max-bytes caps a
 * real read, so a gzip bomb costs microseconds.  Seeds:
 * tests/fuzz/corpus/mlpd_parse/: those of fuzz_mlpd cut into a header and
 * a few buffers each, those under 8 KiB kept: libFuzzer's max_len follows
 * the largest seed, and with the 56 KiB seeds it ran at 3,900 exec/s; the
 * seeds left reach 223 of the 224 edges all of them reach.
 *
 * Beyond "no crash, no sanitizer report", every region handed to the
 * callback must be sane: non-zero address and size, no wrap-around, a
 * non-empty name without control characters.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jit/mlpd.h"
#include "util/log.h"

static int check_region(void *ctx, const struct mlpd_method *m)
{
	const unsigned char *s = (const unsigned char *)m->name;
	size_t *count = ctx;

	if (!m->code_addr || !m->code_size || m->code_addr + m->code_size < m->code_addr)
		abort();
	if (!s || !*s)
		abort();
	for (; *s; s++)
		if (*s < 0x20 || *s == 0x7f)
			abort();
	/* stop early now and then, to run that path too */
	return ++*count == 1000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jit_budget b = { .bytes = 256u << 10 };
	struct mlpd_header h;
	size_t count = 0;

	log_verbosity = -1;	/* hostile input warns a lot */
	if (!mlpd_parse_header(data, size, &h) && (h.size > size || !h.size))
		abort();
	mlpd_read_mem(data, size, "fuzz", &b, check_region, &count);
	if (b.bytes > (256u << 10))
		abort();
	return 0;
}
