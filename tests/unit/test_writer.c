// SPDX-License-Identifier: GPL-2.0
/* perf.data writer: lay out a small file, read the layout back. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "util/log.h"

static char path[] = "/tmp/precord-test-writer.XXXXXX";

/*
 * A small disk, for the file on disk_fd only: pwrite and fallocate are
 * interposed (this binary's definitions come before libc's).  Blocks
 * past disk_cap cannot be allocated: fallocate fails, and a write is cut
 * there (the bytes before it are written, the next call fails), as a full
 * file system does.  disk_no_fallocate: a file system without fallocate.
 */
static int disk_fd = -1;
static __u64 disk_cap;
static int disk_errno = ENOSPC;
static bool disk_no_fallocate;

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pwrite");
	if (fd == disk_fd && off >= 0 && (__u64)off + n > disk_cap) {
		if ((__u64)off >= disk_cap) {
			errno = disk_errno;
			return -1;
		}
		n = disk_cap - (__u64)off;
	}
	return real(fd, buf, n, off);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	static int (*real)(int, int, off_t, off_t);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "fallocate");
	if (fd == disk_fd && disk_no_fallocate) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (fd == disk_fd && (__u64)off + (__u64)len > disk_cap) {
		errno = disk_errno;
		return -1;
	}
	return real(fd, mode, off, len);
}

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
	disk_fd = fd;			/* a disk with room, until a test says */
	disk_cap = ~0ULL >> 1;
	disk_errno = ENOSPC;
	disk_no_fallocate = false;
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
	disk_fd = -1;
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
	CHECK_EQ(perfdata_writer__samples(w), 6);	/* the round is not one */
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
	CHECK_EQ(perfdata_writer__samples(w), 121);
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
	CHECK_EQ(perfdata_writer__samples(w), 2);
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

/* ---- a full disk ---- */

/*
 * The file as perf reads it: every record of the data section whole, the
 * samples counted; every feature set has its section inside the file,
 * the last one ending the file.  Returns the samples (-1: broken).
 */
static long long check_readable(const __u8 *f, size_t len, struct perf_file_header *h)
{
	struct perf_file_section sec;
	long long samples = 0;
	__u64 off, end = 0;
	size_t n = 0;

	if (len < sizeof(*h))
		return -1;
	memcpy(h, f, sizeof(*h));
	if (h->data.offset + h->data.size > len)
		return -1;
	for (off = 0; off < h->data.size;) {
		struct perf_event_header eh;

		if (off + sizeof(eh) > h->data.size)
			return -1;
		memcpy(&eh, f + h->data.offset + off, sizeof(eh));
		if (eh.size < sizeof(eh) || eh.size % 8 || off + eh.size > h->data.size)
			return -1;
		samples += eh.type == PERF_RECORD_SAMPLE;
		off += eh.size;
	}
	for (int bit = 0; bit < 256; bit++) {
		if (!(h->adds_features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		memcpy(&sec, f + h->data.offset + h->data.size + n++ * 16, 16);
		if (!sec.size || sec.offset + sec.size > len)
			return -1;
		end = sec.offset + sec.size;
	}
	if (n && end != len)
		return -1;
	return samples;
}

/* Flushes of k samples each until one fails; returns the flushes done. */
static int fill_disk(struct perfdata_writer *w, int k, int *err)
{
	__u64 t = 1;
	int flushes;

	for (flushes = 0; flushes < 100000; flushes++) {
		for (int i = 0; i < k; i++)
			queue_sample(w, t++);
		*err = perfdata_writer__flush(w, ~0ULL);
		if (*err)
			break;
	}
	return flushes;
}

static void disk_full_keeps_complete_flushes(int errnum)
{
	struct perfdata_writer *w = new_writer();
	char *argv[] = { "precord", "-g", NULL };
	struct perfdata_env env = { .argc = 2, .argv = argv, .have_clock = true,
				    .clockid = 1, .clock_res_ns = 1 };
	struct perf_file_header h;
	const __u8 round[8] = { 68, 0, 0, 0, 0, 0, 8, 0 };	/* FINISHED_ROUND */
	__u64 room;
	size_t len;
	__u8 *f;
	int flushes, err = 0;

	disk_cap = 64 << 10;
	disk_errno = errnum;
	room = perfdata_writer__features_size(w, &env);
	CHECK(room > 1000);
	CHECK_EQ(perfdata_writer__reserve(w, room), 0);
	CHECK_EQ(perfdata_writer__begin(w), 0);
	CHECK_EQ(perfdata_writer__append(w, round, sizeof(round)), 0);	/* not a sample */
	flushes = fill_disk(w, 10, &err);
	CHECK(flushes > 10);
	CHECK_EQ(err, -errnum);
	CHECK_EQ(perfdata_writer__error(w), -errnum);
	CHECK_EQ(perfdata_writer__samples(w), (__u64)flushes * 10);
	queue_sample(w, ~0ULL - 1);
	CHECK_EQ(perfdata_writer__flush(w, ~0ULL), -errnum);	/* nothing more */
	CHECK_EQ(perfdata_writer__finish(w, &env), 0);		/* yet complete */
	f = slurp(&len);
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(check_readable(f, len, &h), flushes * 10);
		CHECK_EQ(h.data.size, 8 + (size_t)flushes * 10 * 56);
		CHECK(h.adds_features[0] & (1ULL << HEADER_EVENT_DESC));
		CHECK(h.adds_features[0] & (1ULL << HEADER_CMDLINE));
		CHECK(len <= disk_cap);
		CHECK_EQ(len, h.data.offset + h.data.size + room);
	}
	free(f);
	free_writer(w);
}

TEST(disk_full_keeps_complete_flushes_and_features)
{
	disk_full_keeps_complete_flushes(ENOSPC);
}

TEST(quota_exceeded_is_a_full_disk_too)
{
	disk_full_keeps_complete_flushes(EDQUOT);
}

/* Without fallocate a write is cut by the full disk: data.size still
 * ends at the last complete flush, and perf reads the file (without
 * features if they no longer fit). */
TEST(disk_full_without_fallocate_cuts_at_a_flush)
{
	struct perfdata_writer *w = new_writer();
	struct perfdata_env env = { 0 };
	struct perf_file_header h;
	size_t len;
	__u8 *f;
	int flushes, err = 0;

	disk_cap = (32 << 10) + 20;	/* not on a record boundary */
	disk_no_fallocate = true;
	CHECK_EQ(perfdata_writer__reserve(w, 4096), 0);
	CHECK_EQ(perfdata_writer__begin(w), 0);
	flushes = fill_disk(w, 7, &err);
	CHECK_EQ(err, -ENOSPC);
	log_verbosity = -1;	/* the warning that the features do not fit */
	CHECK_EQ(perfdata_writer__finish(w, &env), 0);
	log_verbosity = 0;
	f = slurp(&len);
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(check_readable(f, len, &h), flushes * 7);
		CHECK_EQ(h.data.size, (size_t)flushes * 7 * 56);
		CHECK_EQ(perfdata_writer__samples(w), (__u64)flushes * 7);
	}
	free(f);
	free_writer(w);
}

