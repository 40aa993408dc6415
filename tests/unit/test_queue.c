// SPDX-License-Identifier: GPL-2.0
/* The writer's time-ordered record queue on its own: order, equal times,
 * batches up to a time, peek without drop, growth. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "perfdata/queue.h"

/* A record of size bytes (a multiple of 8, >= 24): the header, then the
 * time and a tag as u64s, then bytes of the tag's low byte. */
static void put_rec(struct perfdata_queue *q, __u32 type, __u64 time, __u64 tag, size_t size)
{
	struct perf_event_header h = { .type = type, .size = (__u16)size };
	__u8 *p = perfdata_queue__space(q, time, size);

	CHECK(p != NULL);
	if (!p)
		return;
	memcpy(p, &h, sizeof(h));
	memcpy(p + 8, &time, 8);
	memcpy(p + 16, &tag, 8);
	memset(p + 24, (int)(tag & 0xff), size - 24);
}

/* The tags of the records in b, in order, into tags (at most max); the
 * number of records, or -1 when a record is damaged. */
static int batch_tags(const struct perfdata_queue_batch *b, __u64 *tags, int max)
{
	const __u8 *p = b->data;
	size_t off = 0;
	int n = 0;

	while (off < b->size) {
		struct perf_event_header h;
		__u64 tag;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < 24 || off + h.size > b->size)
			return -1;
		memcpy(&tag, p + off + 16, 8);
		for (size_t i = 24; i < h.size; i++)
			if (p[off + i] != (__u8)(tag & 0xff))
				return -1;
		if (n < max)
			tags[n] = tag;
		n++;
		off += h.size;
	}
	return n;
}

/* A queue, the scratch for its copies and the last batch peeked. */
struct fixture {
	struct perfdata_queue *q;
	struct pbuf scratch;
	struct perfdata_queue_batch b;
};

static void fixture_free(struct fixture *f)
{
	pbuf_free(&f->scratch);
	perfdata_queue__free(f->q);
}

/* Peek up to upto: the batch is the records tagged want[0..n), in that
 * order, samples of them samples, copied or in place as said. */
static void peek_expect(struct fixture *f, __u64 upto, bool copied, const __u64 *want, int n,
			__u64 samples)
{
	__u64 tags[16];

	CHECK_EQ(perfdata_queue__peek(f->q, upto, &f->scratch, &f->b), 0);
	CHECK_EQ(f->b.copied, copied);
	CHECK_EQ(f->b.nr, n);
	CHECK_EQ(f->b.samples, samples);
	CHECK_EQ(batch_tags(&f->b, tags, 16), n);
	for (int i = 0; i < n && i < 16; i++)
		CHECK_EQ(tags[i], want[i]);
}

/* Drop the batch peeked: nr records stay queued. */
static void drop_expect(struct fixture *f, size_t nr)
{
	perfdata_queue__drop(f->q);
	CHECK_EQ(perfdata_queue__nr(f->q), nr);
}

TEST(in_order_batches_are_not_copied)
{
	struct fixture f = { .q = perfdata_queue__new() };

	put_rec(f.q, PERF_RECORD_SAMPLE, 10, 1, 32);
	put_rec(f.q, PERF_RECORD_MMAP2, 20, 2, 48);
	put_rec(f.q, PERF_RECORD_SAMPLE, 30, 3, 24);
	CHECK_EQ(perfdata_queue__nr(f.q), 3);
	peek_expect(&f, 20, false, (__u64[]){ 1, 2 }, 2, 1);
	CHECK_EQ(f.b.size, 80);
	CHECK_EQ(f.scratch.len, 0);
	drop_expect(&f, 1);
	put_rec(f.q, PERF_RECORD_SAMPLE, 40, 4, 24);	/* still in order */
	peek_expect(&f, ~0ULL, false, (__u64[]){ 3, 4 }, 2, 2);
	drop_expect(&f, 0);
	fixture_free(&f);
}

TEST(out_of_order_batches_are_sorted_copies)
{
	struct fixture f = { .q = perfdata_queue__new() };

	put_rec(f.q, PERF_RECORD_SAMPLE, 30, 3, 40);
	put_rec(f.q, PERF_RECORD_SAMPLE, 10, 1, 24);
	put_rec(f.q, PERF_RECORD_COMM, 50, 5, 32);
	put_rec(f.q, PERF_RECORD_SAMPLE, 20, 2, 56);
	peek_expect(&f, 30, true, (__u64[]){ 1, 2, 3 }, 3, 3);
	CHECK(f.b.data == f.scratch.data);
	drop_expect(&f, 1);
	put_rec(f.q, PERF_RECORD_SAMPLE, 40, 4, 24);	/* older than the 50 kept */
	peek_expect(&f, ~0ULL, true, (__u64[]){ 4, 5 }, 2, 1);
	drop_expect(&f, 0);
	fixture_free(&f);
}

/* Equal times come out in arrival order, whether the runs are merged
 * (few runs) or the queue is sorted whole (many runs). */
