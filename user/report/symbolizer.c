// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolizer: per process the mappings of MMAP/MMAP2 records (copied at
 * FORK, as perf copies them), per thread its COMM, and symbol tables from
 * a cache shared across files.
 */
#include "report/symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/gosyms.h"
#include "perfdata/buildid_cache.h"
#include "perfdata/debuginfo.h"
#include "precord/perf_file.h"
#include "report/maptree.h"
#include "report/symtab.h"
#include "util/array.h"
#include "util/keymap.h"
#include "util/log.h"
#include "util/safe_open.h"

/* ---- the cache shared across files ------------------------------------- */

struct sym_cache_entry {
	struct symtab *tab;		/* NULL: no symbols (or evicted) */
	__u64 used;			/* the tick of its last lookup */
	bool loaded;			/* tab is what loading gave */
};

struct sym_cache {
	char *dir;			/* build-id cache; NULL: none */
	struct debuginfo *debug;	/* stripped DSOs' debug files */
	struct keymap index;		/* key → slot + 1 */
	struct sym_cache_entry *ents;
	size_t nr, cap;
	__u64 tick;
	__u64 max_bytes;		/* held past a file: evicted down to it */
	unsigned int users;		/* live symbolizers: no eviction then */
	struct sym_cache_stats st;
};

static char *default_dir;
static struct debuginfo_config debug_defaults;	/* cache_dir unused */

void sym_cache__set_debug_defaults(const char *debug_root, bool no_server, double deadline_secs,
				   __u64 max_bytes)
{
	debug_defaults = (struct debuginfo_config){
		.debug_root = debug_root, .no_server = no_server,
		.deadline_secs = deadline_secs, .max_bytes = max_bytes,
	};
}

int sym_cache__set_default_dir(const char *buildid_dir)
{
	char *d = buildid_dir ? strdup(buildid_dir) : NULL;

	if (buildid_dir && !d)
		return -ENOMEM;
	free(default_dir);
	default_dir = d;
	return 0;
}

struct sym_cache *sym_cache__new(const char *buildid_dir)
{
	struct sym_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->dir = buildid_cache_dir(buildid_dir ? buildid_dir : default_dir);
	if (!c->dir && errno == ENOMEM) {
		free(c);
		return NULL;
	}
	c->max_bytes = SYM_CACHE_MAX_BYTES;
	{
		struct debuginfo_config dc = debug_defaults;

		dc.cache_dir = c->dir;
		c->debug = debuginfo__new(&dc);
	}
	if (!c->debug) {
		sym_cache__free(c);
		return NULL;
	}
	return c;
}

void sym_cache__free(struct sym_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		symtab__free(c->ents[i].tab);
	free(c->ents);
	keymap_free(&c->index);
	debuginfo__free(c->debug);
	free(c->dir);
	free(c);
}

const struct sym_cache_stats *sym_cache__stats(const struct sym_cache *c)
{
	return &c->st;
}

void sym_cache__set_max_bytes(struct sym_cache *c, __u64 bytes)
{
	c->max_bytes = bytes;
}

/* The table of the least recently used entry freed, its slot kept: its
 * next lookup loads it again.  false: nothing left to evict. */
static bool cache_evict_one(struct sym_cache *c)
{
	struct sym_cache_entry *lru = NULL;

	for (size_t i = 0; i < c->nr; i++)
		if (c->ents[i].tab && (!lru || c->ents[i].used < lru->used))
			lru = &c->ents[i];
	if (!lru)
		return false;
	c->st.symbols -= symtab__nr(lru->tab);
	c->st.bytes -= symtab__bytes(lru->tab);
	c->st.evicted++;
	symtab__free(lru->tab);
	lru->tab = NULL;
	lru->loaded = false;
	return true;
}

/* Between files (no symbolizer holds a table): down to max_bytes. */
static void cache_trim(struct sym_cache *c)
{
	while (!c->users && c->st.bytes > c->max_bytes && cache_evict_one(c))
		;
}

