// SPDX-License-Identifier: GPL-2.0
#include "record/proc_state.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "util/array.h"
#include "util/rangemap.h"

#define PROC_MAX_MAPS	PROC_STATE_MAX_MAPS
#define PROC_MAX_THREADS 65536

struct thread {
	__u32 tid;
	char comm[16];
};

/* One MMAP2 record as it came (filename malloc'd), shared by the ranges
 * left of it in every process that has it (forks, cuts): reference
 * counted by the range map.  The ranges say start, len and pgoff. */
struct map_rec {
	struct perfdata_mmap2 m;
	size_t ref;
};

struct proc {
	__u32 pid;
	__u64 exit_time;		/* 0: alive */
	struct thread *threads;
	size_t nr_threads, cap_threads;
	struct rangemap maps;		/* values: struct map_rec * */
};

struct proc_state {
	__u64 id_type;
	struct proc **slots;		/* open addressing by pid, linear probing */
	size_t cap, nr;
	struct pbuf scratch;
	__u64 maps_over;		/* mappings past PROC_MAX_MAPS */
};

static void rec_hold(void *ctx, uintptr_t v)
{
	(void)ctx;
	((struct map_rec *)v)->ref++;
}

static void rec_drop(void *ctx, uintptr_t v)
{
	struct map_rec *r = (struct map_rec *)v;

	(void)ctx;
	if (!--r->ref) {
		free((char *)r->m.filename);
		free(r);
	}
}

static const struct rangemap_ops rec_ops = { rec_hold, rec_drop, NULL };

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
	rangemap__clear(&p->maps);
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
	rangemap__init(&p->maps, &rec_ops);
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

/*
 * [start, start + len) is mapped anew: it replaces what it covers of older
 * mappings (mmap over a range replaces it; munmap has no record, so this
 * is also how unmapped ranges leave once reused).  O(log n).
 */
static int map_put(struct proc_state *ps, struct proc *p, const struct perfdata_mmap2 *m)
{
	struct map_rec *r = malloc(sizeof(*r));
	int err = -ENOMEM;

	if (!r)
		return -ENOMEM;
	r->m = *m;
	r->ref = 0;
	r->m.filename = strdup(m->filename);
	if (r->m.filename)
		err = rangemap__insert(&p->maps, m->start, m->start + m->len, m->pgoff,
				       (uintptr_t)r, PROC_MAX_MAPS);
	if (err == 1)
		ps->maps_over++;
	if (!r->ref) {			/* not kept */
		free((char *)r->m.filename);
		free(r);
	}
	return err < 0 ? err : 0;
}

static int on_mmap2(struct proc_state *ps, const struct perf_event_header *h)
{
	const __u8 *b = (const __u8 *)(h + 1);
	struct perfdata_sample_id sid;
	struct perfdata_mmap2 m = { .misc = h->misc };
	size_t fixed = sizeof(*h) + 64, max;
	struct proc *p;

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
	return p ? map_put(ps, p, &m) : -ENOMEM;
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
		rangemap__clear(&p->maps);	/* exec: a new address space */
	p->exit_time = 0;
	return thread_set(p, tid, (const char *)b + 8);
}

/* FORK: a new thread takes its creator's name; a new process also its
 * parent's mappings (fork copies the address space): shared, O(1). */
static int on_task_fork(struct proc_state *ps, __u32 pid, __u32 ppid, __u32 tid, __u32 ptid)
{
	struct proc *parent = proc_find(ps, ppid), *p;
	const struct thread *pt = parent ? thread_find(parent, ptid) : NULL;
	char comm[16] = "";

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
	if (parent)
		rangemap__share(&p->maps, &parent->maps);
	return thread_set(p, tid, comm);
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

struct synth_ctx {
	const struct proc_state *ps;
	const struct proc *p;
	struct pbuf *out;
};

/* A range as its record, in the process that has it (a forked child's
 * come from its parent's records). */
static int synth_map(void *ctx, const struct rangemap_range *r)
{
	const struct synth_ctx *c = ctx;
	struct perfdata_mmap2 m = ((const struct map_rec *)r->val)->m;

	m.start = r->start;
	m.len = r->end - r->start;
	m.pgoff = r->off;
	if (m.pid != c->p->pid)
		m.pid = m.tid = c->p->pid;
	return perfdata_encode_mmap2(c->out, c->ps->id_type, &m, NULL);
}

static int synth_proc(const struct proc_state *ps, const struct proc *p, struct pbuf *out)
{
	struct synth_ctx c = { ps, p, out };
	int err = 0;

	for (size_t i = 0; !err && i < p->nr_threads; i++)
		err = perfdata_encode_comm(out, ps->id_type, p->pid, p->threads[i].tid,
					   p->threads[i].comm, false, NULL);
	return err ? err : rangemap__each(&p->maps, synth_map, &c);
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
	struct proc_state_stats st = { .procs = ps->nr, .maps_over = ps->maps_over };

	for (size_t i = 0; i < ps->cap; i++) {
		if (!ps->slots[i])
			continue;
		st.threads += ps->slots[i]->nr_threads;
		st.maps += rangemap__count(&ps->slots[i]->maps);
	}
	return st;
}
