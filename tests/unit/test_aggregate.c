// SPDX-License-Identifier: GPL-2.0
/*
 * --aggregate in user space: the record written for one counted key (read
 * back from a perf.data by perf's field order), and the drain of the two
 * generations of maps through a fake backend.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "precord/perf_file.h"
#include "perfdata/writer.h"
#include "record/aggregator.h"
#include "record/sample_converter.h"
#include "harness.h"

static char dir[] = "/tmp/precord-test-aggregate.XXXXXX";

static __u64 rd64(const __u8 *p) { __u64 v; memcpy(&v, p, 8); return v; }
static __u32 rd32(const __u8 *p) { __u32 v; memcpy(&v, p, 4); return v; }

/* ---- the record of one key ---------------------------------------------- */

struct conv_file {
	char path[64];
	struct perfdata_writer *w;
	struct sample_converter *c;
	__u8 data[4096];		/* the data section after write_out() */
	size_t len;
};

static const __u64 cpu_ids[2] = { 101, 102 };

static int conv_open(struct conv_file *f, __u64 sample_type, const __u64 *ids)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .sample_type = sample_type, .sample_id_all = 1 };
	struct sample_converter_config cfg = {
		.sample_type = sample_type, .id_type = sample_type & ~PERF_SAMPLE_CALLCHAIN,
		.cpu_ids = ids, .nr_cpu_ids = 2, .callchain = true,
	};
	int fd;

	snprintf(f->path, sizeof(f->path), "%s/x.data", dir);
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	f->w = perfdata_writer__new(fd);
	if (!f->w || perfdata_writer__add_evsel(f->w, &a, "cpu-clock", ids, 2) < 0 ||
	    perfdata_writer__begin(f->w))
		return -1;
	cfg.w = f->w;
	f->c = sample_converter__new(&cfg);
	return f->c ? 0 : -1;
}

