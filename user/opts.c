// SPDX-License-Identifier: GPL-2.0
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"

enum {
	OPT_CALL_GRAPH = 1000, OPT_TRACE, OPT_TRACE_ARGS, OPT_XRAY_OUT, OPT_JIT,
	OPT_NO_JIT, OPT_JITDUMP, OPT_PERF_MAP, OPT_MLPD, OPT_DURATION,
	OPT_BUILDID_DIR, OPT_VERSION, OPT_JIT_MAX_BYTES, OPT_UNWIND_MAX_BYTES,
	OPT_SWITCH_OUTPUT, OPT_SWITCH_MAX_FILES, OPT_AGGREGATE, OPT_ALL_CGROUPS,
	OPT_PUSH, OPT_HOST, OPT_BUILDID_CACHE_MAX, OPT_OFF_CPU, OPT_OFF_CPU_THRESH,
	OPT_PYTHON, OPT_NO_PYTHON, OPT_NO_DEBUGINFOD, OPT_DEBUGINFOD_TIMEOUT,
	OPT_DEBUGINFOD_MAX, OPT_DEBUG_ROOT,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "no-inherit", no_argument, NULL, 'i' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "event", required_argument, NULL, 'e' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "output", required_argument, NULL, 'o' },
	{ "clockid", required_argument, NULL, 'k' },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "trace-args", required_argument, NULL, OPT_TRACE_ARGS },
	{ "xray-out", required_argument, NULL, OPT_XRAY_OUT },
	{ "jit", no_argument, NULL, OPT_JIT },
	{ "no-jit", no_argument, NULL, OPT_NO_JIT },
	{ "python", no_argument, NULL, OPT_PYTHON },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
	{ "jitdump", required_argument, NULL, OPT_JITDUMP },
	{ "perf-map", required_argument, NULL, OPT_PERF_MAP },
	{ "mlpd", required_argument, NULL, OPT_MLPD },
	{ "jit-max-bytes", required_argument, NULL, OPT_JIT_MAX_BYTES },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "no-buildid-cache", no_argument, NULL, 'N' },
	{ "buildid-cache-max", required_argument, NULL, OPT_BUILDID_CACHE_MAX },
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
	{ "debuginfod-timeout", required_argument, NULL, OPT_DEBUGINFOD_TIMEOUT },
	{ "debuginfod-max", required_argument, NULL, OPT_DEBUGINFOD_MAX },
	{ "debug-root", required_argument, NULL, OPT_DEBUG_ROOT },
	{ "unwind-max-bytes", required_argument, NULL, OPT_UNWIND_MAX_BYTES },
	{ "switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT },
	{ "switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES },
	{ "aggregate", no_argument, NULL, OPT_AGGREGATE },
	{ "all-cgroups", no_argument, NULL, OPT_ALL_CGROUPS },
	{ "off-cpu", optional_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-thresh", required_argument, NULL, OPT_OFF_CPU_THRESH },
	{ "cgroup", required_argument, NULL, 'G' },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "host", required_argument, NULL, OPT_HOST },
	{ NULL, 0, NULL, 0 },
};

void opts_usage(FILE *f)
{
	fputs(
"usage: precord [options] [-- command [args]]\n"
"       precord check\n"
"\n"
"Record CPU samples (and traced function calls) of a command, of running\n"
"processes or of the whole system into a perf.data that perf reads.\n"
"\n"
"Targets:\n"
"  -p, --pid PID[,PID]     record these processes (all their threads, and\n"
"                          threads and children created later)\n"
"  -t, --tid TID[,TID]     record only these threads\n"
"  -a, --all-cpus          record every task on every CPU\n"
"  -i, --no-inherit        do not record children created later (threads\n"
"                          still are); binds --trace probes to the targets,\n"
"                          so other processes do not take their traps\n"
"  -C, --cpu LIST          only these CPUs (e.g. 0,2-3)\n"
"  -G, --cgroup NAME       with -a: only the tasks of cgroup NAME and of its\n"
"                          descendants (cgroup2; NAME relative to its mount,\n"
"                          or an absolute path under it)\n"
"  -- command [args]       run command and record it and its children; with\n"
"                          -p/-t/-a the command only sets the duration\n"
"Sampling:\n"
"  -e, --event NAME        cpu-clock (default) or task-clock; hardware events\n"
"                          (cycles, instructions) where the PMU has them\n"
"  -F, --freq HZ           samples per second (default 4000)\n"
"  -c, --count N           one sample every N events (ns for *-clock)\n"
"  -g                      record call chains (frame pointers)\n"
"      --call-graph fp     the same\n"
"      --call-graph dwarf[,SIZE]  record the user registers and SIZE bytes\n"
"                          of user stack (default 8192, a multiple of 8 up\n"
"                          to 65528) for perf to unwind code built without\n"
"                          frame pointers; costs up to SIZE bytes per sample\n"
"      --aggregate         count identical samples (thread, CPU with -a/-C,\n"
"                          stack) in the kernel; one sample per distinct\n"
"                          one each second, PERIOD = their summed periods\n"
"                          (count x N with -c N); not with dwarf\n"
"      --call-graph ehframe  unwind user stacks while recording, in BPF, with\n"
"                          tables built from each binary's .eh_frame: full\n"
"                          stacks without frame pointers at the size of -g\n"
"      --unwind-max-bytes SIZE  memory for those tables (64K to 2G, default\n"
"                          64M); files past it fall back to frame pointers\n"
"  -k, --clockid CLOCK     sample clock: monotonic (the only one, default)\n"
"  -m, --mmap-pages N      ring buffer size in 4 KiB pages (power of two)\n"
"      --all-cgroups       record each sample's cgroup (cgroup2) and the\n"
"                          cgroups' paths, for perf report --sort cgroup\n"
"      --off-cpu[=user]    also record where threads wait (asleep, not\n"
"                          preempted) as perf's offcpu-time event: stacks\n"
"                          taken at the switch, waits summed in the kernel,\n"
"                          PERIOD = nanoseconds off the CPU; =user: user\n"
"                          frames only (as perf; the kernel's unwinder is\n"
"                          most of the cost per switch); pushed to the\n"
"                          fleet store beside the CPU samples (query\n"
"                          --event offcpu)\n"
"      --off-cpu-thresh MS  waits of at least MS milliseconds (default 500)\n"
"                          are written one by one, at the time they end\n"
"Tracing:\n"
"      --trace [BIN:]GLOB  trace entry and exit of matching functions\n"
"                          (repeatable; BIN is a path or library name)\n"
"      --trace-args N      also record the first N integer arguments\n"
"      --xray-out FILE     also write the calls as an LLVM XRay FDR log\n"
"JIT code:\n"
"      --jit / --no-jit    merge JIT code (jitdump, perf maps, .mlpd) into\n"
"                          the recording (default on)\n"
"      --jitdump PATH      read this jitdump too\n"
"      --perf-map PATH     read this perf map too\n"
"      --mlpd PATH         read this Mono log-profiler file at the end\n"
"      --jit-max-bytes SIZE  read at most SIZE bytes from all JIT sources\n"
"                          together (suffix K, M, G, T; default 512M)\n"
"      --python / --no-python  name CPython 3.11-3.13 functions in the\n"
"                          stacks of -g and --call-graph ehframe (default\n"
"                          on; needs --jit, docs/python.md)\n"
"Output:\n"
"  -o, --output FILE       output file (default perf.data; an existing one\n"
"                          is renamed FILE.old)\n"
"      --duration SECS     stop after SECS seconds\n"
"      --switch-output[=signal|SIZE|TIME]  rotate: finish the file and start\n"
"                          a new one on SIGUSR2 (signal, the default), at\n"
"                          SIZE (100M) or every TIME (30s, 5m); each file is\n"
"                          renamed FILE.<timestamp> and its path printed on\n"
"                          stdout; SIGUSR2/SIGHUP switch now\n"
"      --switch-max-files N  keep only the newest N rotated files\n"
"      --push URL          with --switch-output: push each finished file to\n"
"                          the fleet store at URL (ClickHouse's HTTP port)\n"
"                          in the background (docs/fleet.md); give its\n"
"                          password in PRECORD_CH_PASSWORD (and the user in\n"
"                          PRECORD_CH_USER), not in the URL, which ps shows\n"
"      --host NAME         the host's name in the store (default: hostname)\n"
"      --buildid-dir DIR   build-id cache (default: perf's, ~/.debug), also\n"
"                          where --push takes symbols from\n"
"  -N, --no-buildid-cache  do not copy sampled binaries into the cache\n"
"      --buildid-cache-max SIZE  write at most SIZE bytes into the cache in\n"
"                          the run, min(SIZE, 1G) for one file (default 2G);\n"
"                          a binary past it is not cached, said once\n"
"      --no-debuginfod     do not ask the servers of DEBUGINFOD_URLS for the\n"
"                          debug files of sampled binaries without symbols\n"
"                          (local debug files are still used; docs/debuginfo.md)\n"
"      --debuginfod-timeout SECS  wait at most SECS after the recording (and\n"
"                          after each rotated file) for debug files (default 5)\n"
"      --debuginfod-max SIZE  download at most SIZE bytes of debug files in\n"
"                          the run (default 1G)\n"
"      --debug-root DIR    where local debug files are (default\n"
"                          /usr/lib/debug: DIR/.build-id/xx/yyyy.debug)\n"
"  -q, --quiet             no progress and no summary\n"
"  -v, --verbose           more messages (repeat for debug)\n"
"  -h, --help              this text\n"
"      --version           precord's version\n"
"\n"
"precord check: verify that this kernel has what precord needs.\n"
"precord fleet-schema | push | query URL ...: the fleet store (each has --help).\n", f);
}

static int bad(const char *fmt, const char *arg)
{
	log_before_print = NULL;
	fputs("precord: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see precord --help)\n", stderr);
	return -EINVAL;
}

static int parse_u64(const char *s, __u64 *out);

/* --call-graph fp | dwarf[,SIZE], perf's syntax (perf allows fp,SIZE too:
 * the size is then perf's kernel.perf_event_max_stack and ignored here). */
static int parse_call_graph(const char *arg, struct prec_opts *o)
{
	__u64 v = 8192;

	o->ehframe = false;
	if (!strcmp(arg, "fp") || !strncmp(arg, "fp,", 3)) {
		o->callchain = true;
		o->dwarf_stack_size = 0;
		return 0;
	}
	if (!strcmp(arg, "ehframe")) {
		o->callchain = true;
		o->dwarf_stack_size = 0;
		o->ehframe = true;
		return 0;
	}
	if (strcmp(arg, "dwarf") && strncmp(arg, "dwarf,", 6))
		return bad("call graph mode '%s' is not supported: use --call-graph fp, dwarf[,SIZE] or ehframe",
			   arg);
	if (arg[5] == ',' && (parse_u64(arg + 6, &v) || !v || v % 8 || v > 65528))
		return bad("bad --call-graph dwarf stack size '%s': give a multiple of 8 from 8 to 65528",
			   arg + 6);
	o->callchain = true;
	o->dwarf_stack_size = (__u32)v;
	return 0;
}

static int parse_u64(const char *s, __u64 *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A byte count with an optional K, M, G or T suffix (powers of 1024). */
static int parse_size(const char *s, __u64 *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	else if (*end == 'T' || *end == 't')
		shift = 40, end++;
	if (*end || v > (~0ULL >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/*
 * --switch-output[=signal|SIZE|TIME], perf's syntax: no argument or
 * "signal" switches on SIGUSR2; SIZE ends in B, K, M or G; TIME in s, m,
 * h or d (so 5m is five minutes and 5M five MiB).
 */
static int parse_switch_output(const char *arg, struct prec_opts *o)
{
	static const struct { char tag; double secs; unsigned int shift; } units[] = {
		{ 's', 1, 0 }, { 'm', 60, 0 }, { 'h', 3600, 0 }, { 'd', 86400, 0 },
		{ 'B', 0, 0 }, { 'K', 0, 10 }, { 'M', 0, 20 }, { 'G', 0, 30 },
	};
	unsigned long long v;
	char *end;

	o->switch_signal = !arg || !strcmp(arg, "signal");
	if (o->switch_signal)
		return 0;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || !v || !end[0] || end[1] || *arg == '-')
		goto fail;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (units[i].tag != *end)
			continue;
		if (units[i].secs)
			o->switch_secs = (double)v * units[i].secs;
		else if (v > (~0ULL >> units[i].shift))
			goto fail;
		else
			o->switch_bytes = v << units[i].shift;
		return 0;
	}
fail:
	return bad("bad --switch-output '%s': give signal, a size (100M) or a time (30s, 5m)",
		   arg);
}

static int parse_id_list(const char *s, int *ids, int *n, const char *what)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		__u64 v;

		if (parse_u64(tok, &v) || v == 0 || v > INT_MAX) {
			err = bad(what, tok);
			break;
		}
		if (*n >= PREC_MAX_PIDS) {
			err = bad("too many ids in '%s'", s);
			break;
		}
		ids[(*n)++] = (int)v;
	}
	free(copy);
	return err;
}

static int push(char ***arr, int *n, const char *v)
{
	char **na = realloc(*arr, (size_t)(*n + 1) * sizeof(char *));

	if (!na)
		return -ENOMEM;
	*arr = na;
	na[(*n)++] = (char *)v;
	return 0;
}

static int parse_clock(const char *s)
{
	if (!strcmp(s, "monotonic") || !strcmp(s, "mono") ||
	    !strcmp(s, "CLOCK_MONOTONIC") || !strcmp(s, "1"))
		return CLOCK_MONOTONIC;
	return -1;
}

int opts_parse(int argc, char **argv, struct prec_opts *o)
{
	int c, err = 0;
	__u64 v;

	memset(o, 0, sizeof(*o));
	o->freq = 4000;
	o->jit = true;
	o->python = true;
	o->clockid = CLOCK_MONOTONIC;
	o->argc = argc;
	o->argv = argv;
	if (argc > 1 && !strcmp(argv[1], "check")) {
		o->check = true;
		return argc > 2 ? bad("'check' takes no arguments, got '%s'", argv[2]) : 0;
	}
	opterr = 0;
	optind = 1;
	while (!err && (c = getopt_long(argc, argv, "+p:t:aiC:F:c:e:go:k:m:qvhNG:",
					long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_id_list(optarg, o->pids, &o->nr_pids, "bad PID '%s'");
			break;
		case 't':
			err = parse_id_list(optarg, o->tids, &o->nr_tids, "bad TID '%s'");
			break;
		case 'a':
			o->all_cpus = true;
			break;
		case 'C':
			o->cpu_list = optarg;
			break;
		case 'F':
			o->sample_explicit = true;
			if (!strcmp(optarg, "max"))
				v = 10000;
			else if (parse_u64(optarg, &v) || !v || v > 100000)
				return bad("bad frequency '%s': give 1 to 100000 Hz", optarg);
			o->freq = v;
			o->period = 0;
			break;
		case 'c':
			o->sample_explicit = true;
			if (parse_u64(optarg, &v) || !v)
				return bad("bad sample period '%s'", optarg);
			o->period = v;
			o->freq = 0;
			break;
		case 'e':
			o->sample_explicit = true;
			o->event = optarg;
			break;
		case 'g':
			o->sample_explicit = true;
			o->callchain = true;
			o->dwarf_stack_size = 0;
			break;
		case OPT_CALL_GRAPH:
			o->sample_explicit = true;
			if (parse_call_graph(optarg, o))
				return -EINVAL;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'k':
			o->clockid = parse_clock(optarg);
			if (o->clockid < 0)
				return bad("clock '%s' is not supported: precord records CLOCK_MONOTONIC (-k monotonic)",
					   optarg);
			break;
		case 'm':
			if (parse_u64(optarg, &v) || !v || (v & (v - 1)) || v > (1 << 20))
				return bad("bad --mmap-pages '%s': give a power of two", optarg);
			o->mmap_pages = (unsigned int)v;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			opts_usage(stdout);
			return 1;
		case OPT_VERSION:
			printf("precord version %s\n", PRECORD_VERSION);
			return 1;
		case OPT_TRACE:
			err = push(&o->trace_specs, &o->nr_trace_specs, optarg);
			break;
		case OPT_TRACE_ARGS:
			if (parse_u64(optarg, &v) || v > 6)
				return bad("bad --trace-args '%s': give 0 to 6", optarg);
			o->trace_args = (int)v;
			break;
		case OPT_XRAY_OUT:
			o->xray_out = optarg;
			break;
		case OPT_JIT:
			o->jit = true;
			break;
		case OPT_NO_JIT:
			o->jit = false;
			break;
		case OPT_PYTHON:
			o->python = true;
			break;
		case OPT_NO_PYTHON:
			o->python = false;
			break;
		case OPT_JITDUMP:
			err = push(&o->jitdumps, &o->nr_jitdumps, optarg);
			break;
		case OPT_PERF_MAP:
			err = push(&o->perf_maps, &o->nr_perf_maps, optarg);
			break;
		case OPT_MLPD:
			err = push(&o->mlpds, &o->nr_mlpds, optarg);
			break;
		case OPT_JIT_MAX_BYTES:
			if (parse_size(optarg, &o->jit_max_bytes) || !o->jit_max_bytes)
				return bad("bad --jit-max-bytes '%s': give a size > 0 such as 64M", optarg);
			break;
		case OPT_DURATION: {
			char *end;

			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0))
				return bad("bad --duration '%s': give seconds > 0", optarg);
			break;
		}
		case OPT_BUILDID_DIR:
			o->buildid_dir = optarg;
			break;
		case 'N':
			o->no_buildid_cache = true;
			break;
		case OPT_BUILDID_CACHE_MAX:
			if (parse_size(optarg, &o->buildid_cache_max) || !o->buildid_cache_max)
				return bad("bad --buildid-cache-max '%s': give a size > 0 such as 1G",
					   optarg);
			break;
		case OPT_NO_DEBUGINFOD:
			o->no_debuginfod = true;
			break;
		case OPT_DEBUGINFOD_TIMEOUT: {
			char *end;

			o->debuginfod_timeout = strtod(optarg, &end);
			if (*end || !(o->debuginfod_timeout > 0) || o->debuginfod_timeout > 3600)
				return bad("bad --debuginfod-timeout '%s': give seconds, > 0 and at most 3600",
					   optarg);
			break;
		}
		case OPT_DEBUGINFOD_MAX:
			if (parse_size(optarg, &o->debuginfod_max) || !o->debuginfod_max)
				return bad("bad --debuginfod-max '%s': give a size > 0 such as 512M",
					   optarg);
			break;
		case OPT_DEBUG_ROOT:
			o->debug_root = optarg;
			break;
		case 'i':
			o->no_inherit = true;
			break;
		case OPT_UNWIND_MAX_BYTES:
			if (parse_size(optarg, &o->unwind_max_bytes) || !o->unwind_max_bytes)
				return bad("bad --unwind-max-bytes '%s': give a size > 0 such as 256M",
					   optarg);
			break;
		case OPT_SWITCH_OUTPUT:
			if (parse_switch_output(optarg, o))
				return -EINVAL;
			break;
		case OPT_SWITCH_MAX_FILES:
			if (parse_u64(optarg, &v) || !v || v > 1000000)
				return bad("bad --switch-max-files '%s': give 1 to 1000000", optarg);
			o->switch_max_files = (int)v;
			break;
		case OPT_AGGREGATE:
			o->aggregate = true;
			break;
		case OPT_ALL_CGROUPS:
			o->all_cgroups = true;
			break;
		case OPT_OFF_CPU:
			o->off_cpu = true;
			if (optarg && strcmp(optarg, "user"))
				return bad("bad --off-cpu=%s: give --off-cpu, or --off-cpu=user for user frames only",
					   optarg);
			o->off_cpu_user = optarg != NULL;
			break;
		case OPT_OFF_CPU_THRESH:
			if (parse_u64(optarg, &o->off_cpu_thresh_ms) || !o->off_cpu_thresh_ms ||
			    o->off_cpu_thresh_ms > 1000000000ULL)
				return bad("bad --off-cpu-thresh '%s': give milliseconds from 1 to 1000000000",
					   optarg);
			break;
		case 'G':
			o->cgroup = optarg;
			break;
		case OPT_PUSH:
			o->push_url = optarg;
			break;
		case OPT_HOST:
			o->host = optarg;
			break;
		case '?':
		default:
			if (optopt && optopt < 256)
				return bad("unknown option '-%s'", (char[]){ (char)optopt, 0 });
			return bad("unknown option '%s'", argv[optind - 1]);
		case ':':
			return bad("option '%s' needs an argument", argv[optind - 1]);
		}
	}
	if (err)
		return err == -ENOMEM ? bad("%s", "out of memory") : err;
	if (optind < argc) {
		if (!strcmp(argv[optind - 1], "--") || optind > 0)
			o->cmd = &argv[optind];
	}
	if (!o->output)
		o->output = "perf.data";
	if ((o->nr_pids > 0) + (o->nr_tids > 0) + o->all_cpus > 1)
		return bad("%s", "give only one of -p, -t and -a");
	if (!o->nr_pids && !o->nr_tids && !o->all_cpus && !o->cmd)
		return bad("%s", "nothing to record: give a command after --, -p PID, -t TID or -a");
	if (o->xray_out && !o->nr_trace_specs)
		return bad("%s", "--xray-out needs --trace");
	if (o->trace_args && !o->nr_trace_specs)
		return bad("%s", "--trace-args needs --trace");
	if (o->switch_max_files && !o->switch_secs && !o->switch_bytes && !o->switch_signal)
		return bad("%s", "--switch-max-files needs --switch-output");
	if (o->push_url && !o->switch_secs && !o->switch_bytes && !o->switch_signal)
		return bad("%s", "--push needs --switch-output");
	if (o->cgroup && !o->all_cpus)
		return bad("%s", "-G/--cgroup needs -a: cgroup monitoring is only available in system-wide mode (as with perf record)");
	if (o->cgroup && o->nr_trace_specs)
		return bad("%s", "-G/--cgroup filters samples only, not --trace: record the cgroup's processes with -p instead");
	if (o->aggregate && o->dwarf_stack_size)
		return bad("%s", "--aggregate cannot count --call-graph dwarf samples (each carries its own stack copy): use -g");
	if (o->off_cpu_thresh_ms && !o->off_cpu)
		return bad("%s", "--off-cpu-thresh needs --off-cpu");
	if (o->off_cpu && !o->off_cpu_thresh_ms)
		o->off_cpu_thresh_ms = 500;	/* perf's default */
	if (o->unwind_max_bytes && !o->ehframe)
		return bad("%s", "--unwind-max-bytes needs --call-graph ehframe");
	if (o->unwind_max_bytes && (o->unwind_max_bytes < (64u << 10) ||
				    o->unwind_max_bytes > (2ull << 30)))
		return bad("%s", "--unwind-max-bytes must be from 64K to 2G");
	if (o->ehframe && !o->unwind_max_bytes)
		o->unwind_max_bytes = PREC_UNWIND_DEFAULT_BYTES;
	return 0;
}

void opts_free(struct prec_opts *o)
{
	free(o->trace_specs);
	free(o->jitdumps);
	free(o->perf_maps);
	free(o->mlpds);
}

bool opts_python(const struct prec_opts *o)
{
	return o->python && o->jit && o->callchain && !o->dwarf_stack_size;
}
