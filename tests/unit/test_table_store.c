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
 *    mapping of no executable segment.
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
#include "precord/bpf_abi.h"
#include "precord/unwind_abi.h"
#include "unwind/cfi_table.h"
#include "unwind/table_store.h"
#include "util/log.h"

#define MAX_IDS		8

static char fixture[PATH_MAX];

/* The tables map, in memory: what set_table wrote, and how often. */
struct fake_maps {
	struct prec_unwind_table d[MAX_IDS];
	unsigned sets;
	int fail;			/* -errno the next set returns, once */
};

static int fake_set(void *ctx, __u32 id, const struct prec_unwind_table *d)
{
	struct fake_maps *m = ctx;
	int err = m->fail;

	if (id >= MAX_IDS)
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
	err = table_store__get(s->ts, bid, n, fd, "cfi_fixture.so", start, 0, id, bias);
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
	__u64 page = pc >> PREC_UNWIND_PAGE_SHIFT;
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
	const struct prec_unwind_row *r = NULL;
	unsigned bad = 0;
	size_t next = 0;

	CHECK_EQ(d->nr_rows, c->nr_rows);
	for (__u64 pc = 0; pc < end; pc++) {
		const struct prec_unwind_row *w = walk_lookup(s, d, pc), *want;

		while (next < c->nr_rows && c->rows[next].pc <= pc)
			r = &c->rows[next++];
		/* past the last page: no row, as the walk says */
		want = pc >> PREC_UNWIND_PAGE_SHIFT >= d->nr_pages ? NULL : r;
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
	CHECK(!table_store__ready(s.ts, bid_a, 20));
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id1, &b1), 0);
	CHECK(table_store__ready(s.ts, bid_a, 20));
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
	CHECK_EQ(table_store__get(s.ts, bid_a, 20, fd, "exe", 0x400000,
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
	CHECK(table_store__ready(s.ts, bid_a, 20));
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
	CHECK(!table_store__ready(s.ts, bid, 20));	/* room again: build it */
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
	CHECK_EQ(table_store__get(s.ts, bid_a, 20, -1, "x", 0x10000, 0, &id, &bias), -ENOENT);
	CHECK(!table_store__ready(s.ts, bid_a, 20));
	/* not an ELF file: no table, and never tried again */
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(table_store__get(s.ts, bid_a, 20, fd, "cmdline", 0x10000, 0, &id, &bias), -ENOENT);
	close(fd);
	CHECK(table_store__ready(s.ts, bid_a, 20));
	CHECK_EQ(get(&s, bid_a, 20, 0x10000, &id, &bias), -ENOENT);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.no_cfi, 1);
	/* a mapping of no executable segment: no reference kept, and a
	 * table loaded for it alone is dropped again */
	fd = open(fixture, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(table_store__get(s.ts, long_bid, 20, fd, "cfi_fixture.so", 0x10000, 1u << 30,
				  &id, &bias), -ENOENT);
	close(fd);
	table_store__stats(s.ts, &st);
	CHECK_EQ(st.loaded, 0);
	CHECK_EQ(st.bytes, 0);
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
	return HARNESS_DONE();
}
