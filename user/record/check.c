// SPDX-License-Identifier: GPL-2.0
/*
 * `precord check`: try each kernel feature precord uses and name the
 * Kconfig option (see Kconfig.example) behind any that is missing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record/events.h"
#include "record/session.h"
#include "sample.skel.h"
#include "util/log.h"

static int failures;

static void report(bool ok, const char *what, const char *why)
{
	printf("%-4s %-44s %s\n", ok ? "ok" : "FAIL", what, ok ? "" : why);
	if (!ok)
		failures++;
}

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l; (void)f; (void)ap;
	return 0;
}

/* The dwarf-mode program alone: it needs bpf_task_pt_regs (5.15). */
static bool dwarf_loads(void)
{
	struct sample_bpf *skel = sample_bpf__open();
	int err;

	if (!skel)
		return false;
	bpf_program__set_autoload(skel->progs.on_sample, false);
	skel->rodata->dwarf_stack_size = 8192;
	skel->rodata->want_callchain = true;
	err = sample_bpf__load(skel);
	sample_bpf__destroy(skel);
	return !err;
}

int record_check_prereqs(void)
{
	if (geteuid() != 0) {
		pr_err("must run as root to load BPF programs and open perf events: try 'sudo precord ...'");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): precord needs CONFIG_DEBUG_INFO_BTF=y; run 'precord check'");
		return -ENOENT;
	}
	return 0;
}

int record_check(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000, .disabled = 1,
	};
	struct sample_bpf *skel;
	int fd, err;
	char buf[64] = "";
	FILE *f;

	libbpf_set_print(silent);
	report(geteuid() == 0, "running as root", "run as root (sudo precord ...)");
	report(access("/sys/kernel/btf/vmlinux", R_OK) == 0, "kernel BTF (/sys/kernel/btf/vmlinux)",
	       "CONFIG_DEBUG_INFO_BTF=y");
	fd = sys_perf_event_open(&a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	report(fd >= 0, "perf events (cpu-clock)", "CONFIG_PERF_EVENTS=y, and root");
	skel = sample_bpf__open();
	if (skel)
		bpf_program__set_autoload(skel->progs.on_sample_dwarf, false);
	err = skel ? sample_bpf__load(skel) : -errno;
	report(!err, "BPF programs, ring buffer, CO-RE", "CONFIG_BPF_SYSCALL=y, CONFIG_BPF_EVENTS=y, kernel >= 5.8");
	if (!err && fd >= 0) {
		struct bpf_link *l = bpf_program__attach_perf_event(skel->progs.on_sample, fd);

		report(l != NULL, "BPF program on a perf event", "CONFIG_BPF_EVENTS=y");
		bpf_link__destroy(l);
	}
	if (!err) {
		struct bpf_link *l = bpf_program__attach(skel->progs.on_fork);

		report(l != NULL, "BTF tracepoint sched_process_fork", "CONFIG_DEBUG_INFO_BTF=y, CONFIG_FTRACE (raw tracepoints)");
		bpf_link__destroy(l);
	}
	sample_bpf__destroy(skel);
	report(dwarf_loads(), "--call-graph dwarf (user regs and stack)",
	       "kernel >= 5.15 (bpf_task_pt_regs, bpf_probe_read_user)");
	if (fd >= 0)
		close(fd);
	report(access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0,
	       "uprobe PMU (for --trace)", "CONFIG_UPROBES=y, CONFIG_UPROBE_EVENTS=y");
	f = fopen("/proc/kallsyms", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	report(buf[0] && strncmp(buf, "0000000000000000", 16), "kernel symbol addresses (/proc/kallsyms)",
	       "CONFIG_KALLSYMS=y, and kernel.kptr_restrict < 2");
	report(access("/proc/self/map_files", R_OK) == 0, "/proc/PID/map_files (container binaries)",
	       "CONFIG_CHECKPOINT_RESTORE=y");
	printf("%s\n", failures ? "precord check: some features are missing" :
	       "precord check: this kernel has everything precord needs");
	return failures ? 1 : 0;
}
