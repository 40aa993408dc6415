/* SPDX-License-Identifier: GPL-2.0 */
/* State of one recording, shared by session.c (set-up, loop, teardown)
 * and convert.c (ring records → perf.data records). */
#ifndef PRECORD_RECORD_SESSION_INT_H
#define PRECORD_RECORD_SESSION_INT_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "opts.h"
#include "record/events.h"
#include "record/sample_converter.h"
#include "record/tidset.h"
#include "util/buf.h"

struct bpf_sampler;
struct perfdata_writer;
struct dso_table;
struct trace_session;
struct jit_sources;
struct event_set;
struct sample_converter;
struct target_set;

struct session {
	const struct prec_opts *o;
	struct bpf_sampler *bpf;		/* bpf_sampler.c */
	struct event_set *ev;		/* event_set.c */
	struct perfdata_writer *w;
	struct dso_table *dt;
	struct trace_session *ts;
	struct jit_sources *jit;	/* jit_sources.c */
	char *cache_dir;		/* build-id cache, NULL: none */
	struct sample_converter *conv;	/* sample_converter.c */
	struct target_set *targets;	/* target.c */
	bool all;			/* -a */
	bool by_tid;			/* -t */
	__u64 id_type;			/* sample_type giving every record's trailer */

	char *out_path;
	int out_fd;

	__u64 features_bytes;		/* room kept for the features, BUILD_ID aside */
	bool lost_output;		/* JIT images or the XRay log not written */

	__u64 start_ns;
};


/* Tracing (trace_glue.c): set-up before the output, attrs, per-loop drain,
 * end, counters for the summary. */
int session_trace_setup(struct session *s);
int session_trace_add_evsels(struct session *s);
int session_trace_consume(struct session *s);
int session_trace_fd(struct session *s);		/* -1: none */
__u64 session_trace_watermark(struct session *s);	/* ~0: no limit */
int session_trace_finish(struct session *s);
/* --xray-out, after perf.data is complete: 0, or -errno (said why and
 * what was lost). */
int session_trace_write_xray(struct session *s);
__u64 session_trace_lost(struct session *s);
__u64 session_trace_calls(struct session *s);	/* function entries so far */
void session_trace_summary(struct session *s, char *buf, size_t n);
void session_trace_free(struct session *s);




#endif