/* Flush the writer and read its data section into f->data. */
static int write_out(struct conv_file *f)
{
	struct perf_file_header h;
	int fd;

	if (perfdata_writer__flush(f->w, ~0ULL))
		return -1;
	fd = open(f->path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (pread(fd, &h, sizeof(h), 0) != sizeof(h) || h.data.size > sizeof(f->data) ||
	    pread(fd, f->data, h.data.size, (off_t)h.data.offset) != (ssize_t)h.data.size) {
		close(fd);
		return -1;
	}
	close(fd);
	f->len = h.data.size;
	return 0;
}

static void conv_close(struct conv_file *f)
{
	sample_converter__free(f->c);
	perfdata_writer__free(f->w);
	unlink(f->path);
}

TEST(record_has_perf_fields_period_and_chain)
{
	__u64 st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	struct prec_agg_key k = { .pid = 10, .tid = 11, .cpu = 1, .nr_kernel = 2, .nr_user = 3,
				  .ip = 0xffffffff81000010ULL, .stack_id = 7 };
	struct prec_agg_val v = { .count = 5, .period = 5 * 1001001ULL };
	const __u64 ips[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL,
			      0x401000, 0x402000, 0x403000 };
	const __u64 chain[] = { (__u64)PERF_CONTEXT_KERNEL, ips[0], ips[1],
				(__u64)PERF_CONTEXT_USER, ips[2], ips[3], ips[4] };
	struct conv_file f = { 0 };
	struct sample_counts n;
	const __u8 *p;

	CHECK_EQ(conv_open(&f, st, cpu_ids), 0);
	CHECK_EQ(sample_converter__aggregated(f.c, &k, &v, ips, 12345), 0);
	CHECK_EQ(write_out(&f), 0);
	p = f.data;
	/* IDENTIFIER IP TID TIME CPU PERIOD CALLCHAIN, perf's order */
	CHECK_EQ(f.len, 8 + 6 * 8 + 8 + 7 * 8);
	CHECK_EQ(((const struct perf_event_header *)p)->type, PERF_RECORD_SAMPLE);
	CHECK_EQ(((const struct perf_event_header *)p)->misc, PERF_RECORD_MISC_KERNEL);
	CHECK_EQ(((const struct perf_event_header *)p)->size, f.len);
	CHECK_EQ(rd64(p + 8), 102);		/* the id of CPU 1's event */
	CHECK(rd64(p + 16) == k.ip);
	CHECK_EQ(rd32(p + 24), 10);
	CHECK_EQ(rd32(p + 28), 11);
	CHECK_EQ(rd64(p + 32), 12345);
	CHECK_EQ(rd32(p + 40), 1);
	CHECK_EQ(rd64(p + 48), 5 * 1001001ULL);	/* count x period */
	CHECK_EQ(rd64(p + 56), 7);
	for (int i = 0; i < 7 && 64 + 8 * i + 8 <= (int)f.len; i++)
		CHECK(rd64(p + 64 + 8 * i) == chain[i]);
	sample_converter__counts(f.c, &n);
	CHECK_EQ(n.samples, 5);			/* the samples, not the records */
	CHECK_EQ(n.first_time, 12345);
	CHECK_EQ(n.last_time, 12345);
	conv_close(&f);
}

TEST(record_without_cpu_or_stack)
{
	__u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
		   PERF_SAMPLE_CALLCHAIN;
	const __u64 ids[2] = { 0, 55 };		/* CPU 0 has no event */
	struct prec_agg_key k = { .pid = 3, .tid = 4, .nr_user = 2, .ip = 0x401234, .stack_id = 9 };
	struct prec_agg_val v = { .count = 2, .period = 2000 };
	struct conv_file f = { 0 };
	const __u8 *p;

	CHECK_EQ(conv_open(&f, st, ids), 0);
	/* the stack was not found: the count stays, without frames */
	CHECK_EQ(sample_converter__aggregated(f.c, &k, &v, NULL, 99), 0);
	CHECK_EQ(write_out(&f), 0);
	p = f.data;
	CHECK_EQ(f.len, 8 + 8 + 8 + 8 + 8 + 8);
	CHECK_EQ(((const struct perf_event_header *)p)->misc, PERF_RECORD_MISC_USER);
	CHECK_EQ(rd64(p + 32), 2000);
	CHECK_EQ(rd64(p + 40), 0);		/* callchain nr */
	/* a key without samples is refused */
	v.count = 0;
	CHECK_EQ(sample_converter__aggregated(f.c, &k, &v, NULL, 99), -EINVAL);
	conv_close(&f);
}

TEST(record_on_a_cpu_without_event_is_refused)
{
	__u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		   PERF_SAMPLE_PERIOD;
	const __u64 ids[2] = { 0, 55 };
	struct prec_agg_key k = { .pid = 3, .tid = 4, .cpu = 0, .ip = 0x401234 };
	struct prec_agg_val v = { .count = 1, .period = 1000 };
	struct conv_file f = { 0 };

	CHECK_EQ(conv_open(&f, st, ids), 0);
	CHECK_EQ(sample_converter__aggregated(f.c, &k, &v, NULL, 1), -EINVAL);
	k.cpu = 7;
	CHECK_EQ(sample_converter__aggregated(f.c, &k, &v, NULL, 1), -EINVAL);
	conv_close(&f);
}

/* ---- the drain ---------------------------------------------------------- */

#define FAKE_MAX 8

struct fake_stack {
	__u64 id;
	__u64 ips[PREC_AGG_STACK_WORDS];
};

struct fake_maps {
	unsigned int current;
	int activations;
	struct prec_agg_key keys[2][FAKE_MAX];
	struct prec_agg_val vals[2][FAKE_MAX];
	__u32 nr[2];
	struct fake_stack stacks[2][FAKE_MAX];
	__u32 nr_stacks[2];
	int take_while_current;		/* drains of the generation BPF fills */
};

static int fake_activate(void *ctx, unsigned int gen)
{
	struct fake_maps *m = ctx;

	m->current = gen;
	m->activations++;
	return 0;
}

static int fake_take(void *ctx, unsigned int gen, struct prec_agg_key *keys,
		     struct prec_agg_val *vals, __u32 max, __u32 *n)
{
	struct fake_maps *m = ctx;

	if (gen == m->current)
		m->take_while_current++;
	*n = m->nr[gen] < max ? m->nr[gen] : max;
	memcpy(keys, m->keys[gen], *n * sizeof(*keys));
	memcpy(vals, m->vals[gen], *n * sizeof(*vals));
	m->nr[gen] = 0;
	return 0;
}

static int fake_stack(void *ctx, unsigned int gen, __u64 id, __u64 *ips)
{
	struct fake_maps *m = ctx;

	for (__u32 i = 0; i < m->nr_stacks[gen]; i++)
		if (m->stacks[gen][i].id == id) {
			memcpy(ips, m->stacks[gen][i].ips, sizeof(m->stacks[gen][i].ips));
			return 0;
		}
	return -ENOENT;
}

static int fake_clear(void *ctx, unsigned int gen)
{
	struct fake_maps *m = ctx;

	m->nr_stacks[gen] = 0;
	return 0;
}

static void fake_count(struct fake_maps *m, unsigned int gen, __u32 tid, __u64 id,
		       __u16 nu, __u64 count)
{
	__u32 i = m->nr[gen]++;

	m->keys[gen][i] = (struct prec_agg_key){ .pid = 1, .tid = tid, .nr_user = nu,
						 .ip = 0x400000 + tid, .stack_id = id };
	m->vals[gen][i] = (struct prec_agg_val){ .count = count, .period = count * 1000 };
}

static void fake_stack_add(struct fake_maps *m, unsigned int gen, __u64 id, __u64 first)
{
	struct fake_stack *s = &m->stacks[gen][m->nr_stacks[gen]++];

	s->id = id;
	for (int i = 0; i < PREC_AGG_STACK_WORDS; i++)
		s->ips[i] = first + (__u64)i;
}

struct sunk {
	int n;
	__u32 tid[FAKE_MAX];
	__u64 first_frame[FAKE_MAX];	/* 0: no frames */
	__u64 period[FAKE_MAX], time[FAKE_MAX];
	int fail_at;			/* -1: never */
};

static int sink(void *ctx, const struct prec_agg_key *k, const struct prec_agg_val *v,
		const __u64 *ips, __u64 time)
{
	struct sunk *s = ctx;

	if (s->n == s->fail_at)
		return -ENOSPC;
	s->tid[s->n] = k->tid;
	s->first_frame[s->n] = ips && k->nr_user ? ips[0] : 0;
	s->period[s->n] = v->period;
	s->time[s->n] = time;
	s->n++;
	return 0;
}

static struct aggregator *fake_aggregator(struct fake_maps *m, struct sunk *s)
{
	struct agg_backend be = {
		.activate = fake_activate, .take_counts = fake_take,
		.stack = fake_stack, .clear_stacks = fake_clear, .ctx = m,
	};

	return aggregator__new(&be, FAKE_MAX, sink, s);
}

TEST(flush_swaps_then_drains_the_quiet_generation)
{
	struct fake_maps m = { 0 };
	struct sunk s = { .fail_at = -1 };
	struct aggregator *a = fake_aggregator(&m, &s);
	struct agg_counts n;

	CHECK(a != NULL);
	if (!a)
		return;
	fake_count(&m, 0, 1, 0xa, 2, 3);	/* its stack in generation 0 */
	fake_count(&m, 0, 2, 0xb, 1, 4);	/* counted between the two swaps:
						 * its stack in generation 1 */
	fake_count(&m, 0, 3, 0xc, 1, 5);	/* its stack nowhere */
	fake_count(&m, 0, 4, 0, 0, 6);		/* no frames */
	fake_stack_add(&m, 0, 0xa, 100);
	fake_stack_add(&m, 1, 0xb, 200);
	CHECK_EQ(aggregator__flush(a, 777), 0);
	CHECK_EQ(m.current, 1);
	CHECK_EQ(m.take_while_current, 0);
	CHECK_EQ(s.n, 4);
	CHECK_EQ(s.tid[0], 1);
	CHECK_EQ(s.first_frame[0], 100);
	CHECK_EQ(s.first_frame[1], 200);
	CHECK_EQ(s.first_frame[2], 0);
	CHECK_EQ(s.first_frame[3], 0);
	CHECK_EQ(s.period[1], 4000);
	CHECK_EQ(s.time[3], 777);
	CHECK_EQ(m.nr[0], 0);
	CHECK_EQ(m.nr_stacks[0], 0);		/* the old stacks are gone */
	CHECK_EQ(m.nr_stacks[1], 1);		/* the live ones stay */
	aggregator__counts(a, &n);
	CHECK_EQ(n.flushes, 1);
	CHECK_EQ(n.records, 4);
	CHECK_EQ(n.samples, 3 + 4 + 5 + 6);
	CHECK_EQ(n.missing_stacks, 1);

	/* the next flush drains generation 1 and makes 0 current again */
	fake_count(&m, 1, 5, 0xb, 1, 7);
	CHECK_EQ(aggregator__flush(a, 888), 0);
	CHECK_EQ(m.current, 0);
	CHECK_EQ(m.take_while_current, 0);
	CHECK_EQ(s.n, 5);
	CHECK_EQ(s.first_frame[4], 200);
	CHECK_EQ(m.nr_stacks[1], 0);
	aggregator__free(a);
}

TEST(a_failing_sink_stops_the_flush)
{
	struct fake_maps m = { 0 };
	struct sunk s = { .fail_at = 1 };
	struct aggregator *a = fake_aggregator(&m, &s);

	CHECK(a != NULL);
	if (!a)
		return;
	fake_count(&m, 0, 1, 0, 0, 1);
	fake_count(&m, 0, 2, 0, 0, 1);
	CHECK_EQ(aggregator__flush(a, 1), -ENOSPC);
	CHECK_EQ(s.n, 1);
	aggregator__free(a);
}

TEST(a_flush_is_due_each_second_and_when_the_map_fills)
{
	struct fake_maps m = { 0 };
	struct sunk s = { .fail_at = -1 };
	struct aggregator *a = fake_aggregator(&m, &s);
	struct prec_agg_stats st = { .taken = 10, .inserts = 2 };
	struct agg_counts n;

	CHECK(a != NULL);
	if (!a)
		return;
	CHECK(!aggregator__due(a, &st, 1000));
	CHECK(!aggregator__due(a, &st, 1000 + 999999999ULL));
	CHECK(aggregator__due(a, &st, 1000 + 1000000000ULL));
	CHECK_EQ(aggregator__flush(a, 1000 + 1000000000ULL), 0);
	/* half the capacity (8) of new keys since the flush: early */
	st.inserts = 5;
	CHECK(!aggregator__due(a, &st, 1001000000ULL + 1));	/* the base: 5 */
	st.inserts = 8;
	CHECK(!aggregator__due(a, &st, 1001000000ULL + 2));
	st.inserts = 9;
	CHECK(aggregator__due(a, &st, 1001000000ULL + 3));
	CHECK_EQ(aggregator__flush(a, 1001000000ULL + 3), 0);
	/* a sample sent to the ring because a map was full: early */
	CHECK(!aggregator__due(a, &st, 1001000000ULL + 4));
	st.full = 1;
	CHECK(aggregator__due(a, &st, 1001000000ULL + 5));
	aggregator__counts(a, &n);
	CHECK_EQ(n.early_flushes, 2);
	aggregator__free(a);
}

int main(void)
{
	return HARNESS_WITH_TMPDIR(dir, {
		RUN(record_has_perf_fields_period_and_chain);
		RUN(record_without_cpu_or_stack);
		RUN(record_on_a_cpu_without_event_is_refused);
		RUN(flush_swaps_then_drains_the_quiet_generation);
		RUN(a_failing_sink_stops_the_flush);
		RUN(a_flush_is_due_each_second_and_when_the_map_fills);
	});
}
