// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data reader.  Layout and rules in docs/perf-data.md; the sample's
 * fields follow the kernel's perf_output_sample() order.  Nothing the file
 * says is trusted: sections are checked against the file's size, counts
 * against the bytes that hold them, each record against its own size.
 */
#include "report/perf_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "precord/perf_file.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/io.h"
#include "util/log.h"

#define MAX_REPORTS	10
/* Read buffer: records are at most 64 KiB (u16 size); 1 MiB reads. */
#define READ_CHUNK	(1u << 20)
/* Queued records beyond this flush the older half (perf does the same
 * with its ordered-events memory limit). */
#define QUEUE_MAX_BYTES	((size_t)256 << 20)
/* Feature payloads larger than this are ignored as implausible. */
#define FEAT_MAX_BYTES	((__u64)64 << 20)

struct id_ent {
	__u64 id;
	int attr;
};

struct qent {
	__u64 time, seq, file_off;
	size_t at;			/* in the arena */
};

struct perf_reader {
	struct input_file in;
	__u64 file_size;
	struct perf_file_header hdr;
	__u64 data_end;			/* capped to the file */
	struct perf_event_attr *attrs;
	size_t nr_attrs;
	struct id_ent *ids;		/* sorted by id */
	size_t nr_ids;
	__u64 id_type;			/* the id layout: attr 0's sample_type */
	bool sample_id_all;
	char *hostname, *osrelease, *arch;
	__u32 nr_cpus;
	struct perf_build_id *bids;
	size_t nr_bids;
	struct perf_reader_stats st;
	unsigned int reports;

	/* reading */
	__u8 *buf;			/* buf_cap bytes from file offset buf_off */
	__u64 buf_off;
	size_t buf_len, buf_cap;	/* cap: READ_CHUNK, less for a small file */
	__u64 *scratch;			/* a record at an unaligned offset */
	struct pbuf arena;		/* queued records */
	struct qent *q;
	size_t nq, qcap;
	__u64 seq, max_time, next_flush, flushed;
};

