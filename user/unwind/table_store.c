// SPDX-License-Identifier: GPL-2.0
#include "unwind/table_store.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "precord/bpf_abi.h"
#include "precord/unwind_abi.h"
#include "unwind/cfi_table.h"
#include "unwind/maps.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/keymap.h"
#include "util/log.h"
#include "util/printable.h"

enum table_state {
	TABLE_NONE,		/* never built, or dropped */
	TABLE_LOADED,
	TABLE_NO_CFI,		/* the file has no table we can use: not retried */
	TABLE_FULL,		/* did not fit: retried when need slots are free
				 * for who asks (the map's room, and its share) */
};

struct table {
	__u8 bid[20];
	__u8 bid_size;
	__u8 state;		/* enum table_state */
	__u32 id;		/* key in unwind_tables (LOADED) */
	__u32 refs;
	__u32 first, nr_slots;	/* its slots in unwind_rows (LOADED) */
	__u64 need;		/* FULL: slots it needs */
	__u64 owner_proc;	/* LOADED: charged to (struct table_owner) */
	__u32 owner_uid;
	__u32 charge;		/* slots charged: nr_slots, at least cost_min */
	__u64 base;
	struct cfi_segment *segs;
	size_t nr_segs;
};

/* A build stopped at a deadline, to go on at the next call for its bid. */
struct build_slot {
	struct cfi_build *b;		/* NULL: free */
	__u8 bid[20], bid_size;
	__u64 max_rows;			/* the rows it may make */
};

/* A free run of slots. */
struct extent {
	__u32 start, len;
};

struct table_store {
	struct table *t;		/* open addressing by build-id */
	size_t cap, nr;
	__u32 *by_id;			/* table index + 1 by id, 0: free id */
	__u32 *free_ids;		/* a stack */
	__u32 nr_free_ids, nr_ids;
	struct extent *free;		/* sorted by start, coalesced */
	size_t nr_free, free_cap;
	__u64 *slots;			/* unwind_rows, mapped */
	__u32 nr_slots;
	size_t mapped;			/* bytes of slots table_store__new mapped */
	struct table_store_target tg;
	__u32 gen;			/* the last table's (unwind_abi.h) */
	bool said_full, said_share;
	struct keymap by_proc, by_uid;	/* slots charged to each */
	struct build_slot building[TABLE_STORE_BUILDS];	/* builds stopped at a deadline */
	struct table_store_stats st;
};

struct table_store *table_store__new_target(const struct table_store_target *tg)
{
	struct table_store *ts = calloc(1, sizeof(*ts));

	if (!ts)
		goto fail;
	ts->tg = *tg;
	ts->slots = tg->slots;
	ts->nr_slots = tg->nr_slots;
	ts->nr_ids = tg->nr_tables;
	ts->st.max_bytes = (__u64)tg->nr_slots * 8;
	ts->cap = 256;
	ts->t = calloc(ts->cap, sizeof(*ts->t));
	ts->by_id = calloc(ts->nr_ids ? ts->nr_ids : 1, sizeof(*ts->by_id));
	ts->free_ids = malloc((ts->nr_ids ? ts->nr_ids : 1) * sizeof(*ts->free_ids));
	if (!ts->t || !ts->by_id || !ts->free_ids || ARRAY_GROW(ts->free, ts->free_cap, 1))
		goto fail;
	/* ids handed out from 0 up */
	for (__u32 i = 0; i < ts->nr_ids; i++)
		ts->free_ids[i] = ts->nr_ids - 1 - i;
	ts->nr_free_ids = ts->nr_ids;
	ts->free[0] = (struct extent){ 0, ts->nr_slots };
	ts->nr_free = 1;
	return ts;
fail:
	table_store__free(ts);
	errno = ENOMEM;
	return NULL;
}

/* The tables map's update, for table_store__new's target. */
static int bpf_set_table(void *ctx, __u32 id, const struct prec_unwind_table *d)
{
	return bpf_map_update_elem((int)(intptr_t)ctx, &id, d, BPF_ANY) ? -errno : 0;
}

