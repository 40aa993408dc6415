/* SPDX-License-Identifier: GPL-2.0 */
/* ClickHouse's TabSeparated answers: fields, escapes, Array(String). */
#ifndef PRECORD_FLEET_TSV_H
#define PRECORD_FLEET_TSV_H

#include <stdint.h>

/* Split line at tabs in place into at most n fields; returns the count. */
int tsv_split(char *line, char **fields, int n);
/* Undo TabSeparated escapes (\t \n \\ \' ...) in place. */
void tsv_unescape(char *s);
/*
 * A TabSeparated Array(String) field ['a','b\'c'] → *out (nr strings, each
 * malloc'ed), at most max of them: the others are added to *left_out.
 * Malformed input gives the strings up to the fault.  0 or -ENOMEM (what
 * was parsed stays in *out, *nr).
 */
int tsv_parse_array(const char *s, int max, char ***out, int *nr, uint64_t *left_out);

#endif