static void bad(struct perf_reader *r, __u64 off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bad(struct perf_reader *r, __u64 off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	r->st.bad++;
	if (r->reports++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_warn("%s: offset %#llx: %s%s", r->in.path, (unsigned long long)off, msg,
		r->reports == MAX_REPORTS ? " (further bad records are counted, not shown)" : "");
}

static bool section_ok(const struct perf_reader *r, const struct perf_file_section *s)
{
	return s->offset <= r->file_size && s->size <= r->file_size - s->offset;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int find_attr(const struct perf_reader *r, __u64 id)
{
	struct id_ent key = { .id = id }, *e;

	if (r->nr_attrs == 1)
		return 0;
	if (!r->nr_ids)
		return -1;
	e = bsearch(&key, r->ids, r->nr_ids, sizeof(*e), cmp_id);
	return e ? e->attr : -1;
}

static int fail(struct perf_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct perf_reader *r, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("%s: %s", r->in.path, msg);
	return -err;
}

/* ---- header and attrs -------------------------------------------------- */

static int read_header(struct perf_reader *r)
{
	struct perf_file_header *h = &r->hdr;
	ssize_t n = pread_full(r->in.fd, h, sizeof(*h), 0);

	if (n < 0)
		return fail(r, (int)-n, "cannot read: %s", strerror((int)-n));
	if ((size_t)n < sizeof(h->magic) || (h->magic != PERF_MAGIC2 &&
					     h->magic != __builtin_bswap64(PERF_MAGIC2)))
		return fail(r, EINVAL, "not a perf.data file (no PERFILE2 magic)");
	if (h->magic != PERF_MAGIC2)
		return fail(r, ENOTSUP, "written on a machine of the other byte order; not supported");
	if ((size_t)n >= 16 && h->size == 16)
		return fail(r, ENOTSUP, "a pipe-mode perf.data (perf record -o -); not supported");
	if ((size_t)n < sizeof(*h))
		return fail(r, EINVAL, "truncated header (%zd of %zu bytes)", n, sizeof(*h));
	if (h->size != sizeof(*h))
		return fail(r, EINVAL, "header size %llu, expected %zu",
			    (unsigned long long)h->size, sizeof(*h));
	if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct perf_file_section) ||
	    h->attr_size > PERF_READER_MAX_ATTR_SIZE + sizeof(struct perf_file_section) ||
	    h->attr_size % 8)
		return fail(r, EINVAL, "implausible attr size %llu", (unsigned long long)h->attr_size);
	if (!section_ok(r, &h->attrs) || h->attrs.size % h->attr_size ||
	    h->attrs.size / h->attr_size == 0 ||
	    h->attrs.size / h->attr_size > PERF_READER_MAX_ATTRS)
		return fail(r, EINVAL, "bad attrs section (offset %llu, size %llu, %llu bytes each)",
			    (unsigned long long)h->attrs.offset, (unsigned long long)h->attrs.size,
			    (unsigned long long)h->attr_size);
	return 0;
}

static int read_ids(struct perf_reader *r, int a, const struct perf_file_section *s)
{
	size_t n = s->size / 8;

	if (!section_ok(r, s) || s->size % 8 || n > PERF_READER_MAX_IDS - r->nr_ids)
		return fail(r, EINVAL, "attr %d: bad ids section (offset %llu, size %llu)", a,
			    (unsigned long long)s->offset, (unsigned long long)s->size);
	if (!n)
		return 0;
	{
		__u64 *v = malloc(n * 8);
		ssize_t got;
		size_t cap = r->nr_ids;

		if (!v || array_grow((void **)&r->ids, &cap, r->nr_ids + n, sizeof(*r->ids))) {
			free(v);
			return -ENOMEM;
		}
		got = pread_full(r->in.fd, v, n * 8, (off_t)s->offset);
		if (got != (ssize_t)(n * 8)) {
			free(v);
			return fail(r, EIO, "cannot read the ids of attr %d", a);
		}
		for (size_t i = 0; i < n; i++)
			r->ids[r->nr_ids++] = (struct id_ent){ v[i], a };
		free(v);
	}
	return 0;
}

static int read_attrs(struct perf_reader *r)
{
	size_t stride = r->hdr.attr_size, nr = r->hdr.attrs.size / stride;
	size_t asz = stride - sizeof(struct perf_file_section);
	__u8 *sec = malloc(r->hdr.attrs.size);
	int err = 0;

	r->attrs = calloc(nr, sizeof(*r->attrs));
	if (!sec || !r->attrs) {
		free(sec);
		return -ENOMEM;
	}
	if (pread_full(r->in.fd, sec, r->hdr.attrs.size, (off_t)r->hdr.attrs.offset) !=
	    (ssize_t)r->hdr.attrs.size) {
		free(sec);
		return fail(r, EIO, "cannot read the attrs");
	}
	r->nr_attrs = nr;
	for (size_t i = 0; !err && i < nr; i++) {
		struct perf_file_section ids;

		memcpy(&r->attrs[i], sec + i * stride,
		       asz < sizeof(r->attrs[i]) ? asz : sizeof(r->attrs[i]));
		memcpy(&ids, sec + i * stride + asz, sizeof(ids));
		err = read_ids(r, (int)i, &ids);
	}
	free(sec);
	if (err)
		return err;
	if (r->nr_ids)
		qsort(r->ids, r->nr_ids, sizeof(*r->ids), cmp_id);
	r->id_type = r->attrs[0].sample_type;
	r->sample_id_all = r->attrs[0].sample_id_all;
	for (size_t i = 1; i < nr; i++)
		if (r->attrs[i].sample_id_all != r->sample_id_all ||
		    ((r->attrs[i].sample_type ^ r->id_type) & PERFDATA_SAMPLE_ID_ALL_BITS))
			return fail(r, EINVAL, "attrs %zu and 0 disagree on the sample id layout", i);
	return 0;
}

/* ---- features ----------------------------------------------------------- */

/* perf's string: u32 len, then len bytes (NUL-padded). */
static char *feat_string(const __u8 *p, size_t size)
{
	__u32 len;

	if (size < 4)
		return NULL;
	memcpy(&len, p, 4);
	if (len > size - 4)
		return NULL;
	return strndup((const char *)p + 4, len);
}

/*
 * File format: BUILD_ID entries back to back, each
 *	{ perf_event_header h (h.size = the entry's bytes); s32 pid;
 *	  u8 build_id[20]; u8 size; u8 pad[3]; char filename[] (NUL-padded) }
 * size counts only with PERF_RECORD_MISC_BUILD_ID_SIZE in h.misc.
 */
static void feat_build_ids(struct perf_reader *r, const __u8 *p, size_t size, __u64 off)
{
	size_t cap = 0, at = 0;

	while (size - at >= 36) {
		struct perf_event_header h;
		struct perf_build_id b = { 0 };
		size_t nlen;

		memcpy(&h, p + at, sizeof(h));
		if (h.size < 36 || h.size > size - at) {
			bad(r, off + at, "BUILD_ID entry of size %u (%zu bytes left)", h.size, size - at);
			return;
		}
		memcpy(&b.pid, p + at + 8, 4);
		memcpy(b.id, p + at + 12, 20);
		b.misc = h.misc;
		b.size = (h.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) ? p[at + 32] : 20;
		nlen = strnlen((const char *)p + at + 36, h.size - 36);
		if (b.size >= 1 && b.size <= 20 && nlen &&
		    !ARRAY_GROW(r->bids, cap, r->nr_bids + 1)) {
			b.filename = strndup((const char *)p + at + 36, nlen);
			if (b.filename)
				r->bids[r->nr_bids++] = b;
		} else if (b.size < 1 || b.size > 20 || !nlen) {
			bad(r, off + at, "BUILD_ID entry with id size %u and a name of %zu bytes",
			    b.size, nlen);
		}
		at += h.size;
	}
}

static void read_feature(struct perf_reader *r, int feat, const struct perf_file_section *s)
{
	__u8 *p;

	if (feat != HEADER_HOSTNAME && feat != HEADER_OSRELEASE && feat != HEADER_ARCH &&
	    feat != HEADER_NRCPUS && feat != HEADER_BUILD_ID)
		return;
	if (!section_ok(r, s) || s->size > FEAT_MAX_BYTES) {
		bad(r, s->offset, "feature %d: section of %llu bytes past the end of the file",
		    feat, (unsigned long long)s->size);
		return;
	}
	p = malloc(s->size ? s->size : 1);
	if (!p || pread_full(r->in.fd, p, s->size, (off_t)s->offset) != (ssize_t)s->size) {
		free(p);
		return;
	}
	switch (feat) {
	case HEADER_HOSTNAME:
		r->hostname = feat_string(p, s->size);
		break;
	case HEADER_OSRELEASE:
		r->osrelease = feat_string(p, s->size);
		break;
	case HEADER_ARCH:
		r->arch = feat_string(p, s->size);
		break;
	case HEADER_NRCPUS:
		if (s->size >= 8)
			memcpy(&r->nr_cpus, p + 4, 4);
		break;
	case HEADER_BUILD_ID:
		feat_build_ids(r, p, s->size, s->offset);
		break;
	}
	free(p);
}

static void read_features(struct perf_reader *r)
{
	__u64 at = r->hdr.data.offset + r->hdr.data.size;
	int nr = 0;

	for (int i = 0; i < 4; i++)
		nr += __builtin_popcountll(r->hdr.adds_features[i]);
	if (!nr)
		return;
	if (at > r->file_size || (__u64)nr * 16 > r->file_size - at) {
		bad(r, at, "the feature table (%d sections) is past the end of the file", nr);
		return;
	}
	for (int feat = 0; feat < 256; feat++) {
		struct perf_file_section s;

		if (!(r->hdr.adds_features[feat / 64] & (1ULL << (feat % 64))))
			continue;
		if (pread_full(r->in.fd, &s, sizeof(s), (off_t)at) != sizeof(s))
			return;
		at += sizeof(s);
		read_feature(r, feat, &s);
	}
}

struct perf_reader *perf_reader__open(const char *path)
{
	struct perf_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int err;

	if (!r)
		return NULL;
	err = input_file_open(&r->in, path, -1, path);
	if (err) {
		pr_err("%s: cannot open: %s", path, err == -EINVAL ? "not a regular file" : strerror(-err));
		free(r);
		errno = -err;
		return NULL;
	}
	if (fstat(r->in.fd, &st)) {
		err = -errno;
		goto out;
	}
	r->file_size = (__u64)st.st_size;
	err = read_header(r);
	if (!err)
		err = read_attrs(r);
	if (err)
		goto out;
	if (!section_ok(r, &r->hdr.data)) {
		if (r->hdr.data.offset > r->file_size) {
			err = fail(r, EINVAL, "data section at %llu is past the end of the file",
				   (unsigned long long)r->hdr.data.offset);
			goto out;
		}
		bad(r, r->hdr.data.offset, "data section of %llu bytes runs past the end "
		    "of the file (truncated?); reading what is there",
		    (unsigned long long)r->hdr.data.size);
		r->data_end = r->file_size;
		r->st.truncated = true;
	} else {
		r->data_end = r->hdr.data.offset + r->hdr.data.size;
	}
	read_features(r);
	return r;
out:
	perf_reader__free(r);
	errno = -err;
	return NULL;
}

void perf_reader__free(struct perf_reader *r)
{
	if (!r)
		return;
	input_file_close(&r->in);
	free(r->attrs);
	free(r->ids);
	free(r->hostname);
	free(r->osrelease);
	free(r->arch);
	for (size_t i = 0; i < r->nr_bids; i++)
		free((char *)r->bids[i].filename);
	free(r->bids);
	free(r->buf);
	free(r->scratch);
	pbuf_free(&r->arena);
	free(r->q);
	free(r);
}

/* ---- records ------------------------------------------------------------ */

struct cursor {
	const __u8 *p, *end;
};

/* n bytes from the cursor, or NULL when the record has fewer left. */
static const void *take(struct cursor *c, __u64 n)
{
	const __u8 *p = c->p;

	if (n > (__u64)(c->end - c->p))
		return NULL;
	c->p += n;
	return p;
}

static bool take_u64(struct cursor *c, __u64 *v)
{
	const void *p = take(c, 8);

	if (p)
		memcpy(v, p, 8);
	return p != NULL;
}

static bool take_u32x2(struct cursor *c, __u32 *a, __u32 *b)
{
	const __u8 *p = take(c, 8);

	if (p) {
		memcpy(a, p, 4);
		memcpy(b, p + 4, 4);
	}
	return p != NULL;
}

/* Skip {u64 n; n * each bytes}; false when n does not fit. */
static bool skip_counted(struct cursor *c, __u64 each)
{
	__u64 n;

	return take_u64(c, &n) && n <= (__u64)(c->end - c->p) / each && take(c, n * each);
}

static bool skip_read(struct cursor *c, __u64 rf)
{
	__u64 per = 8 + ((rf & PERF_FORMAT_ID) ? 8 : 0) + ((rf & PERF_FORMAT_LOST) ? 8 : 0);
	__u64 times = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			   !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));
	__u64 nr;

	if (!(rf & PERF_FORMAT_GROUP))
		return take(c, per + times) != NULL;
	return take_u64(c, &nr) && take(c, times) && nr <= (__u64)(c->end - c->p) / per &&
	       take(c, nr * per);
}