struct table_store *table_store__new(const struct unwind_map_fds *fds)
{
	size_t len = ((size_t)fds->nr_rows * 8 + 4095) & ~(size_t)4095;
	struct table_store_target tg = {
		.nr_slots = fds->nr_rows, .nr_tables = fds->nr_tables,
		.proc_share = fds->nr_rows / TABLE_STORE_PROC_SHARE,
		.user_share = fds->nr_rows / TABLE_STORE_USER_SHARE,
		.set_table = bpf_set_table, .ctx = (void *)(intptr_t)fds->tables,
	};
	struct table_store *ts;
	int err;

	tg.slots = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds->rows, 0);
	if (tg.slots == MAP_FAILED) {
		err = errno;
		pr_err("cannot map the unwind tables' BPF map: %s", strerror(err));
		errno = err;
		return NULL;
	}
	ts = table_store__new_target(&tg);
	if (!ts) {
		munmap(tg.slots, len);
		errno = ENOMEM;
		return NULL;
	}
	ts->mapped = len;
	return ts;
}

void table_store__free(struct table_store *ts)
{
	if (!ts)
		return;
	for (size_t i = 0; i < ts->cap && ts->t; i++)
		free(ts->t[i].segs);
	if (ts->mapped)
		munmap(ts->slots, ts->mapped);
	for (int i = 0; i < TABLE_STORE_BUILDS; i++)
		cfi_build__free(ts->building[i].b);
	keymap_free(&ts->by_proc);
	keymap_free(&ts->by_uid);
	free(ts->t);
	free(ts->by_id);
	free(ts->free_ids);
	free(ts->free);
	free(ts);
}

static size_t bid_hash(const __u8 *bid, __u8 n)
{
	size_t h = 14695981039346656037ull;

	for (__u8 i = 0; i < n; i++)
		h = (h ^ bid[i]) * 1099511628211ull;
	return h;
}

static struct table *slot_of(struct table *t, size_t cap, const __u8 *bid, __u8 n)
{
	size_t i = bid_hash(bid, n) & (cap - 1);

	while (t[i].bid_size && (t[i].bid_size != n || memcmp(t[i].bid, bid, n)))
		i = (i + 1) & (cap - 1);
	return &t[i];
}

/* The entry of a build-id, created empty; NULL when out of memory. */
static struct table *table_of(struct table_store *ts, const __u8 *bid, __u8 n)
{
	struct table *e;

	if ((ts->nr + 1) * 2 > ts->cap) {
		size_t ncap = ts->cap * 2;
		struct table *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (size_t i = 0; i < ts->cap; i++)
			if (ts->t[i].bid_size)
				*slot_of(nt, ncap, ts->t[i].bid, ts->t[i].bid_size) = ts->t[i];
		for (__u32 id = 0; id < ts->nr_ids; id++)
			if (ts->by_id[id]) {
				/* re-point ids at the moved entries */
				struct table *old = &ts->t[ts->by_id[id] - 1];

				ts->by_id[id] = (__u32)(slot_of(nt, ncap, old->bid, old->bid_size) - nt) + 1;
			}
		free(ts->t);
		ts->t = nt;
		ts->cap = ncap;
	}
	e = slot_of(ts->t, ts->cap, bid, n);
	if (!e->bid_size) {
		memcpy(e->bid, bid, n);
		e->bid_size = n;
		ts->nr++;
	}
	return e;
}

/* ---- slots of unwind_rows: first fit among sorted free extents ---------- */

static __u32 largest_free(const struct table_store *ts)
{
	__u32 m = 0;

	for (size_t i = 0; i < ts->nr_free; i++)
		if (ts->free[i].len > m)
			m = ts->free[i].len;
	return m;
}

static int slots_alloc(struct table_store *ts, __u32 n, __u32 *first)
{
	for (size_t i = 0; i < ts->nr_free; i++) {
		struct extent *x = &ts->free[i];

		if (x->len < n)
			continue;
		*first = x->start;
		x->start += n;
		x->len -= n;
		if (!x->len) {
			memmove(x, x + 1, (ts->nr_free - i - 1) * sizeof(*x));
			ts->nr_free--;
		}
		return 0;
	}
	return -ENOSPC;
}

