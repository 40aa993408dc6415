// SPDX-License-Identifier: GPL-2.0
#include "store.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "fleet/hash.h"
#include "util/log.h"
#include "util/printable.h"

/*
 * ClickHouse 18.16: no Map, no codecs, no TTL.  Every table is partitioned
 * by day (retention = ALTER TABLE ... DROP PARTITION of old days, the same
 * days in the three tables).  The sort keys serve the queries: samples by
 * host and time first (a host-day is one range of the index), files by
 * (host, file_id) for the already-pushed check, stacks by hash for the
 * lookup and for ReplacingMergeTree to fold the copies several pushers
 * insert.  A files row's date is the day of its last sample, so a query
 * from a day D reads the files partitions from D on.
 */
static const char *const local_tables[][2] = {
	{ "precord_samples_local",
	  "(date Date DEFAULT toDate(window), window DateTime, host String, cgroup String, comm String, "
	  "pid UInt32, leaf_build_id String, stack_hash UInt64, count UInt64, "
	  "weight UInt64, file_id UInt64, push_id UInt64) "
	  "ENGINE = MergeTree PARTITION BY toYYYYMMDD(date) "
	  "ORDER BY (host, window, comm, pid, stack_hash)" },
	/* the stacks of precords before the SHA-256 keys: created for them
	 * while a fleet upgrades, never read (docs/fleet.md, "Whose frames") */
	{ "precord_stacks_local",
	  "(date Date DEFAULT toDate(seen), seen DateTime, stack_hash UInt64, symbols Array(String), dsos Array(String), "
	  "build_ids Array(String)) "
	  "ENGINE = ReplacingMergeTree PARTITION BY toYYYYMMDD(date) ORDER BY stack_hash" },
	/* whether a row's content is its key is part of the sort key: a row
	 * another writer inserts under a key with other frames never folds
	 * with (so never replaces) the row whose frames the key stands for */
	{ "precord_stacks2_local",
	  "(date Date DEFAULT toDate(seen), seen DateTime, stack_hash UInt64, symbols Array(String), dsos Array(String), "
	  "build_ids Array(String)) "
	  "ENGINE = ReplacingMergeTree PARTITION BY toYYYYMMDD(date) "
	  "ORDER BY (stack_hash, stack_hash = " FLEET_STACK_KEY_SQL ")" },
	{ "precord_files_local",
	  "(date Date DEFAULT toDate(last), host String, file_id UInt64, push_id UInt64, name String, "
	  "samples UInt64, weight UInt64, first DateTime, last DateTime, pushed_ns UInt64) "
	  "ENGINE = MergeTree PARTITION BY toYYYYMMDD(date) ORDER BY (host, file_id)" },
	/* every attempt to push a file, written before its sample rows: the
	 * rollups count every row inserted, and a query takes back the rows
	 * of the attempts that are not their file's first commit */
	{ "precord_pushes_local",
	  "(date Date DEFAULT toDate(last), host String, file_id UInt64, push_id UInt64, "
	  "first DateTime, last DateTime, started_ns UInt64) "
	  "ENGINE = MergeTree PARTITION BY toYYYYMMDD(date) ORDER BY (host, file_id)" },
};

/*
 * The hourly rollups (docs/fleet.md, "Rollups"), filled by materialized
 * views from every INSERT into the shard's samples table: per (hour,
 * event, stack) and per (hour, event, host, comm, cgroup).  An hour is
 * toDateTime(intDiv(window, 3600) * 3600): whole UTC hours whatever the
 * server's time zone.  The leaf build-id is the stack's leaf frame's, so
 * keeping it adds no row (the view takes any() of it rather than hashing
 * it: the views' GROUP BY is what an INSERT pays for them).  Sums are signed: retention takes back, before
 * dropping a raw day, what no commit counts (scripts/fleet-retention.sh).
 */
