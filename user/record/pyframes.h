/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython frames, the parts with no process attached (record/pyprocs.c
 * attaches them): the table of interpreter layouts by version, the
 * reader of a code object's names (through a read callback, so that
 * tests give it hostile memory), and the splice of the Python frames a
 * sample carries into its native user chain.  docs/python.md.
 */
#ifndef PRECORD_RECORD_PYFRAMES_H
#define PRECORD_RECORD_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "precord/bpf_abi.h"

/* Bounds of what is read from a code object's strings (code points). */
#define PY_MAX_QUALNAME		256
#define PY_MAX_FILENAME		1024
/* A frame's symbol: "qualname (file.py:line)" at most. */
#define PY_MAX_SYMBOL		(4 * PY_MAX_QUALNAME + 4 * PY_MAX_FILENAME + 32)

struct py_layout {
	__u32 version;			/* PY_VERSION_HEX >> 16: 0x030b is 3.11 */
	const char *name;		/* "3.11" */
	const char *debug_cookie;	/* what _PyRuntime starts with (3.13+:
					 * _Py_DebugOffsets), NULL: nothing */
	struct prec_py_proc walk;	/* the BPF walk's offsets (runtime: 0) */
	/* PyCodeObject */
	__u16 co_filename, co_qualname, co_firstlineno;
	/* str (PyASCIIObject / PyCompactUnicodeObject) */
	__u16 ob_type, str_length, str_state, ascii_data, compact_data;
};

/* The layout of the CPython whose Py_Version is hex, NULL: unsupported. */
const struct py_layout *py_layout_find(__u64 py_version);

/* Reads len bytes at addr of the process: 0, or -errno (-EFAULT). */
typedef int (*py_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

struct py_types {			/* addresses in the process */
	__u64 code;			/* PyCode_Type */
	__u64 unicode;			/* PyUnicode_Type */
};

/* What tells two code objects at one address apart. */
struct py_code_id {
	__u64 qualname, filename;	/* the str objects' addresses */
	__s32 firstlineno;
};

/*
 * The identity of the code object at code: 0, or -EFAULT (unreadable),
 * -EINVAL (not a code object: its type is not types->code).
 */
int py_code_identity(const struct py_layout *l, const struct py_types *t, py_read_fn rd,
		     void *ctx, __u64 code, struct py_code_id *id);
/*
 * Its identity and symbol, "qualname (file.py:line)" (the file name's
 * last component), cut at the bounds above, control bytes as '?'.
 * 0 or -errno as above; the strings must be compact str objects.
 */
int py_code_symbol(const struct py_layout *l, const struct py_types *t, py_read_fn rd,
		   void *ctx, __u64 code, struct py_code_id *id, char *out, size_t cap);

/* The address a Python frame word (code | PREC_PY_ENTRY) gets. */
typedef __u64 (*py_frame_addr_fn)(void *ctx, __u64 word);

/* A sample's user frames and Python frame words, innermost first. */
struct py_chain {
	const __u64 *user;
	__u32 nu;
	const __u64 *py;
	__u32 npy;
	bool leaf;		/* user[0] is the sampled ip (a sample in user mode) */
};

/*
 * The user chain (innermost first) with every frame inside [eval_lo,
 * eval_hi) — an activation of the evaluation loop — replaced by the
 * Python frames it ran: py[] from the next unused one up to and including
 * the next entry frame.  The sampled ip stays in front of them when it is
 * in the loop itself (leaf), so the self time perf report and pprof give
 * stays the interpreter's, as the ip says.  An activation with no Python
 * frame left stays.  The Python frames left over (a chain cut short: -g
 * through code with no frame pointers) go after the last native frame
 * (trailing zeros of user dropped).  Writes at most cap frames into out;
 * returns how many.
 */
__u32 py_splice(const struct py_chain *ch, __u64 eval_lo, __u64 eval_hi, py_frame_addr_fn addr,
		void *ctx, __u64 *out, __u32 cap);

#endif
