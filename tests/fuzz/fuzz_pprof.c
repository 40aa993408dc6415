// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the pprof writer (user/report/pprof.c) in memory: the
 * input is a script of samples with names of any bytes, given to
 * pprof__add as profile__read would give them, then packed (pprof__pack),
 * unpacked with protobuf-c's perftools.profiles.Profile and checked:
 * every reference exists (string table, mappings, functions, locations),
 * and every sample given comes back: each output sample is one (pid,
 * comm, stack) whose frames, mappings, functions and names are those
 * given, counting the samples given with them and the sum of their
 * periods (held at 2^63-1, each sample past it counted in
 * pprof__stats).  No file is read or written: the perf.data side is
 * fuzz_perf_reader's, pprof_export's file handling export.bats's.
 *
 * Script bytes:
 *   names  count byte (% 8 + 1), then per name a length byte (% 32) and
 *          its bytes (a NUL ends it early)
 *   dsos   count byte (% 4 + 1), then per DSO a flags byte (bit 0: a
 *          build-id, bit 1: kernel), a name index byte and, with bit 0,
 *          a build-id name index byte
 *   event  a byte: bit 0 cpu-clock (else another event), bit 1 -F; then
 *          a byte for the sample period or frequency
 *   then samples to the end (at most 16): a byte (pid & 3, comm index
 *          >> 2), a period byte (bit 7: a period near 2^64, else the
 *          byte * 1000 + the next byte), a depth byte (255: one frame
 *          over PROFILE_MAX_FRAMES, which must be refused, its first
 *          frame read from the input; else % 8 + 1)
 *          and per frame a byte (DSO & 3, symbol index >> 2 where the
 *          names' count is "no symbol", mapped if bit 5, mapping's page
 *          >> 6) and an address byte.  A frame neither mapped nor of a
 *          kernel DSO nor with a symbol is [unknown]'s (read_frame).
 * The caps keep an input's work small: most of the time goes to the
 * keymap's hashing and ASan's allocator, per frame.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/profile.pb-c.h"
#include "precord/perf_file.h"
#include "report/pprof.h"
#include "util/log.h"

/* The harness's own script reading and checks are not what is fuzzed:
 * no coverage instrumentation for them, and not inlined into what is (it
 * was a fifth of the time, on comparisons that tell libFuzzer nothing
 * about pprof.c). */
#ifdef __clang__
#define CHECKER	__attribute__((no_sanitize("coverage"), noinline))
#else
#define CHECKER	/* gcc (the replay build) instruments no coverage */
#endif

#define BASE		0x400000ULL
#define PAGE		4096ULL
#define MAX_NAMES	8
#define MAX_DSOS	4
#define MAX_SAMPLES	16
#define MAX_DEPTH	8

typedef Perftools__Profiles__Profile PProfile;

struct in {
	const uint8_t *p, *end;
};

