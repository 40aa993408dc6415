// SPDX-License-Identifier: GPL-2.0
/* query --diff: the baseline's overrides (selection.h), the merge of two
 * sides' stacks (diff.h) and the diff writers (output.h, flamegraph.h). */
#include "harness.h"

#include <errno.h>

#include "fleet/diff.h"
#include "fleet/flamegraph.h"
#include "fleet/output.h"
#include "fleet/selection.h"

static int override(struct fleet_sel *s, const char *spec, char *why, size_t size)
{
	static char buf[4][256];
	static int next;
	char *copy = buf[next++ % 4];	/* the selection points into it */

	snprintf(copy, sizeof(buf[0]), "%s", spec);
	return fleet_sel__override(s, copy, 1795000000, why, size);
}

TEST(override_keys)
{
	struct fleet_sel b = { .host = "web2", .comm = "app", .since = 1794996400,
			       .build_id = "abcd" };
	struct fleet_sel a = b;
	char why[512] = "";

	/* this hour against the hour before */
	CHECK_EQ(override(&a, "since=2h,until=1h", why, sizeof(why)), 0);
	CHECK_EQ(a.since, 1795000000 - 7200);
	CHECK_EQ(a.until, 1795000000 - 3600);
	CHECK_STR(a.host, "web2");
	CHECK_STR(a.build_id, "abcd");
	/* another host and build, a comm cleared, a comma escaped */
	a = b;
	CHECK_EQ(override(&a, "host=web1,build-id=0123ef,comm=,cgroup=/a\\,b\\\\c", why, sizeof(why)), 0);
	CHECK_STR(a.host, "web1");
	CHECK_STR(a.build_id, "0123ef");
	CHECK(a.comm == NULL);
	CHECK_STR(a.cgroup, "/a,b\\c");
	CHECK_EQ(a.since, b.since);
	/* an empty value clears: since= is all time, until= up to now */
	a = b;
	a.until = 1795000000 - 60;
	CHECK_EQ(override(&a, "since=,until=,host=,build-id=", why, sizeof(why)), 0);
	CHECK(!a.since && !a.until && !a.host && !a.build_id);
	/* absolute UTC times; a value may hold '=' */
	a = b;
	CHECK_EQ(override(&a, "since=2026-11-27T10:00,until=2026-11-27T11:00Z,comm=a=b", why, sizeof(why)), 0);
	CHECK_EQ(a.since, 1795737600 + 36000);
	CHECK_EQ(a.until, 1795737600 + 39600);
	CHECK_STR(a.comm, "a=b");
}

/* Hostile and mistaken specs: one line saying what, the selection as it
 * was. */
TEST(override_refused)
{
	static const struct {
		const char *spec, *why;
	} bad[] = {
		{ "", "needs KEY=VALUE" },
		{ ",", "'' is not KEY=VALUE" },
		{ "host=a,", "'' is not KEY=VALUE" },
		{ "host=a,,comm=b", "'' is not KEY=VALUE" },
		{ "host", "'host' is not KEY=VALUE" },
		{ "Host=a", "unknown key 'Host'" },
		{ "event=offcpu", "same --event" },
		{ "=x", "unknown key ''" },
		{ "host=a,host=b", "host given twice" },
		{ "since=1h,since=2h", "since given twice" },
		{ "since=yesterday", "bad since 'yesterday'" },
		{ "until=-5m", "bad until '-5m'" },
		{ "until=2026-02-30", "bad until" },
		{ "build-id=ABCD", "bad build-id 'ABCD'" },
		{ "build-id=ab'; DROP TABLE x", "bad build-id 'ab'; DROP TABLE x'" },
		{ "host=a\\b", "'\\,' (a comma)" },
		{ "host=a\\", "'\\,' (a comma)" },
		{ "since=1h,until=2h", "range holds no time" },
		{ "until=30m", "range holds no time" },	/* --since 1h stays: [1h, 30m) is fine */
		{ "key\x1b[2J=1", "unknown key 'key\\x1b[2J'" },
	};
	struct fleet_sel b = { .host = "web2", .since = 1795000000 - 1800 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fleet_sel a = b;
		char why[512] = "";
		int err = override(&a, bad[i].spec, why, sizeof(why));

		if (!strcmp(bad[i].spec, "until=30m")) {
			/* since 30 min ago, until 30 min ago: empty */
			CHECK_EQ(err, -EINVAL);
			continue;
		}
		if (err != -EINVAL || !strstr(why, bad[i].why))
			fprintf(stderr, "  spec '%s': %d '%s'\n", bad[i].spec, err, why);
		CHECK_EQ(err, -EINVAL);
		CHECK(strstr(why, bad[i].why));
		CHECK(!strchr(why, '\n') && !strchr(why, '\x1b'));
		CHECK(a.host == b.host && a.since == b.since && !a.until);
	}
	/* a long spec: bounded message, no overflow */
	{
		char spec[200], why[64];
		struct fleet_sel a = b;

		memset(spec, 'k', sizeof(spec) - 3);
		strcpy(spec + sizeof(spec) - 3, "=1");
		CHECK_EQ(override(&a, spec, why, sizeof(why)), -EINVAL);
		CHECK(strlen(why) < sizeof(why));
	}
}

