// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the perf map line parser alone (perfmap_parse_line):
 * the input is split into lines as the reader splits them and every line
 * is parsed from the fuzzer's buffer — no files, no merger.  A parsed entry
 * must point inside its line, hold no NUL and not wrap around.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jit/perfmap.h"
#include "util/log.h"

static void check_line(const char *line, size_t len)
{
	struct perfmap_entry e;
	const char *why = NULL;

	if (perfmap_parse_line(line, len, &e, &why)) {
		if (!why)
			abort();
		return;
	}
	if (e.name < line || e.name_len == 0 || e.name + e.name_len > line + len)
		abort();
	if (memchr(e.name, '\0', e.name_len) || e.start + e.size < e.start)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	log_verbosity = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len < PERFMAP_MAX_LINE)
			check_line(p, len);
		p += len + 1;
	}
	return 0;
}
