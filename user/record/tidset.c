// SPDX-License-Identifier: GPL-2.0
#include "record/tidset.h"

#include <errno.h>
#include <stdlib.h>

static size_t home(const struct tidset *s, __u32 id)
{
	return (id * 2654435761u) & (s->cap - 1);
}

static size_t slot(const struct tidset *s, __u32 id)
{
	size_t i = home(s, id);

	while (s->keys[i] && s->keys[i] != id)
		i = (i + 1) & (s->cap - 1);
	return i;
}

int tidset_add(struct tidset *s, __u32 id)
{
	if (!id)
		return -EINVAL;
	if ((s->nr + 1) * 2 > s->cap) {
		struct tidset n = { .cap = s->cap ? s->cap * 2 : 64 };

		n.keys = calloc(n.cap, sizeof(*n.keys));
		if (!n.keys)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i])
				n.keys[slot(&n, s->keys[i])] = s->keys[i];
		n.nr = s->nr;
		free(s->keys);
		*s = n;
	}
	size_t i = slot(s, id);

	if (!s->keys[i]) {
		s->keys[i] = id;
		s->nr++;
	}
	return 0;
}

/*
 * Linear probing without tombstones: after emptying a slot, the keys of
 * the run that follows move back into it when their home slot is not
 * between the hole and where they sit.
 */
void tidset_del(struct tidset *s, __u32 id)
{
	size_t mask = s->cap - 1, hole, i;

	if (!tidset_has(s, id))
		return;
	hole = slot(s, id);
	s->keys[hole] = 0;
	s->nr--;
	for (i = (hole + 1) & mask; s->keys[i]; i = (i + 1) & mask) {
		size_t h = home(s, s->keys[i]);

		/* the key at i may fill the hole unless its home is in (hole, i] */
		if (((i - h) & mask) >= ((i - hole) & mask)) {
			s->keys[hole] = s->keys[i];
			s->keys[i] = 0;
			hole = i;
		}
	}
}

bool tidset_has(const struct tidset *s, __u32 id)
{
	return s->cap && id && s->keys[slot(s, id)] == id;
}

void tidset_free(struct tidset *s)
{
	free(s->keys);
	s->keys = NULL;
	s->cap = s->nr = 0;
}
