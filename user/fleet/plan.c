// SPDX-License-Identifier: GPL-2.0
/*
 * Which tables answer a selection (docs/fleet.md, "Rollups"): the hourly
 * rollups for the whole hours of the range when the filters are columns
 * of the rollup, the raw samples for the rest (the edges of a range that
 * does not start or end on the hour, and every filter a rollup lacks).
 *
 * The rollups' views count every row inserted, committed or not.  What
 * is not a file's first commit is taken back: the rows of the push
 * attempts (precord_pushes, written before an attempt's rows) that are
 * not their file's first commit (precord_files), subtracted for the
 * stacks; for the per-host sums, whose first and last windows cannot be
 * subtracted, such a host is read raw.  Both sets are built on each
 * shard from its own tables (a host's pushes, files and rows share a
 * shard) and are empty but for pushes in flight or failed.
 */
#include "plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/http.h"
#include "fleet/selection.h"
#include "fleet/store.h"
#include "util/buf.h"

#define HOUR	3600

__attribute__((format(printf, 2, 3)))
static void put_fmt(struct pbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		b->err = b->err ? b->err : -ENOMEM;
	else
		pbuf_put(b, tmp, (size_t)n);
}

static void put_str(struct pbuf *b, const char *s)
{
	pbuf_put(b, s, strlen(s));
}

/* The WHERE of sel's rows in [since, until) (0: open), NUL dropped. */
static void put_where(struct pbuf *b, const struct fleet_sel *sel, time_t since, time_t until,
		      bool committed)
{
	struct fleet_sel r = *sel;
	struct pbuf w = { 0 };

	r.since = since;
	r.until = until;
	if (fleet_sel__where(&r, committed, &w))
		b->err = -ENOMEM;
	else
		pbuf_put(b, w.data, w.len - 1);
	pbuf_free(&w);
}

/* The hours [a, b) (b 0: open) of a rollup, with sel's filters on cols. */
static void put_hours(struct pbuf *b, const struct fleet_sel *sel, time_t a, time_t z,
		      unsigned int cols)
{
	put_fmt(b, "hour >= toDateTime(%lld) AND date >= toDate(toDateTime(%lld))",
		(long long)a, (long long)a);
	if (z)
		put_fmt(b, " AND hour < toDateTime(%lld) AND date <= toDate(toDateTime(%lld))",
			(long long)z, (long long)z);
	fleet_sel__filters(sel, cols, b);
}

/*
 * The hosts of this shard that may have an attempt that is not a first
 * commit, from files of days from a's on: those whose attempts (pushes
 * rows), commits (files rows) and committed files do not all count the
 * same, or whose attempts' and commits' push ids differ (a sum of their
 * hashes).  Equal everywhere, every attempt is its file's one commit.  It
 * reads a host's rows once, grouped by host: the exact set below groups
 * by (host, file), and on a fleet-day (288,000 files for 1,000 hosts)
 * that took 0.3 s a shard, for a set that is empty but for pushes in
 * flight or failed.  Files of older precords (no pushes row) make their
 * host's days read exactly, as before.
 */
static void put_uneven_hosts(struct pbuf *b, const struct fleet_sel *sel, time_t a)
{
	put_fmt(b, "SELECT host FROM (SELECT host, count() AS n, sum(cityHash64(push_id)) AS hp FROM precord_pushes_local WHERE date >= toDate(toDateTime(%lld))",
		(long long)a);
	fleet_sel__filters(sel, FLEET_SEL_HOST, b);
	put_fmt(b, " GROUP BY host) ANY FULL OUTER JOIN (SELECT host, count() AS m, uniqExact(file_id) AS u, sum(cityHash64(push_id)) AS hf FROM precord_files_local WHERE date >= toDate(toDateTime(%lld))",
		(long long)a);
	fleet_sel__filters(sel, FLEET_SEL_HOST, b);
	put_str(b, " GROUP BY host) USING host WHERE n != m OR m != u OR hp != hf");
}

/* " IN (the first commits of the uneven hosts' files from a's day on)" */
static void put_uneven_first_commits(struct pbuf *b, const struct fleet_sel *sel, time_t a)
{
	put_fmt(b, " IN (SELECT host, file_id, argMin(push_id, pushed_ns) FROM precord_files_local WHERE date >= toDate(toDateTime(%lld))",
		(long long)a);
	fleet_sel__filters(sel, FLEET_SEL_HOST, b);
	put_str(b, " AND host IN (");
	put_uneven_hosts(b, sel, a);
	put_str(b, ") GROUP BY host, file_id)");
}

