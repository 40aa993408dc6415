// SPDX-License-Identifier: GPL-2.0
#include "buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pbuf_reserve(struct pbuf *b, size_t extra)
{
	size_t want, ncap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (extra > SIZE_MAX - b->len)
		return b->err = -ENOMEM;
	want = b->len + extra;
	if (want <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 256;
	while (ncap < want)
		ncap = ncap > SIZE_MAX / 2 ? want : ncap * 2;
	p = realloc(b->data, ncap);
	if (!p)
		return b->err = -ENOMEM;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int pbuf_put(struct pbuf *b, const void *p, size_t n)
{
	int err = pbuf_reserve(b, n);

	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int pbuf_put_zero(struct pbuf *b, size_t n)
{
	int err = pbuf_reserve(b, n);

	if (err)
		return err;
	if (n)
		memset(b->data + b->len, 0, n);
	b->len += n;
	return 0;
}

int pbuf_put_u8(struct pbuf *b, uint8_t v) { return pbuf_put(b, &v, 1); }
int pbuf_put_u16(struct pbuf *b, uint16_t v) { return pbuf_put(b, &v, 2); }
int pbuf_put_u32(struct pbuf *b, uint32_t v) { return pbuf_put(b, &v, 4); }
int pbuf_put_u64(struct pbuf *b, uint64_t v) { return pbuf_put(b, &v, 8); }

int pbuf_align(struct pbuf *b, size_t align)
{
	return pbuf_put_zero(b, align_up(b->len, align) - b->len);
}

int pbuf_put_perf_str(struct pbuf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = align_up(n, 64);
	int err;

	if (padded > UINT32_MAX)
		return -EINVAL;
	err = pbuf_put_u32(b, (uint32_t)padded);
	if (!err)
		err = pbuf_put(b, s, n - 1);
	if (!err)
		err = pbuf_put_zero(b, padded - (n - 1));
	return err;
}

void pbuf_reset(struct pbuf *b)
{
	b->len = 0;
	b->err = 0;
}

void pbuf_free(struct pbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}
