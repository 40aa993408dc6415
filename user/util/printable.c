// SPDX-License-Identifier: GPL-2.0
/* Escaping of target-chosen names for messages (see printable.h). */
#include "util/printable.h"

#include <stdbool.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s (at most left bytes) that
 * is safe to show as is, or 0: overlong forms, surrogates, code points
 * past U+10FFFF and the C1 controls are not. */
static size_t utf8_ok(const unsigned char *s, size_t left)
{
	unsigned int cp;
	size_t len, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f && s[0] != '\\';
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (left < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

const char *printable_mem(char *out, size_t n, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	if (!out || n < 4)
		return "";
	if (!s) {
		s = "(null)";
		p = (const unsigned char *)s;
		len = strlen(s);
	}
	while (i < len) {
		size_t k = utf8_ok(p + i, len - i);
		size_t need = k ? k : 4;

		if (o + need + 1 > n - 3)	/* keep room for "..." */
			goto cut;
		if (k) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[p[i] >> 4];
			out[o++] = hex[p[i] & 15];
			i++;
		}
	}
	out[o] = '\0';
	return out;
cut:
	memcpy(out + o, "...", 4);
	return out;
}

const char *printable(char *out, size_t n, const char *s)
{
	return printable_mem(out, n, s, s ? strlen(s) : 0);
}
