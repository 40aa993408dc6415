// SPDX-License-Identifier: GPL-2.0
/* util/keymap: keys of every length (empty, tails of 1..7 bytes, over
 * the 1 KiB that gets a chunk of its own) kept apart and found again
 * across growth; values kept; everything freed (ASan). */
#include "harness.h"

#include "util/keymap.h"

static void fill(unsigned char *b, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(seed * 31 + i * 7 + (seed >> 3));
}

TEST(lengths_and_growth)
{
	struct keymap m = { 0 };
	unsigned char key[3000];
	bool added;
	size_t n = 0;

	/* keys 0..2999 bytes long, each twice: the second put finds it */
	for (unsigned int len = 0; len < 3000; len += (len < 40 ? 1 : 97)) {
		uint64_t *v;

		fill(key, len, len);
		v = keymap_put(&m, key, len, &added);
		CHECK(v && added && *v == 0);
		if (v)
			*v = 1000 + len;
		n++;
		v = keymap_put(&m, key, len, &added);
		CHECK(v && !added && *v == 1000 + len);
	}
	CHECK(m.nr == n);
	for (unsigned int len = 0; len < 3000; len += (len < 40 ? 1 : 97)) {
		uint64_t *v;

		fill(key, len, len);
		v = keymap_get(&m, key, len);
		CHECK(v && *v == 1000 + len);
		/* one byte changed, in the tail or the words: another key */
		if (len) {
			key[len - 1] ^= 1;
			CHECK(!keymap_get(&m, key, len));
			key[len - 1] ^= 1;
			key[0] ^= 0x80;
			CHECK(!keymap_get(&m, key, len));
		}
	}
	/* a key and the same bytes with a zero byte more are two keys */
	memset(key, 0, 16);
	CHECK(keymap_put(&m, key, 7, &added) && added);
	CHECK(keymap_put(&m, key, 8, &added) && added);
	CHECK(keymap_put(&m, key, 9, &added) && added);
	CHECK(keymap_put(&m, key, 7, &added) && !added);
	keymap_free(&m);
	CHECK(!m.nr && !m.cap && !m.chunks);
	/* reusable after free */
	CHECK(keymap_put_u64(&m, 42, &added) && added);
	CHECK(keymap_get_u64(&m, 42) && !keymap_get_u64(&m, 43));
	keymap_free(&m);
}

TEST(many_u64)
{
	struct keymap m = { 0 };
	bool added;

	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t *v = keymap_put_u64(&m, i * 4096, &added);

		CHECK(v && added);
		if (v)
			*v = i;
	}
	CHECK(m.nr == 100000);
	for (uint64_t i = 0; i < 100000; i += 7) {
		uint64_t *v = keymap_get_u64(&m, i * 4096);

		CHECK(v && *v == i);
		CHECK(!keymap_get_u64(&m, i * 4096 + 1));
	}
	keymap_free(&m);
}

int main(void)
{
	RUN(lengths_and_growth);
	RUN(many_u64);
	return HARNESS_DONE();
}
