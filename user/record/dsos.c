// SPDX-License-Identifier: GPL-2.0
#include "record/dsos.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/gosyms.h"
#include "elf/headers.h"
#include "perfdata/buildid_cache.h"
#include "perfdata/go_symfile.h"
#include "record/synth.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/keymap.h"
#include "util/log.h"
#include "util/printable.h"
#include "util/rangemap.h"
#include "util/safe_open.h"

/*
 * Descriptors kept open for the build-id cache: half the RLIMIT_NOFILE
 * soft limit (main raises it to the hard limit), the rest for the perf
 * events, BPF objects and JIT sources; at most DSO_FDS_MAX.  With 1024
 * and a fixed 4096 a target mapping 1100 files made 211 opens fail
 * (EMFILE) and lost their build-ids and the target's perf map.
 */
#define DSO_FDS_MAX	65536
#define E2BIG_WARN_MAX	5		/* then only counted */

/*
 * Mappings tracked per process (for build-ids and the DSOs samples hit):
 * a hostile process can make mappings without end (mmap at a new address
 * each time: munmap has no record), and a large JVM maps a few thousand.
 * Past this many, a process's new mappings are counted, said once, and
 * not tracked; their MMAP2 records still go into the file.
 */
#define DSO_MAPS_PER_PROC	65536

struct dso {
	char *name;
	__u8 bid[20];
	__u8 bid_size;
	bool hit;
	int fd;			/* the mapped file, for the cache; -1 if none */
	dev_t dev;		/* of fd, to skip re-reading the same file */
	ino_t ino;
	bool private_path;	/* a directory on its path is closed to others */
	__u64 fd_time;		/* when fd was kept (CLOCK_MONOTONIC) */
	__u32 fd_epoch;		/* changes with fd: by_file entries before are stale */
	size_t ranges;		/* mapped ranges naming it, in all processes */
};

struct pmaps {
	__u32 pid;
	struct rangemap m;	/* values: indices in dsos */
	__u64 over;		/* mappings past the cap, not tracked */
};

struct dso_table {
	struct dso *dsos;
	size_t nr, cap;
	size_t *free_idx;	/* unused entries of dsos */
	size_t nr_free, free_cap;
	struct keymap by_name;	/* name, build-id → index */
	struct keymap by_file;	/* name, kernel's file id → index, epoch */
	struct keymap by_inode;	/* name, fd's device and inode → index */
	struct pbuf key;	/* scratch for the keys */
	__u64 bid_bytes;	/* dso_table__build_id_bytes */
	struct pmaps **procs;	/* open addressing, pid keyed */
	size_t procs_cap, procs_nr;
	struct rangemap_ops ops;
	size_t max_maps;	/* per process */
	__u64 maps_over;	/* mappings past it, in all */
	__u32 procs_over;	/* processes that had some */
	int open_fds, max_fds;
	unsigned int too_big;	/* ELF files refused for their counts */
	bool kernel_hit;
	struct perfdata_build_id *out;
	__u8 kbid[20], vbid[20];
	struct dso_mmap_observer obs;
};

/* A range of a process's map names (holds) or stops naming a DSO. */
static void dso_hold(void *ctx, uintptr_t idx)
{
	((struct dso_table *)ctx)->dsos[idx].ranges++;
}

static void dso_drop(void *ctx, uintptr_t idx)
{
	((struct dso_table *)ctx)->dsos[idx].ranges--;
}

struct dso_table *dso_table__new(void)
{
	struct dso_table *dt = calloc(1, sizeof(struct dso_table));
	struct rlimit rl;

	if (!dt)
		return NULL;
	dt->ops = (struct rangemap_ops){ dso_hold, dso_drop, dt };
	dt->max_maps = DSO_MAPS_PER_PROC;
	dt->max_fds = 512;
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		dt->max_fds = rl.rlim_cur / 2 < DSO_FDS_MAX ? (int)(rl.rlim_cur / 2) : DSO_FDS_MAX;
	return dt;
}