static void slots_free(struct table_store *ts, __u32 first, __u32 n)
{
	size_t i = 0;

	while (i < ts->nr_free && ts->free[i].start < first)
		i++;
	if (i > 0 && ts->free[i - 1].start + ts->free[i - 1].len == first) {
		ts->free[i - 1].len += n;
		if (i < ts->nr_free && first + n == ts->free[i].start) {
			ts->free[i - 1].len += ts->free[i].len;
			memmove(&ts->free[i], &ts->free[i + 1], (ts->nr_free - i - 1) * sizeof(struct extent));
			ts->nr_free--;
		}
		return;
	}
	if (i < ts->nr_free && first + n == ts->free[i].start) {
		ts->free[i].start = first;
		ts->free[i].len += n;
		return;
	}
	if (ARRAY_GROW(ts->free, ts->free_cap, ts->nr_free + 1))
		return;		/* the slots are lost to the allocator, not to safety */
	memmove(&ts->free[i + 1], &ts->free[i], (ts->nr_free - i) * sizeof(struct extent));
	ts->free[i] = (struct extent){ first, n };
	ts->nr_free++;
}

/* ---- building and loading ----------------------------------------------- */

/*
 * The page size of c's index: 4 KiB, or larger where the rows are
 * sparser than one a page, so that the index has at most nr_rows + 1
 * entries (a file claiming 1 GiB of code with 3 rows gets 3 pages of
 * 512 MiB, not 262,145 of 4 KiB).
 */
static unsigned shift_of(const struct cfi_table *c)
{
	__u64 last = c->rows[c->nr_rows - 1].pc;
	unsigned sh = PREC_UNWIND_PAGE_SHIFT;

	while ((last >> sh) + 1 > c->nr_rows && sh < 32)
		sh++;
	return sh;
}

static __u64 pages_of(const struct cfi_table *c)
{
	return ((__u64)c->rows[c->nr_rows - 1].pc >> shift_of(c)) + 1;
}

/* Slots a table takes: its rows, then nr_pages + 1 page entries, two a
 * slot: at most nr_rows * 3 / 2 + 1. */
static __u64 slots_of(const struct cfi_table *c)
{
	return c->nr_rows + (pages_of(c) + 2) / 2;
}

/* Rows and page index into the mapped slots at first (see unwind_abi.h). */
static void write_table(struct table_store *ts, const struct cfi_table *c, __u32 first,
			struct prec_unwind_table *d)
{
	unsigned sh = shift_of(c);
	__u64 nr_pages = pages_of(c);
	__u32 *idx;
	size_t j = 0;

	memcpy(&ts->slots[first], c->rows, c->nr_rows * sizeof(*c->rows));
	idx = (__u32 *)&ts->slots[first + c->nr_rows];
	for (__u64 p = 0; p <= nr_pages; p++) {
		__u64 at = p << sh;

		while (j + 1 < c->nr_rows && c->rows[j + 1].pc <= at)
			j++;
		idx[p] = (__u32)j;
	}
	*d = (struct prec_unwind_table){
		.first_row = first, .nr_rows = (__u32)c->nr_rows,
		.first_page = first + (__u32)c->nr_rows, .nr_pages = (__u32)nr_pages,
		.page_shift = sh,
	};
}

/* ---- shares: slots charged to the loading process and its user -------- */

static __u64 charged(const struct keymap *m, __u64 key)
{
	const uint64_t *v = keymap_get_u64(m, key);

	return v ? *v : 0;
}

static void charge(struct keymap *m, __u64 key, __s64 slots)
{
	uint64_t *v = keymap_put_u64(m, key, NULL);

	if (v)
		*v += (uint64_t)slots;	/* a failed put: the charge is forgotten */
}

/*
 * Slots a table of need slots is charged: at least the map's slots over
 * its ids (512 slots, 4 KiB at the defaults), so that a share bounds the
 * table ids its holder takes too (16,384 tables of 3 rows would take
 * every id for 0.6 MiB of slots).
 */
static __u64 cost_of(const struct table_store *ts, __u64 need)
{
	__u64 min = ts->nr_ids ? ts->nr_slots / ts->nr_ids : 0;

	return need > min ? need : min;
}

/* Slots who may still be charged (the rest of its shares). */
static __u64 share_room(const struct table_store *ts, const struct table_owner *who)
{
	__u64 room = UINT64_MAX, c;

	if (!who)
		return room;
	if (ts->tg.proc_share) {
		c = charged(&ts->by_proc, who->proc);
		room = c < ts->tg.proc_share ? ts->tg.proc_share - c : 0;
	}
	if (ts->tg.user_share && who->uid != 0) {	/* root: its processes' shares only */
		c = charged(&ts->by_uid, who->uid);
		c = c < ts->tg.user_share ? ts->tg.user_share - c : 0;
		if (c < room)
			room = c;
	}
	return room;
}

