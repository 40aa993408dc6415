/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pprof export: a perf.data file as a gzipped profile.proto (Google's
 * pprof format, read by `go tool pprof`, Pyroscope, Parca …).
 *
 * Sample values: samples/count and, for cpu-clock or task-clock events
 * (precord's, and perf record's without a hardware PMU), cpu/nanoseconds
 * from each sample's period; other events give events/count.  The last
 * type is the default, so `go tool pprof -top` weighs samples by period,
 * as `perf report` does.  Identical stacks of one thread name and process
 * are merged into one sample with comm and pid labels.
 */
#ifndef PRECORD_REPORT_PPROF_H
#define PRECORD_REPORT_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "report/profile.h"
#include "report/symbolizer.h"

struct pprof_opts {
	struct sym_cache *cache;	/* NULL: one for this call */
};

/* Export in to out (written under a temporary name, then renamed).
 * 0, or -errno after one message saying what failed. */
int pprof_export(const char *in, const char *out, const struct pprof_opts *o);

/*
 * The writer in memory, under pprof_export (and for tests and fuzzers):
 *
 *	struct pprof *p = pprof__new();
 *	pprof__add(p, &sample);		// per sample; frames leaf first
 *	pprof__pack(p, &info, "x.data", &bytes, &len);	// profile.proto, not gzipped
 *	free(bytes);
 *	pprof__free(p);
 *
 * A sample's names may hold any bytes but NUL; its frames are copied into
 * the tables (nothing it points to need outlive the call).
 */
struct pprof;

/* NULL + errno on failure. */
struct pprof *pprof__new(void);
void pprof__free(struct pprof *p);

/* Merge s (at most PROFILE_MAX_FRAMES frames, each with its dso) into its
 * (pid, comm, stack)'s sample.  0, -E2BIG (too many frames: nothing
 * added) or -ENOMEM (then every later call fails too). */
int pprof__add(struct pprof *p, const struct profile_sample *s);

/* The Profile message of every sample added so far, packed: *out is
 * malloc'd (*len bytes).  info gives the event, period, duration and
 * comments; source names the input in the first comment.  0 or -ENOMEM. */
int pprof__pack(struct pprof *p, const struct profile_info *info, const char *source,
		uint8_t **out, size_t *len);

struct pprof_stats {
	size_t stacks, functions, mappings;
	uint64_t capped;	/* samples whose period hit the 2^63-1 limit of a stack's total */
};
void pprof__stats(const struct pprof *p, struct pprof_stats *st);

/* `precord export ...` (user/main.c's subcommand table). */
int export_main(int argc, char **argv);

#endif