void dso_table__set_observer(struct dso_table *dt, const struct dso_mmap_observer *obs)
{
	dt->obs = *obs;
}

void dso_table__free(struct dso_table *dt)
{
	size_t i;

	if (!dt)
		return;
	for (i = 0; i < dt->procs_cap; i++) {	/* first: they count on dsos */
		if (dt->procs[i]) {
			rangemap__clear(&dt->procs[i]->m);
			free(dt->procs[i]);
		}
	}
	for (i = 0; i < dt->nr; i++) {
		free(dt->dsos[i].name);
		if (dt->dsos[i].fd >= 0)
			close(dt->dsos[i].fd);
	}
	free(dt->procs);
	free(dt->dsos);
	free(dt->free_idx);
	keymap_free(&dt->by_name);
	keymap_free(&dt->by_file);
	keymap_free(&dt->by_inode);
	pbuf_free(&dt->key);
	free(dt->out);
	free(dt);
}

static struct pmaps **proc_slot(struct dso_table *dt, __u32 pid)
{
	size_t i = (pid * 2654435761u) & (dt->procs_cap - 1);

	while (dt->procs[i] && dt->procs[i]->pid != pid)
		i = (i + 1) & (dt->procs_cap - 1);
	return &dt->procs[i];
}

static struct pmaps *proc_get(struct dso_table *dt, __u32 pid, bool create)
{
	struct pmaps **slot;

	if (dt->procs_cap && (slot = proc_slot(dt, pid)) && *slot)
		return *slot;
	if (!create)
		return NULL;
	if ((dt->procs_nr + 1) * 2 > dt->procs_cap) {
		size_t ncap = dt->procs_cap ? dt->procs_cap * 2 : 64, i;
		struct pmaps **old = dt->procs;
		size_t ocap = dt->procs_cap;

		dt->procs = calloc(ncap, sizeof(*dt->procs));
		if (!dt->procs) {
			dt->procs = old;
			return NULL;
		}
		dt->procs_cap = ncap;
		for (i = 0; i < ocap; i++)
			if (old[i])
				*proc_slot(dt, old[i]->pid) = old[i];
		free(old);
	}
	slot = proc_slot(dt, pid);
	*slot = calloc(1, sizeof(**slot));
	if (!*slot)
		return NULL;
	(*slot)->pid = pid;
	rangemap__init(&(*slot)->m, &dt->ops);
	dt->procs_nr++;
	return *slot;
}

/* The keymaps' keys: name and its NUL, then n bytes of rest.  NULL: no
 * memory. */
static const void *make_key(struct dso_table *dt, const char *name, const void *rest, size_t n)
{
	pbuf_reset(&dt->key);
	pbuf_put(&dt->key, name, strlen(name) + 1);
	pbuf_put(&dt->key, rest, n);
	return dt->key.err ? NULL : dt->key.data;
}

static const void *name_key(struct dso_table *dt, const char *name, const __u8 *bid,
			    __u8 bid_size)
{
	__u8 b[21] = { bid_size };

	memcpy(b + 1, bid, bid_size);
	return make_key(dt, name, b, (size_t)bid_size + 1);
}

/* The mapped file as the kernel's record named it: device, inode and its
 * generation. */
static void fid_key(const struct dso_file_id *id, __u64 k[3])
{
	k[0] = (__u64)id->maj << 32 | id->min;
	k[1] = id->ino;
	k[2] = id->has_generation ? id->ino_generation : ~0ull;
}

static const void *inode_key(struct dso_table *dt, const char *name, dev_t dev, ino_t ino)
{
	__u64 k[2] = { dev, ino };

	return make_key(dt, name, k, sizeof(k));
}

/* The index a keymap gives for the current key, or -1. */
static long key_get(const struct dso_table *dt, const struct keymap *km, const void *key)
{
	const uint64_t *v = key ? keymap_get(km, key, dt->key.len) : NULL;

	return v && *v < dt->nr && dt->dsos[*v].name ? (long)*v : -1;
}

