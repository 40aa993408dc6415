// SPDX-License-Identifier: GPL-2.0
/* Per-read budgets of the JIT readers (see budget.h). */
#include "jit/budget.h"

#include <time.h>

__u64 jit_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

bool jit_budget__over(struct jit_budget *b)
{
	if ((b->deadline_ns && jit_now_ns() >= b->deadline_ns) ||
	    (b->stop && b->stop(b->stop_ctx)))
		b->cut = true;
	return b->cut;
}

void jit_budget__take(struct jit_budget *b, __u64 n)
{
	b->bytes = n < b->bytes ? b->bytes - n : 0;
}
