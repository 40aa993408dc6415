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
struct tracing;
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
	struct tracing *trace;		/* tracing.c */
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


#endif