#define HOUR_SQL "toDateTime(intDiv(toUInt32(window), 3600) * 3600)"
static const char *const rollups[][5] = {
	{ "precord_hour_stacks_local",
	  "(date Date DEFAULT toDate(hour), hour DateTime, event String, stack_hash UInt64, "
	  "leaf_build_id String, count Int64, weight Int64) "
	  "ENGINE = SummingMergeTree((count, weight)) PARTITION BY toYYYYMMDD(date) "
	  "ORDER BY (hour, event, stack_hash, leaf_build_id)",
	  "precord_hour_stacks_mv",
	  "toDate(" HOUR_SQL ") AS date, " HOUR_SQL " AS hour, event, stack_hash, "
	  "any(leaf_build_id) AS leaf_build_id, "
	  "toInt64(sum(count)) AS count, toInt64(sum(weight)) AS weight FROM precord_samples_local",
	  " GROUP BY hour, event, stack_hash" },
	{ "precord_hour_hosts_local",
	  "(date Date DEFAULT toDate(hour), hour DateTime, event String, host String, comm String, "
	  "cgroup String, count AggregateFunction(sum, Int64), weight AggregateFunction(sum, Int64), "
	  "first AggregateFunction(min, DateTime), last AggregateFunction(max, DateTime)) "
	  "ENGINE = AggregatingMergeTree PARTITION BY toYYYYMMDD(date) "
	  "ORDER BY (hour, event, host, comm, cgroup)",
	  "precord_hour_hosts_mv",
	  "toDate(" HOUR_SQL ") AS date, " HOUR_SQL " AS hour, event, host, comm, cgroup, "
	  "sumState(toInt64(count)) AS count, sumState(toInt64(weight)) AS weight, minState(window) AS first, "
	  "maxState(window) AS last FROM precord_samples_local",
	  " GROUP BY hour, event, host, comm, cgroup" },
};

/* The backfill of a rollup made now: the committed rows of pushes from
 * before its view (no pushes row: an older precord's; or one started
 * before the view, the time in ns put in by create_rollups). */
#define BACKFILL_WHERE							\
	" WHERE (host, file_id, push_id) IN (SELECT host, file_id, argMin(push_id, pushed_ns) "	\
	"FROM precord_files_local GROUP BY host, file_id) AND (host, file_id, push_id) NOT IN "	\
	"(SELECT host, file_id, push_id FROM precord_pushes_local WHERE started_ns >= %llu)"

static const char *const dist_tables[][3] = {
	{ "precord_samples", "precord_samples_local", "cityHash64(host)" },
	{ "precord_stacks", "precord_stacks_local", "stack_hash" },
	{ "precord_stacks2", "precord_stacks2_local", "stack_hash" },
	{ "precord_files", "precord_files_local", "cityHash64(host)" },
	{ "precord_pushes", "precord_pushes_local", "cityHash64(host)" },
	{ "precord_hour_stacks", "precord_hour_stacks_local", "rand()" },
	{ "precord_hour_hosts", "precord_hour_hosts_local", "cityHash64(host)" },
};

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) > 200)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '-' || *s == '.' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

static int run(struct ch_conn *c, const char *sql, struct pbuf *out)
{
	int err = ch_conn__exec(c, sql, NULL, 0, out);

	if (err)
		pr_err("fleet-schema: %s", ch_conn__error(c));
	return err;
}

/* The SQL that tells whether table has column: 1 or 0. */
static char *column_sql(const char *table, const char *column)
{
	char *sql = NULL;

	if (asprintf(&sql, "SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = '%s' AND name = '%s'",
		     table, column) < 0)
		return NULL;
	return sql;
}

/*
 * A column added to a table made before it (ClickHouse 18.16 has no ADD
 * COLUMN IF NOT EXISTS: system.columns is asked first): the samples'
 * event (docs/offcpu.md, "Fleet"), whose old rows read as 'cpu'; the
 * files' records, whose old rows read as their samples (which were
 * records before the counts became samples).
 */
