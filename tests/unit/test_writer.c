// SPDX-License-Identifier: GPL-2.0
/* perf.data writer: lay out a small file, read the layout back. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"

static char path[] = "/tmp/precord-test-writer.XXXXXX";

static __u8 *slurp(size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	__u8 *p;

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	p = malloc((size_t)st.st_size + 1);
	if (p && read(fd, p, (size_t)st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return p;
}

static struct perfdata_writer *new_writer(void)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .sample_type = PREC_SAMPLE_BASE_BITS, .sample_id_all = 1 };
	__u64 ids0[2] = { 11, 12 }, ids1[1] = { 21 };
	struct perfdata_writer *w;
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	w = perfdata_writer__new(fd);
	CHECK_EQ(perfdata_writer__add_evsel(w, &a, "cpu-clock", ids0, 2), 0);
	a.config = PERF_COUNT_SW_DUMMY;
	CHECK_EQ(perfdata_writer__add_evsel(w, &a, "dummy:HG", ids1, 1), 1);
	return w;
}

/* Free w, remove its file, get the name template ready for the next. */
static void free_writer(struct perfdata_writer *w)
{
	perfdata_writer__free(w);
	unlink(path);
	strcpy(path, "/tmp/precord-test-writer.XXXXXX");
}

/* The data section holds n samples of queue_sample() with these times
 * (their ip field), then extra bytes. */
static void check_times(const __u64 *want, int n, size_t extra)
{
	struct perf_file_header h;
	size_t len;
	__u8 *f = slurp(&len);

	CHECK(f != NULL);
	if (!f)
		return;
	memcpy(&h, f, sizeof(h));
	CHECK_EQ(h.data.size, (size_t)n * 56 + extra);
	for (int i = 0; i < n && h.data.offset + (size_t)(i + 1) * 56 <= len; i++)
		CHECK_EQ(*(__u64 *)(f + h.data.offset + (size_t)i * 56 + 32), want[i]);
	free(f);
}

static void queue_sample(struct perfdata_writer *w, __u64 time)
{
	struct perfdata_sample s = { .id = 11, .ip = time, .time = time, .period = 1 };
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, PREC_SAMPLE_BASE_BITS, &s), 0);
	CHECK_EQ(perfdata_writer__queue(w, time, b.data, b.len), 0);
	pbuf_free(&b);
}

TEST(layout_ids_attrs_data)
{
	struct perfdata_writer *w = new_writer();
	struct perf_file_header h;
	size_t len;
	__u8 *f;

	CHECK_EQ(perfdata_writer__begin(w), 0);
	f = slurp(&len);
	memcpy(&h, f, sizeof(h));
	CHECK(h.magic == PERF_MAGIC2);
	CHECK_EQ(h.size, 104);
	CHECK_EQ(h.attr_size, 144);
	CHECK_EQ(h.attrs.offset, 104 + 3 * 8);	/* ids first, as perf does */
	CHECK_EQ(h.attrs.size, 2 * 144);
	CHECK_EQ(h.data.offset, h.attrs.offset + h.attrs.size);
	CHECK_EQ(h.data.size, 0);
	{
		struct perf_event_attr a;
		struct perf_file_section ids;

		memcpy(&a, f + h.attrs.offset, 128);
		memcpy(&ids, f + h.attrs.offset + 128, 16);
		CHECK_EQ(a.size, 128);
		CHECK_EQ(ids.offset, 104);
		CHECK_EQ(ids.size, 16);
		CHECK_EQ(*(__u64 *)(f + 104), 11);
		memcpy(&ids, f + h.attrs.offset + 144 + 128, 16);
		CHECK_EQ(ids.offset, 120);
		CHECK_EQ(*(__u64 *)(f + 120), 21);
	}
	free(f);
	free_writer(w);
}

