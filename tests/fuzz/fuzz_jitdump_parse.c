// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the jitdump parsers alone (jit/jitdump.h): header, every
 * record type and every accessor, straight from the fuzzer's buffer — no
 * files, no merger, no allocation — so it runs at tens of thousands of
 * inputs per second (docs/testing.md, "Fuzzing").  Also parses the input
 * cut at a record boundary and mid-record, as a live dump is read.
 */
#include <stdint.h>

#include "jitdump_walk.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_verbosity = -1;
	parse_all(data, size);
	if (size > 1)
		parse_all(data, size - 1);	/* the last record being written */
	return 0;
}
