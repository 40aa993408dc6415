/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store's answers to query, parsed (TabSeparated, as ClickHouse
 * writes them): the samples summed per stack key, then the frames of the
 * keys whose stored content matches them.  The text is whatever the
 * store holds (any writer's names), up to the 64 MiB of an answer
 * (http.h): a malformed line is skipped and counted, and what is kept is
 * capped (stacks, frames per stack) with what was left out counted.
 * Fuzzed by tests/fuzz/fuzz_ch_answer.c.
 */
#ifndef PRECORD_FLEET_ANSWER_H
#define PRECORD_FLEET_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Stacks kept from one answer (about 100 bytes each with their frames'
 * pointers), frames kept per stack (precord records up to 127 + 127). */
#define FLEET_ANSWER_MAX_STACKS	(2u << 20)
#define FLEET_ANSWER_MAX_FRAMES	1024

struct fleet_qstack {
	uint64_t hash, count, weight;
	char **syms, **dsos;	/* leaf first */
	int nr, nr_dsos;	/* the same unless the store's row was not */
	bool found;		/* a stored row whose content is its key */
};

struct fleet_answer_counts {
	uint64_t bad_lines;		/* not HASH SUM SUM, or not HASH ARRAY ARRAY */
	uint64_t stacks_left_out;	/* past FLEET_ANSWER_MAX_STACKS */
	uint64_t samples_left_out;	/* their counts */
	uint64_t frames_left_out;	/* past FLEET_ANSWER_MAX_FRAMES */
	uint64_t unverified_stacks, unverified_samples;	/* no matching row */
};

/* "HASH\tCOUNT\tWEIGHT\n" lines (text is changed in place) → *st, sorted
 * by hash; 0 or -ENOMEM. */
int fleet_answer__read_sums(char *text, struct fleet_qstack **st, size_t *n,
			    struct fleet_answer_counts *c);
/* "HASH\t['sym',...]\t['dso',...]\n" lines: frames for the stacks of
 * those hashes (the first row of each); 0 or -ENOMEM. */
int fleet_answer__read_frames(char *text, struct fleet_qstack *st, size_t n,
			      struct fleet_answer_counts *c);
/* Stacks no row was found for become the one frame "[unverified]". */
int fleet_answer__mark_unverified(struct fleet_qstack *st, size_t n,
				  struct fleet_answer_counts *c);
void fleet_answer__free(struct fleet_qstack *st, size_t n);

#endif
