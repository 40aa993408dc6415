// SPDX-License-Identifier: GPL-2.0
#include "unwind/unwinder.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "precord/bpf_abi.h"
#include "precord/unwind_abi.h"
#include "unwind/maps.h"
#include "unwind/table_store.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/keymap.h"
#include "util/log.h"

struct umap {
	__u64 start, end, bias;
	__u32 table;
};

struct uproc {
	__u32 pid;
	bool dirty, in_bpf;
	struct umap *m;			/* sorted by start, not overlapping */
	size_t n, cap;
	struct table_owner who;		/* who.uid read when first needed */
	bool uid_known;
	size_t nr_pend;			/* its mappings waiting in u->pend */
	__u64 pend_lo, pend_hi;		/* they lie within [lo, hi) (not shrunk) */
};

/* Mappings with tables kept per process: twice what BPF takes (the rest
 * wait there for a cut of the first ones); a mapping past it is counted
 * in maps_over.  Bounds each mapping's cost in the list. */
#define PROC_MAPS_MAX		(2 * PREC_UNWIND_MAX_MAPS)

/*
 * A mapping whose table is not built yet waits here: tables are built at
 * unwinder__flush within BUILD_BUDGET_NS a round, so that the recording
 * loop keeps draining the rings (the interim builder took 17 s for the
 * 145 files of a -a recording, which lost half the samples when built at
 * once).  A build still going at the deadline stops and goes on in the
 * next round.  The next build is for the user whose builds took least
 * time so far, so that one user's files cannot keep another's waiting.
 * Its samples have frame pointers only until then.  One mapping of each
 * build-id waiting holds a dup of its file (the holder; when it goes,
 * another mapping of the build-id takes the descriptor over).  The queue
 * holds PENDING_MAX build-ids, half of them for one user but root, and
 * PENDING_MAPS_MAX mappings, PENDING_PROC_MAX of one process; a mapping
 * past that is counted (pend_over) and its file left to frame pointers
 * unless its table is ready.
 */
#define BUILD_BUDGET_NS		50000000ull
#define PENDING_MAX		4096
#define PENDING_USER_MAX	(PENDING_MAX / 2)
#define PENDING_MAPS_MAX	65536
#define PENDING_PROC_MAX	1024

struct pending {
	__u32 pid, uid;
	int fd;				/* the holder's: a dup of the checked file */
	bool holds;			/* the build-id's holder (fd, counted) */
	bool gone;			/* leaving the queue (pending_remove) */
	__u64 start, len, pgoff;
	char *name;
	__u8 bid[20], bid_size;
};

struct unwinder {
	struct table_store *ts;
	struct pending *pend;		/* in arrival order */
	size_t nr_pend, pend_cap;
	int procs_fd, stats_fd;
	struct uproc **procs;		/* sorted by pid */
	size_t nr_procs, procs_cap;
	struct prec_unwind_proc *val;	/* scratch for one map value */
	__u64 maps_over, procs_over;	/* mappings and processes BPF has no room for */
	__u64 pend_over;		/* mappings the queue had no room for */
	__u64 next_proc;		/* the last struct table_owner.proc given */
	struct keymap uid_ns;		/* build time by uid */
	struct keymap uid_pend;		/* build-ids waiting by their holder's uid */
	struct keymap bid_pend;		/* mappings waiting by build-id */
	size_t nr_bids;			/* build-ids waiting */
	__u64 round_over_ns;		/* the most a round's building ran past its budget */
};

struct unwinder *unwinder__new(const struct unwind_map_fds *fds)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->procs_fd = fds->procs;
	u->stats_fd = fds->stats;
	u->val = calloc(1, sizeof(*u->val));
	u->ts = table_store__new(fds);
	if (!u->val || !u->ts) {
		int err = errno ? errno : ENOMEM;

		unwinder__free(u);
		errno = err;
		return NULL;
	}
	return u;
}

