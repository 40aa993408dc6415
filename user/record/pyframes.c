// SPDX-License-Identifier: GPL-2.0
/*
 * Layouts: from CPython's headers (Include/internal/pycore_runtime.h,
 * pycore_interp.h, pycore_frame.h, cpython/pystate.h, cpython/code.h,
 * cpython/unicodeobject.h), each offset checked by reading a running
 * interpreter's own structures: Debian's python3.11 (3.11.2), 3.12.1 and
 * 3.13.0 builds (docs/python.md).
 */
#include "record/pyframes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct py_layout layouts[] = {
	{
		.version = 0x030b, .name = "3.11",
		.walk = {
			.rt_interp_head = 40,	/* interpreters.head */
			.is_threads_head = 16,	/* threads.head */
			.ts_next = 8,
			.ts_native_tid = 160,
			.ts_frame = 56,		/* cframe */
			.cf_current = 8,	/* cframe->current_frame */
			.fr_code = 32,
			.fr_previous = 48,
			.fr_entry = 68,		/* is_entry */
			.fr_owner = 0xffff,
		},
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 72,
		.ob_type = 8, .str_length = 16, .str_state = 32,
		.ascii_data = 48, .compact_data = 72,
	},
	{
		/* shim frames (owner FRAME_OWNED_BY_CSTACK) mark the entries;
		 * str lost wstr */
		.version = 0x030c, .name = "3.12",
		.walk = {
			.rt_interp_head = 40,
			.is_threads_head = 72,
			.ts_next = 8,
			.ts_native_tid = 144,
			.ts_frame = 56,		/* cframe */
			.cf_current = 0,	/* cframe->current_frame */
			.fr_code = 0,
			.fr_previous = 8,
			.fr_entry = 0xffff,
			.fr_owner = 70, .owner_shim = 3,
		},
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 68,
		.ob_type = 8, .str_length = 16, .str_state = 32,
		.ascii_data = 40, .compact_data = 56,
	},
	{
		/* no cframe: PyThreadState.current_frame; f_executable */
		.version = 0x030d, .name = "3.13", .debug_cookie = "xdebugpy",
		.walk = {
			.rt_interp_head = 632,
			.is_threads_head = 7344,
			.ts_next = 8,
			.ts_native_tid = 160,
			.ts_frame = 72,		/* current_frame */
			.cf_current = 0xffff,
			.fr_code = 0,		/* f_executable */
			.fr_previous = 8,
			.fr_entry = 0xffff,
			.fr_owner = 70, .owner_shim = 3,
		},
		.co_filename = 112, .co_qualname = 128, .co_firstlineno = 68,
		.ob_type = 8, .str_length = 16, .str_state = 32,
		.ascii_data = 40, .compact_data = 56,
	},
};

const struct py_layout *py_layout_find(__u64 py_version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == ((py_version >> 16) & 0xffff))
			return &layouts[i];
	return NULL;
}

static int read_u64(py_read_fn rd, void *ctx, __u64 addr, __u64 *v)
{
	return rd(ctx, addr, v, sizeof(*v));
}

int py_code_identity(const struct py_layout *l, const struct py_types *t, py_read_fn rd,
		     void *ctx, __u64 code, struct py_code_id *id)
{
	__u64 type = 0;
	__s32 line = 0;
	int err;

	memset(id, 0, sizeof(*id));
	if (!code)
		return -EFAULT;
	err = read_u64(rd, ctx, code + l->ob_type, &type);
	if (!err && type != t->code)
		err = -EINVAL;
	if (!err)
		err = read_u64(rd, ctx, code + l->co_qualname, &id->qualname);
	if (!err)
		err = read_u64(rd, ctx, code + l->co_filename, &id->filename);
	if (!err)
		err = rd(ctx, code + l->co_firstlineno, &line, sizeof(line));
	id->firstlineno = line;
	return err;
}