TEST(flush_sorts_holds_back_and_rewrites_header)
{
	struct perfdata_writer *w = new_writer();
	struct perf_file_header h;
	size_t len;
	__u8 *f;

	CHECK_EQ(perfdata_writer__begin(w), 0);
	queue_sample(w, 30);
	queue_sample(w, 10);
	queue_sample(w, 50);
	queue_sample(w, 20);
	CHECK_EQ(perfdata_writer__flush(w, 30), 0);	/* 10, 20, 30 now; 50 later */
	f = slurp(&len);
	memcpy(&h, f, sizeof(h));
	CHECK_EQ(h.data.size, 3 * 56);
	CHECK_EQ(h.adds_features[0], 0);	/* no features until finish */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(*(__u64 *)(f + h.data.offset + i * 56 + 32), 10 * (i + 1));
	free(f);
	queue_sample(w, 40);		/* older than the 50 still queued */
	queue_sample(w, 60);
	perfdata_writer__set_rounds(w, true);
	CHECK_EQ(perfdata_writer__flush(w, ~0ULL), 0);
	f = slurp(&len);
	memcpy(&h, f, sizeof(h));
	CHECK_EQ(h.data.size, 6 * 56 + 8);	/* + FINISHED_ROUND */
	CHECK_EQ(*(__u64 *)(f + h.data.offset + 3 * 56 + 32), 40);
	CHECK_EQ(*(__u64 *)(f + h.data.offset + 4 * 56 + 32), 50);
	CHECK_EQ(*(__u64 *)(f + h.data.offset + 5 * 56 + 32), 60);
	CHECK_EQ(((struct perf_event_header *)(f + h.data.offset + 6 * 56))->type,
		 PERF_RECORD_FINISHED_ROUND);
	free(f);
	free_writer(w);
}

TEST(flush_merges_sorted_runs)
{
	struct perfdata_writer *w = new_writer();
	struct perf_file_header h;
	size_t len, i;
	__u8 *f;
	bool ordered = true;

	CHECK_EQ(perfdata_writer__begin(w), 0);
	/* three runs, each in order, interleaving in time: 3k, 3k+1, 3k+2 */
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 40; k++)
			queue_sample(w, 1000 + 3 * k + (2 - r));
	queue_sample(w, 1000);	/* a fourth run: equal time keeps arrival order */
	CHECK_EQ(perfdata_writer__flush(w, ~0ULL), 0);
	f = slurp(&len);
	memcpy(&h, f, sizeof(h));
	CHECK_EQ(h.data.size, 121 * 56);
	for (i = 1; i < 121; i++)
		if (*(__u64 *)(f + h.data.offset + i * 56 + 32) <
		    *(__u64 *)(f + h.data.offset + (i - 1) * 56 + 32))
			ordered = false;
	CHECK(ordered);
	CHECK_EQ(*(__u64 *)(f + h.data.offset + 32), 1000);
	CHECK_EQ(*(__u64 *)(f + h.data.offset + 120 * 56 + 32), 1000 + 3 * 39 + 2);
	free(f);
	free_writer(w);
}

TEST(flush_in_order_queue_in_place)
{
	struct perfdata_writer *w = new_writer();
	static const __u64 want[] = { 10, 20, 30, 40 };
	struct perf_file_header h;
	size_t len;
	__u8 *f;

	CHECK_EQ(perfdata_writer__begin(w), 0);
	queue_sample(w, 10);
	queue_sample(w, 20);
	queue_sample(w, 30);
	CHECK_EQ(perfdata_writer__flush(w, 20), 0);	/* 30 stays */
	queue_sample(w, 40);
	perfdata_writer__set_rounds(w, true);
	CHECK_EQ(perfdata_writer__flush(w, ~0ULL), 0);
	check_times(want, 4, 8);
	f = slurp(&len);
	memcpy(&h, f, sizeof(h));
	CHECK_EQ(((struct perf_event_header *)(f + h.data.offset + 4 * 56))->type,
		 PERF_RECORD_FINISHED_ROUND);
	free(f);
	free_writer(w);
}