CHECKER static unsigned int take(struct in *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

struct script {
	char names[MAX_NAMES][33];
	unsigned int nr_names;
	struct sym_dso dsos[MAX_DSOS];
	unsigned int nr_dsos;
	struct profile_sample samples[MAX_SAMPLES];
	struct sym_frame frames[MAX_SAMPLES][MAX_DEPTH];
	size_t nr_samples;
	struct profile_info info;
};

CHECKER static void read_names(struct in *in, struct script *sc)
{
	sc->nr_names = take(in) % MAX_NAMES + 1;
	for (unsigned int i = 0; i < sc->nr_names; i++) {
		size_t n = take(in) % 32;

		if (n > (size_t)(in->end - in->p))
			n = (size_t)(in->end - in->p);
		memcpy(sc->names[i], in->p, n);
		sc->names[i][n] = 0;
		in->p += n;
	}
}

CHECKER static void read_dsos(struct in *in, struct script *sc)
{
	sc->nr_dsos = take(in) % MAX_DSOS + 1;
	for (unsigned int i = 0; i < sc->nr_dsos; i++) {
		unsigned int flags = take(in);

		sc->dsos[i].name = sc->names[take(in) % sc->nr_names];
		sc->dsos[i].build_id = flags & 1 ? sc->names[take(in) % sc->nr_names] : "";
		sc->dsos[i].kernel = flags & 2;
	}
}

/* As the symbolizer makes them, a frame outside every mapping of a
 * kernel DSO or of [unknown] with no symbol: pprof.c keys a location by
 * its DSO's name too, but such a frame's name shows nowhere (no mapping,
 * no function), so two of them would look alike. */
static const struct sym_dso unknown = { .name = "[unknown]", .build_id = "" };

CHECKER static void read_frame(struct in *in, const struct script *sc, struct sym_frame *f)
{
	unsigned int b = take(in), sym = (b >> 2) % (sc->nr_names + 1);

	*f = (struct sym_frame){ .ip = BASE + 16 * (uint64_t)take(in),
				 .sym = sym < sc->nr_names ? sc->names[sym] : NULL,
				 .dso = &sc->dsos[(b & 3) % sc->nr_dsos] };
	if (b & 0x20) {
		f->map_start = BASE + (uint64_t)(b >> 6) * PAGE;
		f->map_end = f->map_start + PAGE;
		f->map_pgoff = (uint64_t)(b >> 6) * PAGE;
	} else if (!f->dso->kernel && !f->sym) {
		f->dso = &unknown;
	}
}

/* Add the script's samples; those refused (too deep) are not kept.  A
 * too-deep sample's first frame is the input's, the others one [unknown]
 * frame written once per run (they were copies of the first, 1,025
 * frames rewritten per such sample: a sixth of the run's time, in ASan's
 * checks of the copies, for frames pprof__add refuses by their count
 * before it reads one). */
CHECKER static void add_samples(struct in *in, struct script *sc, struct pprof *pp)
{
	static struct sym_frame deep[PROFILE_MAX_FRAMES + 1];

	if (!deep[1].dso)
		for (size_t i = 1; i <= PROFILE_MAX_FRAMES; i++)
			deep[i] = (struct sym_frame){ .ip = BASE, .dso = &unknown };
	while (in->p < in->end && sc->nr_samples < MAX_SAMPLES) {
		struct profile_sample *s = &sc->samples[sc->nr_samples];
		unsigned int b = take(in), per = take(in), depth = take(in);

		*s = (struct profile_sample){ .pid = b & 3, .comm = sc->names[(b >> 2) % sc->nr_names] };
		s->tid = s->pid;
		s->period = per & 0x80 ? UINT64_MAX >> (per & 7) : per * 1000ULL + take(in);
		if (depth == 255) {
			read_frame(in, sc, &deep[0]);
			s->nr_frames = PROFILE_MAX_FRAMES + 1;
			s->frames = deep;
			if (pprof__add(pp, s) != -E2BIG)
				abort();
			continue;
		}
		s->nr_frames = depth % MAX_DEPTH + 1;
		for (size_t i = 0; i < s->nr_frames; i++)
			read_frame(in, sc, &sc->frames[sc->nr_samples][i]);
		s->frames = sc->frames[sc->nr_samples];
		if (pprof__add(pp, s))
			abort();
		sc->nr_samples++;
	}
}

/* protobuf-c's unpack allocates each message: from one arena reset per
 * input instead of malloc (ASan's allocator was most of the time). */
#define ARENA_BYTES	(4u << 20)

static uint8_t arena[ARENA_BYTES] __attribute__((aligned(16)));
static size_t arena_used;

CHECKER static void *arena_alloc(void *data, size_t size)
{
	void *p = arena + arena_used;

	(void)data;
	size = (size + 15) & ~(size_t)15;
	if (size > ARENA_BYTES - arena_used)
		return NULL;
	arena_used += size;
	return p;
}

static void arena_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

static ProtobufCAllocator arena_allocator = { arena_alloc, arena_free, NULL };

static size_t nr_strs;
static char **strs;

#define STR_OK(i) ((i) >= 0 && (size_t)(i) < nr_strs)

CHECKER static bool str_is(int64_t i, const char *s)
{
	return STR_OK(i) && !strcmp(strs[i], s ? s : "");
}

/* Every reference within its table, ids 1..n in order. */
CHECKER static void check_refs(const PProfile *p)
{
	if (!nr_strs || strcmp(strs[0], "") || p->n_sample_type != 2 || !p->period_type ||
	    !STR_OK(p->period_type->type) || !STR_OK(p->period_type->unit))
		abort();
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (!STR_OK(p->sample_type[i]->type) || !STR_OK(p->sample_type[i]->unit))
			abort();
	for (size_t i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id != i + 1 || !STR_OK(p->mapping[i]->filename) ||
		    !STR_OK(p->mapping[i]->build_id))
			abort();
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id != i + 1 || !STR_OK(p->function[i]->name) ||
		    !STR_OK(p->function[i]->system_name) || !STR_OK(p->function[i]->filename))
			abort();
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (l->id != i + 1 || l->mapping_id > p->n_mapping || l->n_line > 1)
			abort();
		for (size_t j = 0; j < l->n_line; j++)
			if (!l->line[j]->function_id || l->line[j]->function_id > p->n_function)
				abort();
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (s->n_value != 2 || s->value[0] <= 0 || s->value[1] < 0 || s->n_label != 2 ||
		    !str_is(s->label[0]->key, "comm") || !STR_OK(s->label[0]->str) ||
		    !str_is(s->label[1]->key, "pid"))
			abort();
		for (size_t j = 0; j < s->n_location_id; j++)
			if (!s->location_id[j] || s->location_id[j] > p->n_location)
				abort();
	}
	for (size_t i = 0; i < p->n_comment; i++)
		if (!STR_OK(p->comment[i]))
			abort();
}

