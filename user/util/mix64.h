/* SPDX-License-Identifier: GPL-2.0 */
/* A 64-bit avalanche finalizer (MurmurHash3's fmix64 constants): every
 * input bit flips each output bit with probability ~1/2.  Written once for
 * the hashes that need one (JIT code identity, the fleet's stack keys). */
#ifndef PRECORD_UTIL_MIX64_H
#define PRECORD_UTIL_MIX64_H

#include <stdint.h>

static inline uint64_t mix64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ULL;
	v ^= v >> 33;
	return v;
}

#endif
