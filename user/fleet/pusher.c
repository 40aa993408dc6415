// SPDX-License-Identifier: GPL-2.0
#include "pusher.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet/push.h"
#include "report/symbolizer.h"
#include "util/log.h"
#include "util/printable.h"

#define PUSHER_BACKOFF_FIRST_MS	1000
#define PUSHER_BACKOFF_MAX_MS	30000
/* One request may take this long: a slow store delays the next file, not
 * the recording, and the final wait stays bounded. */
#define PUSHER_REQUEST_SECS	10

struct fleet_pusher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a file came, or finishing began */
	pthread_cond_t idle;		/* the queue emptied */
	char *url, *host;
	char shown[PRINTABLE_MAX];	/* url for messages: no password */
	char **queue;			/* pending, oldest first */
	size_t nr, cap;
	bool finishing, stop, busy;
	unsigned long pushed, already, dropped, failed;
	char last_error[400];
	struct fleet_push *push;	/* the thread's own */
};

static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* One attempt at the oldest file, the lock not held.  0: done with it
 * (pushed, already there, dropped or refused); -EAGAIN: try later. */
static int push_one(struct fleet_pusher *p, const char *path)
{
	struct fleet_push_result r;
	int rc;

	if (!p->push) {
		char why[400];

		/* the store may be down: said once at the end, not per try */
		p->push = fleet_push__new_quiet(p->url, p->host, 1, why, sizeof(why));
		if (!p->push) {
			pthread_mutex_lock(&p->lock);
			snprintf(p->last_error, sizeof(p->last_error), "%s", why);
			pthread_mutex_unlock(&p->lock);
			return -EAGAIN;
		}
		fleet_push__set_retry(p->push, 1, 0);
		fleet_push__set_timeout(p->push, PUSHER_REQUEST_SECS);
	}
	rc = fleet_push__file(p->push, path, &r);
	pthread_mutex_lock(&p->lock);
	if (rc == 0)
		p->pushed++;
	else if (rc == 1)
		p->already++;
	else if (rc == -ENOENT)
		p->dropped++;	/* --switch-max-files removed it first */
	else if (rc != -EAGAIN)
		p->failed++;
	if (rc < 0)
		snprintf(p->last_error, sizeof(p->last_error), "%s", fleet_push__error(p->push));
	pthread_mutex_unlock(&p->lock);
	if (rc < 0 && rc != -EAGAIN && rc != -ENOENT)
		pr_warn("--push: %s", fleet_push__error(p->push));
	if (rc == -EAGAIN) {
		/* a new connection next time: the store may come back elsewhere */
		fleet_push__free(p->push);
		p->push = NULL;
	}
	return rc == -EAGAIN ? -EAGAIN : 0;
}

static void *pusher_thread(void *arg)
{
	struct fleet_pusher *p = arg;
	long backoff = PUSHER_BACKOFF_FIRST_MS;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		char *path;
		int rc;

		if (!p->nr) {
			pthread_cond_broadcast(&p->idle);
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		path = p->queue[0];
		p->busy = true;
		pthread_mutex_unlock(&p->lock);
		rc = push_one(p, path);
		pthread_mutex_lock(&p->lock);
		p->busy = false;
		if (rc == 0) {
			free(path);
			memmove(p->queue, p->queue + 1, --p->nr * sizeof(*p->queue));
			backoff = PUSHER_BACKOFF_FIRST_MS;
			continue;
		}
		if (!p->stop) {
			struct timespec ts;

			/* while finishing, every half second: the wait is short */
			deadline_in(&ts, p->finishing ? 500 : backoff);
			pthread_cond_timedwait(&p->cond, &p->lock, &ts);
			if (backoff < PUSHER_BACKOFF_MAX_MS)
				backoff *= 2;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct fleet_pusher *fleet_pusher__new(const char *url, const char *host,
				       const char *buildid_dir)
{
	struct fleet_pusher *p;
	char name[256];

	/* the push thread's symbol cache: the recorder's build-id cache */
	if (sym_cache__set_default_dir(buildid_dir))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (!host) {
		if (gethostname(name, sizeof(name) - 1))
			strcpy(name, "localhost");
		name[sizeof(name) - 1] = 0;
		host = name;
	}
	p->url = strdup(url);
	p->host = strdup(host);
	printable_url(p->shown, sizeof(p->shown), url);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->idle, NULL);
	if (!p->url || !p->host || pthread_create(&p->thread, NULL, pusher_thread, p)) {
		free(p->url);
		free(p->host);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void fleet_pusher__add(struct fleet_pusher *p, const char *path)
{
	char *copy = strdup(path);

	pthread_mutex_lock(&p->lock);
	if (copy && p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		char **nq = realloc(p->queue, cap * sizeof(*nq));

		if (nq) {
			p->queue = nq;
			p->cap = cap;
		}
	}
	if (copy && p->nr < p->cap) {
		p->queue[p->nr++] = copy;
		pthread_cond_signal(&p->cond);
	} else {
		free(copy);
		p->failed++;
		snprintf(p->last_error, sizeof(p->last_error), "out of memory queueing %s", path);
	}
	pthread_mutex_unlock(&p->lock);
}

int fleet_pusher__finish(struct fleet_pusher *p, double wait_secs)
{
	struct timespec ts;
	size_t left;
	int missed;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	p->finishing = true;
	pthread_cond_broadcast(&p->cond);
	deadline_in(&ts, (long)(wait_secs * 1000));
	while ((p->nr || p->busy) &&
	       pthread_cond_timedwait(&p->idle, &p->lock, &ts) != ETIMEDOUT)
		;
	/* pending files --switch-max-files removed meanwhile: dropped (not
	 * the first while the thread is pushing it: it owns that entry) */
	left = 0;
	for (size_t i = 0; i < p->nr; i++) {
		if ((i > 0 || !p->busy) && access(p->queue[i], F_OK) && errno == ENOENT) {
			p->dropped++;
			free(p->queue[i]);
		} else {
			p->queue[left++] = p->queue[i];
		}
	}
	p->nr = left;
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	missed = (int)(left + p->dropped + p->failed);
	if (missed)
		pr_err("--push: %lu files pushed to %s, %lu were already there; NOT delivered: %zu still pending (kept on disk%s%s), %lu removed by --switch-max-files before they were pushed, %lu refused%s%s",
			p->pushed, p->shown, p->already, left, left ? ", first " : "",
			left ? p->queue[0] : "", p->dropped, p->failed,
			p->last_error[0] ? "; last error: " : "", p->last_error);
	else if (log_verbosity >= 0 && p->pushed + p->already)
		fprintf(stderr, "precord: --push: %lu files pushed to %s (%lu were already there)\n",
			p->pushed, p->shown, p->already);
	if (p->busy) {
		/* a request still running: its thread ends with the process,
		 * the recording does not wait for it */
		pthread_mutex_unlock(&p->lock);
		pthread_detach(p->thread);
		return missed;
	}
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	fleet_push__free(p->push);
	for (size_t i = 0; i < p->nr; i++)
		free(p->queue[i]);
	free(p->queue);
	free(p->url);
	free(p->host);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->idle);
	free(p);
	return missed;
}
