/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function tracing (--trace) in a recording, on user/trace/: which binary
 * the patterns resolve in, which map filters the targets, which processes
 * the probes are bound to; then its attrs, records and end in the file.
 * Every method takes NULL (no --trace) and then does nothing.
 */
#ifndef PRECORD_RECORD_TRACING_H
#define PRECORD_RECORD_TRACING_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "opts.h"

struct tracing;
struct perfdata_writer;

/* Resolve and attach the probes o asks for: *out NULL when none.
 * targets_fd: the BPF target set; command: the `-- command`, 0: none.
 * Says why it failed. */
int tracing__new(struct tracing **out, const struct prec_opts *o, int targets_fd,
		 pid_t command);
void tracing__free(struct tracing *t);

int tracing__add_evsels(struct tracing *t, struct perfdata_writer *w);
/* Readable when trace records wait; -1: none. */
int tracing__fd(const struct tracing *t);
int tracing__consume(struct tracing *t, struct perfdata_writer *w);
/* Records before this time are all in the writer (~0: no limit). */
__u64 tracing__watermark(const struct tracing *t);
int tracing__finish(struct tracing *t, struct perfdata_writer *w);
/* --xray-out, after perf.data is complete: 0, or -errno (said why and
 * what was lost). */
int tracing__write_xray(struct tracing *t);
/* Entries and returns lost so far. */
__u64 tracing__lost(const struct tracing *t);
/* ", N traced calls" (function entries so far) into buf, or "". */
void tracing__describe(const struct tracing *t, char *buf, size_t n);
/* Per-probe figures on stderr. */
void tracing__print_stats(const struct tracing *t);

#endif
