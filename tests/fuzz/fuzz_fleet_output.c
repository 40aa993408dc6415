// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for query's writers (user/fleet/output.c, flamegraph.c,
 * diff.c) given stacks of arbitrary name bytes, as any writer of the
 * store can make them: --top, --folded and the flame graph's SVG, plain
 * and of a --diff, must stay well-formed whatever the names hold.
 * Asserted:
 *
 *   top     valid UTF-8, no control character (C0 but '\n', DEL, C1), at
 *           most N lines, each "PCT%  ..."
 *   folded  exactly one line per stack with frames and samples, its count
 *           last, one ';' between frames, no control character
 *   SVG     valid UTF-8 without the characters XML 1.0 forbids, tags
 *           balanced, attribute values quoted without '<', every '&' an
 *           entity, nothing outside the root element but the prolog
 *   --diff  top: as above, "PCT%  PCT%  CHANGE  ..." with CHANGE the
 *           second share minus the first to the hundredth; folded: the
 *           names as above, "... COUNT_A COUNT_B" lines, no two alike,
 *           the columns summing to each side's samples; SVG as above
 *
 * Input: byte 0 chooses the writer (bits 1-2: top, folded, SVG, diff; one
 * per input, three times the executions of all three), --children (bit 0)
 * and N (bits 3-7; for a diff bits 3-4 choose its top, folded or SVG and
 * N is bits 5-7); then stacks, each a byte of frame count (0..8; for a
 * diff bit 7 is the side, B when set), a count byte, and per frame a
 * symbol and a DSO as a length byte and that many bytes (a NUL ends a
 * name early, as in C).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/asan_interface.h>

#include "fleet/diff.h"
#include "fleet/output.h"
#include "fleet/selection.h"
#include "util/log.h"

#define MAX_STACKS	64

/* The checks below read every byte of ~10 KB of output: without coverage
 * instrumentation (clang's fuzzer build) they cost little next to the
 * code under test, and add no feedback of their own; nor ASan's checks of
 * each byte they read (the output buffer is the harness's own, and read
 * within the length the writer gave). */
#if defined(__clang__)
#define NO_COV __attribute__((no_sanitize("coverage", "address"), noinline))
#else
#define NO_COV
#endif