/* {u64 abi; u64 regs[popcount(mask)] when abi} */
static bool skip_regs(struct cursor *c, __u64 mask)
{
	__u64 abi;

	return take_u64(c, &abi) && (!abi || take(c, 8ULL * __builtin_popcountll(mask)));
}

/* The attr of a sample: by IDENTIFIER, else by ID at its place. */
static int sample_attr(const struct perf_reader *r, struct cursor c)
{
	__u64 id;

	if (r->nr_attrs == 1)
		return 0;
	if (r->id_type & PERF_SAMPLE_IDENTIFIER) {
		if (!take_u64(&c, &id))
			return -1;
		return find_attr(r, id);
	}
	if (r->id_type & PERF_SAMPLE_ID) {
		__u64 before = r->id_type & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					     PERF_SAMPLE_ADDR);

		if (!take(&c, 8ULL * __builtin_popcountll(before)) || !take_u64(&c, &id))
			return -1;
		return find_attr(r, id);
	}
	return 0;
}

static int parse_sample_body(const struct perf_event_attr *a, struct cursor *c,
			     struct perf_sample_view *s, const char **why)
{
	__u64 t = a->sample_type, v;

#define NEED(ok, msg) do { if (!(ok)) { *why = msg; return -EINVAL; } } while (0)
	if (t & PERF_SAMPLE_IDENTIFIER)
		NEED(take_u64(c, &s->id), "sample too short for its id");
	if (t & PERF_SAMPLE_IP)
		NEED(take_u64(c, &s->ip), "sample too short for its ip");
	if (t & PERF_SAMPLE_TID)
		NEED(take_u32x2(c, &s->pid, &s->tid), "sample too short for its pid/tid");
	if (t & PERF_SAMPLE_TIME)
		NEED(take_u64(c, &s->time), "sample too short for its time");
	if (t & PERF_SAMPLE_ADDR)
		NEED(take_u64(c, &s->addr), "sample too short for its addr");
	if (t & PERF_SAMPLE_ID)
		NEED(take_u64(c, &s->id), "sample too short for its id");
	if (t & PERF_SAMPLE_STREAM_ID)
		NEED(take(c, 8), "sample too short for its stream id");
	if (t & PERF_SAMPLE_CPU) {
		__u32 res;

		NEED(take_u32x2(c, &s->cpu, &res), "sample too short for its cpu");
	}
	s->period = a->freq ? 1 : (a->sample_period ? a->sample_period : 1);
	if (t & PERF_SAMPLE_PERIOD)
		NEED(take_u64(c, &s->period), "sample too short for its period");
	if (t & PERF_SAMPLE_READ)
		NEED(skip_read(c, a->read_format), "sample too short for its read values");
	if (t & PERF_SAMPLE_CALLCHAIN) {
		NEED(take_u64(c, &s->nr_callchain) &&
		     s->nr_callchain <= (__u64)(c->end - c->p) / 8, "callchain past the end of the sample");
		NEED(!((uintptr_t)c->p & 7), "misaligned callchain");
		s->callchain = take(c, s->nr_callchain * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		__u32 n;
		const void *p = take(c, 4);

		NEED(p, "sample too short for its raw size");
		memcpy(&n, p, 4);
		NEED(take(c, n), "raw data past the end of the sample");
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			struct cursor peek = *c;
			__u64 nr;

			NEED(take_u64(&peek, &nr) && take(&peek, 8) &&
			     nr <= (__u64)(peek.end - peek.p) / 24, "branch stack past the end");
			c->p = peek.p + nr * 24;
		} else {
			NEED(skip_counted(c, 24), "branch stack past the end");
		}
	}
	if (t & PERF_SAMPLE_REGS_USER)
		NEED(skip_regs(c, a->sample_regs_user), "user registers past the end");
	if (t & PERF_SAMPLE_STACK_USER) {
		NEED(take_u64(c, &v), "sample too short for its user stack size");
		NEED(!v || (take(c, v) && take(c, 8)), "user stack past the end");
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		NEED(take_u64(c, &s->weight), "sample too short for its weight");
	if (t & PERF_SAMPLE_DATA_SRC)
		NEED(take(c, 8), "sample too short for its data source");
	if (t & PERF_SAMPLE_TRANSACTION)
		NEED(take(c, 8), "sample too short for its transaction");
	if (t & PERF_SAMPLE_REGS_INTR)
		NEED(skip_regs(c, a->sample_regs_intr), "interrupt registers past the end");
	if (t & PERF_SAMPLE_PHYS_ADDR)
		NEED(take(c, 8), "sample too short for its physical address");
	if (t & PERF_SAMPLE_CGROUP)
		NEED(take_u64(c, &s->cgroup), "sample too short for its cgroup");
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		NEED(take(c, 8), "sample too short for its data page size");
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		NEED(take(c, 8), "sample too short for its code page size");
	if (t & PERF_SAMPLE_AUX)
		NEED(skip_counted(c, 1), "aux data past the end");
#undef NEED
	return 0;
}

/* A NUL-terminated string in [from, to) of the record. */
static const char *record_str(const struct perf_event_header *h, size_t from, size_t to)
{
	const char *s = (const char *)h + from;

	if (to <= from || to > h->size || !memchr(s, '\0', to - from))
		return NULL;
	return s;
}

/* Bytes before the variable part of the records the reader knows. */
static size_t fixed_size(__u32 type)
{
	switch (type) {
	case PERF_RECORD_MMAP:		return 40;
	case PERF_RECORD_MMAP2:		return 72;
	case PERF_RECORD_COMM:		return 16;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:		return 32;
	case PERF_RECORD_LOST:		return 24;
	case PERF_RECORD_LOST_SAMPLES:	return 16;
	case PERF_RECORD_CGROUP:	return 16;
	default:			return 8;
	}
}

static int parse_side(const struct perf_reader *r, const struct perf_event_header *h,
		      struct perf_event_view *ev, const char **why)
{
	size_t fixed = fixed_size(h->type), end = h->size;
	const __u8 *b = (const __u8 *)h;

