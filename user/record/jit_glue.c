// SPDX-License-Identifier: GPL-2.0
/*
 * Glue between the recording and the JIT merger (user/jit/merger.h):
 *  - a target that maps jit-<pid>.dump (the runtime's marker) hands the
 *    dump to the merger; the marker mapping itself is not written;
 *  - anonymous executable mappings of targets are held back: a process
 *    with a JIT source (jitdump, /tmp/perf-PID.map found through
 *    /proc/PID/root, --mlpd) gets per-function mappings into the merged
 *    ELF images instead; the others get their anonymous mappings written
 *    at the end (perf report then reads /tmp/perf-PID.map itself);
 *  - at the end the images' mappings become MMAP2 records, their build-ids
 *    go into BUILD_ID and the build-id cache.
 * JIT mappings carry timestamps from the past, so a recording with JIT
 * merging writes no FINISHED_ROUND (perf sorts the whole file).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "jit/merger.h"
#include "perfdata/buildid_cache.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/dsos.h"
#include "record/session_int.h"
#include "record/target.h"
#include "util/array.h"
#include "util/log.h"
#include "util/printable.h"

struct held_map {
	__u32 pid;
	__u64 time;
	size_t off, size;
};

struct jit_glue {
	struct jit_merger *m;
	char *dir;			/* <output>.jit, absolute */
	struct tidset jit_pids;		/* processes whose JIT code is merged */
	struct tidset anon_pids;	/* processes with anonymous code */
	struct tidset map_tried;	/* perf map found (or given) */
	struct pbuf held;
	struct held_map *hm;
	size_t nhm, hm_cap;
	unsigned int stop_base;		/* stop requests that do not stop reads */
};

/* Reads of JIT sources stop on a Ctrl-C/SIGTERM: during the recording on
 * the first, in the final read on one more than when it began. */
static bool jit_stop_requested(void *ctx)
{
	const struct jit_glue *g = ctx;

	return session_stop_requests() > g->stop_base;
}

static bool jit_on(const struct session *s)
{
	return s->jit != NULL;
}

static struct jit_merger *merger(struct session *s)
{
	struct jit_glue *g = s->jit;

	if (!g->m) {
		char shown[PRINTABLE_MAX];

		g->m = jit_merger__new(g->dir);
		if (!g->m)
			pr_warn("cannot create %s for JIT code: %s; JIT frames will not be named",
				printable(shown, sizeof(shown), g->dir), strerror(errno));
		else
			jit_merger__set_limits(g->m, &(struct jit_limits){
				.max_bytes = s->o->jit_max_bytes,
				.stop = jit_stop_requested, .stop_ctx = g,
			});
	}
	return g->m;
}

static __u32 pid_from_name(const char *path, const char *prefix, const char *suffix)
{
	const char *b = strrchr(path, '/');
	char *end;
	unsigned long v;

	b = b ? b + 1 : path;
	if (strncmp(b, prefix, strlen(prefix)))
		return 0;
	v = strtoul(b + strlen(prefix), &end, 10);
	if (end == b + strlen(prefix) || strcmp(end, suffix) || v > INT_MAX)
		return 0;
	return (__u32)v;
}

static __u32 default_pid(const struct session *s)
{
	if (target_set__command(s->targets) && !s->o->nr_pids && !s->all)
		return (__u32)target_set__command(s->targets);
	if (s->o->nr_pids == 1)
		return (__u32)s->o->pids[0];
	return 0;
}

