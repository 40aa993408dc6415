// SPDX-License-Identifier: GPL-2.0
#include "record/debug_fetch.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/buildid_cache.h"
#include "perfdata/debuginfo.h"
#include "record/dsos.h"
#include "util/log.h"

/* The DSOs of one finished file. */
struct job {
	struct job *next;
	struct debuginfo_dso *v;
	size_t nr, cap;
	__u64 deadline;
};

struct debug_fetch {
	struct debuginfo *di;
	pthread_t thread;
	bool started, done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, **tail;
};

static void job_free(struct job *j)
{
	for (size_t i = 0; i < j->nr; i++) {
		free((char *)j->v[i].name);
		free((__u8 *)j->v[i].id);
		close(j->v[i].fd);
	}
	free(j->v);
	free(j);
}

/*
 * One file's stripped DSOs: their debug files.  Here is where a step
 * for each sampled DSO with no .symtab goes (debuginfo__find skips the
 * others).
 */
static void job_run(struct debug_fetch *f, struct job *j)
{
	debuginfo__find_all(f->di, j->v, j->nr, j->deadline);
}

static void *worker(void *arg)
{
	struct debug_fetch *f = arg;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct job *j = f->head;

		if (!j) {
			if (f->done)
				break;
			pthread_cond_wait(&f->cond, &f->lock);
			continue;
		}
		f->head = j->next;
		if (!f->head)
			f->tail = &f->head;
		pthread_mutex_unlock(&f->lock);
		job_run(f, j);
		job_free(j);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

struct debug_fetch *debug_fetch__new(const struct prec_opts *o, const char *cache_dir)
{
	struct debug_fetch *f;

	if (!cache_dir)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (f)
		f->di = debuginfo__new(&(struct debuginfo_config){
			.cache_dir = cache_dir, .debug_root = o->debug_root,
			.deadline_secs = o->debuginfod_timeout, .max_bytes = o->debuginfod_max,
			.no_server = o->no_debuginfod,
		});
	if (!f || !f->di) {
		free(f);
		pr_warn("no debug files for stripped binaries: %s", strerror(ENOMEM));
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->tail = &f->head;
	return f;
}

static void add_hit(void *ctx, const struct dso_hit *h)
{
	struct job *j = ctx;
	struct debuginfo_dso *d;

	if (j->nr == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 16;
		void *v = realloc(j->v, cap * sizeof(*j->v));

		if (!v)
			return;
		j->v = v;
		j->cap = cap;
	}
	d = &j->v[j->nr];
	*d = (struct debuginfo_dso){
		.name = strdup(h->name), .id = malloc(h->bid_size), .id_size = h->bid_size,
		.fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0),
		.flags = h->private_path ? BUILDID_CACHE_PRIVATE : 0,
	};
	if (!d->name || !d->id || d->fd < 0) {
		free((char *)d->name);
		free((__u8 *)d->id);
		if (d->fd >= 0)
			close(d->fd);
		return;
	}
	memcpy((__u8 *)d->id, h->bid, h->bid_size);
	j->nr++;
}

void debug_fetch__file(struct debug_fetch *f, const struct dso_table *dt)
{
	struct job *j;

	if (!f)
		return;
	j = calloc(1, sizeof(*j));
	if (!j)
		return;
	j->deadline = debuginfo__deadline(f->di);
	dso_table__for_each_hit(dt, add_hit, j);
	if (!j->nr) {
		job_free(j);
		return;
	}
	pthread_mutex_lock(&f->lock);
	if (!f->started)
		f->started = !pthread_create(&f->thread, NULL, worker, f);
	if (f->started) {
		*f->tail = j;
		f->tail = &j->next;
		pthread_cond_signal(&f->cond);
		j = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	if (j) {		/* no thread: looked up here, at the end only */
		job_run(f, j);
		job_free(j);
	}
}

void debug_fetch__finish(struct debug_fetch *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->done = true;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	if (f->started)
		pthread_join(f->thread, NULL);
	debuginfo__free(f->di);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