static int add_column(struct ch_conn *c, const char *table, const char *column,
		      const char *type, struct pbuf *out)
{
	char *sql = column_sql(table, column);
	int err;

	if (!sql)
		return -ENOMEM;
	err = run(c, sql, out);
	free(sql);
	if (err || atoi((char *)out->data) > 0)
		return err;
	if (asprintf(&sql, "ALTER TABLE %s ADD COLUMN %s %s", table, column, type) < 0)
		return -ENOMEM;
	err = run(c, sql, out);
	free(sql);
	return err;
}

static int add_columns(struct ch_conn *c, bool dist, struct pbuf *out)
{
	int err = add_column(c, dist ? "precord_samples" : "precord_samples_local", "event",
			     "String DEFAULT 'cpu'", out);

	if (!err)
		err = add_column(c, dist ? "precord_files" : "precord_files_local", "records",
				 "UInt64 DEFAULT samples", out);
	return err;
}

/* Whether the server has table: 1, 0, or -errno. */
static int has_table(struct ch_conn *c, const char *table, struct pbuf *out)
{
	char *sql = NULL;
	int err;

	if (asprintf(&sql, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = '%s'",
		     table) < 0)
		return -ENOMEM;
	err = run(c, sql, out);
	free(sql);
	return err ? err : atoi((char *)out->data) > 0;
}

/*
 * The rollups and their views; a rollup table made now is filled from
 * the store's committed rows from before (the backfill).  The view comes
 * first, so that no push between the two is missed; pushes by this
 * precord have a pushes row and are left to the view.
 */
static int create_rollups(struct ch_conn *c, struct pbuf *out)
{
	char *sql = NULL;
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(rollups) / sizeof(rollups[0]); i++) {
		int had = has_table(c, rollups[i][0], out);
		unsigned long long since;

		if (had < 0)
			return had;
		if (asprintf(&sql, "CREATE TABLE IF NOT EXISTS %s %s", rollups[i][0], rollups[i][1]) < 0)
			return -ENOMEM;
		err = run(c, sql, out);
		free(sql);
		/* the server's clock: pushes started from now on go through the view */
		if (!err && !had)
			err = run(c, "SELECT toUInt64(now()) * 1000000000", out);
		since = err || had ? 0 : strtoull((char *)out->data, NULL, 10);
		if (!err && asprintf(&sql, "CREATE MATERIALIZED VIEW IF NOT EXISTS %s TO %s AS SELECT %s%s",
				     rollups[i][2], rollups[i][0], rollups[i][3], rollups[i][4]) < 0)
			return -ENOMEM;
		if (!err)
			err = run(c, sql, out);
		free(sql);
		if (err || had)
			continue;
		if (asprintf(&sql, "INSERT INTO %s SELECT %s" BACKFILL_WHERE "%s", rollups[i][0],
			     rollups[i][3], since, rollups[i][4]) < 0)
			return -ENOMEM;
		err = run(c, sql, out);
		free(sql);
		if (err)
			pr_err("fleet-schema: filling %s from the rows already stored failed: drop it and %s (DROP TABLE) and run fleet-schema again",
			       rollups[i][0], rollups[i][2]);
	}
	return err;
}

