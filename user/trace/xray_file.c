// SPDX-License-Identifier: GPL-2.0
/*
 * --xray-out writer: collects each thread's calls as XRay FDR records and
 * lays them out as one buffer per thread (file layout in xray_file.h).
 */
#include "trace/xray_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/io.h"
#include "util/log.h"

#define NS_PER_SEC	1000000000ULL
static const char start_event[] = "precord";

struct xthread {
	__u32 tid, pid;
	__u64 first_time;
	__u32 first_cpu;
	struct xray_enc enc;
	struct pbuf body;
};

struct xray_file {
	struct xthread *th;
	size_t nr, cap;
	__u32 last_tid;		/* lookup cache */
	size_t last_idx;
};

struct xray_file *xray_file__new(void)
{
	return calloc(1, sizeof(struct xray_file));
}

void xray_file__free(struct xray_file *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nr; i++)
		pbuf_free(&f->th[i].body);
	free(f->th);
	free(f);
}

static struct xthread *get_thread(struct xray_file *f, const struct xray_event *ev)
{
	struct xthread *t;
	size_t i;

	if (f->nr && f->last_tid == ev->tid)
		return &f->th[f->last_idx];
	for (i = 0; i < f->nr; i++)
		if (f->th[i].tid == ev->tid)
			break;
	if (i == f->nr) {
		if (f->nr == f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 8;
			struct xthread *n = realloc(f->th, cap * sizeof(*n));

			if (!n)
				return NULL;
			f->th = n;
			f->cap = cap;
		}
		t = &f->th[f->nr++];
		memset(t, 0, sizeof(*t));
		t->tid = ev->tid;
		t->pid = ev->pid;
		t->first_time = ev->time;
		t->first_cpu = ev->cpu;
		xray_enc_begin(&t->enc);
	}
	f->last_tid = ev->tid;
	f->last_idx = i;
	return &f->th[i];
}

int xray_file__add(struct xray_file *f, const struct xray_call *c)
{
	const struct xray_event *ev = c->ev;
	struct xthread *t;
	unsigned int action;
	__u32 fid;
	int i, err;

	switch (c->kind) {
	case XRAY_CALL_ENTRY:
		action = ev->nr_args ? PREC_XRAY_ENTER_ARGS : PREC_XRAY_ENTER;
		fid = ev->func_id;
		break;
	case XRAY_CALL_RETURN:
		action = ev->action == PREC_XRAY_TAIL_EXIT ? PREC_XRAY_TAIL_EXIT : PREC_XRAY_EXIT;
		fid = ev->func_id;
		break;
	case XRAY_CALL_UNWOUND:
		action = PREC_XRAY_EXIT;
		fid = c->entry->func_id;
		break;
	default:
		return 0;
	}
	if (fid > XRAY_MAX_FUNC_ID)
		return 0;
	t = get_thread(f, ev);
	if (!t)
		return -ENOMEM;
	err = xray_enc_function(&t->enc, &t->body, action, fid, ev->cpu, ev->time);
	for (i = 0; !err && action == PREC_XRAY_ENTER_ARGS && i < ev->nr_args; i++)
		err = xray_put_call_arg(&t->body, ev->args[i]);
	return err;
}