int session_jit_setup(struct session *s)
{
	const struct prec_opts *o = s->o;
	struct jit_glue *g;
	char *abs;
	int err = 0;

	if (!o->jit && !o->nr_jitdumps && !o->nr_perf_maps && !o->nr_mlpds)
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	s->jit = g;
	abs = realpath(".", NULL);
	if (!abs)
		return -errno;
	if (asprintf(&g->dir, "%s%s%s.jit", o->output[0] == '/' ? "" : abs,
		     o->output[0] == '/' ? "" : "/", o->output) < 0)
		g->dir = NULL;
	free(abs);
	if (!g->dir)
		return -ENOMEM;
	for (int i = 0; !err && i < o->nr_jitdumps; i++) {
		if (!merger(s))
			return -errno;
		err = jit_merger__add_jitdump(g->m, o->jitdumps[i], -1, 0);
		if (err)
			pr_err("cannot read jitdump %s: %s", o->jitdumps[i], strerror(-err));
	}
	for (int i = 0; !err && i < o->nr_perf_maps; i++) {
		__u32 pid = pid_from_name(o->perf_maps[i], "perf-", ".map");

		if (!pid)
			pid = default_pid(s);
		if (!merger(s))
			return -errno;
		err = jit_merger__add_perf_map(g->m, o->perf_maps[i], -1, pid, 0);
		if (err)
			pr_err("cannot read perf map %s: %s", o->perf_maps[i], strerror(-err));
		else if (pid)
			tidset_add(&g->jit_pids, pid);
	}
	return err;
}

/* Anonymous memory as perf sees it (util/map.c) plus what perf inject
 * drops for JIT processes. */
static bool is_anon(const char *name)
{
	return !strncmp(name, "//anon", 6) || !strncmp(name, "[anon", 5) ||
	       !strncmp(name, "/memfd:", 7) || !strncmp(name, "/dev/zero", 9) ||
	       !strncmp(name, "/anon_hugepage", 14) || !strcmp(name, "[heap]");
}

/*
 * Open path (absolute, as the target sees it) inside the target's root,
 * following no symlink on the way: the target chooses every component
 * (its /tmp may be a link to a directory of root's).  openat2 with
 * RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS where the kernel has it (5.6),
 * else one component at a time with O_NOFOLLOW.  -errno on failure.
 */
static int open_in_root(__u32 pid, const char *path)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	struct open_how how = {
		.flags = flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char root[64], comp[NAME_MAX + 1];
	int dirfd, fd;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	while (*path == '/')
		path++;
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS) {
		fd = fd < 0 ? -errno : fd;
		close(dirfd);
		return fd;
	}
	for (;;) {
		size_t n = strcspn(path, "/");
		bool last = path[n] == '\0';
		int next;

		if (n == 0 || n > NAME_MAX || (n <= 2 && !strncmp(path, "..", n))) {
			close(dirfd);
			return -EINVAL;	/* no "", ".", ".." components */
		}
		memcpy(comp, path, n);
		comp[n] = '\0';
		next = openat(dirfd, comp, last ? flags : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		fd = next < 0 ? -errno : next;
		close(dirfd);
		if (fd < 0 || last)
			return fd;
		dirfd = fd;
		for (path += n; *path == '/'; path++)
			;
	}
}

static int open_in_target(__u32 pid, __u64 start, __u64 len, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)start, (unsigned long long)(start + len));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && name[0] == '/')
		fd = open_in_root(pid, name);
	return fd >= 0 ? open_regular_file(NULL, fd) : fd;
}

/* The file belongs to the user the process runs as (owner of /proc/PID):
 * not a file of someone else's that the target pointed us at. */
static bool owned_by_target(__u32 pid, int fd)
{
	struct stat st, pst;
	char proc[32];

	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	return !fstat(fd, &st) && !stat(proc, &pst) && st.st_uid == pst.st_uid;
}

enum exec_map_action session_jit_mmap(void *ctx, __u32 pid, const char *name,
				      __u32 prot, __u64 start, __u64 len)
{
	struct session *s = ctx;
	struct jit_glue *g = s->jit;
	__u32 dump_pid;
	int fd, err;

	if (!jit_on(s) || !s->o->jit)
		return EXEC_MAP_WRITE;
	dump_pid = pid_from_name(name, "jit-", ".dump");
	if (dump_pid && (dump_pid == pid || !tidset_has(&g->jit_pids, pid))) {
		if (!merger(s))
			return EXEC_MAP_DROP;
		fd = open_in_target(pid, start, len, name);
		err = jit_merger__add_jitdump(g->m, name, fd, pid);
		if (err) {
			char shown[PRINTABLE_MAX];

			pr_warn("cannot read jitdump %s of PID %u: %s",
				printable(shown, sizeof(shown), name), pid, strerror(-err));
		} else {
			tidset_add(&g->jit_pids, pid);
		}
		return EXEC_MAP_DROP;
	}
	if ((prot & 4) && is_anon(name)) {
		tidset_add(&g->anon_pids, pid);
		return EXEC_MAP_HOLD;
	}
	return EXEC_MAP_WRITE;
}

