// SPDX-License-Identifier: GPL-2.0
#include "jit/strset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TABLE	0xF0000000u	/* offsets are u32 */

static __u64 str_hash(const char *p, size_t n)
{
	__u64 h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int strset_init(struct strset *s)
{
	memset(s, 0, sizeof(*s));
	return pbuf_put_u8(&s->data, 0);
}

void strset_free(struct strset *s)
{
	pbuf_free(&s->data);
	free(s->offs);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

static int strset_rehash(struct strset *s)
{
	size_t n = s->nr_slots ? s->nr_slots * 2 : 1024, i;
	__u32 *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < s->nr; i++) {
		const char *str = strset_str(s, (__u32)i);
		size_t j = str_hash(str, strlen(str)) & (n - 1);

		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = (__u32)i + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->nr_slots = n;
	return 0;
}

long strset_add(struct strset *s, const char *str, size_t len)
{
	size_t j;
	int err;

	if ((s->nr + 1) * 2 > s->nr_slots) {
		err = strset_rehash(s);
		if (err)
			return err;
	}
	j = str_hash(str, len) & (s->nr_slots - 1);
	for (; s->slots[j]; j = (j + 1) & (s->nr_slots - 1)) {
		__u32 idx = s->slots[j] - 1;
		const char *have = strset_str(s, idx);

		if (!strncmp(have, str, len) && have[len] == '\0')
			return idx;
	}
	if (s->data.len + len + 1 > MAX_TABLE)
		return -E2BIG;
	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		__u32 *offs = realloc(s->offs, cap * sizeof(*offs));

		if (!offs)
			return -ENOMEM;
		s->offs = offs;
		s->cap = cap;
	}
	s->offs[s->nr] = (__u32)s->data.len;
	if (pbuf_put(&s->data, str, len) || pbuf_put_u8(&s->data, 0))
		return -ENOMEM;
	s->slots[j] = (__u32)s->nr + 1;
	return (long)s->nr++;
}
