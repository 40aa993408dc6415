// SPDX-License-Identifier: GPL-2.0
#include "push.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleet/fleet.h"
#include "fleet/hash.h"
#include "fleet/source.h"
#include "fleet/store.h"
#include "jit/strset.h"
#include "report/symbolizer.h"
#include "util/array.h"
#include "util/log.h"

/*
 * Sample rows per INSERT.  Every batch of a file carries the same push id,
 * and the file's row commits them all: a failed batch makes the whole file
 * go again under a new id.  ClickHouse inserts a block of up to 1M rows
 * (max_insert_block_size) at once; 256K rows of TSV are ~25 MB.
 */
#define PUSH_BATCH_ROWS		(256 * 1024)
/* Stacks inserted by this process, remembered per day so that every day's
 * partition holds the stacks its samples use (retention drops whole days);
 * forgotten when the set is this large (they are then inserted again, and
 * ReplacingMergeTree folds the copies). */
#define PUSH_MAX_KNOWN_STACKS	(1u << 20)

struct row {
	uint32_t window, pid, comm, cgroup, bid;	/* strings as strset indices */
	uint32_t stack;					/* index in stacks */
	uint32_t offcpu;				/* the event: 0 cpu, 1 offcpu */
	uint64_t count, weight;
};

/*
 * A distinct stack of the file: found again by a fast hash under this
 * process's random seed and a comparison of its frames (a name crafted to
 * collide with another stack's hash only costs a probe); its key in the
 * store, SHA-256 of its content (hash.h), computed once.
 */
struct stack {
	uint64_t hash;		/* fleet_hash64 chain under the seed */
	uint64_t key;		/* the store's stack_hash */
	uint32_t first, nr;	/* frames[first .. first + nr) */
};

struct frame_ref {
	uint32_t sym, dso, bid;
};

/* An open-addressing table of u32 indices + 1 (0 = empty). */
struct slots {
	uint32_t *v;
	size_t cap;
};

struct fleet_push {
	struct fleet_store store;
	const char *host;		/* NULL: the file's HOSTNAME, else ours */
	char local_host[256];
	struct fleet_source *src;
	int attempts, first_ms;
	char err[400];
	/* per file */
	struct strset strs;
	struct row *rows;
	size_t nr_rows, cap_rows;
	struct slots row_slots;
	struct stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct slots stack_slots;
	struct frame_ref *frames;
	size_t nr_frames, cap_frames;
	uint64_t seed;			/* of the in-process tables */
	int oom;
	/* across files: (day, stack hash) already inserted */
	uint64_t *known;
	size_t nr_known, cap_known;	/* cap a power of two, 0 = empty slot */
};