/* The entry of key: *found when it was loaded (or tried) before. */
static struct sym_cache_entry *cache_slot(struct sym_cache *c, const char *key, bool *found)
{
	bool added;
	uint64_t *v = keymap_put(&c->index, key, strlen(key), &added);
	struct sym_cache_entry *e;

	c->st.lookups++;
	*found = false;
	if (!v)
		return NULL;
	if (added) {
		if (ARRAY_GROW(c->ents, c->cap, c->nr + 1))
			return NULL;	/* the key stays, pointing nowhere: never found */
		c->ents[c->nr] = (struct sym_cache_entry){ 0 };
		*v = ++c->nr;
	}
	if (!*v || *v > c->nr)
		return NULL;
	e = &c->ents[*v - 1];
	e->used = ++c->tick;
	*found = e->loaded;
	return e;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cache_account(struct sym_cache *c, struct symtab *t, double t0)
{
	c->st.loads++;
	c->st.load_seconds += now_seconds() - t0;
	if (!t) {
		c->st.failed++;
		c->st.refused += errno == EFBIG;
		return;
	}
	c->st.symbols += symtab__nr(t);
	c->st.bytes += symtab__bytes(t);
}

/* ---- per file ---------------------------------------------------------- */

enum dso_kind { DSO_ELF, DSO_KERNEL, DSO_VDSO, DSO_PERFMAP, DSO_NONE };

struct sdso {
	struct sym_dso pub;
	char *name;
	char hex[BUILD_ID_HEX_SIZE];
	__u8 bid[BUILD_ID_SIZE];
	int bid_size;
	enum dso_kind kind;
	bool tried;
	struct file_ident id;		/* MMAP2's; id.ino 0: unknown */
	struct symtab *tab;
};

/* A process: its mappings (shared with its parent until either changes). */
struct sproc {
	struct maptree maps;
};

/* Values of a keymap kept in an array, so they can be freed: the map
 * holds index + 1. */
struct table {
	struct keymap index;
	void **v;
	size_t nr, cap;
};

static void *table_get(const struct table *t, __u64 key)
{
	uint64_t *i = keymap_get_u64(&t->index, key);

	return i && *i && *i <= t->nr ? t->v[*i - 1] : NULL;
}

/* Set key to val (a previous value is returned through *old, not freed). */
static int table_set(struct table *t, __u64 key, void *val, void **old)
{
	bool added;
	uint64_t *i = keymap_put_u64(&t->index, key, &added);

	*old = NULL;
	if (!i)
		return -ENOMEM;
	if (!added && *i && *i <= t->nr) {
		*old = t->v[*i - 1];
		t->v[*i - 1] = val;
		return 0;
	}
	if (ARRAY_GROW(t->v, t->cap, t->nr + 1)) {
		*i = 0;
		return -ENOMEM;
	}
	t->v[t->nr++] = val;
	*i = t->nr;
	return 0;
}

static void table_free(struct table *t, void (*free_fn)(void *))
{
	for (size_t i = 0; i < t->nr; i++)
		free_fn(t->v[i]);
	free(t->v);
	keymap_free(&t->index);
}

struct symbolizer {
	struct sym_cache *c;
	const struct perf_reader *r;
	bool same_host;
	char *input_dir, *input_base;
	struct keymap dso_index;	/* name + '\0' + hex → sdso * */
	struct sdso **dsos;
	size_t nr_dsos, dsos_cap;
	struct table procs;		/* pid → struct sproc * */
	struct maptree_pool pool;	/* every process's mapping nodes */
	struct symbolizer_stats st;
	struct table comms;		/* tid → char * */
	struct table cgroups;		/* id → char * */
	struct sdso *kernel, *unknown;
	__u64 kmap_start, kmap_end, ktext;	/* [kernel.kallsyms]_text's MMAP */
	__u64 debug_deadline;		/* of this file's debug-file lookups; 0: none yet */
};

static struct sdso *dso_get_id(struct symbolizer *s, const char *name, const __u8 *bid, int size,
			       enum dso_kind kind, const struct file_ident *id)
{
	char key[PATH_MAX + BUILD_ID_HEX_SIZE + 64];
	char hex[BUILD_ID_HEX_SIZE] = "";
	size_t n;
	bool added;
	uint64_t *v;
	struct sdso *d;

