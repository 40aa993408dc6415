// SPDX-License-Identifier: GPL-2.0
/* util/numtext: the same bytes printf writes, for every value it takes. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "harness.h"
#include "util/numtext.h"

/* numtext_fixed2(v) against snprintf("%.2f", v); false on a difference */
static int same_as_printf(double v)
{
	char got[NUMTEXT_MAX + 1], want[64];
	size_t n = numtext_fixed2(got, v);

	if (!n)
		return 0;
	got[n] = '\0';
	snprintf(want, sizeof(want), "%.2f", v);
	if (strcmp(got, want)) {
		fprintf(stderr, "  %.17g: \"%s\", printf \"%s\"\n", v, got, want);
		return 0;
	}
	return 1;
}

/* the next double up (step 1) or down (-1) of a positive v: its bits +-1
 * (no libm here) */
static double step(double v, int dir)
{
	uint64_t b;

	memcpy(&b, &v, sizeof(b));
	b += (uint64_t)(int64_t)dir;
	memcpy(&v, &b, sizeof(v));
	return v;
}

/* xorshift64*, seeded: the same values every run */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

TEST(integers_as_printf)
{
	char out[NUMTEXT_MAX + 1], want[32];
	const uint64_t u[] = { 0, 1, 9, 10, 99, 100, 1234567890, UINT64_MAX / 3, UINT64_MAX };
	const int64_t i[] = { 0, -1, 42, -42, INT64_MAX, INT64_MIN };

	for (size_t k = 0; k < sizeof(u) / sizeof(u[0]); k++) {
		out[numtext_u64(out, u[k])] = '\0';
		snprintf(want, sizeof(want), "%llu", (unsigned long long)u[k]);
		CHECK_STR(out, want);
	}
	for (size_t k = 0; k < sizeof(i) / sizeof(i[0]); k++) {
		out[numtext_i64(out, i[k])] = '\0';
		snprintf(want, sizeof(want), "%lld", (long long)i[k]);
		CHECK_STR(out, want);
	}
}

TEST(fixed2_ties_and_edges)
{
	/* exact ties go to even, as printf's: 0.125 is "0.12", 0.375 "0.38" */
	for (int k = 0; k < 8000; k++)
		CHECK(same_as_printf(k / 8.0));
	/* decimals a double cannot hold: 1.005 is 1.00499999999999989... */
	const double v[] = { 0.0, 0.005, 0.015, 0.025, 1.005, 2.675, 1.115, 8.345, 0.994999999,
			     0.995, 99.995, 999.995, 1179.999999, 4.999999999999999e14,
			     9.99999999999999e14, DBL_MIN, DBL_TRUE_MIN, 0.1 + 0.2 };

	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		CHECK(same_as_printf(v[k]));
	/* the hundredths and the halves between them, and their neighbours */
	for (int k = 0; k < 200000; k++) {
		double h = k / 200.0;

		CHECK(same_as_printf(h));
		CHECK(!k || same_as_printf(step(h, -1)));
		CHECK(same_as_printf(step(h, 1)));
	}
}

TEST(fixed2_random)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;

	for (int k = 0; k < 500000; k++) {
		uint64_t r = next(&s);
		/* a fraction of a flame graph's width, a share, a large count */
		double v = (double)(r >> 11) / 9007199254740992.0 * (k % 3 == 0 ? 1200.0 :
								    k % 3 == 1 ? 100.0 : 1e14);

		if (!same_as_printf(v)) {
			CHECK(!"fixed2 as printf");
			break;
		}
	}
}

TEST(fixed2_refuses_what_printf_must_write)
{
	char out[NUMTEXT_MAX];

	CHECK_EQ(numtext_fixed2(out, -0.0), 0);
	CHECK_EQ(numtext_fixed2(out, -0.001), 0);
	CHECK_EQ(numtext_fixed2(out, 1e15), 0);
	CHECK_EQ(numtext_fixed2(out, INFINITY), 0);
	CHECK_EQ(numtext_fixed2(out, NAN), 0);
	CHECK_EQ(numtext_fixed2(out, DBL_MAX), 0);
}

int main(void)
{
	RUN(integers_as_printf);
	RUN(fixed2_ties_and_edges);
	RUN(fixed2_random);
	RUN(fixed2_refuses_what_printf_must_write);
	return HARNESS_DONE();
}
