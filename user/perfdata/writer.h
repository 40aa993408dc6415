/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf.data writer: file layout only.  Written header-last, as perf does:
 *   [header 104][ids of evsel 0][ids of evsel 1]…[attr+section × n][data …]
 *   [feature section table][feature payloads]
 * The header (with data.size) is rewritten after every flush so that a
 * recording killed with SIGKILL still reads up to its last flush; features
 * are written only by perfdata_writer__finish().
 *
 * A write that fails (a full disk: ENOSPC, EDQUOT; EIO) stops the data:
 * the records of the complete writes stay, nothing more is written, and
 * __finish still makes a complete file of them, its features in the room
 * kept by __reserve.
 */
#ifndef PRECORD_PERFDATA_WRITER_H
#define PRECORD_PERFDATA_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "perfdata/features.h"

struct perfdata_writer;

/* Takes ownership of fd (an empty regular file).  NULL + errno on error. */
struct perfdata_writer *perfdata_writer__new(int fd);
void perfdata_writer__free(struct perfdata_writer *w);	/* NULL-safe, closes fd */

/* Before __begin: add one event (attr, EVENT_DESC name, its sample ids).
 * attr->size is forced to 128.  Returns the evsel index or -errno. */
int perfdata_writer__add_evsel(struct perfdata_writer *w,
			       const struct perf_event_attr *attr,
			       const char *name, const __u64 *ids, __u32 nr_ids);
const struct perfdata_evsel *perfdata_writer__evsels(const struct perfdata_writer *w,
						     size_t *nr);

/* Writes header placeholder, ids and attrs; data starts after them. */
int perfdata_writer__begin(struct perfdata_writer *w);

/* Append a record now, ahead of everything queued (synthesized, time 0). */
int perfdata_writer__append(struct perfdata_writer *w, const void *rec, size_t size);
/* Queue a record with its timestamp; __flush writes queued records in
 * time order (stable for equal times). */
int perfdata_writer__queue(struct perfdata_writer *w, __u64 time,
			   const void *rec, size_t size);
/* The same without a copy: room for a record of size bytes (a multiple
 * of 8, at least a header, at most 64 KiB - 8) that the caller fills in
 * before the next writer call.  NULL: bad size, or no memory. */
void *perfdata_writer__queue_space(struct perfdata_writer *w, __u64 time, size_t size);
/* Write queued records with time <= upto, then (if rounds are on) a
 * FINISHED_ROUND, then rewrite the header.  upto = ~0ULL writes all. */
int perfdata_writer__flush(struct perfdata_writer *w, __u64 upto);
/*
 * A file switch at time t (--switch-output): the queued records with time
 * < t are written to from, those at t and later move to to, whose queue
 * must be empty.  Every record lands in exactly one of the two files.
 */
int perfdata_writer__hand_over(struct perfdata_writer *from, struct perfdata_writer *to,
			       __u64 t);
/* FINISHED_ROUND markers after each flush (off by default). */
void perfdata_writer__set_rounds(struct perfdata_writer *w, bool on);

/* Flush everything, write the feature sections described by env, rewrite
 * the header.  0: the file is complete and perf reads it -- also after a
 * failed write stopped the data (see __error); -errno: it is not. */
int perfdata_writer__finish(struct perfdata_writer *w, const struct perfdata_env *env);

/* Keep bytes allocated past the end of the data, for the feature section
 * (see __features_size): the disk fills with data only up to that room.
 * Allocates at once once begun: -ENOSPC/-EDQUOT then stop the data. */
int perfdata_writer__reserve(struct perfdata_writer *w, __u64 bytes);
/* Bytes the feature section (table + payloads) described by env takes
 * now, with this writer's events (env->evsels is ignored). */
__u64 perfdata_writer__features_size(struct perfdata_writer *w, const struct perfdata_env *env);
/* The first failed write (-errno; the data stopped there), or 0. */
int perfdata_writer__error(const struct perfdata_writer *w);
/* PERF_RECORD_SAMPLE records in the data section (what perf report
 * --stats counts). */
__u64 perfdata_writer__samples(const struct perfdata_writer *w);

/* Bytes in the data section so far (what the status line shows). */
__u64 perfdata_writer__data_size(const struct perfdata_writer *w);
__u64 perfdata_writer__file_size(const struct perfdata_writer *w);

#endif
