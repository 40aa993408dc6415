/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function lookup for --trace [BINARY:]GLOB: symbols of .symtab and
 * .dynsym read with libelf, matched with fnmatch(3), placed at the file
 * offsets uprobes take.
 */
#ifndef PRECORD_TRACE_SYMBOLS_H
#define PRECORD_TRACE_SYMBOLS_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#define TRACE_MAX_FUNCS		1000	/* per pattern and in all */

struct trace_func {
	__u32 id;		/* XRay function id, 1.. */
	__u32 binary;		/* index in trace_syms.binaries */
	char *name;		/* symbol name */
	char *event;		/* perf event name without "precord:" */
	__u64 addr;		/* st_value */
	__u64 size;
	__u64 file_off;		/* where the uprobe goes */
};

struct trace_binary {
	char *path;		/* as the kernel and libelf open it */
	dev_t dev;
	ino_t ino;
};

struct trace_syms {
	struct trace_func *funcs;
	size_t nr_funcs, funcs_cap;
	struct trace_binary *binaries;
	size_t nr_binaries;
};

/*
 * Resolve one "[BINARY:]GLOB" and append the matching functions (each
 * binary+address once).  BINARY is a path, the basename of main_exe, or a
 * library name looked up in /proc/PID/maps (pid > 0) and then in the
 * usual library directories.  Without BINARY: main_exe.  Prints a message
 * (pr_err) and returns -errno on failure: -ENOENT (no such binary or no
 * match), -ENOEXEC (not ELF, no symbols), -E2BIG (too many matches).
 */
int trace_syms_add_spec(struct trace_syms *s, const char *spec, int pid,
			const char *main_exe);
void trace_syms_free(struct trace_syms *s);

/* Pure helpers (unit-tested). */
/* Split spec at its first ':'; *bin = NULL if there is none.  Returns
 * the glob part (a pointer into spec); copies BINARY into bin_buf. */
const char *trace_spec_split(const char *spec, char *bin_buf, size_t bin_size,
			     const char **bin);
/* perf-probe-like event name: [A-Za-z0-9_] kept, others become '_'. */
void trace_event_name(const char *sym, char *out, size_t size);
/* One /proc/PID/maps line: start, pgoff and path (NULL if anonymous).
 * Returns 0, or -EINVAL for a line that does not parse. */
int trace_maps_parse_line(const char *line, __u64 *start, __u64 *end, __u64 *pgoff,
			  const char **path);

#endif
