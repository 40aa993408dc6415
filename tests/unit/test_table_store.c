// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind tables' store (user/unwind/table_store.c), on a target in
 * memory instead of the BPF maps (struct table_store_target):
 *  - a table is built once per build-id, shared, and its rows and page
 *    index as written answer, at every pc, what the BPF walk's lookup
 *    (emulated here as bpf/unwind.bpf.h does it) must: the row a linear
 *    scan of the builder's own table finds;
 *  - the bias maps a mapping's addresses to the table's pcs;
 *  - references: the last put zeroes the descriptor and frees the slots;
 *    a table loaded again gets a new gen (the walk's row cache key);
 *  - the slot allocator under loads and drops in any order: live tables
 *    never overlap and keep their rows; freed runs coalesce (a larger
 *    table, this program's own, fits where two small ones were);
 *  - the limits: slots (-ENOSPC, said, retried when room is freed) and
 *    ids (-ENFILE); bad build-ids, no fd, a file that is no ELF, a
 *    mapping of no executable segment;
 *  - the bytes follow the rows: a file whose segment claims 1 GiB of code
 *    with 3 rows takes a few slots (its page index has larger pages);
 *  - shares: one process holds a quarter of the map, one user but root
 *    half; refused tables counted, and room comes back when they go;
 *  - table_store__build against an expired deadline goes on where it
 *    stopped, and makes the table get would; two stopped builds wait,
 *    a third is refused (-EBUSY), none is thrown away.
 * The file is the CFI fixture (tests/unit/fixtures/cfi_fixture.S).
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "../workloads/hostile_unwind_elf.h"
#include "precord/bpf_abi.h"
#include "precord/unwind_abi.h"
#include "unwind/cfi_table.h"
#include "unwind/table_store.h"
#include "util/log.h"

#define MAX_IDS		8
#define FAKE_IDS	64		/* the fake tables map's size */

static char fixture[PATH_MAX];

/* The tables map, in memory: what set_table wrote, and how often. */
struct fake_maps {
	struct prec_unwind_table d[FAKE_IDS];
	unsigned sets;
	int fail;			/* -errno the next set returns, once */
};

static int fake_set(void *ctx, __u32 id, const struct prec_unwind_table *d)
{
	struct fake_maps *m = ctx;
	int err = m->fail;

	if (id >= FAKE_IDS)
		return -E2BIG;
	m->fail = 0;
	if (err)
		return err;
	m->d[id] = *d;
	m->sets++;
	return 0;
}

struct store {
	struct table_store *ts;
	struct fake_maps maps;
	__u64 *slots;
	__u32 nr_slots;
};

static void store_open(struct store *s, __u32 nr_slots, __u32 nr_tables)
{
	struct table_store_target tg;

	memset(&s->maps, 0, sizeof(s->maps));
	s->nr_slots = nr_slots;
	s->slots = calloc(nr_slots ? nr_slots : 1, 8);
	tg = (struct table_store_target){
		.slots = s->slots, .nr_slots = nr_slots, .nr_tables = nr_tables,
		.set_table = fake_set, .ctx = &s->maps,
	};
	s->ts = table_store__new_target(&tg);
	CHECK(s->ts != NULL);
}

static void store_close(struct store *s)
{
	table_store__free(s->ts);
	free(s->slots);
}

static const __u8 bid_a[20] = { 0xa0, 1, 2, 3 };

/* A build-id of its own for the same file: another table. */
static void bid_n(__u8 *bid, int n)
{
	memset(bid, 0, 20);
	bid[0] = 0xb0;
	bid[1] = (__u8)n;
}

/* get with the fixture open, at start, file offset 0. */
static int get(struct store *s, const __u8 *bid, __u8 n, __u64 start, __u32 *id, __u64 *bias)
{
	int fd = open(fixture, O_RDONLY | O_CLOEXEC), err;

	CHECK(fd >= 0);
	err = table_store__get(s->ts, NULL, bid, n, fd, "cfi_fixture.so", start, 0, id, bias);
	close(fd);
	return err;
}

/* Slots a table of c takes: its rows, then its page index. */
static __u32 slots_per(const struct cfi_table *c)
{
	return (__u32)(c->nr_rows + ((c->rows[c->nr_rows - 1].pc >> PREC_UNWIND_PAGE_SHIFT) + 1 + 2) / 2);
}

static int build_ref(struct cfi_table *c)
{
	int fd = open(fixture, O_RDONLY | O_CLOEXEC), err;

	err = cfi_table__build(fd, "cfi_fixture.so", 1u << 20, c);
	close(fd);
	return err;
}

/* The row the BPF walk finds at pc in the table d: bpf/unwind.bpf.h's
 * unwind_find_row over the slots as written.  NULL when none. */
static const struct prec_unwind_row *walk_lookup(const struct store *s,
						 const struct prec_unwind_table *d, __u64 pc)
{
	__u64 page = pc >> d->page_shift;
	const __u32 *idx;
	const struct prec_unwind_row *rows;
	__u32 lo, hi;

	if (page >= d->nr_pages || !d->nr_rows)
		return NULL;
	idx = (const __u32 *)&s->slots[d->first_page];
	rows = (const struct prec_unwind_row *)&s->slots[d->first_row];
	lo = idx[page];
	hi = idx[page + 1];
	if (hi >= d->nr_rows)
		hi = d->nr_rows - 1;
	if (lo > hi)
		return NULL;
	while (lo < hi) {
		__u32 mid = lo + (hi - lo + 1) / 2;

		if (rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid - 1;
	}
	return rows[lo].pc <= pc ? &rows[lo] : NULL;
}

/* Every pc of the table (and past it) finds, through the page index,
 * the row a walk along the builder's own rows finds. */
static void check_rows(const struct store *s, const struct prec_unwind_table *d,
		       const struct cfi_table *c)
{
	__u64 end = (__u64)c->rows[c->nr_rows - 1].pc + 3 * 4096;

	CHECK(d->page_shift >= PREC_UNWIND_PAGE_SHIFT && d->page_shift <= 32);
	const struct prec_unwind_row *r = NULL;
	unsigned bad = 0;
	size_t next = 0;

	CHECK_EQ(d->nr_rows, c->nr_rows);
	for (__u64 pc = 0; pc < end; pc++) {
		const struct prec_unwind_row *w = walk_lookup(s, d, pc), *want;

		while (next < c->nr_rows && c->rows[next].pc <= pc)
			r = &c->rows[next++];
		/* past the last page: no row, as the walk says */
		want = pc >> d->page_shift >= d->nr_pages ? NULL : r;
		if ((w == NULL) != (want == NULL) || (w && memcmp(w, want, sizeof(*w))))
			bad++;
	}
	CHECK_EQ(bad, 0);
}

TEST(built_once_shared_and_every_pc_found)
{
	struct store s;
	struct cfi_table c = { 0 };
	struct table_store_stats st;
	__u32 id1, id2;
	__u64 b1, b2;

	CHECK_EQ(build_ref(&c), 0);
	CHECK(c.nr_rows > 0);
	store_open(&s, 4096, MAX_IDS);
	CHECK(!table_store__ready(s.ts, NULL, bid_a, 20));
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id1, &b1), 0);
	CHECK(table_store__ready(s.ts, NULL, bid_a, 20));
	CHECK_EQ(get(&s, bid_a, 20, 0x7f0000, &id2, &b2), 0);
	CHECK_EQ(id1, id2);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.built, 1);
	CHECK_EQ(st.loaded, 1);
	CHECK_EQ(s.maps.sets, 1);
	CHECK(s.maps.d[id1].gen != 0);
	/* the fixture's code is in its first segment (offset 0, vaddr 0):
	 * pc = ip - bias = vaddr - base wherever it is mapped */
	CHECK_EQ(b1, 0x10000 + c.base);
	CHECK_EQ(b2, 0x7f0000 + c.base);
	CHECK(st.bytes >= c.nr_rows * 8);
	check_rows(&s, &s.maps.d[id1], &c);
	cfi_table__free(&c);
	store_close(&s);
}