/* "main;f;g" (root first) as a stack of the store: leaf first, DSO dso. */
static void make_stack(struct fleet_qstack *q, const char *folded, uint64_t count, const char *dso)
{
	char *copy = strdup(folded), *save = NULL;
	char *fr[16];
	int n = 0;

	for (char *t = strtok_r(copy, ";", &save); t && n < 16; t = strtok_r(NULL, ";", &save))
		fr[n++] = t;
	memset(q, 0, sizeof(*q));
	q->syms = calloc((size_t)n + 1, sizeof(char *));
	q->dsos = calloc((size_t)n + 1, sizeof(char *));
	for (int j = 0; j < n; j++) {
		q->syms[j] = strdup(fr[n - 1 - j]);
		q->dsos[j] = strdup(dso);
	}
	q->nr = q->nr_dsos = n;
	q->count = count;
	q->weight = count * 1000;
	q->found = true;
	free(copy);
}

/*
 * A: hot_a 60, hot_b 30, gone 10 (of 100).  B: hot_a 100 in two DSOs
 * (two builds), hot_b 50, new 50 (of 200).  Shares: hot_a 60 -> 50,
 * hot_b 30 -> 25, gone 10 -> 0, new 0 -> 25.
 */
static void two_sides(struct fleet_qstack **pa, struct fleet_qstack **pb, struct fleet_diff *d,
		      const struct fleet_sel *sa, const struct fleet_sel *sb)
{
	/* on the heap: fleet_answer__free frees the array */
	struct fleet_qstack *a = *pa = calloc(3, sizeof(*a)), *b = *pb = calloc(5, sizeof(*b));

	make_stack(&a[0], "main;hot_a", 60, "w");
	make_stack(&a[1], "main;hot_b", 30, "w");
	make_stack(&a[2], "main;gone", 10, "w");
	make_stack(&b[0], "main;hot_a", 60, "w");
	make_stack(&b[1], "main;hot_a", 40, "w2");	/* another build's */
	make_stack(&b[2], "main;hot_b", 50, "w");
	make_stack(&b[3], "main;new", 50, "w");
	make_stack(&b[4], "", 7, "w");			/* no frames: not folded */
	*d = (struct fleet_diff){ { a, b }, { 3, 5 }, { sa, sb } };
}

TEST(merge_rows)
{
	struct fleet_qstack *a, *b;
	struct fleet_sel sa = { .host = "h1" }, sb = { .host = "h2" };
	struct fleet_diff d;
	struct fleet_diff_row *rows = NULL;
	size_t n = 0;

	two_sides(&a, &b, &d, &sa, &sb);
	CHECK_EQ(fleet_diff__merge(&d, &rows, &n), 0);
	CHECK_EQ(n, 4);
	if (n == 4) {
		/* sorted root first: main;gone, main;hot_a, main;hot_b, main;new */
		CHECK_STR(rows[0].stack->syms[0], "gone");
		CHECK(rows[0].count[0] == 10 && rows[0].count[1] == 0);
		CHECK_STR(rows[1].stack->syms[0], "hot_a");
		CHECK(rows[1].count[0] == 60 && rows[1].count[1] == 100);
		CHECK_STR(rows[2].stack->syms[0], "hot_b");
		CHECK(rows[2].count[0] == 30 && rows[2].count[1] == 50);
		CHECK_STR(rows[3].stack->syms[0], "new");
		CHECK(rows[3].count[0] == 0 && rows[3].count[1] == 50);
	}
	free(rows);
	/* names that would collide if joined: "a;b" as one frame vs two */
	{
		struct fleet_qstack *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
		struct fleet_diff e = { { x, y }, { 1, 1 }, { &sa, &sb } };

		make_stack(&x[0], "ab;c", 1, "w");
		make_stack(&y[0], "a;bc", 2, "w");
		CHECK_EQ(fleet_diff__merge(&e, &rows, &n), 0);
		CHECK_EQ(n, 2);
		free(rows);
		fleet_answer__free(x, 1);
		fleet_answer__free(y, 1);
	}
	/* both sides empty */
	{
		struct fleet_diff e = { { NULL, NULL }, { 0, 0 }, { &sa, &sb } };

		rows = NULL;
		CHECK_EQ(fleet_diff__merge(&e, &rows, &n), 0);
		CHECK_EQ(n, 0);
		free(rows);
	}
	fleet_answer__free(a, 3);
	fleet_answer__free(b, 5);
}

