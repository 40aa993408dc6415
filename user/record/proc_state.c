// SPDX-License-Identifier: GPL-2.0
#include "record/proc_state.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "util/array.h"

/*
 * A hostile process can make mappings without end (mmap at a new address
 * each time, never unmapped): past this many per process the oldest go
 * first.  A large JVM maps a few thousand.
 */
#define PROC_MAX_MAPS	65536
#define PROC_MAX_THREADS 65536

struct thread {
	__u32 tid;
	char comm[16];
};

struct proc {
	__u32 pid;
	__u64 exit_time;		/* 0: alive */
	struct thread *threads;
	size_t nr_threads, cap_threads;
	struct perfdata_mmap2 *maps;	/* filename malloc'd; by insertion */
	size_t nr_maps, cap_maps;
};

struct proc_state {
	__u64 id_type;
	struct proc **slots;		/* open addressing by pid, linear probing */
	size_t cap, nr;
	struct pbuf scratch;
};

struct proc_state *proc_state__new(__u64 id_type)
{
	struct proc_state *ps = calloc(1, sizeof(*ps));

	if (ps)
		ps->id_type = id_type;
	return ps;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_maps; i++)
		free((char *)p->maps[i].filename);
	free(p->maps);
	free(p->threads);
	free(p);
}

void proc_state__free(struct proc_state *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->cap; i++)
		proc_free(ps->slots[i]);
	free(ps->slots);
	pbuf_free(&ps->scratch);
	free(ps);
}

static size_t slot_of(const struct proc_state *ps, __u32 pid)
{
	size_t i = (pid * 2654435761u) & (ps->cap - 1);

	while (ps->slots[i] && ps->slots[i]->pid != pid)
		i = (i + 1) & (ps->cap - 1);
	return i;
}

static struct proc *proc_find(const struct proc_state *ps, __u32 pid)
{
	return ps->cap ? ps->slots[slot_of(ps, pid)] : NULL;
}

static int grow(struct proc_state *ps)
{
	size_t ncap = ps->cap ? ps->cap * 2 : 64, ocap = ps->cap;
	struct proc **old = ps->slots;

	ps->slots = calloc(ncap, sizeof(*ps->slots));
	if (!ps->slots) {
		ps->slots = old;
		return -ENOMEM;
	}
	ps->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			ps->slots[slot_of(ps, old[i]->pid)] = old[i];
	free(old);
	return 0;
}

/* A fresh entry for pid (one there before, a pid reused, is replaced). */
static struct proc *proc_new(struct proc_state *ps, __u32 pid)
{
	struct proc *p;
	size_t i;

	if ((ps->nr + 1) * 2 > ps->cap && grow(ps))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	i = slot_of(ps, pid);
	if (ps->slots[i])
		proc_free(ps->slots[i]);
	else
		ps->nr++;
	ps->slots[i] = p;
	return p;
}

/* Remove the entry at slot i, moving up the ones its probe chain holds. */
static void slot_remove(struct proc_state *ps, size_t i)
{
	size_t j = i;

	proc_free(ps->slots[i]);
	ps->slots[i] = NULL;
	ps->nr--;
	for (;;) {
		size_t home;

		j = (j + 1) & (ps->cap - 1);
		if (!ps->slots[j])
			return;
		home = (ps->slots[j]->pid * 2654435761u) & (ps->cap - 1);
		/* the entry at j may move to i if i lies on its way from home */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			ps->slots[i] = ps->slots[j];
			ps->slots[j] = NULL;
			i = j;
		}
	}
}

static struct proc *proc_get(struct proc_state *ps, __u32 pid)
{
	struct proc *p = proc_find(ps, pid);

	return p ? p : proc_new(ps, pid);
}

