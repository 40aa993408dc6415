/* SPDX-License-Identifier: GPL-2.0 */
/* A clock's time in nanoseconds (clock_gettime). */
#ifndef PRECORD_UTIL_CLOCK_H
#define PRECORD_UTIL_CLOCK_H

#include <time.h>
#include <linux/types.h>

static inline __u64 clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

#endif