int fleet_store__create(struct ch_conn *c, const char *cluster)
{
	struct pbuf out = { 0 }, q = { 0 };
	char *sql = NULL;
	int err = 0;

	if (cluster) {
		if (!valid_name(cluster)) {
			pr_err("fleet-schema: bad cluster name '%s': letters, digits, '_', '-', '.'",
			       cluster);
			return -EINVAL;
		}
		ch_quote(&q, cluster);
		pbuf_put_u8(&q, 0);
		if (q.err || asprintf(&sql, "SELECT count() FROM system.clusters WHERE cluster = %s",
				      (char *)q.data) < 0) {
			err = -ENOMEM;
			goto out;
		}
		err = run(c, sql, &out);
		if (err)
			goto out;
		if (atoi((char *)out.data) == 0) {
			pr_err("fleet-schema: %s has no cluster '%s' in its remote_servers: add it to its config.xml, or leave out --cluster",
			       ch_conn__url(c), cluster);
			err = -ENOENT;
			goto out;
		}
	}
	for (size_t i = 0; !err && i < sizeof(local_tables) / sizeof(local_tables[0]); i++) {
		free(sql);
		sql = NULL;
		if (asprintf(&sql, "CREATE TABLE IF NOT EXISTS %s %s", local_tables[i][0],
			     local_tables[i][1]) < 0)
			err = -ENOMEM;
		else
			err = run(c, sql, &out);
	}
	if (!err)
		err = add_columns(c, false, &out);
	if (!err)
		err = create_rollups(c, &out);
	for (size_t i = 0; cluster && !err && i < sizeof(dist_tables) / sizeof(dist_tables[0]); i++) {
		free(sql);
		sql = NULL;
		if (asprintf(&sql, "CREATE TABLE IF NOT EXISTS %s AS %s ENGINE = Distributed(%s, currentDatabase(), %s, %s)",
			     dist_tables[i][0], dist_tables[i][1], (char *)q.data, dist_tables[i][1],
			     dist_tables[i][2]) < 0)
			err = -ENOMEM;
		else
			err = run(c, sql, &out);
	}
	/* a Distributed table made before a column: made AS the local
	 * table, a new one already has it */
	if (cluster && !err)
		err = add_columns(c, true, &out);
out:
	if (err == -ENOMEM)
		pr_err("fleet-schema: out of memory");
	free(sql);
	pbuf_free(&q);
	pbuf_free(&out);
	return err;
}

int fleet_store__open(struct fleet_store *s, const char *url, int attempts, char *why, size_t n)
{
	struct pbuf out = { 0 };
	bool rollups_there;
	char *sql;
	int err;

	memset(s, 0, sizeof(*s));
	s->conn = ch_conn__new(url);
	if (!s->conn) {
		char shown[PRINTABLE_MAX];

		snprintf(why, n, "bad store URL '%s': give http://HOST:PORT/ of a ClickHouse server's HTTP interface",
			 printable_url(shown, sizeof(shown), url));
		return -EINVAL;
	}
	ch_conn__set_retry(s->conn, attempts, 500);
	err = ch_conn__exec(s->conn,
			    "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'precord\\\\_%' ORDER BY name FORMAT TabSeparated",
			    NULL, 0, &out);
	if (err) {
		snprintf(why, n, "%s", ch_conn__error(s->conn));
		goto fail;
	}
	if (strstr((char *)out.data, "precord_samples_local\n") &&
	    strstr((char *)out.data, "precord_files_local\n") &&
	    !strstr((char *)out.data, "precord_stacks2_local\n")) {
		snprintf(why, n, "%s has the tables of an older precord: run `precord fleet-schema %s [--cluster NAME]` again on every server (it adds precord_stacks2, whose stacks a query can verify; docs/fleet.md)",
			 ch_conn__url(s->conn), ch_conn__url(s->conn));
		err = -ENOENT;
		goto fail;
	}
	if (!strstr((char *)out.data, "precord_samples_local\n") ||
	    !strstr((char *)out.data, "precord_stacks2_local\n") ||
	    !strstr((char *)out.data, "precord_files_local\n")) {
		snprintf(why, n, "%s has no precord tables: create them with `precord fleet-schema %s [--cluster NAME]`",
			 ch_conn__url(s->conn), ch_conn__url(s->conn));
		err = -ENOENT;
		goto fail;
	}
	s->distributed = strstr((char *)out.data, "precord_samples\n") &&
			 strstr((char *)out.data, "precord_stacks2\n") &&
			 strstr((char *)out.data, "precord_files\n");
	/* the rollups need every pusher to write pushes rows: a store with
	 * the views but a Distributed table missing is not read through them */
	rollups_there = strstr((char *)out.data, "precord_pushes_local\n") &&
			strstr((char *)out.data, "precord_hour_stacks_local\n") &&
			strstr((char *)out.data, "precord_hour_hosts_local\n") &&
			(!s->distributed || (strstr((char *)out.data, "precord_pushes\n") &&
					     strstr((char *)out.data, "precord_hour_stacks\n") &&
					     strstr((char *)out.data, "precord_hour_hosts\n")));
	s->samples = s->distributed ? "precord_samples" : "precord_samples_local";
	s->stacks = s->distributed ? "precord_stacks2" : "precord_stacks2_local";
	s->files = s->distributed ? "precord_files" : "precord_files_local";
	s->pushes = s->distributed ? "precord_pushes" : "precord_pushes_local";
	s->hour_stacks = s->distributed ? "precord_hour_stacks" : "precord_hour_stacks_local";
	s->hour_hosts = s->distributed ? "precord_hour_hosts" : "precord_hour_hosts_local";
	if (asprintf(&sql, "SELECT count() FROM system.columns WHERE database = currentDatabase() AND ((table = '%s' AND name = 'event') OR (table = '%s' AND name = 'records'))",
		     s->samples, s->files) < 0)
		sql = NULL;
	err = sql ? ch_conn__exec(s->conn, sql, NULL, 0, &out) : -ENOMEM;
	free(sql);
	if (err) {
		snprintf(why, n, "%s", err == -ENOMEM ? "out of memory" : ch_conn__error(s->conn));
		goto fail;
	}
	if (atoi((char *)out.data) != 2 || !rollups_there) {
		snprintf(why, n, "%s has the tables of an older precord: run `precord fleet-schema %s [--cluster NAME]` again on every server (it adds the samples' event column for off-CPU time, the files' records, the hourly rollups; docs/fleet.md)",
			 ch_conn__url(s->conn), ch_conn__url(s->conn));
		err = -ENOENT;
		goto fail;
	}
	pbuf_free(&out);
	return 0;
fail:
	pbuf_free(&out);
	ch_conn__free(s->conn);
	s->conn = NULL;
	return err;
}

