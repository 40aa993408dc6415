// SPDX-License-Identifier: GPL-2.0
/*
 * pprof export: samples (from profile__read() for pprof_export, from the
 * caller for pprof__add) interned into the tables of profile.proto
 * (strings, functions, mappings, locations, samples), packed with the
 * protobuf-c code generated at build time from Debian's profile.proto;
 * pprof_export gzips the packed bytes into its output with zlib.
 */
#include "report/pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gen/profile.pb-c.h"
#include "report/profile.h"
#include "util/array.h"
#include "util/io.h"
#include "util/keymap.h"
#include "util/log.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__Function PFunction;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__ValueType PValueType;

struct psample {
	const __u64 *locs;		/* in sample_index's copy of the key */
	size_t nr;
	__u64 count, period;
	__s64 comm, pid;
	__u64 offcpu_ns;		/* --off-cpu's waits on this stack */
};

struct pprof {
	struct keymap str_index, fn_index, map_index, loc_index, sample_index;
	char **strs;			/* str_index's copies (with their NUL) */
	size_t nr_strs, strs_cap;
	PFunction *fns;
	size_t nr_fns, fns_cap;
	PMapping *maps;
	size_t nr_maps, maps_cap;
	struct ploc {			/* a location and its line, grown as one */
		PLocation loc;
		PLine line, *line_ptr;	/* loc.line: &line_ptr, set by pack */
	} *locs;
	size_t nr_locs, locs_cap;
	struct psample *samples;
	size_t nr_samples, samples_cap;
	__u64 *scratch;			/* the key of one sample */
	size_t scratch_cap;
	__u64 capped;			/* period sums held at INT64_MAX */
	int err;
};

/* The string table index of s (0 for ""): the table points at the
 * index's copy of s, NUL included. */
static __s64 str_id(struct pprof *b, const char *s)
{
	const void *copy;
	bool added;
	uint64_t *v;

	if (!s || !*s)
		return 0;
	v = keymap_put_copy(&b->str_index, s, strlen(s) + 1, &added, &copy);
	if (!v || (added && ARRAY_GROW(b->strs, b->strs_cap, b->nr_strs + 1))) {
		b->err = -ENOMEM;
		return 0;
	}
	if (added) {
		b->strs[b->nr_strs] = (char *)copy;
		*v = b->nr_strs++;
	}
	return (__s64)*v;
}

/* The string ids of one sample's last DSO: its frames mostly share one. */
struct dso_ids {
	const struct sym_dso *dso;
	__s64 name, build_id;		/* build_id: -1 until a mapping needs it */
};

static void dso_ids(struct pprof *b, const struct sym_dso *d, struct dso_ids *c)
{
	if (c->dso == d)
		return;
	c->dso = d;
	c->name = str_id(b, d->name);
	c->build_id = -1;
}

/* The function of symbol sym in DSO dso (string ids). */
static __u64 fn_id(struct pprof *b, __s64 sym, __s64 dso)
{
	__s64 key[2] = { sym, dso };
	bool added;
	uint64_t *v = keymap_put(&b->fn_index, key, sizeof(key), &added);
	PFunction fn = PERFTOOLS__PROFILES__FUNCTION__INIT;

	if (!v || (added && ARRAY_GROW(b->fns, b->fns_cap, b->nr_fns + 1))) {
		b->err = -ENOMEM;
		return 0;
	}
	if (added) {
		fn.id = b->nr_fns + 1;
		fn.name = fn.system_name = sym;
		fn.filename = dso;
		b->fns[b->nr_fns++] = fn;
		*v = fn.id;
	}
	return *v;
}

/* The mapping of key: start, limit, file offset, string ids of the
 * file's name and build-id. */
static __u64 map_id(struct pprof *b, const __u64 key[5], bool has_functions)
{
	PMapping m = PERFTOOLS__PROFILES__MAPPING__INIT;
	bool added;
	uint64_t *v = keymap_put(&b->map_index, key, 5 * sizeof(*key), &added);

	if (!v || (added && ARRAY_GROW(b->maps, b->maps_cap, b->nr_maps + 1))) {
		b->err = -ENOMEM;
		return 0;
	}
	if (added) {
		m.id = b->nr_maps + 1;
		m.memory_start = key[0];
		m.memory_limit = key[1];
		m.file_offset = key[2];
		m.filename = (__s64)key[3];
		m.build_id = (__s64)key[4];
		b->maps[b->nr_maps++] = m;
		*v = m.id;
	}
	if (has_functions)
		b->maps[*v - 1].has_functions = true;
	return *v;
}

