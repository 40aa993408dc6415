/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names that profiled processes choose (jitdump paths, symbol names, DSO
 * paths, comm) made safe to print: control bytes (C0, DEL and the C1
 * range U+0080..U+009F, which some terminals obey), the backslash and every
 * byte that is not part of well-formed UTF-8 become \xNN, so no name can
 * move the cursor, recolour the terminal or forge a line of its own.
 */
#ifndef PRECORD_UTIL_PRINTABLE_H
#define PRECORD_UTIL_PRINTABLE_H

#include <stddef.h>

/* A buffer size that shows any path in full unless it is hostile. */
#define PRINTABLE_MAX	1024

/*
 * Write the escaped form of s[0..len) into out (n bytes, n >= 4), always
 * NUL-terminated; a result that does not fit ends in "...".  Returns out,
 * so it can sit in a printf argument list.  s may be NULL ("(null)").
 */
const char *printable_mem(char *out, size_t n, const char *s, size_t len);
/* The same for a NUL-terminated string. */
const char *printable(char *out, size_t n, const char *s);

#endif
