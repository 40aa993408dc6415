/* SPDX-License-Identifier: GPL-2.0 */
/* ClickHouse's TabSeparated answers: fields, escapes, Array(String). */
#ifndef PRECORD_FLEET_TSV_H
#define PRECORD_FLEET_TSV_H

/* Split line at tabs in place into at most n fields; returns the count. */
int tsv_split(char *line, char **fields, int n);
/* Undo TabSeparated escapes (\t \n \\ \' ...) in place. */
void tsv_unescape(char *s);
/*
 * A TabSeparated Array(String) field ['a','b\'c'] → *out (nr strings, each
 * malloc'ed).  Malformed input gives the strings up to the fault.  0 or
 * -ENOMEM.
 */
int tsv_parse_array(const char *s, char ***out, int *nr);

#endif