TEST(last_put_drops_and_a_reload_gets_a_new_gen)
{
	struct store s;
	struct table_store_stats st;
	__u32 id, id2;
	__u64 bias;
	__u32 gen;

	store_open(&s, 4096, MAX_IDS);
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id, &bias), 0);
	table_store__ref(s.ts, id);		/* a mapping split in two */
	CHECK_EQ(get(&s, bid_a, 20, 0x20000, &id, &bias), 0);
	gen = s.maps.d[id].gen;
	table_store__put(s.ts, id);
	table_store__put(s.ts, id);
	CHECK(s.maps.d[id].nr_rows != 0);	/* one reference left */
	table_store__put(s.ts, id);
	CHECK_EQ(s.maps.d[id].nr_rows, 0);
	CHECK_EQ(s.maps.d[id].gen, 0);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.loaded, 0);
	CHECK_EQ(st.dropped, 1);
	CHECK_EQ(st.bytes, 0);
	table_store__put(s.ts, id);		/* one too many: nothing */
	table_store__put(s.ts, 12345);		/* no such id: nothing */
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id2, &bias), 0);
	CHECK(s.maps.d[id2].gen != 0 && s.maps.d[id2].gen != gen);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.built, 2);
	store_close(&s);
}

/* Live tables never share a slot, and keep their rows while others come
 * and go; with everything dropped, the whole map is one free run again. */