/* Slots a table may take for who: the largest free run, within its share. */
static __u64 room_for(const struct table_store *ts, const struct table_owner *who)
{
	__u64 room = largest_free(ts), share = share_room(ts, who);

	return share < room ? share : room;
}

static void say_full(struct table_store *ts, const char *name)
{
	char shown[PRINTABLE_MAX];

	ts->st.full_files++;
	if (ts->said_full)
		return;
	ts->said_full = true;
	pr_warn("unwind tables reached --unwind-max-bytes (%llu MiB) at %s: it and later files unwind with frame pointers only; give a larger --unwind-max-bytes",
		(unsigned long long)(ts->st.max_bytes >> 20), printable(shown, sizeof(shown), name));
}

static void say_share(struct table_store *ts, const struct table_owner *who, const char *name)
{
	char shown[PRINTABLE_MAX], comm[PRINTABLE_MAX], path[64], raw[32] = "?";
	FILE *f;

	ts->st.share_files++;
	if (ts->said_share)
		return;
	ts->said_share = true;
	snprintf(path, sizeof(path), "/proc/%u/comm", who->pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(raw, sizeof(raw), f))
			strcpy(raw, "?");
		raw[strcspn(raw, "\n")] = 0;
		fclose(f);
	}
	pr_warn("unwind tables: process %u (%s, uid %u) holds its share of --unwind-max-bytes (a quarter; half for a user's processes but root's): %s and its later files past the share unwind with frame pointers only",
		who->pid, printable(comm, sizeof(comm), raw), who->uid,
		printable(shown, sizeof(shown), name));
}

/*
 * e could not have its table for who: -ENOSPC (the map) or -EDQUOT (who's
 * share), counted and said once.  need: slots it needs (at least).
 */
static int refuse(struct table_store *ts, struct table *e, const struct table_owner *who,
		  const char *name, __u64 need)
{
	e->state = TABLE_FULL;
	e->need = need;
	if (largest_free(ts) >= need && share_room(ts, who) < cost_of(ts, need)) {
		say_share(ts, who, name);
		return -EDQUOT;
	}
	say_full(ts, name);
	return -ENOSPC;
}

/* c (built for e, within max_rows rows, err its build's result) into the
 * maps for who: 0, or -errno. */
static int load_built(struct table_store *ts, struct table *e, const struct table_owner *who,
		      const char *name, struct cfi_table *c, int err, __u64 max_rows)
{
	struct prec_unwind_table d;
	__u32 first;
	__u64 need;

	if (!err && !c->nr_rows)
		err = -ENOENT;
	if (err == -E2BIG) {
		cfi_table__free(c);
		return refuse(ts, e, who, name, max_rows + 1);
	}
	if (err) {
		e->state = TABLE_NO_CFI;
		ts->st.no_cfi++;
		ts->st.refused += err == -EFBIG;
		cfi_table__free(c);
		return err == -ENOMEM ? err : -ENOENT;
	}
	ts->st.built++;
	need = slots_of(c);
	if (!ts->nr_free_ids) {
		cfi_table__free(c);
		return -ENFILE;
	}
	if (need > UINT32_MAX || cost_of(ts, need) > share_room(ts, who) ||
	    slots_alloc(ts, (__u32)need, &first)) {
		cfi_table__free(c);
		return refuse(ts, e, who, name, need);
	}
	write_table(ts, c, first, &d);
	if (!++ts->gen)
		ts->gen = 1;		/* 2^32 loads: cached rows are long gone */
	d.gen = ts->gen;
	e->id = ts->free_ids[--ts->nr_free_ids];
	err = ts->tg.set_table(ts->tg.ctx, e->id, &d);
	if (err) {
		ts->free_ids[ts->nr_free_ids++] = e->id;
		slots_free(ts, first, (__u32)need);
		cfi_table__free(c);
		return err;
	}
	ts->by_id[e->id] = (__u32)(e - ts->t) + 1;
	e->state = TABLE_LOADED;
	e->first = first;
	e->nr_slots = (__u32)need;
	e->refs = 0;
	e->base = c->base;
	e->owner_proc = who ? who->proc : 0;
	e->owner_uid = who ? who->uid : 0;
	e->charge = (__u32)cost_of(ts, need);
	charge(&ts->by_proc, e->owner_proc, e->charge);
	charge(&ts->by_uid, e->owner_uid, e->charge);
	free(e->segs);
	e->segs = c->segs;		/* kept: every mapping's bias needs them */
	e->nr_segs = c->nr_segs;
	c->segs = NULL;
	c->nr_segs = 0;
	cfi_table__free(c);
	ts->st.loaded++;
	ts->st.bytes += (__u64)need * 8;
	if (ts->st.bytes > ts->st.peak_bytes)
		ts->st.peak_bytes = ts->st.bytes;
	return 0;
}

