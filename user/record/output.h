/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file a recording writes: made fresh (one in the way moves to .old,
 * its JIT images folder with it), never through a link, written by a
 * perf.data writer with the room of its feature section kept past the
 * data all along (a full disk keeps what was flushed), and removed when
 * the recording fails before the file is complete.  The output owns the
 * path and the writer, so it is where opening the next file goes.
 */
#ifndef PRECORD_RECORD_OUTPUT_H
#define PRECORD_RECORD_OUTPUT_H

#include <stdbool.h>
#include <linux/types.h>

struct output;
struct perfdata_writer;
struct perfdata_env;

/* Says why it cannot: NULL + errno. */
struct output *output__create(const char *path);
/* Closes the file, removing it unless output__finish() completed it.
 * NULL-safe. */
void output__free(struct output *out);

struct perfdata_writer *output__writer(const struct output *out);

/* Measure the feature section env describes (BUILD_ID aside) and keep
 * its room, with build_id_bytes for BUILD_ID. */
int output__reserve_features(struct output *out, const struct perfdata_env *env,
			     __u64 build_id_bytes);
/* Keep that room plus build_id_bytes for BUILD_ID. */
int output__keep_room(struct output *out, __u64 build_id_bytes);
/* The file moves to path (a rotated file's name; nothing there is
 * replaced: -EEXIST, not said; another failure is said).  The writer
 * keeps writing it. */
int output__rename(struct output *out, const char *path);
const char *output__path(const struct output *out);
/* Features and header: the file is complete (and kept) if this returns 0. */
int output__finish(struct output *out, const struct perfdata_env *env);
/* A failed write stopped the data: says so in one line, with what is
 * kept (traced: the count includes traced entries and returns). */
void output__report_stopped(const struct output *out, bool traced);

#endif