TEST(slots_under_loads_and_drops)
{
	struct cfi_table c = { 0 };
	struct store s;
	struct table_store_stats st;
	__u8 bid[20];
	__u32 id[MAX_IDS] = { 0 }, per, n = 0;
	bool live[MAX_IDS] = { 0 };
	__u64 bias;
	/* a fixed order of loads (+k) and drops (-k) */
	static const int steps[] = { 1, 2, 3, 4, -2, -3, 5, 6, -1, 7, -4, -5, 2, 3, -6, -7, -2, -3 };

	CHECK_EQ(build_ref(&c), 0);
	per = slots_per(&c);
	store_open(&s, 4 * per, MAX_IDS);	/* room for four */
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int k = steps[i] > 0 ? steps[i] : -steps[i];

		bid_n(bid, k);
		if (steps[i] > 0) {
			CHECK_EQ(get(&s, bid, 20, 0x10000, &id[k], &bias), 0);
			live[k] = true;
			n++;
		} else {
			table_store__put(s.ts, id[k]);
			live[k] = false;
			n--;
		}
		/* every live table: its own slots, its rows intact */
		for (int a = 1; a < MAX_IDS; a++) {
			const struct prec_unwind_table *da = &s.maps.d[id[a]];

			if (!live[a])
				continue;
			check_rows(&s, da, &c);
			for (int b = a + 1; b < MAX_IDS; b++) {
				const struct prec_unwind_table *db = &s.maps.d[id[b]];

				if (live[b])
					CHECK(da->first_row + per <= db->first_row ||
					      db->first_row + per <= da->first_row);
			}
		}
	}
	CHECK_EQ(n, 0);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.bytes, 0);
	CHECK_EQ(st.peak_bytes, (__u64)4 * per * 8);
	/* four loaded at once again: the freed runs came back together */
	for (int k = 1; k <= 4; k++) {
		bid_n(bid, 10 + k);
		CHECK_EQ(get(&s, bid, 20, 0x10000, &id[0], &bias), 0);
	}
	bid_n(bid, 15);
	CHECK_EQ(get(&s, bid, 20, 0x10000, &id[0], &bias), -ENOSPC);
	cfi_table__free(&c);
	store_close(&s);
}

/* A larger table (this test program's: many pages of code) after two
 * small ones went: their runs must have come back together. */
