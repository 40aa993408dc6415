/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names that profiled processes choose (jitdump paths, symbol names, DSO
 * paths, comm) made safe to print: control bytes (C0, DEL and the C1
 * range U+0080..U+009F, which some terminals obey), the backslash and every
 * byte that is not part of well-formed UTF-8 become \xNN, so no name can
 * move the cursor, recolour the terminal or forge a line of its own.
 * The same rule for terminals, folded stacks and SVG, so a name reads the
 * same in each; the password in a store's URL is never shown.
 */
#ifndef PRECORD_UTIL_PRINTABLE_H
#define PRECORD_UTIL_PRINTABLE_H

#include <stddef.h>
#include <stdio.h>

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

/*
 * The same escaping written to f in full (no cut), for names in a report:
 * the ASCII bytes in also (NULL: none) become \xNN too, such as ';' that
 * separates the frames of a folded stack.  0 or -EIO.
 */
int printable_fputs(FILE *f, const char *s, const char *also);
/*
 * s as XML 1.0 text or attribute value: the escaping above (so the result
 * is well-formed UTF-8 without the characters XML forbids, U+FFFE and
 * U+FFFF included), then & < > " ' as entities.  0 or -EIO.
 */
int xml_fputs(FILE *f, const char *s);

/*
 * A URL as it may be shown: the password of its user:password@ and the
 * value of a password= parameter replaced by ***, then escaped as above.
 * url_redact() only replaces (a string for a file that keeps bytes as
 * they are, such as perf.data's CMDLINE); both cut what does not fit.
 */
const char *printable_url(char *out, size_t n, const char *url);
const char *url_redact(char *out, size_t n, const char *url);
/*
 * Overwrite those passwords in place with '*' (the same length): for the
 * command line, once the URL is copied, so ps shows less of it (others
 * may read it before; PRECORD_CH_PASSWORD is the way no one else can).
 */
void url_hide_password(char *url);

#endif
