// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the perf.data reader and the symbolizer: the input as a
 * file (header, attrs, features, records, time ordering), every record
 * fed to a symbolizer and every sample resolved.  No symbol file is
 * opened for a name the input gives unless it exists on this machine, and
 * the build-id cache is an empty directory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report/profile.h"
#include "util/log.h"

static int on_sample(void *ctx, const struct profile_sample *s)
{
	size_t *n = ctx;

	if (!s->nr_frames || !s->frames[0].dso || !s->comm)
		abort();
	*n += s->nr_frames;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sym_cache *cache;
	struct profile_info info;
	char path[64];
	size_t frames = 0;
	int fd;

	log_verbosity = -1;
	if (!cache)
		cache = sym_cache__new("/nonexistent/precord-fuzz-cache");
	fd = memfd_create("perf.data", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	profile__read(path, &(struct profile_opts){ .cache = cache, .max_frames = 64 },
		      on_sample, &frames, &info);
	profile_info_free(&info);
out:
	if (fd >= 0)
		close(fd);
	return 0;
}
