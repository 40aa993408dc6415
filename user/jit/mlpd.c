// SPDX-License-Identifier: GPL-2.0
/*
 * Mono log profiler (.mlpd) reader: code regions of JIT'd methods and code
 * buffers.  Facts about the format come from Mono's mono/profiler/log.h
 * (data versions 13..17) and mprof-report, the reference reader.
 *
 * File format (all fixed-width integers little-endian):
 *
 *   header   [u32 0x4D505A01][u8 major][u8 minor][u8 data_version][u8 ptr_size]
 *            [u64 startup ms][u64 startup ns: major >= 3][u32 timer overhead]
 *            [u32 flags = 0][u32 pid][u16 port]
 *            3 x [u32 len][len bytes: NUL-terminated args, arch, os]
 *   buffer   [u32 0x4D504C01][u32 len][u64 time_base][u64 ptr_base]
 *            [u64 obj_base][u64 thread id][u64 method_base] + len event bytes
 *   event    [u8 type (low nibble) | exinfo (high nibble)][uleb128 time diff]
 *            then a payload that depends on type, exinfo and data version
 *
 * Times are ns, each event's diff added to the running time of its buffer
 * (modulo 2^64: Mono writes JIT events with an earlier time than the
 * buffer's base, as a 10-byte uleb128 that wraps).  Code addresses are
 * sleb128 differences from ptr_base; method pointers are sleb128
 * differences from the previous method pointer, starting at method_base.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "jit/mlpd.h"
#include "util/le.h"
#include "util/leb128.h"
#include "util/log.h"
#include "util/printable.h"

__u32 mlpd_pid;

#define MLPD_HEADER_ID		0x4D505A01u
#define MLPD_BUF_ID		0x4D504C01u
#define MLPD_BUF_HDR		48u
#define MLPD_BUF_MAX		(64u << 20)	/* largest buffer accepted */
#define MLPD_HDR_FIXED_MAX	38u		/* fixed part, major 3 */
#define MLPD_HDR_STR_MAX	(16u << 10)	/* args, arch, os */
#define MLPD_HDR_MAX		(MLPD_HDR_FIXED_MAX + 3 * (4 + MLPD_HDR_STR_MAX))
#define MLPD_CODE_MAX		(64ull << 20)	/* largest code region accepted */
#define MLPD_MAX_WARN		16u
#define MLPD_DATA_MIN		13
#define MLPD_DATA_MAX		17

/* Event types (low nibble) and the exinfo values precord needs. */
enum {
	EV_ALLOC = 0, EV_GC = 1, EV_METADATA = 2, EV_METHOD = 3,
	EV_EXCEPTION = 4, EV_MONITOR = 5, EV_HEAP = 6, EV_SAMPLE = 7,
	EV_RUNTIME = 8, EV_COVERAGE = 9, EV_META = 10,
};

enum { META_CLASS = 1, META_IMAGE, META_ASSEMBLY, META_DOMAIN, META_THREAD,
       META_CONTEXT, META_VTABLE };

#define X_END_LOAD		0x20
#define X_JIT			0x40
#define X_JITHELPER		0x10
#define CODE_BUFFER_METHOD	0
#define CODE_BUFFER_SPECIFIC	5
#define COUNTER_PERFCOUNTERS	(1u << 15)

static const char *const code_buffer_names[] = {
	"[mono] method",		/* 0: duplicates the method's JIT event */
	"[mono] method trampoline",
	"[mono] unbox trampoline",
	"[mono] imt trampoline",
	"[mono] generics trampoline",
	"[mono] specific trampoline",	/* 5: carries its own name */
	"[mono] misc helper",
	"[mono] monitor/lock",
	"[mono] delegate invoke",
	"[mono] exception handling",
};

/* ---- input: memory, gzip in memory, or a (possibly gzip) file ---- */

enum src_mode { SRC_MEM, SRC_ZMEM, SRC_GZFILE };

struct mlpd_src {
	enum src_mode mode;
	const __u8 *mem;	/* SRC_MEM: the data; SRC_ZMEM: compressed input */
	size_t mem_len, mem_pos;
	gzFile gz;
	z_stream zs;
	bool zs_ready;
	__u8 *stage;		/* decompressed bytes [lo, hi) not yet consumed */
	size_t cap, lo, hi;
	bool eof;
	bool truncated_gz;	/* the gzip stream ended early */
	int err;		/* -errno of a read failure */
	__u64 off;		/* stream offset of the first unconsumed byte */
	/* A 36 KB gzip stream inflates to gigabytes: bytes produced (read or
	 * inflated) stop at the budget's bytes, its deadline and stop request
	 * are checked per read. */
	struct jit_budget *b;
	__u64 produced;
};