/* One code point as UTF-8 into out (room for 4); control ones as '?'. */
static size_t put_utf8(char *out, __u32 c)
{
	if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) ||
	    (c >= 0xd800 && c < 0xe000) || c > 0x10ffff) {
		out[0] = '?';
		return 1;
	}
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * The str at addr as UTF-8 into out (cap >= 4 * max + 1), at most max
 * code points: 0 or -errno.  Only compact strings (every str a code
 * object holds): ASCII ones keep their bytes right after the
 * PyASCIIObject, the others after the PyCompactUnicodeObject, 1, 2 or 4
 * bytes a code point (state: kind in bits 2-4, compact 5, ascii 6).
 */
static int read_str(const struct py_layout *l, const struct py_types *t, py_read_fn rd,
		    void *ctx, __u64 addr, __u32 max, char *out, size_t cap)
{
	__u8 raw[4 * PY_MAX_FILENAME];
	__u64 type = 0, len = 0;
	__u32 state = 0, kind, i;
	size_t n = 0;
	int err;

	out[0] = '\0';
	if (!addr || max > PY_MAX_FILENAME || cap < 4 * (size_t)max + 1)
		return -EFAULT;
	err = read_u64(rd, ctx, addr + l->ob_type, &type);
	if (!err && type != t->unicode)
		err = -EINVAL;
	if (!err)
		err = read_u64(rd, ctx, addr + l->str_length, &len);
	if (!err)
		err = rd(ctx, addr + l->str_state, &state, sizeof(state));
	if (err)
		return err;
	if (!(state & 0x20))
		return -EINVAL;		/* not compact */
	kind = state & 0x40 ? 1 : (state >> 2) & 7;
	if (kind != 1 && kind != 2 && kind != 4)
		return -EINVAL;
	if (len > max)
		len = max;
	if (len && rd(ctx, addr + (state & 0x40 ? l->ascii_data : l->compact_data), raw,
		      (size_t)len * kind))
		return -EFAULT;
	for (i = 0; i < len; i++) {
		__u32 c;

		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			__u16 c16;

			memcpy(&c16, raw + 2 * i, 2);
			c = c16;
		} else {
			memcpy(&c, raw + 4 * i, 4);
		}
		n += put_utf8(out + n, c);
	}
	out[n] = '\0';
	return 0;
}

int py_code_symbol(const struct py_layout *l, const struct py_types *t, py_read_fn rd,
		   void *ctx, __u64 code, struct py_code_id *id, char *out, size_t cap)
{
	char qual[4 * PY_MAX_QUALNAME + 1], file[4 * PY_MAX_FILENAME + 1];
	const char *base;
	int err = py_code_identity(l, t, rd, ctx, code, id);

	if (!err)
		err = read_str(l, t, rd, ctx, id->qualname, PY_MAX_QUALNAME, qual, sizeof(qual));
	if (!err)
		err = read_str(l, t, rd, ctx, id->filename, PY_MAX_FILENAME, file, sizeof(file));
	if (err)
		return err;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (id->firstlineno > 0)
		snprintf(out, cap, "%s (%s:%d)", qual[0] ? qual : "?", base, id->firstlineno);
	else
		snprintf(out, cap, "%s (%s)", qual[0] ? qual : "?", base);
	return 0;
}

__u32 py_splice(const struct py_chain *ch, __u64 eval_lo, __u64 eval_hi, py_frame_addr_fn addr,
		void *ctx, __u64 *out, __u32 cap)
{
	const __u64 *user = ch->user, *py = ch->py;
	__u32 i, j = 0, n = 0, nu = ch->nu, npy = ch->npy;

	while (nu && !user[nu - 1])
		nu--;
	for (i = 0; i < nu && n < cap; i++) {
		if (user[i] < eval_lo || user[i] >= eval_hi || j >= npy) {
			out[n++] = user[i];
			continue;
		}
		if (!i && ch->leaf)
			out[n++] = user[i];	/* the sampled ip */
		while (j < npy && n < cap) {
			bool entry = py[j] & PREC_PY_ENTRY;

			out[n++] = addr(ctx, py[j++]);
			if (entry)
				break;
		}
	}
	while (j < npy && n < cap)
		out[n++] = addr(ctx, py[j++]);
	return n;
}