	if (h->type < PERF_RECORD_HEADER_ATTR && r->sample_id_all) {
		if (perfdata_sample_id_parse(r->id_type, h, fixed, &ev->sid)) {
			*why = "record too short for its fields and sample id";
			return -EINVAL;
		}
		ev->has_sid = true;
		end -= perfdata_sample_id_size(r->id_type);
	} else if (h->size < fixed) {
		*why = "record too short for its fields";
		return -EINVAL;
	}
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct perf_mmap_view *m = &ev->mmap;

		memcpy(&m->pid, b + 8, 4);
		memcpy(&m->tid, b + 12, 4);
		memcpy(&m->start, b + 16, 8);
		memcpy(&m->len, b + 24, 8);
		memcpy(&m->pgoff, b + 32, 8);
		if (h->type == PERF_RECORD_MMAP2) {
			memcpy(&m->prot, b + 64, 4);
			memcpy(&m->flags, b + 68, 4);
			if ((h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && b[40] >= 1 && b[40] <= 20) {
				m->build_id_size = b[40];
				memcpy(m->build_id, b + 44, 20);
			} else if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
				memcpy(&m->maj, b + 40, 4);
				memcpy(&m->min, b + 44, 4);
				memcpy(&m->ino, b + 48, 8);
				memcpy(&m->ino_generation, b + 56, 8);
			}
		}
		m->filename = record_str(h, fixed, end);
		if (!m->filename || m->start + m->len < m->start) {
			*why = m->filename ? "mapping wraps around" : "mapping without a file name";
			return -EINVAL;
		}
		break;
	}
	case PERF_RECORD_COMM:
		memcpy(&ev->comm.pid, b + 8, 4);
		memcpy(&ev->comm.tid, b + 12, 4);
		ev->comm.exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		ev->comm.comm = record_str(h, fixed, end);
		if (!ev->comm.comm) {
			*why = "COMM without a NUL-terminated name";
			return -EINVAL;
		}
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		memcpy(&ev->task, b + 8, 24);
		break;
	case PERF_RECORD_LOST:
		memcpy(&ev->lost.id, b + 8, 8);
		memcpy(&ev->lost.lost, b + 16, 8);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		memcpy(&ev->lost.lost, b + 8, 8);
		break;
	case PERF_RECORD_CGROUP:
		memcpy(&ev->cgroup.id, b + 8, 8);
		ev->cgroup.path = record_str(h, fixed, end);
		if (!ev->cgroup.path) {
			*why = "CGROUP without a NUL-terminated path";
			return -EINVAL;
		}
		break;
	}
	return 0;
}