/*
 * The push attempts with rows in [a, b) that are not their file's first
 * commit, on this shard: (host, file_id, push_id), or the hosts alone;
 * only the uneven hosts' files are grouped.
 */
static void put_not_counted(struct pbuf *b, const struct fleet_sel *sel, time_t a, time_t z,
			    bool hosts)
{
	put_fmt(b, "SELECT %s FROM precord_pushes_local WHERE date >= toDate(toDateTime(%lld))",
		hosts ? "host" : "host, file_id, push_id", (long long)a);
	if (z)
		put_fmt(b, " AND first < toDateTime(%lld)", (long long)z);
	fleet_sel__filters(sel, FLEET_SEL_HOST, b);
	put_str(b, " AND host IN (");
	put_uneven_hosts(b, sel, a);
	put_str(b, ") AND (host, file_id, push_id) NOT");
	put_uneven_first_commits(b, sel, a);
}

/*
 * " UNION ALL SELECT cols FROM samples WHERE ... group" of the raw rows
 * in [a, z) of the attempts that are not a first commit (by_host: the
 * committed rows of the hosts that have such an attempt).
 */
static void put_nc_rows(struct pbuf *b, const struct fleet_sel *sel, time_t a, time_t z,
			const struct fleet_store *s, const char *cols, bool by_host, const char *group)
{
	put_fmt(b, " UNION ALL SELECT %s FROM %s WHERE ", cols, s->samples);
	/* by host: the committed rows, of the uneven hosts' files only */
	put_where(b, sel, a, z, false);
	if (by_host) {
		put_str(b, " AND (host, file_id, push_id)");
		put_uneven_first_commits(b, sel, a);
	}
	put_str(b, by_host ? " AND host IN (" : " AND (host, file_id, push_id) IN (");
	put_not_counted(b, sel, a, z, by_host);
	put_str(b, ")");
	put_str(b, group);
}

/*
 * The whole hours [*a, *z) of sel's range a rollup can answer (*z 0:
 * open), false when there are none or the rollups are off
 * (PRECORD_FLEET_ROLLUP=0: every answer from the raw rows, to check).
 */
static bool whole_hours(const struct fleet_store *s, const struct fleet_sel *sel, time_t *a,
			time_t *z)
{
	const char *env = getenv("PRECORD_FLEET_ROLLUP");

	if (!s->hour_stacks || (env && !strcmp(env, "0")))
		return false;
	*a = sel->since ? (sel->since + HOUR - 1) / HOUR * HOUR : 0;
	*z = sel->until ? sel->until / HOUR * HOUR : 0;
	return !sel->until || *a < *z;
}

/* The raw edges of the range outside [a, z): SELECT ... FROM samples
 * WHERE <edge, committed> GROUP BY key, each after " UNION ALL ". */
static void put_edges(struct pbuf *b, const struct fleet_store *s, const struct fleet_sel *sel,
		      time_t a, time_t z, const char *cols, const char *group)
{
	if (sel->since && sel->since < a) {
		put_fmt(b, " UNION ALL SELECT %s FROM %s WHERE ", cols, s->samples);
		put_where(b, sel, sel->since, a, true);
		put_str(b, group);
	}
	if (sel->until && z < sel->until) {
		put_fmt(b, " UNION ALL SELECT %s FROM %s WHERE ", cols, s->samples);
		put_where(b, sel, z, sel->until, true);
		put_str(b, group);
	}
}

static int finish(struct pbuf *b)
{
	return pbuf_put_u8(b, 0) ? -ENOMEM : b->err;
}

#define RAW_STACK_COLS	"stack_hash, toInt64(sum(count)) AS c, toInt64(sum(weight)) AS w"

/* Whether the stacks rollup answers sel (whole hours [*a, *z)): it has
 * no host, comm or cgroup. */
static bool stack_hours(const struct fleet_store *s, const struct fleet_sel *sel, time_t *a,
			time_t *z)
{
	return !sel->host && !sel->comm && !sel->cgroup && whole_hours(s, sel, a, z);
}