void fleet_store__close(struct fleet_store *s)
{
	ch_conn__free(s->conn);
	s->conn = NULL;
}

static void schema_usage(FILE *f)
{
	fputs("usage: precord fleet-schema URL [--cluster NAME]\n"
	      "Create precord's tables on the ClickHouse server at URL (its HTTP\n"
	      "interface, http://HOST:8123/); with --cluster also the Distributed\n"
	      "tables over the cluster NAME of that server's remote_servers.  Run it\n"
	      "once on every server of the cluster; running it again changes nothing.\n"
	      "On a store made by an older precord it adds what is missing: the hourly\n"
	      "rollups (filled from the rows already stored) and their views, the\n"
	      "pushes table, new columns.  Retention: scripts/fleet-retention.sh.\n"
	      CH_CREDENTIALS_HELP,
	      f);
}

int fleet_schema_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cluster = NULL;
	struct ch_conn *c;
	int opt, err;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (opt == 'c') {
			cluster = optarg;
		} else if (opt == 'h') {
			schema_usage(stdout);
			return 0;
		} else {
			pr_err("fleet-schema: unknown option or missing argument '%s' (see precord fleet-schema --help)",
			       argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		pr_err("fleet-schema: give one URL (see precord fleet-schema --help)");
		return 2;
	}
	c = ch_conn__new(argv[optind]);
	if (!c) {
		char shown[PRINTABLE_MAX];

		pr_err("fleet-schema: bad URL '%s': give http://HOST:PORT/ of a ClickHouse server",
		       printable_url(shown, sizeof(shown), argv[optind]));
		return 2;
	}
	ch_conn__set_retry(c, 3, 300);
	err = fleet_store__create(c, cluster);
	ch_conn__free(c);
	return err ? 1 : 0;
}