static int cmp_first(const void *a, const void *b)
{
	const struct xthread *x = *(const struct xthread *const *)a;
	const struct xthread *y = *(const struct xthread *const *)b;

	if (x->first_time != y->first_time)
		return x->first_time < y->first_time ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int xray_file__encode(const struct xray_file *f, struct pbuf *out)
{
	const size_t pre = 5 * XRAY_MD_SIZE + sizeof(start_event) - 1;
	const struct xthread **order;
	__u64 t0 = ~0ULL, max_size = 0;
	size_t i;

	order = calloc(f->nr ? f->nr : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < f->nr; i++) {
		order[i] = &f->th[i];
		if (f->th[i].first_time < t0)
			t0 = f->th[i].first_time;
		if (pre + f->th[i].body.len > max_size)
			max_size = pre + f->th[i].body.len;
	}
	qsort(order, f->nr, sizeof(*order), cmp_first);
	xray_put_file_header(out, XRAY_FDR_VERSION, NS_PER_SEC, max_size);
	for (i = 0; i < f->nr; i++) {
		const struct xthread *t = order[i];

		xray_put_buffer_extents(out, pre + t->body.len);
		xray_put_new_buffer(out, t->tid);
		xray_put_walltime(out, t->first_time / NS_PER_SEC,
				  (__u32)(t->first_time % NS_PER_SEC / 1000));
		xray_put_pid(out, t->pid);
		xray_put_new_cpu(out, (__u16)t->first_cpu, t0);
		xray_put_custom_event(out, 0, start_event, sizeof(start_event) - 1);
		pbuf_put(out, t->body.data, t->body.len);
	}
	free(order);
	return out->err;
}

/* YAML single-quoted scalar: ' doubled; control bytes become '?'. */
static void put_yaml_str(struct pbuf *out, const char *s)
{
	pbuf_put_u8(out, '\'');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\'')
			pbuf_put(out, "''", 2);
		else
			pbuf_put_u8(out, ch < 0x20 || ch == 0x7f ? '?' : ch);
	}
	pbuf_put_u8(out, '\'');
}

int xray_map_encode(const struct trace_func *funcs, size_t nr, struct pbuf *out)
{
	static const char *const kinds[] = { "function-enter", "function-exit" };
	char line[160];
	size_t i;
	int k;

	pbuf_put(out, "---\n", 4);
	for (i = 0; i < nr; i++) {
		for (k = 0; k < 2; k++) {
			int n = snprintf(line, sizeof(line),
					 "- { id: %u, address: 0x%llX, function: 0x%llX, kind: %s, "
					 "always-instrument: true, function-name: ",
					 funcs[i].id, (unsigned long long)funcs[i].addr,
					 (unsigned long long)funcs[i].addr, kinds[k]);

			pbuf_put(out, line, (size_t)n);
			put_yaml_str(out, funcs[i].name);
			pbuf_put(out, ", version: 2 }\n", 15);
		}
	}
	pbuf_put(out, "...\n", 4);
	return out->err;
}

/* Why a write failed, for the message: the disk, or something else. */
static const char *failure(int err)
{
	return err == -ENOSPC ? "disk full writing" : err == -EDQUOT ?
	       "disk quota exceeded writing" : "cannot write";
}

/* 0 or -errno (said why); a file not written whole is removed. */
static int write_file(const char *path, const struct pbuf *b)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	int err;

	if (fd < 0) {
		err = -errno;
		pr_err("trace: cannot create '%s': %s; the XRay log is not written (the traced calls are in perf.data)",
		       path, strerror(errno));
		return err;
	}
	err = write_full(fd, b->data, b->len);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		unlink(path);
		pr_err("trace: %s '%s' (%s): the XRay log is not written (removed); the traced calls are in perf.data; %s",
		       failure(err), path, strerror(-err),
		       err == -ENOSPC || err == -EDQUOT ?
		       "free some space, or give --xray-out a file on another disk" :
		       "check the disk, or give --xray-out a file on another one");
	}
	return err;
}

int xray_file__write(const struct xray_file *f, const char *path,
		     const struct trace_func *funcs, size_t nr)
{
	struct pbuf log = { 0 }, map = { 0 };
	char *map_path = NULL;
	int err;

	err = xray_file__encode(f, &log);
	if (!err)
		err = xray_map_encode(funcs, nr, &map);
	if (!err && asprintf(&map_path, "%s.map.yaml", path) < 0) {
		map_path = NULL;
		err = -ENOMEM;
	}
	if (err == -ENOMEM)
		pr_err("trace: out of memory writing '%s'", path);
	if (!err)
		err = write_file(path, &log);
	if (!err) {
		err = write_file(map_path, &map);
		if (err)
			unlink(path);	/* the log is of no use without its map */
	}
	free(map_path);
	pbuf_free(&log);
	pbuf_free(&map);
	return err;
}
