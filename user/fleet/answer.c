// SPDX-License-Identifier: GPL-2.0
#include "answer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/tsv.h"

/* The next line of text (NUL-terminated in place), or NULL. */
static char *next_line(char **at)
{
	char *line = *at, *nl;

	if (!*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = 0;
		*at = nl + 1;
	} else {
		*at = line + strlen(line);
	}
	return line;
}

/* A decimal unsigned 64-bit field, whole; false for anything else. */
static bool parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

static int by_hash(const void *a, const void *b)
{
	const struct fleet_qstack *x = a, *y = b;

	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

int fleet_answer__read_sums(char *text, struct fleet_qstack **out, size_t *out_n,
			    struct fleet_answer_counts *c)
{
	struct fleet_qstack *st = NULL;
	size_t n = 0, cap = 0;
	char *line, *at = text;

	while ((line = next_line(&at))) {
		struct fleet_qstack q = { 0 };
		char *f[4];

		if (tsv_split(line, f, 4) != 3 || !parse_u64(f[0], &q.hash) ||
		    !parse_u64(f[1], &q.count) || !parse_u64(f[2], &q.weight)) {
			c->bad_lines++;
			continue;
		}
		if (n >= FLEET_ANSWER_MAX_STACKS) {
			c->stacks_left_out++;
			c->samples_left_out += q.count;
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct fleet_qstack *ns = realloc(st, ncap * sizeof(*st));

			if (!ns) {
				free(st);
				return -ENOMEM;
			}
			st = ns;
			cap = ncap;
		}
		st[n++] = q;
	}
	if (n)
		qsort(st, n, sizeof(*st), by_hash);
	*out = st;
	*out_n = n;
	return 0;
}

int fleet_answer__read_frames(char *text, struct fleet_qstack *st, size_t n,
			      struct fleet_answer_counts *c)
{
	char *line, *at = text;

	while ((line = next_line(&at))) {
		struct fleet_qstack key = { 0 }, *q;
		char *f[4];

		if (tsv_split(line, f, 4) != 3 || !parse_u64(f[0], &key.hash)) {
			c->bad_lines++;
			continue;
		}
		q = n ? bsearch(&key, st, n, sizeof(*st), by_hash) : NULL;
		if (!q || q->found)
			continue;
		q->found = true;
		if (tsv_parse_array(f[1], FLEET_ANSWER_MAX_FRAMES, &q->syms, &q->nr,
				    &c->frames_left_out) ||
		    tsv_parse_array(f[2], FLEET_ANSWER_MAX_FRAMES, &q->dsos, &q->nr_dsos,
				    &c->frames_left_out))
			return -ENOMEM;
	}
	return 0;
}

int fleet_answer__mark_unverified(struct fleet_qstack *st, size_t n,
				  struct fleet_answer_counts *c)
{
	for (size_t i = 0; i < n; i++) {
		if (st[i].found)
			continue;
		st[i].syms = calloc(1, sizeof(char *));
		st[i].dsos = calloc(1, sizeof(char *));
		if (!st[i].syms || !st[i].dsos)
			return -ENOMEM;
		st[i].syms[0] = strdup("[unverified]");
		st[i].nr = st[i].syms[0] ? 1 : 0;
		st[i].dsos[0] = strdup("");
		st[i].nr_dsos = st[i].dsos[0] ? 1 : 0;
		if (!st[i].nr || !st[i].nr_dsos)
			return -ENOMEM;
		st[i].found = true;
		c->unverified_stacks++;
		c->unverified_samples += st[i].count;
	}
	return 0;
}

void fleet_answer__free(struct fleet_qstack *st, size_t n)
{
	for (size_t i = 0; st && i < n; i++) {
		for (int j = 0; j < st[i].nr; j++)
			free(st[i].syms[j]);
		for (int j = 0; j < st[i].nr_dsos; j++)
			free(st[i].dsos[j]);
		free(st[i].syms);
		free(st[i].dsos);
	}
	free(st);
}
