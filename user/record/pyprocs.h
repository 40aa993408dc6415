/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPython processes of a recording (docs/python.md):
 *  - found when a target maps an ELF file (the python binary or libpython)
 *    whose .dynsym defines _PyRuntime, _PyEval_EvalFrameDefault,
 *    PyCode_Type, PyUnicode_Type and Py_Version; the version is read from
 *    Py_Version in the process; a supported one gets an entry in the BPF
 *    py_procs map (where _PyRuntime is, the layout's offsets), an
 *    unsupported one one line and its native frames;
 *  - a sample's Python frames (code object addresses) are spliced into its
 *    user chain, each as an address of a synthetic range (PY_IMAGE_BASE:
 *    above any user-space address x86-64 can map, below perf's kernel
 *    start), one 16-byte slot per code object and process (never reused
 *    in a recording, so a pid reused cannot mix two processes' names),
 *    named in the JIT images (jit_sources__add_named) as
 *    "qualname (file.py:line)", mapped from the process's detection on;
 *    the names are read with process_vm_readv, once per code object and
 *    again (at most once a second) to notice an address reused by another
 *    one; what cannot be read is one "[python unknown]" slot per process.
 */
#ifndef PRECORD_RECORD_PYPROCS_H
#define PRECORD_RECORD_PYPROCS_H

#include <stdbool.h>
#include <linux/types.h>

#define PY_IMAGE_BASE		(1ULL << 56)	/* 57-bit user space ends below */
#define PY_SLOT_BYTES		16
#define PY_MAX_SLOTS_PROC	65536		/* code objects named per process */
#define PY_MAX_SLOTS		(256u * 1024)	/* all processes together */
#define PY_MAX_PROCS		4096		/* = the BPF map's entries */

struct pyprocs;
struct jit_sources;
struct prec_py_stats;

/* map_fd: the BPF py_procs map; js: where the names go (not NULL). */
struct pyprocs *pyprocs__new(int map_fd, struct jit_sources *js);
void pyprocs__free(struct pyprocs *p);		/* NULL-safe */

/* A dso_mmap_observer's mapped (ctx: the pyprocs): fd is the mapped file. */
void pyprocs__mmap(void *ctx, __u32 pid, __u64 start, __u64 len, __u64 pgoff, int fd,
		   const char *name, const __u8 *bid, __u8 bid_size);
/* The side-band of targets (NULL-safe); sideband_time: the time of the
 * record whose mappings are told next (0 for the synthesized ones). */
void pyprocs__sideband_time(struct pyprocs *p, __u64 time);
void pyprocs__fork(struct pyprocs *p, __u32 ppid, __u32 pid, __u64 time);
void pyprocs__exec(struct pyprocs *p, __u32 pid);
void pyprocs__exit(struct pyprocs *p, __u32 pid, __u64 time);

/*
 * A sample's user chain with its Python frames spliced in (pyframes.h
 * py_splice; leaf: user[0] is the sampled ip), at most cap frames into
 * out; returns how many.  A process not (or no longer) known keeps user
 * only (counted).
 */
__u32 pyprocs__splice(struct pyprocs *p, __u32 pid, __u64 time, bool leaf, const __u64 *user,
		      __u32 nu, const __u64 *py, __u32 npy, __u64 *out, __u32 cap);

/* The closing summary's lines: processes, names, limits (bpf: the BPF
 * walks' counters, NULL: none).  NULL-safe. */
void pyprocs__print_stats(const struct pyprocs *p, const struct prec_py_stats *bpf);

#endif