/*
 * A location is its mapping (none when f is outside every mapping of a
 * user DSO), address, DSO name and function.  It is looked up by what
 * makes those up, before its mapping and function are: a frame seen
 * before costs one lookup instead of three.  The ids given are those of
 * looking up the mapping and the function first (new ones numbered in
 * the order of their frames), strings interned in the same order.
 */
static __u64 loc_id(struct pprof *b, const struct sym_frame *fp, struct dso_ids *c)
{
	/* f and its DSO's kernel flag read once (each read through a
	 * pointer is a checked access in the fuzzers' build) */
	const struct sym_frame f = *fp;
	const bool kernel = f.dso->kernel, mapped = f.map_end || kernel;
	PLocation l = PERFTOOLS__PROFILES__LOCATION__INIT;
	PLine line = PERFTOOLS__PROFILES__LINE__INIT;
	__u64 key[8] = { 0 };
	bool added;
	uint64_t *v;

	dso_ids(b, f.dso, c);
	/* key[0..4]: the mapping's key, kernel mappings with file offset 0
	 * (perf's pgoff there is the address of _text); the build-id is in
	 * it: two builds of one path mapped at one address (by two
	 * processes) are two mappings */
	key[3] = (__u64)c->name;
	if (mapped) {
		key[0] = f.map_start;
		key[1] = f.map_end;
		key[2] = kernel ? 0 : f.map_pgoff;
		if (c->build_id < 0)
			c->build_id = str_id(b, f.dso->build_id);
		key[4] = (__u64)c->build_id;
	}
	key[5] = f.ip;
	key[6] = f.sym ? (__u64)str_id(b, f.sym) : 0;
	key[7] = (mapped ? 1 : 0) | (f.sym ? 2 : 0);
	v = keymap_put(&b->loc_index, key, sizeof(key), &added);
	if (!v) {
		b->err = -ENOMEM;
		return 0;
	}
	if (!added)
		return *v;
	l.mapping_id = mapped ? map_id(b, key, f.sym) : 0;
	line.function_id = f.sym ? fn_id(b, (__s64)key[6], (__s64)key[3]) : 0;
	if (ARRAY_GROW(b->locs, b->locs_cap, b->nr_locs + 1)) {
		b->err = -ENOMEM;
		return 0;
	}
	l.id = b->nr_locs + 1;
	l.address = f.ip;
	b->locs[b->nr_locs++] = (struct ploc){ l, line, NULL };
	*v = l.id;
	return *v;
}

int pprof__add(struct pprof *b, const struct profile_sample *s)
{
	struct psample *ps;
	size_t n = s->nr_frames;
	const struct sym_frame *frames = s->frames;
	const void *key;
	__u64 *sk;
	bool added;
	uint64_t *v;
	struct dso_ids c = { 0 };
	__u64 sum;
	__s64 comm;

	if (b->err)
		return b->err;
	if (n > PROFILE_MAX_FRAMES)
		return -E2BIG;
	if (ARRAY_GROW(b->scratch, b->scratch_cap, n + 2))
		return b->err = -ENOMEM;
	comm = str_id(b, s->comm);

	/* key: pid, comm, then the location ids, leaf first (sk and
	 * frames in locals: loc_id writes to *b) */
	sk = b->scratch;
	sk[0] = s->pid;
	sk[1] = (__u64)comm;
	for (size_t i = 0; i < n; i++)
		sk[2 + i] = loc_id(b, &frames[i], &c);
	if (b->err)
		return b->err;
	v = keymap_put_copy(&b->sample_index, sk, (n + 2) * sizeof(__u64), &added, &key);
	if (!v || (added && ARRAY_GROW(b->samples, b->samples_cap, b->nr_samples + 1)))
		return b->err = -ENOMEM;
	if (added) {
		ps = &b->samples[b->nr_samples];
		*ps = (struct psample){ .nr = n, .comm = comm, .pid = s->pid,
					.locs = (const __u64 *)key + 2 };
		*v = b->nr_samples++;
	}
	ps = &b->samples[*v];
	if (s->offcpu) {
		ps->offcpu_ns += s->period;
		return 0;
	}
	ps->count++;
	/* values are int64 in profile.proto: a sum past it is held there */
	if (__builtin_add_overflow(ps->period, s->period, &sum) || sum > (__u64)INT64_MAX) {
		b->capped++;
		sum = (__u64)INT64_MAX;
	}
	ps->period = sum;
	return 0;
}