TEST(freed_runs_coalesce_for_a_larger_table)
{
	struct cfi_table c = { 0 }, big = { 0 };
	struct store s;
	__u8 bid[20];
	__u32 a, b, id;
	__u64 bias;
	int fd;

	CHECK_EQ(build_ref(&c), 0);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(cfi_table__build(fd, "exe", 1u << 20, &big), 0);
	CHECK(big.nr_segs > 0 && big.nr_rows > 0);
	CHECK(slots_per(&big) > 2 * slots_per(&c));
	store_open(&s, slots_per(&big), MAX_IDS);
	bid_n(bid, 1);
	CHECK_EQ(get(&s, bid, 20, 0x10000, &a, &bias), 0);
	bid_n(bid, 2);
	CHECK_EQ(get(&s, bid, 20, 0x10000, &b, &bias), 0);
	table_store__put(s.ts, a);
	table_store__put(s.ts, b);
	CHECK_EQ(table_store__get(s.ts, NULL, bid_a, 20, fd, "exe", 0x400000,
				  big.segs[0].offset & ~4095ull, &id, &bias), 0);
	/* and every pc of it (many pages) through its page index */
	check_rows(&s, &s.maps.d[id], &big);
	close(fd);
	cfi_table__free(&big);
	cfi_table__free(&c);
	store_close(&s);
}

TEST(limits_slots_and_ids)
{
	struct cfi_table c = { 0 };
	struct store s;
	struct table_store_stats st;
	__u8 bid[20];
	__u32 id, id1;
	__u64 bias;

	CHECK_EQ(build_ref(&c), 0);
	/* fewer slots than rows: refused, said, counted, not retried */
	store_open(&s, (__u32)c.nr_rows / 2, MAX_IDS);
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id, &bias), -ENOSPC);
	CHECK(table_store__ready(s.ts, NULL, bid_a, 20));
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id, &bias), -ENOSPC);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.built, 0);
	CHECK_EQ(st.full_files, 2);
	CHECK_EQ(s.maps.sets, 0);
	store_close(&s);

	/* room for one and a half: the second waits for the first to go */
	store_open(&s, slots_per(&c) * 3 / 2, MAX_IDS);
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id1, &bias), 0);
	bid_n(bid, 1);
	CHECK_EQ(get(&s, bid, 20, 0x10000, &id, &bias), -ENOSPC);
	table_store__put(s.ts, id1);
	CHECK(!table_store__ready(s.ts, NULL, bid, 20));	/* room again: build it */
	CHECK_EQ(get(&s, bid, 20, 0x10000, &id, &bias), 0);
	store_close(&s);

	/* two ids: a third table is refused, and so is a failing map */
	store_open(&s, 4096, 2);
	for (int k = 0; k < 2; k++) {
		bid_n(bid, k);
		CHECK_EQ(get(&s, bid, 20, 0x10000, &id, &bias), 0);
	}
	bid_n(bid, 2);
	CHECK_EQ(get(&s, bid, 20, 0x10000, &id, &bias), -ENFILE);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.loaded, 2);
	store_close(&s);

	store_open(&s, 4096, MAX_IDS);
	s.maps.fail = -EPERM;
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id, &bias), -EPERM);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.loaded, 0);
	CHECK_EQ(st.bytes, 0);
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id, &bias), 0);	/* and later works */
	check_rows(&s, &s.maps.d[id], &c);
	store_close(&s);
	cfi_table__free(&c);
}