static void key_put(struct dso_table *dt, struct keymap *km, const void *key, size_t idx)
{
	uint64_t *v = key ? keymap_put(km, key, dt->key.len, NULL) : NULL;

	if (v)
		*v = idx;	/* no memory: only found the slow way later */
}

/* A DSO keeps fd (its file's status st). */
static void dso_keep_fd(struct dso_table *dt, size_t idx, int fd, const struct stat *st)
{
	struct dso *d = &dt->dsos[idx];
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	d->fd = fd;
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->fd_time = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec;
	d->fd_epoch++;
	if (st->st_ino)
		key_put(dt, &dt->by_inode, inode_key(dt, d->name, d->dev, d->ino), idx);
	dt->open_fds++;
}

/*
 * A mapping of name with id was found (opened with reopen_checked's
 * checks) to be the file DSO idx keeps open.  While that descriptor is
 * open its inode cannot be freed nor its number reused: a mapping with the
 * same id made since the DSO kept it is of that file too.
 */
static void dso_learn_file(struct dso_table *dt, size_t idx, const struct dso_file_id *id)
{
	const struct dso *d = &dt->dsos[idx];
	__u64 k[3];
	uint64_t *v;

	if (!id || !id->ino)
		return;
	fid_key(id, k);
	v = make_key(dt, d->name, k, sizeof(k)) ?
	    keymap_put(&dt->by_file, dt->key.data, dt->key.len, NULL) : NULL;
	if (v)
		*v = (uint64_t)d->fd_epoch << 32 | idx;
}

static __u64 entry_bytes(const char *name)
{
	return perfdata_build_id_entry_size(&(struct perfdata_build_id){ .filename = name });
}

/* The DSO of name and build-id, added if new: by hash, not by a scan of
 * them all (a process mapping 20,000 files made that quadratic). */
static int dso_find_or_add(struct dso_table *dt, const char *name, const __u8 *bid,
			   __u8 bid_size)
{
	const void *key = name_key(dt, name, bid, bid_size);
	long found = key_get(dt, &dt->by_name, key);
	size_t slot;
	struct dso *d;

	if (found >= 0 && !strcmp(dt->dsos[found].name, name) &&
	    dt->dsos[found].bid_size == bid_size && !memcmp(dt->dsos[found].bid, bid, bid_size))
		return (int)found;
	if (!key)
		return -ENOMEM;
	if (dt->nr_free) {
		slot = dt->free_idx[dt->nr_free - 1];
	} else {
		if (dt->nr >= INT_MAX || ARRAY_GROW(dt->dsos, dt->cap, dt->nr + 1))
			return -ENOMEM;
		slot = dt->nr;
	}
	d = &dt->dsos[slot];
	memset(d, 0, sizeof(*d));
	d->name = strdup(name);
	if (!d->name)
		return -ENOMEM;
	memcpy(d->bid, bid, bid_size);
	d->bid_size = bid_size;
	d->fd = -1;
	if (slot == dt->nr)
		dt->nr++;
	else
		dt->nr_free--;
	dt->bid_bytes += entry_bytes(name);
	key_put(dt, &dt->by_name, name_key(dt, name, bid, bid_size), slot);
	return (int)slot;
}

/*
 * The device is compared only for a file opened by name: what map_files
 * gives is the mapping's own file (the inode tells a range mapped again
 * since), and on btrfs the device that stat reports for a subvolume is
 * not the one the kernel puts in MMAP2 records.
 */
static bool same_file(const struct stat *st, const struct dso_file_id *id, bool by_name)
{
	return st->st_ino == id->ino &&
	       (!by_name || (major(st->st_dev) == id->maj && minor(st->st_dev) == id->min));
}

/*
 * By name, the same device and inode can still be another file: the
 * unmapped file's inode number is free and a file created afterwards
 * gets it (seen on ext4 in tests/bats/hostile_elf.bats: a copy of
 * /bin/ls took the inode of the library just unmapped).  Refused: a
 * different inode generation where the file system reports one, and a
 * file whose status changed after the mapping was made.  Kernel file
 * times come from a coarse clock, up to a tick (10 ms at HZ=100) behind:
 * CTIME_SLACK_NS.
 */