static int on_sample(void *ctx, const struct profile_sample *s)
{
	return pprof__add(ctx, s);
}

struct pprof *pprof__new(void)
{
	struct pprof *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	if (ARRAY_GROW(b->strs, b->strs_cap, 16)) {
		pprof__free(b);
		errno = ENOMEM;
		return NULL;
	}
	b->strs[0] = (char *)"";	/* index 0 is "" */
	b->nr_strs = 1;
	return b;
}

void pprof__free(struct pprof *b)
{
	if (!b)
		return;
	keymap_free(&b->str_index);
	keymap_free(&b->fn_index);
	keymap_free(&b->map_index);
	keymap_free(&b->loc_index);
	keymap_free(&b->sample_index);
	free(b->strs);
	free(b->fns);
	free(b->maps);
	free(b->locs);
	free(b->samples);
	free(b->scratch);
	free(b);
}

void pprof__stats(const struct pprof *b, struct pprof_stats *st)
{
	*st = (struct pprof_stats){ .stacks = b->nr_samples, .functions = b->nr_fns,
				    .mappings = b->nr_maps, .capped = b->capped };
}

static __s64 to_s64(__u64 v)
{
	return v > (__u64)INT64_MAX ? INT64_MAX : (__s64)v;
}

/* cpu-clock and task-clock count nanoseconds in their period. */
static bool period_is_ns(__u32 type, __u64 config)
{
	return type == PERF_TYPE_SOFTWARE &&
	       (config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK);
}

/* One Sample message and what it points to. */
struct psample_msg {
	PSample s;
	PLabel labels[2], *label_ptrs[2];
	__s64 values[3];
};

/* Everything the Profile message points to, owned here. */
struct packed {
	PValueType types[3], period_type;
	PValueType *type_ptrs[3];
	struct psample_msg *samples;
	PSample **sample_ptrs;
	PFunction **fn_ptrs;
	PMapping **map_ptrs;
	PLocation **loc_ptrs;
	__s64 comments[3];
};

static void packed_free(struct packed *p)
{
	free(p->samples);
	free(p->sample_ptrs);
	free(p->fn_ptrs);
	free(p->map_ptrs);
	free(p->loc_ptrs);
}

