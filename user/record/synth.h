/* SPDX-License-Identifier: GPL-2.0 */
/* Records synthesized at the start for what already exists: the kernel
 * map, modules, and processes that run before the recording starts.
 * id_type: the file's sample_type, which says the records' trailer
 * (perfdata/record.h); the trailers are zeros. */
#ifndef PRECORD_RECORD_SYNTH_H
#define PRECORD_RECORD_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct dso_table;

/* PERF_RECORD_MMAP for [kernel.kallsyms]_text and each module. */
int synth_kernel(struct pbuf *out, __u64 id_type);

/* COMM for every thread of pid (and FORK with `fork`), MMAP2 for its
 * executable mappings (build-ids read from the mapped files, entered in
 * dt), and with data_maps its readable data mappings (misc MMAP_DATA).
 * Returns -ESRCH when the process does not exist. */
int synth_process(struct pbuf *out, __u64 id_type, struct dso_table *dt, __u32 pid,
		  bool fork, bool data_maps);

/* synth_process(…, fork, data_maps) for every process in /proc (-a). */
int synth_all(struct pbuf *out, __u64 id_type, struct dso_table *dt, bool data_maps);

/* The name of process pid (its main thread's), ":PID" if unknown. */
void proc_comm(__u32 pid, char *comm, size_t n);

/* Thread group id of a thread, or -errno. */
int proc_tgid(__u32 tid);

#endif
