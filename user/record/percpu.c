// SPDX-License-Identifier: GPL-2.0
#include "record/percpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "precord/bpf_abi.h"

/* The values of every possible CPU at key 0, in a new array of size
 * bytes each (NULL + *err). */
static void *read_all(int fd, size_t size, int *ncpu, int *err)
{
	__u32 zero = 0;
	void *v;

	*ncpu = libbpf_num_possible_cpus();
	if (*ncpu <= 0) {
		*err = *ncpu ? *ncpu : -EINVAL;
		return NULL;
	}
	v = calloc((size_t)*ncpu, size);
	if (!v) {
		*err = -ENOMEM;
		return NULL;
	}
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		*err = -errno;
		free(v);
		return NULL;
	}
	*err = 0;
	return v;
}

int percpu__sum_u64(int fd, __u64 *sum)
{
	int ncpu, err;
	__u64 *v = read_all(fd, sizeof(*v), &ncpu, &err);

	*sum = 0;
	for (int i = 0; v && i < ncpu; i++)
		*sum += v[i];
	free(v);
	return err;
}

int percpu__sum_agg_stats(int fd, struct prec_agg_stats *sum)
{
	int ncpu, err;
	struct prec_agg_stats *v = read_all(fd, sizeof(*v), &ncpu, &err);

	memset(sum, 0, sizeof(*sum));
	for (int i = 0; v && i < ncpu; i++) {
		sum->taken += v[i].taken;
		sum->full += v[i].full;
		sum->inserts += v[i].inserts;
	}
	free(v);
	return err;
}
