/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A rotating recording (--switch-output): the switch from one file to the
 * next, and what becomes of the finished files.
 *
 * Switch at t (one past the last flush's mark: every record with time
 * < t has been read from the rings, and goes to the old file, the rest
 * to the new one).  The old file is renamed first, so the new one takes
 * -o's name; its head is the kernel's MMAPs synthesized at the start and
 * the state tracked of the live processes at t (proc_state), so each
 * file stands alone.  The rings are not read during the switch
 * (docs/benchmarks.md: how long it takes, what the ring holds).  After
 * it, the processes that exited before t are forgotten by the DSO table
 * and the JIT sources.
 *
 * A finished file is announced in one place: a line with its path on
 * stdout (scripts read it: `precord ... | while read f`), --push hands it
 * to the fleet pusher, --switch-max-files removes the oldest (and the JIT
 * images only they named).
 *
 * What only the recording knows it is asked through hooks.
 */
#ifndef PRECORD_RECORD_ROTATION_H
#define PRECORD_RECORD_ROTATION_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "opts.h"

struct rotation;
struct output;
struct proc_state;
struct dso_table;
struct jit_sources;
struct file_features;

struct rotation_hooks {
	void *ctx;
	/* Right before the switch at t: what is kept back from the writer
	 * is queued now, with times < t, to go into the finishing file. */
	int (*before)(void *ctx, __u64 t);
	/* The new file is the recording's output now, to take the records
	 * from the switch on: its attrs and the room of its features. */
	int (*begin)(void *ctx);
};

struct rotation_config {
	const struct prec_opts *o;	/* -o, --switch-*, --push, --host */
	__u64 id_type;			/* the records' trailers */
	struct dso_table *dt;		/* forgets the exited; a new file */
	struct jit_sources *jit;	/* the same, its mappings before the switch
					 * queued, its images pruned; NULL: none */
	struct file_features *ff;	/* each finished file's */
	struct rotation_hooks hooks;
};

/* *out: NULL when the options ask for one file.  The TIME switches
 * count from now_ns until rotation__start.  0 or -ENOMEM. */
int rotation__new(struct rotation **out, const struct rotation_config *cfg, __u64 now_ns);
/* Pending pushes are dropped (rotation__wait_pushes waits).  NULL-safe. */
void rotation__free(struct rotation *r);

/* The tracked state of the live processes (NULL-safe: NULL). */
struct proc_state *rotation__state(const struct rotation *r);
/* The kernel's records synthesized at the start (len bytes): every new
 * file repeats them.  NULL-safe. */
int rotation__keep_kernel(struct rotation *r, const void *buf, size_t len);
/* The records of the first file's head, to the tracked state.  NULL-safe. */
int rotation__records(struct rotation *r, const void *buf, size_t len);

/* The recording starts (now, CLOCK_MONOTONIC): the TIME switches count
 * from here.  NULL-safe. */
void rotation__start(struct rotation *r, __u64 now_ns);
/* Each round of the recording, at now_ns: if the current file *out is
 * to be finished (its time is up, its data reached the size, or a
 * switch was asked by a signal), the switch at t: *out finished and
 * announced, a new one in its place.  On failure (said) *out is still a
 * file to write (the old one, if no new one could be created).
 * NULL-safe: 0. */
int rotation__round(struct rotation *r, struct output **out, __u64 now_ns, __u64 t);

/* The last file, out, gets its timestamped name too (as perf names it)
 * and is announced.  NULL-safe: 0. */
int rotation__finish(struct rotation *r, struct output *out);
/* --push: wait a bounded time for the pending pushes, say what was not
 * delivered.  NULL-safe. */
void rotation__wait_pushes(struct rotation *r);

#endif