static void proc_release(struct unwinder *u, struct uproc *p)
{
	for (size_t i = 0; i < p->n; i++)
		table_store__put(u->ts, p->m[i].table);
	p->n = 0;
}

static void pending_drop(struct pending *p)
{
	if (p->fd >= 0)
		close(p->fd);
	free(p->name);
}

/* The real uid of process pid (/proc/PID/status), UINT32_MAX when gone. */
static __u32 proc_uid(__u32 pid)
{
	char path[64], line[256];
	unsigned long v;
	__u32 uid = UINT32_MAX;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return uid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lu", &v) == 1) {
			uid = (__u32)v;
			break;
		}
	fclose(f);
	return uid;
}

static const struct table_owner *owner_of(struct uproc *p)
{
	if (!p->uid_known) {
		p->who.uid = proc_uid(p->pid);
		p->uid_known = true;
	}
	return &p->who;
}

static struct uproc *proc_find(const struct unwinder *u, __u32 pid);

static uint64_t *uid_pending(struct unwinder *u, __u32 uid)
{
	return keymap_put_u64(&u->uid_pend, uid, NULL);
}

/* q leaves the queue's counts; another mapping of its build-id (not
 * leaving) takes its descriptor over. */
static void pending_uncount(struct unwinder *u, struct pending *q)
{
	struct uproc *p = proc_find(u, q->pid);
	uint64_t *n = keymap_get(&u->bid_pend, q->bid, q->bid_size);
	uint64_t *h = q->holds ? uid_pending(u, q->uid) : NULL;

	if (p && p->nr_pend)
		p->nr_pend--;
	if (n && *n)
		(*n)--;
	if (!q->holds)
		return;
	q->holds = false;
	if (h && *h)
		(*h)--;
	for (size_t i = 0; n && *n && i < u->nr_pend; i++) {
		struct pending *r = &u->pend[i];

		if (!r->gone && r != q && r->bid_size == q->bid_size &&
		    !memcmp(r->bid, q->bid, q->bid_size)) {
			r->fd = q->fd;
			r->holds = true;
			q->fd = -1;
			h = uid_pending(u, r->uid);
			if (h)
				(*h)++;
			return;
		}
	}
	u->nr_bids--;
}

static void add_mapping(struct unwinder *u, __u32 pid, __u64 start, __u64 len, __u64 pgoff,
			int fd, const char *name, const __u8 *bid, __u8 bid_size);

/* The mappings marked gone leave the queue, into their lists with add. */
static void pending_remove(struct unwinder *u, bool add)
{
	size_t w = 0;

	for (size_t i = 0; i < u->nr_pend; i++) {
		struct pending *q = &u->pend[i];

		if (!q->gone)
			continue;
		pending_uncount(u, q);
		if (add)
			add_mapping(u, q->pid, q->start, q->len, q->pgoff, q->fd, q->name,
				    q->bid, q->bid_size);
	}
	for (size_t i = 0; i < u->nr_pend; i++) {
		if (u->pend[i].gone)
			pending_drop(&u->pend[i]);
		else
			u->pend[w++] = u->pend[i];
	}
	u->nr_pend = w;
}

/* Pending mappings of pid (overlapping [start, end) only, unless all) go. */
static void pending_forget(struct unwinder *u, __u32 pid, __u64 start, __u64 end, bool all)
{
	struct uproc *pr = proc_find(u, pid);
	bool any = false;

	/* nothing of pid waits there: no scan (a process mapping page after
	 * page maps each below or above the ones before) */
	if (!pr || !pr->nr_pend || (!all && (end <= pr->pend_lo || start >= pr->pend_hi)))
		return;
	for (size_t i = 0; i < u->nr_pend; i++) {
		struct pending *p = &u->pend[i];

		p->gone = p->pid == pid && (all || (p->start < end && p->start + p->len > start));
		any |= p->gone;
	}
	if (any)
		pending_remove(u, false);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr_pend; i++)
		pending_drop(&u->pend[i]);
	free(u->pend);
	for (size_t i = 0; i < u->nr_procs; i++) {
		free(u->procs[i]->m);
		free(u->procs[i]);
	}
	free(u->procs);
	free(u->val);
	table_store__free(u->ts);
	keymap_free(&u->uid_ns);
	keymap_free(&u->uid_pend);
	keymap_free(&u->bid_pend);
	free(u);
}

