/* SPDX-License-Identifier: GPL-2.0 */
/*
 * precord's tables in ClickHouse (docs/fleet.md, "Schema"): their names,
 * their creation (precord fleet-schema) and which of them a server has.
 *
 *   precord_samples_local  one row per (host, 10 s window, cgroup, comm,
 *                          pid, leaf build-id, stack): count and weight,
 *                          and the (file_id, push_id) that inserted it
 *   precord_stacks2_local  a stack once per day by its key (the SHA-256
 *                          of its content, fleet/hash.h): symbols, DSOs
 *                          and build-ids, leaf first (ReplacingMergeTree)
 *   precord_stacks_local   the same under the old unverifiable hash, for
 *                          precords before the keys; not read
 *   precord_files_local    one row per pushed file: the commit mark
 *   precord_pushes_local   one row per push attempt, before its rows
 *   precord_hour_stacks_local, precord_hour_hosts_local
 *                          hourly rollups (materialized views of every
 *                          samples INSERT) per stack, per host/comm/cgroup
 *   precord_samples, precord_stacks2, precord_stacks, precord_files
 *                          the Distributed tables over them (--cluster)
 *
 * A sample row counts only when its (host, file_id, push_id) is the first
 * commit of its file in precord_files: a file is counted once whatever
 * failed or ran twice on the way.
 */
#ifndef PRECORD_FLEET_STORE_H
#define PRECORD_FLEET_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "fleet/http.h"

/* The time resolution of the samples table (a window's start). */
#define FLEET_WINDOW_SECS	10

struct fleet_store {
	struct ch_conn *conn;
	bool distributed;	/* the Distributed tables exist: read and write them */
	const char *samples, *stacks, *files;	/* the tables to use */
	const char *pushes;		/* every push attempt (before its rows) */
	const char *hour_stacks, *hour_hosts;	/* the hourly rollups */
};

/* Connect to url and find precord's tables (attempts: see
 * ch_conn__set_retry); 0, or -errno with one line in why that says what
 * to do (no tables: run fleet-schema). */
int fleet_store__open(struct fleet_store *s, const char *url, int attempts, char *why, size_t n);
void fleet_store__close(struct fleet_store *s);

/* Create the tables (and with cluster the Distributed ones); 0 or -errno
 * after one line. */
int fleet_store__create(struct ch_conn *c, const char *cluster);


#endif