/* The stopped build of bid, NULL when none. */
static struct build_slot *building_of(struct table_store *ts, const __u8 *bid, __u8 n)
{
	for (int i = 0; i < TABLE_STORE_BUILDS; i++)
		if (ts->building[i].b && ts->building[i].bid_size == n &&
		    !memcmp(ts->building[i].bid, bid, n))
			return &ts->building[i];
	return NULL;
}

static struct build_slot *building_free(struct table_store *ts)
{
	for (int i = 0; i < TABLE_STORE_BUILDS; i++)
		if (!ts->building[i].b)
			return &ts->building[i];
	return NULL;
}

/*
 * Build e's table from fd (or go on with its stopped build) until
 * deadline (0: none) and load it for who: 0, -EAGAIN (stopped: kept in a
 * slot), -EBUSY (a new build, deadline set, every slot taken), or -errno.
 */
static int load(struct table_store *ts, struct table *e, const struct table_owner *who,
		int fd, const char *name, __u64 deadline)
{
	struct cfi_table c = { 0 };
	struct build_slot own = { 0 }, *sl = building_of(ts, e->bid, e->bid_size);
	__u64 t0 = clock_ns(CLOCK_MONOTONIC);
	int err = 0;

	if (!sl) {
		sl = deadline ? building_free(ts) : &own;
		if (!sl)
			return -EBUSY;
		if (fd < 0)
			return -ENOENT;		/* maybe readable at another mapping */
		/* a table takes a slot a row at least: more rows than room
		 * cannot fit, and the build stops there */
		sl->max_rows = room_for(ts, who);
		if (!sl->max_rows)
			return refuse(ts, e, who, name, 1);
		err = cfi_build__start(fd, name, sl->max_rows, &sl->b);
		memcpy(sl->bid, e->bid, e->bid_size);
		sl->bid_size = e->bid_size;
	}
	if (!err) {
		err = cfi_build__step(sl->b, deadline, &c);
		ts->st.steps += err == -EAGAIN;
	}
	ts->st.build_ns += clock_ns(CLOCK_MONOTONIC) - t0;
	if (err == -EAGAIN)
		return err;
	cfi_build__free(sl->b);
	sl->b = NULL;
	return load_built(ts, e, who, name, &c, err, sl->max_rows);
}

/*
 * The executable segment a mapping of file offset pgoff maps (its start
 * rounded down to a page, as the loader maps it): address = vaddr + start
 * - pgoff + offset - vaddr_of_segment.
 */
static int bias_of(const struct table *e, __u64 start, __u64 pgoff, __u64 *bias)
{
	for (size_t i = 0; i < e->nr_segs; i++) {
		const struct cfi_segment *s = &e->segs[i];

		if ((s->offset & ~4095ull) <= pgoff && pgoff < s->offset + s->filesz) {
			/* pc = ip - (start - pgoff + offset - vaddr) - base */
			*bias = start - pgoff + s->offset - s->vaddr + e->base;
			return 0;
		}
	}
	return -ENOENT;
}

/* Whether e is known for who: loaded, missing, or refused with no more
 * room for who now. */
static bool known(const struct table_store *ts, const struct table *e,
		  const struct table_owner *who)
{
	return e->bid_size && (e->state == TABLE_LOADED || e->state == TABLE_NO_CFI ||
			       (e->state == TABLE_FULL && (largest_free(ts) < e->need ||
							   share_room(ts, who) < cost_of(ts, e->need))));
}

