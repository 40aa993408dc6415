/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian loads and stores at unaligned places (the .mlpd and XRay
 * formats, the JIT code hash), on a host of either byte order: a memcpy
 * and a byte swap only where the host is big-endian, which compilers turn
 * into one load or store.
 */
#ifndef PRECORD_UTIL_LE_H
#define PRECORD_UTIL_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t le16_load(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t le32_load(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t le64_load(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void le16_store(void *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void le32_store(void *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void le64_store(void *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

#endif
