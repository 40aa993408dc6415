/* SPDX-License-Identifier: GPL-2.0 */
/*
 * String set for ELF string tables and DWARF file tables: each distinct
 * string is stored once and gets an index (in insertion order) and an
 * offset into the table bytes, which start with a NUL as ELF requires.
 */
#ifndef PRECORD_JIT_STRSET_H
#define PRECORD_JIT_STRSET_H

#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct strset {
	struct pbuf data;	/* "\0" then NUL-terminated strings */
	__u32 *offs;		/* offset of string i */
	size_t nr, cap;
	__u32 *slots;		/* hash table: string index + 1, 0 = empty */
	size_t nr_slots;
};

int strset_init(struct strset *s);
void strset_free(struct strset *s);
/* Add len bytes of str (need not be NUL-terminated; must not contain NUL).
 * Returns the string's index (existing or new) or -errno. */
long strset_add(struct strset *s, const char *str, size_t len);
static inline __u32 strset_offset(const struct strset *s, __u32 idx)
{
	return s->offs[idx];
}
static inline const char *strset_str(const struct strset *s, __u32 idx)
{
	return (const char *)s->data.data + s->offs[idx];
}

#endif