static void check_equal_times_keep_arrival(int runs, int per_run)
{
	struct perfdata_queue *q = perfdata_queue__new();
	struct perfdata_queue_batch b;
	struct pbuf scratch = { 0 };
	int n = runs * per_run;
	__u64 *tags = calloc((size_t)n, sizeof(*tags));
	__u64 tag = 0;

	/* run r: times 0, 0, 1, 1, 2, 2, … (two records per time) */
	for (int r = 0; r < runs; r++)
		for (int k = 0; k < per_run; k++)
			put_rec(q, PERF_RECORD_SAMPLE, (__u64)k / 2, tag++, 24);
	CHECK_EQ(perfdata_queue__peek(q, ~0ULL, &scratch, &b), 0);
	CHECK_EQ(batch_tags(&b, tags, n), n);
	/* time t: run 0's two records, then run 1's, … in arrival order */
	for (int i = 1; i < n; i++) {
		__u64 ta = (tags[i - 1] % (__u64)per_run) / 2, tb = (tags[i] % (__u64)per_run) / 2;

		CHECK(ta < tb || (ta == tb && tags[i - 1] < tags[i]));
	}
	perfdata_queue__drop(q);
	free(tags);
	pbuf_free(&scratch);
	perfdata_queue__free(q);
}

TEST(equal_times_keep_arrival_order)
{
	check_equal_times_keep_arrival(3, 64);		/* runs merged */
	check_equal_times_keep_arrival(40, 4);		/* qsort */
}

/* A batch peeked and not dropped (its write failed) is still queued. */
TEST(peek_without_drop_keeps_the_records)
{
	struct fixture f = { .q = perfdata_queue__new() };

	for (int sorted = 1; sorted >= 0; sorted--) {
		put_rec(f.q, PERF_RECORD_SAMPLE, sorted ? 1 : 3, 1, 24);
		put_rec(f.q, PERF_RECORD_SAMPLE, 2, 2, 24);
		CHECK_EQ(perfdata_queue__peek(f.q, ~0ULL, &f.scratch, &f.b), 0);
		peek_expect(&f, ~0ULL, !sorted, sorted ? (__u64[]){ 1, 2 } : (__u64[]){ 2, 1 }, 2, 2);
		drop_expect(&f, 0);
	}
	/* nothing up to the time: an empty batch, nothing dropped */
	put_rec(f.q, PERF_RECORD_SAMPLE, 100, 7, 24);
	peek_expect(&f, 99, false, NULL, 0, 0);
	CHECK_EQ(f.b.size, 0);
	drop_expect(&f, 1);
	fixture_free(&f);
}

/* A queue nothing was ever put in (a recording that ends at once): an
 * empty batch, no pointer arithmetic on the buffer it has not got (UBSan
 * flagged NULL + 0 here). */
TEST(empty_queue_peeks_an_empty_batch)
{
	struct fixture f = { .q = perfdata_queue__new() };

	CHECK_EQ(perfdata_queue__peek(f.q, ~0ULL, &f.scratch, &f.b), 0);
	CHECK_EQ(f.b.size, 0);
	CHECK_EQ(f.b.nr, 0);
	drop_expect(&f, 0);
	fixture_free(&f);
}

/*
 * Growth: many records of many sizes, from several interleaved runs,
 * taken out in batches up to rising times; every record comes out once,
 * whole and in order, also across the in-place front being compacted.
 */
TEST(growth_and_batches_up_to_a_time)
{
	struct perfdata_queue *q = perfdata_queue__new();
	struct perfdata_queue_batch b;
	struct pbuf scratch = { 0 };
	enum { N = 60000, RUNS = 4 };
	__u64 *tags = calloc(N, sizeof(*tags)), last_time = 0, seen = 0;
	__u64 upto = 0, next = 0;

	for (int round = 0; round < 12; round++) {
		/* RUNS interleaved runs, or one run in order every third round */
		int runs = round % 3 ? RUNS : 1;

		for (int i = 0; i < N / 12; i++, next++) {
			__u64 t = 1000 * (__u64)round + (__u64)(i % runs) * 7 + (__u64)i / (__u64)runs;
			size_t size = 24 + 8 * (size_t)(next % 200);

			put_rec(q, next % 3 ? PERF_RECORD_SAMPLE : PERF_RECORD_MMAP2, t, t, size);
		}
		upto = 1000 * (__u64)round + 500;	/* part of this round stays */
		CHECK_EQ(perfdata_queue__peek(q, upto, &scratch, &b), 0);
		int n = batch_tags(&b, tags, N);

		CHECK(n >= 0);
		CHECK_EQ((size_t)n, b.nr);
		for (int i = 0; i < n; i++) {
			CHECK(tags[i] >= last_time && tags[i] <= upto);
			last_time = tags[i];
		}
		seen += (__u64)n;
		perfdata_queue__drop(q);
	}
	CHECK_EQ(perfdata_queue__peek(q, ~0ULL, &scratch, &b), 0);
	int n = batch_tags(&b, tags, N);

	for (int i = 0; i < n; i++) {
		CHECK(tags[i] >= last_time);
		last_time = tags[i];
	}
	seen += (__u64)n;
	perfdata_queue__drop(q);
	CHECK_EQ(seen, next);
	CHECK_EQ(perfdata_queue__nr(q), 0);
	free(tags);
	pbuf_free(&scratch);
	perfdata_queue__free(q);
}

int main(void)
{
	RUN(in_order_batches_are_not_copied);
	RUN(out_of_order_batches_are_sorted_copies);
	RUN(equal_times_keep_arrival_order);
	RUN(peek_without_drop_keeps_the_records);
	RUN(empty_queue_peeks_an_empty_batch);
	RUN(growth_and_batches_up_to_a_time);
	return HARNESS_DONE();
}
