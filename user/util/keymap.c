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

static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a, then a final mix */

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
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
	size_t ncap = m->cap ? m->cap * 2 : 64;
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
	s->key = malloc(len ? len : 1);
	if (!s->key)
		return NULL;
	memcpy(s->key, key, len);
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
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->nr = 0;
}