#define CTIME_SLACK_NS	20000000ull

static bool unchanged_since_mapped(int fd, const struct stat *st, const struct dso_file_id *id)
{
	struct timespec rt, mono;
	long gen = 0;
	__s64 ctime_mono;

	if (id->has_generation && !ioctl(fd, FS_IOC_GETVERSION, &gen) &&
	    (__u32)gen != (__u32)id->ino_generation)
		return false;
	if (!id->time || clock_gettime(CLOCK_REALTIME, &rt) || clock_gettime(CLOCK_MONOTONIC, &mono))
		return true;
	ctime_mono = (st->st_ctim.tv_sec - rt.tv_sec + mono.tv_sec) * 1000000000ll +
		     st->st_ctim.tv_nsec - rt.tv_nsec + mono.tv_nsec;
	return ctime_mono + (__s64)CTIME_SLACK_NS <= (__s64)id->time;
}

/*
 * pathfd is an O_PATH descriptor: getting it opened nothing (no device
 * was opened, no FIFO blocked).  The file is opened for reading through
 * /proc/self/fd, which reopens that very inode, only when it is a
 * regular file and, if id is known, the file the mapping named; without
 * an id only when !need_id (need_id: opened by name, so also on the same
 * device and unchanged since it was mapped).  pathfd is closed.  Returns an fd or -errno
 * (-ESTALE: another file than the mapped one).
 */
static int reopen_checked(int pathfd, const struct dso_file_id *id, bool need_id)
{
	char self[32];
	struct stat st;
	int fd;

	if (fstat(pathfd, &st))
		fd = -errno;
	else if (!S_ISREG(st.st_mode))
		fd = -EINVAL;
	else if (id && id->ino ? !same_file(&st, id, need_id) : need_id)
		fd = -ESTALE;
	else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
		fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			fd = -errno;
	}
	if (fd >= 0 && need_id && !unchanged_since_mapped(fd, &st, id)) {
		close(fd);
		fd = -ESTALE;
	}
	close(pathfd);
	return fd;
}

/* name inside the process's root, as an O_PATH fd: no symlink followed
 * (the kernel names mappings by their resolved path), no way out by "..". */
static int open_in_root(__u32 pid, const char *name)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[32];
	int root, fd;

	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, root, name + 1, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)	/* no openat2: the inode check still holds */
		fd = openat(root, name + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(root);
	return fd;
}

/*
 * The mapped file: /proc/PID/map_files while the mapping exists, else
 * name inside /proc/PID/root, which the process may have swapped for a
 * symlink, a device or another file by now (root opened /dev/kmsg and
 * copied a root-only file into the cache that way): refused unless its
 * device and inode are the mapping's.
 */
static int open_mapped_file(__u32 pid, __u64 start, __u64 len, const char *name,
			    const struct dso_file_id *id)
{
	char path[96];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 pid, (uint64_t)start, (uint64_t)(start + len));
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0)
		return reopen_checked(fd, id, false);
	err = -errno;
	if (err == -EMFILE || err == -ENFILE || name[0] != '/' || !id || !id->ino)
		return err;
	fd = open_in_root(pid, name);
	return fd < 0 ? fd : reopen_checked(fd, id, true);
}

/*
 * Can others reach name in pid's root: is every directory on its path
 * searchable by all (o+x)?  Not when one cannot be opened (gone, a
 * symlink): the cache then keeps its copy for its owner only.
 */
static bool public_in_root(__u32 pid, const char *name)
{
	char root[32];
	bool ok;
	int fd;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = path_public(fd, name);
	close(fd);
	return ok;
}

