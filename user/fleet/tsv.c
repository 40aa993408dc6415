// SPDX-License-Identifier: GPL-2.0
#include "tsv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tsv_split(char *line, char **fields, int n)
{
	int i = 0;

	while (i < n) {
		fields[i++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = 0;
	}
	return i;
}

static char unescape_char(char c)
{
	switch (c) {
	case 't': return '\t';
	case 'n': return '\n';
	case 'r': return '\r';
	case 'b': return '\b';
	case 'f': return '\f';
	case '0': return '\0';
	default: return c;
	}
}

void tsv_unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1])
			*w++ = unescape_char(*++s);
		else
			*w++ = *s;
	}
	*w = 0;
}

static int append(char ***arr, int *nr, const char *start, size_t len)
{
	char **na = realloc(*arr, (size_t)(*nr + 1) * sizeof(char *));
	char *w;

	if (!na)
		return -ENOMEM;
	*arr = na;
	w = malloc(len + 1);
	if (!w)
		return -ENOMEM;
	na[(*nr)++] = w;
	/* inside the quotes: a backslash escapes the next byte (TSV's own
	 * escaping of the field and the quoted string's are the same here) */
	for (size_t i = 0; i < len; i++) {
		if (start[i] == '\\' && i + 1 < len)
			*w++ = unescape_char(start[++i]);
		else
			*w++ = start[i];
	}
	*w = 0;
	return 0;
}

int tsv_parse_array(const char *s, char ***out, int *nr)
{
	*out = NULL;
	*nr = 0;
	if (*s++ != '[')
		return 0;
	while (*s == '\'') {
		const char *start = ++s;

		while (*s && *s != '\'')
			s += (*s == '\\' && s[1]) ? 2 : 1;
		if (*s != '\'')
			return 0;
		if (append(out, nr, start, (size_t)(s - start)))
			return -ENOMEM;
		s++;
		if (*s == ',')
			s++;
	}
	return 0;
}