static int assemble(struct pprof *b, const struct profile_info *info, bool ns,
		    const char *in, PProfile *pr, struct packed *p)
{
	size_t ns_ = b->nr_samples, nv = info->offcpu_samples ? 3 : 2;
	__s64 comm_key = 0, pid_key = 0;
	char comment[512];

	p->types[0] = (PValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	p->types[1] = p->types[0];
	p->period_type = p->types[0];
	p->types[0].type = str_id(b, "samples");
	p->types[0].unit = str_id(b, "count");
	p->types[1].type = str_id(b, ns ? "cpu" : "events");
	p->types[1].unit = str_id(b, ns ? "nanoseconds" : "count");
	p->period_type = p->types[1];
	p->type_ptrs[0] = &p->types[0];
	p->type_ptrs[1] = &p->types[1];
	/* --off-cpu: the nanoseconds waited, a sample type of its own */
	p->types[2] = p->types[0];
	p->types[2].type = str_id(b, "offcpu");
	p->types[2].unit = str_id(b, "nanoseconds");
	p->type_ptrs[2] = &p->types[2];
	snprintf(comment, sizeof(comment), "precord export --pprof of %s", in);
	p->comments[0] = str_id(b, comment);
	snprintf(comment, sizeof(comment), "host %s, kernel %s%s", *info->host ? info->host : "?",
		 *info->osrelease ? info->osrelease : "?",
		 info->same_host ? "" : " (not this host: kernel symbols from the build-id cache only)");
	p->comments[1] = str_id(b, comment);
	snprintf(comment, sizeof(comment), "%llu samples, %llu lost, %llu bad records skipped",
		 (unsigned long long)info->samples, (unsigned long long)info->lost,
		 (unsigned long long)info->bad);
	p->comments[2] = str_id(b, comment);
	if (b->err)
		return b->err;

	p->samples = calloc(ns_ + 1, sizeof(*p->samples));
	p->sample_ptrs = calloc(ns_ + 1, sizeof(*p->sample_ptrs));
	p->fn_ptrs = calloc(b->nr_fns + 1, sizeof(*p->fn_ptrs));
	p->map_ptrs = calloc(b->nr_maps + 1, sizeof(*p->map_ptrs));
	p->loc_ptrs = calloc(b->nr_locs + 1, sizeof(*p->loc_ptrs));
	if (!p->samples || !p->sample_ptrs || !p->fn_ptrs || !p->map_ptrs || !p->loc_ptrs)
		return -ENOMEM;
	/* the labels' keys, interned where the first sample's were */
	if (ns_) {
		comm_key = str_id(b, "comm");
		pid_key = str_id(b, "pid");
	}
	for (size_t i = 0; i < ns_; i++) {
		struct psample_msg *m = &p->samples[i];
		PSample *s = &m->s;
		PLabel *l = m->labels;

		*s = (PSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		s->n_location_id = b->samples[i].nr;
		s->location_id = (uint64_t *)b->samples[i].locs;	/* not written by pack */
		m->values[0] = (__s64)b->samples[i].count;
		m->values[1] = (__s64)b->samples[i].period;
		m->values[2] = (__s64)b->samples[i].offcpu_ns;
		s->n_value = nv;
		s->value = (int64_t *)m->values;
		l[0] = (PLabel)PERFTOOLS__PROFILES__LABEL__INIT;
		l[1] = l[0];
		l[0].key = comm_key;
		l[0].str = b->samples[i].comm;
		l[1].key = pid_key;
		l[1].num = b->samples[i].pid;
		m->label_ptrs[0] = &l[0];
		m->label_ptrs[1] = &l[1];
		s->n_label = 2;
		s->label = m->label_ptrs;
		p->sample_ptrs[i] = s;
	}
	for (size_t i = 0; i < b->nr_fns; i++)
		p->fn_ptrs[i] = &b->fns[i];
	for (size_t i = 0; i < b->nr_maps; i++)
		p->map_ptrs[i] = &b->maps[i];
	for (size_t i = 0; i < b->nr_locs; i++) {
		p->loc_ptrs[i] = &b->locs[i].loc;
		b->locs[i].line_ptr = &b->locs[i].line;
		if (b->locs[i].line.function_id) {
			b->locs[i].loc.n_line = 1;
			b->locs[i].loc.line = &b->locs[i].line_ptr;
		}
	}
	if (b->err)
		return b->err;
	pr->n_sample_type = nv;
	pr->sample_type = p->type_ptrs;
	pr->n_sample = ns_;
	pr->sample = p->sample_ptrs;
	pr->n_mapping = b->nr_maps;
	pr->mapping = p->map_ptrs;
	pr->n_location = b->nr_locs;
	pr->location = p->loc_ptrs;
	pr->n_function = b->nr_fns;
	pr->function = p->fn_ptrs;
	pr->n_string_table = b->nr_strs;
	pr->string_table = b->strs;
	pr->period_type = &p->period_type;
	/* the period of one sample: -c N, or 1/F seconds with -F */
	if (info->freq && info->sample_period)
		pr->period = ns ? (__s64)(1000000000ULL / info->sample_period) : 1;
	else
		pr->period = to_s64(info->sample_period);
	pr->duration_nanos = to_s64(info->last_time - info->first_time);
	pr->n_comment = 3;
	pr->comment = (int64_t *)p->comments;
	return 0;
}

/* Write len bytes gzipped to out through a temporary file. */
static int write_gz(const char *out, const void *data, size_t len)
{
	char tmp[4096];
	int fd = create_replacement(out, tmp, sizeof(tmp)), err = 0;
	gzFile gz;

	if (fd < 0)
		return fd;
	gz = gzdopen(fd, "wb");
	if (!gz) {
		close(fd);
		return commit_replacement(tmp, out, -ENOMEM);
	}
	for (size_t at = 0; !err && at < len;) {
		unsigned int chunk = len - at > (1u << 30) ? (1u << 30) : (unsigned int)(len - at);
		int n = gzwrite(gz, (const char *)data + at, chunk);

		if (n <= 0)
			err = errno ? -errno : -EIO;
		at += n > 0 ? (size_t)n : 0;
	}
	if (gzclose(gz) != Z_OK && !err)
		err = errno ? -errno : -EIO;
	return commit_replacement(tmp, out, err);
}

int pprof__pack(struct pprof *b, const struct profile_info *info, const char *source,
		uint8_t **out, size_t *len)
{
	PProfile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct packed p = { 0 };
	int err;

	*out = NULL;
	*len = 0;
	err = b->err ? b->err : assemble(b, info, period_is_ns(info->attr_type, info->attr_config),
					 source, &pr, &p);
	if (!err) {
		*len = protobuf_c_message_get_packed_size(&pr.base);
		*out = malloc(*len ? *len : 1);
		if (*out)
			protobuf_c_message_pack(&pr.base, *out);
		else
			err = -ENOMEM;
	}
	packed_free(&p);
	return err;
}

int pprof_export(const char *in, const char *out, const struct pprof_opts *o)
{
	struct pprof *b = pprof__new();
	struct profile_opts po = { .cache = o ? o->cache : NULL, .with_offcpu = true };
	struct profile_info info = { 0 };
	struct pprof_stats st;
	uint8_t *buf = NULL;
	size_t len;
	int err;

	if (!b) {
		err = -ENOMEM;
		goto fail;
	}
	err = profile__read(in, &po, on_sample, b, &info);
	if (!err && !info.samples) {
		pr_err("%s: no samples to export", in);
		err = -ENODATA;
		goto out;
	}
	if (err)
		goto out;	/* profile__read said why */
	err = pprof__pack(b, &info, in, &buf, &len);
	if (err)
		goto fail;
	err = write_gz(out, buf, len);
	pprof__stats(b, &st);
	if (err)
		pr_err("cannot write %s: %s", out, strerror(-err));
	else
		pr_info("%s: %llu samples, %zu stacks, %zu functions, %zu mappings, %zu bytes before gzip",
			out, (unsigned long long)info.samples, st.stacks, st.functions, st.mappings, len);
	if (!err && st.capped)
		pr_warn("%s: %" PRIu64 " samples' periods not added in full: a stack's total period is held at 2^63-1, profile.proto's largest value",
			out, (uint64_t)st.capped);
	goto out;
fail:
	if (err == -ENOMEM)
		pr_err("%s: out of memory exporting to pprof", in);
out:
	free(buf);
	pprof__free(b);
	profile_info_free(&info);
	return err;
}

static const char export_usage[] =
"Usage: precord export --pprof [-i FILE] [-o OUT] [--buildid-dir DIR] [--debug-root DIR] [-v|-q]\n"
"Convert a perf.data file (precord's or perf record's) to another format.\n"
"  --pprof             gzipped profile.proto for go tool pprof, Pyroscope, Parca\n"
"  -i, --input FILE    the recording (default: perf.data)\n"
"  -o, --output OUT    the profile (default: FILE.pb.gz)\n"
"      --buildid-dir DIR  build-id cache to take symbols from (default: perf's, ~/.debug)\n"
"      --debug-root DIR   where local debug files of stripped code are (default\n"
"                         /usr/lib/debug); DEBUGINFOD_URLS: the servers asked next\n"
"  -v, --verbose       say more (-vv: why DSOs have no symbols)\n"
"  -q, --quiet         only errors\n";

int export_main(int argc, char **argv)
{
	enum { OPT_PPROF = 256, OPT_BUILDID_DIR, OPT_DEBUG_ROOT };
	static const struct option lopts[] = {
		{ "pprof", no_argument, NULL, OPT_PPROF },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "debug-root", required_argument, NULL, OPT_DEBUG_ROOT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = "perf.data", *dir = NULL;
	char *out = NULL, *def = NULL;
	struct pprof_opts o = { 0 };
	bool pprof = false;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:vqh", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_PPROF:		pprof = true; break;
		case 'i':		in = optarg; break;
		case 'o':		out = optarg; break;
		case OPT_BUILDID_DIR:	dir = optarg; break;
		case OPT_DEBUG_ROOT:	sym_cache__set_debug_defaults(optarg, false, 0, 0); break;
		case 'v':		log_verbosity++; break;
		case 'q':		log_verbosity = -1; break;
		case 'h':		fputs(export_usage, stdout); return 0;
		default:		fputs(export_usage, stderr); return 2;
		}
	}
	if (optind < argc || !pprof) {
		pr_err("export: %s; try: precord export --pprof -i FILE -o OUT.pb.gz",
		       optind < argc ? "unexpected argument" : "say the format (--pprof)");
		return 2;
	}
	if (!out && asprintf(&def, "%s.pb.gz", in) < 0)
		return 1;
	o.cache = sym_cache__new(dir);
	if (!o.cache) {
		pr_err("export: %s", strerror(errno));
		free(def);
		return 1;
	}
	err = pprof_export(in, out ? out : def, &o);
	if (!err)
		pr_info("export: wrote %s", out ? out : def);
	sym_cache__free(o.cache);
	free(def);
	return err ? 1 : 0;
}
