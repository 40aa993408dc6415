/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LEB128, the variable-length integers of DWARF and of Mono's .mlpd log:
 * 7 bits a byte, least significant first, the top bit set on every byte
 * but the last.  The readers take bytes that may be hostile: they never
 * read at or past end and say why a value is refused.
 */
#ifndef PRECORD_UTIL_LEB128_H
#define PRECORD_UTIL_LEB128_H

#include <stdint.h>

#include "util/buf.h"

/* A 64-bit value takes at most 10 bytes. */
#define LEB128_MAX_BYTES	10

/*
 * Decode one value from [*p, end) into *v and move *p past it.  Returns 0;
 * or, with *p moved past the bytes looked at and *v untouched:
 *   -ENODATA  the value runs past end (truncated);
 *   -ERANGE   its 10th byte has bits that do not fit 64 bits (unsigned:
 *             any bit above bit 63; signed: bits 64 and up that are not
 *             copies of bit 63, the sign);
 *   -E2BIG    it fits, but does not end by its 10th byte.
 * An encoding padded with 0x80 bytes is accepted up to 10 bytes.
 */
int leb128_read_u(const uint8_t **p, const uint8_t *end, uint64_t *v);
int leb128_read_s(const uint8_t **p, const uint8_t *end, int64_t *v);

/* Move *p past one value of any length, its bits unread (a field the
 * caller does not use).  0, or -ENODATA when it runs past end (*p = end). */
int leb128_skip(const uint8_t **p, const uint8_t *end);

/* Append the shortest encoding of v.  0 or b->err (-ENOMEM). */
int leb128_put_u(struct pbuf *b, uint64_t v);
int leb128_put_s(struct pbuf *b, int64_t v);

#endif
