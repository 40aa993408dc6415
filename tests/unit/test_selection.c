// SPDX-License-Identifier: GPL-2.0
/* query's selection: --since/--until times and the WHERE clause. */
#include "harness.h"

#include <errno.h>

#include <linux/perf_event.h>
#include <stdlib.h>

#include "fleet/plan.h"
#include "fleet/selection.h"
#include "fleet/store.h"
#include "report/profile.h"
#include "util/buf.h"

TEST(times)
{
	time_t now = 1795000000, t = 0;	/* 2026-11-18T11:06:40Z */

	CHECK(!fleet_sel__parse_time("2026-11-27", now, &t) && t == 1795737600);
	CHECK(!fleet_sel__parse_time("2026-11-27T10:00", now, &t) && t == 1795737600 + 36000);
	CHECK(!fleet_sel__parse_time("2026-11-27 10:00:05Z", now, &t) && t == 1795737600 + 36005);
	CHECK(!fleet_sel__parse_time("1970-01-01", now, &t) && t == 0);
	CHECK(!fleet_sel__parse_time("2024-02-29T23:59:59", now, &t) && t == 1709251199);
	CHECK(!fleet_sel__parse_time("90s", now, &t) && t == now - 90);
	CHECK(!fleet_sel__parse_time("6h", now, &t) && t == now - 6 * 3600);
	CHECK(!fleet_sel__parse_time("2w", now, &t) && t == now - 14 * 86400);
	CHECK(!fleet_sel__parse_time("1e11d", now, &t) && t == 1);	/* before 1970: all */
	t = 42;
	CHECK(fleet_sel__parse_time("", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("0s", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("-5m", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("5y", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("2026-13-01", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("2026-02-30", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("2026-11-27T25:00", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("2026-11-27T10", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("2026-11-27T10:00junk", now, &t) == -EINVAL);
	CHECK(fleet_sel__parse_time("26-11-27", now, &t) == -EINVAL);
	CHECK(t == 42);
}

TEST(build_ids)
{
	CHECK(fleet_sel__valid_build_id("0123456789abcdef0123456789abcdef01234567"));
	CHECK(!fleet_sel__valid_build_id("0123456789abcdef0123456789abcdef012345678"));
	CHECK(!fleet_sel__valid_build_id("ABCD"));
	CHECK(!fleet_sel__valid_build_id("ab'; DROP"));
	CHECK(!fleet_sel__valid_build_id("a"));
}

static char *where(const struct fleet_sel *s, bool committed)
{
	struct pbuf w = { 0 };

	CHECK(!fleet_sel__where(s, committed, &w));
	return (char *)w.data;
}

TEST(where_clause)
{
	struct fleet_sel s = { .host = "h'1", .since = 86400, .until = 2 * 86400 + 5,
			       .build_id = "abcd" };
	char *w = where(&s, false);

	CHECK(strstr(w, "window >= toDateTime(86400)"));
	CHECK(strstr(w, "window < toDateTime(172805)"));
	CHECK(strstr(w, "host = 'h\\'1'"));
	CHECK(strstr(w, "leaf_build_id = 'abcd'"));
	CHECK(strstr(w, "event = 'cpu'"));
	CHECK(!strstr(w, "precord_files_local"));
	free(w);
	s.offcpu = true;
	s.until = 0;
	w = where(&s, true);
	CHECK(strstr(w, "event = 'offcpu'"));
	CHECK(!strstr(w, "window <"));
	CHECK(strstr(w, "precord_files_local"));
	free(w);
}

TEST(describe)
{
	struct fleet_sel s = { 0 };
	char b[400];

	fleet_sel__describe(&s, b, sizeof(b));
	CHECK(!strcmp(b, "all hosts"));
	s.host = "h1";
	s.comm = "app";
	s.since = 1795737600;
	fleet_sel__describe(&s, b, sizeof(b));
	CHECK(!strcmp(b, "host h1, comm app, 2026-11-27T00:00:00Z to now"));
}

/* The store as fleet_store__open finds a cluster with the rollups. */
static const struct fleet_store store = {
	.distributed = true, .samples = "precord_samples", .stacks = "precord_stacks2",
	.files = "precord_files", .pushes = "precord_pushes", .hour_stacks = "precord_hour_stacks",
	.hour_hosts = "precord_hour_hosts",
};

static char *plan(int (*fn)(const struct fleet_store *, const struct fleet_sel *, struct pbuf *),
		  const struct fleet_sel *s)
{
	struct pbuf b = { 0 };

	CHECK(!fn(&store, s, &b));
	CHECK(b.len && b.data[b.len - 1] == 0);
	return (char *)b.data;
}

TEST(plans)
{
	struct fleet_sel s = { 0 };
	char *q;

	unsetenv("PRECORD_FLEET_ROLLUP");
	/* fleet-wide, open range: the rollup only, rows not committed taken back */
	q = plan(fleet_plan__stack_sums, &s);
	CHECK(strstr(q, "FROM precord_hour_stacks WHERE hour >= toDateTime(0)"));
	CHECK(strstr(q, "-toInt64(sum(count))"));
	CHECK(strstr(q, "FROM precord_pushes_local"));
	CHECK(!strstr(q, "hour <"));
	free(q);
	/* --since on the hour, --until not: the hours, then the raw edge */
	s.since = 1795737600;
	s.until = 1795737600 + 7200 + 600;
	q = plan(fleet_plan__stack_sums, &s);
	CHECK(strstr(q, "hour >= toDateTime(1795737600)"));
	CHECK(strstr(q, "hour < toDateTime(1795744800)"));
	CHECK(strstr(q, "window >= toDateTime(1795744800)"));
	CHECK(strstr(q, "window < toDateTime(1795745400)"));
	CHECK(!strstr(q, "window < toDateTime(1795737600)"));
	free(q);
	/* less than a whole hour: raw rows only */
	s.since = 1795737600 + 60;
	s.until = 1795737600 + 3600 + 60;
	q = plan(fleet_plan__stack_sums, &s);
	CHECK(!strstr(q, "precord_hour_stacks"));
	CHECK(strstr(q, "precord_files_local"));
	free(q);
	/* a host: raw for the stacks, the per-host rollup for the totals */
	s.until = 0;
	s.host = "h1";
	q = plan(fleet_plan__stack_sums, &s);
	CHECK(!strstr(q, "precord_hour_stacks"));
	free(q);
	q = plan(fleet_plan__group_sums, &s);
	CHECK(strstr(q, "FROM precord_hour_hosts WHERE hour >= toDateTime(1795741200)"));
	CHECK(strstr(q, "host = 'h1'"));
	CHECK(strstr(q, "window < toDateTime(1795741200)"));	/* the edge */
	CHECK(strstr(q, "host NOT IN (") && strstr(q, "host IN ("));
	free(q);
	/* --by comm; --build-id makes the totals raw, not the stacks */
	s.host = NULL;
	s.by = "comm";
	s.build_id = "abcd";
	q = plan(fleet_plan__group_sums, &s);
	CHECK(!strstr(q, "precord_hour_hosts") && strstr(q, "GROUP BY comm"));
	free(q);
	q = plan(fleet_plan__stack_keys, &s);
	CHECK(strstr(q, "precord_hour_stacks") && strstr(q, "leaf_build_id = 'abcd'"));
	free(q);
	/* the rollups turned off */
	setenv("PRECORD_FLEET_ROLLUP", "0", 1);
	q = plan(fleet_plan__stack_sums, &s);
	CHECK(!strstr(q, "precord_hour"));
	free(q);
	unsetenv("PRECORD_FLEET_ROLLUP");
}

TEST(sample_counts)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .freq = 1, .sample_freq = 99,
				     .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD };

	/* cpu-clock at 99 Hz: a fixed 10101010 ns */
	CHECK_EQ(profile__sample_count(&a, 10101010), 1);
	CHECK_EQ(profile__sample_count(&a, 10101010ull * 73), 73);
	CHECK_EQ(profile__sample_count(&a, 10101010ull * 73 + 1000), 73);
	CHECK_EQ(profile__sample_count(&a, 1), 1);
	/* -c N */
	a.freq = 0;
	a.sample_period = 4000;
	CHECK_EQ(profile__sample_count(&a, 4000 * 12), 12);
	/* a hardware event at a frequency: periods vary, 1 each */
	a.freq = 1;
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	CHECK_EQ(profile__sample_count(&a, 123456789), 1);
	/* no PERIOD in the samples */
	a.sample_type = PERF_SAMPLE_IP;
	CHECK_EQ(profile__sample_count(&a, 0), 1);
	CHECK_EQ(profile__sample_count(NULL, 5), 1);
}

int main(void)
{
	RUN(times);
	RUN(build_ids);
	RUN(where_clause);
	RUN(describe);
	RUN(plans);
	RUN(sample_counts);
	return HARNESS_DONE();
}