int session_jit_hold(void *ctx, __u32 pid, __u64 time, const void *rec, size_t size)
{
	struct session *s = ctx;
	struct jit_glue *g = s->jit;

	if (ARRAY_GROW(g->hm, g->hm_cap, g->nhm + 1))
		return -ENOMEM;
	g->hm[g->nhm] = (struct held_map){ pid, time, g->held.len, size };
	if (pbuf_put(&g->held, rec, size))
		return -ENOMEM;
	g->nhm++;
	return 0;
}

/* /tmp/perf-PID.map of processes with anonymous code, as they see /tmp. */
static void find_perf_maps(struct session *s)
{
	struct jit_glue *g = s->jit;

	for (size_t i = 0; i < g->anon_pids.cap; i++) {
		__u32 pid = g->anon_pids.keys[i];
		char shown[64];
		int fd, err;

		if (!pid || tidset_has(&g->map_tried, pid))
			continue;
		snprintf(shown, sizeof(shown), "/tmp/perf-%u.map", pid);
		fd = open_in_root(pid, shown);
		if (fd < 0) {
			if (fd == -ELOOP || fd == -EXDEV)
				pr_warn("%s of PID %u: a symbolic link on its path; not read", shown, pid);
			/* gone or refused; out of descriptors: next poll */
			if (fd != -ENOENT && fd != -EMFILE && fd != -ENFILE)
				tidset_add(&g->map_tried, pid);
			continue;
		}
		tidset_add(&g->map_tried, pid);
		fd = open_regular_file(NULL, fd);
		if (fd < 0)
			continue;
		if (!owned_by_target(pid, fd)) {
			pr_warn("%s of PID %u belongs to another user; not read", shown, pid);
			close(fd);
			continue;
		}
		if (!merger(s)) {
			close(fd);
			continue;
		}
		/* Perf maps carry no times, and runtimes often make their code
		 * executable with mprotect, which has no record: what the
		 * map holds now is taken as mapped since the recording began. */
		err = jit_merger__add_perf_map(g->m, shown, fd, pid, s->start_ns);
		if (err)
			pr_warn("cannot read %s of PID %u: %s", shown, pid, strerror(-err));
		else
			tidset_add(&g->jit_pids, pid);
	}
}