/* SELECT cols FROM the raw samples WHERE sel's range and filters. */
static void put_raw(struct pbuf *b, const struct fleet_store *s, const struct fleet_sel *sel,
		    const char *cols, bool committed)
{
	put_fmt(b, "SELECT %s FROM %s WHERE ", cols, s->samples);
	put_where(b, sel, sel->since, sel->until, committed);
}

int fleet_plan__stack_sums(const struct fleet_store *s, const struct fleet_sel *sel,
			   struct pbuf *b)
{
	time_t a, z;

	if (!stack_hours(s, sel, &a, &z)) {
		put_raw(b, s, sel, "stack_hash, sum(count), sum(weight)", true);
		put_str(b, " GROUP BY stack_hash ORDER BY stack_hash");
		return finish(b);
	}
	put_fmt(b, "SELECT stack_hash, toUInt64(sum(c)), toUInt64(greatest(sum(w), 0)) FROM (SELECT " RAW_STACK_COLS " FROM %s WHERE ",
		s->hour_stacks);
	put_hours(b, sel, a, z, FLEET_SEL_EVENT | FLEET_SEL_BUILD_ID);
	/* taken back: rows of attempts that are not a first commit */
	put_str(b, " GROUP BY stack_hash");
	put_nc_rows(b, sel, a, z, s, "stack_hash, -toInt64(sum(count)) AS c, -toInt64(sum(weight)) AS w",
		    false, " GROUP BY stack_hash");
	put_edges(b, s, sel, a, z, RAW_STACK_COLS, " GROUP BY stack_hash");
	put_str(b, ") GROUP BY stack_hash HAVING sum(c) > 0 ORDER BY stack_hash");
	return finish(b);
}

int fleet_plan__stack_keys(const struct fleet_store *s, const struct fleet_sel *sel,
			   struct pbuf *b)
{
	time_t a, z;

	if (stack_hours(s, sel, &a, &z)) {
		put_fmt(b, "SELECT stack_hash FROM %s WHERE ", s->hour_stacks);
		put_hours(b, sel, a, z, FLEET_SEL_EVENT | FLEET_SEL_BUILD_ID);
		put_edges(b, s, sel, a, z, "stack_hash", "");
	} else {
		put_raw(b, s, sel, "stack_hash", false);
	}
	return finish(b);
}

static const char *by_column(const struct fleet_sel *sel)
{
	return sel->by ? sel->by : "host";
}

int fleet_plan__group_sums(const struct fleet_store *s, const struct fleet_sel *sel,
			   struct pbuf *b)
{
	const char *g = by_column(sel);
	char cols[160];
	time_t a, z;

	/* the per-host rollup has no leaf build-id */
	if (sel->build_id || !whole_hours(s, sel, &a, &z)) {
		snprintf(cols, sizeof(cols),
			 "%s, sum(count), toUInt32(min(window)), toUInt32(max(window)), sum(weight)", g);
		put_raw(b, s, sel, cols, true);
		put_fmt(b, " GROUP BY %s ORDER BY %s", g, g);
		return finish(b);
	}
	snprintf(cols, sizeof(cols),
		 "%s AS g, toInt64(sum(count)) AS c, min(window) AS f, max(window) AS l, toInt64(sum(weight)) AS w",
		 g);
	put_fmt(b, "SELECT g, toUInt64(sum(c)), toUInt32(min(f)), toUInt32(max(l)), toUInt64(greatest(sum(w), 0)) FROM (SELECT %s AS g, toInt64(sumMerge(count)) AS c, minMerge(first) AS f, maxMerge(last) AS l, toInt64(sumMerge(weight)) AS w FROM %s WHERE ",
		g, s->hour_hosts);
	put_hours(b, sel, a, z, FLEET_SEL_EVENT | FLEET_SEL_HOST | FLEET_SEL_COMM | FLEET_SEL_CGROUP);
	/* a host with an attempt that is not a first commit: raw, since
	 * its first and last windows cannot be taken back */
	put_str(b, " AND host NOT IN (");
	put_not_counted(b, sel, a, z, true);
	put_str(b, ") GROUP BY g");
	put_nc_rows(b, sel, a, z, s, cols, true, " GROUP BY g");
	put_edges(b, s, sel, a, z, cols, " GROUP BY g");
	put_str(b, ") GROUP BY g HAVING sum(c) > 0 ORDER BY g");
	return finish(b);
}