NO_COV static bool same(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

struct in {
	const uint8_t *p, *end;
};

/*
 * The input's stacks, names and frame arrays are cut from one static
 * arena, each block 8-aligned with at least 8 poisoned bytes after it
 * (ASan's granule; no-ops without ASan): a writer's read past a name's
 * NUL or before its first byte is caught as in a block of its own, and
 * the harness's allocations (70 per input, most of ASan's allocator
 * time of a run) are gone.  Worst case: 64 stacks of 8 frames, names
 * of 47 and 23 bytes, arrays of 9 pointers: under 64 KiB.
 */
#define ARENA_SIZE	(96 << 10)
#define GRANULE		8

static _Alignas(16) char arena[ARENA_SIZE];
static size_t arena_used = GRANULE;	/* the first granule poisoned too */

NO_COV static void *take(size_t n)
{
	char *p = arena + arena_used;

	if (arena_used + n + GRANULE > ARENA_SIZE)
		abort();
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	memset(p, 0, n);
	arena_used += (n + GRANULE - 1) / GRANULE * GRANULE + GRANULE;
	return p;
}

NO_COV static void arena_reset(void)
{
	ASAN_POISON_MEMORY_REGION(arena, sizeof(arena));
	arena_used = GRANULE;
}

/* The harness's own reading of the input is not what is fuzzed: no
 * coverage hooks on its comparisons (a tenth of the run's hooks). */
NO_COV static int take_byte(struct in *in)
{
	return in->p < in->end ? *in->p++ : -1;
}

NO_COV static char *take_name(struct in *in, int max)
{
	int len = take_byte(in);
	size_t n, k;
	char *s;

	if (len < 0)
		return NULL;
	n = (size_t)(len % max);
	if (n > (size_t)(in->end - in->p))
		n = (size_t)(in->end - in->p);
	k = strnlen((const char *)in->p, n);	/* a NUL ends a name early */
	s = take(k + 1);
	memcpy(s, in->p, k);
	in->p += n;
	return s;
}

/*
 * The checker's own UTF-8 decoder (an oracle independent of the code it
 * checks, util/printable.c's): the code point at s (at most n bytes) when
 * it is well-formed UTF-8 (no
 * overlong form, surrogate or value past U+10FFFF), with its length in
 * *len; -1 otherwise.
 */
NO_COV static long utf8_at(const unsigned char *s, size_t n, size_t *len)
{
	long cp;
	size_t need;

	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4, cp = s[0] & 0x07;
	else
		return -1;
	if (need > n)
		return -1;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*len = need;
	return cp;
}

/* Valid UTF-8; for a terminal (xml false) no C0 but '\n', no DEL or C1;
 * for XML no C0 but '\t' '\n' '\r', no U+FFFE/U+FFFF. */
NO_COV static void check_text(const char *text, size_t n, bool xml)
{
	const unsigned char *s = (const unsigned char *)text;

	for (size_t i = 0, len; i < n; i += len) {
		long cp;

		if (s[i] >= 0x20 && s[i] < 0x7f) {
			len = 1;
			continue;
		}
		cp = utf8_at(s + i, n - i, &len);

		if (cp < 0)
			abort();
		if (xml ? (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
				  cp == 0xfffe || cp == 0xffff
			: (cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f))
			abort();
	}
}

NO_COV static void check_top(const char *text, size_t n, int top)
{
	int lines = 0;

	check_text(text, n, false);
	for (const char *l = text; l < text + n; lines++) {
		const char *nl = memchr(l, '\n', (size_t)(text + n - l));
		const char *pct;

		if (!nl)
			abort();	/* every line ends */
		pct = memchr(l, '%', (size_t)(nl - l));
		if (!pct || pct[1] != ' ' || pct[2] != ' ' || pct - l < 4 || pct[-3] != '.')
			abort();
		l = nl + 1;
	}
	if (lines > top)
		abort();
}

NO_COV static void check_folded(const char *text, size_t n, const struct fleet_qstack *st, size_t nr)
{
	const char *l = text;

	check_text(text, n, false);
	for (size_t i = 0; i < nr; i++) {
		const char *nl, *sp;
		char want[32];
		int semis = 0;

		if (!st[i].nr || !st[i].count)
			continue;
		nl = memchr(l, '\n', (size_t)(text + n - l));
		if (!nl)
			abort();
		for (const char *c = l; c < nl; c++)
			semis += *c == ';';
		/* the count after the last space; names' spaces stay, so the
		 * last one is the separator */
		sp = l;
		for (const char *c = l; c < nl; c++)
			if (*c == ' ')
				sp = c;
		snprintf(want, sizeof(want), " %llu", (unsigned long long)st[i].count);
		if (semis != st[i].nr - 1 || (size_t)(nl - sp) != strlen(want) ||
		    !same(sp, want, strlen(want)))
			abort();
		l = nl + 1;
	}
	if (l != text + n)
		abort();	/* no line of its own */
}

NO_COV static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == ':' || c == '.';
}

/* An entity at s: &name; or &#digits; or &#xhex; */
NO_COV static size_t entity_len(const char *s, const char *end)
{
	const char *c = s + 1;

	if (c < end && *c == '#') {
		c++;
		if (c < end && *c == 'x')
			c++;
	}
	while (c < end && (name_char(*c)))
		c++;
	return c < end && *c == ';' && c > s + 1 ? (size_t)(c - s + 1) : 0;
}

NO_COV static const char *skip_past(const char *s, const char *end, const char *what)
{
	size_t n = strlen(what);
	const char *at = memmem(s, (size_t)(end - s), what, n);

	if (!at)
		abort();
	return at + n;
}

/* A small XML well-formedness check: enough to catch a name that breaks
 * out of its text node or attribute. */
NO_COV static void check_svg(const char *text, size_t n)
{
	const char *s = text, *end = text + n;
	const char *stack[64];
	size_t stack_len[64];
	int depth = 0, roots = 0;

	check_text(text, n, true);
	while (s < end) {
		if (*s == '&') {
			size_t e = entity_len(s, end);

			if (!e)
				abort();
			s += e;
		} else if (*s != '<') {
			/* text outside the root: white space only */
			if (!depth && *s != '\n' && *s != ' ')
				abort();
			s++;
		} else if (end - s >= 9 && same(s, "<![CDATA[", 9)) {
			if (!depth)
				abort();
			s = skip_past(s + 9, end, "]]>");
		} else if (end - s >= 4 && same(s, "<!--", 4)) {
			s = skip_past(s + 4, end, "-->");
		} else if (end - s >= 2 && s[1] == '?') {
			if (s != text)
				abort();	/* the declaration first only */
			s = skip_past(s + 2, end, "?>");
		} else if (end - s >= 2 && s[1] == '/') {
			const char *name = s + 2, *c = name;

			while (c < end && name_char(*c))
				c++;
			if (!depth || c >= end || *c != '>' || (size_t)(c - name) != stack_len[depth - 1] ||
			    !same(name, stack[depth - 1], stack_len[depth - 1]))
				abort();
			depth--;
			s = c + 1;
		} else {
			const char *name = s + 1, *c = name;
			size_t name_len;

			while (c < end && name_char(*c))
				c++;
			name_len = (size_t)(c - name);
			if (!name_len)
				abort();
			/* attributes: name="value" with no '<' and entities only */
			for (;;) {
				while (c < end && (*c == ' ' || *c == '\n'))
					c++;
				if (c >= end)
					abort();
				if (*c == '>' || *c == '/')
					break;
				while (c < end && name_char(*c))
					c++;
				if (c + 1 >= end || c[0] != '=' || (c[1] != '"' && c[1] != '\''))
					abort();
				{
					char q = c[1];

					for (c += 2; c < end && *c != q; c++) {
						if (*c == '<' || (*c == '&' && !entity_len(c, end)))
							abort();
					}
					if (c >= end)
						abort();
					c++;
				}
			}
			if (*c == '/') {
				if (c + 1 >= end || c[1] != '>')
					abort();
				if (!depth)
					roots++;
				s = c + 2;
			} else {
				if (!depth)
					roots++;
				if (depth == 64)
					abort();
				stack[depth] = name;
				stack_len[depth++] = name_len;
				s = c + 1;
			}
		}
	}
	if (depth || roots != 1)
		abort();
}

/* The next line's end (abort if the text ends without one). */
NO_COV static const char *line_end(const char *l, const char *end)
{
	const char *nl = memchr(l, '\n', (size_t)(end - l));

	if (!nl)
		abort();
	return nl;
}

NO_COV static void check_top_diff(const char *text, size_t n, int top)
{
	int lines = 0;

	check_text(text, n, false);
	for (const char *l = text; l < text + n; lines++) {
		const char *nl = line_end(l, text + n);
		char head[40], *sign;
		double a, b, c;
		int used = 0;

		/* the numbers are ours, in the line's first 27 bytes ("%6.2f%%
		 * %6.2f%%  %+7.2f  "): read from a copy of them, so that the
		 * white space of an empty name cannot carry sscanf into the
		 * next line; CHANGE has its sign */
		if (nl - l < 27)
			abort();
		memcpy(head, l, 27);
		head[27] = 0;
		sign = head + 18;
		while (*sign == ' ')
			sign++;
		if (sscanf(head, "%lf%%  %lf%%  %lf%n", &a, &b, &c, &used) != 3 || used != 25 ||
		    head[25] != ' ' || head[26] != ' ' || (*sign != '+' && *sign != '-') ||
		    a < 0 || a > 100 || b < 0 || b > 100 || (b - a) - c > 0.0101 || c - (b - a) > 0.0101)
			abort();
		l = nl + 1;
	}
	if (lines > top)
		abort();
}

NO_COV static void check_folded_diff(const char *text, size_t n, const struct fleet_diff *d)
{
	uint64_t want[2] = { 0, 0 }, got[2] = { 0, 0 };
	const char *starts[2 * MAX_STACKS];
	size_t lens[2 * MAX_STACKS];
	int lines = 0;

	check_text(text, n, false);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < d->n[side]; i++)
			if (d->st[side][i].nr)
				want[side] += d->st[side][i].count;
	for (const char *l = text; l < text + n; lines++) {
		const char *nl = line_end(l, text + n), *sp[2] = { NULL, NULL };
		unsigned long long v[2];

		/* the last two spaces: the names' own stay before them (a
		 * stack of one empty name is an empty one, as in --folded) */
		for (const char *c = l; c < nl; c++)
			if (*c == ' ')
				sp[0] = sp[1], sp[1] = c;
		if (!sp[0] || lines == 2 * MAX_STACKS ||
		    sscanf(sp[0], " %llu %llu", &v[0], &v[1]) != 2 || !(v[0] + v[1]))
			abort();
		got[0] += v[0];
		got[1] += v[1];
		starts[lines] = l;
		lens[lines] = (size_t)(sp[0] - l);
		for (int k = 0; k < lines; k++)
			if (lens[k] == lens[lines] && same(starts[k], l, lens[k]))
				abort();	/* one line per stack */
		l = nl + 1;
	}
	if (got[0] != want[0] || got[1] != want[1])
		abort();
}

