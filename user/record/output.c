// SPDX-License-Identifier: GPL-2.0
#include "record/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/features.h"
#include "perfdata/writer.h"
#include "util/log.h"

/*
 * The feature section is measured once at the start (BUILD_ID aside) and
 * its room is kept past the data all along, grown with the BUILD_ID
 * entries of the DSOs seen; the slack covers what may change meanwhile
 * (host name, PMUs: a few strings of 64 bytes).
 */
#define FEATURES_SLACK	4096

struct output {
	char *path;
	struct perfdata_writer *w;	/* owns the fd */
	__u64 features_bytes;		/* room kept for the features, BUILD_ID aside */
	bool complete;			/* finished: kept */
};

/* The JIT images of perf.data live in perf.data.jit: they follow the file
 * to perf.data.old.jit (what is in the way there is kept, with a warning). */
static void rotate_jit_dir(const char *path, const char *old)
{
	char *from = NULL, *to = NULL;
	struct stat st;

	if (asprintf(&from, "%s.jit", path) >= 0 && asprintf(&to, "%s.jit", old) >= 0 &&
	    !lstat(from, &st) && S_ISDIR(st.st_mode) && rename(from, to))
		pr_warn("cannot rename %s to %s: %s; its JIT images may be mixed with new ones",
			from, to, strerror(errno));
	free(from);
	free(to);
}

/* A file in the way becomes path.old; anything but a regular file stays. */
static int rotate(const char *path)
{
	struct stat st;
	char *old;

	if (lstat(path, &st))
		return 0;
	if (!S_ISREG(st.st_mode)) {
		pr_err("cannot write %s: it exists and is not a regular file", path);
		return -EEXIST;
	}
	if (asprintf(&old, "%s.old", path) < 0)
		return -ENOMEM;
	if (rename(path, old)) {
		int err = -errno;

		pr_err("cannot rename %s to %s: %s", path, old, strerror(-err));
		free(old);
		return err;
	}
	rotate_jit_dir(path, old);
	free(old);
	return 0;
}

struct output *output__create(const char *path)
{
	struct output *out = calloc(1, sizeof(*out));
	int err = out ? rotate(path) : -ENOMEM;
	int fd;

	if (err)
		goto fail;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot create %s: %s; choose another file with -o", path, strerror(-err));
		goto fail;
	}
	out->path = strdup(path);
	out->w = perfdata_writer__new(fd);
	if (!out->w)
		close(fd);
	if (out->w && out->path)
		return out;
	err = -ENOMEM;
	unlink(path);
fail:
	output__free(out);
	errno = -err;
	return NULL;
}

void output__free(struct output *out)
{
	if (!out)
		return;
	if (out->path && !out->complete)
		unlink(out->path);
	perfdata_writer__free(out->w);
	free(out->path);
	free(out);
}

struct perfdata_writer *output__writer(const struct output *out)
{
	return out->w;
}

int output__rename(struct output *out, const char *path)
{
	char *copy = strdup(path);
	int err = 0;

	if (!copy)
		return -ENOMEM;
	if (renameat2(AT_FDCWD, out->path, AT_FDCWD, path, RENAME_NOREPLACE)) {
		err = -errno;
		/* a file system without RENAME_NOREPLACE: a link cannot replace either */
		if (err == -EINVAL)
			err = link(out->path, path) ? -errno : unlink(out->path) ? -errno : 0;
	}
	if (err) {
		if (err != -EEXIST)	/* the caller tries another name */
			pr_err("cannot rename %s to %s: %s", out->path, path, strerror(-err));
		free(copy);
		return err;
	}
	free(out->path);
	out->path = copy;
	return 0;
}

const char *output__path(const struct output *out)
{
	return out->path;
}

int output__reserve_features(struct output *out, const struct perfdata_env *env,
			     __u64 build_id_bytes)
{
	out->features_bytes = perfdata_writer__features_size(out->w, env) + FEATURES_SLACK;
	return output__keep_room(out, build_id_bytes);
}

int output__keep_room(struct output *out, __u64 build_id_bytes)
{
	return perfdata_writer__reserve(out->w, out->features_bytes + build_id_bytes);
}

int output__finish(struct output *out, const struct perfdata_env *env)
{
	int err = perfdata_writer__finish(out->w, env);

	out->complete = !err;
	return err;
}

void output__report_stopped(const struct output *out, bool traced)
{
	int err = perfdata_writer__error(out->w);
	bool full = err == -ENOSPC || err == -EDQUOT;

	pr_err("%s %s (%s): recording stopped; kept %llu samples%s up to the last complete flush; %s",
	       err == -ENOSPC ? "disk full writing" : err == -EDQUOT ?
	       "disk quota exceeded writing" : "cannot write",
	       out->path, strerror(-err), (unsigned long long)perfdata_writer__samples(out->w),
	       traced ? " (traced entries and returns included)" : "",
	       full ? "free some space, or record to another disk with -o" :
		      "check the disk, or record to another with -o");
}
