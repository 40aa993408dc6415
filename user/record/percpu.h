/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counters the BPF programs keep per CPU (a one-slot PERCPU_ARRAY),
 * summed over the possible CPUs.
 */
#ifndef PRECORD_RECORD_PERCPU_H
#define PRECORD_RECORD_PERCPU_H

#include <stddef.h>
#include <linux/types.h>

struct prec_agg_stats;

/* Key 0 of map fd, a value of `words` u64 counters, summed over the
 * CPUs counter by counter into sum: 0 or -errno (sum zeroed then). */
int percpu__sum_words(int fd, __u64 *sum, size_t words);
/* The __u64 at key 0 of map fd, summed: 0 or -errno (*sum 0 then). */
int percpu__sum_u64(int fd, __u64 *sum);
/* The struct prec_agg_stats at key 0 of map fd, summed field by field. */
int percpu__sum_agg_stats(int fd, struct prec_agg_stats *sum);

#endif
