// SPDX-License-Identifier: GPL-2.0
/* Escaping of target-chosen names for messages (see printable.h). */
#include "util/printable.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static const char hex_digit[] = "0123456789abcdef";

/* Length of the well-formed UTF-8 sequence at s (at most left bytes) that
 * is safe to show as is, or 0: overlong forms, surrogates, code points
 * past U+10FFFF, the C1 controls and U+FFFE/U+FFFF (not characters in
 * XML) are not. */
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
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

const char *printable_mem(char *out, size_t n, const char *s, size_t len)
{
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
			out[o++] = hex_digit[p[i] >> 4];
			out[o++] = hex_digit[p[i] & 15];
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

/* utf8_ok, with the ASCII bytes in also escaped too. */
static size_t keep_len(const unsigned char *s, size_t left, const char *also)
{
	size_t k = utf8_ok(s, left);

	if (k == 1 && also && strchr(also, s[0]))	/* s[0] >= 0x20: not the NUL */
		return 0;
	return k;
}

static void put_hex(FILE *f, unsigned char c)
{
	const char text[4] = { '\\', 'x', hex_digit[c >> 4], hex_digit[c & 15] };

	fwrite(text, 1, sizeof(text), f);
}

/* Write p[*from..to) (a run of bytes kept as they are) in one call: a
 * write per byte cost a flame graph of long names most of its time. */
static void put_run(FILE *f, const unsigned char *p, size_t *from, size_t to)
{
	if (to > *from)
		fwrite(p + *from, 1, to - *from, f);
	*from = to;
}

int printable_fputs(FILE *f, const char *s, const char *also)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "(null)");
	size_t len = strlen((const char *)p), from = 0;

	for (size_t i = 0; i < len;) {
		size_t k = keep_len(p + i, len - i, also);

		if (k) {
			i += k;
			continue;
		}
		put_run(f, p, &from, i);
		put_hex(f, p[i++]);
		from = i;
	}
	put_run(f, p, &from, len);
	return ferror(f) ? -EIO : 0;
}

/* The entity XML needs for the byte c, or NULL. */
static const char *xml_entity(unsigned char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&apos;";
	default: return NULL;
	}
}

/* The ASCII bytes XML text and attributes take as they are: printable,
 * but & < > " ' and the backslash (the NUL not: it ends a run). */
static const bool xml_plain[256] = {
	[0x20 ... 0x21] = true,			/* ' ' '!' */
	[0x23 ... 0x25] = true,			/* '#' .. '%' */
	[0x28 ... 0x3b] = true,			/* '(' .. ';' */
	[0x3d] = true,				/* '=' */
	[0x3f ... 0x5b] = true,			/* '?' .. '[' */
	[0x5d ... 0x7e] = true,			/* ']' .. '~' */
};

int xml_fputs(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "(null)");
	size_t len = strlen((const char *)p), from = 0;

	for (size_t i = 0; i < len;) {
		size_t k;
		const char *entity;

		/* plain ASCII a test a byte (p[len], the NUL, stops it) */
		while (xml_plain[p[i]])
			i++;
		if (i == len)
			break;
		k = keep_len(p + i, len - i, NULL);
		entity = k == 1 ? xml_entity(p[i]) : NULL;

		if (k && !entity) {
			i += k;
			continue;
		}
		put_run(f, p, &from, i);
		if (entity)
			fputs(entity, f);
		else
			put_hex(f, p[i]);
		from = ++i;
	}
	put_run(f, p, &from, len);
	return ferror(f) ? -EIO : 0;
}

/* Append s[0..len) to out (room n) at *o, cut to fit. */
static void put(char *out, size_t n, size_t *o, const char *s, size_t len)
{
	if (len > n - 1 - *o)
		len = n - 1 - *o;
	memcpy(out + *o, s, len);
	*o += len;
	out[*o] = '\0';
}

/*
 * The secrets of url as (start, end) offsets, in order; returns how many
 * (at most max).  scheme://user:password@host:port/path?a=b&password=c#f:
 * the authority runs from after "://" (or the start, for a URL without
 * its scheme) to the first '/', '?' or '#', its userinfo to its last '@',
 * the password from the userinfo's first ':'; then ClickHouse's password=
 * parameters of the query.
 */
static size_t url_secrets(const char *url, size_t sp[][2], size_t max)
{
	const char *scheme = strstr(url, "://"), *start, *end, *at = NULL, *colon = NULL;
	size_t nr = 0;

	if (scheme && (size_t)(scheme - url) + 1 != strcspn(url, "/?#"))
		scheme = NULL;		/* a "://" past the authority */
	start = scheme ? scheme + 3 : url;
	end = start + strcspn(start, "/?#");
	for (const char *p = start; p < end; p++)
		if (*p == '@')
			at = p;
	if (at)
		colon = memchr(start, ':', (size_t)(at - start));
	if (colon && nr < max) {
		sp[nr][0] = (size_t)(colon + 1 - url);
		sp[nr++][1] = (size_t)(at - url);
	}
	for (const char *q = end; *q && *q != '#' && nr < max; q++) {
		if ((*q == '?' || *q == '&') && !strncmp(q + 1, "password=", 9)) {
			sp[nr][0] = (size_t)(q + 10 - url);
			q += 10 + strcspn(q + 10, "&#");
			sp[nr++][1] = (size_t)(q - url);
			q--;
		}
	}
	return nr;
}

#define URL_MAX_SECRETS	8

const char *url_redact(char *out, size_t n, const char *url)
{
	size_t sp[URL_MAX_SECRETS][2], nr, from = 0, o = 0, len;

	if (!out || !n)
		return "";
	out[0] = '\0';
	if (!url)
		return out;
	len = strlen(url);
	nr = url_secrets(url, sp, URL_MAX_SECRETS);
	if (nr == URL_MAX_SECRETS)	/* more than that: nothing past the first */
		len = sp[0][0], nr = 1, sp[0][1] = len;
	for (size_t i = 0; i < nr; i++) {
		put(out, n, &o, url + from, sp[i][0] - from);
		put(out, n, &o, "***", 3);
		from = sp[i][1];
	}
	put(out, n, &o, url + from, len - from);
	return out;
}

void url_hide_password(char *url)
{
	size_t sp[URL_MAX_SECRETS][2], nr;

	if (!url)
		return;
	nr = url_secrets(url, sp, URL_MAX_SECRETS);
	if (nr == URL_MAX_SECRETS) {	/* more than that: everything past the first */
		memset(url + sp[0][0], '*', strlen(url + sp[0][0]));
		return;
	}
	for (size_t i = 0; i < nr; i++)
		memset(url + sp[i][0], '*', sp[i][1] - sp[i][0]);
}

const char *printable_url(char *out, size_t n, const char *url)
{
	char tmp[PRINTABLE_MAX];

	return printable(out, n, url ? url_redact(tmp, sizeof(tmp), url) : NULL);
}