int table_store__get(struct table_store *ts, const struct table_owner *who, const __u8 *bid,
		     __u8 bid_size, int fd, const char *name, __u64 start, __u64 pgoff,
		     __u32 *id, __u64 *bias)
{
	struct table *e;
	int err;

	if (!bid_size || bid_size > 20)
		return -ENOENT;
	e = table_of(ts, bid, bid_size);
	if (!e)
		return -ENOMEM;
	if (e->state == TABLE_NO_CFI)
		return -ENOENT;
	if (e->state == TABLE_FULL) {
		if (known(ts, e, who))
			return refuse(ts, e, who, name, e->need);
		e->state = TABLE_NONE;
	}
	if (e->state == TABLE_NONE) {
		err = load(ts, e, who, fd, name, 0);
		if (err)
			return err;
	}
	err = bias_of(e, start, pgoff, bias);
	if (err) {
		if (!e->refs)
			table_store__put(ts, e->id);	/* loaded for nothing */
		return err;
	}
	e->refs++;
	*id = e->id;
	return 0;
}

bool table_store__ready(struct table_store *ts, const struct table_owner *who,
			const __u8 *bid, __u8 bid_size)
{
	if (!bid_size || bid_size > 20)
		return true;
	return known(ts, slot_of(ts->t, ts->cap, bid, bid_size), who);
}

int table_store__build(struct table_store *ts, const struct table_owner *who, const __u8 *bid,
		       __u8 bid_size, int fd, const char *name, __u64 deadline_ns)
{
	struct table *e;
	int err;

	if (!bid_size || bid_size > 20)
		return 0;
	e = table_of(ts, bid, bid_size);
	if (!e)
		return -ENOMEM;
	if (known(ts, e, who))
		return 0;
	e->state = TABLE_NONE;
	err = load(ts, e, who, fd, name, deadline_ns);
	if (err == -EAGAIN || err == -EBUSY || err == -ENOMEM)
		return err;
	/* loaded (and kept for the get that follows: a table without
	 * references is dropped at the first put), or known to fail */
	return 0;
}

bool table_store__building(struct table_store *ts, const __u8 *bid, __u8 bid_size)
{
	return building_of(ts, bid, bid_size) != NULL;
}

bool table_store__can_start(struct table_store *ts)
{
	return building_free(ts) != NULL;
}

bool table_store__kept(const struct table_store *ts, int i, const __u8 **bid, __u8 *bid_size)
{
	if (i < 0 || i >= TABLE_STORE_BUILDS || !ts->building[i].b)
		return false;
	*bid = ts->building[i].bid;
	*bid_size = ts->building[i].bid_size;
	return true;
}

void table_store__drop_kept(struct table_store *ts, int i)
{
	if (i < 0 || i >= TABLE_STORE_BUILDS || !ts->building[i].b)
		return;
	cfi_build__free(ts->building[i].b);
	ts->building[i].b = NULL;
	ts->st.dropped_builds++;
}

void table_store__ref(struct table_store *ts, __u32 id)
{
	if (id < ts->nr_ids && ts->by_id[id])
		ts->t[ts->by_id[id] - 1].refs++;
}

void table_store__put(struct table_store *ts, __u32 id)
{
	struct prec_unwind_table none = { 0 };
	struct table *e;

	if (id >= ts->nr_ids || !ts->by_id[id])
		return;
	e = &ts->t[ts->by_id[id] - 1];
	if (e->refs > 1) {
		e->refs--;
		return;
	}
	/* the descriptor first: no walk reaches the slots once they are reused */
	ts->tg.set_table(ts->tg.ctx, id, &none);
	slots_free(ts, e->first, e->nr_slots);
	charge(&ts->by_proc, e->owner_proc, -(__s64)e->charge);
	charge(&ts->by_uid, e->owner_uid, -(__s64)e->charge);
	ts->st.bytes -= (__u64)e->nr_slots * 8;
	ts->st.loaded--;
	ts->st.dropped++;
	ts->by_id[id] = 0;
	ts->free_ids[ts->nr_free_ids++] = id;
	free(e->segs);
	e->segs = NULL;
	e->nr_segs = 0;
	e->refs = 0;
	e->state = TABLE_NONE;
}

void table_store__stats(const struct table_store *ts, struct table_store_stats *out)
{
	*out = ts->st;
}
