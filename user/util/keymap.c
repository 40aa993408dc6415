// SPDX-License-Identifier: GPL-2.0
#include "util/keymap.h"

#include <stdlib.h>
#include <string.h>

struct keymap_slot {
	uint64_t hash;
	void *key;		/* NULL = empty */
	size_t len;
	uint64_t value;
};

/* Keys are bytes read whole: 8 at a time (FNV-style multiply per word,
 * the tail zero-padded with the length mixed in), then a final mix. */
static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL ^ (len * 0x9e3779b97f4a7c15ULL), w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 31;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, p + i, len - i);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

#define CHUNK_BYTES	4096
#define ALONE_BYTES	1024	/* a key longer than this gets its own chunk */

struct keymap_chunk {
	struct keymap_chunk *next;
	size_t used, size;
	unsigned char bytes[];
};

/* A copy of KEY in the newest chunk (a new one when it is full). */
static void *copy_key(struct keymap *m, const void *key, size_t len)
{
	struct keymap_chunk *c = m->chunks;
	void *p;

	if (!c || c->size - c->used < len) {
		size_t size = len > ALONE_BYTES ? len : CHUNK_BYTES;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		if (len > ALONE_BYTES && m->chunks) {
			/* behind the newest: its free room stays in use */
			c->next = m->chunks->next;
			m->chunks->next = c;
		} else {
			c->next = m->chunks;
			m->chunks = c;
		}
	}
	p = c->bytes + c->used;
	if (len)
		memcpy(p, key, len);
	c->used += len;
	return p;
}

static struct keymap_slot *find(const struct keymap *m, const void *key, size_t len, uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct keymap_slot *s = &m->slots[i];

		if (!s->key || (s->hash == h && s->len == len && !memcmp(s->key, key, len)))
			return s;
	}
}

uint64_t *keymap_get(const struct keymap *m, const void *key, size_t len)
{
	struct keymap_slot *s;

	if (!m->cap)
		return NULL;
	s = find(m, key, len, hash_bytes(key, len));
	return s->key ? &s->value : NULL;
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
		if (old.slots[i].key)
			*find(m, old.slots[i].key, old.slots[i].len, old.slots[i].hash) = old.slots[i];
	free(old.slots);
	return 0;
}

uint64_t *keymap_put(struct keymap *m, const void *key, size_t len, bool *added)
{
	uint64_t h = hash_bytes(key, len);
	struct keymap_slot *s;

	if (added)
		*added = false;
	if ((m->nr + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	s = find(m, key, len, h);
	if (s->key)
		return &s->value;
	/* an empty key's copy is a non-NULL pointer (NULL = empty slot) */
	s->key = copy_key(m, key, len);
	if (!s->key)
		return NULL;
	s->len = len;
	s->hash = h;
	s->value = 0;
	m->nr++;
	if (added)
		*added = true;
	return &s->value;
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