int perf_reader__parse(const struct perf_reader *r, const struct perf_event_header *h,
		       struct perf_event_view *ev, const char **why)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = h->type;
	ev->misc = h->misc;
	ev->size = h->size;
	ev->raw = h;
	*why = "record shorter than its header";
	if (h->size < sizeof(*h))
		return -EINVAL;
	if (h->type == PERF_RECORD_SAMPLE) {
		struct cursor c = { (const __u8 *)(h + 1), (const __u8 *)h + h->size };
		struct perf_sample_view *s = &ev->sample;
		int a = sample_attr(r, c);

		if (a < 0) {
			*why = "sample with an id no attr has";
			return -EINVAL;
		}
		s->attr = a;
		if (parse_sample_body(&r->attrs[a], &c, s, why))
			return -EINVAL;
		ev->has_sid = true;
		ev->sid = (struct perfdata_sample_id){ .pid = s->pid, .tid = s->tid,
						       .time = s->time, .cpu = s->cpu, .id = s->id };
		return 0;
	}
	return parse_side(r, h, ev, why);
}

/* ---- the read loop ------------------------------------------------------ */

/* Make [off, off + n) of the file readable at r->buf; NULL at EOF/error. */
static const __u8 *window(struct perf_reader *r, __u64 off, size_t n)
{
	ssize_t got;
	size_t want;

	if (off >= r->buf_off && off - r->buf_off + n <= r->buf_len)
		return r->buf + (off - r->buf_off);
	if (!r->buf) {
		/* a whole small data section, a record (< 64 KiB) at least */
		r->buf_cap = r->data_end - off < READ_CHUNK ? (size_t)(r->data_end - off) : READ_CHUNK;
		if (r->buf_cap < 65536)
			r->buf_cap = 65536;
		if (!(r->buf = malloc(r->buf_cap)))
			return NULL;
	}
	want = r->data_end - off < r->buf_cap ? (size_t)(r->data_end - off) : r->buf_cap;
	got = pread_full(r->in.fd, r->buf, want, (off_t)off);
	r->buf_off = off;
	r->buf_len = got > 0 ? (size_t)got : 0;
	return r->buf_len >= n ? r->buf : NULL;
}