int session_jit_poll(struct session *s)
{
	struct jit_glue *g = s->jit;
	struct timespec ts;
	int err;

	if (!jit_on(s))
		return 0;
	if (s->o->jit)
		find_perf_maps(s);
	if (!g->m)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	err = jit_merger__poll(g->m, (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec);
	if (err && err != -ENOMEM) {
		pr_warn("JIT merging: %s", strerror(-err));
		err = 0;
	}
	return err;
}

static int write_mappings(struct session *s)
{
	struct jit_glue *g = s->jit;
	size_t n = jit_merger__nr_mappings(g->m);

	for (size_t i = 0; i < n; i++) {
		struct jit_mapping one, *jm = &one;
		struct perfdata_mmap2 m;

		jit_merger__mapping(g->m, i, &one);
		m = (struct perfdata_mmap2){
			.misc = PERF_RECORD_MISC_USER, .pid = jm->pid, .tid = jm->tid,
			.start = jm->start, .len = jm->len, .pgoff = jm->pgoff,
			.prot = 5, .flags = 2, .build_id_size = jm->build_id_size,
			.filename = jm->path,
		};
		struct perfdata_sample_id sid = { .pid = jm->pid, .tid = jm->tid, .time = jm->time };
		int err;

		memcpy(m.build_id, jm->build_id, sizeof(m.build_id));
		pbuf_reset(&s->rec);
		err = perfdata_encode_mmap2(&s->rec, s->id_type, &m, &sid);
		if (!err)
			err = perfdata_writer__queue(s->w, jm->time, s->rec.data, s->rec.len);
		if (err)
			return err;
		tidset_add(&g->jit_pids, jm->pid);
	}
	return 0;
}

static int add_images(struct session *s)
{
	struct jit_glue *g = s->jit;
	const struct jit_image *img;
	size_t n = jit_merger__images(g->m, &img);

	for (size_t i = 0; i < n; i++) {
		int err = dso_table__add_build_id(s->dt, img[i].path, img[i].build_id,
						  img[i].build_id_size, true);

		if (err)
			return err;
		if (s->cache_dir) {
			int fd = jit_merger__open_image(g->m, &img[i]);

			if (fd >= 0) {
				err = buildid_cache__add_fd(s->cache_dir, img[i].path,
							    img[i].build_id,
							    img[i].build_id_size, fd);
				close(fd);
			}
			if (fd < 0 || err)
				pr_debug("cannot add %s to the build-id cache", img[i].path);
		}
	}
	return 0;
}

/* Images a full disk (or another write error) kept from being written
 * were removed: their functions get no mapping, and samples in them show
 * as unresolved, as without JIT merging. */
static void report_lost_images(struct session *s)
{
	struct jit_stats st = jit_merger__stats(s->jit->m);
	int err = st.write_err;

	if (!st.images_lost)
		return;
	pr_err("%s JIT images in %s (%s): %llu image%s with %llu JIT functions not written; samples in them show as unresolved; %s",
	       err == -ENOSPC ? "disk full writing" : err == -EDQUOT ?
	       "disk quota exceeded writing" : "cannot write",
	       s->jit->dir, strerror(-err), (unsigned long long)st.images_lost,
	       st.images_lost > 1 ? "s" : "", (unsigned long long)st.funcs_lost,
	       err == -ENOSPC || err == -EDQUOT ? "free some space, or record to another disk with -o" :
	       "check the disk, or record to another with -o");
	s->lost_output = true;
}

int session_jit_finish(struct session *s)
{
	struct jit_glue *g = s->jit;
	int err = 0;

	if (!jit_on(s))
		return 0;
	if (s->o->jit)
		find_perf_maps(s);
	for (int i = 0; i < s->o->nr_mlpds; i++) {
		__u32 pid = default_pid(s);

		if (!merger(s))
			break;
		err = jit_merger__add_mlpd(g->m, s->o->mlpds[i], pid);
		if (err)
			pr_warn("cannot read %s: %s", s->o->mlpds[i], strerror(-err));
		else if (pid)
			tidset_add(&g->jit_pids, pid);
	}
	err = 0;
	if (g->m) {
		g->stop_base = session_stop_requests();
		err = jit_merger__finish(g->m);
		if (err)
			pr_warn("JIT merging failed: %s; JIT frames may not be named", strerror(-err));
		report_lost_images(s);
		err = write_mappings(s);
		if (!err)
			err = add_images(s);
	}
	/* anonymous code of processes no JIT source described */
	for (size_t i = 0; !err && i < g->nhm; i++)
		if (!tidset_has(&g->jit_pids, g->hm[i].pid))
			err = perfdata_writer__queue(s->w, g->hm[i].time,
						     g->held.data + g->hm[i].off, g->hm[i].size);
	if (!err && g->m) {
		struct jit_stats st = jit_merger__stats(g->m);

		/* The mappings are in the writer's queue now: the merger's
		 * records (~170 B per function) need not wait for the end. */
		jit_merger__free(g->m);
		g->m = NULL;

		if (st.images && log_verbosity >= 0)
			pr_info("JIT: %llu functions merged into %llu images in %s",
				(unsigned long long)(st.loads + st.map_entries + st.mlpd_methods),
				(unsigned long long)st.images, g->dir);
		if (st.dropped)
			pr_warn("JIT: %llu functions past the limit of JIT mappings were not named",
				(unsigned long long)st.dropped);
	}
	return err;
}

void session_jit_free(struct session *s)
{
	struct jit_glue *g = s->jit;

	if (!g)
		return;
	jit_merger__free(g->m);
	tidset_free(&g->jit_pids);
	tidset_free(&g->anon_pids);
	tidset_free(&g->map_tried);
	pbuf_free(&g->held);
	free(g->hm);
	free(g->dir);
	free(g);
	s->jit = NULL;
}