TEST(bad_inputs)
{
	struct store s;
	struct table_store_stats st;
	__u8 long_bid[32] = { 1 };
	__u32 id;
	__u64 bias;
	int fd;

	store_open(&s, 4096, MAX_IDS);
	CHECK_EQ(get(&s, bid_a, 0, 0x10000, &id, &bias), -ENOENT);
	CHECK_EQ(get(&s, long_bid, 21, 0x10000, &id, &bias), -ENOENT);
	/* no fd (the file was not opened safely): not built, tried again */
	CHECK_EQ(table_store__get(s.ts, NULL, bid_a, 20, -1, "x", 0x10000, 0, &id, &bias), -ENOENT);
	CHECK(!table_store__ready(s.ts, NULL, bid_a, 20));
	/* not an ELF file: no table, and never tried again */
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(table_store__get(s.ts, NULL, bid_a, 20, fd, "cmdline", 0x10000, 0, &id, &bias), -ENOENT);
	close(fd);
	CHECK(table_store__ready(s.ts, NULL, bid_a, 20));
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id, &bias), -ENOENT);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.no_cfi, 1);
	/* a mapping of no executable segment: no reference kept, and a
	 * table loaded for it alone is dropped again */
	fd = open(fixture, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(table_store__get(s.ts, NULL, long_bid, 20, fd, "cfi_fixture.so", 0x10000, 1u << 30,
				  &id, &bias), -ENOENT);
	close(fd);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.loaded, 0);
	CHECK_EQ(st.bytes, 0);
	store_close(&s);
}


/* A hostile_unwind_elf.h file o in a temporary file: an open fd. */
static int hu_file(const struct hu_elf *o)
{
	char tmp[] = "/tmp/precord-ts-XXXXXX";
	size_t cap = 4u << 20, len;
	unsigned char *buf = malloc(cap);
	int fd;

	CHECK(buf != NULL);
	len = hu_elf_write(buf, cap, o);
	CHECK(len > 0);
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, buf, len), (ssize_t)len);
	unlink(tmp);
	free(buf);
	return fd;
}

TEST(bytes_follow_rows_not_the_claimed_range)
{
	static const struct hu_elf claim = { .memsz = 1ull << 30, .nr_fdes = 1, .rows = 2,
					     .range_to_memsz = 1, .id = 1 };
	int fd = hu_file(&claim);
	const struct prec_unwind_table *d;
	const struct prec_unwind_row *r;
	struct table_store_stats st;
	struct store s;
	__u32 id;
	__u64 bias;

	store_open(&s, 1u << 20, MAX_IDS);	/* 8 MiB */
	CHECK_EQ(table_store__get(s.ts, NULL, bid_a, 20, fd, "claim.so", 0x10000, 0, &id, &bias), 0);
	d = &s.maps.d[id];
	table_store__stats(s.ts, &st);
	printf("# 1 GiB claimed, %u rows: %llu bytes, %u pages of 2^%u\n", d->nr_rows,
	       (unsigned long long)st.bytes, d->nr_pages, d->page_shift);
	CHECK_EQ(d->nr_rows, 3);
	/* rows and index: 12 bytes a row at most, and a slot */
	CHECK(st.bytes <= 12ull * d->nr_rows + 8);	/* was 1,048,608 */
	CHECK(d->nr_pages <= d->nr_rows);
	/* and the walk still finds each row */
	r = walk_lookup(&s, d, HU_TEXT);
	CHECK(r && r->cfa_kind == PREC_CFA_SP && r->cfa_off == 8);
	r = walk_lookup(&s, d, HU_TEXT + 1);
	CHECK(r && r->cfa_kind == PREC_CFA_SP && r->cfa_off == 16);
	r = walk_lookup(&s, d, (1ull << 29) + 12345);
	CHECK(r && r->cfa_off == 16);
	r = walk_lookup(&s, d, (1ull << 30) - 1);
	CHECK(r && r->cfa_off == 16);
	r = walk_lookup(&s, d, 1ull << 30);
	CHECK(r && r->cfa_kind == PREC_CFA_NONE);
	CHECK(walk_lookup(&s, d, HU_TEXT - 1) == NULL);
	close(fd);
	store_close(&s);
}

/* One table of ~slots slots for file k (its own build-id). */
static int share_get(struct store *s, const struct table_owner *who, int k, __u32 *id)
{
	struct hu_elf o = { .nr_fdes = 100, .rows = 10, .id = (uint32_t)k };
	int fd = hu_file(&o), err;
	__u8 bid[20];
	__u64 bias;

	bid_n(bid, k);
	err = table_store__get(s->ts, who, bid, 20, fd, "rows.so", 0x10000, 0, id, &bias);
	close(fd);
	return err;
}

