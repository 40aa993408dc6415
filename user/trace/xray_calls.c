// SPDX-License-Identifier: GPL-2.0
/*
 * The per-thread call rebuilder: decoded trace events (xray_decode.c) are
 * queued per thread, merged in time order across threads once their flush
 * round completes, and matched into calls (entry, return with duration,
 * orphan exits, entries unwound by an outer return).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "trace/xray_calls.h"
#include "util/array.h"

#define MAX_DEPTH	65536	/* frames kept per thread */
#define MAX_SEARCH	1024	/* frames an exit looks through for its entry */

/*
 * A queued event, compact (32 bytes: events sit here until their flush
 * round completes).  The rarely present parts (arguments, a load bias) go
 * to the thread's extras.
 */
struct queued {
	__u64 time;
	__u32 seq;		/* push order (wraps; compared as a difference) */
	__u32 func_id;
	__u32 pid;
	__u32 extra;		/* index in thread.extra, or NO_EXTRA */
	__u16 cpu;
	__u8 action;
	__u8 nr_args;
	__u8 has_bias;
	__u8 bias_slot;
};

#define NO_EXTRA	UINT32_MAX

struct extra {
	__u64 bias;
	__u64 args[PREC_TRACE_MAX_ARGS];
};

_Static_assert(sizeof(struct queued) == 32, "struct queued is meant to stay small");

struct thread {
	__u32 tid;
	bool used;
	bool sorted;
	bool done_any;
	__u64 done_time;	/* time of the last processed event */
	struct queued *q;	/* events q[qh..nq) are queued */
	size_t qh, nq, q_cap;
	struct extra *extra;	/* emptied when none is referenced, compacted
				 * when the dead outnumber the live */
	size_t nx, x_cap, x_live;
	struct xray_frame *stack;
	size_t depth, s_cap;
	size_t head, end;	/* during a drain: next event, end of the drainable */
};

struct xray_calls {
	struct thread *tab;
	size_t cap, used;
	__u64 seq;
	struct xray_frame *cur;	/* frame of the ENTRY being delivered */
	struct thread *last;	/* the thread of the last push (NULL after a regrow) */
	struct thread **heap;	/* drain's merge */
	size_t heap_cap;
	struct xray_calls_stats st;
};

struct xray_calls *xray_calls__new(void)
{
	struct xray_calls *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cap = 64;
	c->tab = calloc(c->cap, sizeof(*c->tab));
	if (!c->tab) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void xray_calls__free(struct xray_calls *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->cap; i++) {
		free(c->tab[i].q);
		free(c->tab[i].extra);
		free(c->tab[i].stack);
	}
	free(c->tab);
	free(c->heap);
	free(c);
}

static size_t tid_hash(__u32 tid, size_t cap)
{
	return ((size_t)tid * 2654435761u) & (cap - 1);
}

static struct thread *slot_of(struct thread *tab, size_t cap, __u32 tid)
{
	size_t i = tid_hash(tid, cap);

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int grow_table(struct xray_calls *c)
{
	size_t ncap = c->cap * 2, i;
	struct thread *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < c->cap; i++)
		if (c->tab[i].used)
			*slot_of(nt, ncap, c->tab[i].tid) = c->tab[i];
	free(c->tab);
	c->tab = nt;
	c->cap = ncap;
	c->last = NULL;
	return 0;
}

static struct thread *get_thread(struct xray_calls *c, __u32 tid)
{
	struct thread *t = c->last;

	if (t && t->tid == tid)		/* a block holds runs of one thread */
		return t;
	if ((c->used + 1) * 2 > c->cap && grow_table(c))
		return NULL;
	t = slot_of(c->tab, c->cap, tid);
	if (!t->used) {
		t->used = true;
		t->tid = tid;
		t->sorted = true;
		c->used++;
	}
	c->last = t;
	return t;
}

/* Move the extras still referenced to the front of the array. */
static void compact_extras(struct thread *t)
{
	size_t i, n = 0;

	for (i = t->qh; i < t->nq; i++) {
		struct queued *q = &t->q[i];

		if (q->extra == NO_EXTRA)
			continue;
		if (q->extra != n)
			t->extra[n] = t->extra[q->extra];
		q->extra = (__u32)n++;
	}
	t->nx = n;
	t->x_live = n;
}