	if (size > 0)
		build_id_hex(bid, size, hex);
	/* the file's identity (MMAP2 without a build-id) tells two files at one path apart */
	n = (size_t)snprintf(key, sizeof(key), "%s%c%s%c%u:%u:%llu", name, 0, hex, 0,
			     id ? id->maj : 0, id ? id->min : 0,
			     id ? (unsigned long long)id->ino : 0ULL);
	v = keymap_put(&s->dso_index, key, n < sizeof(key) ? n : sizeof(key), &added);
	if (!v)
		return s->unknown;
	if (!added)
		return (struct sdso *)(uintptr_t)*v;
	d = calloc(1, sizeof(*d));
	if (!d || ARRAY_GROW(s->dsos, s->dsos_cap, s->nr_dsos + 1) || !(d->name = strdup(name))) {
		free(d);
		*v = (uintptr_t)s->unknown;	/* never NULL for later lookups */
		return s->unknown;
	}
	memcpy(d->hex, hex, sizeof(hex));
	if (size > 0)
		memcpy(d->bid, bid, (size_t)size);
	d->bid_size = size > 0 ? size : 0;
	d->kind = kind;
	if (id)
		d->id = *id;
	d->pub = (struct sym_dso){ d->name, d->hex, kind == DSO_KERNEL };
	s->dsos[s->nr_dsos++] = d;
	*v = (uintptr_t)d;
	return d;
}

static struct sdso *dso_get(struct symbolizer *s, const char *name, const __u8 *bid, int size,
			    enum dso_kind kind)
{
	return dso_get_id(s, name, bid, size, kind, NULL);
}

static bool host_matches(const struct perf_reader *r)
{
	const char *h = perf_reader__hostname(r), *rel = perf_reader__osrelease(r);
	struct utsname u;

	return h && rel && !uname(&u) && !strcmp(h, u.nodename) && !strcmp(rel, u.release);
}

struct symbolizer *symbolizer__new(struct sym_cache *c, const struct perf_reader *r)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	const struct perf_build_id *kb;
	const char *path = perf_reader__path(r), *slash = strrchr(path, '/');