TEST(shares_of_a_process_and_a_user)
{
	const struct table_owner a = { 1, 100, 1000 }, b = { 2, 101, 1000 }, c = { 3, 102, 1000 },
				 root = { 4, 1, 0 }, other = { 5, 103, 2000 };
	struct table_store_target tg;
	struct table_store_stats st;
	struct store s;
	__u32 ids[FAKE_IDS], id, per, n_a = 0, n_b = 0, n_c = 0, n_root = 0;
	int k = 1, err;

	/* 100 FDEs of 10 rows: 1000 rows, 1,001 with the last NONE, and a
	 * page index of 4 KiB pages (1 KiB of code here): 1,003 slots */
	memset(&s, 0, sizeof(s));
	s.nr_slots = 40000;
	s.slots = calloc(s.nr_slots, 8);
	tg = (struct table_store_target){
		.slots = s.slots, .nr_slots = s.nr_slots, .nr_tables = FAKE_IDS,
		.proc_share = s.nr_slots / TABLE_STORE_PROC_SHARE,
		.user_share = s.nr_slots / TABLE_STORE_USER_SHARE,
		.set_table = fake_set, .ctx = &s.maps,
	};
	s.ts = table_store__new_target(&tg);
	CHECK(s.ts != NULL);
	/* process a: up to a quarter of the map */
	while (share_get(&s, &a, k++, &ids[n_a]) == 0)
		n_a++;
	table_store__stats(s.ts, &st);
	per = (__u32)(st.bytes / 8 / n_a);
	printf("# a process: %u tables of %u slots, %llu of %u slots\n", n_a, per,
	       (unsigned long long)st.bytes / 8, s.nr_slots);
	CHECK(per >= 1000 && per < 1100);
	CHECK(st.bytes / 8 <= s.nr_slots / 4);
	CHECK(st.bytes / 8 + per > s.nr_slots / 4);
	CHECK_EQ(st.share_files, 1);
	CHECK_EQ(st.full_files, 0);
	/* the same file again for a: refused without a build */
	CHECK_EQ(share_get(&s, &a, k - 1, &id), -EDQUOT);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.share_files, 2);
	/* a second process of the same user: up to half for the user */
	while (n_b < 64 && share_get(&s, &b, k++, &id) == 0)
		n_b++;
	CHECK_EQ(n_b, n_a);
	/* a third: up to the user's half */
	while ((err = share_get(&s, &c, k++, &id)) == 0)
		n_c++;
	CHECK_EQ(err, -EDQUOT);
	table_store__stats(s.ts, &st);
	printf("# a user: %u + %u + %u tables, %llu slots\n", n_a, n_b, n_c,
	       (unsigned long long)st.bytes / 8);
	CHECK(n_c < n_a);
	CHECK(st.bytes / 8 <= s.nr_slots / 2);
	CHECK(st.bytes / 8 + per > s.nr_slots / 2);
	/* root's processes have no user share, only their own */
	while (n_root < 64 && share_get(&s, &root, k++, &id) == 0)
		n_root++;
	CHECK_EQ(n_root, n_a);
	/* another user still has room: the map is not full */
	CHECK_EQ(share_get(&s, &other, k++, &id), 0);
	/* a's tables go: a has room again */
	for (__u32 i = 0; i < n_a; i++)
		table_store__put(s.ts, ids[i]);
	CHECK_EQ(share_get(&s, &a, k++, &id), 0);
	/* the one refused for a is built for another user */
	CHECK_EQ(share_get(&s, &other, n_a + 1, &id), 0);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.full_files, 0);
	store_close(&s);
}