static char *print(const struct fleet_diff *d, bool folded, int top, bool children)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CHECK(out);
	CHECK_EQ(fleet_diff__print(out, d, folded, top, children), 0);
	fclose(out);
	return text;
}

TEST(top_and_folded)
{
	struct fleet_qstack *a, *b;
	struct fleet_sel sa = { .host = "h1" }, sb = { .host = "h2" };
	struct fleet_diff d;
	char *t;

	two_sides(&a, &b, &d, &sa, &sb);
	/* self shares of each side's total weight (B's: 207, its frameless
	 * stack included, as --top counts it); the largest |change| first; a
	 * function of one side only is 0.00% on the other; hot_a's two DSOs
	 * are two functions */
	t = print(&d, false, 10, false);
	CHECK_STR(t, " 60.00%   28.99%   -31.01  hot_a  w\n"
		     "  0.00%   24.15%   +24.15  new  w\n"
		     "  0.00%   19.32%   +19.32  hot_a  w2\n"
		     " 10.00%    0.00%   -10.00  gone  w\n"
		     " 30.00%   24.15%    -5.85  hot_b  w\n");
	free(t);
	t = print(&d, false, 2, false);
	CHECK_STR(t, " 60.00%   28.99%   -31.01  hot_a  w\n"
		     "  0.00%   24.15%   +24.15  new  w\n");
	free(t);
	/* children: each function once per stack, main in its two DSOs;
	 * ties (the same change and weights) by name */
	t = print(&d, false, 10, true);
	CHECK_STR(t, " 60.00%   28.99%   -31.01  hot_a  w\n"
		     "  0.00%   24.15%   +24.15  new  w\n"
		     "100.00%   77.29%   -22.71  main  w\n"
		     "  0.00%   19.32%   +19.32  hot_a  w2\n"
		     "  0.00%   19.32%   +19.32  main  w2\n"
		     " 10.00%    0.00%   -10.00  gone  w\n"
		     " 30.00%   24.15%    -5.85  hot_b  w\n");
	free(t);
	/* two builds of a program at two paths: one function */
	{
		struct fleet_qstack *x = calloc(1, sizeof(*x)), *y = calloc(2, sizeof(*y));
		struct fleet_diff e = { { x, y }, { 1, 2 }, { &sa, &sb } };

		make_stack(&x[0], "main;f", 10, "/opt/v1/app");
		make_stack(&y[0], "main;f", 10, "/opt/v2/app");
		make_stack(&y[1], "main;g", 10, "/opt/v2/app");
		t = print(&e, false, 5, false);
		CHECK_STR(t, "100.00%   50.00%   -50.00  f  app\n"
			     "  0.00%   50.00%   +50.00  g  app\n");
		free(t);
		fleet_answer__free(x, 1);
		fleet_answer__free(y, 2);
	}
	/* difffolded's form, every stack of either side, 0 where absent */
	t = print(&d, true, 0, false);
	CHECK_STR(t, "main;gone 10 0\nmain;hot_a 60 100\nmain;hot_b 30 50\nmain;new 0 50\n");
	free(t);
	fleet_answer__free(a, 3);
	fleet_answer__free(b, 5);
}