static bool has_time(const struct perf_reader *r, const struct perf_event_view *ev)
{
	if (ev->type == PERF_RECORD_SAMPLE)
		return r->attrs[ev->sample.attr].sample_type & PERF_SAMPLE_TIME;
	return ev->has_sid && (r->id_type & PERF_SAMPLE_TIME);
}

static int deliver(struct perf_reader *r, struct perf_event_view *ev, __u64 off,
		   perf_reader_cb cb, void *ctx)
{
	ev->offset = off;
	r->st.records++;
	if (ev->type == PERF_RECORD_SAMPLE)
		r->st.samples++;
	else if (ev->type == PERF_RECORD_LOST || ev->type == PERF_RECORD_LOST_SAMPLES)
		r->st.lost += ev->lost.lost;
	return cb(ctx, ev);
}

static int cmp_qent(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Deliver queued records with time <= limit (all of them with ~0), or the
 * older half when half; keep the rest. */
static int flush(struct perf_reader *r, __u64 limit, bool half, perf_reader_cb cb, void *ctx)
{
	struct pbuf keep = { 0 };
	size_t i = 0, n = 0;
	int ret = 0;

	if (r->nq)
		qsort(r->q, r->nq, sizeof(*r->q), cmp_qent);
	for (; i < r->nq && !ret; i++) {
		const struct perf_event_header *h = (const void *)(r->arena.data + r->q[i].at);
		struct perf_event_view ev;
		const char *why;

		if (half ? i >= r->nq / 2 : r->q[i].time > limit)
			break;
		if (r->q[i].time > r->flushed)
			r->flushed = r->q[i].time;
		if (!perf_reader__parse(r, h, &ev, &why))
			ret = deliver(r, &ev, r->q[i].file_off, cb, ctx);
	}
	if (i == r->nq) {
		r->nq = 0;
		pbuf_reset(&r->arena);
		return ret;
	}
	for (; i < r->nq; i++) {
		const struct perf_event_header *h = (const void *)(r->arena.data + r->q[i].at);
		size_t at = keep.len;

		if (pbuf_put(&keep, h, h->size) || pbuf_align(&keep, 8))
			break;
		r->q[n] = r->q[i];
		r->q[n++].at = at;
	}
	pbuf_free(&r->arena);
	r->arena = keep;
	r->nq = n;
	return keep.err ? keep.err : ret;
}

static int enqueue(struct perf_reader *r, const struct perf_event_header *h, __u64 time,
		   __u64 off)
{
	size_t at;

	if (ARRAY_GROW(r->q, r->qcap, r->nq + 1))
		return -ENOMEM;
	if (pbuf_align(&r->arena, 8))
		return r->arena.err;
	at = r->arena.len;
	if (pbuf_put(&r->arena, h, h->size))
		return r->arena.err;
	if (time < r->flushed)
		r->st.unordered++;
	if (time > r->max_time)
		r->max_time = time;
	r->q[r->nq++] = (struct qent){ .time = time, .seq = r->seq++, .file_off = off, .at = at };
	return 0;
}

static int handle(struct perf_reader *r, const struct perf_event_header *h, __u64 off,
		  perf_reader_cb cb, void *ctx)
{
	struct perf_event_view ev;
	const char *why;

	if (h->type == PERF_RECORD_FINISHED_ROUND) {
		int ret = flush(r, r->next_flush, false, cb, ctx);

		r->next_flush = r->max_time;
		return ret;
	}
	if (perf_reader__parse(r, h, &ev, &why)) {
		bad(r, off, "%s record (type %u, %u bytes): %s; skipped", h->type == PERF_RECORD_SAMPLE ?
		    "SAMPLE" : "a", h->type, h->size, why);
		return 0;
	}
	if (!has_time(r, &ev))
		return deliver(r, &ev, off, cb, ctx);
	if (r->arena.len > QUEUE_MAX_BYTES) {
		int ret = flush(r, 0, true, cb, ctx);

		if (ret)
			return ret;
	}
	return enqueue(r, h, ev.sid.time, off);
}

int perf_reader__read(struct perf_reader *r, perf_reader_cb cb, void *ctx)
{
	__u64 off = r->hdr.data.offset;
	int ret = 0;

	if (!r->scratch && !(r->scratch = malloc(65536)))
		return -ENOMEM;
	while (!ret && off < r->data_end) {
		struct perf_event_header h;
		const __u8 *p;

		if (r->data_end - off < sizeof(h) || !(p = window(r, off, sizeof(h)))) {
			bad(r, off, "%llu bytes left, not a whole record; the data section ends here",
			    (unsigned long long)(r->data_end - off));
			r->st.truncated = true;
			break;
		}
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size > r->data_end - off) {
			bad(r, off, "record of type %u with size %u (%llu bytes left); "
			    "the rest of the data section is skipped", h.type, h.size,
			    (unsigned long long)(r->data_end - off));
			r->st.truncated = true;
			break;
		}
		if (!(p = window(r, off, h.size))) {
			bad(r, off, "cannot read a record of %u bytes; the data section ends here",
			    h.size);
			r->st.truncated = true;
			break;
		}
		if ((uintptr_t)p & 7) {
			memcpy(r->scratch, p, h.size);
			p = (const __u8 *)r->scratch;
		}
		ret = handle(r, (const struct perf_event_header *)p, off, cb, ctx);
		off += h.size;
	}
	if (!ret)
		ret = flush(r, ~0ULL, false, cb, ctx);
	return ret;
}