TEST(build_stops_at_its_deadline_and_goes_on)
{
	static const struct hu_elf costly = { .nr_fdes = 8, .rows = 900, .remember = 1, .id = 9 };
	const struct table_owner who = { 1, 100, 1000 };
	int fd = hu_file(&costly), err;
	struct table_store_stats st;
	struct cfi_table c = { 0 };
	struct store s;
	unsigned calls = 0;
	__u32 id;
	__u64 bias;

	CHECK_EQ(cfi_table__build(fd, "costly.so", 1u << 20, &c), 0);
	store_open(&s, 1u << 16, MAX_IDS);
	do {
		err = table_store__build(s.ts, &who, bid_a, 20, fd, "costly.so", 1);
		calls++;
		CHECK(calls == 1 || !table_store__ready(s.ts, &who, bid_a, 20) || err == 0);
	} while (err == -EAGAIN && calls < 1000000);
	CHECK_EQ(err, 0);
	CHECK(calls > 1000);		/* a row a call */
	CHECK(table_store__ready(s.ts, &who, bid_a, 20));
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.built, 1);
	CHECK_EQ(st.steps, calls - 1);
	CHECK_EQ(table_store__get(s.ts, &who, bid_a, 20, -1, "costly.so", 0x10000, 0, &id, &bias), 0);
	check_rows(&s, &s.maps.d[id], &c);
	/* two builds stop and wait; a third is refused until one ends: none
	 * is thrown away (two users taking turns would never end theirs) */
	__u8 bid[20];

	for (int k = 1; k <= 2; k++) {
		bid_n(bid, k);
		CHECK_EQ(table_store__build(s.ts, &who, bid, 20, fd, "costly.so", 1), -EAGAIN);
		CHECK(table_store__building(s.ts, bid, 20));
	}
	CHECK(!table_store__can_start(s.ts));
	bid_n(bid, 3);
	CHECK_EQ(table_store__build(s.ts, &who, bid, 20, fd, "costly.so", 1), -EBUSY);
	CHECK(!table_store__building(s.ts, bid, 20));
	bid_n(bid, 1);
	CHECK_EQ(table_store__build(s.ts, &who, bid, 20, fd, "costly.so", 0), 0);
	CHECK(table_store__can_start(s.ts));
	bid_n(bid, 3);
	CHECK_EQ(table_store__build(s.ts, &who, bid, 20, fd, "costly.so", 1), -EAGAIN);
	/* a get of a stopped build's file ends it, here and now */
	bid_n(bid, 2);
	CHECK_EQ(table_store__get(s.ts, &who, bid, 20, -1, "costly.so", 0x10000, 0, &id, &bias), 0);
	check_rows(&s, &s.maps.d[id], &c);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.built, 3);
	/* the one left (bid 3) dropped: a slot again */
	{
		const __u8 *kb;
		__u8 kn;
		int kept = 0;

		for (int i = 0; i < TABLE_STORE_BUILDS; i++)
			if (table_store__kept(s.ts, i, &kb, &kn)) {
				CHECK(kn == 20 && kb[1] == 3);
				table_store__drop_kept(s.ts, i);
				kept++;
			}
		CHECK_EQ(kept, 1);
	}
	CHECK(!table_store__building(s.ts, bid, 20));
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.dropped_builds, 1);
	cfi_table__free(&c);
	close(fd);
	store_close(&s);
}

int main(int argc, char **argv)
{
	(void)argc;
	log_verbosity = getenv("TABLE_STORE_TEST_VERBOSE") ? 2 : -1;
	elf_version(EV_CURRENT);
	harness_fixture(argv[0], "cfi_fixture.so", fixture, sizeof(fixture));

	RUN(built_once_shared_and_every_pc_found);
	RUN(last_put_drops_and_a_reload_gets_a_new_gen);
	RUN(slots_under_loads_and_drops);
	RUN(freed_runs_coalesce_for_a_larger_table);
	RUN(limits_slots_and_ids);
	RUN(bad_inputs);
	RUN(bytes_follow_rows_not_the_claimed_range);
	RUN(shares_of_a_process_and_a_user);
	RUN(build_stops_at_its_deadline_and_goes_on);
	return HARNESS_DONE();
}
