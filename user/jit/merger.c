// SPDX-License-Identifier: GPL-2.0
/*
 * JIT merger (see merger.h): sources → functions in the open image →
 * mappings; a full image is written to the output directory at once and
 * only the functions' addresses are kept.
 */
#include "jit/merger_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit/mlpd.h"
#include "jit/stdio_tail.h"
#include "util/buf.h"
#include "util/array.h"
#include "util/log.h"
#include "util/printable.h"

#define MAX_NOCODE_FUNC		(1ULL << 30)	/* perf-map/.mlpd entry size */
#define MAX_IMAGE_SEQ		1000000


/* ---- output directory and images ---- */

static int open_out_dir(const char *dir, char **abs_out)
{
	struct stat st, st2;
	char *abs;
	int fd;

	/* the images hold the targets' code and names: ours only, as the
	 * output file (0600) */
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;		/* never write through a planted link */
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ELOOP : -errno;
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	abs = realpath(dir, NULL);
	if (!abs || stat(abs, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		free(abs);
		close(fd);
		return -EPERM;		/* swapped under us */
	}
	*abs_out = abs;
	return fd;
}

static struct image_slot *cur_slot(struct jit_merger *m)
{
	return m->img ? &m->images[m->nr_images - 1] : NULL;
}

static int open_image(struct jit_merger *m)
{
	if (ARRAY_GROW(m->images, m->cap_images, m->nr_images + 1))
		return -ENOMEM;
	m->img = jitelf_image__new();
	if (!m->img)
		return -ENOMEM;
	memset(&m->images[m->nr_images++], 0, sizeof(struct image_slot));
	return 0;
}

/* Create a new image file inside our directory: never follows links. */
static int create_image_file(struct jit_merger *m, char **path)
{
	char name[64];
	int fd;

	for (; m->seq < MAX_IMAGE_SEQ; m->seq++) {
		snprintf(name, sizeof(name), "jit-%u.so", m->seq);
		fd = openat(m->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		m->seq++;
		if (asprintf(path, "%s/%s", m->dir, name) < 0) {
			unlinkat(m->dirfd, name, 0);
			close(fd);
			return -ENOMEM;
		}
		return fd;
	}
	return -EEXIST;
}

/* Write the open image and keep only its functions' addresses. */
static int seal_image(struct jit_merger *m)
{
	struct image_slot *slot = cur_slot(m);
	struct stat st = { 0 };
	size_t i, n;
	int fd, err;

	if (!slot)
		return 0;
	n = jitelf_image__nr_funcs(m->img);
	if (n == 0) {			/* nothing in it: drop the slot */
		jitelf_image__free(m->img);
		m->img = NULL;
		m->nr_images--;
		return 0;
	}
	fd = create_image_file(m, &slot->path);
	err = fd < 0 ? fd : jitelf_image__write(m->img, fd);
	if (!err && fstat(fd, &st))
		err = -errno;
	slot->dev = st.st_dev;
	slot->ino = st.st_ino;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err) {
		slot->func_addr = malloc(n * sizeof(*slot->func_addr));
		if (!slot->func_addr)
			err = -ENOMEM;
	}
	if (err) {
		/* Counted for the caller's report (a full disk: one line at
		 * the end, not one per image). */
		pr_debug("jit: failed to write image %s: %s; its %zu functions stay unnamed",
			 slot->path ? slot->path : m->dir, strerror(-err), n);
		if (slot->path)
			unlinkat(m->dirfd, strrchr(slot->path, '/') + 1, 0);
		if (!m->st.write_err)
			m->st.write_err = err;
		m->st.images_lost++;
		m->st.funcs_lost += n;
	} else {
		for (i = 0; i < n; i++)
			slot->func_addr[i] = jitelf_image__func_addr(m->img, (int)i);
		memcpy(slot->build_id, jitelf_image__build_id(m->img), 20);
		slot->size = jitelf_image__file_size(m->img);
		slot->nr_funcs = (__u32)n;
		slot->ok = true;
		slot->listed = m->checkpoint + 1;	/* the next one lists it */
		m->st.images++;
		m->st.image_bytes += slot->size;
	}
	jitelf_image__free(m->img);
	m->img = NULL;
	return err == -ENOMEM ? err : 0;	/* a failed write only loses names */
}

/* The open image, sealing the current one first if size more bytes (of
 * code, or of code-less space) would not fit. */
static int image_for(struct jit_merger *m, __u64 size, bool code)
{
	int err;

	if (m->img && jitelf_image__nr_funcs(m->img)) {
		__u64 cb = jitelf_image__code_bytes(m->img);
		__u64 meta = jitelf_image__mem_bytes(m->img) - cb;
		bool full = code ? cb + size > JIT_IMAGE_MAX_CODE :
			    jitelf_image__nocode_bytes(m->img) + size > JIT_IMAGE_MAX_NOCODE;

		if (full || meta > JIT_IMAGE_MAX_META) {
			err = seal_image(m);
			if (err)
				return err;
		}
	}
	return m->img ? 0 : open_image(m);
}

/* ---- functions and mappings ---- */

/* Past JIT_MAX_MAPPINGS nothing more is added (a hostile dump could go on
 * for ever); warns once. */
static bool merger_full(struct jit_merger *m)
{
	if (m->nr_imaps < JIT_MAX_MAPPINGS)
		return false;
	if (!m->full_warned)
		pr_warn("jit: more than %u JIT mappings; ignoring the rest (counted at the end)",
			JIT_MAX_MAPPINGS);
	m->full_warned = true;
	m->st.dropped++;
	return true;
}

int merger_add_imap(struct jit_merger *m, __u64 time, __u32 pid, __u32 tid,
		    __u64 start, __u64 len, __u32 image, __s32 func)
{
	if (merger_full(m))
		return -E2BIG;
	if (ARRAY_GROW(m->imaps, m->cap_imaps, m->nr_imaps + 1))
		return -ENOMEM;
	m->imaps[m->nr_imaps++] = (struct imap){
		.time = time, .start = start, .len = len, .pid = pid, .tid = tid,
		.image = image, .func = func, .seq = m->imap_seq++,
	};
	return 0;
}

static __u64 code_hash(__u32 src, __u64 idx)
{
	__u64 h = idx * 0x9e3779b97f4a7c15ULL ^ ((__u64)src << 32 | src);

	return h ^ (h >> 29);
}

struct code_ent *merger_code_find(struct jit_merger *m, __u32 src, __u64 idx, bool *found)
{
	size_t mask = m->nr_code_slots - 1, j;

	*found = false;
	if (!m->nr_code_slots)
		return NULL;
	for (j = code_hash(src, idx) & mask; m->codes[j].used; j = (j + 1) & mask) {
		if (m->codes[j].src == src && m->codes[j].code_index == idx) {
			*found = true;
			break;
		}
	}
	return &m->codes[j];
}

/* The code table again with n slots; to (if not NULL) maps each entry's
 * source to its new index, UINT32_MAX dropping it.  The old table is
 * kept on -ENOMEM. */
static int codes_rehash(struct jit_merger *m, size_t n, const __u32 *to)
{
	struct code_ent *old = m->codes;
	size_t old_n = m->nr_code_slots, i;
	bool found;

	m->codes = calloc(n, sizeof(*m->codes));
	if (!m->codes) {
		m->codes = old;
		return -ENOMEM;
	}
	m->nr_code_slots = n;
	m->nr_codes = 0;
	for (i = 0; i < old_n; i++) {
		struct code_ent e = old[i];

		if (!e.used || (to && to[e.src] == UINT32_MAX))
			continue;
		if (to)
			e.src = to[e.src];
		*merger_code_find(m, e.src, e.code_index, &found) = e;
		m->nr_codes++;
	}
	free(old);
	return 0;
}

int merger_code_put(struct jit_merger *m, const struct code_ent *e)
{
	struct code_ent *slot;
	bool found;

	if ((m->nr_codes + 1) * 2 > m->nr_code_slots &&
	    codes_rehash(m, m->nr_code_slots ? m->nr_code_slots * 2 : 1024, NULL))
		return -ENOMEM;
	slot = merger_code_find(m, e->src, e->code_index, &found);
	if (!found)
		m->nr_codes++;
	*slot = *e;
	slot->used = true;
	return 0;
}

/* Add one function to the open image; returns its index or -errno. */
int merger_add_func(struct jit_merger *m, const char *name, const void *code, __u64 size)
{
	int err;

	if (merger_full(m))
		return -E2BIG;
	err = image_for(m, size, code != NULL);
	if (err)
		return err;
	return jitelf_image__add_func(m->img, name, code, size);
}

int jit_merger__add_named(struct jit_merger *m, __u64 time, __u32 pid, __u64 start,
			  __u64 size, const char *name, const void *code)
{
	int func;

	if (!size || size > MAX_NOCODE_FUNC || start + size < start)
		return -EINVAL;
	func = merger_add_func(m, name, code, size);
	if (func < 0)
		return func;
	return merger_add_imap(m, time, pid, pid, start, size, (__u32)(m->nr_images - 1), func);
}

/* ---- sources ---- */

/* Room for one more source, not counted yet; NULL (then fd, if >= 0,
 * is closed: the source was to read it) when finished or out of memory. */
static struct source *new_source(struct jit_merger *m, enum src_kind kind,
				 const char *path, __u32 pid, int fd)
{
	struct source *s;

	if (m->finished || ARRAY_GROW(m->srcs, m->cap_srcs, m->nr_srcs + 1))
		goto fail;
	s = &m->srcs[m->nr_srcs];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->pid = pid;
	s->path = strdup(path ? path : "(unnamed)");
	if (s->path)
		return s;
fail:
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * The source reading the same file as fd (device and inode), or NULL.  A
 * target that maps its dump twenty times gets one reader, not twenty.
 */
static struct source *source_same_file(struct jit_merger *m, enum src_kind kind, int fd,
				       __u64 *dev, __u64 *ino)
{
	struct stat st;
	size_t i;

	*dev = *ino = 0;
	if (fstat(fd, &st))
		return NULL;
	*dev = st.st_dev;
	*ino = st.st_ino;
	for (i = 0; i < m->nr_srcs; i++)
		if (m->srcs[i].kind == kind && m->srcs[i].dev == *dev && m->srcs[i].ino == *ino)
			return &m->srcs[i];
	return NULL;
}

/* The budget of one read: the bytes left under the total limit (at most
 * per_read), the deadline and the stop request. */
static struct jit_budget read_budget(const struct jit_merger *m, __u64 per_read, __u64 deadline)
{
	__u64 left = m->st.bytes_read < m->lim.max_bytes ?
		     m->lim.max_bytes - m->st.bytes_read : 0;

	return (struct jit_budget){
		.bytes = left < per_read ? left : per_read, .deadline_ns = deadline,
		.stop = m->lim.stop, .stop_ctx = m->lim.stop_ctx,
	};
}

/* The deadline passed or a stop was asked for. */
static bool merger_over(const struct jit_merger *m, __u64 deadline)
{
	return jit_now_ns() >= deadline || (m->lim.stop && m->lim.stop(m->lim.stop_ctx));
}

/* Count what a read consumed; say once when the total limit stops one. */
static void read_done(struct jit_merger *m, struct source *s, __u64 before,
		      const struct jit_budget *b)
{
	char shown[PRINTABLE_MAX];
	__u64 left = m->lim.max_bytes - m->st.bytes_read;	/* before this read */

	m->st.bytes_read += before - b->bytes;
	if (!b->cut || before < left || merger_over(m, b->deadline_ns))
		return;		/* the end, or the per-poll share, or time */
	if (!m->cap_warned)
		pr_warn("jit: %llu bytes read from JIT sources, the limit (--jit-max-bytes); %s and what follows are not read further",
			(unsigned long long)m->st.bytes_read,
			printable(shown, sizeof(shown), s->path));
	m->cap_warned = true;
}

static void source_free(struct source *s)
{
	free(s->starts);
	jitdump_reader__free(s->jd);
	perfmap_reader__free(s->pm);
	pbuf_free(&s->pend_debug);
	pbuf_free(&s->pend_di2);
	pbuf_free(&s->pend_unwind);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

static int read_jitdump(struct jit_merger *m, __u32 idx, struct jit_budget *b)
{
	struct source *s = &m->srcs[idx];
	struct jd_ctx c = { .m = m, .src = idx };
	__u64 before = b->bytes;
	int n;

	if (!s->jd)
		return 0;
	n = jitdump_reader__read(s->jd, b, merger_jitdump_record, &c);
	read_done(m, s, before, b);
	if (n == -ENOTSUP || n == -EINVAL) {	/* refused: already reported */
		jitdump_reader__free(s->jd);
		s->jd = NULL;
		return n;
	}
	return n < 0 ? n : 0;
}

/*
 * The records a process still holds in its stdio buffer for its jitdump
 * (V8: 2 MiB; jit/stdio_tail.h), read after the file was read to its end:
 * a service that compiled its code once would otherwise never have it
 * named while it runs.  Anything that fails just leaves the file's.
 */
static void read_unwritten(struct jit_merger *m, __u32 idx, struct jit_budget *b)
{
	struct source *s = &m->srcs[idx];
	struct jd_ctx c = { .m = m, .src = idx };
	__u64 at, before = b->bytes;
	struct pbuf bytes = { 0 };	/* up to STDIO_TAIL_MAX: not kept */
	int n;

	if (s->kind != SRC_JITDUMP || !s->jd || !s->pid || !jitdump_reader__header(s->jd) ||
	    b->cut)
		return;
	if (!m->tail && !(m->tail = stdio_tail__new()))
		return;
	if (!stdio_tail__peek(m->tail, s->pid, jitdump_reader__fd(s->jd), &bytes, &at) &&
	    bytes.len) {
		n = jitdump_reader__read_unwritten(s->jd, bytes.data, bytes.len, at, b,
						   merger_jitdump_record, &c);
		read_done(m, s, before, b);
		if (n > 0)
			m->st.unwritten += (__u64)n;
	}
	pbuf_free(&bytes);
}

/*
 * s (from new_source) once its reader is made: reader_fd is the reader's
 * file, or -1 with errno set when it could not open (what names the kind
 * in the warning).  1: s is now the merger's last source; 0: s was
 * dropped, its file is already a source; -errno: it could not open.
 */
static int source_add(struct jit_merger *m, struct source *s, int reader_fd, const char *what)
{
	char shown[PRINTABLE_MAX];
	int err;

	if (reader_fd < 0) {
		err = -errno;
		pr_warn("%s %s: cannot open: %s", what, printable(shown, sizeof(shown), s->path),
			strerror(-err));
		source_free(s);
		return err;
	}
	if (source_same_file(m, s->kind, reader_fd, &s->dev, &s->ino)) {
		source_free(s);
		return 0;
	}
	m->nr_srcs++;
	return 1;
}

int jit_merger__add_jitdump(struct jit_merger *m, const char *path, int fd, __u32 pid)
{
	struct source *s = new_source(m, SRC_JITDUMP, path, pid, fd);
	struct jit_budget b;
	int err;

	if (!s)
		return -ENOMEM;
	s->jd = jitdump_reader__new(s->path, fd);
	err = source_add(m, s, s->jd ? jitdump_reader__fd(s->jd) : -1, "jitdump");
	if (err <= 0)
		return err;
	b = read_budget(m, JIT_POLL_BYTES, jit_now_ns() + m->lim.poll_ns);
	err = read_jitdump(m, (__u32)(m->nr_srcs - 1), &b);
	if (err == -ENOTSUP || err == -EINVAL) {
		source_free(&m->srcs[--m->nr_srcs]);
		return err;
	}
	return err;
}

/*
 * Perf maps carry no times.  A line for an address the map has not named
 * before is taken as valid since the map's base time (runtimes buffer the
 * file and make code executable with mprotect, so nothing tells when it
 * appeared); a line that names a start address again (the address was
 * reused) is valid from the poll that read it.  Returns true if seen.
 */
static bool perfmap_seen(struct source *s, __u64 start, bool *oom)
{
	size_t i;

	if ((s->nstarts + 1) * 2 > s->starts_cap) {
		size_t ncap = s->starts_cap ? s->starts_cap * 2 : 1024, j;
		__u64 *n = calloc(ncap, sizeof(*n));

		if (!n) {
			*oom = true;
			return false;
		}
		for (j = 0; j < s->starts_cap; j++) {
			__u64 v = s->starts[j];

			if (!v)
				continue;
			for (i = (v * 0x9e3779b97f4a7c15ULL) >> 40 & (ncap - 1); n[i];
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = v;
		}
		free(s->starts);
		s->starts = n;
		s->starts_cap = ncap;
	}
	if (!start)
		return false;
	for (i = (start * 0x9e3779b97f4a7c15ULL) >> 40 & (s->starts_cap - 1); s->starts[i];
	     i = (i + 1) & (s->starts_cap - 1))
		if (s->starts[i] == start)
			return true;
	s->starts[i] = start;
	s->nstarts++;
	return false;
}

struct pm_ctx {
	struct jit_merger *m;
	struct source *s;
};

static int on_map_entry(void *ctx, const struct perfmap_entry *e, __u64 line_no)
{
	struct pm_ctx *c = ctx;
	struct jit_merger *m = c->m;
	char name[JITELF_MAX_NAME + 1], shown[PRINTABLE_MAX];
	size_t len = e->name_len < JITELF_MAX_NAME ? e->name_len : JITELF_MAX_NAME;
	int func, err;

	if (!e->size)
		return 0;
	if (e->size > MAX_NOCODE_FUNC) {
		m->st.bad_records++;
		if (c->s->warnings++ < 10)
			pr_warn("perf map %s: line %llu: size %#llx implausibly large; skipped",
				printable(shown, sizeof(shown), c->s->path),
				(unsigned long long)line_no,
				(unsigned long long)e->size);
		return 0;
	}
	memcpy(name, e->name, len);
	name[len] = '\0';
	func = merger_add_func(m, name, NULL, e->size);
	if (func < 0)
		return func == -E2BIG ? 0 : func;
	{
		bool oom = false;
		__u64 t = perfmap_seen(c->s, e->start, &oom) ? c->s->time : c->s->base_time;

		if (oom)
			return -ENOMEM;
		err = merger_add_imap(m, t, c->s->pid, c->s->pid, e->start, e->size,
				      (__u32)(m->nr_images - 1), func);
	}
	if (!err)
		m->st.map_entries++;
	return err == -E2BIG ? 0 : err;
}

static int read_perf_map(struct jit_merger *m, struct source *s, bool final,
			 struct jit_budget *b)
{
	struct pm_ctx c = { .m = m, .s = s };
	__u64 before = b->bytes;
	int n;

	if (!s->pm)
		return 0;
	n = perfmap_reader__read(s->pm, final, b, on_map_entry, &c);
	read_done(m, s, before, b);
	return n < 0 ? n : 0;
}

int jit_merger__add_perf_map(struct jit_merger *m, const char *path, int fd,
			     __u32 pid, __u64 time)
{
	struct source *s = new_source(m, SRC_PERFMAP, path, pid, fd);
	struct jit_budget b;
	int err;

	if (!s)
		return -ENOMEM;
	s->time = time;
	s->base_time = time;
	s->pm = perfmap_reader__new(s->path, fd);
	err = source_add(m, s, s->pm ? perfmap_reader__fd(s->pm) : -1, "perf map");
	if (err <= 0)
		return err;
	b = read_budget(m, JIT_POLL_BYTES, jit_now_ns() + m->lim.poll_ns);
	return read_perf_map(m, s, false, &b);
}

int jit_merger__add_mlpd(struct jit_merger *m, const char *path, __u32 pid)
{
	struct source *s = new_source(m, SRC_MLPD, path, pid, -1);

	if (!s)
		return -ENOMEM;
	m->nr_srcs++;
	return 0;
}

struct mlpd_ctx {
	struct jit_merger *m;
	struct source *s;
	__u32 pid;
};

static int on_mlpd_method(void *ctx, const struct mlpd_method *mm)
{
	struct mlpd_ctx *c = ctx;
	struct jit_merger *m = c->m;
	__u32 pid;
	int func, err;

	if (!mm->code_size || mm->code_size > MAX_NOCODE_FUNC ||
	    mm->code_addr + mm->code_size < mm->code_addr) {
		m->st.bad_records++;
		return 0;
	}
	func = merger_add_func(m, mm->name ? mm->name : "", NULL, mm->code_size);
	if (func < 0)
		return func == -E2BIG ? 0 : func;
	pid = c->pid ? c->pid : mlpd_pid;
	err = merger_add_imap(m, mm->time, pid, pid, mm->code_addr, mm->code_size,
		       (__u32)(m->nr_images - 1), func);
	if (!err)
		m->st.mlpd_methods++;
	return err == -E2BIG ? 0 : err;
}

static int read_mlpd(struct jit_merger *m, struct source *s, struct jit_budget *b)
{
	struct mlpd_ctx c = { .m = m, .s = s, .pid = s->pid };
	char shown[PRINTABLE_MAX];
	__u64 before = b->bytes;
	int err;

	err = mlpd_read_file(s->path, b, on_mlpd_method, &c);
	read_done(m, s, before, b);
	if (err)
		pr_warn("mlpd %s: not read: %s", printable(shown, sizeof(shown), s->path),
			strerror(-err));
	return err == -ENOMEM ? err : 0;
}

/* ---- life cycle ---- */

struct jit_merger *jit_merger__new(const char *out_dir)
{
	struct jit_merger *m = calloc(1, sizeof(*m));
	int fd;

	if (!m)
		return NULL;
	fd = open_out_dir(out_dir, &m->dir);
	if (fd < 0) {
		pr_warn("jit: cannot use %s for JIT images: %s", out_dir, strerror(-fd));
		free(m);
		errno = -fd;
		return NULL;
	}
	m->dirfd = fd;
	jit_merger__set_limits(m, NULL);
	return m;
}

void jit_merger__set_limits(struct jit_merger *m, const struct jit_limits *l)
{
	m->lim = l ? *l : (struct jit_limits){ 0 };
	if (!m->lim.max_bytes)
		m->lim.max_bytes = JIT_DEFAULT_MAX_BYTES;
	if (!m->lim.poll_ns)
		m->lim.poll_ns = JIT_POLL_NS;
	if (!m->lim.finish_ns)
		m->lim.finish_ns = JIT_FINISH_NS;
}

void jit_merger__free(struct jit_merger *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_srcs; i++)
		source_free(&m->srcs[i]);
	for (i = 0; i < m->nr_images; i++) {
		free(m->images[i].path);
		free(m->images[i].func_addr);
	}
	jitelf_image__free(m->img);
	stdio_tail__free(m->tail);
	free(m->srcs);
	free(m->images);
	free(m->imaps);
	free(m->codes);
	free(m->out_images);
	if (m->dirfd >= 0)
		close(m->dirfd);
	free(m->dir);
	free(m);
}

/* Sources take turns: after a poll cut short by its time the next one
 * starts with the source after the one cut, so one endless file cannot
 * starve the others. */
int jit_merger__poll(struct jit_merger *m, __u64 now)
{
	__u64 deadline = jit_now_ns() + m->lim.poll_ns;
	size_t k;
	int err = 0;

	if (m->finished)
		return -EINVAL;
	for (k = 0; k < m->nr_srcs && !err; k++) {
		size_t i = (m->next_src + k) % m->nr_srcs;
		struct source *s = &m->srcs[i];
		struct jit_budget b = read_budget(m, JIT_POLL_BYTES, deadline);

		if (s->kind == SRC_JITDUMP) {
			err = read_jitdump(m, (__u32)i, &b);
			if (err == -ENOTSUP || err == -EINVAL)
				err = 0;
		} else if (s->kind == SRC_PERFMAP) {
			err = read_perf_map(m, s, false, &b);
			s->time = now;
		}
		if (b.cut && merger_over(m, deadline)) {
			m->next_src = (i + 1) % m->nr_srcs;	/* out of time or asked to stop */
			break;
		}
	}
	return err;
}

static int cmp_imap(const void *a, const void *b)
{
	const struct imap *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_outputs(struct jit_merger *m)
{
	size_t i;

	struct imap *shrunk;
	__u8 *used;

	free(m->out_images);		/* a checkpoint's, before */
	m->out_images = NULL;
	m->nr_out_images = 0;
	m->nr_maps = 0;
	if (m->nr_imaps)
		qsort(m->imaps, m->nr_imaps, sizeof(*m->imaps), cmp_imap);
	m->out_images = calloc(m->nr_images + 1, sizeof(*m->out_images));
	if (!m->out_images)
		return -ENOMEM;
	/* The sorted imaps are the mappings (jit_merger__mapping fills one
	 * on demand): those of images that failed to write go, and the
	 * array's spare capacity is given back. */
	for (i = 0; i < m->nr_imaps; i++)
		if (m->images[m->imaps[i].image].ok)
			m->imaps[m->nr_maps++] = m->imaps[i];
	shrunk = realloc(m->imaps, (m->nr_maps + 1) * sizeof(*m->imaps));
	if (shrunk)
		m->imaps = shrunk;
	m->nr_imaps = m->cap_imaps = m->nr_maps;
	/* Only the images some mapping names: those of the processes
	 * forgotten (jit_merger__forget) stay on disk for the files that
	 * named them, out of the later files' build-id lists. */
	used = calloc(m->nr_images + 1, 1);
	if (!used)
		return -ENOMEM;
	for (i = 0; i < m->nr_maps; i++)
		used[m->imaps[i].image] = 1;
	for (i = 0; i < m->nr_images; i++) {
		struct image_slot *slot = &m->images[i];
		struct jit_image *o;

		if (!slot->ok || !used[i])
			continue;
		slot->listed = m->checkpoint;
		o = &m->out_images[m->nr_out_images++];
		o->path = slot->path;
		memcpy(o->build_id, slot->build_id, 20);
		o->build_id_size = 20;
		o->size = slot->size;
		o->nr_funcs = slot->nr_funcs;
	}
	free(used);
	m->st.mappings = m->nr_maps;
	return 0;
}

/* Where reading of s stopped (messages). */
static __u64 source_offset(const struct source *s)
{
	if (s->jd)
		return jitdump_reader__offset(s->jd);
	if (s->pm)
		return perfmap_reader__offset(s->pm);
	return 0;
}

int jit_merger__finish(struct jit_merger *m)
{
	char shown[PRINTABLE_MAX];
	unsigned int timed_out = 0;
	__u64 deadline;
	size_t i;
	int err = 0;

	if (m->finished)
		return -EINVAL;
	deadline = jit_now_ns() + m->lim.finish_ns;
	for (i = 0; i < m->nr_srcs && !err; i++) {
		struct source *s = &m->srcs[i];
		struct jit_budget b = read_budget(m, ~0ULL, deadline);

		if (s->kind == SRC_JITDUMP && s->jd) {
			err = read_jitdump(m, (__u32)i, &b);
			if (err == -ENOTSUP || err == -EINVAL)
				err = 0;
			if (!err)
				read_unwritten(m, (__u32)i, &b);
			if (s->jd && !b.cut && jitdump_reader__pending(s->jd) &&
			    !jitdump_reader__ahead(s->jd))	/* read from the buffer */
				pr_info("jitdump %s: incomplete last record at offset %llu ignored",
					printable(shown, sizeof(shown), s->path),
					(unsigned long long)jitdump_reader__offset(s->jd));
			if (s->jd && !jitdump_reader__header(s->jd))
				pr_warn("jitdump %s: no jitdump header was written",
					printable(shown, sizeof(shown), s->path));
		} else if (s->kind == SRC_PERFMAP) {
			err = read_perf_map(m, s, true, &b);
		} else if (s->kind == SRC_MLPD) {
			err = read_mlpd(m, s, &b);
		}
		if (b.cut)
			m->st.unread_sources++;
		if (b.cut && merger_over(m, deadline) && !timed_out++)
			pr_warn("jit: reading %s stopped (%s); JIT code after offset %llu is not named",
				printable(shown, sizeof(shown), s->path),
				jit_now_ns() >= deadline ? "time limit of the final read" : "stop requested",
				(unsigned long long)source_offset(s));
	}
	m->finished = true;
	for (i = 0; i < m->nr_srcs; i++) {	/* only reads need them */
		free(m->srcs[i].starts);
		m->srcs[i].starts = NULL;
	}
	if (err)
		return err;
	err = seal_image(m);
	if (!err)
		err = build_outputs(m);
	m->have_outputs = !err;
	return err;
}

/*
 * Seal the open image (a new one is started for the functions read from
 * now on) and make the mappings and images so far available, sources kept
 * open.  Each sealed image file stays as written: files finished earlier
 * name it and it is never rewritten.  A checkpoint with no new function
 * makes no new image.
 */
int jit_merger__checkpoint(struct jit_merger *m, __u32 no)
{
	__u64 deadline;
	int err;

	if (m->finished)
		return -EINVAL;
	if (no > m->checkpoint)
		m->checkpoint = no;
	deadline = jit_now_ns() + m->lim.poll_ns;
	for (size_t i = 0; i < m->nr_srcs && !merger_over(m, deadline); i++) {
		struct jit_budget b = read_budget(m, JIT_POLL_BYTES, deadline);

		if (m->srcs[i].kind == SRC_JITDUMP && !read_jitdump(m, (__u32)i, &b))
			read_unwritten(m, (__u32)i, &b);
	}
	err = seal_image(m);
	if (!err)
		err = build_outputs(m);
	m->have_outputs = !err;
	return err;
}

/*
 * With --switch-max-files the files go, and the images only they named
 * went with them: a recording that rotates for days keeps the images of
 * its kept files (node churning for a minute had left 435 MB here).
 */
size_t jit_merger__prune(struct jit_merger *m, __u32 first_kept,
			 void (*removed)(void *ctx, const char *path, const __u8 *build_id),
			 void *ctx)
{
	size_t i, n = 0;

	for (i = 0; i < m->nr_images; i++) {
		struct image_slot *slot = &m->images[i];

		if (!slot->ok || slot->listed >= first_kept)
			continue;
		if (unlinkat(m->dirfd, strrchr(slot->path, '/') + 1, 0) && errno != ENOENT) {
			pr_debug("jit: cannot remove %s: %s", slot->path, strerror(errno));
			continue;
		}
		slot->ok = false;
		m->st.images_pruned++;
		if (removed)
			removed(ctx, slot->path, slot->build_id);
		n++;
	}
	return n;
}

/* A source of a process gone() names (not an .mlpd file: read at the
 * end). */
static bool source_gone(const struct source *s, bool (*gone)(void *ctx, __u32 pid), void *ctx)
{
	return s->kind != SRC_MLPD && s->pid && gone(ctx, s->pid);
}

/* to[i]: source i's index once the gone ones are dropped, or UINT32_MAX. */
static void source_indices(const struct jit_merger *m, bool (*gone)(void *ctx, __u32 pid),
			   void *ctx, __u32 *to)
{
	__u32 n = 0;

	for (size_t i = 0; i < m->nr_srcs; i++)
		to[i] = source_gone(&m->srcs[i], gone, ctx) ? UINT32_MAX : n++;
}

/* Drop the sources to[] marks gone, compacting srcs. */
static void drop_sources(struct jit_merger *m, const __u32 *to)
{
	size_t i, n = 0;

	for (i = 0; i < m->nr_srcs; i++) {
		struct source *s = &m->srcs[i];

		if (to[i] == UINT32_MAX) {
			if (s->jd)	/* its count outlives it */
				m->st.bad_records += jitdump_reader__bad(s->jd);
			if (s->pm)
				m->st.bad_records += perfmap_reader__bad(s->pm);
			source_free(s);
			continue;
		}
		if (n != i)
			m->srcs[n] = *s;
		n++;
	}
	m->nr_srcs = n;
	m->next_src = 0;
}

/* Drop the mappings of those processes, keeping the order (and which
 * of them a checkpoint made available). */
static void drop_imaps(struct jit_merger *m, bool (*gone)(void *ctx, __u32 pid), void *ctx)
{
	size_t i, n = 0, maps = 0;

	for (i = 0; i < m->nr_imaps; i++) {
		if (gone(ctx, m->imaps[i].pid))
			continue;
		if (i < m->nr_maps)
			maps++;
		m->imaps[n++] = m->imaps[i];
	}
	m->nr_imaps = n;
	m->nr_maps = maps;
	m->st.mappings = maps;
}

/*
 * Processes that exited: their sources are closed and their mappings
 * dropped, so a recording that rotates files for days holds only what
 * its live processes need (each exited process kept a descriptor, its
 * reader, and ~170 B per function here and as much again in every later
 * file's head).  Images stay: the files that name them still need them.
 */
int jit_merger__forget(struct jit_merger *m, bool (*gone)(void *ctx, __u32 pid), void *ctx)
{
	__u32 *to;
	int err;

	if (m->finished)
		return -EINVAL;
	to = malloc((m->nr_srcs + 1) * sizeof(*to));
	if (!to)
		return -ENOMEM;
	source_indices(m, gone, ctx, to);
	/* the one step that can fail: first */
	err = m->nr_code_slots ? codes_rehash(m, m->nr_code_slots, to) : 0;
	if (!err)
		drop_sources(m, to);
	free(to);
	if (!err)
		drop_imaps(m, gone, ctx);
	return err;
}

size_t jit_merger__nr_mappings(const struct jit_merger *m)
{
	return m->have_outputs ? m->nr_maps : 0;
}

void jit_merger__mapping(const struct jit_merger *m, size_t i, struct jit_mapping *out)
{
	const struct imap *im = &m->imaps[i];
	const struct image_slot *slot = &m->images[im->image];

	*out = (struct jit_mapping){
		.time = im->time, .pid = im->pid, .tid = im->tid,
		.start = im->start, .len = im->len, .pgoff = slot->func_addr[im->func],
		.path = slot->path, .build_id_size = 20,
	};
	memcpy(out->build_id, slot->build_id, 20);
}

size_t jit_merger__images(const struct jit_merger *m, const struct jit_image **out)
{
	*out = m->out_images;
	return m->nr_out_images;
}

int jit_merger__open_image(const struct jit_merger *m, const struct jit_image *img)
{
	const char *base = strrchr(img->path, '/') + 1;
	struct stat st;
	int fd;

	for (size_t i = 0; i < m->nr_images; i++) {
		const struct image_slot *slot = &m->images[i];

		if (slot->path != img->path)
			continue;
		fd = openat(m->dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_dev != slot->dev ||
		    st.st_ino != slot->ino) {
			close(fd);
			return -ESTALE;
		}
		return fd;
	}
	return -ENOENT;
}

struct jit_stats jit_merger__stats(const struct jit_merger *m)
{
	struct jit_stats st = m->st;
	size_t i;

	for (i = 0; i < m->nr_srcs; i++) {
		if (m->srcs[i].jd)
			st.bad_records += jitdump_reader__bad(m->srcs[i].jd);
		if (m->srcs[i].pm)
			st.bad_records += perfmap_reader__bad(m->srcs[i].pm);
	}
	return st;
}

const char *jit_merger__dir(const struct jit_merger *m)
{
	return m->dir;
}
