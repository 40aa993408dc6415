/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring records and side-band records → perf.data records, queued on the
 * writer: BPF samples become PERF_RECORD_SAMPLE with perf's callchain
 * markers; the side-band of the targets is kept (MMAP2 / COMM / FORK /
 * EXIT / LOST), the rest dropped; drops become LOST_SAMPLES.  Counts what
 * it wrote and what was malformed.
 */
#ifndef PRECORD_RECORD_SAMPLE_CONVERTER_H
#define PRECORD_RECORD_SAMPLE_CONVERTER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

struct sample_converter;
struct perfdata_writer;
struct dso_table;
struct target_set;
struct proc_state;
struct prec_agg_key;
struct prec_agg_val;
struct unwinder;
struct pyprocs;

/* What becomes of an executable mapping of a target. */
enum exec_map_action {
	EXEC_MAP_WRITE,		/* written as it comes */
	EXEC_MAP_DROP,		/* not written */
	EXEC_MAP_HOLD,		/* encoded and handed to hold() */
};

/* Who decides it (the JIT sources); decide NULL: every mapping written. */
struct exec_map_hook {
	enum exec_map_action (*decide)(void *ctx, __u32 pid, const char *name, __u32 prot,
				       __u64 start, __u64 len);
	int (*hold)(void *ctx, __u32 pid, __u64 time, const void *rec, size_t size);
	void *ctx;
};

struct sample_converter_config {
	struct perfdata_writer *w;
	struct dso_table *dt;		/* sampled DSOs and build-ids; NULL: none */
	struct target_set *targets;
	struct proc_state *state;	/* told the side-band written; NULL: none */
	__u64 sample_type;		/* of the samples, as the file's attr says */
	__u64 id_type;			/* of every record's trailer */
	const __u64 *cpu_ids;		/* sampling event id by CPU number; 0: none */
	int nr_cpu_ids;
	__u64 lost_id;			/* the id LOST_SAMPLES records carry */
	bool callchain;			/* -g */
	bool data_maps;			/* keep data mappings' MMAP2 (dwarf mode) */
	struct unwinder *unwind;	/* told of forks, execs, exits (ehframe); NULL: none */
	struct pyprocs *py;		/* Python frames spliced, side-band told; NULL: none */
	struct exec_map_hook hook;
};

/* NULL + errno. */
struct sample_converter *sample_converter__new(const struct sample_converter_config *cfg);
void sample_converter__free(struct sample_converter *c);		/* NULL-safe */

/* From now on records are queued on w (a file switch). */
void sample_converter__set_writer(struct sample_converter *c, struct perfdata_writer *w);

/* One record of the BPF ring (ctx: the converter).  A malformed one is
 * counted and skipped (said once); -ENOMEM stops the poll. */
int sample_converter__ring_record(void *ctx, void *data, size_t size);
/* One aggregated key (an agg_sink_fn of record/aggregator.h; ctx: the
 * converter): a PERF_RECORD_SAMPLE at time whose PERIOD is the sum of the
 * periods counted (count x the period when it is fixed), counted as
 * v->count samples.  ips: the key's frames, NULL: none known. */
int sample_converter__aggregated(void *ctx, const struct prec_agg_key *k,
				 const struct prec_agg_val *v, const __u64 *ips, __u64 time);
/* One side-band record, in time order (ctx: the converter).  -ENOMEM only. */
int sample_converter__sideband_record(void *ctx, const struct perf_event_header *h);
/* total: samples dropped so far; those not yet reported become one
 * LOST_SAMPLES record at time. */
int sample_converter__report_lost(struct sample_converter *c, __u64 total, __u64 time);

struct sample_counts {
	__u64 samples;			/* written (aggregated: the samples counted) */
	__u64 lost;			/* reported lost: dropped in BPF or the side-band */
	__u64 bad_records;		/* malformed records skipped */
	__u64 first_time, last_time;	/* of the samples; 0: none */
};
void sample_converter__counts(const struct sample_converter *c, struct sample_counts *out);
/* The closing summary's line, if malformed records were skipped. */
void sample_converter__print_stats(const struct sample_converter *c);

#endif
