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

/* One string of an array, its escapes undone, at (*arr)[*nr]; *cap grows
 * by doubling. */
static int append(char ***arr, int *nr, int *cap, const char *start, size_t len)
{
	char *w;

	if (*nr == *cap) {
		int ncap = *cap ? *cap * 2 : 8;
		char **na = realloc(*arr, (size_t)ncap * sizeof(char *));

		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = ncap;
	}
	w = malloc(len + 1);
	if (!w)
		return -ENOMEM;
	(*arr)[(*nr)++] = w;
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

int tsv_parse_array(const char *s, int max, char ***out, int *nr, uint64_t *left_out)
{
	int cap = 0;

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
		if (*nr >= max)
			(*left_out)++;
		else if (append(out, nr, &cap, start, (size_t)(s - start)))
			return -ENOMEM;
		s++;
		if (*s == ',')
			s++;
	}
	return 0;
}