static struct thread *thread_find(struct proc *p, __u32 tid)
{
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

static int thread_set(struct proc *p, __u32 tid, const char *comm)
{
	struct thread *t = thread_find(p, tid);

	if (!t) {
		if (p->nr_threads >= PROC_MAX_THREADS ||
		    ARRAY_GROW(p->threads, p->cap_threads, p->nr_threads + 1))
			return p->nr_threads >= PROC_MAX_THREADS ? 0 : -ENOMEM;
		t = &p->threads[p->nr_threads++];
		t->tid = tid;
	}
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	t->comm[sizeof(t->comm) - 1] = '\0';
	return 0;
}

static void thread_del(struct proc *p, __u32 tid)
{
	struct thread *t = thread_find(p, tid);

	if (t)
		*t = p->threads[--p->nr_threads];
}

static void maps_clear(struct proc *p)
{
	for (size_t i = 0; i < p->nr_maps; i++)
		free((char *)p->maps[i].filename);
	p->nr_maps = 0;
}

static int map_push(struct proc *p, const struct perfdata_mmap2 *m)
{
	struct perfdata_mmap2 *n;
	char *name = strdup(m->filename);

	if (!name || ARRAY_GROW(p->maps, p->cap_maps, p->nr_maps + 1)) {
		free(name);
		return -ENOMEM;
	}
	n = &p->maps[p->nr_maps++];
	*n = *m;
	n->filename = name;
	return 0;
}

/*
 * [start, end) is mapped anew: what it covers of older mappings goes
 * (mmap over a range replaces it; munmap has no record, so this is also
 * how unmapped ranges leave once reused).
 */
static int maps_cut(struct proc *p, __u64 start, __u64 end)
{
	for (size_t i = 0; i < p->nr_maps; i++) {
		struct perfdata_mmap2 *m = &p->maps[i];
		__u64 ms = m->start, me = m->start + m->len;

		if (me <= start || ms >= end)
			continue;
		if (ms < start && me > end) {		/* a hole in the middle */
			struct perfdata_mmap2 right = *m;

			right.start = end;
			right.len = me - end;
			right.pgoff += end - ms;
			m->len = start - ms;
			return map_push(p, &right);	/* m may have moved */
		}
		if (ms < start) {
			m->len = start - ms;
		} else if (me > end) {
			m->pgoff += end - ms;
			m->start = end;
			m->len = me - end;
		} else {
			free((char *)m->filename);
			*m = p->maps[--p->nr_maps];
			i--;
		}
	}
	return 0;
}

static int on_mmap2(struct proc_state *ps, const struct perf_event_header *h)
{
	const __u8 *b = (const __u8 *)(h + 1);
	struct perfdata_sample_id sid;
	struct perfdata_mmap2 m = { .misc = h->misc };
	size_t fixed = sizeof(*h) + 64, max;
	struct proc *p;
	int err;

	if (perfdata_sample_id_parse(ps->id_type, h, fixed, &sid))
		return 0;
	memcpy(&m.pid, b, 4);
	memcpy(&m.tid, b + 4, 4);
	memcpy(&m.start, b + 8, 8);
	memcpy(&m.len, b + 16, 8);
	memcpy(&m.pgoff, b + 24, 8);
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m.build_id_size = b[32] <= 20 ? b[32] : 0;
		memcpy(m.build_id, b + 36, m.build_id_size);
		m.misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	} else {
		memcpy(&m.maj, b + 32, 4);
		memcpy(&m.min, b + 36, 4);
		memcpy(&m.ino, b + 40, 8);
		memcpy(&m.ino_generation, b + 48, 8);
	}
	memcpy(&m.prot, b + 56, 4);
	memcpy(&m.flags, b + 60, 4);
	m.filename = (const char *)b + 64;
	max = h->size - fixed - perfdata_sample_id_size(ps->id_type);
	if (!m.len || m.start + m.len < m.start || !memchr(m.filename, 0, max))
		return 0;
	p = proc_get(ps, m.pid);
	if (!p)
		return -ENOMEM;
	err = maps_cut(p, m.start, m.start + m.len);
	if (!err && p->nr_maps >= PROC_MAX_MAPS) {
		free((char *)p->maps[0].filename);
		memmove(p->maps, p->maps + 1, --p->nr_maps * sizeof(*p->maps));
	}
	return err ? err : map_push(p, &m);
}

static int on_comm(struct proc_state *ps, const struct perf_event_header *h)
{
	const __u8 *b = (const __u8 *)(h + 1);
	size_t fixed = sizeof(*h) + 8, max;
	struct perfdata_sample_id sid;
	__u32 pid, tid;
	struct proc *p;

	if (perfdata_sample_id_parse(ps->id_type, h, fixed, &sid))
		return 0;
	max = h->size - fixed - perfdata_sample_id_size(ps->id_type);
	if (!memchr(b + 8, 0, max))
		return 0;
	memcpy(&pid, b, 4);
	memcpy(&tid, b + 4, 4);
	p = proc_get(ps, pid);
	if (!p)
		return -ENOMEM;
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
		maps_clear(p);		/* exec: a new address space */
	p->exit_time = 0;
	return thread_set(p, tid, (const char *)b + 8);
}

/* FORK: a new thread takes its creator's name; a new process also its
 * parent's mappings (fork copies the address space). */
