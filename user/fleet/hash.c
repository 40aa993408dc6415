// SPDX-License-Identifier: GPL-2.0
#include "hash.h"

#include "util/mix64.h"

uint64_t fleet_hash64(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w = 0;

		for (int k = 7; k >= 0; k--)
			w = (w << 8) | b[i + k];
		h = mix64(h ^ w) + 0x9e3779b97f4a7c15ULL;
	}
	if (i < n) {
		uint64_t w = 0;

		for (size_t k = n; k > i; k--)
			w = (w << 8) | b[k - 1];
		h = mix64(h ^ w ^ 0x80);
	}
	return mix64(h);
}