/* Index of pid's entry, or where it would go. */
static size_t proc_pos(const struct unwinder *u, __u32 pid)
{
	return ptrs_lower_bound_u32((void *const *)u->procs, u->nr_procs,
				    offsetof(struct uproc, pid), pid);
}

static struct uproc *proc_find(const struct unwinder *u, __u32 pid)
{
	size_t i = proc_pos(u, pid);

	return i < u->nr_procs && u->procs[i]->pid == pid ? u->procs[i] : NULL;
}

static struct uproc *proc_get(struct unwinder *u, __u32 pid)
{
	size_t i = proc_pos(u, pid);
	struct uproc *p;

	if (i < u->nr_procs && u->procs[i]->pid == pid)
		return u->procs[i];
	if (ARRAY_GROW(u->procs, u->procs_cap, u->nr_procs + 1))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->who = (struct table_owner){ .proc = ++u->next_proc, .pid = pid };
	memmove(&u->procs[i + 1], &u->procs[i], (u->nr_procs - i) * sizeof(*u->procs));
	u->procs[i] = p;
	u->nr_procs++;
	return p;
}

/* [start, end) leaves p's list: entries it covers go (their references
 * too), entries it cuts keep their parts. */
static int proc_cut(struct unwinder *u, struct uproc *p, __u64 start, __u64 end)
{
	size_t i = 0;

	while (i < p->n) {
		struct umap *m = &p->m[i];

		if (m->end <= start || m->start >= end) {
			i++;
			continue;
		}
		if (m->start < start && m->end > end) {	/* split in two */
			struct umap tail = *m;

			if (ARRAY_GROW(p->m, p->cap, p->n + 1))
				return -ENOMEM;
			m = &p->m[i];
			tail.start = end;
			m->end = start;
			memmove(&p->m[i + 2], &p->m[i + 1], (p->n - i - 1) * sizeof(*m));
			p->m[i + 1] = tail;
			p->n++;
			table_store__ref(u->ts, tail.table);
			return 0;
		}
		if (m->start < start) {
			m->end = start;
			i++;
		} else if (m->end > end) {
			m->start = end;
			i++;
		} else {
			table_store__put(u->ts, m->table);
			memmove(m, m + 1, (p->n - i - 1) * sizeof(*m));
			p->n--;
		}
	}
	return 0;
}

/* Into p's list, its table known to be built (or not to be). */
static void add_mapping(struct unwinder *u, __u32 pid, __u64 start, __u64 len, __u64 pgoff,
			int fd, const char *name, const __u8 *bid, __u8 bid_size)
{
	struct uproc *p = proc_get(u, pid);
	struct umap nm = { .start = start, .end = start + len };
	size_t i;

	if (!p || nm.end <= nm.start)
		return;
	if (proc_cut(u, p, nm.start, nm.end))
		return;
	p->dirty = true;
	if (p->n >= PROC_MAPS_MAX) {
		u->maps_over++;
		return;
	}
	if (!table_store__ready(u->ts, owner_of(p), bid, bid_size))
		return;		/* not built: the queue had no room, or it failed */
	if (table_store__get(u->ts, owner_of(p), bid, bid_size, fd, name, start, pgoff,
			     &nm.table, &nm.bias))
		return;		/* no table: frame pointers there */
	if (ARRAY_GROW(p->m, p->cap, p->n + 1)) {
		table_store__put(u->ts, nm.table);
		return;
	}
	for (i = 0; i < p->n && p->m[i].start < nm.start; i++)
		;
	memmove(&p->m[i + 1], &p->m[i], (p->n - i) * sizeof(nm));
	p->m[i] = nm;
	p->n++;
}