static int on_task_fork(struct proc_state *ps, __u32 pid, __u32 ppid, __u32 tid, __u32 ptid)
{
	struct proc *parent = proc_find(ps, ppid), *p;
	const struct thread *pt = parent ? thread_find(parent, ptid) : NULL;
	char comm[16] = "";
	int err = 0;

	if (pt)
		memcpy(comm, pt->comm, sizeof(comm));
	if (pid == ppid) {
		p = proc_get(ps, pid);
		return p ? thread_set(p, tid, comm) : -ENOMEM;
	}
	p = proc_new(ps, pid);
	if (!p)
		return -ENOMEM;
	parent = proc_find(ps, ppid);	/* the table may have grown */
	for (size_t i = 0; parent && !err && i < parent->nr_maps; i++) {
		struct perfdata_mmap2 m = parent->maps[i];

		m.pid = m.tid = pid;
		err = map_push(p, &m);
	}
	return err ? err : thread_set(p, tid, comm);
}

static int on_task_exit(struct proc_state *ps, __u32 pid, __u32 tid, __u64 time)
{
	struct proc *p = proc_find(ps, pid);

	if (!p)
		return 0;
	if (pid != tid)
		thread_del(p, tid);
	else
		p->exit_time = time ? time : 1;
	return 0;
}

int proc_state__record(struct proc_state *ps, const struct perf_event_header *h)
{
	__u32 w[4];
	__u64 time;

	if (h->size < sizeof(*h))
		return 0;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return on_mmap2(ps, h);
	case PERF_RECORD_COMM:
		return on_comm(ps, h);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (h->size < sizeof(*h) + 24)
			return 0;
		memcpy(w, h + 1, sizeof(w));		/* pid ppid tid ptid */
		memcpy(&time, (const __u8 *)(h + 1) + 16, 8);
		return h->type == PERF_RECORD_FORK ? on_task_fork(ps, w[0], w[1], w[2], w[3]) :
						     on_task_exit(ps, w[0], w[2], time);
	default:
		return 0;
	}
}

int proc_state__records(struct proc_state *ps, const void *buf, size_t len)
{
	const __u8 *p = buf;
	size_t off = 0;

	while (off + sizeof(struct perf_event_header) <= len) {
		struct perf_event_header h;
		int err;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		if (((uintptr_t)(p + off) & 7) == 0) {
			err = proc_state__record(ps, (const void *)(p + off));
		} else {		/* keep the parser's reads aligned */
			pbuf_reset(&ps->scratch);
			if (pbuf_put(&ps->scratch, p + off, h.size))
				return -ENOMEM;
			err = proc_state__record(ps, (const void *)ps->scratch.data);
		}
		if (err)
			return err;
		off += h.size;
	}
	return 0;
}

static int synth_proc(const struct proc_state *ps, const struct proc *p, struct pbuf *out)
{
	int err = 0;

	for (size_t i = 0; !err && i < p->nr_threads; i++)
		err = perfdata_encode_comm(out, ps->id_type, p->pid, p->threads[i].tid,
					   p->threads[i].comm, false, NULL);
	for (size_t i = 0; !err && i < p->nr_maps; i++)
		err = perfdata_encode_mmap2(out, ps->id_type, &p->maps[i], NULL);
	return err;
}

int proc_state__synthesize(const struct proc_state *ps, struct pbuf *out, __u64 t)
{
	int err = 0;

	for (size_t i = 0; !err && i < ps->cap; i++) {
		const struct proc *p = ps->slots[i];

		if (p && (!p->exit_time || p->exit_time >= t))
			err = synth_proc(ps, p, out);
	}
	return err;
}

void proc_state__collect(struct proc_state *ps, __u64 t,
			 void (*forget)(void *ctx, __u32 pid), void *ctx)
{
	size_t i = 0;

	while (i < ps->cap) {
		struct proc *p = ps->slots[i];

		if (!p || !p->exit_time || p->exit_time >= t) {
			i++;
			continue;
		}
		if (forget)
			forget(ctx, p->pid);
		slot_remove(ps, i);	/* may move another entry into i: look again */
	}
}

struct proc_state_stats proc_state__stats(const struct proc_state *ps)
{
	struct proc_state_stats st = { .procs = ps->nr };

	for (size_t i = 0; i < ps->cap; i++) {
		if (!ps->slots[i])
			continue;
		st.threads += ps->slots[i]->nr_threads;
		st.maps += ps->slots[i]->nr_maps;
	}
	return st;
}
