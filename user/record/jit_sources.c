// SPDX-License-Identifier: GPL-2.0
#include "record/jit_sources.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
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
#include "record/tidset.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/printable.h"

struct held_map {
	__u32 pid;
	__u64 time;
	size_t off, size;
};

struct jit_sources {
	struct jit_sources_config cfg;
	const struct prec_opts *o;
	struct jit_merger *m;
	char *dir;			/* <output>.jit, absolute */
	struct tidset jit_pids;		/* processes whose JIT code is merged */
	struct tidset anon_pids;	/* processes with anonymous code */
	struct tidset map_tried;	/* perf map found (or given) */
	struct tidset gone;		/* exited: to forget at collect() */
	struct pbuf held;
	struct held_map *hm;
	size_t nhm, hm_cap;
	unsigned int stop_base;		/* stop requests that do not stop reads */
	struct pbuf rec;		/* scratch for one encoded record */
	__u64 lost_said;		/* images lost, as last reported */
	bool images_lost;
};

/* Reads of JIT sources stop on a Ctrl-C/SIGTERM: during the recording on
 * the first, in the final read on one more than when it began. */
static bool jit_stop_requested(void *ctx)
{
	const struct jit_sources *g = ctx;

	return g->cfg.stop_requests() > g->stop_base;
}

static struct jit_merger *merger(struct jit_sources *g)
{
	if (!g->m) {
		char shown[PRINTABLE_MAX];

		g->m = jit_merger__new(g->dir);
		if (!g->m)
			pr_warn("cannot create %s for JIT code: %s; JIT frames will not be named",
				printable(shown, sizeof(shown), g->dir), strerror(errno));
		else
			jit_merger__set_limits(g->m, &(struct jit_limits){
				.max_bytes = g->o->jit_max_bytes,
				.stop = jit_stop_requested, .stop_ctx = g,
			});
	}
	return g->m;
}

