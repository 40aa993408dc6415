/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SHA-256 (FIPS 180-4), written for the fleet store's stack keys
 * (docs/fleet.md): content addresses a writer cannot steer.  Incremental:
 * init, any number of updates, final.  Checked against the FIPS test
 * vectors in tests/unit/test_fleet.c.
 */
#ifndef PRECORD_UTIL_SHA256_H
#define PRECORD_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_BYTES	32

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;		/* message length so far */
	unsigned char block[64];
	size_t used;		/* bytes of block filled */
};

void sha256__init(struct sha256 *s);
void sha256__update(struct sha256 *s, const void *data, size_t n);
void sha256__final(struct sha256 *s, unsigned char out[SHA256_DIGEST_BYTES]);
/* The portable compression even where the CPU has SHA instructions
 * (x86-64's SHA extensions are used when present): for tests. */
void sha256__use_portable(int yes);

#endif
