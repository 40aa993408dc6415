/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which of the store's samples a query reads: the filters of `precord
 * query` (host, comm, cgroup, leaf build-id, event, a time range) and the
 * SQL WHERE clause they make.
 */
#ifndef PRECORD_FLEET_SELECTION_H
#define PRECORD_FLEET_SELECTION_H

#include <stdbool.h>
#include <time.h>

struct pbuf;

struct fleet_sel {
	const char *host, *comm, *cgroup;
	const char *build_id;	/* the leaf frame's DSO build-id (hex) */
	time_t since, until;	/* [since, until) in UTC seconds; 0 = open */
	bool offcpu;		/* event 'offcpu' rather than 'cpu' */
	const char *by;		/* --by: "host", "comm" or "cgroup"; NULL: host */
};

/* The columns fleet_sel__filters may use. */
#define FLEET_SEL_HOST		1u
#define FLEET_SEL_COMM		2u
#define FLEET_SEL_CGROUP	4u
#define FLEET_SEL_BUILD_ID	8u
#define FLEET_SEL_EVENT		16u
#define FLEET_SEL_ALL		31u

/*
 * A time given to --since/--until: a duration back from NOW (90s, 30m,
 * 6h, 7d, 2w) or an absolute UTC time (2026-11-27, 2026-11-27T10:00,
 * 2026-11-27T10:00:05, a space for the T and a trailing Z allowed).
 * -EINVAL if it is neither.
 */
int fleet_sel__parse_time(const char *s, time_t now, time_t *out);

/* A build-id as the store keeps it: 2..40 hex digits, lower case. */
bool fleet_sel__valid_build_id(const char *s);

/*
 * The baseline of `query --diff SPEC`: sel changed by SPEC, comma-separated
 * KEY=VALUE with the keys host, comm, cgroup, build-id, since and until,
 * values as the options take them (times against NOW); an empty value
 * clears that filter; "\," is a comma and "\\" a backslash in a value.
 * SPEC is unescaped in place and sel points into it (argv outlives the
 * query).  On a bad SPEC sel is unchanged and -EINVAL comes with one line
 * in why (an unknown or repeated key, a bad value, an empty time range).
 */
int fleet_sel__override(struct fleet_sel *sel, char *spec, time_t now, char *why, size_t size);

/*
 * The WHERE clause of the samples (NUL-terminated in W).  COMMITTED:
 * only rows of pushes the files table commits (the first complete push
 * of each file), checked on each shard with its own files.
 */
int fleet_sel__where(const struct fleet_sel *sel, bool committed, struct pbuf *w);

/* " AND event = ... AND host = ..." of the filters on COLS, appended
 * to W (not terminated). */
int fleet_sel__filters(const struct fleet_sel *sel, unsigned int cols, struct pbuf *w);

/* One line for titles: "all hosts", "host h1, comm app, 2026-...–..." */
void fleet_sel__describe(const struct fleet_sel *sel, char *buf, size_t size);

#endif
