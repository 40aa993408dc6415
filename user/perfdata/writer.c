// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data file layout (perf 6.1's order, see docs/perf-data.md §1):
 *
 *   0    struct perf_file_header (104 bytes)
 *   104  u64 ids[] of evsel 0, evsel 1, …
 *        { perf_event_attr (128 bytes), perf_file_section ids } × nr_evsels
 *        data: records, each { perf_event_header, body }
 *        data.offset + data.size: perf_file_section × (features set), in
 *        ascending feature order, then the payloads back to back
 *
 * Records are queued with their timestamps and written in time order at
 * each flush; the header is rewritten after every flush with the current
 * data.size and no feature bits, so the file reads at any time.
 *
 * A full disk: the file's blocks are allocated (fallocate) ahead of the
 * data, always with room for the feature section past the data's end.
 * When the disk has no more room it is the allocation that fails, before
 * any byte of the flush is written; nothing more is written after a
 * failure, data.size keeps describing the records of the complete writes,
 * and __finish still writes the features into the room kept for them.
 */
#include "perfdata/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "precord/perf_file.h"
#include "perfdata/queue.h"
#include "perfdata/record.h"
#include "util/io.h"
#include "util/log.h"

struct perfdata_writer {
	int fd;
	bool begun;
	bool rounds;
	struct perfdata_evsel *evsels;
	size_t nr_evsels;
	__u64 data_offset;
	__u64 data_size;
	__u64 file_size;
	struct perfdata_queue *queue;	/* records waiting for a flush */
	struct pbuf out;	/* scratch for one flush */
	__u64 features[4];
	__u64 reserve;		/* kept allocated past the data: the features */
	__u64 alloc_end;	/* the file's blocks are allocated up to here */
	bool no_prealloc;	/* the file system cannot allocate ahead */
	int error;		/* the first failed write (-errno): the data stops */
	__u64 samples;		/* PERF_RECORD_SAMPLEs in the data section */
};

/*
 * Allocation ahead of the data grows in steps, so that fallocate is called
 * about once per MiB of data, not at every flush; on a disk with less room
 * than a step left, the allocation takes just what the flush needs.
 */
#define PREALLOC_STEP	(1ULL << 20)

struct perfdata_writer *perfdata_writer__new(int fd)
{
	struct perfdata_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->queue = perfdata_queue__new();
	if (!w->queue) {
		free(w);
		return NULL;
	}
	w->fd = fd;
	return w;
}

void perfdata_writer__free(struct perfdata_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nr_evsels; i++) {
		free(w->evsels[i].name);
		free(w->evsels[i].ids);
	}
	free(w->evsels);
	perfdata_queue__free(w->queue);
	pbuf_free(&w->out);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