	if (!s)
		return NULL;
	s->c = c;
	c->users++;
	s->r = r;
	/* the tree's priorities: a file that knew them could order its
	 * mappings into a list (O(n) depth) */
	if (getrandom(&s->pool.seed, sizeof(s->pool.seed), GRND_NONBLOCK) != sizeof(s->pool.seed))
		s->pool.seed = (__u64)(uintptr_t)s ^ (__u64)time(NULL);
	s->same_host = host_matches(r);
	s->input_dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	s->input_base = strdup(slash ? slash + 1 : path);
	s->unknown = calloc(1, sizeof(*s->unknown));
	if (!s->input_dir || !s->input_base || !s->unknown ||
	    !(s->unknown->name = strdup("[unknown]"))) {
		symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->unknown->kind = DSO_NONE;
	s->unknown->tried = true;
	s->unknown->pub = (struct sym_dso){ s->unknown->name, s->unknown->hex, false };
	kb = perf_reader__find_build_id(r, "[kernel.kallsyms]");
	s->kernel = dso_get(s, "[kernel.kallsyms]", kb ? kb->id : NULL, kb ? kb->size : 0,
			    DSO_KERNEL);
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	s->c->users--;
	cache_trim(s->c);
	for (size_t i = 0; i < s->nr_dsos; i++) {
		free(s->dsos[i]->name);
		free(s->dsos[i]);
	}
	free(s->dsos);
	keymap_free(&s->dso_index);
	for (size_t i = 0; i < s->procs.nr; i++)
		if (s->procs.v[i])
			maptree__release(&((struct sproc *)s->procs.v[i])->maps, &s->pool);
	table_free(&s->procs, free);
	table_free(&s->comms, free);
	table_free(&s->cgroups, free);
	free(s->input_dir);
	free(s->input_base);
	if (s->unknown)
		free(s->unknown->name);
	free(s->unknown);
	free(s);
}

bool symbolizer__same_host(const struct symbolizer *s)
{
	return s->same_host;
}

const char *symbolizer__comm(const struct symbolizer *s, __u32 tid)
{
	return table_get(&s->comms, tid);
}

const char *symbolizer__cgroup(const struct symbolizer *s, __u64 id)
{
	return table_get(&s->cgroups, id);
}

/* ---- loading a DSO's symbols ------------------------------------------- */

/* fd's build-id is d's (or d has none). */
static bool bid_matches(const struct sdso *d, int fd, const char *path)
{
	__u8 id[BUILD_ID_SIZE];
	int n;

	if (!d->bid_size)
		return true;
	n = elf_build_id_or_go_fd(fd, id);	/* a stripped Go binary: precord's id */
	if (n >= d->bid_size && !memcmp(id, d->bid, (size_t)d->bid_size))
		return true;
	pr_debug("%s: build-id does not match the recorded %s", path, d->hex);
	return false;
}

/*
 * Whether we may read a file at a recorded path whose identity the
 * record does not give (no inode: a build-id, which any file can carry,
 * or nothing).  As root, only a file anyone could read: readable by
 * others behind directories others can search.  Else a process mapping
 * a copy of a root-only binary's build-id, or a path that is now
 * another file, would put that file's symbols in what we write.  A user
 * reads only what it could read anyway.
 */
static bool may_read_unverified(int fd, const char *path)
{
	struct stat st;

	if (geteuid())
		return true;
	return !fstat(fd, &st) && (st.st_mode & S_IROTH) && path_public(AT_FDCWD, path);
}

/*
 * The file a mapping named, opened as the recorder opens it: no symlink
 * on the path, a regular file only, the recorded device and inode when
 * the record has them, else a public file; its build-id d's.  fd or -1.
 */
static int open_recorded(const struct sdso *d, const char *path)
{
	int fd = safe_open_file(AT_FDCWD, path, d->id.ino ? &d->id : NULL);

	if (fd < 0) {
		pr_debug("%s: not read: %s", path, strerror(-fd));
		return -1;
	}
	if ((!d->id.ino && !may_read_unverified(fd, path)) || !bid_matches(d, fd, path)) {
		if (!d->id.ino)
			pr_debug("%s: not read: not the recorded file or not public", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* The build-id cache's copy of d made from d's own path (DIR/PATH/HEX/
 * what, as perf lays it out; never through the .build-id links, which
 * another file with the same build-id may have made) with d's build-id.
 * fd or -1. */
static int open_cached(const struct symbolizer *s, const struct sdso *d, const char *name,
		       const char *what)
{
	char rel[PATH_MAX];
	int dfd, fd;

	if (!s->c->dir || d->bid_size < 2)
		return -1;
	while (*name == '/')
		name++;
	if ((size_t)snprintf(rel, sizeof(rel), "%s/%s/%s", name, d->hex, what) >= sizeof(rel))
		return -1;
	dfd = open(s->c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	fd = safe_open_file(dfd, rel, NULL);
	/* another file came under this path with this id: the copy is not
	 * known to be this one's (perfdata/buildid_cache.h) */
	snprintf(rel + strlen(rel) - strlen(what), sizeof(rel) - (strlen(rel) - strlen(what)),
		 "%s", BUILDID_CACHE_CONFLICT);
	if (fd >= 0 && !faccessat(dfd, rel, F_OK, AT_SYMLINK_NOFOLLOW)) {
		pr_debug("%s: the build-id cache's copy is in conflict: not used", d->name);
		close(fd);
		fd = -1;
	}
	close(dfd);
	if (fd >= 0 && strcmp(what, "kallsyms") && !bid_matches(d, fd, rel)) {
		close(fd);
		fd = -1;
	}
	return fd < 0 ? -1 : fd;
}

static struct symtab *load_elf_dso(struct symbolizer *s, struct sdso *d)
{
	char path[PATH_MAX];
	const char *base = strrchr(d->name, '/');
	struct symtab *t = NULL;
	int fd = d->name[0] == '/' ? open_cached(s, d, d->name, "elf") : -1;

	if (fd < 0 && d->name[0] == '/')
		fd = open_recorded(d, d->name);
	/* a precord JIT image moved with its recording: FILE.jit/jit-N.so */
	if (fd < 0 && base && base - d->name > 4 && !strncmp(base - 4, ".jit", 4)) {
		snprintf(path, sizeof(path), "%s/%s.jit%s", s->input_dir, s->input_base, base);
		fd = safe_open_file(AT_FDCWD, path, NULL);
		if (fd >= 0 && !bid_matches(d, fd, path)) {
			close(fd);
			fd = -1;
		}
	}
	/* perf record lists only the DSOs with samples of their own: on the
	 * recording host the file at the path tells the others' ids */
	if (fd >= 0 && !d->bid_size && s->same_host) {
		int n = elf_build_id_fd(fd, d->bid);

		d->bid_size = n > 0 ? n : 0;
		build_id_hex(d->bid, d->bid_size, d->hex);
	}
	if (fd >= 0) {
		int dfd = -1, err;

		/* a stripped DSO's .symtab: its debug file, from the build-id
		 * cache, Debian's -dbgsym packages, or debuginfod (issue 21);
		 * this file's lookups end by one deadline */
		if (d->bid_size >= 2 && d->name[0] == '/') {
			if (!s->debug_deadline)
				s->debug_deadline = debuginfo__deadline(s->c->debug);
			dfd = debuginfo__find(s->c->debug, &(struct debuginfo_dso){
				.name = d->name, .id = d->bid, .id_size = d->bid_size, .fd = fd,
			}, s->debug_deadline, true);
			if (dfd < 0)
				dfd = -1;
		}
		t = symtab__load_elf_debug(fd, dfd, d->name);
		err = errno;
		if (dfd >= 0)
			close(dfd);
		close(fd);
		errno = err;		/* EFBIG: counted as refused */
	}
	return t;
}

static struct symtab *load_kernel(struct symbolizer *s, struct sdso *d)
{
	__u8 id[BUILD_ID_SIZE];
	struct symtab *t = NULL;
	int fd = open_cached(s, d, "[kernel.kallsyms]", "kallsyms");

	if (fd < 0 && s->same_host &&
	    (!d->bid_size || (kernel_build_id(id) >= d->bid_size &&
			      !memcmp(id, d->bid, (size_t)d->bid_size))))
		fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		t = symtab__load_kallsyms(fd, "kallsyms");
		close(fd);
	}
	return t;
}

static struct symtab *load_vdso(struct symbolizer *s, struct sdso *d)
{
	__u8 id[BUILD_ID_SIZE];
	const void *image;
	size_t len;
	int fd = open_cached(s, d, "[vdso]", "vdso");
	struct symtab *t = NULL;

	if (fd >= 0) {
		t = symtab__load_elf(fd, d->name);
		close(fd);
	} else if (s->same_host && vdso_build_id(id, &image, &len) >= d->bid_size &&
		   (!d->bid_size || !memcmp(id, d->bid, (size_t)d->bid_size))) {
		t = symtab__load_elf_mem(image, len, d->name);
	}
	return t;
}

static struct symtab *load_perfmap(struct symbolizer *s, struct sdso *d)
{
	struct symtab *t = NULL;
	struct stat st;
	int fd;

	if (!s->same_host)
		return NULL;
	/* perf's rule: a map owned by root or by us (anyone can create
	 * /tmp/perf-PID.map for another user's PID), not through a symlink */
	fd = safe_open_file(AT_FDCWD, d->name, NULL);
	if (fd >= 0 && (fstat(fd, &st) || (st.st_uid && st.st_uid != geteuid()))) {
		pr_debug("%s: not owned by root or by us: not read", d->name);
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		t = symtab__load_perfmap(fd, d->name);
		close(fd);
	}
	return t;
}

/* The cache key of d's table. */
static void dso_key(const struct symbolizer *s, const struct sdso *d, char *key, size_t size)
{
	struct stat st = { 0 };

	switch (d->kind) {
	case DSO_KERNEL:
		if (d->bid_size)
			snprintf(key, size, "K:%s", d->hex);
		else
			snprintf(key, size, "K:%s", s->same_host ? "this host" : "");
		break;
	case DSO_PERFMAP:
		fstatat(AT_FDCWD, d->name, &st, AT_SYMLINK_NOFOLLOW);
		snprintf(key, size, "M:%s:%llu:%llu:%lld", d->name, (unsigned long long)st.st_ino,
			 (unsigned long long)st.st_size, (long long)st.st_mtime);
		break;
	default:
		/* the path too: another file carrying the same build-id
		 * (anyone can write one) must not name this one's frames */
		if (d->bid_size)
			snprintf(key, size, "B:%s:%s", d->hex, d->name);
		else
			snprintf(key, size, "P:%u:%u:%llu:%s", d->id.maj, d->id.min,
				 (unsigned long long)d->id.ino, d->name);
	}
}

static struct symtab *dso_symtab(struct symbolizer *s, struct sdso *d)
{
	char key[PATH_MAX + 64];
	struct sym_cache_entry *e;
	struct symtab *t = NULL;
	bool found;
	double t0;

	if (d->tried)
		return d->tab;
	d->tried = true;
	dso_key(s, d, key, sizeof(key));
	if (!strcmp(key, "K:"))		/* another host's kernel, not cached */
		return NULL;
	e = cache_slot(s->c, key, &found);
	if (!e || found)
		return d->tab = e ? e->tab : NULL;
	t0 = now_seconds();
	errno = 0;
	switch (d->kind) {
	case DSO_ELF:		t = load_elf_dso(s, d); break;
	case DSO_KERNEL:	t = load_kernel(s, d); break;
	case DSO_VDSO:		t = load_vdso(s, d); break;
	case DSO_PERFMAP:	t = load_perfmap(s, d); break;
	case DSO_NONE:		break;
	}
	cache_account(s->c, t, t0);
	e->tab = t;
	e->loaded = true;
	if (!t)
		pr_debug("%s: no symbols for %s (%s)", perf_reader__path(s->r), d->name,
			 *d->hex ? d->hex : "no build-id");
	return d->tab = t;
}

/* ---- processes and mappings --------------------------------------------- */

const struct symbolizer_stats *symbolizer__stats(struct symbolizer *s)
{
	s->st.map_nodes = s->pool.nodes;
	s->st.map_copies = s->pool.copies;
	s->st.map_steps = s->pool.steps;
	s->st.bytes = s->pool.nodes * maptree__node_size() +
		      s->st.procs * (sizeof(struct sproc) + 2 * sizeof(void *));
	return &s->st;
}

/* The file holds more at once than SYMBOLIZER_MAX_ENTRIES: refused. */
static bool over_cap(const struct symbolizer *s)
{
	return s->pool.nodes + s->st.procs >= SYMBOLIZER_MAX_ENTRIES;
}

static struct sproc *proc_get(struct symbolizer *s, __u32 pid, bool create)
{
	struct sproc *p = table_get(&s->procs, pid);
	void *old;

	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || table_set(&s->procs, pid, p, &old)) {
		free(p);
		return NULL;
	}
	s->st.procs++;
	return p;
}

static bool is_anon(const char *name)
{
	return !strncmp(name, "//anon", 6) || !strncmp(name, "/dev/zero", 9) ||
	       !strncmp(name, "/anon_hugepage", 14);
}

static int on_mmap(struct symbolizer *s, const struct perf_event_view *ev)
{
	const struct perf_mmap_view *m = &ev->mmap;
	__u16 mode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	const struct perf_build_id *b;
	char name[64];
	struct map_range r = { m->start, m->start + m->len, m->pgoff, NULL };
	struct file_ident id = { m->maj, m->min, m->ino, m->ino_generation,
				 m->ino_generation != 0, true };
	struct sdso *d;
	struct sproc *p;

	if (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL) {
		if (!strncmp(m->filename, "[kernel.kallsyms]", 17) && mode == PERF_RECORD_MISC_KERNEL) {
			s->kmap_start = m->start;
			s->kmap_end = m->start + m->len;
			s->ktext = m->pgoff;
		}
		return 0;
	}
	if ((ev->misc & PERF_RECORD_MISC_MMAP_DATA) || !m->len)
		return 0;
	if (over_cap(s))
		return -E2BIG;
	if (is_anon(m->filename)) {
		snprintf(name, sizeof(name), "/tmp/perf-%u.map", m->pid);
		d = dso_get(s, name, NULL, 0, DSO_PERFMAP);
	} else if (m->build_id_size) {
		d = dso_get(s, m->filename, m->build_id, m->build_id_size, DSO_ELF);
	} else {
		b = perf_reader__find_build_id(s->r, m->filename);
		d = dso_get_id(s, m->filename, b ? b->id : NULL, b ? b->size : 0, DSO_ELF,
			       m->ino ? &id : NULL);
	}
	if (!strcmp(m->filename, "[vdso]"))
		d->kind = DSO_VDSO;
	else if (m->filename[0] == '[' && d->kind == DSO_ELF)
		d->kind = DSO_NONE;	/* [heap], [stack], … */
	r.dso = d;
	p = proc_get(s, m->pid, true);
	if (!p)
		return -ENOMEM;
	return maptree__insert(&p->maps, &s->pool, &r);
}

static int on_fork(struct symbolizer *s, const struct perf_event_view *ev)
{
	const char *pc = table_get(&s->comms, ev->task.ptid);
	struct sproc *parent, *child;
	void *old;
	char *comm;

	if (pc && !table_get(&s->comms, ev->task.tid)) {
		comm = strdup(pc);
		if (!comm || table_set(&s->comms, ev->task.tid, comm, &old)) {
			free(comm);
			return -ENOMEM;
		}
		free(old);
	}
	if (ev->task.pid == ev->task.ppid)	/* a thread: shares its process's maps */
		return 0;
	if (over_cap(s))
		return -E2BIG;
	parent = proc_get(s, ev->task.ppid, false);
	child = proc_get(s, ev->task.pid, true);
	if (!child)
		return -ENOMEM;
	if (parent == child)
		return 0;
	/* a new process (perf forgets a reused pid's old one): its
	 * parent's maps, shared until one of them maps something */
	if (parent)
		maptree__share(&child->maps, &parent->maps, &s->pool);
	else
		maptree__release(&child->maps, &s->pool);
	return 0;
}

static int set_string(struct table *t, __u64 key, const char *str)
{
	char *v = strdup(str);
	void *old;

	if (!v || table_set(t, key, v, &old)) {
		free(v);
		return -ENOMEM;
	}
	free(old);
	return 0;
}

int symbolizer__event(struct symbolizer *s, const struct perf_event_view *ev)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return on_mmap(s, ev);
	case PERF_RECORD_COMM:
		return set_string(&s->comms, ev->comm.tid, ev->comm.comm);
	case PERF_RECORD_FORK:
		return on_fork(s, ev);
	/* PERF_RECORD_EXIT drops nothing, as perf report keeps an exited
	 * process's maps until its pid is reused: samples may follow the
	 * EXIT in the file (other threads after the leader's pthread_exit,
	 * --off-cpu's sums written when the recording ends).  Memory stays
	 * linear in the file: a child shares its parent's maps until it
	 * maps something, and each mapping is a record of the file. */
	case PERF_RECORD_CGROUP:
		return set_string(&s->cgroups, ev->cgroup.id, ev->cgroup.path);
	default:
		return 0;
	}
}

/* ---- resolving ---------------------------------------------------------- */

static void resolve_kernel(struct symbolizer *s, __u64 ip, struct sym_frame *f)
{
	struct symtab *t = dso_symtab(s, s->kernel);
	const struct sym *sym;
	__u64 at = ip;

	f->dso = &s->kernel->pub;
	f->map_start = s->kmap_start;
	f->map_end = s->kmap_end;
	f->map_pgoff = s->ktext;
	if (!t)
		return;
	if (s->ktext && symtab__text(t))	/* KASLR: another boot of this kernel */
		at = ip - s->ktext + symtab__text(t);
	sym = symtab__find(t, at);
	if (!sym)
		return;
	f->sym = sym->name;
	f->sym_off = at - sym->start;
	if (sym->module) {
		struct sdso *m = dso_get(s, sym->module, NULL, 0, DSO_KERNEL);

		m->tried = true;
		f->dso = &m->pub;
	}
}

static void resolve_user(struct symbolizer *s, __u32 pid, __u64 ip, struct sym_frame *f)
{
	const struct sproc *p = proc_get(s, pid, false);
	const struct map_range *m = p ? maptree__find(&p->maps, &s->pool, ip) : NULL;
	struct sdso *d;
	const struct sym *sym;
	struct symtab *t;
	__u64 at;

	if (!m)
		return;
	d = m->dso;
	f->dso = &d->pub;
	f->map_start = m->start;
	f->map_end = m->end;
	f->map_pgoff = m->pgoff;
	t = dso_symtab(s, d);
	if (!t)
		return;
	at = d->kind == DSO_PERFMAP ? ip : ip - m->start + m->pgoff;
	sym = symtab__find(t, at);
	if (sym) {
		f->sym = sym->name;
		f->sym_off = at - sym->start;
	}
}

enum ctx { CTX_USER, CTX_KERNEL, CTX_OTHER };

static void resolve(struct symbolizer *s, __u32 pid, enum ctx ctx, __u64 ip, struct sym_frame *f)
{
	*f = (struct sym_frame){ .ip = ip, .dso = &s->unknown->pub };
	if (ctx == CTX_KERNEL)
		resolve_kernel(s, ip, f);
	else if (ctx == CTX_USER)
		resolve_user(s, pid, ip, f);
}

static enum ctx misc_ctx(__u16 misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:	return CTX_KERNEL;
	case PERF_RECORD_MISC_USER:	return CTX_USER;
	default:			return CTX_OTHER;
	}
}

