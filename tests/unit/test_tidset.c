// SPDX-License-Identifier: GPL-2.0
/* The target set of user space: adds, removals (exits), pid reuse. */
#include <stdlib.h>

#include "harness.h"
#include "record/tidset.h"

/* A set that sees ~9000 processes come and go stays small and exact. */
TEST(exits_leave_the_set)
{
	struct tidset s = { 0 };

	CHECK_EQ(tidset_add(&s, 100), 0);
	for (__u32 pid = 1000; pid < 10000; pid++) {
		CHECK_EQ(tidset_add(&s, pid), 0);
		CHECK(tidset_has(&s, pid));
		tidset_del(&s, pid);
		CHECK(!tidset_has(&s, pid));
	}
	CHECK_EQ(s.nr, 1);
	CHECK(s.cap <= 64);
	CHECK(tidset_has(&s, 100));
	tidset_del(&s, 12345);		/* not there: nothing happens */
	tidset_del(&s, 0);
	CHECK_EQ(s.nr, 1);
	tidset_free(&s);
}

/*
 * Removal in the middle of collision runs: every key that stays is still
 * found, every key removed is not (a model array says which is which).
 */
TEST(removal_keeps_probe_runs)
{
	static char in[1 << 16];
	struct tidset s = { 0 };
	unsigned int seed = 7;
	size_t live = 0;

	for (int round = 0; round < 200000; round++) {
		__u32 id = 1 + (__u32)(rand_r(&seed) % 3000);

		if (rand_r(&seed) % 3) {
			CHECK_EQ(tidset_add(&s, id), 0);
			live += !in[id];
			in[id] = 1;
		} else {
			tidset_del(&s, id);
			live -= in[id];
			in[id] = 0;
		}
	}
	CHECK_EQ(s.nr, live);
	for (__u32 id = 1; id <= 3000; id++)
		CHECK_EQ(tidset_has(&s, id), in[id]);
	tidset_free(&s);
}

int main(void)
{
	RUN(exits_leave_the_set);
	RUN(removal_keeps_probe_runs);
	return HARNESS_DONE();
}
