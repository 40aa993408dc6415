// SPDX-License-Identifier: GPL-2.0
#include "util/keymap.h"

#include <stdlib.h>
#include <string.h>

struct keymap_slot {
	uint64_t hash;		/* 0 = empty (hash_bytes never gives 0) */
	void *key;
	size_t len;
	uint64_t value;
};

/* 8 and 4 bytes at p, of any alignment. */
static inline uint64_t word_at(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

static inline uint64_t half_at(const unsigned char *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x100000001b3ULL;
	return h ^ (h >> 31);
}

/*
 * Keys are bytes read whole: 8 at a time (FNV-style multiply per word)
 * with the length mixed in, the last word read as the key's last 8 bytes
 * (overlapping the one before), a key under 8 bytes as two 4-byte or
 * three 1-byte reads; then a final mix.  Fixed-size reads only: under
 * the fuzzers' build a read of a variable size went through a buffer on
 * the stack, with its redzones poisoned and cleared per call.  The top
 * bit is always set: 0 marks an empty slot.
 */
static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL ^ (len * 0x9e3779b97f4a7c15ULL);

	if (len >= 8) {
		for (size_t i = 8; i < len; i += 8, p += 8)
			h = mix(h, word_at(p));
		h = mix(h, word_at((const unsigned char *)key + len - 8));
	} else if (len >= 4) {
		h = mix(h, half_at(p) | half_at(p + len - 4) << 32);
	} else if (len) {
		h = mix(h, p[0] | (uint64_t)p[len / 2] << 8 | (uint64_t)p[len - 1] << 16);
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (h ^ (h >> 32)) | 1ULL << 63;
}

#define FIRST_CHUNK_BYTES 256	/* then doubling: a map of a few keys stays small */
#define CHUNK_BYTES	4096
#define ALONE_BYTES	1024	/* a key longer than this gets its own chunk */

struct keymap_chunk {
	struct keymap_chunk *next;
	size_t used, size;
	uint64_t bytes[];		/* 8-byte aligned copies */
};

/* A copy of KEY in the newest chunk (a new one when it is full), at a
 * multiple of 8 bytes from the chunk's start. */
static void *copy_key(struct keymap *m, const void *key, size_t len)
{
	struct keymap_chunk *c = m->chunks;
	size_t room = (len + 7) & ~(size_t)7;
	void *p;

	if (!c || c->size - c->used < room) {
		size_t size = !c ? FIRST_CHUNK_BYTES : c->size < CHUNK_BYTES ? 2 * c->size : CHUNK_BYTES;

		if (room > ALONE_BYTES)
			size = room;
		else if (size < room)
			size = CHUNK_BYTES;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		if (room > ALONE_BYTES && m->chunks) {
			/* behind the newest: its free room stays in use */
			c->next = m->chunks->next;
			m->chunks->next = c;
		} else {
			c->next = m->chunks;
			m->chunks = c;
		}
	}
	p = (unsigned char *)c->bytes + c->used;
	if (len)
		memcpy(p, key, len);
	c->used += room;
	return p;
}

/* The slot of key (hash h), or the empty one where it would go.  A slot
 * is read once per probe into a local: under the fuzzers' build each
 * field read through the pointer was a checked access of its own. */
static struct keymap_slot *find(const struct keymap *m, const void *key, size_t len, uint64_t h)
{
	struct keymap_slot *slots = m->slots;
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct keymap_slot s = slots[i];

		if (!s.hash || (s.hash == h && s.len == len && !memcmp(s.key, key, len)))
			return &slots[i];
	}
}

uint64_t *keymap_get(const struct keymap *m, const void *key, size_t len)
{
	struct keymap_slot *s;

	if (!m->cap)
		return NULL;
	s = find(m, key, len, hash_bytes(key, len));
	return s->hash ? &s->value : NULL;
}

static int grow(struct keymap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16;
	struct keymap old = *m;

	m->slots = calloc(ncap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old.slots;
		return -1;
	}
	m->cap = ncap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].hash)
			*find(m, old.slots[i].key, old.slots[i].len, old.slots[i].hash) = old.slots[i];
	free(old.slots);
	return 0;
}

uint64_t *keymap_put_copy(struct keymap *m, const void *key, size_t len, bool *added,
			  const void **copy)
{
	uint64_t h = hash_bytes(key, len);
	struct keymap_slot *s;

	*added = false;
	if ((m->nr + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	s = find(m, key, len, h);
	if (!s->hash) {
		void *c = copy_key(m, key, len);

		if (!c)
			return NULL;
		*s = (struct keymap_slot){ .hash = h, .key = c, .len = len };
		m->nr++;
		*added = true;
	}
	if (copy)
		*copy = s->key;
	return &s->value;
}

uint64_t *keymap_put(struct keymap *m, const void *key, size_t len, bool *added)
{
	bool dummy;

	return keymap_put_copy(m, key, len, added ? added : &dummy, NULL);
}

void keymap_free(struct keymap *m)
{
	while (m->chunks) {
		struct keymap_chunk *c = m->chunks;

		m->chunks = c->next;
		free(c);
	}
	free(m->slots);
	m->slots = NULL;
	m->cap = m->nr = 0;
}
