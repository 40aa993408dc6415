// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's DSO table (record/dsos.c) with many mappings: the cap
 * per process counted once per mapping and per process, forks sharing
 * their parent's mappings, forget and new_file freeing what no process
 * maps any more; and the cost of a mapping event, n against 16n mappings
 * in the same run (was a copy of the whole list per event: 16 times).
 * Names not starting with '/' are not opened: no file is needed.
 */
#include "harness.h"
#include "record/dsos.h"

#define CAP	65536		/* DSO_MAPS_PER_PROC */

static void map_n(struct dso_table *dt, __u32 pid, size_t from, size_t n, const char *name)
{
	for (size_t i = from; i < from + n; i++) {
		__u8 bid[20] = { 0 }, bid_size = 0;

		dso_table__mmap(dt, pid, 0x10000000 + i * 8192, 4096, name, NULL, bid, &bid_size);
	}
}

TEST(cap_counted_per_process)
{
	struct dso_table *dt = dso_table__new();
	struct dso_table_stats st;

	CHECK(dt != NULL);
	map_n(dt, 100, 0, CAP + 1000, "[anon:a]");
	map_n(dt, 200, 0, 10, "[anon:b]");
	st = dso_table__stats(dt);
	CHECK_EQ(st.maps_over, 1000);
	CHECK_EQ(st.procs_over, 1);
	CHECK_EQ(st.maps, CAP + 10);
	/* over the cap, a mapping still replaces what it covers: then
	 * there is room for the next */
	map_n(dt, 100, 0, 2, "[anon:c]");
	st = dso_table__stats(dt);
	CHECK_EQ(st.maps_over, 1001);
	CHECK_EQ(st.maps, CAP - 1 + 10);
	map_n(dt, 100, 0, 1, "[anon:c]");
	CHECK_EQ(dso_table__stats(dt).maps, CAP + 10);
	CHECK_EQ(dso_table__stats(dt).procs_over, 1);	/* said once */
	dso_table__free(dt);
}

TEST(fork_forget_new_file)
{
	struct dso_table *dt = dso_table__new();
	__u64 base = dso_table__build_id_bytes(dt), with_a;

	map_n(dt, 1, 0, 1000, "[anon:a]");
	with_a = dso_table__build_id_bytes(dt);
	CHECK(with_a > base);
	for (__u32 c = 2; c < 2002; c++)	/* 2000 children of 1000 mappings */
		dso_table__fork(dt, 1, c);
	CHECK_EQ(dso_table__stats(dt).maps, 1000 * 2001);
	map_n(dt, 2, 0, 1000, "[anon:b]");	/* child 2 replaces all of them */
	dso_table__forget(dt, 1);
	for (__u32 c = 3; c < 2002; c++)
		dso_table__forget(dt, c);
	dso_table__new_file(dt);		/* [anon:a] mapped by none now */
	CHECK_EQ(dso_table__stats(dt).maps, 1000);
	CHECK_EQ(dso_table__build_id_bytes(dt), with_a);	/* b's entry for a's */
	dso_table__forget(dt, 2);
	dso_table__new_file(dt);
	CHECK_EQ(dso_table__build_id_bytes(dt), base);
	dso_table__free(dt);
}

/* The nodes visited per event for the last n/4 mappings and n/4 hits of
 * a process with n mappings. */
static double steps_per_event(size_t n)
{
	struct dso_table *dt = dso_table__new();
	__u64 s0;

	map_n(dt, 7, 0, n, "[anon:x]");
	s0 = dso_table__stats(dt).steps;
	map_n(dt, 7, n, n / 4, "[anon:x]");
	for (size_t i = 0; i < n / 4; i++)
		dso_table__hit(dt, 7, 0x10000000 + (i * 7919 % n) * 8192);
	s0 = dso_table__stats(dt).steps - s0;
	dso_table__free(dt);
	return (double)s0 / (double)(n / 2);
}

/* Counted, not timed: a busy machine does not change it.  (Timed, the
 * code before took 65-130 us per event at 32,000 mappings, 11 to 116
 * times its time at 2,000; this one 0.6-1 us, 5-7 times: caches.) */
TEST(cost_per_event_sublinear)
{
	double a = steps_per_event(2000), b = steps_per_event(32000);

	fprintf(stderr, "  nodes visited per mapping or hit: %.1f at 2000 mappings, %.1f at 32000\n",
		a, b);
	CHECK(b < 3 * a);		/* a copy of the list per event: 16 times */
}

int main(void)
{
	RUN(cap_counted_per_process);
	RUN(fork_forget_new_file);
	RUN(cost_per_event_sublinear);
	return HARNESS_DONE();
}
