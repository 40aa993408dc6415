/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers as text without printf: for writers that print a few numbers
 * per line over many lines (a flame graph's frames), where printf's
 * parsing of its format, and a sanitizer's checks of it, cost more than
 * the digits.  The text is what printf writes for the same value.
 */
#ifndef PRECORD_UTIL_NUMTEXT_H
#define PRECORD_UTIL_NUMTEXT_H

#include <stddef.h>
#include <stdint.h>

/* Room enough for any text below (20 digits, a point, two decimals). */
#define NUMTEXT_MAX	24

/* v's decimal digits at out (no NUL), as "%llu"; returns their count. */
size_t numtext_u64(char *out, uint64_t v);

/* v as "%lld" would write it; returns the count. */
size_t numtext_i64(char *out, int64_t v);

/*
 * v to two decimals at out, the bytes "%.2f" writes in the default
 * rounding mode (the exact binary value rounded, a tie to even); returns
 * the count, or 0 when v is not a number in [+0, 1e15) (negative, -0,
 * NaN, too large): then the caller uses printf.
 */
size_t numtext_fixed2(char *out, double v);

#endif