int xray_calls__push(struct xray_calls *c, const struct xray_event *ev)
{
	struct thread *t = get_thread(c, ev->tid);
	/* Two byte loads, not one wider load of both: the decoder has just
	 * stored them byte by byte, and a load that spans several stores
	 * cannot be forwarded from them (a stall that was 70% of this
	 * function). */
	bool extra = *(const volatile __u8 *)&ev->has_bias || *(const volatile __u8 *)&ev->nr_args;
	struct queued *q;

	if (!t)
		return -ENOMEM;
	if (t->nq == t->q_cap && t->qh) {	/* reuse the drained front */
		memmove(t->q, t->q + t->qh, (t->nq - t->qh) * sizeof(*t->q));
		t->nq -= t->qh;
		t->qh = 0;
	}
	if (ARRAY_GROW(t->q, t->q_cap, t->nq + 1))
		return -ENOMEM;
	if (extra) {
		/* Extras of drained events are dead: reclaim them when they
		 * outnumber the live ones (queue order may differ from push
		 * order after a sort, so they are not simply a prefix). */
		if (t->nx >= 64 && t->x_live < t->nx / 2)
			compact_extras(t);
		if (t->nx >= NO_EXTRA ||
		    ARRAY_GROW(t->extra, t->x_cap, t->nx + 1))
			return -ENOMEM;
	}
	if (t->nq > t->qh && ev->time < t->q[t->nq - 1].time)
		t->sorted = false;
	q = &t->q[t->nq++];
	q->time = ev->time;
	q->seq = (__u32)c->seq++;
	q->func_id = ev->func_id;
	q->pid = ev->pid;
	q->cpu = (__u16)ev->cpu;
	q->action = ev->action;
	q->nr_args = ev->nr_args > PREC_TRACE_MAX_ARGS ? PREC_TRACE_MAX_ARGS : ev->nr_args;
	q->has_bias = ev->has_bias;
	q->bias_slot = ev->bias_slot;
	q->extra = NO_EXTRA;
	if (extra) {
		struct extra *x = &t->extra[t->nx];

		x->bias = ev->bias;
		memcpy(x->args, ev->args, q->nr_args * sizeof(x->args[0]));
		q->extra = (__u32)t->nx++;
		t->x_live++;
	}
	c->st.events++;
	return 0;
}

static int cmp_queued(const void *a, const void *b)
{
	const struct queued *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (__s32)(x->seq - y->seq) < 0 ? -1 : (x->seq != y->seq);
}

/* The full event of a queued one (tid from its thread). */
static void unpack(const struct thread *t, const struct queued *q, struct xray_event *ev)
{
	ev->time = q->time;
	ev->pid = q->pid;
	ev->tid = t->tid;
	ev->cpu = q->cpu;
	ev->func_id = q->func_id;
	ev->action = q->action;
	ev->nr_args = q->nr_args;
	ev->has_bias = q->has_bias;
	ev->bias_slot = q->bias_slot;
	ev->bias = 0;
	ev->offset = 0;
	if (q->extra != NO_EXTRA) {
		const struct extra *x = &t->extra[q->extra];

		ev->bias = x->bias;
		memcpy(ev->args, x->args, q->nr_args * sizeof(ev->args[0]));
	}
}

void xray_calls__set_ip(struct xray_calls *c, __u64 ip)
{
	if (c->cur)
		c->cur->ip = ip;
}

static int do_entry(struct xray_calls *c, struct thread *t, const struct xray_event *ev,
		    xray_call_fn fn, void *ctx)
{
	struct xray_call call = { .kind = XRAY_CALL_ENTRY, .ev = ev, .depth = (__u32)t->depth };
	int ret;

	c->st.entries++;
	c->cur = NULL;
	if (t->depth >= MAX_DEPTH) {
		c->st.too_deep++;
	} else if (ARRAY_GROW(t->stack, t->s_cap, t->depth + 1)) {
		return -ENOMEM;
	} else {
		c->cur = &t->stack[t->depth++];
		c->cur->time = ev->time;
		c->cur->ip = 0;
		c->cur->func_id = ev->func_id;
		c->cur->cpu = ev->cpu;
	}
	ret = fn(ctx, &call);
	c->cur = NULL;
	return ret;
}