/* ---- accessors ---------------------------------------------------------- */

const struct perf_reader_stats *perf_reader__stats(const struct perf_reader *r)
{
	return &r->st;
}

const char *perf_reader__path(const struct perf_reader *r)
{
	return r->in.path;
}

const char *perf_reader__hostname(const struct perf_reader *r)
{
	return r->hostname;
}

const char *perf_reader__osrelease(const struct perf_reader *r)
{
	return r->osrelease;
}

const char *perf_reader__arch(const struct perf_reader *r)
{
	return r->arch;
}

__u32 perf_reader__nr_cpus(const struct perf_reader *r)
{
	return r->nr_cpus;
}

size_t perf_reader__nr_attrs(const struct perf_reader *r)
{
	return r->nr_attrs;
}

const struct perf_event_attr *perf_reader__attr(const struct perf_reader *r, size_t i)
{
	return i < r->nr_attrs ? &r->attrs[i] : NULL;
}

size_t perf_reader__nr_build_ids(const struct perf_reader *r)
{
	return r->nr_bids;
}

const struct perf_build_id *perf_reader__build_id(const struct perf_reader *r, size_t i)
{
	return i < r->nr_bids ? &r->bids[i] : NULL;
}

const struct perf_build_id *perf_reader__find_build_id(const struct perf_reader *r,
						       const char *filename)
{
	for (size_t i = r->nr_bids; i-- > 0;)
		if (!strcmp(r->bids[i].filename, filename))
			return &r->bids[i];
	return NULL;
}