/* The least build time of the users with mappings waiting (other than
 * uid), UINT64_MAX when none. */
static __u64 least_waiting_ns(struct unwinder *u, __u32 uid)
{
	__u64 least = UINT64_MAX;

	for (size_t i = 0; i < u->nr_pend; i++) {
		uint64_t *ns = keymap_get_u64(&u->uid_ns, u->pend[i].uid);
		__u64 v = ns ? *ns : 0;

		if (u->pend[i].uid != uid && v < least)
			least = v;
	}
	return least;
}

static void defer(struct unwinder *u, __u32 pid, __u64 start, __u64 len, __u64 pgoff,
		  int fd, const char *name, const __u8 *bid, __u8 bid_size)
{
	struct pending *q;
	struct uproc *p = proc_get(u, pid);
	uint64_t *upend, *nbid, *ns;
	bool holder;
	__u32 uid;

	if (!p)
		return;
	/* what the mapping covers has no table meanwhile */
	if (!proc_cut(u, p, start, start + len))
		p->dirty = true;
	uid = owner_of(p)->uid;
	upend = uid_pending(u, uid);
	nbid = keymap_put(&u->bid_pend, bid, bid_size, NULL);
	if (!upend || !nbid)
		return;
	holder = !*nbid;
	if (u->nr_pend >= PENDING_MAPS_MAX || p->nr_pend >= PENDING_PROC_MAX ||
	    (holder && (u->nr_bids >= PENDING_MAX ||
			(uid != 0 && *upend >= PENDING_USER_MAX)))) {
		u->pend_over++;
		return;
	}
	if (ARRAY_GROW(u->pend, u->pend_cap, u->nr_pend + 1))
		return;
	if (holder && !*upend) {
		/* a user who starts waiting takes turns from now on: it
		 * neither owes the build time it took before nor goes ahead
		 * of those waiting by the time they took */
		__u64 least = least_waiting_ns(u, uid);

		ns = keymap_put_u64(&u->uid_ns, uid, NULL);
		if (ns && least != UINT64_MAX)
			*ns = least;
	}
	q = &u->pend[u->nr_pend];
	*q = (struct pending){ .pid = pid, .uid = uid, .start = start, .len = len,
			       .pgoff = pgoff, .holds = holder,
			       .fd = holder && fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1,
			       .name = strdup(name), .bid_size = bid_size };
	if (!q->name) {
		pending_drop(q);
		return;
	}
	memcpy(q->bid, bid, bid_size);
	u->nr_pend++;
	if (!p->nr_pend++ || start < p->pend_lo)
		p->pend_lo = start;
	if (p->nr_pend == 1 || start + len > p->pend_hi)
		p->pend_hi = start + len;
	(*nbid)++;
	if (holder) {
		u->nr_bids++;
		(*upend)++;
	}
}

void unwinder__mmap(void *ctx, __u32 pid, __u64 start, __u64 len, __u64 pgoff, int fd,
		    const char *name, const __u8 *bid, __u8 bid_size)
{
	struct unwinder *u = ctx;
	struct uproc *p;

	pending_forget(u, pid, start, start + len, false);
	if (bid_size > 20)
		return;
	p = proc_get(u, pid);
	if (!p)
		return;
	if (table_store__ready(u->ts, owner_of(p), bid, bid_size))
		add_mapping(u, pid, start, len, pgoff, fd, name, bid, bid_size);
	else
		defer(u, pid, start, len, pgoff, fd, name, bid, bid_size);
}

/* Pending mappings whose tables are ready (or known missing) into their
 * lists: those of bid (just built) only, or all (bid NULL). */