/* Out of descriptors: close a kept one, one without samples if any. */
static bool dso_evict_fd(struct dso_table *dt)
{
	struct dso *victim = NULL;

	for (size_t i = 0; i < dt->nr; i++) {
		struct dso *d = &dt->dsos[i];

		if (d->fd < 0)
			continue;
		victim = d;
		if (!d->hit)
			break;
	}
	if (!victim)
		return false;
	close(victim->fd);
	victim->fd = -1;
	dt->open_fds--;
	return true;
}

static int open_mapped_retry(struct dso_table *dt, __u32 pid, __u64 start, __u64 len,
			     const char *name, const struct dso_file_id *id)
{
	int fd = open_mapped_file(pid, start, len, name, id);

	/* two descriptors at a time: the O_PATH one and the reopened one */
	for (int i = 0; i < 2 && (fd == -EMFILE || fd == -ENFILE) && dso_evict_fd(dt); i++)
		fd = open_mapped_file(pid, start, len, name, id);
	if (fd < 0)
		pr_debug("%s (PID %u): not read: %s", name, pid, strerror(-fd));
	return fd;
}

static int read_build_id(struct dso_table *dt, int fd, const char *name, __u8 *bid)
{
	int n = elf_build_id_or_go_fd(fd, bid);	/* a stripped Go binary: precord's id */

	if (n == -E2BIG && dt->too_big++ < E2BIG_WARN_MAX)
		pr_warn("%s: more than %u sections or %u segments: its build-id is not read",
			name, ELF_MAX_SECTIONS, ELF_MAX_SEGMENTS);
	return n;
}

/* A DSO already read from the same file (same path, device and inode). */
static const struct dso *dso_by_inode(struct dso_table *dt, const char *name,
				      dev_t dev, ino_t ino)
{
	long i = key_get(dt, &dt->by_inode, inode_key(dt, name, dev, ino));
	const struct dso *d = i >= 0 ? &dt->dsos[i] : NULL;

	return d && d->fd >= 0 && d->ino == ino && d->dev == dev && !strcmp(d->name, name) ?
	       d : NULL;
}

/*
 * A DSO holding open the file a mapping of name with id names (see
 * fid_key), its build-id bid if the kernel gave one: -1 if none.  A
 * mapping made before the DSO's file is known to have had that inode
 * number is not taken for it (the number may then have been another
 * file's): reopen_checked decides for it.
 */
static long dso_by_file(struct dso_table *dt, const char *name, const struct dso_file_id *id,
			const __u8 *bid, __u8 bid_size)
{
	const uint64_t *v;
	const struct dso *d;
	__u64 k[3];
	size_t i;

	if (!id || !id->ino)
		return -1;
	fid_key(id, k);
	v = make_key(dt, name, k, sizeof(k)) ? keymap_get(&dt->by_file, dt->key.data, dt->key.len) :
	    NULL;
	if (!v || (i = (__u32)*v) >= dt->nr)
		return -1;
	d = &dt->dsos[i];
	if (!d->name || d->fd < 0 || d->fd_epoch != (__u32)(*v >> 32) || strcmp(d->name, name) ||
	    (id->time && id->time < d->fd_time) ||
	    (bid_size && (bid_size != d->bid_size || memcmp(bid, d->bid, bid_size))))
		return -1;
	return (long)i;
}

/* A mapping past the cap: counted, said once per process. */
static void over_cap(struct dso_table *dt, struct pmaps *p)
{
	char comm[32], shown[PRINTABLE_MAX];

	if (!p->over++) {
		dt->procs_over++;
		proc_comm(p->pid, comm, sizeof(comm));
		pr_warn("PID %u (%s) has more than %zu mappings: the ones past it are not tracked for build-ids and sampled DSOs (their records are kept)",
			p->pid, printable(shown, sizeof(shown), comm), dt->max_maps);
	}
	dt->maps_over++;
}

