/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pushing perf.data files into the store (docs/fleet.md, "Push"): each
 * file read and symbolized once, its samples summed per (10 s window,
 * cgroup, comm, pid, leaf build-id, stack), new stacks inserted, then the
 * sample rows under a fresh push id, then the file's row that commits
 * them.  A file already committed is skipped; a push that failed half-way
 * leaves rows no query counts, and the next attempt uses another push id.
 */
#ifndef PRECORD_FLEET_PUSH_H
#define PRECORD_FLEET_PUSH_H

#include <stddef.h>
#include <stdint.h>

struct fleet_push;

struct fleet_push_result {
	uint64_t samples;	/* CPU samples taken, of the file's records */
	uint64_t records;	/* CPU sample records (fewer with --aggregate) */
	uint64_t offcpu_samples;	/* offcpu-time samples read (event 'offcpu') */
	uint64_t rows;		/* sample rows inserted */
	uint64_t stacks;	/* stack rows inserted */
	uint64_t bytes;		/* request bytes sent */
	double ms;		/* wall time of the whole push */
	double read_ms, store_ms;	/* of which reading and symbolizing, and the store's requests */
	int attempts;		/* INSERTs of the sample rows */
};

/* host: the name in the store, NULL for each file's HOSTNAME (else this
 * machine's).  NULL after one line saying why (store down, no tables). */
struct fleet_push *fleet_push__new(const char *url, const char *host);
/* The same with attempts per request (see set_retry), the reason for a
 * NULL in why instead of on stderr. */
struct fleet_push *fleet_push__new_quiet(const char *url, const char *host, int attempts,
					 char *why, size_t n);
void fleet_push__free(struct fleet_push *p);
/* Seconds each request may take (default 60). */
void fleet_push__set_timeout(struct fleet_push *p, long secs);
/* Attempts of each request and the first wait (ms) before a retry; the
 * recorder's background pusher keeps them short and retries files later. */
void fleet_push__set_retry(struct fleet_push *p, int attempts, int first_ms);

/*
 * Push path.  0 pushed, 1 already in the store (nothing sent), -EAGAIN
 * the store could not be reached or was overloaded (try again later),
 * other -errno: this file cannot be pushed (unreadable, not perf.data,
 * refused by the server).  One line is printed for errors; with quiet
 * false one line for success too.
 */
int fleet_push__file(struct fleet_push *p, const char *path, struct fleet_push_result *r);
/* The last error's line (for a caller that reports it later). */
const char *fleet_push__error(const struct fleet_push *p);

#endif
