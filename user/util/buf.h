/* SPDX-License-Identifier: GPL-2.0 */
/* Growable byte buffer used by every encoder and writer in precord. */
#ifndef PRECORD_UTIL_BUF_H
#define PRECORD_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

struct pbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err;		/* sticky: -ENOMEM after a failed growth */
};

/* All appenders return 0 or -ENOMEM; after a failure the buffer keeps its
 * old contents and every later append fails too (check pbuf.err once). */
int pbuf_reserve(struct pbuf *b, size_t extra);
int pbuf_put(struct pbuf *b, const void *p, size_t n);
int pbuf_put_zero(struct pbuf *b, size_t n);
int pbuf_put_u8(struct pbuf *b, uint8_t v);
int pbuf_put_u16(struct pbuf *b, uint16_t v);
int pbuf_put_u32(struct pbuf *b, uint32_t v);
int pbuf_put_u64(struct pbuf *b, uint64_t v);
/* Pad with zero bytes until len is a multiple of align (a power of two). */
int pbuf_align(struct pbuf *b, size_t align);
/* perf's header string: u32 len, then the string NUL-padded to a multiple
 * of 64 bytes (len counts the padding). */
int pbuf_put_perf_str(struct pbuf *b, const char *s);
void pbuf_reset(struct pbuf *b);
void pbuf_free(struct pbuf *b);

static inline size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

#endif
