/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store's hashes.
 *
 * fleet_hash64: a fast 64-bit hash (bytes read little-endian, murmur3's
 * finalizer), stable across hosts, builds and runs: a file's identity (its
 * hash and size, scoped to its host) and, with a random seed, push's
 * in-process tables.  Not cryptographic: anyone can compute inputs that
 * collide, so nothing another writer supplies may be identified by it.
 *
 * The stack key: the first 8 bytes (read little-endian) of the SHA-256 of
 * a stack's content, its three arrays (symbols, DSOs, build-ids, leaf
 * first) each written as COUNT '[' then LEN ':' BYTES per string, then
 * ']', after the tag "precord stack 1;".  The encoding is unambiguous and
 * the same as FLEET_STACK_KEY_SQL computes in ClickHouse from a stacks
 * row, so a query keeps only the rows whose content is their key's
 * (docs/fleet.md, "Whose frames").
 */
#ifndef PRECORD_FLEET_HASH_H
#define PRECORD_FLEET_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "util/sha256.h"

uint64_t fleet_hash64(const void *p, size_t n, uint64_t seed);

/* The stack key of a stacks row's columns, in ClickHouse 18.16's SQL. */
#define FLEET_STACK_KEY_ARRAY_SQL(a)					\
	"concat(toString(length(" a ")), '[', arrayStringConcat(arrayMap(x -> " \
	"concat(toString(length(x)), ':', x), " a ")), ']')"
#define FLEET_STACK_KEY_SQL						\
	"reinterpretAsUInt64(substring(SHA256(concat('precord stack 1;', " \
	FLEET_STACK_KEY_ARRAY_SQL("symbols") ", "			\
	FLEET_STACK_KEY_ARRAY_SQL("dsos") ", "				\
	FLEET_STACK_KEY_ARRAY_SQL("build_ids") ")), 1, 8))"

/* A stack key computed incrementally: begin, then for each of the three
 * arrays in order (symbols, DSOs, build-ids) array() with its count and
 * string() per element, then end(). */
struct fleet_stack_key {
	struct sha256 sha;
	uint32_t left;		/* strings still due in the current array */
};

void fleet_stack_key__begin(struct fleet_stack_key *k);
void fleet_stack_key__array(struct fleet_stack_key *k, uint32_t count);
void fleet_stack_key__string(struct fleet_stack_key *k, const char *s);
uint64_t fleet_stack_key__end(struct fleet_stack_key *k);

/* The key of nr frames given as three arrays of strings (NULL = ""). */
uint64_t fleet_stack_key(const char *const *syms, const char *const *dsos,
			 const char *const *bids, uint32_t nr);

#endif
