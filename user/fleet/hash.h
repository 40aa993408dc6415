/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store's stable 64-bit hash: stack hashes and file identities must be
 * the same on every host, build and run (bytes read little-endian; the
 * mixing is murmur3's finalizer).  Not cryptographic: a file's identity is
 * its hash and its size, scoped to its host.
 */
#ifndef PRECORD_FLEET_HASH_H
#define PRECORD_FLEET_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t fleet_hash64(const void *p, size_t n, uint64_t seed);

#endif
