// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the perf-map reader: every line through the pure parser,
 * then the reader and the merger on the input given in two halves, as a
 * map the runtime is still writing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit/merger.h"
#include "jit/perfmap.h"
#include "util/log.h"

static char out_dir[] = "/tmp/precord-fuzz-perfmap-XXXXXX";

static int count(void *ctx, const struct perfmap_entry *e, __u64 line_no)
{
	(void)line_no;
	*(size_t *)ctx += e->name_len;
	return 0;
}

static void parse_lines(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct perfmap_entry e;

		if (!perfmap_parse_line(p, len, &e, NULL) && (e.name < p || e.name + e.name_len > p + len))
			abort();
		p += len + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_reader *r;
	struct jit_merger *m;
	size_t half = size / 2, names = 0;
	char cmd[128];
	int fd;

	log_verbosity = -1;
	parse_lines(data, size);
	if (size > (1u << 20))
		return 0;
	fd = memfd_create("perfmap", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, half) != (ssize_t)half)
		goto out;
	r = perfmap_reader__new("fuzz.map", dup(fd));
	if (r) {
		perfmap_reader__read(r, false, &JIT_BUDGET_NONE, count, &names);
		if (write(fd, data + half, size - half) == (ssize_t)(size - half))
			perfmap_reader__read(r, true, &JIT_BUDGET_NONE, count, &names);
		perfmap_reader__free(r);
	}
	memcpy(out_dir + strlen(out_dir) - 6, "XXXXXX", 6);
	if (!mkdtemp(out_dir))
		goto out;
	m = jit_merger__new(out_dir);
	if (m) {
		jit_merger__add_perf_map(m, "fuzz.map", dup(fd), 1, 1);
		jit_merger__finish(m);
		jit_merger__free(m);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out_dir);
	if (system(cmd))
		goto out;
out:
	if (fd >= 0)
		close(fd);
	return 0;
}
