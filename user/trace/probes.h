/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The uprobes and uretprobes of a --trace session: the entry program on
 * every traced function, the return program on its returns, each with
 * bpf_cookie = PREC_TRACE_COOKIE(function id, binary, file offset).
 *
 * Two ways to attach, same programs and cookies:
 *   uprobe_multi links (Linux 6.6+): two per binary (and per bound
 *     process), made with the bpf() call; the programs must have been
 *     prepared with trace_probes__prepare() before loading.
 *   one perf-event uprobe and uretprobe per function (older kernels,
 *     or PRECORD_UPROBE_MULTI=0 in the environment).
 * Probes bound to processes (pids) trap in those processes only; unbound
 * ones trap in every process that runs the code.
 */
#ifndef PRECORD_TRACE_PROBES_H
#define PRECORD_TRACE_PROBES_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_link;
struct bpf_program;
struct trace_syms;

struct trace_probes {
	struct bpf_link **links;	/* one per uprobe (the fallback) */
	size_t nr_links;
	int *multi_fds;			/* uprobe_multi links */
	size_t nr_multi;
	size_t nr_probes;		/* uprobes + uretprobes attached */
	bool multi;			/* attached through uprobe_multi links */
};

/* Whether to try uprobe_multi links first (PRECORD_UPROBE_MULTI=0: no). */
bool trace_probes__multi_wanted(void);
/* Before loading: make entry and exit uprobe_multi programs.  0 or -errno. */
int trace_probes__prepare_multi(struct bpf_program *entry, struct bpf_program *exit);
/*
 * Attach entry and exit to every function of syms, bound to pids
 * (nr_pids > 0) or to every process (nr_pids 0); multi: as uprobe_multi
 * links (quietly: the caller falls back), else one link per probe (an
 * error names the function).  0 or -errno; on error whatever was attached
 * stays until trace_probes__detach().
 */
int trace_probes__attach(struct trace_probes *p, const struct bpf_program *entry,
			 const struct bpf_program *exit, const struct trace_syms *syms,
			 const int *pids, int nr_pids, bool multi);
/* Remove every probe (the structure can attach again). */
void trace_probes__detach(struct trace_probes *p);
void trace_probes__free(struct trace_probes *p);	/* detaches too */

#endif