static void pending_take(struct unwinder *u, const __u8 *bid, __u8 bid_size)
{
	bool any = false;

	for (size_t i = 0; i < u->nr_pend; i++) {
		struct pending *q = &u->pend[i];
		struct uproc *p;

		q->gone = false;
		if (bid && (q->bid_size != bid_size || memcmp(q->bid, bid, bid_size)))
			continue;
		p = proc_find(u, q->pid);
		q->gone = !p || table_store__ready(u->ts, owner_of(p), q->bid, q->bid_size);
		any |= q->gone;
	}
	if (any)
		pending_remove(u, true);
}

/* The mapping holding q's build-id's descriptor. */
static struct pending *pending_holder(struct unwinder *u, struct pending *q)
{
	for (size_t i = 0; i < u->nr_pend && !q->holds; i++)
		if (u->pend[i].holds && u->pend[i].bid_size == q->bid_size &&
		    !memcmp(u->pend[i].bid, q->bid, q->bid_size))
			return &u->pend[i];
	return q;
}

/*
 * The next mapping to build for: the first of the user who took least
 * build time, a stopped build (table_store__building) first among equals;
 * among the stopped builds only when no other may start.  NULL: none.
 */
static struct pending *pending_next(struct unwinder *u)
{
	bool can_start = table_store__can_start(u->ts), best_kept = false;
	struct pending *best = NULL;
	__u64 best_ns = UINT64_MAX;

	for (size_t i = 0; i < u->nr_pend; i++) {
		struct pending *q = &u->pend[i];
		uint64_t *ns = keymap_get_u64(&u->uid_ns, q->uid);
		bool kept = table_store__building(u->ts, q->bid, q->bid_size);
		__u64 v = ns ? *ns : 0;

		if (!can_start && !kept)
			continue;
		if (!best || v < best_ns || (v == best_ns && kept && !best_kept)) {
			best = q;
			best_ns = v;
			best_kept = kept;
		}
	}
	return best;
}

/* Tables for the pending mappings until the round's budget is used: a
 * build still going then stops (table_store__build) and goes on when its
 * user's turn comes again. */
static void build_pending(struct unwinder *u)
{
	__u64 now = clock_ns(CLOCK_MONOTONIC), deadline = now + BUILD_BUDGET_NS;
	struct pending *q;

	pending_take(u, NULL, 0);
	for (int i = 0; i < TABLE_STORE_BUILDS; i++) {
		const __u8 *bid;
		__u8 n;
		bool wanted = false;

		if (!table_store__kept(u->ts, i, &bid, &n))
			continue;
		for (size_t k = 0; k < u->nr_pend && !wanted; k++)
			wanted = u->pend[k].bid_size == n && !memcmp(u->pend[k].bid, bid, n);
		if (!wanted)
			table_store__drop_kept(u->ts, i);	/* its processes went */
	}
	while (now < deadline && (q = pending_next(u))) {
		struct uproc *p = proc_find(u, q->pid);
		struct table_owner none = { .pid = q->pid, .uid = q->uid };
		const struct table_owner *who = p ? owner_of(p) : &none;
		struct pending *h = pending_holder(u, q);
		__u8 bid[20], bid_size = q->bid_size;
		uint64_t *ns;
		int err;

		memcpy(bid, q->bid, bid_size);
		err = table_store__build(u->ts, who, bid, bid_size, h->fd, h->name, deadline);
		ns = keymap_put_u64(&u->uid_ns, q->uid, NULL);
		if (ns)
			*ns += clock_ns(CLOCK_MONOTONIC) - now;
		now = clock_ns(CLOCK_MONOTONIC);
		if (err)
			break;	/* stopped at the deadline, or out of memory: next round */
		if (!table_store__ready(u->ts, who, bid, bid_size)) {
			/* not built (no fd, no table id): frame pointers there */
			for (size_t i = 0; i < u->nr_pend; i++)
				u->pend[i].gone = u->pend[i].bid_size == bid_size &&
						  !memcmp(u->pend[i].bid, bid, bid_size);
			pending_remove(u, false);
		}
		pending_take(u, bid, bid_size);	/* its other mappings */
		now = clock_ns(CLOCK_MONOTONIC);
	}
	if (now > deadline && now - deadline > u->round_over_ns)
		u->round_over_ns = now - deadline;
}