/* The --diff writers: stacks with bit 7 of their frame byte are B's. */
static void run_diff(struct fleet_qstack *st, size_t nr, const bool *side_b, int sub, int top,
		     bool children, const char *title);

/*
 * Outputs go to one static buffer (fmemopen): no allocation per input
 * (fresh pages for every output cost more than the writers).  64 stacks
 * of 8 frames of names under 48 bytes, each byte escaped to at most 6,
 * make well under 1 MiB of SVG; a write past it fails the writer.
 */
static char text[2 << 20];

static FILE *open_text(void)
{
	FILE *f = fmemopen(text, sizeof(text), "w");

	if (!f)
		abort();
	return f;
}

static size_t close_text(FILE *f)
{
	long n = ftell(f);

	if (n < 0 || fclose(f) || (size_t)n >= sizeof(text))
		abort();
	return (size_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, data + size };
	struct fleet_qstack *st;
	bool side_b[MAX_STACKS];
	size_t nr = 0, len;
	char *title = NULL;
	struct flame *f;
	FILE *out;
	int flags = take_byte(&in), top, writer;
	bool children;

	log_verbosity = -1;
	if (flags < 0)
		return 0;
	arena_reset();
	st = take(MAX_STACKS * sizeof(*st));
	children = flags & 1;
	writer = (flags >> 1) & 3;
	top = 1 + (flags >> 3);
	while (nr < MAX_STACKS && in.p < in.end) {
		struct fleet_qstack *q = &st[nr++];
		int frames = take_byte(&in), count = take_byte(&in);

		side_b[nr - 1] = writer == 3 && frames >= 0x80;
		frames = frames < 0 ? 0 : (writer == 3 ? frames & 0x7f : frames) % 9;
		q->count = count < 0 ? 0 : (uint64_t)count;
		q->weight = q->count * 1000;
		q->syms = take(((size_t)frames + 1) * sizeof(char *));
		q->dsos = take(((size_t)frames + 1) * sizeof(char *));
		for (int i = 0; i < frames; i++) {
			char *sym = take_name(&in, 48), *dso = sym ? take_name(&in, 24) : NULL;

			if (!sym || !dso)
				break;
			q->syms[q->nr++] = sym;
			q->dsos[q->nr_dsos++] = dso;
		}
		q->found = true;
	}
	if (nr && st[0].nr)
		title = st[0].syms[0];

	if (writer == 3) {
		run_diff(st, nr, side_b, (flags >> 3) & 3, 1 + (flags >> 5), children, title);
	} else if (writer == 0) {
		out = open_text();
		if (fleet_output__top(out, st, nr, top, children))
			abort();
		len = close_text(out);
		check_top(text, len, top);
	} else if (writer == 1) {
		out = open_text();
		if (fleet_output__folded(out, st, nr))
			abort();
		len = close_text(out);
		check_folded(text, len, st, nr);
	} else {
		f = flame__new();
		if (!f || fleet_output__flame(f, st, nr))
			abort();
		out = open_text();
		if (flame__write_svg(f, out, title))
			abort();
		len = close_text(out);
		flame__free(f);
		check_svg(text, len);
	}
	return 0;
}

