// SPDX-License-Identifier: GPL-2.0
#include "jit/jithash.h"

#include <string.h>

#include "util/le.h"
#include "util/mix64.h"

static const __u64 seed[3] = {
	0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL,
};
static const __u64 mul[3] = {
	0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL,
};

static inline __u64 rotl(__u64 v, unsigned int r)
{
	return (v << r) | (v >> (64 - r));
}


static void hash_word(struct jithash *h, __u64 w)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		h->lane[i] = rotl(h->lane[i] ^ (w * mul[i]), 23 + 8 * i) * mul[(i + 1) % 3] +
			     seed[i];
}

void jithash_init(struct jithash *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->lane, seed, sizeof(h->lane));
}

void jithash_update(struct jithash *h, const void *data, size_t n)
{
	const __u8 *p = data;

	h->len += n;
	if (h->tail_len) {
		while (n && h->tail_len < 8) {
			h->tail[h->tail_len++] = *p++;
			n--;
		}
		if (h->tail_len < 8)
			return;
		hash_word(h, le64_load(h->tail));
		h->tail_len = 0;
	}
	for (; n >= 8; n -= 8, p += 8)
		hash_word(h, le64_load(p));
	if (n)
		memcpy(h->tail, p, n);
	h->tail_len = (unsigned int)n;
}

void jithash_update_u64(struct jithash *h, __u64 v)
{
	__u8 b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (__u8)(v >> (8 * i));
	jithash_update(h, b, sizeof(b));
}

void jithash_final(struct jithash *h, __u8 out[JITHASH_SIZE])
{
	__u8 full[24];
	__u64 w = 0;
	unsigned int i;

	for (i = 0; i < h->tail_len; i++)
		w |= (__u64)h->tail[i] << (8 * i);
	hash_word(h, w ^ ((__u64)h->tail_len << 56));
	hash_word(h, h->len);
	for (i = 0; i < 3; i++) {
		__u64 v = mix64(h->lane[i] ^ rotl(h->lane[(i + 1) % 3], 17));
		int b;

		for (b = 0; b < 8; b++)
			full[i * 8 + b] = (__u8)(v >> (8 * b));
	}
	memcpy(out, full, JITHASH_SIZE);
}
