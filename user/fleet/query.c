// SPDX-License-Identifier: GPL-2.0
/*
 * precord query URL [filters] --top N | --totals | --folded | --flamegraph
 * OUT.svg: the store's committed samples (store.h), summed per stack on
 * the shards, the stacks fetched once, and the report made here.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet/answer.h"
#include "fleet/diff.h"
#include "fleet/fleet.h"
#include "fleet/flamegraph.h"
#include "fleet/hash.h"
#include "fleet/output.h"
#include "fleet/plan.h"
#include "fleet/selection.h"
#include "fleet/store.h"
#include "fleet/tsv.h"
#include "util/array.h"
#include "util/io.h"
#include "util/log.h"
#include "util/printable.h"

struct qargs {
	const char *url, *svg;
	struct fleet_sel sel;	/* the filters (selection.h) */
	char *diff;		/* --diff's overrides: base is sel changed by them */
	struct fleet_sel base;
	int top;
	bool children, totals, folded;
};


static void query_usage(FILE *f)
{
	fputs("usage: precord query URL [--host H] [--since TIME] [--until TIME] [--comm NAME]\n"
	      "                 [--cgroup PATH] [--build-id HEX] [--event cpu|offcpu]\n"
	      "                 [--top N [--children] | --totals | --folded | --flamegraph OUT.svg]\n"
	      "                 [--diff KEY=VALUE,...]\n"
	      "                 [--by host|comm|cgroup]\n"
	      "Report the samples in the store at URL (default --top 20).\n"
	      "  --host H          only host H (the name given to push/--push)\n"
	      "  --since TIME      only samples from TIME on: a duration back from now\n"
	      "                    (90s, 30m, 6h, 7d, 2w) or a UTC time (2026-11-27,\n"
	      "                    2026-11-27T10:00, 2026-11-27T10:00:05Z)\n"
	      "  --until TIME      only samples before TIME (same forms)\n"
	      "  --comm NAME       only processes named NAME\n"
	      "  --cgroup PATH     only this cgroup path\n"
	      "  --build-id HEX    only stacks whose leaf frame is in the DSO of this build-id\n"
	      "  --event E         cpu (default): the CPU samples; offcpu: the time\n"
	      "                    threads waited (--off-cpu files): shares, --folded\n"
	      "                    values and flame graph widths in ns waited,\n"
	      "                    --totals with the seconds waited after LAST\n"
	      "  --top N           the N functions with the largest share: PCT%  SYMBOL  DSO\n"
	      "  --children        shares of samples with the function anywhere on the stack\n"
	      "  --totals          one line per host: HOST SAMPLES FIRST LAST (UTC); SAMPLES\n"
	      "                    are samples taken (an --aggregate record counts all\n"
	      "                    of its samples)\n"
	      "  --by COLUMN       --totals: one line per host, comm or cgroup; --top:\n"
	      "                    the top N of each (up to 20, largest first), each\n"
	      "                    after a line \"## COLUMN VALUE  PCT%  SAMPLES samples\"\n"
	      "  --folded          collapsed stacks, root first: a;b;c COUNT\n"
	      "  --flamegraph OUT.svg  an interactive flame graph (one file, no network)\n"
	      "  --diff KEY=VALUE,...  compare with a baseline A: the same filters with these\n"
	      "                    changed (keys host, comm, cgroup, build-id, since, until;\n"
	      "                    an empty value clears one), e.g. --since 1h --diff\n"
	      "                    since=2h,until=1h; the filters above are B.  Shares are\n"
	      "                    of each side's total.  --top: BEFORE%  AFTER%  CHANGE\n"
	      "                    SYMBOL  DSO (points, largest change first); --folded:\n"
	      "                    a;b;c COUNT_A COUNT_B (difffolded.pl's form);\n"
	      "                    --flamegraph: B's widths, red grew, blue shrank\n"
	      "Fleet-wide questions over whole hours read the hourly rollups\n"
	      "(PRECORD_FLEET_ROLLUP=0: the raw samples only; docs/fleet.md).\n"
	      CH_CREDENTIALS_HELP,
	      f);
}

