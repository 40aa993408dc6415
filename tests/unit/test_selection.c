// SPDX-License-Identifier: GPL-2.0
/* query's selection: --since/--until times and the WHERE clause. */
#include "harness.h"

#include <errno.h>

#include "fleet/selection.h"
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

int main(void)
{
	RUN(times);
	RUN(build_ids);
	RUN(where_clause);
	RUN(describe);
	return HARNESS_DONE();
}
