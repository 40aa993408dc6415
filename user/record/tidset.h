/* SPDX-License-Identifier: GPL-2.0 */
/* A set of u32 ids (pids/tids): open addressing, grows as needed. */
#ifndef PRECORD_RECORD_TIDSET_H
#define PRECORD_RECORD_TIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct tidset {
	__u32 *keys;		/* 0 = empty (pid 0 is never a target) */
	size_t cap, nr;
};

int tidset_add(struct tidset *s, __u32 id);
void tidset_del(struct tidset *s, __u32 id);
bool tidset_has(const struct tidset *s, __u32 id);
void tidset_free(struct tidset *s);

#endif