int dso_table__mmap(struct dso_table *dt, __u32 pid, __u64 start, __u64 len,
		    const char *name, const struct dso_file_id *id,
		    __u8 *bid, __u8 *bid_size)
{
	struct pmaps *p = proc_get(dt, pid, true);
	bool file = name[0] == '/';
	struct stat st = { 0 };
	int idx, fd = -1;
	long known;

	if (!p)
		return -ENOMEM;
	if (!len || start + len < start)
		return -EINVAL;
	if (rangemap__count(&p->m) >= dt->max_maps) {
		over_cap(dt, p);
		/* what it covers is not what it was any more */
		return rangemap__insert(&p->m, start, start + len, 0, 0, dt->max_maps) < 0 ?
		       -ENOMEM : 0;
	}
	/* The same file mapped again (a library's segments, a process's
	 * mappings one page at a time): known without opening it again. */
	known = file ? dso_by_file(dt, name, id, bid, *bid_size) : -1;
	if (known >= 0) {
		memcpy(bid, dt->dsos[known].bid, dt->dsos[known].bid_size);
		*bid_size = dt->dsos[known].bid_size;
		if (dt->obs.mapped)
			dt->obs.mapped(dt->obs.ctx, pid, start, len, id->pgoff,
				       dt->dsos[known].fd, name, bid, *bid_size);
		return rangemap__insert(&p->m, start, start + len, id->pgoff, (uintptr_t)known,
					dt->max_maps) < 0 ? -ENOMEM : 0;
	}
	if (file && (!*bid_size || dt->open_fds < dt->max_fds))
		fd = open_mapped_retry(dt, pid, start, len, name, id);
	if (fd >= 0 && fstat(fd, &st))
		st.st_ino = 0;
	if (fd >= 0 && !*bid_size) {
		const struct dso *same = st.st_ino ? dso_by_inode(dt, name, st.st_dev, st.st_ino) : NULL;
		int n = same ? same->bid_size : read_build_id(dt, fd, name, bid);

		if (same)
			memcpy(bid, same->bid, same->bid_size);
		*bid_size = n > 0 ? (__u8)n : 0;
	}
	if (dt->obs.mapped)
		dt->obs.mapped(dt->obs.ctx, pid, start, len, id ? id->pgoff : 0, fd, name,
			       bid, *bid_size);
	idx = dso_find_or_add(dt, name, bid, *bid_size);
	if (idx < 0) {
		if (fd >= 0)
			close(fd);
		return idx;
	}
	if (fd >= 0 && dt->dsos[idx].fd < 0 && dt->open_fds < dt->max_fds) {
		dso_keep_fd(dt, (size_t)idx, fd, &st);
		dt->dsos[idx].private_path = !public_in_root(pid, name);
	} else if (fd >= 0) {
		close(fd);
	}
	if (fd >= 0 && dt->dsos[idx].fd >= 0 && st.st_ino && dt->dsos[idx].ino == st.st_ino &&
	    dt->dsos[idx].dev == st.st_dev)
		dso_learn_file(dt, (size_t)idx, id);
	return rangemap__insert(&p->m, start, start + len, id ? id->pgoff : 0, (uintptr_t)idx,
				dt->max_maps) < 0 ? -ENOMEM : 0;
}

/* The child shares the parent's map (its nodes copied as either changes
 * them): O(1), however many mappings and forks. */
void dso_table__fork(struct dso_table *dt, __u32 ppid, __u32 pid)
{
	struct pmaps *pp = proc_get(dt, ppid, false), *c;

	if (!pp || pp->pid == pid)
		return;
	c = proc_get(dt, pid, true);
	pp = proc_get(dt, ppid, false);	/* the table may have grown */
	if (!c || !pp || rangemap__count(&c->m))
		return;
	rangemap__share(&c->m, &pp->m);
}

void dso_table__forget(struct dso_table *dt, __u32 pid)
{
	size_t i, j;

	if (!dt->procs_cap)
		return;
	i = (size_t)(proc_slot(dt, pid) - dt->procs);
	if (!dt->procs[i])
		return;
	rangemap__clear(&dt->procs[i]->m);
	free(dt->procs[i]);
	dt->procs[i] = NULL;
	dt->procs_nr--;
	/* linear probing: the entries after the hole move back where due */
	for (j = (i + 1) & (dt->procs_cap - 1); dt->procs[j]; j = (j + 1) & (dt->procs_cap - 1)) {
		struct pmaps *p = dt->procs[j];

		dt->procs[j] = NULL;
		*proc_slot(dt, p->pid) = p;
	}
}