int jit_sources__add_named(struct jit_sources *g, __u32 pid, __u64 time, __u64 start,
			   __u64 size, const char *name, const void *code)
{
	struct jit_merger *m = merger(g);

	return m ? jit_merger__add_named(m, time, pid, start, size, name, code) : -ENOMEM;
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

/* The process of --perf-map and --mlpd files that do not name one. */
static __u32 default_pid(const struct jit_sources *g)
{
	if (g->cfg.command > 0 && !g->o->nr_pids && !g->o->all_cpus)
		return (__u32)g->cfg.command;
	if (g->o->nr_pids == 1)
		return (__u32)g->o->pids[0];
	return 0;
}

/* The files of --jitdump and --perf-map. */
static int add_given(struct jit_sources *g)
{
	const struct prec_opts *o = g->o;
	int err = 0;

	for (int i = 0; !err && i < o->nr_jitdumps; i++) {
		if (!merger(g))
			return -errno;
		err = jit_merger__add_jitdump(g->m, o->jitdumps[i], -1, 0);
		if (err)
			pr_err("cannot read jitdump %s: %s", o->jitdumps[i], strerror(-err));
	}
	for (int i = 0; !err && i < o->nr_perf_maps; i++) {
		__u32 pid = pid_from_name(o->perf_maps[i], "perf-", ".map");

		if (!pid)
			pid = default_pid(g);
		if (!merger(g))
			return -errno;
		err = jit_merger__add_perf_map(g->m, o->perf_maps[i], -1, pid, 0);
		if (err)
			pr_err("cannot read perf map %s: %s", o->perf_maps[i], strerror(-err));
		else if (pid)
			tidset_add(&g->jit_pids, pid);
	}
	return err;
}

int jit_sources__new(struct jit_sources **out, const struct jit_sources_config *cfg)
{
	const struct prec_opts *o = cfg->o;
	struct jit_sources *g;
	char *abs;
	int err;

	*out = NULL;
	if (!o->jit && !o->nr_jitdumps && !o->nr_perf_maps && !o->nr_mlpds)
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->cfg = *cfg;
	g->o = o;
	abs = realpath(".", NULL);
	if (!abs) {
		err = -errno;
		jit_sources__free(g);
		return err;
	}
	if (asprintf(&g->dir, "%s%s%s.jit", o->output[0] == '/' ? "" : abs,
		     o->output[0] == '/' ? "" : "/", o->output) < 0)
		g->dir = NULL;
	free(abs);
	err = g->dir ? add_given(g) : -ENOMEM;
	if (err) {
		jit_sources__free(g);
		return err;
	}
	*out = g;
	return 0;
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

/* A jitdump marker goes to the merger, anonymous code is held. */
static enum exec_map_action decide(void *ctx, __u32 pid, const char *name, __u32 prot,
				   __u64 start, __u64 len)
{
	struct jit_sources *g = ctx;
	__u32 dump_pid;
	int fd, err;

	if (!g->o->jit)
		return EXEC_MAP_WRITE;
	dump_pid = pid_from_name(name, "jit-", ".dump");
	if (dump_pid && (dump_pid == pid || !tidset_has(&g->jit_pids, pid))) {
		if (!merger(g))
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

/* Kept until the end: written only if no JIT source described pid. */
static int hold(void *ctx, __u32 pid, __u64 time, const void *rec, size_t size)
{
	struct jit_sources *g = ctx;

	if (ARRAY_GROW(g->hm, g->hm_cap, g->nhm + 1))
		return -ENOMEM;
	g->hm[g->nhm] = (struct held_map){ pid, time, g->held.len, size };
	if (pbuf_put(&g->held, rec, size))
		return -ENOMEM;
	g->nhm++;
	return 0;
}

struct exec_map_hook jit_sources__hook(struct jit_sources *js)
{
	return js ? (struct exec_map_hook){ decide, hold, js } : (struct exec_map_hook){ 0 };
}

/* /tmp/perf-PID.map of processes with anonymous code, as they see /tmp. */
static void find_perf_maps(struct jit_sources *g, __u64 start_ns)
{
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
		if (!merger(g)) {
			close(fd);
			continue;
		}
		/* Perf maps carry no times, and runtimes often make their code
		 * executable with mprotect, which has no record: what the
		 * map holds now is taken as mapped since the recording began. */
		err = jit_merger__add_perf_map(g->m, shown, fd, pid, start_ns);
		if (err)
			pr_warn("cannot read %s of PID %u: %s", shown, pid, strerror(-err));
		else
			tidset_add(&g->jit_pids, pid);
	}
}

int jit_sources__poll(struct jit_sources *g, __u64 start_ns)
{
	struct timespec ts;
	int err;

	if (!g)
		return 0;
	if (g->o->jit)
		find_perf_maps(g, start_ns);
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

/* The mappings made before `before` (the rest belong to the next file). */
static int write_mappings(struct jit_sources *g, struct perfdata_writer *w, __u64 id_type,
			  __u64 before)
{
	size_t n = jit_merger__nr_mappings(g->m);

	for (size_t i = 0; i < n; i++) {
		struct jit_mapping one, *jm = &one;
		struct perfdata_mmap2 m;

		jit_merger__mapping(g->m, i, &one);
		tidset_add(&g->jit_pids, jm->pid);
		if (jm->time >= before)
			continue;
		m = (struct perfdata_mmap2){
			.misc = PERF_RECORD_MISC_USER, .pid = jm->pid, .tid = jm->tid,
			.start = jm->start, .len = jm->len, .pgoff = jm->pgoff,
			.prot = 5, .flags = 2, .build_id_size = jm->build_id_size,
			.filename = jm->path,
		};
		struct perfdata_sample_id sid = { .pid = jm->pid, .tid = jm->tid, .time = jm->time };
		int err;

		memcpy(m.build_id, jm->build_id, sizeof(m.build_id));
		pbuf_reset(&g->rec);
		err = perfdata_encode_mmap2(&g->rec, id_type, &m, &sid);
		if (!err)
			err = perfdata_writer__queue(w, jm->time, g->rec.data, g->rec.len);
		if (err)
			return err;
	}
	return 0;
}

static int add_images(struct jit_sources *g, struct dso_table *dt, const char *cache_dir)
{
	const struct jit_image *img;
	size_t n = jit_merger__images(g->m, &img);

	for (size_t i = 0; i < n; i++) {
		int err = dso_table__add_build_id(dt, img[i].path, img[i].build_id,
						  img[i].build_id_size, true);

		if (err)
			return err;
		if (cache_dir) {
			int fd = jit_merger__open_image(g->m, &img[i]);

			if (fd >= 0) {
				/* in FILE.jit/ (0700): the copy is root's */
				err = buildid_cache__add_fd(cache_dir, img[i].path,
							    img[i].build_id,
							    img[i].build_id_size, fd,
							    BUILDID_CACHE_PRIVATE);
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
static void report_lost_images(struct jit_sources *g)
{
	struct jit_stats st = jit_merger__stats(g->m);
	int err = st.write_err;

	if (!st.images_lost || st.images_lost == g->lost_said)
		return;		/* a checkpoint reports only new losses */
	g->lost_said = st.images_lost;
	pr_err("%s JIT images in %s (%s): %llu image%s with %llu JIT functions not written; samples in them show as unresolved; %s",
	       err == -ENOSPC ? "disk full writing" : err == -EDQUOT ?
	       "disk quota exceeded writing" : "cannot write",
	       g->dir, strerror(-err), (unsigned long long)st.images_lost,
	       st.images_lost > 1 ? "s" : "", (unsigned long long)st.funcs_lost,
	       err == -ENOSPC || err == -EDQUOT ? "free some space, or record to another disk with -o" :
	       "check the disk, or record to another with -o");
	g->images_lost = true;
}

/* The mappings of the merged functions and the held anonymous ones of
 * processes no JIT source described, those made before `before`, queued
 * on w; the images' build-ids into dt and the cache. */
static int queue_state(struct jit_sources *g, struct perfdata_writer *w, __u64 id_type,
		       struct dso_table *dt, const char *cache_dir, __u64 before)
{
	int err = 0;

	if (g->m) {
		report_lost_images(g);
		err = write_mappings(g, w, id_type, before);
		if (!err)
			err = add_images(g, dt, cache_dir);
	}
	/* anonymous code of processes no JIT source described */
	for (size_t i = 0; !err && i < g->nhm; i++)
		if (!tidset_has(&g->jit_pids, g->hm[i].pid) && g->hm[i].time < before)
			err = perfdata_writer__queue(w, g->hm[i].time,
						     g->held.data + g->hm[i].off, g->hm[i].size);
	return err;
}

int jit_sources__checkpoint(struct jit_sources *g, struct perfdata_writer *w, __u64 id_type,
			    struct dso_table *dt, const char *cache_dir, __u64 start_ns,
			    struct jit_cut cut)
{
	int err;

	if (!g)
		return 0;
	err = jit_sources__poll(g, start_ns);
	if (!err && g->m) {
		err = jit_merger__checkpoint(g->m, cut.file);
		if (err && err != -ENOMEM) {
			pr_warn("JIT merging: %s; JIT frames may not be named", strerror(-err));
			err = 0;
		}
	}
	return err ? err : queue_state(g, w, id_type, dt, cache_dir, cut.before);
}

void jit_sources__forget(struct jit_sources *g, __u32 pid)
{
	if (g && pid)
		tidset_add(&g->gone, pid);	/* -ENOMEM: kept, as before */
}

static bool is_gone(void *ctx, __u32 pid)
{
	const struct jit_sources *g = ctx;

	return tidset_has(&g->gone, pid);
}

/* The held anonymous mappings of the gone processes out, in place (the
 * kept ones only move towards the front). */
static void drop_held(struct jit_sources *g)
{
	size_t i, n = 0, len = 0;

	for (i = 0; i < g->nhm; i++) {
		struct held_map h = g->hm[i];

		if (is_gone(g, h.pid))
			continue;
		memmove(g->held.data + len, g->held.data + h.off, h.size);
		h.off = len;
		len += h.size;
		g->hm[n++] = h;
	}
	g->nhm = n;
	g->held.len = len;
}

void jit_sources__collect(struct jit_sources *g)
{
	if (!g || !g->gone.nr)
		return;
	if (g->m && jit_merger__forget(g->m, is_gone, g))
		return;		/* -ENOMEM: nothing changed; the next switch tries */
	drop_held(g);
	for (size_t i = 0; i < g->gone.cap; i++) {
		__u32 pid = g->gone.keys[i];

		if (!pid)
			continue;
		tidset_del(&g->jit_pids, pid);
		tidset_del(&g->anon_pids, pid);
		tidset_del(&g->map_tried, pid);
	}
	tidset_free(&g->gone);
}

/* A pruned image's copy in the build-id cache goes with it (add_images
 * made one at each file that listed it). */
static void uncache_image(void *ctx, const char *path, const __u8 *build_id)
{
	const char *cache_dir = ctx;
	int err;

	if (!cache_dir)
		return;
	err = buildid_cache__remove(cache_dir, path, build_id, 20);
	if (err)
		pr_debug("cannot remove %s from the build-id cache: %s", path, strerror(-err));
}

void jit_sources__prune(struct jit_sources *g, __u32 first_kept, const char *cache_dir)
{
	size_t n;

	if (!g || !g->m)
		return;
	n = jit_merger__prune(g->m, first_kept, uncache_image, (void *)cache_dir);
	if (n)
		pr_debug("JIT: %zu images no kept file names removed", n);
}

/* An MMAP2 record of synth (pid, start, len, pgoff, maj, min, ino,
 * ino_generation, prot, flags, filename). */
static void synthesized_map(struct jit_sources *g, const struct perf_event_header *h, size_t max)
{
	const __u8 *b = (const __u8 *)(h + 1);
	__u64 start, len;
	__u32 pid, prot;

	if (h->size < sizeof(*h) + 65 || h->size > max)
		return;
	memcpy(&pid, b, 4);
	memcpy(&start, b + 8, 8);
	memcpy(&len, b + 16, 8);
	memcpy(&prot, b + 56, 4);
	if (!memchr(b + 64, 0, h->size - sizeof(*h) - 64))
		return;
	decide(g, pid, (const char *)b + 64, prot, start, len);
}

void jit_sources__synthesized(struct jit_sources *g, const void *buf, size_t len)
{
	const __u8 *p = buf;
	size_t off = 0;

	if (!g || !g->o->jit)
		return;
	while (off + sizeof(struct perf_event_header) <= len) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			return;
		if (h.type == PERF_RECORD_MMAP2 && !((uintptr_t)(p + off) & 7))
			synthesized_map(g, (const void *)(p + off), len - off);
		off += h.size;
	}
}

int jit_sources__finish(struct jit_sources *g, struct perfdata_writer *w, __u64 id_type,
			struct dso_table *dt, const char *cache_dir, __u64 start_ns)
{
	int err = 0;

	if (!g)
		return 0;
	if (g->o->jit)
		find_perf_maps(g, start_ns);
	for (int i = 0; i < g->o->nr_mlpds; i++) {
		__u32 pid = default_pid(g);

		if (!merger(g))
			break;
		err = jit_merger__add_mlpd(g->m, g->o->mlpds[i], pid);
		if (err)
			pr_warn("cannot read %s: %s", g->o->mlpds[i], strerror(-err));
		else if (pid)
			tidset_add(&g->jit_pids, pid);
	}
	err = 0;
	if (g->m) {
		g->stop_base = g->cfg.stop_requests();
		err = jit_merger__finish(g->m);
		if (err)
			pr_warn("JIT merging failed: %s; JIT frames may not be named", strerror(-err));
	}
	err = queue_state(g, w, id_type, dt, cache_dir, UINT64_MAX);
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
		if (st.unwritten)
			pr_debug("JIT: %llu jitdump records read from their writers' buffers",
				 (unsigned long long)st.unwritten);
		if (st.dropped)
			pr_warn("JIT: %llu functions past the limit of JIT mappings were not named",
				(unsigned long long)st.dropped);
	}
	return err;
}

bool jit_sources__images_lost(const struct jit_sources *js)
{
	return js && js->images_lost;
}

void jit_sources__free(struct jit_sources *g)
{
	if (!g)
		return;
	jit_merger__free(g->m);
	tidset_free(&g->jit_pids);
	tidset_free(&g->anon_pids);
	tidset_free(&g->map_tried);
	tidset_free(&g->gone);
	pbuf_free(&g->held);
	free(g->hm);
	free(g->dir);
	pbuf_free(&g->rec);
	free(g);
}
