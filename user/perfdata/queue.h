/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The time-ordered queue of perf records the writer flushes: records are
 * queued with their timestamps as they arrive (a few runs already in time
 * order: one per ring buffer and per traced thread) and taken out in time
 * order, equal times in arrival order, up to a time.
 *
 * Taking out is two steps, so a write that fails loses nothing the queue
 * still held: __peek describes the records up to a time as one block of
 * bytes, __drop then removes them.
 */
#ifndef PRECORD_PERFDATA_QUEUE_H
#define PRECORD_PERFDATA_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct perfdata_queue;

struct perfdata_queue *perfdata_queue__new(void);	/* NULL + errno */
void perfdata_queue__free(struct perfdata_queue *q);	/* NULL-safe */

/*
 * Room for one record of size bytes (at most 4 GiB; the caller checks
 * what a record may be) with timestamp time, to be filled in before the
 * next call on q.  NULL: no memory (nothing is queued then).  This is
 * how records get into the queue without a copy.
 */
void *perfdata_queue__space(struct perfdata_queue *q, __u64 time, size_t size);

/* Records queued and not yet dropped. */
size_t perfdata_queue__nr(const struct perfdata_queue *q);

/* The queued records with time <= upto, in time order, back to back. */
struct perfdata_queue_batch {
	const void *data;
	size_t size;		/* bytes */
	size_t nr;		/* records */
	__u64 samples;		/* PERF_RECORD_SAMPLEs among them */
	bool copied;		/* data is scratch's: the caller may append to it */
};

/*
 * Describe the batch up to upto in b.  Records queued in time order are
 * described where they are (no copy); otherwise the queue sorts them and
 * copies the batch into scratch (reset first).  b stays valid until the
 * next call on q other than __drop.  0, or -ENOMEM (the queue is as it was,
 * possibly reordered).
 */
int perfdata_queue__peek(struct perfdata_queue *q, __u64 upto, struct pbuf *scratch,
			 struct perfdata_queue_batch *b);
/* Remove the records of the last __peek (nothing queued in between).
 * Cannot fail: __peek made the room this needs. */
void perfdata_queue__drop(struct perfdata_queue *q);

#endif
