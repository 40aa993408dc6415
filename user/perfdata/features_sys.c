// SPDX-License-Identifier: GPL-2.0
/*
 * Feature payloads read from the running system, the way perf record 6.1
 * reads them (util/header.c, util/cputopo.c, util/cpumap.c, util/pmu.c,
 * arch/x86/util/header.c): same files, same fallbacks, same order.
 * "str" is perf's header string (u32 len, NUL-padded to 64).
 */
#include "perfdata/features_sys.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "util/io.h"
#include "util/log.h"

#define MAX_LIST_IDS	(1 << 16)
#define MAX_CACHE_LVL	4		/* perf reads cache/index0..3 only */
#define MAX_MEM_NODES	2000		/* perf's MAX_MEMORY_NODES */
#define MAX_MEM_BLOCKS	(1u << 24)

/* ---- small /sys and /proc readers ---- */

int perfdata_sys_read(char *buf, size_t size, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	ssize_t n;
	int fd;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read_full(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return (int)n;
}

char *perfdata_strim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* perf's get_max_num(): the last number of a cpu list, plus one; 4096
 * (perf's default) when the file cannot be read. */
__u32 perfdata_cpu_max(const char *which)
{
	char buf[SYS_BUF];
	char *p;
	int v;

	if (sys_line(buf, SYS_CPU "/%s", which))
		goto fail;
	for (p = buf + strlen(buf); p > buf && p[-1] != ',' && p[-1] != '-'; p--)
		;
	if (sscanf(p, "%d", &v) == 1 && v >= 0)
		return (__u32)v + 1;
fail:
	pr_debug("cannot read %s/%s, assuming 4096 CPUs", SYS_CPU, which);
	return 4096;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* "0-3,8,10-11" → sorted ids without duplicates (malloc'd); count or
 * -errno. */
static int id_list_parse(const char *s, int **out)
{
	int *ids = NULL, *nids, n = 0, i, j;
	long a, b;
	char *end;

	while (*s) {
		a = strtol(s, &end, 10);
		b = a;
		if (end == s || a < 0 || a > INT_MAX)
			goto bad;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				goto bad;
		}
		if (b - a >= MAX_LIST_IDS - n)
			goto bad;
		nids = realloc(ids, (size_t)(n + b - a + 1) * sizeof(*ids));
		if (!nids) {
			free(ids);
			return -ENOMEM;
		}
		ids = nids;
		for (; a <= b; a++)
			ids[n++] = (int)a;
		s = end + (*end == ',');
		if (*end && *end != ',')
			goto bad;
	}
	if (n)
		qsort(ids, (size_t)n, sizeof(*ids), int_cmp);
	for (i = j = 0; i < n; i++)
		if (!j || ids[j - 1] != ids[i])
			ids[j++] = ids[i];
	*out = ids;
	return j;
bad:
	free(ids);
	return -EINVAL;
}

/* Online CPUs (perf_cpu_map__new(NULL)): sysfs, else 0..nprocs-1. */
static int cpus_online(int **out)
{
	char buf[SYS_BUF];
	long i, nr;

	if (!sys_line(buf, SYS_CPU "/online"))
		return id_list_parse(buf, out);
	nr = sysconf(_SC_NPROCESSORS_ONLN);
	if (nr <= 0 || nr > MAX_LIST_IDS)
		return -ENODATA;
	*out = malloc((size_t)nr * sizeof(int));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		(*out)[i] = (int)i;
	return (int)nr;
}

static bool id_in(const int *ids, int n, int id)
{
	return n > 0 && bsearch(&id, ids, (size_t)n, sizeof(*ids), int_cmp) != NULL;
}

/* ---- NRCPUS, CPUDESC, CPUID, TOTAL_MEM ---- */

/* File format: u32 nr_cpus_avail (highest present CPU + 1), u32 online. */
int perfdata_feat_write_nrcpus(struct pbuf *out, const struct perfdata_env *env)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	(void)env;
	if (online < 0)
		return -errno;
	pbuf_put_u32(out, perfdata_cpu_max("present"));
	pbuf_put_u32(out, (__u32)online);
	return out->err;
}

/*
 * The first line of path (a /proc file) that starts with key, in *line
 * (malloc'd, the caller frees it).  0, -ENODATA (no such line) or -errno.
 */
static int proc_line(const char *path, const char *key, char **line)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0;
	int err = -ENODATA;

	*line = NULL;
	if (!f)
		return -errno;
	while (getline(line, &cap, f) > 0) {
		if (!strncmp(*line, key, strlen(key))) {
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/* File format: str, /proc/cpuinfo "model name" with each run of blanks
 * squashed to one space (perf's __write_cpudesc). */
int perfdata_feat_write_cpudesc(struct pbuf *out, const struct perfdata_env *env)
{
	char *line, *s, *p, *q;
	int err = proc_line("/proc/cpuinfo", "model name", &line);

	(void)env;
	if (!err) {
		s = line;
		p = strchr(line, ':');
		if (p && p[1] == ' ' && p[2])
			s = p + 2;
		s[strcspn(s, "\n")] = '\0';
		for (p = q = s; *p; p++) {
			if (!isspace((unsigned char)*p))
				*q++ = *p;
			else if (p == s || !isspace((unsigned char)p[-1]))
				*q++ = ' ';
		}
		*q = '\0';
		pbuf_put_perf_str(out, s);
		err = out->err;
	}
	free(line);
	return err;
}

/* File format: str "Vendor,family,model,stepping" (x86 only, as perf). */
int perfdata_feat_write_cpuid(struct pbuf *out, const struct perfdata_env *env)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int lvl, a, b, c, d, family = -1, model = -1, step = -1;
	char vendor[13], buf[64];

	(void)env;
	__cpuid(0, lvl, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (lvl >= 1) {
		__cpuid(1, a, b, c, d);
		family = (a >> 8) & 0xf;
		model = (a >> 4) & 0xf;
		step = a & 0xf;
		if (family == 0xf)
			family += (a >> 20) & 0xff;
		if (family >= 0x6)
			model += ((a >> 16) & 0xf) << 4;
	}
	snprintf(buf, sizeof(buf), "%s,%u,%u,%u", vendor, family, model, step);
	pbuf_put_perf_str(out, buf);
	return out->err;
#else
	(void)out;
	(void)env;
	return -ENODATA;
#endif
}

/* File format: u64 MemTotal of /proc/meminfo, in kB. */
int perfdata_feat_write_total_mem(struct pbuf *out, const struct perfdata_env *env)
{
	unsigned long long kb;
	char *line;
	int err = proc_line("/proc/meminfo", "MemTotal:", &line);

	(void)env;
	if (!err) {
		err = -ENODATA;
		if (sscanf(line, "%*s %llu", &kb) == 1) {
			pbuf_put_u64(out, kb);
			err = out->err;
		}
	}
	free(line);
	return err;
}

/* ---- CPU_TOPOLOGY ---- */

struct str_set {
	char **v;
	__u32 n;
};

static int str_set_add(struct str_set *s, const char *str)
{
	char **nv;
	__u32 i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return 0;
	nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	s->v = nv;
	s->v[s->n] = strdup(str);
	if (!s->v[s->n])
		return -ENOMEM;
	s->n++;
	return 0;
}

static void str_set_free(struct str_set *s)
{
	while (s->n)
		free(s->v[--s->n]);
	free(s->v);
	s->v = NULL;
}

/* u32 n, then n × str. */
static void put_str_set(struct pbuf *out, const struct str_set *s)
{
	__u32 i;

	pbuf_put_u32(out, s->n);
	for (i = 0; i < s->n; i++)
		pbuf_put_perf_str(out, s->v[i]);
}

struct cpu_topo {
	struct str_set pkg, die, core;
	bool has_die;
};

/* A topology list of cpu: the new sysfs name, else the old one. */
static int topo_list(char *buf, int cpu, const char *name, const char *old)
{
	int err = sys_line(buf, SYS_CPU "/cpu%d/topology/%s", cpu, name);

	if (err == -ENOENT && old)
		err = sys_line(buf, SYS_CPU "/cpu%d/topology/%s", cpu, old);
	return err;
}

/* perf's build_cpu_topology(): -ENODATA only if no list was readable. */
static int topo_add_cpu(struct cpu_topo *t, int cpu)
{
	char buf[SYS_BUF];
	int ret = -ENODATA, err = 0;

	if (!topo_list(buf, cpu, "package_cpus_list", "core_siblings_list")) {
		err = str_set_add(&t->pkg, buf);
		ret = 0;
	}
	if (!err && t->has_die && !topo_list(buf, cpu, "die_cpus_list", NULL)) {
		err = str_set_add(&t->die, buf);
		ret = 0;
	}
	if (!err && !topo_list(buf, cpu, "core_cpus_list", "thread_siblings_list")) {
		err = str_set_add(&t->core, buf);
		ret = 0;
	}
	return err ? err : ret;
}

/* Dies are listed on x86_64 and s390x only, if cpu0 has die_cpus_list. */
static bool topo_has_die(const struct utsname *u)
{
	return (!strncmp(u->machine, "x86_64", 6) || !strncmp(u->machine, "s390x", 5)) &&
	       !access(SYS_CPU "/cpu0/topology/die_cpus_list", F_OK);
}

/*
 * perf 6.1 fails to read the whole topology (and every later feature) when
 * a socket id exceeds nr_cpus_avail, except on s390 and aarch64.  Then we
 * write revision 1 only, which perf reads as "no core/socket ids".
 */
static bool topo_sockets_ok(const struct utsname *u, __u32 nr)
{
	__u32 cpu;
	int id;

	if (!strncmp(u->machine, "s390", 4) || !strncmp(u->machine, "aarch64", 7))
		return true;
	for (cpu = 0; cpu < nr; cpu++)
		if (!sys_int(&id, SYS_CPU "/cpu%u/topology/physical_package_id", cpu) &&
		    id != -1 && (__u32)id > nr)
			return false;
	return true;
}

/* u32 id per CPU < nr from topology/<name>, -1 when unreadable. */
static void topo_put_id(struct pbuf *out, __u32 cpu, const char *name)
{
	int id;

	if (sys_int(&id, SYS_CPU "/cpu%u/topology/%s", cpu, name))
		id = -1;
	pbuf_put_u32(out, (__u32)id);
}

/*
 * File format (revisions are told apart by the section size):
 *	u32 nr_pkg; str package_cpus_list[nr_pkg];    distinct lists of
 *	u32 nr_core; str core_cpus_list[nr_core];     online CPUs, in order
 *	{ u32 core_id; u32 socket_id; }[nr_cpus_avail]           rev 2
 *	u32 nr_die; str die_cpus_list[nr_die]; u32 die_id[nr_cpus_avail]
 *	                                          rev 3, only with dies
 */
int perfdata_feat_write_cpu_topology(struct pbuf *out, const struct perfdata_env *env)
{
	struct cpu_topo t;
	__u32 nr = perfdata_cpu_max("present"), cpu;
	struct utsname u;
	int *online = NULL, n_online, err = 0;

	(void)env;
	memset(&t, 0, sizeof(t));
	if (uname(&u))
		return -errno;
	n_online = cpus_online(&online);
	if (n_online < 0)
		return n_online;
	t.has_die = topo_has_die(&u);
	for (cpu = 0; cpu < nr && !err; cpu++)
		if (id_in(online, n_online, (int)cpu))
			err = topo_add_cpu(&t, (int)cpu);
	if (err)
		goto out;
	put_str_set(out, &t.pkg);
	put_str_set(out, &t.core);
	if (!topo_sockets_ok(&u, nr)) {
		pr_debug("CPU_TOPOLOGY: socket id > %u, writing no core/socket ids", nr);
		goto out;
	}
	for (cpu = 0; cpu < nr; cpu++) {
		topo_put_id(out, cpu, "core_id");
		topo_put_id(out, cpu, "physical_package_id");
	}
	if (t.die.n) {
		put_str_set(out, &t.die);
		for (cpu = 0; cpu < nr; cpu++)
			topo_put_id(out, cpu, "die_id");
	}
out:
	str_set_free(&t.pkg);
	str_set_free(&t.die);
	str_set_free(&t.core);
	free(online);
	return err ? err : out->err;
}

/* ---- NUMA_TOPOLOGY ---- */

/* "Node 0 MemTotal:  4810528 kB" lines → kB values (perf's load_numa_node). */
static int numa_meminfo(int node, __u64 *total, __u64 *free_kb)
{
	char buf[SYS_BUF], field[32], *line, *next;
	unsigned long long kb;
	int n = perfdata_sys_read(buf, sizeof(buf), SYS_NODE "/node%d/meminfo", node);

	if (n < 0)
		return n;
	*total = *free_kb = 0;
	for (line = buf; *line && !(*total && *free_kb); line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (!strchr(line, ':'))
			continue;
		if (sscanf(line, "%*s %*d %31s %llu", field, &kb) != 2)
			return -EINVAL;
		if (!strcmp(field, "MemTotal:"))
			*total = kb;
		if (!strcmp(field, "MemFree:"))
			*free_kb = kb;
	}
	return 0;
}

/*
 * File format:
 *	u32 nr;               nodes in /sys/devices/system/node/online
 *	{ u32 node; u64 mem_total_kb; u64 mem_free_kb; str cpulist; }[nr]
 */
int perfdata_feat_write_numa_topology(struct pbuf *out, const struct perfdata_env *env)
{
	char buf[SYS_BUF];
	__u64 total, free_kb;
	int *nodes = NULL, nr, i, err;

	(void)env;
	err = sys_line(buf, SYS_NODE "/online");
	if (err)
		return err;
	nr = id_list_parse(buf, &nodes);
	if (nr < 0)
		return nr;
	pbuf_put_u32(out, (__u32)nr);
	for (i = 0; i < nr && !err; i++) {
		err = numa_meminfo(nodes[i], &total, &free_kb);
		if (!err)
			err = sys_line(buf, SYS_NODE "/node%d/cpulist", nodes[i]);
		if (err)
			break;
		pbuf_put_u32(out, (__u32)nodes[i]);
		pbuf_put_u64(out, total);
		pbuf_put_u64(out, free_kb);
		pbuf_put_perf_str(out, buf);
	}
	free(nodes);
	return err ? err : out->err;
}

/* ---- CACHE ---- */

struct cache_level {
	__u32 level, line_size, sets, ways;
	char *type, *size, *map;
};

static void cache_level_free(struct cache_level *c)
{
	free(c->type);
	free(c->size);
	free(c->map);
}

static char *cache_str(int cpu, int idx, const char *name)
{
	char buf[SYS_BUF];

	if (perfdata_sys_read(buf, sizeof(buf), SYS_CPU "/cpu%d/cache/index%d/%s",
			      cpu, idx, name) < 0)
		return NULL;
	return strdup(perfdata_strim(buf));
}

/* perf's cpu_cache_level__read(): 1 = no such index, -1 = unreadable. */
static int cache_level_read(struct cache_level *c, int cpu, int idx)
{
	char dir[128];
	struct stat st;
	int v[4], i;
	static const char *const ints[] = {
		"level", "coherency_line_size", "number_of_sets", "ways_of_associativity",
	};

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), SYS_CPU "/cpu%d/cache/index%d", cpu, idx);
	if (stat(dir, &st))
		return 1;
	for (i = 0; i < 4; i++)
		if (sys_int(&v[i], "%s/%s", dir, ints[i]))
			return -1;
	c->level = (__u32)v[0];
	c->line_size = (__u32)v[1];
	c->sets = (__u32)v[2];
	c->ways = (__u32)v[3];
	c->type = cache_str(cpu, idx, "type");
	c->size = cache_str(cpu, idx, "size");
	c->map = cache_str(cpu, idx, "shared_cpu_list");
	if (!c->type || !c->size || !c->map) {
		cache_level_free(c);
		return -1;
	}
	return 0;
}

static bool cache_level_eq(const struct cache_level *a, const struct cache_level *b)
{
	return a->level == b->level && a->line_size == b->line_size &&
	       a->sets == b->sets && a->ways == b->ways && !strcmp(a->type, b->type) &&
	       !strcmp(a->size, b->size) && !strcmp(a->map, b->map);
}

/* Distinct levels of every possible CPU, in discovery order. */
static int cache_collect(struct cache_level *caches, __u32 *cnt)
{
	__u32 nr = perfdata_cpu_max("possible"), i;
	struct cache_level c;
	int cpu, idx, ret;

	*cnt = 0;
	for (cpu = 0; (__u32)cpu < nr; cpu++) {
		for (idx = 0; idx < MAX_CACHE_LVL; idx++) {
			ret = cache_level_read(&c, cpu, idx);
			if (ret < 0)
				return -EIO;
			if (ret)
				break;
			for (i = 0; i < *cnt && !cache_level_eq(&c, &caches[i]); i++)
				;
			if (i == *cnt)
				caches[(*cnt)++] = c;
			else
				cache_level_free(&c);
		}
	}
	return 0;
}

/*
 * File format:
 *	u32 version = 1;
 *	u32 cnt;
 *	{ u32 level, line_size, sets, ways; str type, size, shared_cpu_list; }[cnt]
 * sorted by level, discovery order kept within a level (as glibc's qsort
 * keeps it for perf).
 */
int perfdata_feat_write_cache(struct pbuf *out, const struct perfdata_env *env)
{
	__u32 max = perfdata_cpu_max("possible") * MAX_CACHE_LVL, cnt = 0, i, j;
	struct cache_level *c = calloc(max, sizeof(*c)), tmp;
	int err;

	(void)env;
	if (!c)
		return -ENOMEM;
	err = cache_collect(c, &cnt);
	for (i = 1; i < cnt; i++) {		/* stable insertion sort */
		tmp = c[i];
		for (j = i; j > 0 && c[j - 1].level > tmp.level; j--)
			c[j] = c[j - 1];
		c[j] = tmp;
	}
	if (!err) {
		pbuf_put_u32(out, 1);
		pbuf_put_u32(out, cnt);
	}
	for (i = 0; i < cnt && !err; i++) {
		pbuf_put_u32(out, c[i].level);
		pbuf_put_u32(out, c[i].line_size);
		pbuf_put_u32(out, c[i].sets);
		pbuf_put_u32(out, c[i].ways);
		pbuf_put_perf_str(out, c[i].type);
		pbuf_put_perf_str(out, c[i].size);
		pbuf_put_perf_str(out, c[i].map);
	}
	for (i = 0; i < cnt; i++)
		cache_level_free(&c[i]);
	free(c);
	return err ? err : out->err;
}

/* ---- MEM_TOPOLOGY ---- */

struct mem_node {
	__u64 node, nbits;
	__u64 *bits;
};

/* The memoryN blocks of node idx, as a bitmap (perf's memory_node__read). */
static int mem_node_read(struct mem_node *n, unsigned int idx)
{
	char path[128];
	struct dirent *ent;
	unsigned int phys, max = 0;
	DIR *dir;

	snprintf(path, sizeof(path), SYS_NODE "/node%u", idx);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((ent = readdir(dir)))
		if (sscanf(ent->d_name, "memory%u", &phys) == 1 && phys > max)
			max = phys;
	n->node = idx;
	n->nbits = (__u64)max + 1;
	n->bits = max < MAX_MEM_BLOCKS ? calloc((n->nbits + 63) / 64, 8) : NULL;
	if (!n->bits) {
		closedir(dir);
		return max < MAX_MEM_BLOCKS ? -ENOMEM : -E2BIG;
	}
	rewinddir(dir);
	while ((ent = readdir(dir)))
		if (sscanf(ent->d_name, "memory%u", &phys) == 1 && phys <= max)
			n->bits[phys / 64] |= 1ULL << (phys % 64);
	closedir(dir);
	return 0;
}

static int mem_node_cmp(const void *a, const void *b)
{
	const struct mem_node *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

/* Every nodeN of /sys/devices/system/node, sorted by N. */
static int mem_nodes_read(struct mem_node *nodes, __u64 *nr)
{
	struct dirent *ent;
	unsigned int idx;
	int err = 0;
	DIR *dir = opendir(SYS_NODE);

	*nr = 0;
	if (!dir)
		return -errno;
	while (!err && (ent = readdir(dir))) {
		if (sscanf(ent->d_name, "node%u", &idx) != 1)
			continue;
		if (*nr >= MAX_MEM_NODES)
			err = -E2BIG;
		else
			err = mem_node_read(&nodes[(*nr)++], idx);
	}
	closedir(dir);
	if (!err)
		qsort(nodes, (size_t)*nr, sizeof(*nodes), mem_node_cmp);
	return err;
}

/*
 * File format:
 *	u64 version = 1;
 *	u64 block_size;       /sys/devices/system/memory/block_size_bytes (hex)
 *	u64 nr;
 *	{ u64 node; u64 nbits; u64 nbits; u64 bitmap[(nbits + 63) / 64]; }[nr]
 * bit N set = memory block N belongs to the node.
 */
int perfdata_feat_write_mem_topology(struct pbuf *out, const struct perfdata_env *env)
{
	struct mem_node *nodes;
	char buf[SYS_BUF];
	__u64 nr = 0, i;
	int err;

	(void)env;
	err = sys_line(buf, "/sys/devices/system/memory/block_size_bytes");
	if (err)
		return err;
	nodes = calloc(MAX_MEM_NODES, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	err = mem_nodes_read(nodes, &nr);
	if (!err) {
		pbuf_put_u64(out, 1);
		pbuf_put_u64(out, strtoull(buf, NULL, 16));
		pbuf_put_u64(out, nr);
	}
	for (i = 0; i < nr && !err; i++) {
		pbuf_put_u64(out, nodes[i].node);
		pbuf_put_u64(out, nodes[i].nbits);
		pbuf_put_u64(out, nodes[i].nbits);
		pbuf_put(out, nodes[i].bits, (size_t)(nodes[i].nbits + 63) / 64 * 8);
	}
	for (i = 0; i < nr; i++)
		free(nodes[i].bits);
	free(nodes);
	return err ? err : out->err;
}