static int slots_grow(struct slots *s, size_t used, uint64_t (*hash_of)(void *, uint32_t), void *ctx)
{
	size_t cap;
	uint32_t *nv;

	if ((used + 1) * 2 <= s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 4096;
	nv = calloc(cap, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		size_t p;

		if (!s->v[i])
			continue;
		for (p = hash_of(ctx, s->v[i] - 1) & (cap - 1); nv[p]; p = (p + 1) & (cap - 1))
			;
		nv[p] = s->v[i];
	}
	free(s->v);
	s->v = nv;
	s->cap = cap;
	return 0;
}

static uint64_t row_hash(const struct fleet_push *p, const struct row *r)
{
	uint32_t k[7] = { r->window, r->pid, r->comm, r->cgroup, r->bid, r->stack, r->offcpu };

	return fleet_hash64(k, sizeof(k), p->seed);
}

static uint64_t row_hash_at(void *ctx, uint32_t i)
{
	struct fleet_push *p = ctx;

	return row_hash(p, &p->rows[i]);
}

static uint64_t stack_hash_at(void *ctx, uint32_t i)
{
	return ((struct fleet_push *)ctx)->stacks[i].hash;
}

static long intern(struct fleet_push *p, const char *s)
{
	long i = strset_add(&p->strs, s ? s : "", s ? strlen(s) : 0);

	if (i < 0)
		p->oom = 1;
	return i < 0 ? 0 : i;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* The fast hash of a sample's stack: its (symbol, DSO) pairs leaf first,
 * each string's length mixed in (build-ids are compared, not hashed: a
 * DSO's name nearly always tells them apart). */
static uint64_t stack_hash(const struct fleet_push *p, const struct fleet_sample *s)
{
	uint64_t h = p->seed;

	for (int i = 0; i < s->nr; i++) {
		const char *sym = or_empty(s->frames[i].sym), *dso = or_empty(s->frames[i].dso);

		h = fleet_hash64(sym, strlen(sym), h);
		h = fleet_hash64(dso, strlen(dso), h ^ 0x5bd1e995);
	}
	return h;
}

static bool same_stack(const struct fleet_push *p, const struct stack *st, const struct fleet_sample *s)
{
	if (st->nr != (uint32_t)s->nr)
		return false;
	for (uint32_t i = 0; i < st->nr; i++) {
		const struct frame_ref *f = &p->frames[st->first + i];

		if (strcmp(strset_str(&p->strs, f->sym), or_empty(s->frames[i].sym)) ||
		    strcmp(strset_str(&p->strs, f->dso), or_empty(s->frames[i].dso)) ||
		    strcmp(strset_str(&p->strs, f->bid), or_empty(s->frames[i].build_id)))
			return false;
	}
	return true;
}

/* The store's key of the stack just added (hash.h): SHA-256 of its
 * content, once per distinct stack of the file. */
static uint64_t stack_key(const struct fleet_push *p, const struct stack *st)
{
	struct fleet_stack_key k;

	fleet_stack_key__begin(&k);
	for (int a = 0; a < 3; a++) {
		fleet_stack_key__array(&k, st->nr);
		for (uint32_t i = 0; i < st->nr; i++) {
			const struct frame_ref *f = &p->frames[st->first + i];

			fleet_stack_key__string(&k, strset_str(&p->strs, a == 0 ? f->sym :
							       a == 1 ? f->dso : f->bid));
		}
	}
	return fleet_stack_key__end(&k);
}

/* The index of the sample's stack, added when new; -ENOMEM. */
static long add_stack(struct fleet_push *p, const struct fleet_sample *s)
{
	uint64_t h = stack_hash(p, s);
	struct stack *st;
	size_t pos;

	if (slots_grow(&p->stack_slots, p->nr_stacks, stack_hash_at, p))
		return -ENOMEM;
	for (pos = h & (p->stack_slots.cap - 1); p->stack_slots.v[pos];
	     pos = (pos + 1) & (p->stack_slots.cap - 1)) {
		st = &p->stacks[p->stack_slots.v[pos] - 1];
		if (st->hash == h && same_stack(p, st, s))
			return p->stack_slots.v[pos] - 1;
	}
	if (p->nr_stacks >= UINT32_MAX - 1 ||
	    ARRAY_GROW(p->stacks, p->cap_stacks, p->nr_stacks + 1) ||
	    ARRAY_GROW(p->frames, p->cap_frames, p->nr_frames + (size_t)s->nr))
		return -ENOMEM;
	st = &p->stacks[p->nr_stacks];
	*st = (struct stack){ h, 0, (uint32_t)p->nr_frames, (uint32_t)s->nr };
	for (int i = 0; i < s->nr; i++)
		p->frames[p->nr_frames++] = (struct frame_ref){
			(uint32_t)intern(p, s->frames[i].sym), (uint32_t)intern(p, s->frames[i].dso),
			(uint32_t)intern(p, s->frames[i].build_id) };
	if (p->oom)
		return -ENOMEM;
	st->key = stack_key(p, st);
	p->stack_slots.v[pos] = (uint32_t)++p->nr_stacks;
	return (long)p->nr_stacks - 1;
}

static int on_sample(void *ctx, const struct fleet_sample *s)
{
	struct fleet_push *p = ctx;
	struct row r;
	uint64_t h;
	size_t pos;
	long si = add_stack(p, s);

	if (si < 0)
		return -ENOMEM;
	r.stack = (uint32_t)si;
	r.window = (uint32_t)(s->time - s->time % FLEET_WINDOW_SECS);
	r.pid = s->pid;
	r.comm = (uint32_t)intern(p, s->comm);
	r.cgroup = (uint32_t)intern(p, s->cgroup);
	r.bid = (uint32_t)intern(p, s->nr ? s->frames[0].build_id : "");
	r.offcpu = s->offcpu;
	if (p->oom)
		return -ENOMEM;
	if (slots_grow(&p->row_slots, p->nr_rows, row_hash_at, p))
		return -ENOMEM;
	h = row_hash(p, &r);
	for (pos = h & (p->row_slots.cap - 1); p->row_slots.v[pos];
	     pos = (pos + 1) & (p->row_slots.cap - 1)) {
		struct row *o = &p->rows[p->row_slots.v[pos] - 1];

		if (o->stack == r.stack && o->window == r.window && o->pid == r.pid &&
		    o->comm == r.comm && o->cgroup == r.cgroup && o->bid == r.bid &&
		    o->offcpu == r.offcpu) {
			o->count += s->count;
			o->weight += s->weight;
			return 0;
		}
	}
	if (ARRAY_GROW(p->rows, p->cap_rows, p->nr_rows + 1))
		return -ENOMEM;
	r.count = s->count;
	r.weight = s->weight;
	p->rows[p->nr_rows] = r;
	p->row_slots.v[pos] = (uint32_t)++p->nr_rows;
	return 0;
}

static void reset_file(struct fleet_push *p)
{
	strset_free(&p->strs);
	strset_init(&p->strs);
	p->nr_rows = p->nr_stacks = p->nr_frames = 0;
	if (p->row_slots.v)
		memset(p->row_slots.v, 0, p->row_slots.cap * sizeof(uint32_t));
	if (p->stack_slots.v)
		memset(p->stack_slots.v, 0, p->stack_slots.cap * sizeof(uint32_t));
	p->oom = 0;
}

/* Whether (day, hash) was inserted by this process; marks it if not. */
static bool known_stack(struct fleet_push *p, uint32_t day, uint64_t hash)
{
	uint64_t k = fleet_hash64(&day, sizeof(day), hash) | 1;
	size_t pos;

	if (p->nr_known * 2 >= p->cap_known) {
		if (p->cap_known >= PUSH_MAX_KNOWN_STACKS * 2 || !p->cap_known) {
			size_t cap = p->cap_known ? p->cap_known : 8192;

			free(p->known);
			p->known = calloc(cap, sizeof(*p->known));
			p->cap_known = p->known ? cap : 0;
			p->nr_known = 0;
		} else {
			uint64_t *nk = calloc(p->cap_known * 2, sizeof(*nk));

			if (nk) {
				for (size_t i = 0; i < p->cap_known; i++) {
					if (!p->known[i])
						continue;
					for (pos = p->known[i] & (p->cap_known * 2 - 1); nk[pos];
					     pos = (pos + 1) & (p->cap_known * 2 - 1))
						;
					nk[pos] = p->known[i];
				}
				free(p->known);
				p->known = nk;
				p->cap_known *= 2;
			}
		}
		if (!p->cap_known || p->nr_known * 2 >= p->cap_known)
			return false;
	}
	for (pos = k & (p->cap_known - 1); p->known[pos]; pos = (pos + 1) & (p->cap_known - 1))
		if (p->known[pos] == k)
			return true;
	p->known[pos] = k;
	p->nr_known++;
	return false;
}

static void put_array(struct pbuf *b, struct fleet_push *p, const struct stack *st, int field)
{
	pbuf_put_u8(b, '[');
	for (uint32_t i = 0; i < st->nr; i++) {
		const struct frame_ref *f = &p->frames[st->first + i];
		uint32_t idx = field == 0 ? f->sym : field == 1 ? f->dso : f->bid;

		if (i)
			pbuf_put_u8(b, ',');
		pbuf_put_u8(b, '\'');
		ch_tsv_escape(b, strset_str(&p->strs, idx));
		pbuf_put_u8(b, '\'');
	}
	pbuf_put_u8(b, ']');
}

/* The stacks of this file's rows not yet inserted for their day. */
static int stacks_tsv(struct fleet_push *p, struct pbuf *b, uint64_t *n)
{
	char num[64];

	for (size_t i = 0; i < p->nr_rows; i++) {
		const struct row *r = &p->rows[i];
		const struct stack *st = &p->stacks[r->stack];

		if (known_stack(p, r->window / 86400, st->key))
			continue;
		snprintf(num, sizeof(num), "%u\t%" PRIu64 "\t", r->window, st->key);
		pbuf_put(b, num, strlen(num));
		put_array(b, p, st, 0);
		pbuf_put_u8(b, '\t');
		put_array(b, p, st, 1);
		pbuf_put_u8(b, '\t');
		put_array(b, p, st, 2);
		pbuf_put_u8(b, '\n');
		(*n)++;
	}
	return b->err;
}

static void rows_tsv(struct fleet_push *p, struct pbuf *b, size_t from, size_t to,
		     const char *host, uint64_t file_id, uint64_t push_id)
{
	char num[160];

	for (size_t i = from; i < to; i++) {
		const struct row *r = &p->rows[i];

		snprintf(num, sizeof(num), "%u\t", r->window);
		pbuf_put(b, num, strlen(num));
		ch_tsv_escape(b, host);
		pbuf_put_u8(b, '\t');
		ch_tsv_escape(b, strset_str(&p->strs, r->cgroup));
		pbuf_put_u8(b, '\t');
		ch_tsv_escape(b, strset_str(&p->strs, r->comm));
		snprintf(num, sizeof(num), "\t%u\t", r->pid);
		pbuf_put(b, num, strlen(num));
		ch_tsv_escape(b, strset_str(&p->strs, r->bid));
		snprintf(num, sizeof(num), "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n",
			 p->stacks[r->stack].key, r->count, r->weight, file_id, push_id,
			 r->offcpu ? "offcpu" : "cpu");
		pbuf_put(b, num, strlen(num));
	}
}

/* The file's identity: a hash of its bytes and its size. */
static int file_identity(const char *path, uint64_t *id, uint64_t *size)
{
	int fd = open_regular_file(path, -1);
	struct stat st;
	void *m;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	*size = (uint64_t)st.st_size;
	if (!st.st_size) {
		close(fd);
		*id = fleet_hash64("", 0, 0);
		return 0;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	*id = fleet_hash64(m, (size_t)st.st_size, (uint64_t)st.st_size);
	munmap(m, (size_t)st.st_size);
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t new_push_id(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = wall_ns() ^ ((uint64_t)getpid() << 32);
	return v ? v : 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int fail(struct fleet_push *p, int err, const char *path, const char *what)
{
	snprintf(p->err, sizeof(p->err), "push: %s: %s%s", path, what,
		 err == -EAGAIN ? " (the store is down or overloaded: the file was not counted; push it again later)" : "");
	return err;
}

struct fleet_push *fleet_push__new_quiet(const char *url, const char *host, int attempts,
					 char *why, size_t n)
{
	struct fleet_push *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(why, n, "push: out of memory");
		return NULL;
	}
	p->host = host;
	if (getrandom(&p->seed, sizeof(p->seed), 0) != sizeof(p->seed))
		p->seed = wall_ns() ^ ((uint64_t)getpid() << 32);
	p->attempts = attempts < 1 ? 1 : attempts;
	p->first_ms = 500;
	if (gethostname(p->local_host, sizeof(p->local_host) - 1))
		strcpy(p->local_host, "localhost");
	strset_init(&p->strs);
	p->src = fleet_source__new();
	if (!p->src) {
		snprintf(why, n, "push: out of memory");
		fleet_push__free(p);
		return NULL;
	}
	if (fleet_store__open(&p->store, url, p->attempts, why, n)) {
		fleet_push__free(p);
		return NULL;
	}
	ch_conn__set_retry(p->store.conn, p->attempts, p->first_ms);
	return p;
}

struct fleet_push *fleet_push__new(const char *url, const char *host)
{
	char why[400];
	struct fleet_push *p = fleet_push__new_quiet(url, host, 4, why, sizeof(why));

	if (!p)
		pr_err("%s", why);
	return p;
}

void fleet_push__set_timeout(struct fleet_push *p, long secs)
{
	ch_conn__set_timeout(p->store.conn, secs);
}

void fleet_push__free(struct fleet_push *p)
{
	if (!p)
		return;
	fleet_store__close(&p->store);
	fleet_source__free(p->src);
	strset_free(&p->strs);
	free(p->rows);
	free(p->row_slots.v);
	free(p->stacks);
	free(p->stack_slots.v);
	free(p->frames);
	free(p->known);
	free(p);
}

void fleet_push__set_retry(struct fleet_push *p, int attempts, int first_ms)
{
	p->attempts = attempts < 1 ? 1 : attempts;
	p->first_ms = first_ms;
	if (p->store.conn)
		ch_conn__set_retry(p->store.conn, p->attempts, first_ms);
}

const char *fleet_push__error(const struct fleet_push *p)
{
	return p->err;
}

/* Sample rows under one push id, in batches; 0 or -errno. */
static int insert_rows(struct fleet_push *p, const char *host, uint64_t file_id, uint64_t push_id,
		       struct fleet_push_result *r)
{
	struct pbuf body = { 0 }, out = { 0 };
	char *sql = NULL;
	int err = 0;

	if (asprintf(&sql, "INSERT INTO %s (window, host, cgroup, comm, pid, leaf_build_id, stack_hash, count, weight, file_id, push_id, event) FORMAT TabSeparated",
		     p->store.samples) < 0)
		return -ENOMEM;
	for (size_t from = 0; !err && from < p->nr_rows; from += PUSH_BATCH_ROWS) {
		size_t to = from + PUSH_BATCH_ROWS < p->nr_rows ? from + PUSH_BATCH_ROWS : p->nr_rows;

		pbuf_reset(&body);
		rows_tsv(p, &body, from, to, host, file_id, push_id);
		if (body.err) {
			err = -ENOMEM;
			break;
		}
		r->bytes += body.len;
		err = ch_conn__exec_once(p->store.conn, sql, body.data, body.len, &out);
	}
	free(sql);
	pbuf_free(&body);
	pbuf_free(&out);
	return err;
}

static int already_stored(struct fleet_push *p, const char *host, uint64_t file_id, bool *yes)
{
	struct pbuf q = { 0 }, out = { 0 };
	char tail[96];
	int err;

	pbuf_put(&q, "SELECT count() FROM ", 20);
	pbuf_put(&q, p->store.files, strlen(p->store.files));
	pbuf_put(&q, " WHERE host = ", 14);
	ch_quote(&q, host);
	snprintf(tail, sizeof(tail), " AND file_id = %" PRIu64, file_id);
	pbuf_put(&q, tail, strlen(tail));
	if (pbuf_put_u8(&q, 0)) {
		pbuf_free(&q);
		return -ENOMEM;
	}
	err = ch_conn__exec(p->store.conn, (char *)q.data, NULL, 0, &out);
	if (!err)
		*yes = strtoull((char *)out.data, NULL, 10) > 0;
	pbuf_free(&q);
	pbuf_free(&out);
	return err;
}

struct span {
	uint64_t first, last, weight;
};

/* One row of host's file into table: the commit (files) or the mark of
 * an attempt written before its rows (pushes). */
static int insert_file_row(struct fleet_push *p, const char *table, const char *cols,
			   const char *host, uint64_t file_id, uint64_t push_id, const char *path,
			   const char *tail)
{
	struct pbuf body = { 0 }, out = { 0 };
	char *sql = NULL, num[100];
	int err;

	if (asprintf(&sql, "INSERT INTO %s (host, file_id, push_id, %s) FORMAT TabSeparated",
		     table, cols) < 0)
		return -ENOMEM;
	ch_tsv_escape(&body, host);
	snprintf(num, sizeof(num), "\t%" PRIu64 "\t%" PRIu64 "\t", file_id, push_id);
	pbuf_put(&body, num, strlen(num));
	if (path) {
		ch_tsv_escape(&body, path);
		pbuf_put_u8(&body, '\t');
	}
	pbuf_put(&body, tail, strlen(tail));
	err = body.err ? -ENOMEM : ch_conn__exec(p->store.conn, sql, body.data, body.len, &out);
	free(sql);
	pbuf_free(&body);
	pbuf_free(&out);
	return err;
}

static int commit_file(struct fleet_push *p, const char *host, const char *path, uint64_t file_id,
		       uint64_t push_id, const struct fleet_file_info *info, const struct span *sp)
{
	char tail[200];

	snprintf(tail, sizeof(tail), "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
		 info->samples, info->records, sp->weight, sp->first, sp->last, wall_ns());
	return insert_file_row(p, p->store.files, "name, samples, records, weight, first, last, pushed_ns",
			       host, file_id, push_id, path, tail);
}

/* The attempt's mark, before any of its rows: the rollups count every
 * row, and a query takes back the rows of marks no commit names. */
static int mark_push(struct fleet_push *p, const char *host, uint64_t file_id, uint64_t push_id,
		     const struct span *sp)
{
	char tail[100];

	snprintf(tail, sizeof(tail), "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
		 sp->first, sp->last, wall_ns());
	return insert_file_row(p, p->store.pushes, "first, last, started_ns", host, file_id,
			       push_id, NULL, tail);
}

static int insert_stacks(struct fleet_push *p, struct fleet_push_result *r)
{
	struct pbuf body = { 0 }, out = { 0 };
	char *sql = NULL;
	int err = 0;

	if (stacks_tsv(p, &body, &r->stacks)) {
		pbuf_free(&body);
		return -ENOMEM;
	}
	if (body.len) {
		if (asprintf(&sql, "INSERT INTO %s (seen, stack_hash, symbols, dsos, build_ids) FORMAT TabSeparated",
			     p->store.stacks) < 0)
			err = -ENOMEM;
		else
			err = ch_conn__exec(p->store.conn, sql, body.data, body.len, &out);
		r->bytes += body.len;
	}
	free(sql);
	pbuf_free(&body);
	pbuf_free(&out);
	return err;
}

int fleet_push__file(struct fleet_push *p, const char *path, struct fleet_push_result *r)
{
	struct fleet_file_info info;
	struct span sp = { UINT64_MAX, 0, 0 };
	uint64_t file_id = 0, size = 0, push_id = 0;
	const char *host;
	double t0 = now_ms();
	bool stored = false;
	long wait = p->first_ms;
	int err;

	memset(r, 0, sizeof(*r));
	p->err[0] = 0;
	err = file_identity(path, &file_id, &size);
	if (err)
		return fail(p, err, path, strerror(-err));
	/* a file already there is not even read when the host is known */
	if (p->host) {
		err = already_stored(p, p->host, file_id, &stored);
		if (err)
			return fail(p, err, path, ch_conn__error(p->store.conn));
		if (stored) {
			r->ms = now_ms() - t0;
			return 1;
		}
	}
	reset_file(p);
	memset(&info, 0, sizeof(info));
	r->read_ms = now_ms();
	err = fleet_source__read(p->src, path, on_sample, p, &info);
	r->read_ms = now_ms() - r->read_ms;
	if (err)
		return fail(p, err, path, err == -ENOMEM ? "out of memory" :
			    err == -EINVAL || err == -ENOTSUP ? "not a perf.data push can read (see above)" :
			    strerror(-err));
	host = p->host ? p->host : info.hostname[0] ? info.hostname : p->local_host;
	r->samples = info.samples;
	r->records = info.records;
	r->offcpu_samples = info.offcpu_samples;
	/* from here on, nothing was counted until the commit below */
	if (!p->host) {
		err = already_stored(p, host, file_id, &stored);
		if (err)
			return fail(p, err, path, ch_conn__error(p->store.conn));
		if (stored) {
			r->ms = now_ms() - t0;
			return 1;
		}
	}
	for (size_t i = 0; i < p->nr_rows; i++) {
		if (p->rows[i].window < sp.first)
			sp.first = p->rows[i].window;
		if (p->rows[i].window > sp.last)
			sp.last = p->rows[i].window;
		/* the file's weight: of its CPU samples, as its samples */
		if (!p->rows[i].offcpu)
			sp.weight += p->rows[i].weight;
	}
	if (!p->nr_rows)
		sp.first = sp.last = (uint64_t)time(NULL);
	err = insert_stacks(p, r);
	if (err) {
		/* they may be half in: insert them all again next time */
		free(p->known);
		p->known = NULL;
		p->nr_known = p->cap_known = 0;
		return fail(p, err, path, ch_conn__error(p->store.conn));
	}
	for (r->attempts = 1;; r->attempts++) {
		push_id = new_push_id();
		err = mark_push(p, host, file_id, push_id, &sp);
		if (!err)
			err = insert_rows(p, host, file_id, push_id, r);
		if (err != -EAGAIN || r->attempts >= p->attempts)
			break;
		sleep_ms(wait);
		wait *= 2;
	}
	if (err)
		return fail(p, err, path, err == -ENOMEM ? "out of memory" : ch_conn__error(p->store.conn));
	err = commit_file(p, host, path, file_id, push_id, &info, &sp);
	if (err)
		return fail(p, err, path, ch_conn__error(p->store.conn));
	r->rows = p->nr_rows;
	r->ms = now_ms() - t0;
	r->store_ms = r->ms - r->read_ms;
	return 0;
}

static void push_usage(FILE *f)
{
	fputs("usage: precord push URL [--host NAME] [--debug-root DIR] FILE...\n"
	      "Push perf.data files (precord's or perf record's) into the store at URL\n"
	      "(a ClickHouse server's HTTP interface with precord's tables, see\n"
	      "precord fleet-schema).  Symbols are resolved here, from the build-id\n"
	      "cache and the binaries.  A file already in the store is skipped.\n"
	      "  --host NAME   the host's name in the store (default: the HOSTNAME the\n"
	      "                file recorded, else this machine's name)\n"
	      "  --debug-root DIR  where local debug files of stripped code are (default\n"
	      "                /usr/lib/debug); DEBUGINFOD_URLS: the servers asked next\n"
	      "  -q, --quiet   no line per file\n"
	      "  -v, --verbose where the time went, per file\n"
	      CH_CREDENTIALS_HELP,
	      f);
}

int fleet_push_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "debug-root", required_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *host = NULL;
	struct fleet_push *p;
	bool quiet = false, verbose = false;
	int opt, failed = 0;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "qvh", lo, NULL)) != -1) {
		if (opt == 'v') {
			verbose = true;
		} else if (opt == 'H') {
			host = optarg;
		} else if (opt == 'D') {
			sym_cache__set_debug_defaults(optarg, false, 0, 0);
		} else if (opt == 'q') {
			quiet = true;
		} else if (opt == 'h') {
			push_usage(stdout);
			return 0;
		} else {
			pr_err("push: unknown option or missing argument '%s' (see precord push --help)",
			       argv[optind - 1]);
			return 2;
		}
	}
	if (argc - optind < 2) {
		pr_err("push: give the store URL and at least one file (see precord push --help)");
		return 2;
	}
	if (host && !*host) {
		pr_err("push: --host needs a name");
		return 2;
	}
	p = fleet_push__new(argv[optind], host);
	if (!p)
		return 1;
	for (int i = optind + 1; i < argc; i++) {
		struct fleet_push_result r;
		int rc = fleet_push__file(p, argv[i], &r);

		if (rc < 0) {
			pr_err("%s", fleet_push__error(p));
			failed++;
		} else if (!quiet && rc == 1) {
			printf("%s: already in the store\n", argv[i]);
		} else if (!quiet) {
			printf("%s: %" PRIu64 " samples", argv[i], r.samples);
			/* an --aggregate file: fewer records than samples taken */
			if (r.records != r.samples)
				printf(" (%" PRIu64 " records)", r.records);
			if (r.offcpu_samples)
				printf(" and %" PRIu64 " off-CPU samples", r.offcpu_samples);
			printf(" as %" PRIu64 " rows, %" PRIu64 " new stacks, %.1f ms\n",
			       r.rows, r.stacks, r.ms);
		if (verbose && rc == 0)
			printf("%s: read and symbolized in %.1f ms; %" PRIu64 " bytes sent in %.1f ms (%d INSERT of the rows)\n",
			       argv[i], r.read_ms, r.bytes, r.store_ms, r.attempts);
		}
	}
	fleet_push__free(p);
	if (failed)
		pr_err("push: %d of %d files not pushed", failed, argc - optind - 1);
	return failed ? 1 : 0;
}
