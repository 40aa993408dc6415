// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the whole jitdump path: the pure parsers with every
 * accessor, then the whole merger (reader, image writer, DWARF, .eh_frame)
 * on the input given in two halves as a live file would be.  Slow (it
 * writes files): fuzz_jitdump_parse.c is the fast one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitdump_walk.h"
#include "jit/merger.h"
#include "util/log.h"

static char out_dir[] = "/tmp/precord-fuzz-jitdump-XXXXXX";

/* The merger writes images: into a fresh directory, removed afterwards. */
static void merge_all(const uint8_t *data, size_t size)
{
	struct jit_merger *m;
	size_t half = size / 2;
	char cmd[128];
	int fd;

	fd = memfd_create("jitdump", MFD_CLOEXEC);
	if (fd < 0)
		return;
	memcpy(out_dir + strlen(out_dir) - 6, "XXXXXX", 6);
	if (write(fd, data, half) != (ssize_t)half || !mkdtemp(out_dir)) {
		close(fd);
		return;
	}
	m = jit_merger__new(out_dir);
	if (!m) {
		close(fd);
		return;
	}
	jit_merger__add_jitdump(m, "fuzz.dump", dup(fd), 1);
	jit_merger__poll(m, 1);
	if (write(fd, data + half, size - half) == (ssize_t)(size - half))
		jit_merger__poll(m, 2);
	jit_merger__finish(m);
	jit_merger__free(m);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out_dir);
	if (system(cmd))
		return;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_verbosity = -1;
	parse_all(data, size);
	if (size <= (4u << 20))
		merge_all(data, size);
	return 0;
}
