/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 160-bit content hash for the build ids of JIT images: three independent
 * 64-bit multiply-rotate lanes over 8-byte words, each finished with a
 * 64-bit avalanche mix.  Not cryptographic; it only needs to tell apart
 * images with different content, and to give equal images equal ids.
 */
#ifndef PRECORD_JIT_JITHASH_H
#define PRECORD_JIT_JITHASH_H

#include <stddef.h>
#include <linux/types.h>

#define JITHASH_SIZE	20

struct jithash {
	__u64 lane[3];
	__u64 len;
	__u8 tail[8];
	unsigned int tail_len;
};

void jithash_init(struct jithash *h);
void jithash_update(struct jithash *h, const void *data, size_t n);
void jithash_update_u64(struct jithash *h, __u64 v);
void jithash_final(struct jithash *h, __u8 out[JITHASH_SIZE]);

#endif