/* The parent's mappings still waiting for their tables wait for the
 * child too (else a child forked in the parent's first milliseconds,
 * a pre-forked worker, would never get them). */
static void pending_copy(struct unwinder *u, __u32 ppid, __u32 pid)
{
	size_t n = u->nr_pend;

	for (size_t i = 0; i < n; i++) {
		struct pending q = u->pend[i];	/* defer may move the array */

		if (q.pid == ppid)
			defer(u, pid, q.start, q.len, q.pgoff, q.fd, q.name, q.bid, q.bid_size);
	}
}

void unwinder__fork(struct unwinder *u, __u32 ppid, __u32 pid)
{
	struct uproc *pp = proc_find(u, ppid), *c;

	if (ppid == pid)
		return;
	pending_forget(u, pid, 0, 0, true);	/* a pid reused */
	pending_copy(u, ppid, pid);
	if (!pp)
		return;
	c = proc_get(u, pid);
	pp = proc_find(u, ppid);		/* the array may have moved */
	if (!c || !pp)
		return;
	proc_release(u, c);			/* a pid reused: what it had goes */
	if (pp->n && ARRAY_GROW(c->m, c->cap, pp->n))
		return;
	if (pp->n)		/* no array yet: no memcpy(NULL, NULL, 0) */
		memcpy(c->m, pp->m, pp->n * sizeof(*c->m));
	c->n = pp->n;
	for (size_t i = 0; i < c->n; i++)
		table_store__ref(u->ts, c->m[i].table);
	c->dirty = true;
}

void unwinder__exec(struct unwinder *u, __u32 pid)
{
	struct uproc *p = proc_find(u, pid);

	pending_forget(u, pid, 0, 0, true);
	if (!p)
		return;
	proc_release(u, p);
	p->dirty = true;
	p->uid_known = false;	/* setpriv, su: the uid is read again */
}

void unwinder__exit(struct unwinder *u, __u32 pid)
{
	size_t i = proc_pos(u, pid);
	struct uproc *p;

	pending_forget(u, pid, 0, 0, true);
	if (i >= u->nr_procs || u->procs[i]->pid != pid)
		return;
	p = u->procs[i];
	if (p->in_bpf)
		bpf_map_delete_elem(u->procs_fd, &pid);
	proc_release(u, p);
	free(p->m);
	free(p);
	memmove(&u->procs[i], &u->procs[i + 1], (u->nr_procs - i - 1) * sizeof(*u->procs));
	u->nr_procs--;
}

static void flush_one(struct unwinder *u, struct uproc *p)
{
	size_t n = p->n < PREC_UNWIND_MAX_MAPS ? p->n : PREC_UNWIND_MAX_MAPS;

	p->dirty = false;
	if (!n) {
		if (p->in_bpf)
			bpf_map_delete_elem(u->procs_fd, &p->pid);
		p->in_bpf = false;
		return;
	}
	if (p->n > n)
		u->maps_over += p->n - n;
	/* only the used part of the value matters to the walk */
	u->val->nr = (__u32)n;
	u->val->pad = 0;
	for (size_t i = 0; i < n; i++)
		u->val->maps[i] = (struct prec_unwind_map){
			.start = p->m[i].start, .end = p->m[i].end,
			.bias = p->m[i].bias, .table = p->m[i].table,
		};
	if (bpf_map_update_elem(u->procs_fd, &p->pid, u->val, BPF_ANY)) {
		u->procs_over++;
		return;
	}
	p->in_bpf = true;
}