/* Location id (checked by check_refs) is frame f, with its mapping and
 * function. */
CHECKER static bool frame_is(const PProfile *p, uint64_t id, const struct sym_frame *f)
{
	const Perftools__Profiles__Location *l = p->location[id - 1];
	const Perftools__Profiles__Mapping *m;
	const Perftools__Profiles__Function *fn;

	if (l->address != f->ip)
		return false;
	if (!f->map_end && !f->dso->kernel) {
		if (l->mapping_id)
			return false;
	} else {
		if (!l->mapping_id)
			return false;
		m = p->mapping[l->mapping_id - 1];
		if (m->memory_start != f->map_start || m->memory_limit != f->map_end ||
		    m->file_offset != (f->dso->kernel ? 0 : f->map_pgoff) ||
		    !str_is(m->filename, f->dso->name) || !str_is(m->build_id, f->dso->build_id))
			return false;
	}
	if (!f->sym)
		return !l->n_line;
	if (l->n_line != 1)
		return false;
	fn = p->function[l->line[0]->function_id - 1];
	return str_is(fn->name, f->sym) && str_is(fn->system_name, f->sym) &&
	       str_is(fn->filename, f->dso->name);
}

CHECKER static bool sample_is(const PProfile *p, const Perftools__Profiles__Sample *o,
		      const struct profile_sample *s)
{
	if (o->label[1]->num != (int64_t)s->pid || !str_is(o->label[0]->str, s->comm) ||
	    o->n_location_id != s->nr_frames)
		return false;
	for (size_t k = 0; k < s->nr_frames; k++)
		if (!frame_is(p, o->location_id[k], &s->frames[k]))
			return false;
	return true;
}

/* Each sample given is in exactly one output sample, which counts it and
 * its period (the running sum held at INT64_MAX, as pprof__add does). */
CHECKER static void check_samples(const PProfile *p, const struct script *sc, uint64_t capped)
{
	static bool seen[MAX_SAMPLES];
	uint64_t got_capped = 0;

	memset(seen, 0, sizeof(seen));
	for (size_t j = 0; j < p->n_sample; j++) {
		const Perftools__Profiles__Sample *o = p->sample[j];
		uint64_t count = 0, period = 0;

		for (size_t i = 0; i < sc->nr_samples; i++) {
			if (!sample_is(p, o, &sc->samples[i]))
				continue;
			if (seen[i])
				abort();	/* one stack in two output samples */
			seen[i] = true;
			count++;
			if (__builtin_add_overflow(period, sc->samples[i].period, &period) ||
			    period > (uint64_t)INT64_MAX) {
				period = (uint64_t)INT64_MAX;
				got_capped++;
			}
		}
		if (!count || o->value[0] != (int64_t)count || o->value[1] != (int64_t)period)
			abort();
	}
	for (size_t i = 0; i < sc->nr_samples; i++)
		if (!seen[i])
			abort();
	if (got_capped != capped)
		abort();
}

CHECKER int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct script sc;
	struct in in = { data, data + size };
	struct pprof *pp = pprof__new();
	struct pprof_stats st;
	unsigned int ev;
	PProfile *p;
	uint8_t *pb;
	size_t len;
	char source[64];

	if (!pp)
		abort();
	log_verbosity = -1;
	sc.nr_samples = 0;
	read_names(&in, &sc);
	read_dsos(&in, &sc);
	ev = take(&in);
	sc.info.host = sc.names[0];
	sc.info.osrelease = sc.names[sc.nr_names - 1];
	sc.info.attr_type = ev & 1 ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE;
	sc.info.attr_config = ev & 1 ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_HW_CPU_CYCLES;
	sc.info.freq = ev & 2;
	sc.info.sample_period = take(&in);
	add_samples(&in, &sc, pp);
	sc.info.samples = sc.nr_samples;
	snprintf(source, sizeof(source), "fuzz/%s", sc.names[0]);
	if (pprof__pack(pp, &sc.info, source, &pb, &len))
		abort();
	pprof__stats(pp, &st);
	arena_used = 0;
	p = perftools__profiles__profile__unpack(&arena_allocator, len, pb);
	if (!p)
		abort();
	nr_strs = p->n_string_table;
	strs = p->string_table;
	check_refs(p);
	check_samples(p, &sc, st.capped);
	if (st.stacks != p->n_sample || st.functions != p->n_function ||
	    st.mappings != p->n_mapping || p->n_comment != 3 ||
	    strncmp(strs[p->comment[0]], "precord export --pprof of fuzz/", 31))
		abort();
	/* p is in the arena, reset by the next input (free_unpacked would
	 * walk it to free nothing) */
	free(pb);
	pprof__free(pp);
	return 0;
}
