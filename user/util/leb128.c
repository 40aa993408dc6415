// SPDX-License-Identifier: GPL-2.0
#include "util/leb128.h"

#include <errno.h>
#include <stdbool.h>

/* The 10th byte of a value: bit 0 is bit 63 of the value. */
static int last_byte_u(uint8_t c)
{
	if (c & 0x7e)
		return -ERANGE;
	return c & 0x80 ? -E2BIG : 0;
}

static int last_byte_s(uint8_t c)
{
	if ((c & 0x7f) != 0 && (c & 0x7f) != 0x7f)
		return -ERANGE;
	return c & 0x80 ? -E2BIG : 0;
}

/* The value bits of up to 10 bytes, and how many bytes (*n); the error
 * of the 10th byte by check. */
static int read_bits(const uint8_t **p, const uint8_t *end, uint64_t *v, unsigned int *n,
		     int (*check)(uint8_t))
{
	uint64_t bits = 0;
	unsigned int i;

	for (i = 0; i < LEB128_MAX_BYTES; i++) {
		uint8_t c;

		if (*p >= end)
			return -ENODATA;
		c = *(*p)++;
		if (i == LEB128_MAX_BYTES - 1) {
			int err = check(c);

			if (err)
				return err;
		}
		bits |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80))
			break;
	}
	*v = bits;
	*n = i + 1;
	return 0;
}

int leb128_read_u(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int n;

	return read_bits(p, end, v, &n, last_byte_u);
}

int leb128_read_s(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	const uint8_t *last;
	uint64_t bits;
	unsigned int n;
	int err = read_bits(p, end, &bits, &n, last_byte_s);

	if (err)
		return err;
	last = *p - 1;
	if (n < LEB128_MAX_BYTES && (*last & 0x40))
		bits |= ~0ULL << (7 * n);	/* sign-extend from the last byte */
	*v = (int64_t)bits;
	return 0;
}

int leb128_skip(const uint8_t **p, const uint8_t *end)
{
	while (*p < end)
		if (!(*(*p)++ & 0x80))
			return 0;
	return -ENODATA;
}

int leb128_put_u(struct pbuf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		if (v)
			byte |= 0x80;
		pbuf_put_u8(b, byte);
	} while (v);
	return b->err;
}

int leb128_put_s(struct pbuf *b, int64_t v)
{
	bool more = true;

	while (more) {
		uint8_t byte = v & 0x7f;

		v >>= 7;	/* arithmetic shift: gcc and clang */
		if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)))
			more = false;
		else
			byte |= 0x80;
		pbuf_put_u8(b, byte);
	}
	return b->err;
}
