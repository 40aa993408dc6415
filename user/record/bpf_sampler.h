/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF side of a recording (bpf/sample.bpf.c): the programs opened,
 * configured for the options and loaded, the fork/exit/exec tracepoints
 * that keep the kernel's target set, the ring buffer samples arrive in,
 * and the counters of what BPF could not keep.
 */
#ifndef PRECORD_RECORD_BPF_SAMPLER_H
#define PRECORD_RECORD_BPF_SAMPLER_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "opts.h"
#include "unwind/maps.h"

struct bpf_sampler;
struct bpf_program;
struct agg_maps;
struct prec_agg_stats;
struct prec_py_stats;

/* libbpf's messages as precord's verbosity says (-v, -vv). */
void bpf_sampler__set_logging(void);
/* Loaded and attached as o says (said why on failure): NULL + errno. */
struct bpf_sampler *bpf_sampler__new(const struct prec_opts *o);
void bpf_sampler__free(struct bpf_sampler *b);		/* NULL-safe */

/* What each ring record is handed to by bpf_sampler__consume(); a
 * negative return stops the poll. */
typedef int (*bpf_record_fn)(void *ctx, void *data, size_t size);
void bpf_sampler__set_consumer(struct bpf_sampler *b, bpf_record_fn fn, void *ctx);
/* Records available now (those pump() took first), or -errno. */
int bpf_sampler__consume(struct bpf_sampler *b);
/*
 * Take what is in the ring off it, into memory, for the next consume() to
 * hand on: while the side-band is handled (seconds, on a loaded machine
 * with many new processes), the ring does not fill.  0 or -errno.
 */
int bpf_sampler__pump(struct bpf_sampler *b);
/* Readable when the ring has data. */
int bpf_sampler__epoll_fd(const struct bpf_sampler *b);

/* The program the sampling events run on overflow. */
struct bpf_program *bpf_sampler__program(const struct bpf_sampler *b);
/* --call-graph ehframe: the unwinder's maps, for user/unwind/. */
void bpf_sampler__unwind_maps(const struct bpf_sampler *b, struct unwind_map_fds *out);
/* The kernel's target set (a map of u32 ids). */
int bpf_sampler__targets_fd(const struct bpf_sampler *b);
/* Python: the py_procs map (pid -> struct prec_py_proc), and the walks'
 * counters summed over the CPUs (0 or -errno). */
int bpf_sampler__py_procs_fd(const struct bpf_sampler *b);
int bpf_sampler__py_stats(const struct bpf_sampler *b, struct prec_py_stats *sum);
/* -G: sample only the tasks of the cgroup open at cgroup_fd and of its
 * descendants (until this is called, none).  0 or -errno. */
int bpf_sampler__only_cgroup(struct bpf_sampler *b, int cgroup_fd);
/* Keep samples from now on (until then the programs drop them): the
 * start of the recording, once what exists is synthesized. */
void bpf_sampler__start(struct bpf_sampler *b);
/* Sample the command pid from its exec on. */
void bpf_sampler__follow_exec(struct bpf_sampler *b, pid_t pid);

/* Samples dropped so far (the ring was full). */
__u64 bpf_sampler__drops(const struct bpf_sampler *b);
/* New processes of the targets left out because the set was full; its
 * capacity in *capacity. */
__u64 bpf_sampler__targets_full(const struct bpf_sampler *b, __u32 *capacity);

/* --aggregate: the maps of the counts, and their counters summed over
 * the CPUs (0 or -errno). */
void bpf_sampler__agg_maps(const struct bpf_sampler *b, struct agg_maps *m);
int bpf_sampler__agg_stats(const struct bpf_sampler *b, struct prec_agg_stats *sum);

#endif