/* The keymaps and the free list anew, for the DSOs left (by_file is
 * learnt again as mappings come). */
static void reindex(struct dso_table *dt)
{
	keymap_free(&dt->by_name);
	keymap_free(&dt->by_file);
	keymap_free(&dt->by_inode);
	dt->nr_free = 0;
	for (size_t i = 0; i < dt->nr; i++) {
		struct dso *d = &dt->dsos[i];

		if (!d->name) {
			if (!ARRAY_GROW(dt->free_idx, dt->free_cap, dt->nr_free + 1))
				dt->free_idx[dt->nr_free++] = i;
			continue;
		}
		key_put(dt, &dt->by_name, name_key(dt, d->name, d->bid, d->bid_size), i);
		if (d->fd >= 0 && d->ino)
			key_put(dt, &dt->by_inode, inode_key(dt, d->name, d->dev, d->ino), i);
	}
}

void dso_table__new_file(struct dso_table *dt)
{
	for (size_t i = 0; i < dt->nr; i++) {
		struct dso *d = &dt->dsos[i];

		if (!d->ranges && d->name) {
			dt->bid_bytes -= entry_bytes(d->name);
			free(d->name);
			d->name = NULL;
			if (d->fd >= 0) {
				close(d->fd);
				dt->open_fds--;
			}
			d->fd = -1;
		}
		d->hit = false;
	}
	while (dt->nr && !dt->dsos[dt->nr - 1].name)
		dt->nr--;
	dt->kernel_hit = false;
	reindex(dt);
}

void dso_table__hit(struct dso_table *dt, __u32 pid, __u64 ip)
{
	struct pmaps *p = proc_get(dt, pid, false);
	struct rangemap_range r;

	if (p && rangemap__find(&p->m, ip, &r))
		dt->dsos[r.val].hit = true;
}

void dso_table__kernel_hit(struct dso_table *dt)
{
	dt->kernel_hit = true;
}

int dso_table__add_build_id(struct dso_table *dt, const char *name, const __u8 *bid,
			    __u8 size, bool hit)
{
	int idx = dso_find_or_add(dt, name, bid, size);

	if (idx < 0)
		return idx;
	dt->dsos[idx].hit |= hit;
	return 0;
}

/* perf keeps a copy of kallsyms per kernel build-id; it is read (5 MB)
 * only when the cache does not have it yet. */
static void cache_kernel(const char *dir, const __u8 *bid, int n)
{
	struct pbuf b = { 0 };
	char line[4096], hex[41];
	struct stat st;
	size_t got;
	FILE *f;

	build_id_hex(bid, n, hex);
	snprintf(line, sizeof(line), "%s/[kernel.kallsyms]/%s/kallsyms", dir, hex);
	if (!lstat(line, &st) && S_ISREG(st.st_mode)) {
		/* an older precord's 0755 copy: root's only now (KASLR) */
		if ((st.st_mode & 0177) && st.st_uid == geteuid())
			chmod(line, st.st_mode & 0600);
		return;
	}
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while ((got = fread(line, 1, sizeof(line), f)) > 0)
		pbuf_put(&b, line, got);
	fclose(f);
	if (!b.err && b.len)
		buildid_cache__add_data(dir, "[kernel.kallsyms]", bid, n, b.data, b.len);
	pbuf_free(&b);
}

