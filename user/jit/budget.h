/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one read of a JIT source may cost.  The target writes its jitdump,
 * perf map or .mlpd and can make it as large as it likes (a sparse file
 * costs it nothing), so every reader takes a budget: bytes it may consume,
 * a CLOCK_MONOTONIC deadline and a stop request, checked between chunks.
 * A reader that stops early sets cut and resumes there on the next call.
 */
#ifndef PRECORD_JIT_BUDGET_H
#define PRECORD_JIT_BUDGET_H

#include <stdbool.h>
#include <linux/types.h>

struct jit_budget {
	__u64 bytes;			/* bytes the reader may still consume */
	__u64 deadline_ns;		/* CLOCK_MONOTONIC; 0: no time limit */
	bool (*stop)(void *ctx);	/* NULL: never asked to stop */
	void *stop_ctx;
	bool cut;			/* out: stopped before the end of the input */
};

/* A budget with no limits (tests, tools). */
#define JIT_BUDGET_NONE	((struct jit_budget){ .bytes = ~0ULL })

__u64 jit_now_ns(void);			/* CLOCK_MONOTONIC */

/* The deadline passed or a stop was asked for: the reader must return
 * (and sets cut). */
bool jit_budget__over(struct jit_budget *b);

/* Count n bytes consumed (never below zero). */
void jit_budget__take(struct jit_budget *b, __u64 n);

#endif
