// SPDX-License-Identifier: GPL-2.0
/*
 * jitdump file iteration: the reader remembers the offset of the first
 * byte it has not consumed, so a dump the runtime is still writing can be
 * read again later from there.  Parsing is jitdump.c's.
 *
 * The target controls the file: a read consumes at most the budget's
 * bytes, checks its deadline and stop request between chunks, and the
 * buffer, grown for a large record, goes back to READ_CHUNK after each
 * read (20 readers each keeping a 64 MiB buffer took 1.33 GB).
 */
#include "jit/jitdump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/array.h"
#include "util/io.h"
#include "util/log.h"
#include "util/printable.h"

#define READ_CHUNK		(1u << 20)
#define MAX_WARNINGS		10

struct jitdump_reader {
	struct input_file in;
	bool have_header, swap, dead;
	struct jitdump_header hdr;
	__u64 off;			/* first byte not consumed */
	__u64 pending;			/* bytes of a partial record at off */
	__u64 bad, unknown;
	unsigned int warnings;
	__u8 *buf;
	size_t cap;
};

struct jitdump_reader *jitdump_reader__new(const char *path, int fd)
{
	struct jitdump_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r) {
		if (fd >= 0)
			close(fd);
		errno = ENOMEM;
		return NULL;
	}
	err = input_file_open(&r->in, path, fd, "(jitdump)");
	if (err) {
		free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

void jitdump_reader__free(struct jitdump_reader *r)
{
	if (!r)
		return;
	input_file_close(&r->in);
	free(r->buf);
	free(r);
}

/* The buffer back to READ_CHUNK once a large record has gone through. */
static void reader_shrink(struct jitdump_reader *r)
{
	__u8 *p;

	if (r->cap <= READ_CHUNK)
		return;
	p = realloc(r->buf, READ_CHUNK);
	if (!p)
		return;		/* keep the larger one: still valid */
	r->buf = p;
	r->cap = READ_CHUNK;
}

static int reader_grow(struct jitdump_reader *r, size_t want)
{
	__u8 *p;

	if (want <= r->cap)
		return 0;
	p = realloc(r->buf, want);
	if (!p)
		return -ENOMEM;
	r->buf = p;
	r->cap = want;
	return 0;
}

static void reader_warn(struct jitdump_reader *r, __u64 off, const char *why)
{
	char shown[PRINTABLE_MAX];

	r->bad++;
	if (r->warnings < MAX_WARNINGS)
		pr_warn("jitdump %s: offset %llu: %s; record skipped",
			printable(shown, sizeof(shown), r->in.path), (unsigned long long)off, why);
	else if (r->warnings == MAX_WARNINGS)
		pr_warn("jitdump %s: more bad records; not reporting them",
			printable(shown, sizeof(shown), r->in.path));
	r->warnings++;
}

static int reader_header(struct jitdump_reader *r)
{
	__u8 buf[JITDUMP_MAX_HEADER_SIZE];
	const char *why = "";
	ssize_t n;
	int err;

	n = pread_full(r->in.fd, buf, sizeof(buf), 0);
	if (n < 0)
		return (int)n;
	err = jitdump_parse_header(buf, (size_t)n, &r->hdr, &r->swap, &why);
	if (err == -EAGAIN)
		return 0;		/* not written yet: try again later */
	if (err) {
		char shown[PRINTABLE_MAX];

		pr_warn("jitdump %s: %s; file ignored",
			printable(shown, sizeof(shown), r->in.path), why);
		r->dead = true;
		return err;
	}
	r->have_header = true;
	r->off = r->hdr.total_size;
	return 0;
}

/* Parse the records in r->buf[0..n); returns bytes consumed, or -errno to
 * stop (corrupt framing or the callback's non-zero return). */
static ssize_t reader_parse_buf(struct jitdump_reader *r, size_t n, size_t *need,
				struct jit_budget *b, jitdump_record_cb cb, void *ctx,
				int *delivered)
{
	char shown[PRINTABLE_MAX];
	size_t pos = 0;

	*need = 0;
	while (pos < n) {
		struct jitdump_record rec;
		const char *why = "bad record";
		ssize_t k = jitdump_parse_record(r->buf + pos, n - pos, r->swap, &rec, &why);
		int err;

		if ((k > 0 || k == -EBADMSG) && rec.prefix.total_size > b->bytes - pos) {
			b->cut = true;		/* over the byte budget: next time */
			break;
		}
		if (k == 0) {
			*need = n - pos < JITDUMP_PREFIX_SIZE ? JITDUMP_PREFIX_SIZE :
				rec.prefix.total_size;
			break;
		}
		if (k == -EINVAL) {
			reader_warn(r, r->off + pos, why);
			pr_warn("jitdump %s: cannot find the next record after offset %llu; rest of the file ignored",
				printable(shown, sizeof(shown), r->in.path),
				(unsigned long long)(r->off + pos));
			r->dead = true;
			return pos;
		}
		if (k == -EBADMSG) {
			reader_warn(r, r->off + pos, why);
			pos += rec.prefix.total_size;
			continue;
		}
		rec.file_offset = r->off + pos;
		pos += (size_t)k;
		if (rec.prefix.id > JIT_CODE_UNWINDING_INFO &&
		    (rec.prefix.id < SAMPLY_JIT_CODE_DEBUG_INFO2 ||
		     rec.prefix.id > SAMPLY_EMBEDDED_SOURCE_FILE)) {
			if (!r->unknown++)
				pr_debug("jitdump %s: offset %llu: unknown record id %u skipped",
					 printable(shown, sizeof(shown), r->in.path),
					 (unsigned long long)rec.file_offset,
					 rec.prefix.id);
			continue;
		}
		(*delivered)++;
		err = cb ? cb(ctx, &rec) : 0;
		if (err) {
			r->off += pos;
			jit_budget__take(b, pos);
			return err < 0 ? err : -ECANCELED;
		}
	}
	return (ssize_t)pos;
}

static int reader_loop(struct jitdump_reader *r, struct jit_budget *b,
		       jitdump_record_cb cb, void *ctx, int *delivered)
{
	for (;;) {
		size_t need;
		ssize_t n, used;

		if (jit_budget__over(b))
			return 0;
		n = pread_full(r->in.fd, r->buf, r->cap, (off_t)r->off);
		if (n < 0)
			return (int)n;
		used = reader_parse_buf(r, (size_t)n, &need, b, cb, ctx, delivered);
		if (used < 0)
			return (int)used;
		r->off += (__u64)used;
		jit_budget__take(b, (__u64)used);
		r->pending = (__u64)n - (__u64)used;
		if (r->dead || n == 0 || b->cut)
			return 0;
		if (used == 0 && need > r->cap && (size_t)n == r->cap) {
			if (need > b->bytes) {
				b->cut = true;	/* the record would not fit anyway */
				return 0;
			}
			if (reader_grow(r, need))
				return -ENOMEM;
			continue;
		}
		if ((size_t)n < r->cap || used == 0)
			return 0;	/* end of what is written so far */
	}
}

int jitdump_reader__read(struct jitdump_reader *r, struct jit_budget *b,
			 jitdump_record_cb cb, void *ctx)
{
	int delivered = 0, err;

	if (r->dead)
		return 0;
	if (!r->have_header) {
		err = reader_header(r);
		if (err || !r->have_header)
			return err;
	}
	if (reader_grow(r, READ_CHUNK))
		return -ENOMEM;
	err = reader_loop(r, b, cb, ctx, &delivered);
	reader_shrink(r);
	return err ? err : delivered;
}

const struct jitdump_header *jitdump_reader__header(const struct jitdump_reader *r)
{
	return r->have_header ? &r->hdr : NULL;
}

bool jitdump_reader__swapped(const struct jitdump_reader *r)
{
	return r->swap;
}

__u64 jitdump_reader__offset(const struct jitdump_reader *r)
{
	return r->off;
}

__u64 jitdump_reader__pending(const struct jitdump_reader *r)
{
	return r->pending;
}

__u64 jitdump_reader__bad(const struct jitdump_reader *r)
{
	return r->bad;
}

__u64 jitdump_reader__unknown(const struct jitdump_reader *r)
{
	return r->unknown;
}

const char *jitdump_reader__path(const struct jitdump_reader *r)
{
	return r->in.path;
}

int jitdump_reader__fd(const struct jitdump_reader *r)
{
	return r->in.fd;
}