/* --diff: the baseline A is the filters changed by its overrides. */
static int diff_args(struct qargs *a, time_t now)
{
	char why[512];

	if (a->totals) {
		pr_err("query: --diff compares --top, --folded or --flamegraph, not --totals");
		return 2;
	}
	if (a->sel.by) {
		pr_err("query: --diff compares two selections, not --by breakdowns: give one of them");
		return 2;
	}
	a->base = a->sel;
	if (fleet_sel__override(&a->base, a->diff, now, why, sizeof(why))) {
		pr_err("query: %s", why);
		return 2;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct qargs *a)
{
	enum { O_HOST = 1000, O_SINCE, O_UNTIL, O_COMM, O_CGROUP, O_BUILD_ID, O_TOP, O_CHILDREN,
	       O_TOTALS, O_FOLDED, O_FLAME, O_EVENT, O_DIFF, O_BY };
	static const struct option lo[] = {
		{ "host", required_argument, NULL, O_HOST },
		{ "since", required_argument, NULL, O_SINCE },
		{ "until", required_argument, NULL, O_UNTIL },
		{ "comm", required_argument, NULL, O_COMM },
		{ "cgroup", required_argument, NULL, O_CGROUP },
		{ "build-id", required_argument, NULL, O_BUILD_ID },
		{ "top", required_argument, NULL, O_TOP },
		{ "children", no_argument, NULL, O_CHILDREN },
		{ "totals", no_argument, NULL, O_TOTALS },
		{ "folded", no_argument, NULL, O_FOLDED },
		{ "flamegraph", required_argument, NULL, O_FLAME },
		{ "event", required_argument, NULL, O_EVENT },
		{ "diff", required_argument, NULL, O_DIFF },
		{ "by", required_argument, NULL, O_BY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	time_t now = time(NULL);
	int opt, modes = 0;

	memset(a, 0, sizeof(*a));
	a->top = 20;
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case O_HOST: a->sel.host = optarg; break;
		case O_COMM: a->sel.comm = optarg; break;
		case O_CGROUP: a->sel.cgroup = optarg; break;
		case O_BUILD_ID:
			if (!fleet_sel__valid_build_id(optarg)) {
				pr_err("query: bad --build-id '%s': give the build-id in lower-case hex (perf buildid-list prints it)",
				       optarg);
				return 2;
			}
			a->sel.build_id = optarg;
			break;
		case O_SINCE:
		case O_UNTIL:
			if (fleet_sel__parse_time(optarg, now, opt == O_SINCE ? &a->sel.since : &a->sel.until)) {
				pr_err("query: bad --%s '%s': give a duration back from now (90s, 30m, 6h, 7d) or a UTC time (2026-11-27T10:00)",
				       opt == O_SINCE ? "since" : "until", optarg);
				return 2;
			}
			break;
		case O_TOP:
			a->top = atoi(optarg);
			if (a->top <= 0) {
				pr_err("query: bad --top '%s': give a count > 0", optarg);
				return 2;
			}
			modes |= 1;
			break;
		case O_CHILDREN: a->children = true; break;
		case O_TOTALS: a->totals = true; modes |= 2; break;
		case O_FOLDED: a->folded = true; modes |= 4; break;
		case O_FLAME: a->svg = optarg; modes |= 8; break;
		case O_EVENT:
			if (strcmp(optarg, "cpu") && strcmp(optarg, "offcpu")) {
				pr_err("query: bad --event '%s': give cpu or offcpu", optarg);
				return 2;
			}
			a->sel.offcpu = !strcmp(optarg, "offcpu");
			break;
		case O_DIFF: a->diff = optarg; break;
		case O_BY:
			if (strcmp(optarg, "host") && strcmp(optarg, "comm") && strcmp(optarg, "cgroup")) {
				pr_err("query: bad --by '%s': give host, comm or cgroup", optarg);
				return 2;
			}
			a->sel.by = optarg;
			break;
		case 'h':
			query_usage(stdout);
			return 1;
		default:
			pr_err("query: unknown option or missing argument '%s' (see precord query --help)",
			       argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		pr_err("query: give one store URL (see precord query --help)");
		return 2;
	}
	if (modes & (modes - 1)) {
		pr_err("query: give one of --top, --totals, --folded and --flamegraph");
		return 2;
	}
	if (a->sel.by && (modes & ~3)) {
		pr_err("query: --by breaks down --top and --totals only");
		return 2;
	}
	if (a->sel.until && a->sel.since >= a->sel.until) {
		pr_err("query: --since is not before --until: the range holds no time");
		return 2;
	}
	a->url = argv[optind];
	return a->diff ? diff_args(a, now) : 0;
}

static int run_sql(struct fleet_store *s, const char *sql, struct pbuf *out)
{
	int err = ch_conn__exec(s->conn, sql, NULL, 0, out);

	if (err)
		pr_err("query: %s", ch_conn__error(s->conn));
	return err;
}

static void fmt_time(uint64_t t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A plan's statement (NUL-terminated) made to answer TabSeparated. */
static int as_tsv(struct pbuf *sql)
{
	sql->len--;
	return pbuf_put(sql, " FORMAT TabSeparated", sizeof(" FORMAT TabSeparated"));
}

static int query_totals(struct fleet_store *s, const struct fleet_sel *sel)
{
	struct pbuf out = { 0 }, sql = { 0 };
	char *line, *save = NULL;
	bool offcpu = sel->offcpu;
	int err;

	if (fleet_plan__group_sums(s, sel, &sql) || as_tsv(&sql)) {
		pbuf_free(&sql);
		return -ENOMEM;
	}
	err = run_sql(s, (char *)sql.data, &out);
	pbuf_free(&sql);
	for (line = err ? NULL : strtok_r((char *)out.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[5], a[32], b[32];

		if (tsv_split(line, f, 5) != 5)
			continue;
		tsv_unescape(f[0]);
		fmt_time(strtoull(f[2], NULL, 10), a, sizeof(a));
		fmt_time(strtoull(f[3], NULL, 10), b, sizeof(b));
		printable_fputs(stdout, f[0], " ");	/* the host: one field */
		printf(" %s %s %s", f[1], a, b);
		/* off-CPU: the seconds waited after the samples */
		if (offcpu)
			printf(" %.3fs", (double)strtoull(f[4], NULL, 10) / 1e9);
		fputc('\n', stdout);
	}
	pbuf_free(&out);
	return err;
}

/*
 * The stacks of a selection: sums per stack, then the frames of those
 * stacks whose stored content is their key; what the answers left out
 * is said, one line each.  Off-CPU: a stack's count is its time (ns),
 * not its samples (a sample of summed waits stands for many waits).
 */
static int load_stacks(struct fleet_store *s, const struct fleet_sel *sel,
		       struct fleet_qstack **out_st, size_t *out_n)
{
	struct fleet_answer_counts c = { 0 };
	struct pbuf out = { 0 }, w = { 0 }, keys = { 0 };
	struct fleet_qstack *st = NULL;
	size_t n = 0;
	char *sql = NULL;
	int err;

	/* the table choice (rollups or raw rows) is the plan's (plan.h) */
	if (fleet_plan__stack_sums(s, sel, &w) || as_tsv(&w) ||
	    fleet_plan__stack_keys(s, sel, &keys)) {
		err = -ENOMEM;
		goto out;
	}
	err = run_sql(s, (char *)w.data, &out);
	if (!err)
		err = fleet_answer__read_sums((char *)out.data, &st, &n, &c);
	if (err || !n)
		goto out;
	/* only rows whose content is their key: a row another writer
	 * inserted under this key with other frames is not one of them
	 * (docs/fleet.md, "Whose frames") */
	if (asprintf(&sql, "SELECT stack_hash, any(symbols), any(dsos) FROM %s WHERE date >= toDate(toDateTime(%lld)) AND stack_hash GLOBAL IN (%s) AND stack_hash = " FLEET_STACK_KEY_SQL " GROUP BY stack_hash ORDER BY stack_hash FORMAT TabSeparated",
		     s->stacks, (long long)sel->since, (char *)keys.data) < 0) {
		sql = NULL;
		err = -ENOMEM;
		goto out;
	}
	err = run_sql(s, sql, &out);
	if (!err)
		err = fleet_answer__read_frames((char *)out.data, st, n, &c);
	if (!err)
		err = fleet_answer__mark_unverified(st, n, &c);
out:
	free(sql);
	pbuf_free(&out);
	pbuf_free(&w);
	pbuf_free(&keys);
	if (err) {
		fleet_answer__free(st, n);
		return err;
	}
	if (c.bad_lines)
		pr_warn("query: %" PRIu64 " lines of the store's answers were not what was asked for: skipped",
			c.bad_lines);
	if (c.stacks_left_out)
		pr_warn("query: more than %u stacks: %" PRIu64 " stacks (%" PRIu64 " samples) left out; narrow the query (--since, --host, --comm)",
			FLEET_ANSWER_MAX_STACKS, c.stacks_left_out, c.samples_left_out);
	if (c.frames_left_out)
		pr_warn("query: %" PRIu64 " frames past the first %d of a stack left out",
			c.frames_left_out, FLEET_ANSWER_MAX_FRAMES);
	/*
	 * Stacks without a stored row whose content is their key: pushed by
	 * a precord before the keys were SHA-256 digests (their rows are
	 * kept but cannot be told from a forged one), or whose day's stacks
	 * partition was dropped, or written by something else.  Counted in
	 * every share as the one frame "[unverified]": nothing vanishes, and
	 * no other writer's frames stand in for them.
	 */
	if (c.unverified_stacks)
		pr_warn("query: %" PRIu64 " stacks (%" PRIu64 " samples) have no stored frames that match their key (pushed by a precord before keys were SHA-256 digests, a dropped stacks partition, or another writer): shown as [unverified]",
			c.unverified_stacks, c.unverified_samples);
	for (size_t i = 0; sel->offcpu && i < n; i++)
		st[i].count = st[i].weight;
	*out_st = st;
	*out_n = n;
	return 0;
}

/* OUT.svg written new beside it and renamed over it (util/io.h): a
 * symlink planted at OUT is replaced, never followed; the umask holds. */
static FILE *open_svg(const char *path, char *tmp, size_t size)
{
	int fd = create_replacement(path, tmp, size);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		int err = errno;

		close(fd);
		commit_replacement(tmp, path, -err);
		errno = err;
	}
	return f;
}

/* The flame graph of st, or with d the differential one (diff.h). */
static int report_flamegraph(const struct qargs *a, struct fleet_qstack *st, size_t n,
			     const struct fleet_diff *d)
{
	struct flame *f = flame__new();
	char title[512], what[400], tmp[4096], baseline[512];
	FILE *out;
	int err;

	if (!f)
		return -ENOMEM;
	/* the graph of off-CPU time says so: it is not read as CPU */
	if (a->sel.offcpu)
		flame__set_unit(f, "ns");
	if (d) {
		err = fleet_diff__flame(f, d, title, sizeof(title), baseline, sizeof(baseline));
	} else {
		err = fleet_output__flame(f, st, n);
		fleet_sel__describe(&a->sel, what, sizeof(what));
		snprintf(title, sizeof(title), "precord: %s", what);
	}
	out = err ? NULL : open_svg(a->svg, tmp, sizeof(tmp));
	if (!err && !out) {
		err = -errno;
		pr_err("query: cannot write %s: %s", a->svg, strerror(errno));
	}
	if (out) {
		err = flame__write_svg(f, out, title);
		if (fclose(out) && !err)
			err = -EIO;
		err = commit_replacement(tmp, a->svg, err);
		if (err)
			pr_err("query: writing %s failed: %s", a->svg, strerror(-err));
	}
	flame__free(f);
	return err;
}

/* --diff: both sides read, then compared (diff.h). */
static int query_diff(struct fleet_store *s, const struct qargs *a)
{
	struct fleet_qstack *st[2] = { NULL, NULL };
	size_t n[2] = { 0, 0 };
	int err = load_stacks(s, &a->base, &st[FLEET_DIFF_A], &n[FLEET_DIFF_A]);

	if (!err)
		err = load_stacks(s, &a->sel, &st[FLEET_DIFF_B], &n[FLEET_DIFF_B]);
	if (!err) {
		struct fleet_diff d = { { st[0], st[1] }, { n[0], n[1] }, { &a->base, &a->sel } };

		err = a->svg ? report_flamegraph(a, NULL, 0, &d) :
			       fleet_diff__print(stdout, &d, a->folded, a->top, a->children);
	}
	fleet_answer__free(st[0], n[0]);
	fleet_answer__free(st[1], n[1]);
	return err;
}

/* --top --by: the groups of the largest weight first, up to this many */
#define QUERY_BY_MAX_GROUPS	20

struct group {
	char *name;
	uint64_t samples, weight;
};

static int by_weight(const void *x, const void *y)
{
	const struct group *a = x, *b = y;

	return a->weight < b->weight ? 1 : a->weight > b->weight ? -1 : strcmp(a->name, b->name);
}

/*
 * --top N --by COLUMN: the sums per value of COLUMN (plan.h), then the
 * top N of each of the largest QUERY_BY_MAX_GROUPS, each read as a
 * selection narrowed to that value; the groups left out are said.
 */
static int report_top_by(struct fleet_store *s, const struct qargs *a)
{
	struct pbuf out = { 0 }, sql = { 0 };
	struct group *g = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0, rest = 0;
	char *line, *save = NULL;
	int err;

	if (fleet_plan__group_sums(s, &a->sel, &sql) || as_tsv(&sql)) {
		pbuf_free(&sql);
		return -ENOMEM;
	}
	err = run_sql(s, (char *)sql.data, &out);
	pbuf_free(&sql);
	for (line = err ? NULL : strtok_r((char *)out.data, "\n", &save); line && !err;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[5];

		if (tsv_split(line, f, 5) != 5)
			continue;
		tsv_unescape(f[0]);
		if (ARRAY_GROW(g, cap, n + 1) || !(g[n].name = strdup(f[0]))) {
			err = -ENOMEM;
			break;
		}
		g[n].samples = strtoull(f[1], NULL, 10);
		g[n].weight = strtoull(f[4], NULL, 10);
		total += g[n++].weight;
	}
	pbuf_free(&out);
	if (!err && n)
		qsort(g, n, sizeof(*g), by_weight);
	for (size_t i = 0; !err && i < n; i++) {
		struct fleet_sel sel = a->sel;
		struct fleet_qstack *st = NULL;
		size_t nst = 0;

		if (i >= QUERY_BY_MAX_GROUPS) {
			rest += g[i].weight;
			continue;
		}
		if (!strcmp(a->sel.by, "host"))
			sel.host = g[i].name;
		else if (!strcmp(a->sel.by, "comm"))
			sel.comm = g[i].name;
		else
			sel.cgroup = g[i].name;
		sel.by = NULL;
		printf("## %s ", a->sel.by);
		printable_fputs(stdout, g[i].name, " ");
		printf("  %.2f%%  %" PRIu64 " samples\n",
		       total ? 100.0 * (double)g[i].weight / (double)total : 0.0, g[i].samples);
		err = load_stacks(s, &sel, &st, &nst);
		if (!err)
			err = fleet_output__top(stdout, st, nst, a->top, a->children);
		fleet_answer__free(st, nst);
	}
	if (!err && n > QUERY_BY_MAX_GROUPS)
		printf("## %zu more: %.2f%% (narrow with --host, --comm, --cgroup)\n",
		       n - QUERY_BY_MAX_GROUPS, total ? 100.0 * (double)rest / (double)total : 0.0);
	for (size_t i = 0; i < n; i++)
		free(g[i].name);
	free(g);
	return err;
}

int fleet_query_main(int argc, char **argv)
{
	struct fleet_store s;
	struct qargs a;
	struct fleet_qstack *st = NULL;
	size_t n = 0;
	int err = parse_args(argc, argv, &a);

	if (err)
		return err == 1 ? 0 : err;
	char why[400];

	if (fleet_store__open(&s, a.url, 3, why, sizeof(why))) {
		pr_err("query: %s", why);
		return 1;
	}
	ch_conn__set_retry(s.conn, 3, 300);
	if (a.totals) {
		err = query_totals(&s, &a.sel);
		goto out;
	}
	if (a.diff) {
		err = query_diff(&s, &a);
		goto out;
	}
	if (a.sel.by) {
		err = report_top_by(&s, &a);
		goto out;
	}
	err = load_stacks(&s, &a.sel, &st, &n);
	if (err)
		goto out;
	if (a.folded)
		err = fleet_output__folded(stdout, st, n);
	else if (a.svg)
		err = report_flamegraph(&a, st, n, NULL);
	else
		err = fleet_output__top(stdout, st, n, a.top, a.children);
	fleet_answer__free(st, n);
out:
	if (err == -ENOMEM)
		pr_err("query: out of memory");
	fleet_store__close(&s);
	return err ? 1 : 0;
}
