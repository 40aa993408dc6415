// SPDX-License-Identifier: GPL-2.0
#include "selection.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/http.h"
#include "util/buf.h"
#include "util/printable.h"

static int parse_duration(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end), mult = 1;

	if (end == s || !(v > 0) || v > 1e12)
		return -EINVAL;
	if (*end == 's')
		end++;
	else if (*end == 'm')
		mult = 60, end++;
	else if (*end == 'h')
		mult = 3600, end++;
	else if (*end == 'd')
		mult = 86400, end++;
	else if (*end == 'w')
		mult = 7 * 86400, end++;
	if (*end)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

/* days from 1970-01-01 to Y-M-D (proleptic Gregorian), no timezone */
static long long days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	long long yoe = y - era * 400;
	long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

static int parse_absolute(const char *s, time_t *out)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h = 0, mi = 0, sec = 0, used = 0, n;
	char sep;

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) != 3 || used != 10)
		return -EINVAL;
	s += used;
	if (*s == 'T' || *s == ' ') {
		sep = *s++;
		(void)sep;
		n = 0;
		if (sscanf(s, "%2d:%2d%n", &h, &mi, &n) != 2 || n != 5)
			return -EINVAL;
		s += n;
		if (*s == ':') {
			n = 0;
			if (sscanf(s, ":%2d%n", &sec, &n) != 1 || n != 3)
				return -EINVAL;
			s += n;
		}
	}
	if (*s == 'Z')
		s++;
	if (*s || y < 1970 || y > 2105 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    h > 23 || mi > 59 || sec > 59 || h < 0 || mi < 0 || sec < 0)
		return -EINVAL;
	*out = (time_t)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec);
	return 0;
}

int fleet_sel__parse_time(const char *s, time_t now, time_t *out)
{
	double back;

	if (!parse_absolute(s, out))
		return 0;
	if (parse_duration(s, &back))
		return -EINVAL;
	*out = back >= (double)now ? 1 : now - (time_t)back;
	return 0;
}

bool fleet_sel__valid_build_id(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || n > 40)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* The next item of a --diff SPEC at *at, unescaped in place ("\," a comma,
 * "\\" a backslash) and NUL-terminated; *at moves past its comma (NULL
 * after the last item).  -EINVAL for any other backslash. */
static int next_item(char **at, char **item)
{
	char *r = *at, *w = *at;

	*item = w;
	for (; *r && *r != ','; r++) {
		if (*r == '\\') {
			if (r[1] != ',' && r[1] != '\\')
				return -EINVAL;
			r++;
		}
		*w++ = *r;
	}
	*at = *r ? r + 1 : NULL;
	*w = 0;
	return 0;
}

int fleet_sel__override(struct fleet_sel *sel, char *spec, time_t now, char *why, size_t size)
{
	static const char *const keys[] = { "host", "comm", "cgroup", "build-id", "since", "until" };
	struct fleet_sel s = *sel;
	unsigned int seen = 0;
	char shown[PRINTABLE_MAX / 4], *at = spec, *item;

	if (!*spec) {
		snprintf(why, size, "--diff needs KEY=VALUE overrides of the filters for the baseline (keys host, comm, cgroup, build-id, since, until), e.g. --diff since=2h,until=1h");
		return -EINVAL;
	}
	while (at) {
		char *eq, *val;
		size_t k;

		if (next_item(&at, &item)) {
			snprintf(why, size, "--diff: a '\\' in a value is written '\\,' (a comma) or '\\\\' (a backslash)");
			return -EINVAL;
		}
		eq = strchr(item, '=');
		if (!eq) {
			snprintf(why, size, "--diff: '%s' is not KEY=VALUE (e.g. host=web1, since=2h, until=)",
				 printable(shown, sizeof(shown), item));
			return -EINVAL;
		}
		*eq = 0;
		val = eq + 1;
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]) && strcmp(item, keys[k]); k++)
			;
		if (k == sizeof(keys) / sizeof(keys[0])) {
			snprintf(why, size, "--diff: unknown key '%s'%s: give host, comm, cgroup, build-id, since or until",
				 printable(shown, sizeof(shown), item),
				 strcmp(item, "event") ? "" : " (both sides are of the same --event)");
			return -EINVAL;
		}
		if (seen & (1u << k)) {
			snprintf(why, size, "--diff: %s given twice", keys[k]);
			return -EINVAL;
		}
		seen |= 1u << k;
		switch (k) {
		case 0: s.host = *val ? val : NULL; break;
		case 1: s.comm = *val ? val : NULL; break;
		case 2: s.cgroup = *val ? val : NULL; break;
		case 3:
			if (*val && !fleet_sel__valid_build_id(val)) {
				snprintf(why, size, "--diff: bad build-id '%s': give the build-id in lower-case hex (perf buildid-list prints it)",
					 printable(shown, sizeof(shown), val));
				return -EINVAL;
			}
			s.build_id = *val ? val : NULL;
			break;
		default:
			if (!*val)
				*(k == 4 ? &s.since : &s.until) = 0;
			else if (fleet_sel__parse_time(val, now, k == 4 ? &s.since : &s.until)) {
				snprintf(why, size, "--diff: bad %s '%s': give a duration back from now (90s, 30m, 6h, 7d) or a UTC time (2026-11-27T10:00)",
					 keys[k], printable(shown, sizeof(shown), val));
				return -EINVAL;
			}
		}
	}
	if (s.until && s.since >= s.until) {
		snprintf(why, size, "--diff: the baseline's since is not before its until: its range holds no time (e.g. --since 1h --diff since=2h,until=1h)");
		return -EINVAL;
	}
	*sel = s;
	return 0;
}