/* BUILD_ID entries added after the room was last grown (JIT images at
 * the end) are left out from the end, until the features fit. */
TEST(disk_full_trims_build_ids_to_the_room)
{
	struct perfdata_writer *w = new_writer();
	static const struct perfdata_build_id ids[5] = {
		{ PERF_RECORD_MISC_KERNEL, 20, { 1 }, "[kernel.kallsyms]" },
		{ PERF_RECORD_MISC_USER, 20, { 2 }, "/usr/bin/a" },
		{ PERF_RECORD_MISC_USER, 20, { 3 }, "/usr/bin/b" },
		{ PERF_RECORD_MISC_USER, 20, { 4 }, "/tmp/x.data.jit/jit-0.so" },
		{ PERF_RECORD_MISC_USER, 20, { 5 }, "/tmp/x.data.jit/jit-1.so" },
	};
	struct perfdata_env env = { .build_ids = ids, .nr_build_ids = 2 };
	struct perf_file_header h;
	struct perf_file_section sec;
	size_t len;
	__u8 *f;
	int err = 0;

	disk_cap = 48 << 10;
	CHECK_EQ(perfdata_writer__reserve(w, perfdata_writer__features_size(w, &env)), 0);
	CHECK_EQ(perfdata_writer__begin(w), 0);
	fill_disk(w, 5, &err);
	CHECK_EQ(err, -ENOSPC);
	env.nr_build_ids = 5;		/* 3 more: 300 bytes past the room */
	CHECK_EQ(perfdata_writer__finish(w, &env), 0);
	f = slurp(&len);
	CHECK(f != NULL);
	if (f) {
		CHECK(check_readable(f, len, &h) > 0);
		CHECK(h.adds_features[0] & (1ULL << HEADER_BUILD_ID));
		/* BUILD_ID is the first feature: its section comes first */
		memcpy(&sec, f + h.data.offset + h.data.size, sizeof(sec));
		CHECK_EQ(sec.size, 2 * 100);
		CHECK(len <= disk_cap);
	}
	free(f);
	free_writer(w);
}

/* No room for the features at the start: the caller learns it before
 * recording anything. */
TEST(reserve_fails_on_a_full_disk)
{
	struct perfdata_writer *w = new_writer();

	disk_cap = 4096;
	CHECK_EQ(perfdata_writer__begin(w), 0);
	CHECK_EQ(perfdata_writer__reserve(w, 8192), -ENOSPC);
	CHECK_EQ(perfdata_writer__error(w), -ENOSPC);
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
	RUN(disk_full_keeps_complete_flushes_and_features);
	RUN(quota_exceeded_is_a_full_disk_too);
	RUN(disk_full_without_fallocate_cuts_at_a_flush);
	RUN(disk_full_trims_build_ids_to_the_room);
	RUN(reserve_fails_on_a_full_disk);
	return HARNESS_DONE();
}
