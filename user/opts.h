/* SPDX-License-Identifier: GPL-2.0 */
/* Command line → validated struct prec_opts.  No BPF, no I/O. */
#ifndef PRECORD_OPTS_H
#define PRECORD_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define PREC_MAX_PIDS	256
/* --unwind-max-bytes by default: 8 M rows of unwind tables, allocated
 * when recording starts (libc's table takes about 0.5 MiB) */
#define PREC_UNWIND_DEFAULT_BYTES	(64ull << 20)

struct prec_opts {
	int pids[PREC_MAX_PIDS];	/* -p */
	int nr_pids;
	int tids[PREC_MAX_PIDS];	/* -t */
	int nr_tids;
	bool all_cpus;			/* -a */
	bool no_inherit;		/* -i: children created later are not targets */
	char *cpu_list;			/* -C */
	__u64 freq;			/* -F, 0 when -c is given */
	__u64 period;			/* -c */
	char *event;			/* -e */
	bool callchain;			/* -g / --call-graph fp or dwarf */
	__u32 dwarf_stack_size;		/* --call-graph dwarf[,SIZE]; 0 = fp/none */
	bool ehframe;			/* --call-graph ehframe: unwound in BPF */
	__u64 unwind_max_bytes;		/* --unwind-max-bytes: table memory, 0 = default */
	double switch_secs;		/* --switch-output=TIME, 0 = none */
	__u64 switch_bytes;		/* --switch-output=SIZE, 0 = none */
	bool switch_signal;		/* --switch-output[=signal]: on SIGUSR2 */
	int switch_max_files;		/* --switch-max-files N, 0 = keep all */
	bool aggregate;			/* --aggregate: identical stacks counted in BPF */
	bool all_cgroups;		/* --all-cgroups */
	bool off_cpu;			/* --off-cpu: waiting time as offcpu-time */
	bool off_cpu_user;		/* --off-cpu=user: user frames only */
	__u64 off_cpu_thresh_ms;	/* --off-cpu-thresh: waits written one by one */
	char *cgroup;			/* -G/--cgroup NAME: only that cgroup's tasks */
	char *push_url;			/* --push URL: push each finished file */
	char *host;			/* --host NAME: the host's name in the store */
	char *output;			/* -o, default perf.data */
	int clockid;			/* -k */
	bool quiet;			/* -q */
	int verbose;			/* -v count */
	double duration;		/* --duration SECS, 0 = until done */
	char **trace_specs;		/* --trace, repeatable */
	int nr_trace_specs;
	int trace_args;			/* --trace-args N */
	char *xray_out;			/* --xray-out FILE */
	bool jit;			/* --jit (default) / --no-jit */
	bool python;			/* --python (default) / --no-python */
	char **jitdumps;		/* --jitdump PATH, repeatable */
	int nr_jitdumps;
	char **perf_maps;		/* --perf-map PATH */
	int nr_perf_maps;
	char **mlpds;			/* --mlpd PATH */
	int nr_mlpds;
	__u64 jit_max_bytes;		/* --jit-max-bytes, 0 = default */
	char *buildid_dir;		/* --buildid-dir DIR */
	bool no_buildid_cache;		/* -N */
	__u64 buildid_cache_max;	/* --buildid-cache-max, 0 = default */
	bool no_debuginfod;		/* --no-debuginfod */
	double debuginfod_timeout;	/* --debuginfod-timeout, 0 = default */
	__u64 debuginfod_max;		/* --debuginfod-max, 0 = default */
	char *debug_root;		/* --debug-root DIR, NULL = /usr/lib/debug */
	unsigned int mmap_pages;	/* -m: ring buffer size in pages per ring */
	char **cmd;			/* after --, NULL-terminated */
	int argc;			/* the whole command line, for CMDLINE */
	char **argv;
	bool check;			/* `precord check` */
	bool sample_explicit;		/* -F/-c/-e/-g given: sample even with --trace */
};

/* Returns 0 and fills o, 1 when --help/--version was printed (exit 0), or
 * -EINVAL after printing one line that says what is wrong. */
int opts_parse(int argc, char **argv, struct prec_opts *o);
void opts_free(struct prec_opts *o);
void opts_usage(FILE *f);
/* Python frames are walked and named: --python with a callchain that
 * is written whole (-g, ehframe; not dwarf) and JIT merging (the images). */
bool opts_python(const struct prec_opts *o);

#endif