int perfdata_writer__add_evsel(struct perfdata_writer *w, const struct perf_event_attr *attr,
			       const char *name, const __u64 *ids, __u32 nr_ids)
{
	struct perfdata_evsel *n, *e;

	if (w->begun)
		return -EBUSY;
	n = realloc(w->evsels, (w->nr_evsels + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	w->evsels = n;
	e = &n[w->nr_evsels];
	memset(e, 0, sizeof(*e));
	memcpy(&e->attr, attr, sizeof(*attr) < PERF_ATTR_WRITE_SIZE ?
	       sizeof(*attr) : PERF_ATTR_WRITE_SIZE);
	e->attr.size = PERF_ATTR_WRITE_SIZE;
	e->name = strdup(name);
	e->ids = calloc(nr_ids ? nr_ids : 1, sizeof(__u64));
	if (!e->name || !e->ids) {
		free(e->name);
		free(e->ids);
		return -ENOMEM;
	}
	memcpy(e->ids, ids, nr_ids * sizeof(__u64));
	e->nr_ids = nr_ids;
	return (int)w->nr_evsels++;
}

const struct perfdata_evsel *perfdata_writer__evsels(const struct perfdata_writer *w, size_t *nr)
{
	*nr = w->nr_evsels;
	return w->evsels;
}

static int write_header(struct perfdata_writer *w)
{
	struct perf_file_header h = {
		.magic = PERF_MAGIC2,
		.size = sizeof(h),
		.attr_size = PERF_ATTR_WRITE_SIZE + sizeof(struct perf_file_section),
	};

	h.attrs.offset = w->data_offset - w->nr_evsels * h.attr_size;
	h.attrs.size = w->nr_evsels * h.attr_size;
	h.data.offset = w->data_offset;
	h.data.size = w->data_size;
	memcpy(h.adds_features, w->features, sizeof(h.adds_features));
	return pwrite_full(w->fd, &h, sizeof(h), 0);
}

int perfdata_writer__begin(struct perfdata_writer *w)
{
	__u64 off = sizeof(struct perf_file_header);
	struct pbuf *b = &w->out;
	size_t i;
	int err;

	if (w->begun || !w->nr_evsels)
		return -EINVAL;
	pbuf_reset(b);
	pbuf_put_zero(b, sizeof(struct perf_file_header));
	for (i = 0; i < w->nr_evsels; i++)
		pbuf_put(b, w->evsels[i].ids, w->evsels[i].nr_ids * sizeof(__u64));
	for (i = 0; i < w->nr_evsels; i++) {
		struct perf_file_section ids = {
			.offset = off,
			.size = w->evsels[i].nr_ids * sizeof(__u64),
		};

		off += ids.size;
		pbuf_put(b, &w->evsels[i].attr, PERF_ATTR_WRITE_SIZE);
		pbuf_put(b, &ids, sizeof(ids));
	}
	if (b->err)
		return b->err;
	w->data_offset = b->len;
	w->file_size = b->len;
	err = pwrite_full(w->fd, b->data, b->len, 0);
	if (!err)
		err = write_header(w);
	if (err)
		return err;
	w->begun = true;
	return perfdata_writer__reserve(w, w->reserve);
}

/*
 * Allocate the file's blocks up to end.  FALLOC_FL_KEEP_SIZE: the file's
 * size stays that of what is written, so a recording killed here leaves
 * no tail of zeros.  A file system that cannot (EOPNOTSUPP) is written
 * without: a full disk may then leave no room for the features, and the
 * file is still read without them (the header rewritten at each flush has
 * no feature bits).
 */
static int prealloc(struct perfdata_writer *w, __u64 end)
{
	int r;

	do {
		r = fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->alloc_end,
			      (off_t)(end - w->alloc_end));
	} while (r && errno == EINTR);
	if (!r) {
		w->alloc_end = end;
		return 0;
	}
	if (errno == EOPNOTSUPP || errno == ENOSYS) {
		pr_debug("perf.data: the file system cannot allocate ahead (%s): a full disk may leave no room for the feature section",
			 strerror(errno));
		w->no_prealloc = true;
		return 0;
	}
	return -errno;
}

/* Blocks for n more bytes of data and the room kept after them. */
static int make_room(struct perfdata_writer *w, __u64 n)
{
	__u64 need = w->data_offset + w->data_size + n + w->reserve;
	int err;

	if (w->no_prealloc || need <= w->alloc_end)
		return 0;
	err = prealloc(w, need + PREALLOC_STEP);
	if (err == -ENOSPC || err == -EDQUOT)
		err = prealloc(w, need);
	return err;
}

/* Samples among n bytes of whole records: a walk along their headers. */
static __u64 count_samples(const __u8 *p, size_t n)
{
	struct perf_event_header h;
	__u64 k = 0;

	for (size_t off = 0; off + sizeof(h) <= n; off += h.size) {
		memcpy(&h, p + off, sizeof(h));
		if (!h.size)
			break;
		k += h.type == PERF_RECORD_SAMPLE;
	}
	return k;
}

/* p holds whole records, samples of them: they are all in the data
 * section, or none is (data.size moves only after a complete write). */
static int write_data(struct perfdata_writer *w, const void *p, size_t n, __u64 samples)
{
	int err = w->error;

	if (!err)
		err = make_room(w, n);
	if (!err)
		err = pwrite_full(w->fd, p, n, (off_t)(w->data_offset + w->data_size));
	if (err) {
		w->error = err;
		return err;
	}
	w->data_size += n;
	w->samples += samples;
	w->file_size = w->data_offset + w->data_size;
	return 0;
}

int perfdata_writer__reserve(struct perfdata_writer *w, __u64 bytes)
{
	int err;

	if (w->error)
		return w->error;
	w->reserve = bytes;
	if (!w->begun)
		return 0;
	err = make_room(w, 0);
	if (err)
		w->error = err;
	return err;
}

int perfdata_writer__error(const struct perfdata_writer *w)
{
	return w->error;
}

__u64 perfdata_writer__samples(const struct perfdata_writer *w)
{
	return w->samples;
}

int perfdata_writer__append(struct perfdata_writer *w, const void *rec, size_t size)
{
	if (!w->begun)
		return -EINVAL;
	return write_data(w, rec, size, count_samples(rec, size));
}

/* A record size perf.data cannot hold (header.size is 16 bits, records
 * are 8-aligned). */
static bool bad_size(size_t size)
{
	return size < sizeof(struct perf_event_header) || size > 0xffff || (size & 7);
}

void *perfdata_writer__queue_space(struct perfdata_writer *w, __u64 time, size_t size)
{
	if (bad_size(size))
		return NULL;
	return perfdata_queue__space(w->queue, time, size);
}

int perfdata_writer__queue(struct perfdata_writer *w, __u64 time, const void *rec, size_t size)
{
	void *p = perfdata_writer__queue_space(w, time, size);

	if (!p)
		return bad_size(size) ? -EINVAL : -ENOMEM;
	memcpy(p, rec, size);
	return 0;
}

void perfdata_writer__set_rounds(struct perfdata_writer *w, bool on)
{
	w->rounds = on;
}

/*
 * The queued records up to upto, then (rounds on, any record) a
 * FINISHED_ROUND: one write when the queue copied the batch into w->out,
 * two when it is written from the queue's own memory.  The records leave
 * the queue only once written.
 */
int perfdata_writer__flush(struct perfdata_writer *w, __u64 upto)
{
	struct perfdata_queue_batch b;
	struct pbuf *out = &w->out;
	bool round;
	int err;

	if (!w->begun)
		return -EINVAL;
	if (w->error)
		return w->error;	/* stopped: nothing more is written */
	err = perfdata_queue__peek(w->queue, upto, out, &b);
	if (err)
		return err;
	round = b.nr && w->rounds;
	if (round && b.copied) {
		if (perfdata_encode_finished_round(out))
			return -ENOMEM;
		b.data = out->data;
		b.size = out->len;
		round = false;
	}
	if (b.size) {
		err = write_data(w, b.data, b.size, b.samples);
		if (err)
			return err;
	}
	if (round) {
		pbuf_reset(out);
		err = perfdata_encode_finished_round(out);
		if (!err)
			err = write_data(w, out->data, out->len, 0);
		if (err)
			return err;
	}
	perfdata_queue__drop(w->queue);
	return write_header(w);
}

int perfdata_writer__hand_over(struct perfdata_writer *from, struct perfdata_writer *to,
			       __u64 t)
{
	struct perfdata_queue *q = to->queue;
	int err;

	if (perfdata_queue__nr(q))
		return -EBUSY;
	err = t ? perfdata_writer__flush(from, t - 1) : 0;
	if (err)
		return err;
	to->queue = from->queue;
	from->queue = q;
	return 0;
}

/*
 * File format: at data.offset + data.size, one perf_file_section per
 * feature bit set (ascending), then the payloads.  A feature whose writer
 * declines or fails keeps its bit clear.  Encodes into payload and secs
 * (offsets relative to the payload) and sets w->features.
 */
static size_t encode_features(struct perfdata_writer *w, const struct perfdata_env *env,
			      struct pbuf *payload, struct perf_file_section *secs)
{
	size_t nsec = 0;
	int feat, err;

	pbuf_reset(payload);
	memset(w->features, 0, sizeof(w->features));
	for (feat = 1; feat < HEADER_LAST_FEATURE; feat++) {
		size_t before = payload->len;

		err = perfdata_feature_write(feat, payload, env);
		if (err) {
			payload->len = before;
			payload->err = 0;
			if (err != -ENODATA)
				pr_debug("feature %d not written: %s", feat, strerror(-err));
			continue;
		}
		if (payload->len == before)	/* never an empty payload */
			continue;
		secs[nsec].offset = before;	/* relative for now */
		secs[nsec].size = payload->len - before;
		nsec++;
		w->features[feat / 64] |= 1ULL << (feat % 64);
	}
	return nsec;
}

__u64 perfdata_writer__features_size(struct perfdata_writer *w, const struct perfdata_env *env_in)
{
	struct perfdata_env env = *env_in;
	struct perf_file_section secs[HEADER_LAST_FEATURE];
	struct pbuf payload = { 0 };
	__u64 features[4], n;

	memcpy(features, w->features, sizeof(features));
	env.evsels = w->evsels;
	env.nr_evsels = w->nr_evsels;
	n = encode_features(w, &env, &payload, secs);
	n = n * sizeof(secs[0]) + payload.len;
	memcpy(w->features, features, sizeof(features));
	pbuf_free(&payload);
	return n;
}

/* The BUILD_ID entries that fit in room bytes less than the section needs
 * now (those from the end go first: JIT images, whose mappings a stopped
 * recording does not write anyway). */
static size_t build_ids_fitting(const struct perfdata_env *env, __u64 over)
{
	size_t n = env->nr_build_ids;
	__u64 freed = 0;

	while (n && freed < over)
		freed += perfdata_build_id_entry_size(&env->build_ids[--n]);
	return n;
}

static int write_features(struct perfdata_writer *w, const struct perfdata_env *env,
			  struct pbuf *payload)
{
	struct perf_file_section secs[HEADER_LAST_FEATURE];
	size_t nsec = encode_features(w, env, payload, secs);
	__u64 base = w->data_offset + w->data_size;
	__u64 off = base + nsec * sizeof(struct perf_file_section);
	int err;

	for (size_t i = 0; i < nsec; i++)
		secs[i].offset += off;
	err = pwrite_full(w->fd, secs, nsec * sizeof(secs[0]), (off_t)base);
	if (!err)
		err = pwrite_full(w->fd, payload->data, payload->len, (off_t)off);
	w->file_size = err ? base : off + payload->len;
	return err;
}

/*
 * After a failed write the features go into the room kept for them; when
 * they have grown past it (JIT images added at the end), BUILD_ID entries
 * are left out from the end, then BUILD_ID, then every feature (perf reads
 * the file without them: a missing BUILD_ID entry falls back to the path).
 */
static int write_features_stopped(struct perfdata_writer *w, const struct perfdata_env *env_in,
				  struct pbuf *payload)
{
	struct perfdata_env env = *env_in;
	__u64 end = w->data_offset + w->data_size;
	__u64 room = w->alloc_end > end ? w->alloc_end - end : 0;
	__u64 need = perfdata_writer__features_size(w, &env);
	int err;

	if (!w->no_prealloc && need > room) {
		env.nr_build_ids = build_ids_fitting(&env, need - room);
		pr_debug("perf.data: %zu of %zu BUILD_ID entries fit in the room left",
			 env.nr_build_ids, env_in->nr_build_ids);
	}
	err = write_features(w, &env, payload);
	if (err && env.nr_build_ids) {
		env.nr_build_ids = 0;
		err = write_features(w, &env, payload);
	}
	if (err) {
		pr_warn("no room left for the feature section (%s): perf reads the file without it (no build-ids, no host and CPU description)",
			strerror(-err));
		memset(w->features, 0, sizeof(w->features));
		w->file_size = w->data_offset + w->data_size;
	}
	return 0;
}

int perfdata_writer__finish(struct perfdata_writer *w, const struct perfdata_env *env_in)
{
	struct perfdata_env env = *env_in;
	struct pbuf payload = { 0 };
	int err;

	err = perfdata_writer__flush(w, ~0ULL);
	if (err && !w->error)
		return err;		/* not a write: the file stays as it was */
	env.evsels = w->evsels;
	env.nr_evsels = w->nr_evsels;
	if (!w->error) {
		err = write_features(w, &env, &payload);
		if (err)
			w->error = err;	/* the data is whole; the features may not fit */
	}
	if (w->error)
		err = write_features_stopped(w, &env, &payload);
	pbuf_free(&payload);
	if (!err && ftruncate(w->fd, (off_t)w->file_size))
		err = -errno;
	if (!err)
		err = write_header(w);
	if (!err && fsync(w->fd) && errno != EINVAL)
		err = -errno;
	return err;
}

__u64 perfdata_writer__data_size(const struct perfdata_writer *w)
{
	return w->data_size;
}

__u64 perfdata_writer__file_size(const struct perfdata_writer *w)
{
	return w->file_size;
}
