/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What each file's features say of the recording (perfdata/features.h's
 * env): the command line, the clock and its reading at the start, the
 * samples' first and last times (a rotated file's own part of them), and
 * the build-ids of the DSOs its samples hit, also copied into perf's
 * build-id cache.  The room of the features is kept from the file's
 * begin (output__reserve_features), so a full disk keeps them.
 */
#ifndef PRECORD_RECORD_FILE_FEATURES_H
#define PRECORD_RECORD_FILE_FEATURES_H

#include <linux/types.h>

#include "opts.h"

struct file_features;
struct debug_fetch;
struct dso_table;
struct output;
struct sample_converter;

struct file_features_config {
	const struct prec_opts *o;	/* argv, --clockid, the build-id cache's options */
	struct dso_table *dt;		/* the build-ids */
};

/* NULL + errno. */
struct file_features *file_features__new(const struct file_features_config *cfg);
void file_features__free(struct file_features *ff);		/* NULL-safe */

/* The converter whose samples' times the features give (none yet: no
 * samples). */
void file_features__set_converter(struct file_features *ff, const struct sample_converter *conv);
/* Each finished file's sampled DSOs go to df (record/debug_fetch.h). */
void file_features__set_debug_fetch(struct file_features *ff, struct debug_fetch *df);
/* The recording started: CLOCK_MONOTONIC and the time of day, in ns. */
void file_features__start(struct file_features *ff, __u64 mono_ns, __u64 tod_ns);
/* A rotated file began at t: its first sample time is no earlier. */
void file_features__file_start(struct file_features *ff, __u64 t);
/* The build-id cache's folder (read from perf's config once), NULL: none. */
const char *file_features__cache_dir(struct file_features *ff);

/* The room of out's features, kept from its begin. */
int file_features__reserve(struct file_features *ff, struct output *out);
/* out's features and header: it is complete if this returns 0. */
int file_features__write(struct file_features *ff, struct output *out);

#endif
