// SPDX-License-Identifier: GPL-2.0
#include "record/tidset.h"

#include <errno.h>
#include <stdlib.h>

static size_t slot(const struct tidset *s, __u32 id)
{
	size_t i = (id * 2654435761u) & (s->cap - 1);

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
