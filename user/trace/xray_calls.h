/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The call rebuilder: per-thread queues of decoded trace events, drained
 * in time order into calls (entries, returns with their durations).
 */
#ifndef PRECORD_TRACE_XRAY_CALLS_H
#define PRECORD_TRACE_XRAY_CALLS_H

#include "trace/xray.h"

enum xray_call_kind {
	XRAY_CALL_ENTRY,	/* ev: the entry */
	XRAY_CALL_RETURN,	/* ev: the exit; entry: its entry; duration set */
	XRAY_CALL_ORPHAN,	/* ev: an exit with no entry (call began before tracing) */
	XRAY_CALL_UNWOUND,	/* entry: a call left without an exit record, found
				 * when ev (an outer call's exit) returned past it */
};

struct xray_frame {
	__u64 time;
	__u64 ip;		/* whatever the caller put in (see xray_calls__set_ip) */
	__u32 func_id;
	__u32 cpu;
};

struct xray_call {
	enum xray_call_kind kind;
	const struct xray_event *ev;
	const struct xray_frame *entry;	/* RETURN, UNWOUND */
	__u64 duration;			/* RETURN: ev->time - entry->time */
	__u32 depth;			/* frames below this call */
};

/* Return 0, or < 0 to stop the drain, which returns it (the event that
 * was being handled counts as processed). */
typedef int (*xray_call_fn)(void *ctx, const struct xray_call *c);

struct xray_calls_stats {
	__u64 events;		/* pushed */
	__u64 entries, returns;
	__u64 orphans;		/* exits with no entry */
	__u64 unwound;		/* entries whose exit never came */
	__u64 late;		/* events older than one already processed */
	__u64 too_deep;		/* entries not pushed: stack limit */
};

struct xray_calls;

struct xray_calls *xray_calls__new(void);	/* NULL + errno */
void xray_calls__free(struct xray_calls *c);	/* NULL-safe */
/* Queue one decoded event for its thread.  0 or -ENOMEM. */
int xray_calls__push(struct xray_calls *c, const struct xray_event *ev);
/*
 * Process, per thread and in time order, every queued event with
 * time <= upto (~0ULL: all).  fn may set the ip of an ENTRY's frame
 * through xray_calls__set_ip() while handling it.
 */
int xray_calls__drain(struct xray_calls *c, __u64 upto, xray_call_fn fn, void *ctx);
void xray_calls__set_ip(struct xray_calls *c, __u64 ip);
/* Entries still open (their exit not seen) after the last drain. */
__u64 xray_calls__open_frames(const struct xray_calls *c);
const struct xray_calls_stats *xray_calls__stats(const struct xray_calls *c);

#endif