struct mlpd_ctx {
	const char *name;
	struct mlpd_header hdr;
	mlpd_method_cb cb;
	void *cb_ctx;
	int stop;		/* the callback's non-zero return */
	unsigned int warnings;
	char *scratch;		/* sanitized name handed to the callback */
	size_t scratch_cap;
	unsigned long long buffers, methods, helpers, no_code;
};

/* One buffer being decoded; any failed read sets bad and why. */
struct mlpd_buf {
	const __u8 *start, *p, *end;
	__u64 off;		/* stream offset of start (the event bytes) */
	__u64 time, ptr_base, method;
	int version;
	const char *why;
	bool bad;
};

static void mlpd_warn(struct mlpd_ctx *c, __u64 off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void mlpd_warn(struct mlpd_ctx *c, __u64 off, const char *fmt, ...)
{
	char msg[256], shown_msg[4 * sizeof(msg)];
	va_list ap;

	if (++c->warnings > MLPD_MAX_WARN) {
		if (c->warnings == MLPD_MAX_WARN + 1)
			pr_warn("mlpd: %s: more problems, not shown", c->name);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* msg may quote a method name from the file */
	pr_warn("mlpd: %s: offset %llu: %s", c->name, (unsigned long long)off,
		printable(shown_msg, sizeof(shown_msg), msg));
}

/* Decompress up to room bytes into dst; 0 at the end of input. */
static size_t src_inflate(struct mlpd_src *s, __u8 *dst, size_t room)
{
	z_stream *z = &s->zs;
	int ret;

	z->next_out = dst;
	z->avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
	while (z->avail_out) {
		if (!z->avail_in) {
			size_t left = s->mem_len - s->mem_pos;

			if (!left) {
				s->truncated_gz = true;
				break;
			}
			z->next_in = (Bytef *)(s->mem + s->mem_pos);
			z->avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
			s->mem_pos += z->avail_in;
		}
		ret = inflate(z, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			/* another gzip member may follow, as gzread allows */
			if (z->avail_in >= 2 && z->next_in[0] == 0x1f &&
			    z->next_in[1] == 0x8b && inflateReset(z) == Z_OK)
				continue;
			s->eof = true;
			break;
		}
		if (ret == Z_BUF_ERROR) {
			s->truncated_gz = true;
			break;
		}
		if (ret != Z_OK) {
			s->err = -EBADMSG;
			break;
		}
	}
	return (size_t)(z->next_out - dst);
}

/* Room cut to what the budget allows; 0 (and s->b->cut) when it is over. */
static size_t src_room(struct mlpd_src *s, size_t room)
{
	__u64 left;

	if (jit_budget__over(s->b))
		return 0;
	left = s->b->bytes > s->produced ? s->b->bytes - s->produced : 0;
	if (!left)
		s->b->cut = true;
	return room < left ? room : (size_t)left;
}

static size_t src_read_more(struct mlpd_src *s, __u8 *dst, size_t room)
{
	int r, zerr;

	room = src_room(s, room > (16u << 20) ? (16u << 20) : room);
	if (!room)
		return 0;
	if (s->mode == SRC_ZMEM) {
		room = src_inflate(s, dst, room);
		s->produced += room;
		return room;
	}
	r = gzread(s->gz, dst, (unsigned int)room);
	if (r > 0) {
		s->produced += (size_t)r;
		return (size_t)r;
	}
	if (r < 0) {
		gzerror(s->gz, &zerr);
		if (zerr == Z_BUF_ERROR)
			s->truncated_gz = true;
		else
			s->err = zerr == Z_ERRNO ? -errno : -EBADMSG;
	}
	return 0;
}

/* Stage bytes worth having for want: no more than the budget lets the
 * stream grow (a buffer header claiming 64 MiB costs nothing past it). */
static size_t stage_room(const struct mlpd_src *s, size_t want)
{
	__u64 left = s->b->bytes > s->produced ? s->b->bytes - s->produced : 0;

	return left < want - s->hi ? s->hi + (size_t)left : want;
}

/*
 * Make up to want bytes available at *p.  Returns how many are: fewer than
 * want only at the end of the input (or after a read error, in s->err).
 */
static size_t src_peek(struct mlpd_src *s, size_t want, const __u8 **p)
{
	if (s->mode == SRC_MEM) {
		size_t left = s->mem_len - s->mem_pos;

		if (left > want)
			left = want;
		if (s->mem_pos + left > s->produced)	/* bytes not counted yet */
			s->produced += src_room(s, s->mem_pos + left - s->produced);
		if (s->mem_pos + left > s->produced)
			left = s->produced - s->mem_pos;
		*p = s->mem + s->mem_pos;
		return left;
	}
	if (s->hi - s->lo < want && !s->eof) {
		if (s->lo) {
			memmove(s->stage, s->stage + s->lo, s->hi - s->lo);
			s->hi -= s->lo;
			s->lo = 0;
		}
		size_t room = stage_room(s, want);

		if (s->cap < room) {
			size_t ncap = room < (64u << 10) ? (64u << 10) : room;
			__u8 *n = realloc(s->stage, ncap);

			if (!n) {
				s->err = -ENOMEM;
				s->eof = true;
			} else {
				s->stage = n;
				s->cap = ncap;
			}
		}
		while (s->hi < want && !s->eof && !s->err && s->cap > s->hi) {
			size_t got = src_read_more(s, s->stage + s->hi, s->cap - s->hi);

			if (!got)
				s->eof = true;
			s->hi += got;
		}
	}
	*p = s->stage + s->lo;
	return s->hi - s->lo < want ? s->hi - s->lo : want;
}

static void src_consume(struct mlpd_src *s, size_t n)
{
	if (s->mode == SRC_MEM)
		s->mem_pos += n;
	else
		s->lo += n;
	s->off += n;
}

/* Skip to the next BUF_ID after the current position; false at the end. */
static bool src_resync(struct mlpd_src *s)
{
	static const __u8 magic[4] = { 0x01, 0x4c, 0x50, 0x4d };
	const __u8 *p, *q;
	size_t n;

	src_consume(s, 1);
	for (;;) {
		n = src_peek(s, 64u << 10, &p);
		if (n < sizeof(magic)) {
			src_consume(s, n);
			return false;
		}
		q = memmem(p, n, magic, sizeof(magic));
		if (q) {
			src_consume(s, (size_t)(q - p));
			return true;
		}
		src_consume(s, n - (sizeof(magic) - 1));
	}
}

/* ---- bounded readers over one buffer ---- */

static void buf_fail(struct mlpd_buf *b, const char *why)
{
	if (!b->bad) {
		b->bad = true;
		b->why = why;
	}
	b->p = b->end;
}

static __u8 rd_u8(struct mlpd_buf *b)
{
	if (b->p >= b->end) {
		buf_fail(b, "event runs past the end of its buffer");
		return 0;
	}
	return *b->p++;
}

/* Why a LEB128 value is refused, in the parser's words. */
static const char *leb_why(int err, bool is_signed)
{
	if (err == -ENODATA)
		return "event runs past the end of its buffer";
	if (err == -E2BIG && is_signed)
		return "sleb128 longer than 10 bytes";
	return is_signed ? "sleb128 overflows 64 bits" : "uleb128 overflows 64 bits";
}

/* A LEB128 value (a signed one as its 64 bits); 0 after a failure. */
static __u64 rd_leb(struct mlpd_buf *b, bool is_signed)
{
	uint64_t u = 0;
	int64_t v = 0;
	int err = is_signed ? leb128_read_s(&b->p, b->end, &v) :
		  leb128_read_u(&b->p, b->end, &u);

	if (err) {
		buf_fail(b, leb_why(err, is_signed));
		return 0;
	}
	return is_signed ? (__u64)v : u;
}

static __u64 rd_uleb(struct mlpd_buf *b)
{
	return rd_leb(b, false);
}

static __s64 rd_sleb(struct mlpd_buf *b)
{
	return (__s64)rd_leb(b, true);
}

/* A NUL-terminated string inside the buffer. */
static const char *rd_str(struct mlpd_buf *b)
{
	const __u8 *nul;
	const char *s;

	if (b->bad)
		return "";
	nul = memchr(b->p, 0, (size_t)(b->end - b->p));
	if (!nul) {
		buf_fail(b, "string not terminated inside its buffer");
		return "";
	}
	s = (const char *)b->p;
	b->p = nul + 1;
	return s;
}

/* A count of items that take at least min_size bytes each. */
static __u64 rd_count(struct mlpd_buf *b, unsigned int min_size)
{
	__u64 n = rd_uleb(b);

	if (!b->bad && n > (__u64)(b->end - b->p) / min_size) {
		buf_fail(b, "count larger than the bytes left in the buffer");
		return 0;
	}
	return n;
}

static void rd_backtrace(struct mlpd_buf *b)
{
	__u64 i, n = rd_count(b, 1);

	for (i = 0; i < n && !b->bad; i++)
		b->method += (__u64)rd_sleb(b);
}

/* ---- what precord keeps: code regions ---- */

/* Copy name with control bytes replaced, so no consumer sees a newline. */
static const char *sanitize(struct mlpd_ctx *c, const char *name, const char *fallback)
{
	size_t i, len = strlen(name);

	if (!len)
		name = fallback, len = strlen(fallback);
	if (len + 1 > c->scratch_cap) {
		char *n = realloc(c->scratch, len + 1);

		if (!n)
			return NULL;
		c->scratch = n;
		c->scratch_cap = len + 1;
	}
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];

		c->scratch[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	c->scratch[len] = '\0';
	return c->scratch;
}

static void emit_region(struct mlpd_ctx *c, struct mlpd_buf *b, const __u8 *ev,
			__u64 addr, __u64 size, const char *name,
			const char *fallback)
{
	__u64 mask = c->hdr.ptr_size == 4 ? 0xffffffffull : ~0ull;
	struct mlpd_method m;

	if (c->stop)
		return;
	addr &= mask;
	if (!addr || !size) {
		c->no_code++;	/* Mono >= data 11 may omit the code range */
		return;
	}
	if (size > MLPD_CODE_MAX || addr + size < addr || addr + size - 1 > mask) {
		mlpd_warn(c, b->off + (__u64)(ev - b->start),
			  "code range 0x%llx+%llu of \"%.64s\" is not plausible; skipped",
			  (unsigned long long)addr, (unsigned long long)size, name);
		return;
	}
	m.time = c->hdr.os_linux ? b->time : 0;
	m.code_addr = addr;
	m.code_size = size;
	m.name = sanitize(c, name, fallback);
	if (!m.name) {
		c->stop = -ENOMEM;
		return;
	}
	c->stop = c->cb(c->cb_ctx, &m);
}

/* ---- events (one function per type; each reads the payload after the
 * event byte and time diff) ---- */

static void ev_alloc(struct mlpd_buf *b, __u8 ex)
{
	rd_sleb(b);		/* vtable (data >= 15) or class */
	rd_sleb(b);		/* object */
	rd_uleb(b);		/* size */
	if (ex & 0x10)
		rd_backtrace(b);
}

static void ev_gc(struct mlpd_buf *b, __u8 ex)
{
	__u64 i, n;

	switch (ex) {
	case 0x10:		/* event: type and generation bytes */
		rd_u8(b);
		rd_u8(b);
		break;
	case 0x20:		/* resize */
		rd_uleb(b);
		break;
	case 0x30:		/* move: old, new, old, new ... */
		n = rd_count(b, 1);
		for (i = 0; i < n && !b->bad; i++)
			rd_sleb(b);
		break;
	case 0x40: case 0x60:	/* handle created [with backtrace] */
		rd_uleb(b);
		rd_uleb(b);
		rd_sleb(b);
		if (ex == 0x60)
			rd_backtrace(b);
		break;
	case 0x50: case 0x70:	/* handle destroyed [with backtrace] */
		rd_uleb(b);
		rd_uleb(b);
		if (ex == 0x70)
			rd_backtrace(b);
		break;
	case 0x80: case 0x90:	/* finalize start / end */
		break;
	case 0xa0: case 0xb0:	/* finalize object start / end */
		rd_sleb(b);
		break;
	default:
		buf_fail(b, "unknown GC event");
	}
}

static void ev_metadata(struct mlpd_buf *b, __u8 ex)
{
	__u8 mtype = rd_u8(b);

	rd_sleb(b);		/* the pointer */
	switch (mtype) {
	case META_CLASS:
		rd_sleb(b);	/* image */
		rd_str(b);
		break;
	case META_IMAGE:
		rd_str(b);
		if (b->version >= 16 && ex == X_END_LOAD)
			rd_str(b);	/* mvid */
		break;
	case META_ASSEMBLY:
		if (b->version >= 14)
			rd_sleb(b);	/* image */
		rd_str(b);
		break;
	case META_DOMAIN:
	case META_THREAD:
		if (!ex)
			rd_str(b);	/* a name event */
		break;
	case META_CONTEXT:
		rd_sleb(b);	/* domain */
		break;
	case META_VTABLE:
		if (b->version < 15)
			buf_fail(b, "vtable event before data version 15");
		rd_sleb(b);	/* domain */
		rd_sleb(b);	/* class */
		break;
	default:
		buf_fail(b, "unknown metadata type");
	}
}

static void ev_method(struct mlpd_ctx *c, struct mlpd_buf *b, const __u8 *ev, __u8 ex)
{
	__u64 addr, size;
	const char *name;

	b->method += (__u64)rd_sleb(b);
	if (ex == 0x10 || ex == 0x20 || ex == 0x30)	/* leave, enter, exc leave */
		return;
	if (ex != X_JIT) {
		buf_fail(b, "unknown method event");
		return;
	}
	addr = b->ptr_base + (__u64)rd_sleb(b);
	size = rd_uleb(b);
	name = rd_str(b);
	if (b->bad)
		return;
	c->methods++;
	emit_region(c, b, ev, addr, size, name, "[mono] unnamed method");
}

static void ev_exception(struct mlpd_buf *b, __u8 ex)
{
	switch (ex & 0x70) {
	case 0x10:		/* clause */
		rd_u8(b);	/* clause type */
		rd_uleb(b);	/* clause index */
		b->method += (__u64)rd_sleb(b);
		if (b->version >= 14)
			rd_sleb(b);	/* exception object */
		break;
	case 0x00:		/* throw */
		rd_sleb(b);
		if (ex & 0x80)
			rd_backtrace(b);
		break;
	default:
		buf_fail(b, "unknown exception event");
	}
}

static void ev_monitor(struct mlpd_buf *b, __u8 ex)
{
	if (b->version >= 14)
		rd_u8(b);	/* event; in exinfo before */
	rd_sleb(b);		/* object */
	if (ex & 0x80)
		rd_backtrace(b);
}

static void ev_heap(struct mlpd_buf *b, __u8 ex)
{
	__u64 i, n;

	switch (ex) {
	case 0x00: case 0x10:	/* heapshot start / end */
		break;
	case 0x20:		/* object */
		rd_sleb(b);
		rd_sleb(b);
		rd_uleb(b);
		if (b->version >= 16)
			rd_u8(b);	/* generation */
		n = rd_count(b, 2);
		for (i = 0; i < n && !b->bad; i++) {
			rd_uleb(b);	/* offset */
			rd_sleb(b);	/* referenced object */
		}
		break;
	case 0x30:		/* roots */
		if (b->version >= 15) {
			n = rd_count(b, 2);
			for (i = 0; i < n && !b->bad; i++) {
				rd_sleb(b);
				rd_sleb(b);
			}
			break;
		}
		n = rd_count(b, 3);
		rd_uleb(b);	/* gc number */
		for (i = 0; i < n && !b->bad; i++) {
			rd_sleb(b);
			if (b->version == 13)
				rd_u8(b);
			else
				rd_uleb(b);
			rd_uleb(b);
		}
		break;
	case 0x40:		/* root register */
		rd_sleb(b);
		rd_uleb(b);
		rd_u8(b);
		rd_sleb(b);
		rd_str(b);
		break;
	case 0x50:		/* root unregister */
		rd_sleb(b);
		break;
	default:
		buf_fail(b, "unknown heap event");
	}
}

static void rd_counter_value(struct mlpd_buf *b, __u64 type)
{
	switch (type) {
	case 0: case 2: case 3: case 7:	/* int, word, long, time interval */
		rd_sleb(b);
		break;
	case 1: case 4:			/* uint, ulong */
		rd_uleb(b);
		break;
	case 5:				/* double: 8 raw bytes */
		if ((size_t)(b->end - b->p) < 8)
			buf_fail(b, "event runs past the end of its buffer");
		else
			b->p += 8;
		break;
	case 6:				/* string: null flag, then the string */
		if (rd_u8(b))
			rd_str(b);
		break;
	default:
		buf_fail(b, "unknown counter type");
	}
}

static void ev_counters(struct mlpd_buf *b, bool desc)
{
	bool small = b->version < 15;	/* type, unit, variance as bytes */
	__u64 i, n, index;

	if (desc) {
		n = rd_count(b, 6);
		for (i = 0; i < n && !b->bad; i++) {
			if (rd_uleb(b) == COUNTER_PERFCOUNTERS)
				rd_str(b);	/* section name */
			rd_str(b);
			if (small) {
				rd_u8(b);
				rd_u8(b);
				rd_u8(b);
			} else {
				rd_uleb(b);
				rd_uleb(b);
				rd_uleb(b);
			}
			rd_uleb(b);	/* index */
		}
		return;
	}
	/* values until index 0; each takes at least two bytes */
	while (!b->bad) {
		index = rd_uleb(b);
		if (!index || b->bad)
			break;
		rd_counter_value(b, small ? rd_u8(b) : rd_uleb(b));
	}
}

static void ev_sample(struct mlpd_buf *b, __u8 ex)
{
	__u64 i, n;

	switch (ex) {
	case 0x00:		/* hit */
		if (b->version == 13)
			rd_u8(b);	/* sample type */
		rd_sleb(b);	/* thread */
		n = rd_count(b, 1);
		for (i = 0; i < n && !b->bad; i++)
			rd_sleb(b);	/* ip */
		n = rd_count(b, 1);
		for (i = 0; i < n && !b->bad; i++)
			b->method += (__u64)rd_sleb(b);
		break;
	case 0x10:		/* unmanaged symbol */
		rd_sleb(b);
		rd_uleb(b);
		rd_str(b);
		break;
	case 0x20:		/* unmanaged binary, before data 16 */
		if (b->version >= 16)
			buf_fail(b, "unmanaged binary event after data version 15");
		rd_sleb(b);
		rd_uleb(b);
		rd_uleb(b);
		rd_str(b);
		break;
	case 0x30:
		ev_counters(b, true);
		break;
	case 0x40:
		ev_counters(b, false);
		break;
	default:
		buf_fail(b, "unknown sample event");
	}
}

static void ev_runtime(struct mlpd_ctx *c, struct mlpd_buf *b, const __u8 *ev, __u8 ex)
{
	const char *name = NULL;
	__u64 addr, size;
	int type;
	char fallback[48];

	if (ex != X_JITHELPER) {
		buf_fail(b, "unknown runtime event");
		return;
	}
	type = rd_u8(b);
	if (b->version < 14)
		type--;		/* the enum started with UNKNOWN = 0 */
	addr = b->ptr_base + (__u64)rd_sleb(b);
	size = rd_uleb(b);
	if (type == CODE_BUFFER_SPECIFIC)
		name = rd_str(b);
	if (b->bad)
		return;
	c->helpers++;
	if (type == CODE_BUFFER_METHOD)
		return;		/* the method's own JIT event names this range */
	if (type >= 0 && type < (int)(sizeof(code_buffer_names) / sizeof(code_buffer_names[0])))
		snprintf(fallback, sizeof(fallback), "%s", code_buffer_names[type]);
	else
		snprintf(fallback, sizeof(fallback), "[mono] code buffer type %d", type);
	emit_region(c, b, ev, addr, size, name ? name : fallback, fallback);
}

static void ev_coverage(struct mlpd_buf *b, __u8 ex)
{
	int i, strs, lebs;

	if (b->version >= 16) {
		buf_fail(b, "coverage event after data version 15");
		return;
	}
	switch (ex) {
	case 0x00: strs = 3; lebs = 3; break;	/* assembly */
	case 0x10: strs = 5; lebs = 3; break;	/* method */
	case 0x20: strs = 0; lebs = 5; break;	/* statement */
	case 0x30: strs = 2; lebs = 3; break;	/* class */
	default:
		buf_fail(b, "unknown coverage event");
		return;
	}
	for (i = 0; i < strs; i++)
		rd_str(b);
	for (i = 0; i < lebs; i++)
		rd_uleb(b);
}

static void ev_meta(struct mlpd_buf *b, __u8 ex)
{
	if (ex == 0x00)
		rd_u8(b);	/* sync point type */
	else if (ex == 0x10)
		rd_str(b);	/* AOT id */
	else
		buf_fail(b, "unknown meta event");
}

static void decode_event(struct mlpd_ctx *c, struct mlpd_buf *b)
{
	const __u8 *ev = b->p;
	__u8 type = rd_u8(b);
	__u8 ex = type & 0xf0;

	b->time += rd_uleb(b);
	switch (type & 0x0f) {
	case EV_ALLOC:		ev_alloc(b, ex);		break;
	case EV_GC:		ev_gc(b, ex);			break;
	case EV_METADATA:	ev_metadata(b, ex);		break;
	case EV_METHOD:		ev_method(c, b, ev, ex);	break;
	case EV_EXCEPTION:	ev_exception(b, ex);		break;
	case EV_MONITOR:	ev_monitor(b, ex);		break;
	case EV_HEAP:		ev_heap(b, ex);			break;
	case EV_SAMPLE:		ev_sample(b, ex);		break;
	case EV_RUNTIME:	ev_runtime(c, b, ev, ex);	break;
	case EV_COVERAGE:	ev_coverage(b, ex);		break;
	case EV_META:		ev_meta(b, ex);			break;
	default:
		buf_fail(b, "unknown event type");
	}
}

/* hdr points at the 48-byte buffer header, followed by len event bytes. */
static void decode_buffer(struct mlpd_ctx *c, const __u8 *hdr, __u32 len, __u64 off)
{
	struct mlpd_buf b = {
		.start = hdr + MLPD_BUF_HDR,
		.p = hdr + MLPD_BUF_HDR,
		.end = hdr + MLPD_BUF_HDR + len,
		.off = off + MLPD_BUF_HDR,
		.time = le64_load(hdr + 8),
		.ptr_base = le64_load(hdr + 16),
		.method = le64_load(hdr + 40),
		.version = c->hdr.data_version,
	};

	c->buffers++;
	while (b.p < b.end && !c->stop) {
		const __u8 *ev = b.p;

		decode_event(c, &b);
		if (b.bad) {
			mlpd_warn(c, b.off + (__u64)(ev - b.start),
				  "event 0x%02x: %s; skipped the rest of the buffer (%llu bytes)",
				  *ev, b.why, (unsigned long long)(b.end - ev));
			break;
		}
	}
}

/* ---- header ---- */

static int hdr_string(const __u8 *data, size_t len, size_t *pos, const __u8 **s, __u32 *slen)
{
	__u32 n;

	if (len - *pos < 4)
		return -ENODATA;
	n = le32_load(data + *pos);
	if (!n || n > MLPD_HDR_STR_MAX)
		return -EBADMSG;
	if (len - *pos - 4 < n)
		return -ENODATA;
	if (data[*pos + 4 + n - 1] != '\0')
		return -EBADMSG;
	*s = data + *pos + 4;
	*slen = n;
	*pos += 4 + n;
	return 0;
}

int mlpd_parse_header(const void *data, size_t len, struct mlpd_header *h)
{
	const __u8 *d = data, *str = NULL;
	size_t pos, fixed;
	__u32 slen = 0;
	int i, err;

	memset(h, 0, sizeof(*h));
	if (len < 8)
		return len >= 4 && le32_load(d) != MLPD_HEADER_ID ? -EBADMSG : -ENODATA;
	if (le32_load(d) != MLPD_HEADER_ID)
		return -EBADMSG;
	h->major = d[4];
	h->minor = d[5];
	h->data_version = d[6];
	h->ptr_size = d[7];
	if (h->major < 1 || h->major > 3 ||
	    h->data_version < MLPD_DATA_MIN || h->data_version > MLPD_DATA_MAX)
		return -EPROTONOSUPPORT;
	if (h->ptr_size != 4 && h->ptr_size != 8)
		return -EBADMSG;
	fixed = h->major >= 3 ? 38 : 30;
	if (len < fixed)
		return -ENODATA;
	h->startup_ms = le64_load(d + 8);
	pos = 16;
	if (h->major >= 3) {
		h->startup_ns = le64_load(d + pos);
		pos += 8;
	}
	h->timer_overhead = le32_load(d + pos);
	h->flags = le32_load(d + pos + 4);
	if (h->flags)			/* none defined */
		return -EPROTONOSUPPORT;
	h->pid = le32_load(d + pos + 8);
	h->port = le16_load(d + pos + 12);
	pos += 14;
	for (i = 0; i < 3; i++) {	/* args, arch, os */
		err = hdr_string(d, len, &pos, &str, &slen);
		if (err)
			return err;
	}
	h->os_linux = slen == 6 && !memcmp(str, "linux", 6);
	h->size = pos;
	return 0;
}

static int read_header(struct mlpd_ctx *c, struct mlpd_src *s)
{
	const __u8 *p;
	size_t n = src_peek(s, MLPD_HDR_MAX, &p);
	int err = mlpd_parse_header(p, n, &c->hdr);

	switch (err) {
	case 0:
		src_consume(s, c->hdr.size);
		mlpd_pid = c->hdr.pid;
		return 0;
	case -ENODATA:
		if (s->err == -EBADMSG)
			pr_warn("mlpd: %s: corrupt gzip data", c->name);
		else if (s->err)
			pr_warn("mlpd: %s: cannot read: %s", c->name, strerror(-s->err));
		else
			pr_warn("mlpd: %s: %s", c->name, n || s->truncated_gz ?
				"header is incomplete" : "file is empty");
		break;
	case -EPROTONOSUPPORT:
		if (c->hdr.flags) {
			pr_warn("mlpd: %s: unsupported header flags 0x%x", c->name, c->hdr.flags);
			break;
		}
		pr_warn("mlpd: %s: unsupported format: log profiler %u.%u, data version %u (precord reads 1.x-3.x, data %d-%d)",
			c->name, c->hdr.major, c->hdr.minor, c->hdr.data_version,
			MLPD_DATA_MIN, MLPD_DATA_MAX);
		break;
	default:
		pr_warn("mlpd: %s: not a Mono log profiler file (bad header)", c->name);
	}
	if (s->err && err == -ENODATA)
		err = s->err;
	return err;
}

/* ---- the buffer loop ---- */

static void read_buffers(struct mlpd_ctx *c, struct mlpd_src *s)
{
	const __u8 *p;
	size_t n;
	__u32 len;

	while (!c->stop && !jit_budget__over(s->b)) {
		n = src_peek(s, MLPD_BUF_HDR, &p);
		if (!n)
			break;
		if (n >= 4 && le32_load(p) != MLPD_BUF_ID) {
			mlpd_warn(c, s->off, "bad buffer id 0x%08x; looking for the next buffer",
				  le32_load(p));
			if (!src_resync(s))
				break;
			continue;
		}
		if (n < MLPD_BUF_HDR) {
			pr_info("mlpd: %s: ends inside a buffer header at offset %llu (still being written?)",
				c->name, (unsigned long long)s->off);
			break;
		}
		len = le32_load(p + 4);
		if (len > MLPD_BUF_MAX) {
			mlpd_warn(c, s->off, "buffer length %u too large; looking for the next buffer", len);
			if (!src_resync(s))
				break;
			continue;
		}
		n = src_peek(s, MLPD_BUF_HDR + (size_t)len, &p);
		if (n < MLPD_BUF_HDR + (size_t)len) {
			__u64 at = s->off;

			/* A later buffer means this length is wrong, not the end. */
			if (src_resync(s)) {
				mlpd_warn(c, at, "buffer length %u runs past the next buffer; skipped", len);
				continue;
			}
			pr_info("mlpd: %s: last buffer (offset %llu, %u bytes) is incomplete (still being written?)",
				c->name, (unsigned long long)at, len);
			break;
		}
		decode_buffer(c, p, len, s->off);
		src_consume(s, MLPD_BUF_HDR + (size_t)len);
	}
	if (s->b->cut)
		mlpd_warn(c, s->off, "reading stopped here: %s",
			  s->b->bytes <= s->produced ? "JIT byte limit reached (--jit-max-bytes)" :
			  "time limit or stop request");
	else if (s->err == -EBADMSG)
		mlpd_warn(c, s->off, "corrupt gzip data; stopped here");
	else if (s->err)
		mlpd_warn(c, s->off, "cannot read further: %s", strerror(-s->err));
	else if (s->truncated_gz)
		pr_info("mlpd: %s: gzip stream ends early at offset %llu (still being written?)",
			c->name, (unsigned long long)s->off);
}

static int mlpd_read_src(struct mlpd_src *s, const char *name, struct jit_budget *b,
			 mlpd_method_cb cb, void *ctx)
{
	struct mlpd_ctx c = { .cb = cb, .cb_ctx = ctx };
	struct jit_budget none = JIT_BUDGET_NONE;
	char shown[PRINTABLE_MAX];
	int err;

	c.name = printable(shown, sizeof(shown), name ? name : "(mlpd)");	/* messages */
	s->b = b ? b : &none;
	err = read_header(&c, s);
	if (err) {
		jit_budget__take(s->b, s->produced);
		return err;
	}
	read_buffers(&c, s);
	free(c.scratch);
	if (c.warnings > MLPD_MAX_WARN)
		pr_warn("mlpd: %s: %u problems in all", c.name, c.warnings);
	jit_budget__take(s->b, s->produced);
	pr_debug("mlpd: %s: pid %u, data version %u, %llu buffers, %llu JIT events (%llu without code), %llu code buffers",
		 c.name, c.hdr.pid, c.hdr.data_version, c.buffers, c.methods,
		 c.no_code, c.helpers);
	return c.stop < 0 ? c.stop : 0;
}

int mlpd_read_mem(const void *data, size_t len, const char *name_for_messages,
		  struct jit_budget *b, mlpd_method_cb cb, void *ctx)
{
	static const __u8 empty[1];
	struct mlpd_src s = { .mode = SRC_MEM, .mem = data ? data : empty, .mem_len = len };
	int err;

	if (!data && len)
		return -EINVAL;
	if (len >= 2 && s.mem[0] == 0x1f && s.mem[1] == 0x8b) {
		s.mode = SRC_ZMEM;
		if (inflateInit2(&s.zs, 16 + MAX_WBITS) != Z_OK)
			return -ENOMEM;
		s.zs_ready = true;
	}
	err = mlpd_read_src(&s, name_for_messages, b, cb, ctx);
	if (s.zs_ready)
		inflateEnd(&s.zs);
	free(s.stage);
	return err;
}

int mlpd_read_file(const char *path, struct jit_budget *b, mlpd_method_cb cb, void *ctx)
{
	struct mlpd_src s = { .mode = SRC_GZFILE };
	char shown[PRINTABLE_MAX];
	struct stat st;
	int fd, err;

	/* O_NONBLOCK: a FIFO planted in place of the file must not hang us */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		pr_warn("mlpd: cannot open %s: %s", printable(shown, sizeof(shown), path),
			strerror(-err));
		return err;
	}
	if (fstat(fd, &st))
		st.st_mode = 0;
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		pr_warn("mlpd: %s: not a regular file", printable(shown, sizeof(shown), path));
		close(fd);
		return err;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	s.gz = gzdopen(fd, "rb");
	if (!s.gz) {
		close(fd);
		return -ENOMEM;
	}
	gzbuffer(s.gz, 128u << 10);
	err = mlpd_read_src(&s, path, b, cb, ctx);
	gzclose_r(s.gz);
	free(s.stage);
	return err;
}
