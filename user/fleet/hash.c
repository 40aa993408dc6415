// SPDX-License-Identifier: GPL-2.0
#include "hash.h"

#include <string.h>

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

static const char tag[] = "precord stack 1;";

/* v in decimal, then after (ClickHouse's toString of an unsigned) */
static void put_decimal(struct sha256 *s, uint64_t v, char after)
{
	char d[24];
	int i = sizeof(d);

	d[--i] = after;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sha256__update(s, d + i, sizeof(d) - (size_t)i);
}

void fleet_stack_key__begin(struct fleet_stack_key *k)
{
	sha256__init(&k->sha);
	sha256__update(&k->sha, tag, sizeof(tag) - 1);
	k->left = 0;
}

void fleet_stack_key__array(struct fleet_stack_key *k, uint32_t count)
{
	put_decimal(&k->sha, count, '[');
	k->left = count;
	if (!count)
		sha256__update(&k->sha, "]", 1);
}

void fleet_stack_key__string(struct fleet_stack_key *k, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_decimal(&k->sha, n, ':');
	sha256__update(&k->sha, s ? s : "", n);
	if (k->left && !--k->left)
		sha256__update(&k->sha, "]", 1);
}

uint64_t fleet_stack_key__end(struct fleet_stack_key *k)
{
	unsigned char d[SHA256_DIGEST_BYTES];
	uint64_t v = 0;

	sha256__final(&k->sha, d);
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | d[i];
	return v;
}

uint64_t fleet_stack_key(const char *const *syms, const char *const *dsos,
			 const char *const *bids, uint32_t nr)
{
	const char *const *arrays[3] = { syms, dsos, bids };
	struct fleet_stack_key k;

	fleet_stack_key__begin(&k);
	for (int a = 0; a < 3; a++) {
		fleet_stack_key__array(&k, nr);
		for (uint32_t i = 0; i < nr; i++)
			fleet_stack_key__string(&k, arrays[a][i]);
	}
	return fleet_stack_key__end(&k);
}
