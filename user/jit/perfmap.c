// SPDX-License-Identifier: GPL-2.0
/*
 * perf map reader: perfmap_parse_line() is pure; the reader object adds
 * incremental iteration over a file the runtime keeps appending to.
 */
#include "jit/perfmap.h"

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

#define READ_CHUNK	(PERFMAP_MAX_LINE * 2)
#define MAX_WARNINGS	10

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex number at *pos (optional 0x); at most 16 significant digits. */
static bool parse_hex(const char *s, size_t len, size_t *pos, __u64 *out)
{
	size_t i = *pos, digits = 0;
	__u64 v = 0;

	if (len - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	for (; i < len && hexval(s[i]) >= 0; i++) {
		if (v >> 60)
			return false;	/* would overflow 64 bits */
		v = (v << 4) | (__u64)hexval(s[i]);
		digits++;
	}
	if (!digits)
		return false;
	*pos = i;
	*out = v;
	return true;
}

int perfmap_parse_line(const char *line, size_t len, struct perfmap_entry *e,
		       const char **why)
{
	const char *dummy;
	size_t pos = 0, end;

	if (!why)
		why = &dummy;
	if (len && line[len - 1] == '\r')
		len--;
	while (pos < len && is_blank(line[pos]))
		pos++;
	if (!parse_hex(line, len, &pos, &e->start)) {
		*why = "no hex start address";
		return -EINVAL;
	}
	if (pos >= len || !is_blank(line[pos])) {
		*why = "no blank after the start address";
		return -EINVAL;
	}
	while (pos < len && is_blank(line[pos]))
		pos++;
	if (!parse_hex(line, len, &pos, &e->size)) {
		*why = "no hex size";
		return -EINVAL;
	}
	if (pos >= len || !is_blank(line[pos])) {
		*why = "no blank after the size";
		return -EINVAL;
	}
	pos++;
	end = len;
	if (pos >= end) {
		*why = "no symbol name";
		return -EINVAL;
	}
	if (memchr(line + pos, '\0', end - pos)) {
		*why = "NUL byte in the symbol name";
		return -EINVAL;
	}
	if (e->start + e->size < e->start) {
		*why = "address range wraps around";
		return -EINVAL;
	}
	e->name = line + pos;
	e->name_len = end - pos;
	return 0;
}

struct perfmap_reader {
	struct input_file in;
	__u64 off;		/* first byte not consumed */
	__u64 line_no;		/* lines consumed */
	__u64 bad;
	bool skipping;		/* inside an over-long line */
	unsigned int warnings;
	char *buf;
};

struct perfmap_reader *perfmap_reader__new(const char *path, int fd)
{
	struct perfmap_reader *r = calloc(1, sizeof(*r));
	int err = r ? 0 : -ENOMEM;

	if (r)
		r->buf = malloc(READ_CHUNK);
	if (r && !r->buf)
		err = -ENOMEM;
	if (!err)
		err = input_file_open(&r->in, path, fd, "(perf map)");
	else if (fd >= 0)
		close(fd);
	if (err) {
		if (r)
			free(r->buf);
		free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

void perfmap_reader__free(struct perfmap_reader *r)
{
	if (!r)
		return;
	input_file_close(&r->in);
	free(r->buf);
	free(r);
}

static void reader_warn(struct perfmap_reader *r, const char *why)
{
	char shown[PRINTABLE_MAX];

	r->bad++;
	if (r->warnings < MAX_WARNINGS)
		pr_warn("perf map %s: line %llu: %s; line skipped",
			printable(shown, sizeof(shown), r->in.path),
			(unsigned long long)r->line_no, why);
	else if (r->warnings == MAX_WARNINGS)
		pr_warn("perf map %s: more bad lines; not reporting them",
			printable(shown, sizeof(shown), r->in.path));
	r->warnings++;
}

/* One complete line (without '\n'); returns the callback's result. */
static int reader_line(struct perfmap_reader *r, const char *line, size_t len,
		       perfmap_entry_cb cb, void *ctx, int *delivered)
{
	struct perfmap_entry e;
	const char *why = "";

	r->line_no++;
	if (r->skipping) {
		r->skipping = false;	/* tail of an over-long line */
		return 0;
	}
	if (len == 0)
		return 0;		/* blank lines are harmless */
	if (perfmap_parse_line(line, len, &e, &why)) {
		reader_warn(r, why);
		return 0;
	}
	(*delivered)++;
	return cb ? cb(ctx, &e, r->line_no) : 0;
}

/*
 * One chunk at r->off: its whole lines, then an over-long line skipped or
 * a last line without '\n' (final).  *more: the chunk was full, more may
 * follow.  Returns 0, -errno or the callback's non-zero result.
 */
static int reader_chunk(struct perfmap_reader *r, bool final, struct jit_budget *b,
			perfmap_entry_cb cb, void *ctx, int *delivered, bool *more)
{
	size_t want = b->bytes < READ_CHUNK ? (size_t)b->bytes : READ_CHUNK;
	size_t pos = 0;
	ssize_t n;
	bool eof;
	int err = 0;

	*more = false;
	if (!want) {
		b->cut = true;
		return 0;
	}
	n = pread_full(r->in.fd, r->buf, want, (off_t)r->off);
	if (n <= 0)
		return (int)n;
	eof = (size_t)n < want;
	for (;;) {
		char *nl = memchr(r->buf + pos, '\n', (size_t)n - pos);

		if (!nl)
			break;
		err = reader_line(r, r->buf + pos, (size_t)(nl - r->buf) - pos,
				  cb, ctx, delivered);
		pos = (size_t)(nl - r->buf) + 1;
		if (err)
			break;
	}
	if (!err && pos == 0 && want == READ_CHUNK && (size_t)n >= PERFMAP_MAX_LINE) {
		/* an over-long line: report it once, skip to its end */
		if (!r->skipping) {
			r->line_no++;
			reader_warn(r, "line too long");
			r->line_no--;
		}
		r->skipping = true;
		pos = (size_t)n;
	}
	if (!err && eof && pos < (size_t)n && final) {
		/* a last line without '\n' */
		err = reader_line(r, r->buf + pos, (size_t)n - pos, cb, ctx, delivered);
		pos = (size_t)n;
	}
	r->off += pos;
	jit_budget__take(b, pos);
	if (err)
		return err;
	if (!eof && (pos == 0 || b->bytes == 0)) {
		b->cut = true;		/* the byte budget ends inside a line */
		return 0;
	}
	*more = !eof;
	return 0;
}

int perfmap_reader__read(struct perfmap_reader *r, bool final, struct jit_budget *b,
			 perfmap_entry_cb cb, void *ctx)
{
	int delivered = 0, err;
	bool more = true;

	while (more && !jit_budget__over(b)) {
		err = reader_chunk(r, final, b, cb, ctx, &delivered, &more);
		if (err)
			return err;
	}
	return delivered;
}

__u64 perfmap_reader__bad(const struct perfmap_reader *r)
{
	return r->bad;
}

const char *perfmap_reader__path(const struct perfmap_reader *r)
{
	return r->in.path;
}

int perfmap_reader__fd(const struct perfmap_reader *r)
{
	return r->in.fd;
}

__u64 perfmap_reader__offset(const struct perfmap_reader *r)
{
	return r->off;
}
