/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's --push: finished files pushed by a thread of their own,
 * oldest first, so the recording never waits for the store.  While the
 * store is down the files wait on disk (--switch-max-files bounds them: a
 * file removed before it was pushed is counted as dropped) and the thread
 * tries again, backing off from 1 s to 30 s.  At the end the recorder
 * waits a bounded time for what is pending and says what was not
 * delivered.
 */
#ifndef PRECORD_FLEET_PUSHER_H
#define PRECORD_FLEET_PUSHER_H

struct fleet_pusher;

/* host NULL: this machine's name; buildid_dir: the recorder's
 * --buildid-dir, where the files' symbols are looked up (NULL: perf's
 * default).  NULL + errno (nothing is contacted yet: the store may be
 * down when the recording starts). */
struct fleet_pusher *fleet_pusher__new(const char *url, const char *host,
				       const char *buildid_dir);
/* A finished file (path copied); never blocks on the store. */
void fleet_pusher__add(struct fleet_pusher *p, const char *path);
/*
 * Wait up to wait_secs for the pending files, then stop, print one line
 * of what was pushed, dropped and not delivered, and free.  Returns the
 * number of files not delivered (dropped ones included).  NULL-safe.
 */
int fleet_pusher__finish(struct fleet_pusher *p, double wait_secs);

#endif
