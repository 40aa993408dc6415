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
#include "perfdata/record.h"
#include "util/array.h"
#include "util/log.h"

struct queued {
	__u64 time;
	__u64 seq;		/* keeps equal timestamps in arrival order */
	size_t off;		/* in qdata */
	__u32 size;
};

struct perfdata_writer {
	int fd;
	bool begun;
	bool rounds;
	struct perfdata_evsel *evsels;
	size_t nr_evsels;
	__u64 data_offset;
	__u64 data_size;
	__u64 file_size;
	struct pbuf qdata;	/* queued record bytes */
	struct pbuf qspare;	/* the other half: records kept past a flush */
	struct queued *q;
	size_t qh, nq, q_cap;	/* q[qh..nq) are queued (q[..qh) written) */
	size_t dh;		/* qdata bytes before dh are written */
	bool q_sorted;		/* queued in time order so far: no sort needed */
	__u64 seq;
	struct pbuf out;	/* scratch for one flush */
	struct queued *tmp;	/* merge scratch, kept between flushes */
	size_t tmp_cap;
	size_t *runs;
	size_t runs_cap;
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
	w->fd = fd;
	w->q_sorted = true;
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
	free(w->q);
	free(w->tmp);
	free(w->runs);
	pbuf_free(&w->qdata);
	pbuf_free(&w->qspare);
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

static int pwrite_full(int fd, const void *p, size_t n, __u64 off)
{
	const char *c = p;

	while (n) {
		ssize_t r = pwrite(fd, c, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		c += r;
		n -= (size_t)r;
		off += (__u64)r;
	}
	return 0;
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

/*
 * Whether the queued record e is a sample.  The flushes count samples
 * from the queue's entries: independent loads, where a walk along the
 * records' sizes is a chain of dependent ones (measured: 3.6 ns per
 * record with the data in cache, 2 records per traced call).
 */
static bool queued_sample(const struct perfdata_writer *w, const struct queued *e)
{
	__u32 type;

	memcpy(&type, w->qdata.data + e->off, sizeof(type));
	return type == PERF_RECORD_SAMPLE;
}

/* p holds whole records, samples of them: they are all in the data
 * section, or none is (data.size moves only after a complete write). */
static int write_data(struct perfdata_writer *w, const void *p, size_t n, __u64 samples)
{
	int err = w->error;

	if (!err)
		err = make_room(w, n);
	if (!err)
		err = pwrite_full(w->fd, p, n, w->data_offset + w->data_size);
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
	void *p;

	if (bad_size(size))
		return NULL;
	if ((w->nq >= w->q_cap || w->qdata.cap - w->qdata.len < size) &&
	    (ARRAY_GROW(w->q, w->q_cap, w->nq + 1) || pbuf_reserve(&w->qdata, size))) {
		w->qdata.err = 0;
		return NULL;
	}
	if (w->nq > w->qh && time < w->q[w->nq - 1].time)
		w->q_sorted = false;
	w->q[w->nq++] = (struct queued){
		.time = time, .seq = w->seq++, .off = w->qdata.len, .size = (__u32)size,
	};
	p = w->qdata.data + w->qdata.len;
	w->qdata.len += size;
	return p;
}

int perfdata_writer__queue(struct perfdata_writer *w, __u64 time, const void *rec, size_t size)
{
	void *p = perfdata_writer__queue_space(w, time, size);

	if (!p)
		return bad_size(size) ? -EINVAL : -ENOMEM;
	memcpy(p, rec, size);
	return 0;
}

static int cmp_queued(const void *a, const void *b)
{
	const struct queued *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/*
 * Records arrive as a few runs already in time order (one per ring and per
 * traced thread): merge the runs pairwise, O(n log runs), and fall back to
 * qsort when the queue is more or less random.
 */
static int sort_queue(struct perfdata_writer *w)
{
	size_t n = w->nq, nruns = 1, i, *runs;
	struct queued *tmp;

	for (i = 1; i < n; i++)
		nruns += cmp_queued(&w->q[i - 1], &w->q[i]) > 0;
	if (nruns == 1)
		return 0;
	if (nruns > n / 8 || ARRAY_GROW(w->runs, w->runs_cap, nruns + 1) ||
	    ARRAY_GROW(w->tmp, w->tmp_cap, n)) {
		qsort(w->q, n, sizeof(*w->q), cmp_queued);
		return 0;
	}
	runs = w->runs;
	tmp = w->tmp;
	runs[0] = 0;
	for (i = 1, nruns = 1; i < n; i++)
		if (cmp_queued(&w->q[i - 1], &w->q[i]) > 0)
			runs[nruns++] = i;
	runs[nruns] = n;
	while (nruns > 1) {
		size_t r, out = 0;

		for (r = 0; r + 1 < nruns; r += 2) {	/* merge runs r and r+1 */
			size_t a = runs[r], am = runs[r + 1], b = am, bm = runs[r + 2], k = a;

			while (a < am && b < bm)
				tmp[k++] = cmp_queued(&w->q[b], &w->q[a]) < 0 ? w->q[b++] : w->q[a++];
			while (a < am)
				tmp[k++] = w->q[a++];
			while (b < bm)
				tmp[k++] = w->q[b++];
			runs[out++] = runs[r];
		}
		if (r < nruns) {			/* an odd run out: copy it */
			memcpy(&tmp[runs[r]], &w->q[runs[r]], (runs[r + 1] - runs[r]) * sizeof(*tmp));
			runs[out++] = runs[r];
		}
		runs[out] = n;
		nruns = out;
		memcpy(w->q, tmp, n * sizeof(*tmp));
	}
	return 0;
}

void perfdata_writer__set_rounds(struct perfdata_writer *w, bool on)
{
	w->rounds = on;
}

/* Move the queued records to the front of q and qdata. */
static void compact(struct perfdata_writer *w)
{
	size_t i;

	if (!w->qh && !w->dh)
		return;
	memmove(w->qdata.data, w->qdata.data + w->dh, w->qdata.len - w->dh);
	w->qdata.len -= w->dh;
	for (i = w->qh; i < w->nq; i++) {
		w->q[i - w->qh] = w->q[i];
		w->q[i - w->qh].off -= w->dh;
	}
	w->nq -= w->qh;
	w->qh = 0;
	w->dh = 0;
}

/* Records arrived in time order: the ones to write are the front of
 * qdata, written from there; the rest stays where it is until the
 * written part is the larger one (no move of the rest at every flush). */
static int flush_in_place(struct perfdata_writer *w, __u64 upto)
{
	size_t n = w->qh, end;
	__u64 samples = 0;
	int err;

	for (; n < w->nq && w->q[n].time <= upto; n++)
		samples += queued_sample(w, &w->q[n]);
	end = n < w->nq ? w->q[n].off : w->qdata.len;
	if (end > w->dh) {
		err = write_data(w, w->qdata.data + w->dh, end - w->dh, samples);
		if (err)
			return err;
	}
	if (n > w->qh && w->rounds) {
		struct pbuf *b = &w->out;

		pbuf_reset(b);
		err = perfdata_encode_finished_round(b);
		if (!err)
			err = write_data(w, b->data, b->len, 0);
		if (err)
			return err;
	}
	w->qh = n;
	w->dh = end;
	if (w->qh == w->nq) {
		w->qh = w->nq = w->dh = 0;
		w->qdata.len = 0;
	} else if (2 * w->dh > w->qdata.len) {
		compact(w);
	}
	return write_header(w);
}

int perfdata_writer__flush(struct perfdata_writer *w, __u64 upto)
{
	struct pbuf *b = &w->out;
	struct pbuf keep = w->qspare;
	size_t i, nkeep = 0;
	__u64 samples = 0;
	int err;

	if (!w->begun)
		return -EINVAL;
	if (w->error)
		return w->error;	/* stopped: nothing more is written */
	if (w->q_sorted)
		return flush_in_place(w, upto);
	compact(w);
	sort_queue(w);
	w->q_sorted = true;	/* what stays queued stays in order */
	pbuf_reset(b);
	pbuf_reset(&keep);
	for (i = 0; i < w->nq; i++) {
		struct queued *e = &w->q[i];

		if (e->time <= upto) {
			pbuf_put(b, w->qdata.data + e->off, e->size);
			samples += queued_sample(w, e);
			continue;
		}
		/* keep for a later flush, compacted */
		pbuf_put(&keep, w->qdata.data + e->off, e->size);
		e->off = keep.len - e->size;
		w->q[nkeep++] = *e;
	}
	if (b->len && w->rounds)
		perfdata_encode_finished_round(b);
	if (b->err || keep.err) {
		pbuf_reset(&keep);
		w->qspare = keep;
		return -ENOMEM;
	}
	/* swap the halves: both keep their memory for the next flush */
	w->qspare = w->qdata;
	pbuf_reset(&w->qspare);
	w->qdata = keep;
	w->nq = nkeep;
	if (b->len) {
		err = write_data(w, b->data, b->len, samples);
		if (err)
			return err;
	}
	return write_header(w);
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
	err = pwrite_full(w->fd, secs, nsec * sizeof(secs[0]), base);
	if (!err)
		err = pwrite_full(w->fd, payload->data, payload->len, off);
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
