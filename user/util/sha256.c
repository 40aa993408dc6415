// SPDX-License-Identifier: GPL-2.0
#include "sha256.h"

#include <string.h>

/* The first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void compress_c(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
			      k[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));

		hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/*
 * The same compression with the SHA extensions (Intel Goldmont and later,
 * AMD Zen): about ten times the C version's speed.  The state is held as
 * ABEF and CDGH as the instructions want it; each step does four rounds
 * and computes the message words four groups ahead (W[t] from W[t-16],
 * W[t-15], W[t-7] and W[t-2] through msg1, the alignr and msg2).
 */
__attribute__((target("sha,sse4.1,ssse3")))
static void compress_ni(uint32_t h[8], const unsigned char *p)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xb1);	/* CDAB */
	__m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1b);	/* EFGH */
	__m128i s0 = _mm_alignr_epi8(t, s1, 8);		/* ABEF */
	__m128i abef, cdgh, m[4];

	s1 = _mm_blend_epi16(s1, t, 0xf0);		/* CDGH */
	abef = s0;
	cdgh = s1;
	for (int i = 0; i < 4; i++)
		m[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
	for (int i = 0; i < 16; i++) {
		__m128i wk = _mm_add_epi32(m[i & 3], _mm_loadu_si128((const __m128i *)&k[4 * i]));

		s1 = _mm_sha256rnds2_epu32(s1, s0, wk);
		s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(wk, 0x0e));
		if (i < 12) {
			__m128i x = _mm_sha256msg1_epu32(m[i & 3], m[(i + 1) & 3]);

			x = _mm_add_epi32(x, _mm_alignr_epi8(m[(i + 3) & 3], m[(i + 2) & 3], 4));
			m[i & 3] = _mm_sha256msg2_epu32(x, m[(i + 3) & 3]);
		}
	}
	s0 = _mm_add_epi32(s0, abef);
	s1 = _mm_add_epi32(s1, cdgh);
	t = _mm_shuffle_epi32(s0, 0x1b);		/* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xb1);		/* DCHG */
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xf0));	/* DCBA */
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));	/* HGFE */
}

/* -1 unknown, 0 no, 1 yes; threads may race to the same answer */
static int have_ni = -1;

static void compress(uint32_t h[8], const unsigned char *p)
{
	int have = __atomic_load_n(&have_ni, __ATOMIC_RELAXED);

	if (have < 0) {
		unsigned int a, b, c, d;

		have = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) && (c & bit_SSE4_1) &&
		       __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
		__atomic_store_n(&have_ni, have, __ATOMIC_RELAXED);
	}
	if (have)
		compress_ni(h, p);
	else
		compress_c(h, p);
}

void sha256__use_portable(int yes)
{
	__atomic_store_n(&have_ni, yes ? 0 : -1, __ATOMIC_RELAXED);
}
#else
#define compress compress_c

void sha256__use_portable(int yes)
{
	(void)yes;
}
#endif

void sha256__init(struct sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->bytes = 0;
	s->used = 0;
}

void sha256__update(struct sha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->bytes += n;
	if (s->used) {
		size_t take = 64 - s->used < n ? 64 - s->used : n;

		memcpy(s->block + s->used, p, take);
		s->used += take;
		p += take;
		n -= take;
		if (s->used < 64)
			return;
		compress(s->h, s->block);
		s->used = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		compress(s->h, p);
	memcpy(s->block, p, n);
	s->used = n;
}

void sha256__final(struct sha256 *s, unsigned char out[SHA256_DIGEST_BYTES])
{
	uint64_t bits = s->bytes * 8;

	s->block[s->used++] = 0x80;
	if (s->used > 56) {
		memset(s->block + s->used, 0, 64 - s->used);
		compress(s->h, s->block);
		s->used = 0;
	}
	memset(s->block + s->used, 0, 56 - s->used);
	for (int i = 0; i < 8; i++)
		s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
	compress(s->h, s->block);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}
