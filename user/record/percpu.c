// SPDX-License-Identifier: GPL-2.0
#include "record/percpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "precord/bpf_abi.h"

int percpu__sum_words(int fd, __u64 *sum, size_t words)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;
	__u64 *v;
	int err = 0;

	memset(sum, 0, words * sizeof(*sum));
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu * words, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, v))
		err = -errno;
	for (size_t i = 0; !err && i < (size_t)ncpu * words; i++)
		sum[i % words] += v[i];
	free(v);
	return err;
}

int percpu__sum_u64(int fd, __u64 *sum)
{
	return percpu__sum_words(fd, sum, 1);
}

int percpu__sum_agg_stats(int fd, struct prec_agg_stats *sum)
{
	_Static_assert(sizeof(*sum) % sizeof(__u64) == 0, "prec_agg_stats: u64 counters only");
	return percpu__sum_words(fd, (__u64 *)sum, sizeof(*sum) / sizeof(__u64));
}
