// SPDX-License-Identifier: GPL-2.0
/* Numbers as text without printf (see numtext.h). */
#include "util/numtext.h"

#include <float.h>
#include <math.h>
#include <string.h>

size_t numtext_u64(char *out, uint64_t v)
{
	char digits[20], *p = digits + sizeof(digits);

	/* from the last digit back: one test a digit (a fuzzer's build hooks
	 * every comparison) */
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(out, p, (size_t)(digits + sizeof(digits) - p));
	return (size_t)(digits + sizeof(digits) - p);
}

size_t numtext_i64(char *out, int64_t v)
{
	if (v >= 0)
		return numtext_u64(out, (uint64_t)v);
	out[0] = '-';
	return 1 + numtext_u64(out + 1, -(uint64_t)v);
}

size_t numtext_fixed2(char *out, double v)
{
	long double x, frac;
	uint64_t r;
	size_t n;

	/*
	 * A double's 53-bit significand times 100 (7 bits) fits the 64 bits
	 * of x87's long double (113 on aarch64): x is v * 100 exactly, so its
	 * fraction decides the rounding exactly.  Where long double is a
	 * double, printf it is.
	 */
	if (LDBL_MANT_DIG < 60 || !(v >= 0 && v < 1e15) || signbit(v))
		return 0;
	x = (long double)v * 100;
	r = (uint64_t)x;		/* x < 2^57: truncation is floor */
	frac = x - (long double)r;	/* exact */
	if (frac > 0.5L || (frac == 0.5L && (r & 1)))
		r++;
	n = numtext_u64(out, r / 100);
	out[n++] = '.';
	out[n++] = (char)('0' + r % 100 / 10);
	out[n++] = (char)('0' + r % 10);
	return n;
}