static void put_str(struct pbuf *w, const char *s)
{
	pbuf_put(w, s, strlen(s));
}

static void put_eq(struct pbuf *w, const char *column, const char *value)
{
	put_str(w, " AND ");
	put_str(w, column);
	put_str(w, " = ");
	ch_quote(w, value);
}

int fleet_sel__filters(const struct fleet_sel *sel, unsigned int cols, struct pbuf *w)
{
	/* rows pushed before the column read as 'cpu' (its default) */
	if (cols & FLEET_SEL_EVENT)
		put_str(w, sel->offcpu ? " AND event = 'offcpu'" : " AND event = 'cpu'");
	if (sel->host && (cols & FLEET_SEL_HOST))
		put_eq(w, "host", sel->host);
	if (sel->comm && (cols & FLEET_SEL_COMM))
		put_eq(w, "comm", sel->comm);
	if (sel->cgroup && (cols & FLEET_SEL_CGROUP))
		put_eq(w, "cgroup", sel->cgroup);
	if (sel->build_id && (cols & FLEET_SEL_BUILD_ID))
		put_eq(w, "leaf_build_id", sel->build_id);
	return w->err;
}

int fleet_sel__where(const struct fleet_sel *sel, bool committed, struct pbuf *w)
{
	char tmp[256];

	snprintf(tmp, sizeof(tmp), "window >= toDateTime(%lld) AND date >= toDate(toDateTime(%lld))",
		 (long long)sel->since, (long long)sel->since);
	put_str(w, tmp);
	if (sel->until) {
		snprintf(tmp, sizeof(tmp), " AND window < toDateTime(%lld) AND date <= toDate(toDateTime(%lld))",
			 (long long)sel->until, (long long)sel->until);
		put_str(w, tmp);
	}
	fleet_sel__filters(sel, FLEET_SEL_ALL, w);
	if (committed) {
		/* precord_files_local on purpose: a host's files are on the
		 * shard of its samples, so each shard checks its own.  A
		 * file's date is the day of its last sample: files that end
		 * before SINCE hold no sample of the range. */
		snprintf(tmp, sizeof(tmp),
			 " AND (host, file_id, push_id) IN (SELECT host, file_id, argMin(push_id, pushed_ns) FROM precord_files_local WHERE date >= toDate(toDateTime(%lld))",
			 (long long)sel->since);
		put_str(w, tmp);
		if (sel->host)
			put_eq(w, "host", sel->host);
		put_str(w, " GROUP BY host, file_id)");
	}
	return pbuf_put_u8(w, 0);
}

static void fmt_utc(time_t t, char *buf, size_t n)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void fleet_sel__describe(const struct fleet_sel *sel, char *buf, size_t size)
{
	char a[32] = "", b[32] = "";

	if (sel->since)
		fmt_utc(sel->since, a, sizeof(a));
	if (sel->until)
		fmt_utc(sel->until, b, sizeof(b));
	snprintf(buf, size, "%s%s%s%s%s%s%s%s%s%s%s%s%s%s",
		 sel->offcpu ? "off-CPU time (ns waited), " : "",
		 sel->host ? "host " : "all hosts", sel->host ? sel->host : "",
		 sel->comm ? ", comm " : "", sel->comm ? sel->comm : "",
		 sel->cgroup ? ", cgroup " : "", sel->cgroup ? sel->cgroup : "",
		 sel->build_id ? ", leaf build-id " : "", sel->build_id ? sel->build_id : "",
		 sel->since || sel->until ? ", " : "", a,
		 sel->since || sel->until ? " to " : "", sel->until ? b : (sel->since ? "now" : ""),
		 "");
}
