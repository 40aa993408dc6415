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

#include "report/symbolizer.h"

struct pprof_opts {
	struct sym_cache *cache;	/* NULL: one for this call */
};

/* Export in to out (written under a temporary name, then renamed).
 * 0, or -errno after one message saying what failed. */
int pprof_export(const char *in, const char *out, const struct pprof_opts *o);

/* `precord export ...` (user/main.c's subcommand table). */
int export_main(int argc, char **argv);

#endif