int dso_table__finish(struct dso_table *dt, const char *cache_dir, bool kernel,
		      const struct perfdata_build_id **ids, size_t *nr)
{
	const void *vimg = NULL;
	size_t vlen = 0, i, n = 0;
	int kn = kernel ? kernel_build_id(dt->kbid) : -1;
	int vn = vdso_build_id(dt->vbid, &vimg, &vlen);

	free(dt->out);
	dt->out = calloc(dt->nr + 2, sizeof(*dt->out));
	if (!dt->out)
		return -ENOMEM;
	if (kn > 0) {
		dt->out[n++] = (struct perfdata_build_id){
			.cpumode = PERF_RECORD_MISC_KERNEL, .size = (__u8)kn,
			.filename = "[kernel.kallsyms]",
		};
		memcpy(dt->out[n - 1].id, dt->kbid, (size_t)kn);
		if (cache_dir && dt->kernel_hit)
			cache_kernel(cache_dir, dt->kbid, kn);
	}
	if (vn > 0) {
		dt->out[n++] = (struct perfdata_build_id){
			.cpumode = PERF_RECORD_MISC_USER, .size = (__u8)vn, .filename = "[vdso]",
		};
		memcpy(dt->out[n - 1].id, dt->vbid, (size_t)vn);
		if (cache_dir)
			buildid_cache__add_data(cache_dir, "[vdso]", dt->vbid, vn, vimg, vlen);
	}
	for (i = 0; i < dt->nr; i++) {
		struct dso *d = &dt->dsos[i];

		if (!d->name || !d->bid_size || d->name[0] != '/')
			continue;
		dt->out[n] = (struct perfdata_build_id){
			.cpumode = PERF_RECORD_MISC_USER, .size = d->bid_size, .filename = d->name,
		};
		memcpy(dt->out[n++].id, d->bid, d->bid_size);
		if (cache_dir && d->hit && d->fd >= 0) {
			unsigned int flags = d->private_path ? BUILDID_CACHE_PRIVATE : 0;
			/* a stripped Go binary: its names, not its bytes */
			int err = go_symfile__cache(cache_dir, d->name, d->bid, d->bid_size, d->fd,
						    flags);
			char shown[PRINTABLE_MAX];

			if (err == -ENOENT)
				err = buildid_cache__add_fd(cache_dir, d->name, d->bid, d->bid_size,
							    d->fd, flags);

			if (err)
				pr_debug("cannot add %s to the build-id cache: %s",
					 printable(shown, sizeof(shown), d->name), strerror(-err));
		}
	}
	if (dt->too_big > E2BIG_WARN_MAX)
		pr_warn("%u ELF files in all had absurd section or segment counts: "
			"their build-ids were not read", dt->too_big);
	*ids = dt->out;
	*nr = n;
	return 0;
}

void dso_table__for_each_hit(const struct dso_table *dt,
			     void (*fn)(void *ctx, const struct dso_hit *h), void *ctx)
{
	for (size_t i = 0; i < dt->nr; i++) {
		const struct dso *d = &dt->dsos[i];

		if (d->name && d->name[0] == '/' && d->hit && d->fd >= 0 && d->bid_size >= 2)
			fn(ctx, &(struct dso_hit){ .name = d->name, .bid = d->bid,
						  .bid_size = d->bid_size, .fd = d->fd,
						  .private_path = d->private_path });
	}
}

/* Kept as DSOs come and go: this is asked at every round of the loop. */
__u64 dso_table__build_id_bytes(const struct dso_table *dt)
{
	return 2 * entry_bytes("[kernel.kallsyms]") + dt->bid_bytes;	/* and [vdso] */
}

struct dso_table_stats dso_table__stats(const struct dso_table *dt)
{
	struct dso_table_stats st = { .maps_over = dt->maps_over, .procs_over = dt->procs_over };

	for (size_t i = 0; i < dt->procs_cap; i++) {
		if (dt->procs[i]) {
			st.maps += rangemap__count(&dt->procs[i]->m);
			st.steps += dt->procs[i]->m.steps;
		}
	}
	return st;
}

void dso_table__print_stats(const struct dso_table *dt)
{
	if (dt && dt->maps_over)
		pr_warn("%llu mappings of %u processes past %zu per process were not tracked for build-ids and the build-id cache (their MMAP2 records are in the file)",
			(unsigned long long)dt->maps_over, dt->procs_over, dt->max_maps);
}