/* Partial in-place flushes leave a written front in the queue; a later
 * out-of-order record (the merge path) and more flushes must still write
 * every record once, in time order. */
TEST(flush_partial_then_out_of_order)
{
	struct perfdata_writer *w = new_writer();
	static const __u64 want[] = { 10, 20, 30, 35, 40, 50, 60 };

	CHECK_EQ(perfdata_writer__begin(w), 0);
	queue_sample(w, 10);
	queue_sample(w, 20);
	queue_sample(w, 30);
	CHECK_EQ(perfdata_writer__flush(w, 15), 0);	/* 10 */
	queue_sample(w, 40);
	CHECK_EQ(perfdata_writer__flush(w, 25), 0);	/* 20 */
	queue_sample(w, 60);
	queue_sample(w, 35);				/* out of order */
	CHECK_EQ(perfdata_writer__flush(w, 45), 0);	/* 30 35 40 */
	queue_sample(w, 50);
	CHECK_EQ(perfdata_writer__flush(w, ~0ULL), 0);	/* 50 60 */
	check_times(want, 7, 0);
	free_writer(w);
}

TEST(queue_rejects_bad_sizes)
{
	struct perfdata_writer *w = new_writer();
	__u8 junk[16] = { 0 };

	CHECK_EQ(perfdata_writer__queue(w, 1, junk, 4), -EINVAL);
	CHECK_EQ(perfdata_writer__queue(w, 1, junk, 12), -EINVAL);
	CHECK_EQ(perfdata_writer__append(w, junk, 8), -EINVAL);	/* before begin */
	free_writer(w);
}

TEST(finish_writes_feature_table_at_end_of_data)
{
	struct perfdata_writer *w = new_writer();
	char *argv[] = { "precord", "-g", NULL };
	struct perfdata_env env = { .argc = 2, .argv = argv, .have_clock = true,
				    .clockid = 1, .clock_res_ns = 1 };
	struct perf_file_header h;
	struct perf_file_section sec;
	__u64 prev_end = 0;
	size_t len, n = 0;
	__u8 *f;
	int bit;

	CHECK_EQ(perfdata_writer__begin(w), 0);
	queue_sample(w, 5);
	CHECK_EQ(perfdata_writer__finish(w, &env), 0);
	f = slurp(&len);
	memcpy(&h, f, sizeof(h));
	CHECK_EQ(h.data.size, 56);
	CHECK(h.adds_features[0] & (1ULL << HEADER_EVENT_DESC));
	CHECK(h.adds_features[0] & (1ULL << HEADER_CLOCKID));
	CHECK(!(h.adds_features[0] & (1ULL << HEADER_TRACING_DATA)));
	CHECK(!(h.adds_features[0] & (1ULL << HEADER_DIR_FORMAT)));
	CHECK_EQ(h.adds_features[1] | h.adds_features[2] | h.adds_features[3], 0);
	for (bit = 0; bit < 64; bit++) {
		if (!(h.adds_features[0] & (1ULL << bit)))
			continue;
		memcpy(&sec, f + h.data.offset + h.data.size + n * 16, 16);
		CHECK(sec.size > 0);
		CHECK(sec.offset >= h.data.offset + h.data.size);
		CHECK(sec.offset >= prev_end);	/* payloads in bit order */
		CHECK(sec.offset + sec.size <= len);
		prev_end = sec.offset + sec.size;
		n++;
	}
	CHECK_EQ(prev_end, len);
	free(f);
	free_writer(w);
}

int main(void)
{
	RUN(layout_ids_attrs_data);
	RUN(flush_sorts_holds_back_and_rewrites_header);
	RUN(flush_merges_sorted_runs);
	RUN(flush_in_order_queue_in_place);
	RUN(flush_partial_then_out_of_order);
	RUN(queue_rejects_bad_sizes);
	RUN(finish_writes_feature_table_at_end_of_data);
	return HARNESS_DONE();
}
