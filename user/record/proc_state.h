/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What precord knows of the live target processes, kept from the records
 * it writes: each thread's name and each process's mappings, as the
 * synthesized records of the start and the side-band since (COMM, FORK,
 * EXIT, MMAP2) left them.  A rotating recording (--switch-output) writes
 * them at the start of every new file, so that each file stands alone
 * without a /proc re-scan.  Exited processes are kept until collected
 * (the records of their last moments may still go into the next file)
 * and then freed: memory follows the live processes, not their churn.
 *
 * Records are taken as the kernel (or synth) wrote them: the side-band
 * is applied when it is read, which may be a little after the switch
 * time; a mapping or a name changed just after the switch then shows in
 * the new file's head as well as at its time (perf takes the later one).
 */
#ifndef PRECORD_RECORD_PROC_STATE_H
#define PRECORD_RECORD_PROC_STATE_H

#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "util/buf.h"

struct proc_state;

/*
 * A hostile process can make mappings without end (mmap at a new address
 * each time, never unmapped): past this many per process its new ones are
 * not kept (counted in the stats; their records are in the file they were
 * made in).  A large JVM maps a few thousand.  Each MMAP2 costs O(log n),
 * a FORK O(1) (the child shares its parent's mappings).
 */
#define PROC_STATE_MAX_MAPS	65536

/* id_type: the file's sample_type (the records' trailers).  NULL + errno. */
struct proc_state *proc_state__new(__u64 id_type);
void proc_state__free(struct proc_state *ps);		/* NULL-safe */

/* One record written to the file: COMM, FORK, EXIT and MMAP2 are taken,
 * other types ignored, a malformed one ignored.  -ENOMEM only. */
int proc_state__record(struct proc_state *ps, const struct perf_event_header *h);
/* Every record of buf (len bytes of whole records, e.g. what synth made). */
int proc_state__records(struct proc_state *ps, const void *buf, size_t len);

/* A COMM for every thread, then an MMAP2 for every mapping, of each
 * process alive at t (or that exited at t or later), into out. */
int proc_state__synthesize(const struct proc_state *ps, struct pbuf *out, __u64 t);
/* Free the processes that exited before t; forget(ctx, pid) is called
 * for each (the DSO table's maps go with them). */
void proc_state__collect(struct proc_state *ps, __u64 t,
			 void (*forget)(void *ctx, __u32 pid), void *ctx);

struct proc_state_stats {
	size_t procs, threads, maps;
	__u64 maps_over;	/* not kept: past PROC_STATE_MAX_MAPS */
};
struct proc_state_stats proc_state__stats(const struct proc_state *ps);

#endif
