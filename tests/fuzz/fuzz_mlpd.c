// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the whole .mlpd path: the input as a file given to the
 * JIT merger (jit_merger__add_mlpd), read by mlpd_read_file (zlib's gzip
 * file reader) at finish, its methods written as an ELF image.  Slow (it
 * writes files): fuzz_mlpd_parse.c is the fast one.  Seeds:
 * tests/fuzz/corpus/mlpd/ (files recorded from tests/workloads/cs/Hot.cs,
 * trimmed under 64 KiB, and the synthetic fixtures of test_mlpd).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit/merger.h"
#include "util/log.h"

static char dir[] = "/tmp/precord-fuzz-mlpd-XXXXXX";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jit_merger *m;
	char path[64], out[64], cmd[128];
	FILE *f;

	log_verbosity = -1;
	memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
	if (!mkdtemp(dir))
		return 0;
	snprintf(path, sizeof(path), "%s/in.mlpd", dir);
	snprintf(out, sizeof(out), "%s/jit", dir);
	f = fopen(path, "wb");
	if (f && fwrite(data, 1, size, f) == size && !fclose(f)) {
		m = jit_merger__new(out);
		if (m) {
			/* as --jit-max-bytes would: a gzip bomb stops at 64 MiB */
			jit_merger__set_limits(m, &(struct jit_limits){ .max_bytes = 64u << 20 });
			jit_merger__add_mlpd(m, path, 1);
			jit_merger__finish(m);
			jit_merger__free(m);
		}
	} else if (f) {
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return 0;
	return 0;
}