static void run_diff(struct fleet_qstack *st, size_t nr, const bool *side_b, int sub, int top,
		     bool children, const char *title)
{
	/* each side's stacks in a copy of their own (the frames shared) */
	struct fleet_qstack *sides[2];
	struct fleet_sel sel[2] = { { .host = title }, { .comm = title } };
	struct fleet_diff d = { { NULL, NULL }, { 0, 0 }, { &sel[0], &sel[1] } };
	char t[512], baseline[512];
	struct flame *f;
	FILE *out;
	size_t len;

	sides[0] = calloc(nr + 1, sizeof(*st));
	sides[1] = calloc(nr + 1, sizeof(*st));
	if (!sides[0] || !sides[1])
		abort();
	for (size_t i = 0; i < nr; i++)
		sides[side_b[i]][d.n[side_b[i]]++] = st[i];
	d.st[0] = sides[0];
	d.st[1] = sides[1];
	if (sub == 1) {
		out = open_text();
		if (fleet_diff__print(out, &d, true, top, children))
			abort();
		len = close_text(out);
		check_folded_diff(text, len, &d);
	} else if (sub == 2) {
		f = flame__new();
		if (!f || fleet_diff__flame(f, &d, t, sizeof(t), baseline, sizeof(baseline)))
			abort();
		out = open_text();
		if (flame__write_svg(f, out, t))
			abort();
		len = close_text(out);
		flame__free(f);
		check_svg(text, len);
	} else {
		out = open_text();
		if (fleet_diff__print(out, &d, false, top, children))
			abort();
		len = close_text(out);
		check_top_diff(text, len, top);
	}
	free(sides[0]);
	free(sides[1]);
}