void unwinder__flush(struct unwinder *u)
{
	if (!u)
		return;
	build_pending(u);
	for (size_t i = 0; i < u->nr_procs; i++)
		if (u->procs[i]->dirty)
			flush_one(u, u->procs[i]);
}

static void walk_stats(const struct unwinder *u, __u64 *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = ncpu > 0 ? calloc((size_t)ncpu * PREC_UNWIND_STAT_NR, sizeof(__u64)) : NULL;
	__u32 zero = 0;

	memset(sum, 0, PREC_UNWIND_STAT_NR * sizeof(*sum));
	if (v && !bpf_map_lookup_elem(u->stats_fd, &zero, v))
		for (int c = 0; c < ncpu; c++)
			for (int k = 0; k < PREC_UNWIND_STAT_NR; k++)
				sum[k] += v[(size_t)c * PREC_UNWIND_STAT_NR + k];
	free(v);
}

void unwinder__print_stats(const struct unwinder *u)
{
	struct table_store_stats st;
	__u64 w[PREC_UNWIND_STAT_NR];

	if (!u)
		return;
	table_store__stats(u->ts, &st);
	if (st.full_files)
		pr_warn("%llu mappings unwound with frame pointers only: their tables did not fit in --unwind-max-bytes (%llu MiB)",
			(unsigned long long)st.full_files, (unsigned long long)(st.max_bytes >> 20));
	if (st.share_files)
		pr_warn("%llu mappings unwound with frame pointers only: their process or user held its share of --unwind-max-bytes (a quarter, half for a user)",
			(unsigned long long)st.share_files);
	if (u->procs_over || u->maps_over)
		pr_warn("unwind tables: %llu processes and %llu mappings had no room in the BPF maps (frame pointers there)",
			(unsigned long long)u->procs_over, (unsigned long long)u->maps_over);
	if (u->pend_over)
		pr_warn("unwind tables: %llu mappings found the build queue full (%d files, %d of a user; %d mappings, %d of a process): frame pointers there",
			(unsigned long long)u->pend_over, PENDING_MAX, PENDING_USER_MAX,
			PENDING_MAPS_MAX, PENDING_PROC_MAX);
	if (log_verbosity < 1)
		return;
	walk_stats(u, w);
	pr_info("unwind tables: %llu built in %.1f ms (%llu files without CFI, %llu of them refused: sections over the read limits), %.1f MiB at most of %llu MiB, %llu dropped",
		(unsigned long long)st.built, (double)st.build_ns / 1e6,
		(unsigned long long)st.no_cfi, (unsigned long long)st.refused,
		(double)st.peak_bytes / (1 << 20),
		(unsigned long long)(st.max_bytes >> 20), (unsigned long long)st.dropped);
	pr_info("unwind tables: %.1f MiB of rows and page indexes now; builds stopped at a round's deadline %llu times (%llu dropped: no mapping waited for them); the longest round of building ran %.1f ms past its %llu ms budget",
		(double)st.bytes / (1 << 20), (unsigned long long)st.steps,
		(unsigned long long)st.dropped_builds, (double)u->round_over_ns / 1e6,
		(unsigned long long)(BUILD_BUDGET_NS / 1000000));
	pr_info("unwind walks: %llu, frames by table %llu, by frame pointer %llu, rows from the row cache %llu, stack reads %llu; %llu walks of processes without tables, %llu cut at %d frames",
		(unsigned long long)w[PREC_UNWIND_STAT_WALKS], (unsigned long long)w[PREC_UNWIND_STAT_CFI],
		(unsigned long long)w[PREC_UNWIND_STAT_FP], (unsigned long long)w[PREC_UNWIND_STAT_CACHED],
		(unsigned long long)w[PREC_UNWIND_STAT_READS],
		(unsigned long long)w[PREC_UNWIND_STAT_NO_PROC],
		(unsigned long long)w[PREC_UNWIND_STAT_FULL], PREC_MAX_STACK);
}
