/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hash map from byte-string keys (copied in) to u64 values: open
 * addressing, grows at 3/4 full.  For interning (names, build-ids, pids,
 * address pairs) where each key is looked up many times.  The copies of
 * the keys are packed into chunks (the first of 256 bytes, each next
 * twice the last up to 4 KiB, a key over 1 KiB alone; each copy 8-byte
 * aligned), freed together by keymap_free.
 */
#ifndef PRECORD_UTIL_KEYMAP_H
#define PRECORD_UTIL_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct keymap_slot;
struct keymap_chunk;

struct keymap {
	struct keymap_slot *slots;
	size_t cap, nr;
	struct keymap_chunk *chunks;	/* the keys' bytes, newest first */
};

/* The value of key, or NULL when absent (valid until the next put). */
uint64_t *keymap_get(const struct keymap *m, const void *key, size_t len);
/* The value slot of key, added with value 0 (and *added = true) when
 * absent; NULL on allocation failure.  Valid until the next put. */
uint64_t *keymap_put(struct keymap *m, const void *key, size_t len, bool *added);
/* keymap_put, and *copy = the map's copy of key: 8-byte aligned, valid
 * (and not to be written) until keymap_free, so a caller can keep it
 * instead of a copy of its own (a string put with its NUL, an array of
 * u64). */
uint64_t *keymap_put_copy(struct keymap *m, const void *key, size_t len, bool *added,
			  const void **copy);
void keymap_free(struct keymap *m);

static inline uint64_t *keymap_get_u64(const struct keymap *m, uint64_t key)
{
	return keymap_get(m, &key, sizeof(key));
}

static inline uint64_t *keymap_put_u64(struct keymap *m, uint64_t key, bool *added)
{
	return keymap_put(m, &key, sizeof(key), added);
}

#endif
