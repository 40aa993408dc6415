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
 *
 * Records the writer still holds in its buffer can be delivered ahead of
 * the file (__read_unwritten); the reader remembers how far, and a hash
 * of those bytes, and skips them once the file holds the same bytes.
 */
#include "jit/jitdump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit/jithash.h"
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
	__u64 ahead_end;		/* > off: [off, ahead_end) delivered early */
	__u8 ahead_id[JITHASH_SIZE];	/* the hash of those bytes */
	bool ahead_differed;		/* said once */
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

static bool known_id(__u32 id)
{
	return id <= JIT_CODE_UNWINDING_INFO ||
	       (id >= SAMPLY_JIT_CODE_DEBUG_INFO2 && id <= SAMPLY_EMBEDDED_SOURCE_FILE);
}

/*
 * Parse the records in buf[0..n), which starts at file offset base;
 * *used: the bytes consumed.  Returns 0, 1 on corrupt framing (nothing
 * after it can be trusted), or the callback's non-zero return (-ECANCELED
 * for a positive one).
 */
static int reader_parse_buf(struct jitdump_reader *r, const __u8 *buf, size_t n, __u64 base,
			    size_t *used, size_t *need, struct jit_budget *b,
			    jitdump_record_cb cb, void *ctx, int *delivered)
{
	size_t pos = 0;

	*need = 0;
	*used = 0;
	while (pos < n) {
		struct jitdump_record rec;
		const char *why = "bad record";
		ssize_t k = jitdump_parse_record(buf + pos, n - pos, r->swap, &rec, &why);
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
			reader_warn(r, base + pos, why);
			*used = pos;
			return 1;
		}
		if (k == -EBADMSG) {
			reader_warn(r, base + pos, why);
			pos += rec.prefix.total_size;
			continue;
		}
		rec.file_offset = base + pos;
		pos += (size_t)k;
		if (!known_id(rec.prefix.id)) {
			if (!r->unknown++) {
				char shown[PRINTABLE_MAX];

				pr_debug("jitdump %s: offset %llu: unknown record id %u skipped",
					 printable(shown, sizeof(shown), r->in.path),
					 (unsigned long long)rec.file_offset, rec.prefix.id);
			}
			continue;
		}
		(*delivered)++;
		err = cb ? cb(ctx, &rec) : 0;
		if (err) {
			*used = pos;
			return err < 0 ? err : -ECANCELED;
		}
	}
	*used = pos;
	return 0;
}

static int reader_loop(struct jitdump_reader *r, struct jit_budget *b,
		       jitdump_record_cb cb, void *ctx, int *delivered)
{
	for (;;) {
		size_t need, used;
		ssize_t n;
		int err;

		if (jit_budget__over(b))
			return 0;
		n = pread_full(r->in.fd, r->buf, r->cap, (off_t)r->off);
		if (n < 0)
			return (int)n;
		err = reader_parse_buf(r, r->buf, (size_t)n, r->off, &used, &need, b, cb, ctx,
				       delivered);
		r->off += (__u64)used;
		jit_budget__take(b, (__u64)used);
		r->pending = (__u64)n - (__u64)used;
		if (err == 1) {
			char shown[PRINTABLE_MAX];

			pr_warn("jitdump %s: cannot find the next record after offset %llu; rest of the file ignored",
				printable(shown, sizeof(shown), r->in.path),
				(unsigned long long)r->off);
			r->dead = true;
			return 0;
		}
		if (err)
			return err;
		if (n == 0 || b->cut)
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

static void ahead_hash(const __u8 *p, size_t n, __u8 out[JITHASH_SIZE])
{
	struct jithash h;

	jithash_init(&h);
	jithash_update(&h, p, n);
	jithash_final(&h, out);
}

/*
 * Records were delivered ahead of the file, up to ahead_end: 1 while the
 * file is shorter (nothing to read before it is not); then the file's
 * bytes are compared with what was delivered, and skipped if the same.
 */
static int ahead_caught_up(struct jitdump_reader *r)
{
	__u64 len = r->ahead_end - r->off, done = 0;
	struct jithash h;
	__u8 id[JITHASH_SIZE];
	struct stat st;

	if (fstat(r->in.fd, &st))
		return -errno;
	if ((__u64)st.st_size < r->ahead_end)
		return 1;
	jithash_init(&h);
	while (done < len) {
		size_t want = len - done < r->cap ? (size_t)(len - done) : r->cap;
		ssize_t n = pread_full(r->in.fd, r->buf, want, (off_t)(r->off + done));

		if (n < 0)
			return (int)n;
		if ((size_t)n != want)
			return 1;	/* truncated meanwhile: wait */
		jithash_update(&h, r->buf, want);
		done += want;
	}
	jithash_final(&h, id);
	if (!memcmp(id, r->ahead_id, sizeof(id))) {
		r->off = r->ahead_end;
		r->pending = 0;
	} else if (!r->ahead_differed) {
		char shown[PRINTABLE_MAX];

		r->ahead_differed = true;
		pr_warn("jitdump %s: the records read from the writer's buffer differ from what it wrote at offset %llu; reading the file's",
			printable(shown, sizeof(shown), r->in.path), (unsigned long long)r->off);
	}
	r->ahead_end = 0;
	return 0;
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
	err = r->ahead_end > r->off ? ahead_caught_up(r) : 0;
	if (!err)
		err = reader_loop(r, b, cb, ctx, &delivered);
	reader_shrink(r);
	if (err == 1)
		err = 0;
	return err ? err : delivered;
}

int jitdump_reader__read_unwritten(struct jitdump_reader *r, const void *bytes, size_t len,
				   __u64 at, struct jit_budget *b, jitdump_record_cb cb,
				   void *ctx)
{
	size_t head = (size_t)r->pending, done, used, need;
	int delivered = 0, err;
	__u8 id[JITHASH_SIZE];
	__u8 *buf;

	if (r->dead || !r->have_header || !len || r->off + r->pending != at ||
	    len > SIZE_MAX - head)
		return 0;
	buf = malloc(head + len);
	if (!buf)
		return -ENOMEM;
	if (pread_full(r->in.fd, buf, head, (off_t)r->off) != (ssize_t)head) {
		free(buf);		/* changed since: next time */
		return 0;
	}
	memcpy(buf + head, bytes, len);
	done = r->ahead_end > r->off ? (size_t)(r->ahead_end - r->off) : 0;
	if (done > head + len) {
		free(buf);		/* flushed meanwhile: the file will tell */
		return 0;
	}
	if (done) {
		ahead_hash(buf, done, id);
		if (memcmp(id, r->ahead_id, sizeof(id))) {
			free(buf);	/* not what was delivered: do not mix */
			return 0;
		}
	}
	err = reader_parse_buf(r, buf + done, head + len - done, r->off + done, &used, &need,
			       b, cb, ctx, &delivered);
	jit_budget__take(b, (__u64)used);
	if (used) {
		ahead_hash(buf, done + used, r->ahead_id);
		r->ahead_end = r->off + done + used;
	}
	free(buf);
	if (err == 1)
		err = 0;	/* bad framing in memory: the file decides */
	return err ? err : delivered;
}

__u64 jitdump_reader__ahead(const struct jitdump_reader *r)
{
	return r->ahead_end > r->off ? r->ahead_end - r->off : 0;
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