size_t symbolizer__frames(struct symbolizer *s, const struct perf_event_view *ev,
			  struct sym_frame *out, size_t max)
{
	const struct perf_sample_view *sm = &ev->sample;
	enum ctx ctx = misc_ctx(ev->misc);
	size_t n = 0;

	if (!max || ev->type != PERF_RECORD_SAMPLE)
		return 0;
	for (__u64 i = 0; sm->callchain && i < sm->nr_callchain && n < max; i++) {
		__u64 ip = sm->callchain[i];

		if (ip >= (__u64)-4095) {	/* PERF_CONTEXT_MAX */
			switch (ip) {
			case PERF_CONTEXT_KERNEL:	ctx = CTX_KERNEL; break;
			case PERF_CONTEXT_USER:		ctx = CTX_USER; break;
			case PERF_CONTEXT_HV:
			case PERF_CONTEXT_GUEST:
			case PERF_CONTEXT_GUEST_KERNEL:
			case PERF_CONTEXT_GUEST_USER:	ctx = CTX_OTHER; break;
			default:		/* perf drops such a chain */
				n = 0;
				goto no_chain;
			}
			continue;
		}
		resolve(s, sm->pid, ctx, ip, &out[n++]);
	}
	if (n)
		return n;
no_chain:
	resolve(s, sm->pid, misc_ctx(ev->misc), sm->ip, &out[0]);
	return 1;
}