static int do_exit(struct xray_calls *c, struct thread *t, const struct xray_event *ev,
		   xray_call_fn fn, void *ctx)
{
	struct xray_call call = { .ev = ev };
	size_t i, lim = t->depth > MAX_SEARCH ? t->depth - MAX_SEARCH : 0;
	int ret;

	for (i = t->depth; i > lim; i--)
		if (t->stack[i - 1].func_id == ev->func_id)
			break;
	if (i == lim) {
		c->st.orphans++;
		call.kind = XRAY_CALL_ORPHAN;
		call.depth = (__u32)t->depth;
		return fn(ctx, &call);
	}
	/* Frames above the match lost their exits (dropped records, longjmp). */
	while (t->depth > i) {
		t->depth--;
		c->st.unwound++;
		call.kind = XRAY_CALL_UNWOUND;
		call.entry = &t->stack[t->depth];
		call.depth = (__u32)t->depth;
		ret = fn(ctx, &call);
		if (ret)
			return ret;
	}
	t->depth--;
	c->st.returns++;
	call.kind = XRAY_CALL_RETURN;
	call.entry = &t->stack[t->depth];
	call.depth = (__u32)t->depth;
	call.duration = ev->time >= call.entry->time ? ev->time - call.entry->time : 0;
	return fn(ctx, &call);
}

/* Handle queued event q of thread t. */
static int process(struct xray_calls *c, struct thread *t, const struct queued *q,
		   xray_call_fn fn, void *ctx)
{
	struct xray_event ev;

	unpack(t, q, &ev);
	if (q->extra != NO_EXTRA)
		t->x_live--;
	if (t->done_any && ev.time < t->done_time)
		c->st.late++;
	t->done_any = true;
	t->done_time = ev.time;
	if (ev.action == PREC_XRAY_ENTER)
		return do_entry(c, t, &ev, fn, ctx);
	return do_exit(c, t, &ev, fn, ctx);
}

/* The queued events of t before index upto have been processed. */
static void consumed(struct thread *t, size_t upto)
{
	t->qh = upto;
	if (t->qh == t->nq)
		t->qh = t->nq = 0;
	if (!t->x_live)
		t->nx = 0;
}

static bool heap_less(const struct thread *a, const struct thread *b)
{
	return cmp_queued(&a->q[a->head], &b->q[b->head]) < 0;
}

static void heap_down(struct thread **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct thread *tmp;

		if (l < n && heap_less(h[l], h[m]))
			m = l;
		if (l + 1 < n && heap_less(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

/*
 * Threads are independent, but their calls are delivered in time order
 * across threads (a k-way merge over the threads' sorted queues), so
 * that whoever writes them gets one ordered run instead of one per thread.
 */
int xray_calls__drain(struct xray_calls *c, __u64 upto, xray_call_fn fn, void *ctx)
{
	size_t i, n = 0;
	int ret = 0;

	for (i = 0; i < c->cap; i++) {
		struct thread *t = &c->tab[i];

		if (!t->used || t->nq == t->qh)
			continue;
		if (!t->sorted) {
			qsort(t->q + t->qh, t->nq - t->qh, sizeof(*t->q), cmp_queued);
			t->sorted = true;
		}
		t->head = t->qh;
		t->end = t->qh;
		while (t->end < t->nq && t->q[t->end].time <= upto)
			t->end++;
		if (t->end == t->qh)
			continue;
		if (ARRAY_GROW(c->heap, c->heap_cap, n + 1))
			return -ENOMEM;
		c->heap[n++] = t;
	}
	for (i = n / 2; i-- > 0;)
		heap_down(c->heap, n, i);
	while (n && !ret) {
		struct thread *t = c->heap[0];

		ret = process(c, t, &t->q[t->head++], fn, ctx);
		if (t->head == t->end) {
			consumed(t, t->end);
			c->heap[0] = c->heap[--n];
		}
		heap_down(c->heap, n, 0);
	}
	for (i = 0; i < n; i++)	/* stopped early: keep what is left */
		consumed(c->heap[i], c->heap[i]->head);
	return ret;
}

__u64 xray_calls__open_frames(const struct xray_calls *c)
{
	__u64 n = 0;
	size_t i;

	for (i = 0; i < c->cap; i++)
		if (c->tab[i].used)
			n += c->tab[i].depth;
	return n;
}

const struct xray_calls_stats *xray_calls__stats(const struct xray_calls *c)
{
	return &c->st;
}