/* The value of attribute name in the <g> whose title starts with title. */
static int fill_of(const char *svg, const char *title, int rgb[3])
{
	const char *t = strstr(svg, title), *fill;

	if (!t || !(fill = strstr(t, "fill=\"rgb(")))
		return -1;
	return sscanf(fill, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]) == 3 ? 0 : -1;
}

TEST(flame_diff)
{
	struct fleet_qstack *a, *b;
	struct fleet_sel sa = { .host = "h1" }, sb = { .host = "h2" };
	struct fleet_diff d;
	struct flame *f = flame__new();
	char title[512], baseline[512], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int rgb[3];

	two_sides(&a, &b, &d, &sa, &sb);
	CHECK(f && out);
	CHECK_EQ(fleet_diff__flame(f, &d, title, sizeof(title), baseline, sizeof(baseline)), 0);
	CHECK_STR(title, "precord diff: B = host h2");
	CHECK_STR(baseline, "against the baseline A = host h1");
	CHECK_EQ(flame__write_svg(f, out, title), 0);
	fclose(out);
	/* widths are B's samples; shares of each side's own total (B's
	 * frameless stack is in B's total: 207) */
	CHECK(strstr(text, "<title>hot_a (A: 60.00%, B: 48.31%, -11.69 pts, 100 samples)</title>"));
	CHECK(strstr(text, "<title>new (A: 0.00%, B: 24.15%, +24.15 pts, 50 samples)</title>"));
	CHECK(strstr(text, "<title>all (A: 100.00%, B: 100.00%, +0.00 pts, 207 samples)</title>"));
	CHECK(strstr(text, "precord diff: B = host h2</text>"));
	CHECK(strstr(text, "against the baseline A = host h1</text>"));
	/* gone has no width in B: not drawn, said */
	CHECK(!strstr(text, "<title>gone"));
	CHECK(strstr(text, "frames of A only (10.00% of A) not drawn"));
	/* the largest change (new, +24.15) in full red; hot_a (-11.69) blue
	 * at about half; the root neutral grey */
	CHECK_EQ(fill_of(text, "<title>new (", rgb), 0);
	CHECK(rgb[0] == 255 && rgb[1] == 40 && rgb[2] == 40);
	CHECK_EQ(fill_of(text, "<title>hot_a (", rgb), 0);
	CHECK(rgb[2] > 240 && rgb[0] < 160 && rgb[0] > 120 && rgb[0] == rgb[1]);
	CHECK_EQ(fill_of(text, "<title>all (", rgb), 0);
	CHECK(rgb[0] == 236 && rgb[1] == 236 && rgb[2] == 236);
	CHECK(strstr(text, "full at 24.15 points"));
	free(text);
	flame__free(f);

	/* nothing changed beyond noise: pale, full colour at 5 points */
	{
		struct fleet_qstack *x = calloc(2, sizeof(*x)), *y = calloc(2, sizeof(*y));
		struct fleet_diff e = { { x, y }, { 2, 2 }, { &sa, &sb } };

		make_stack(&x[0], "main;p", 50, "w");
		make_stack(&x[1], "main;q", 50, "w");
		make_stack(&y[0], "main;p", 51, "w");
		make_stack(&y[1], "main;q", 49, "w");
		f = flame__new();
		text = NULL;
		out = open_memstream(&text, &len);
		CHECK_EQ(fleet_diff__flame(f, &e, title, sizeof(title), baseline, sizeof(baseline)), 0);
		CHECK_EQ(flame__write_svg(f, out, title), 0);
		fclose(out);
		CHECK(strstr(text, "full at 5.00 points"));
		CHECK(!strstr(text, "not drawn"));
		CHECK_EQ(fill_of(text, "<title>p (", rgb), 0);
		CHECK(rgb[0] == 240 && rgb[1] == 197 && rgb[2] == 197);
		CHECK(strstr(text, "<title>q (A: 50.00%, B: 49.00%, -1.00 pts, 49 samples)</title>"));
		free(text);
		flame__free(f);
		fleet_answer__free(x, 2);
		fleet_answer__free(y, 2);
	}
	fleet_answer__free(a, 3);
	fleet_answer__free(b, 5);
}

int main(void)
{
	RUN(override_keys);
	RUN(override_refused);
	RUN(merge_rows);
	RUN(top_and_folded);
	RUN(flame_diff);
	return HARNESS_DONE();
}
