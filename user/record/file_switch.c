// SPDX-License-Identifier: GPL-2.0
#include "record/file_switch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

struct file_switch {
	struct file_switch_config cfg;
	__u64 next_ns;		/* the time of the next TIME switch */
	__u64 retry_ns;		/* after a failed switch: none before */
	char **kept;		/* finished files, oldest first (max_files) */
	size_t nr_kept;
};

struct file_switch *file_switch__new(const struct file_switch_config *cfg, __u64 start_ns)
{
	struct file_switch *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->cfg = *cfg;
	if (cfg->max_files > 0) {
		fs->kept = calloc((size_t)cfg->max_files + 1, sizeof(*fs->kept));
		if (!fs->kept) {
			free(fs);
			return NULL;
		}
	}
	fs->next_ns = start_ns + cfg->every_ns;
	return fs;
}

void file_switch__free(struct file_switch *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->nr_kept; i++)
		free(fs->kept[i]);
	free(fs->kept);
	free(fs);
}

bool file_switch__due(const struct file_switch *fs, __u64 now_ns, __u64 data_bytes, bool asked)
{
	if (asked)
		return true;
	if (now_ns < fs->retry_ns)
		return false;
	if (fs->cfg.every_ns && now_ns >= fs->next_ns)
		return true;
	return fs->cfg.bytes && data_bytes >= fs->cfg.bytes;
}

void file_switch__start(struct file_switch *fs, __u64 now_ns)
{
	fs->next_ns = now_ns + fs->cfg.every_ns;
}

void file_switch__started(struct file_switch *fs, __u64 now_ns)
{
	if (!fs->cfg.every_ns)
		return;
	if (now_ns >= fs->next_ns)	/* skip the overrun ones at once */
		fs->next_ns += ((now_ns - fs->next_ns) / fs->cfg.every_ns + 1) * fs->cfg.every_ns;
}

void file_switch__failed(struct file_switch *fs, __u64 now_ns)
{
	fs->retry_ns = now_ns + FILE_SWITCH_RETRY_NS;
	file_switch__started(fs, now_ns);
}

int file_switch__name(const struct file_switch *fs, __u64 tod_ns, char *buf, size_t size)
{
	time_t sec = (time_t)(tod_ns / 1000000000ULL);
	unsigned int cs = (unsigned int)(tod_ns % 1000000000ULL / 10000000ULL);
	char stamp[32];
	struct tm tm;
	int n;

	if (!localtime_r(&sec, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm))
		return -EINVAL;
	n = snprintf(buf, size, "%s.%s%02u", fs->cfg.output, stamp, cs);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int file_switch__kept(struct file_switch *fs, const char *path)
{
	int removed = 0;

	if (fs->cfg.max_files <= 0)
		return 0;
	fs->kept[fs->nr_kept] = strdup(path);
	if (!fs->kept[fs->nr_kept])
		return -ENOMEM;		/* not counted: never removed */
	fs->nr_kept++;
	while (fs->nr_kept > (size_t)fs->cfg.max_files) {
		if (unlink(fs->kept[0]) && errno != ENOENT)
			pr_warn("cannot remove %s (--switch-max-files=%d): %s",
				fs->kept[0], fs->cfg.max_files, strerror(errno));
		else
			removed++;
		free(fs->kept[0]);
		memmove(fs->kept, fs->kept + 1, --fs->nr_kept * sizeof(*fs->kept));
	}
	return removed;
}
