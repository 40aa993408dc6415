/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroup2 hierarchy (--all-cgroups, -G): where it is mounted, the
 * kernel's id of a cgroup, the PERF_RECORD_CGROUP records of the cgroups
 * that exist at the start, and the cgroup -G names.
 *
 * precord always uses the cgroup2 (unified) hierarchy: the id a sample
 * carries is bpf_get_current_cgroup_id(), the task's cgroup there.  On a
 * hybrid v1/v2 system that is the cgroup2 mount (/sys/fs/cgroup/unified
 * under systemd), on a pure v2 system /sys/fs/cgroup.
 */
#ifndef PRECORD_RECORD_CGROUPS_H
#define PRECORD_RECORD_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct cgroup_mount;

/*
 * The cgroup2 mount in a /proc/PID/mountinfo text: the first one that
 * shows the whole hierarchy (root "/"), else the first one.  NULL + errno
 * (ENOENT: none; ENOMEM).  Pure: unit-tested on canned texts.
 */
struct cgroup_mount *cgroup_mount__parse(const char *mountinfo);
/* The same from /proc/self/mountinfo; says what failed: NULL + errno. */
struct cgroup_mount *cgroup_mount__find(void);
void cgroup_mount__free(struct cgroup_mount *m);		/* NULL-safe */

/* Where it is mounted, and the hierarchy's path of the mount's root
 * ("/" unless a subtree is mounted). */
const char *cgroup_mount__dir(const struct cgroup_mount *m);
const char *cgroup_mount__root(const struct cgroup_mount *m);

/*
 * -G NAME as a path: NAME relative to the mount (a leading "/" too, as
 * perf's -G), or an absolute path under the mount.  "." and ".."
 * components are refused (-EINVAL), a path too long gives -ENAMETOOLONG.
 */
int cgroup_mount__resolve(const struct cgroup_mount *m, const char *name, char *out,
			  size_t size);

/* Open -G NAME's cgroup directory (a cgroup2 one): an fd, or -errno after
 * one line that says what failed. */
int cgroup_mount__open(const struct cgroup_mount *m, const char *name);
/* --all-cgroups (all) and -G NAME (name, NULL: none): the mount in *m
 * and NAME's cgroup open in *fd (left as it is without -G); neither
 * option: nothing.  0 or -errno (said). */
int cgroup_mount__setup(bool all, const char *name, struct cgroup_mount **m, int *fd);

/* The kernel's id of the cgroup directory at fd: the u64 of its file
 * handle (what perf's synthesis uses, = bpf_get_current_cgroup_id()). */
int cgroup_id(int fd, __u64 *id);

/*
 * PERF_RECORD_CGROUP (zero trailer) for every cgroup under the mount,
 * parents before children, path relative to the hierarchy's root ("/",
 * "/a", "/a/b"), as perf record --all-cgroups synthesizes them.  A cgroup
 * that goes away meanwhile is skipped; 0 or -errno.
 */
int cgroup_mount__synthesize(const struct cgroup_mount *m, struct pbuf *out, __u64 id_type);

#endif
