// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the parsers of the store's answers that query reads
 * (user/fleet/answer.c, tsv.c): the input is two answers separated by
 * the first NUL byte, the samples summed per stack ("HASH\tCOUNT\tWEIGHT"
 * lines) and the stacks' frames ("HASH\t['sym',...]\t['dso',...]").
 * Asserted: the stacks kept are sorted and within FLEET_ANSWER_MAX_STACKS,
 * every stack's frames within FLEET_ANSWER_MAX_FRAMES with no NULL name,
 * every stack found or marked [unverified], and the counts of what was
 * skipped add up (a line is kept or counted, never lost).  The TSV field
 * helpers (tsv_split, tsv_unescape) run on every line as --totals uses
 * them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/answer.h"
#include "fleet/tsv.h"
#include "util/log.h"

static char *copy(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

/* --totals' parsing of each line: HOST\tSAMPLES\tFIRST\tLAST, the host
 * unescaped in place (never longer than it was). */
static void totals_lines(const char *text)
{
	char *t = strdup(text), *save = NULL;

	if (!t)
		return;
	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t before = strlen(line);
		char *f[4];
		int n = tsv_split(line, f, 4);

		if (n < 1 || n > 4)
			abort();
		tsv_unescape(f[0]);
		if (strlen(f[0]) > before)
			abort();
	}
	free(t);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; n++) {
		const char *nl = strchr(s, '\n');

		if (!nl)
			return n + 1;
		s = nl + 1;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t na = nul ? (size_t)(nul - data) : size;
	char *sums = copy(data, na);
	char *frames = copy(nul ? nul + 1 : data + size, nul ? size - na - 1 : 0);
	struct fleet_answer_counts c = { 0 };
	struct fleet_qstack *st = NULL;
	size_t n = 0, lines;

	log_verbosity = -1;
	if (!sums || !frames)
		goto out;
	totals_lines(sums);
	lines = count_lines(sums);
	if (fleet_answer__read_sums(sums, &st, &n, &c))
		goto out;
	if (n > FLEET_ANSWER_MAX_STACKS || n + c.bad_lines + c.stacks_left_out != lines)
		abort();
	for (size_t i = 1; i < n; i++)
		if (st[i - 1].hash > st[i].hash)
			abort();
	if (fleet_answer__read_frames(frames, st, n, &c) ||
	    fleet_answer__mark_unverified(st, n, &c))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].found || st[i].nr > FLEET_ANSWER_MAX_FRAMES ||
		    st[i].nr_dsos > FLEET_ANSWER_MAX_FRAMES || (st[i].nr && !st[i].syms) ||
		    (st[i].nr_dsos && !st[i].dsos))
			abort();
		for (int j = 0; j < st[i].nr; j++)
			if (!st[i].syms[j])
				abort();
		for (int j = 0; j < st[i].nr_dsos; j++)
			if (!st[i].dsos[j])
				abort();
	}
out:
	fleet_answer__free(st, n);
	free(sums);
	free(frames);
	return 0;
}
