// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching the --trace programs (see probes.h).
 *
 * uprobe_multi links: besides taking 2 bpf() calls per binary instead of
 * 2 perf_event_open() + 2 links per function, a hit reaches the program
 * without the perf trace-event layer (~7 ns less per hit here).  libbpf
 * 1.1 (Debian 12) predates bpf_program__attach_uprobe_multi() and its
 * headers predate the attribute, so the link is made with the bpf() call
 * and the layout of BPF_LINK_CREATE's attribute for this attach type is
 * written out here.
 */
#include "trace/probes.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "precord/bpf_abi.h"
#include "trace/symbols.h"
#include "util/log.h"

#define UPROBE_MULTI_ATTACH	48	/* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN	1u	/* BPF_F_UPROBE_MULTI_RETURN */

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
};

bool trace_probes__multi_wanted(void)
{
	const char *e = getenv("PRECORD_UPROBE_MULTI");

	return !e || strcmp(e, "0") != 0;
}

int trace_probes__prepare_multi(struct bpf_program *entry, struct bpf_program *exit)
{
	int err = bpf_program__set_expected_attach_type(entry, UPROBE_MULTI_ATTACH);

	return err ? err : bpf_program__set_expected_attach_type(exit, UPROBE_MULTI_ATTACH);
}

static __u64 cookie_of(const struct trace_func *f)
{
	return PREC_TRACE_COOKIE(f->id, f->binary, f->file_off);
}

static int link_multi(int prog_fd, const char *path, const __u64 *offsets,
		      const __u64 *cookies, __u32 cnt, bool ret, int pid)
{
	struct uprobe_multi_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (__u32)prog_fd;
	a.attach_type = UPROBE_MULTI_ATTACH;
	a.path = (__u64)(uintptr_t)path;
	a.offsets = (__u64)(uintptr_t)offsets;
	a.cookies = (__u64)(uintptr_t)cookies;
	a.cnt = cnt;
	a.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	a.pid = (__u32)pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

/* Two links (entry, return) per binary and bound process. */
static int attach_multi(struct trace_probes *p, const struct bpf_program *prog[2],
			const struct trace_syms *syms, const int *pids, int nr_bind)
{
	size_t nr = syms->nr_funcs, b, i;
	__u64 *offsets = calloc(nr, sizeof(*offsets)), *cookies = calloc(nr, sizeof(*cookies));
	int err = 0, k, pi;

	p->multi_fds = calloc(2 * syms->nr_binaries * (size_t)nr_bind, sizeof(*p->multi_fds));
	if (!p->multi_fds || !offsets || !cookies)
		err = -ENOMEM;
	for (b = 0; b < syms->nr_binaries && !err; b++) {
		__u32 cnt = 0;

		for (i = 0; i < nr; i++) {
			const struct trace_func *f = &syms->funcs[i];

			if (f->binary == b) {
				offsets[cnt] = f->file_off;
				cookies[cnt++] = cookie_of(f);
			}
		}
		for (pi = 0; pi < nr_bind && cnt && !err; pi++) {
			int pid = pids ? pids[pi] : 0;

			for (k = 0; k < 2 && !err; k++) {
				int fd = link_multi(bpf_program__fd(prog[k]), syms->binaries[b].path,
						    offsets, cookies, cnt, k == 1, pid);

				if (fd < 0) {
					err = fd;
					pr_debug("trace: uprobe_multi link for %s (pid %d): %s",
						 syms->binaries[b].path, pid, strerror(-err));
					break;
				}
				p->multi_fds[p->nr_multi++] = fd;
				p->nr_probes += cnt;
			}
		}
	}
	free(offsets);
	free(cookies);
	return err;
}

/* One perf-event uprobe per function, probe kind and bound process. */
static int attach_each(struct trace_probes *p, const struct bpf_program *prog[2],
		       const struct trace_syms *syms, const int *pids, int nr_bind)
{
	size_t nr = syms->nr_funcs, i;
	int k;

	p->links = calloc(2 * nr * (size_t)nr_bind + 1, sizeof(*p->links));
	if (!p->links)
		return -ENOMEM;
	for (i = 0; i < nr * (size_t)nr_bind; i++) {
		const struct trace_func *f = &syms->funcs[i % nr];
		const char *path = syms->binaries[f->binary].path;
		int pid = pids ? pids[i / nr] : -1;

		for (k = 0; k < 2; k++) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie_of(f),
				    .retprobe = k == 1);
			struct bpf_link *l = bpf_program__attach_uprobe_opts(prog[k], pid, path,
									     f->file_off, &uo);

			if (!l) {
				int err = -errno;

				pr_err("trace: cannot attach %s to %s in %s: %s",
				       k ? "uretprobe" : "uprobe", f->name, path, strerror(-err));
				return err;
			}
			p->links[p->nr_links++] = l;
			p->nr_probes++;
		}
	}
	return 0;
}

int trace_probes__attach(struct trace_probes *p, const struct bpf_program *entry,
			 const struct bpf_program *exit, const struct trace_syms *syms,
			 const int *pids, int nr_pids, bool multi)
{
	const struct bpf_program *prog[2] = { entry, exit };
	int nr_bind = nr_pids > 0 ? nr_pids : 1;

	if (nr_pids <= 0)
		pids = NULL;
	trace_probes__free(p);
	p->multi = multi;
	return multi ? attach_multi(p, prog, syms, pids, nr_bind)
		     : attach_each(p, prog, syms, pids, nr_bind);
}

void trace_probes__detach(struct trace_probes *p)
{
	size_t i;

	for (i = 0; i < p->nr_links; i++)
		bpf_link__destroy(p->links[i]);
	p->nr_links = 0;
	for (i = 0; i < p->nr_multi; i++)
		close(p->multi_fds[i]);
	p->nr_multi = 0;
	p->nr_probes = 0;
}

void trace_probes__free(struct trace_probes *p)
{
	trace_probes__detach(p);
	free(p->links);
	free(p->multi_fds);
	p->links = NULL;
	p->multi_fds = NULL;
}
