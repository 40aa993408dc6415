// SPDX-License-Identifier: GPL-2.0
#include "record/synth.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "perfdata/record.h"
#include "record/dsos.h"
#include "util/log.h"

struct ksym_range {
	__u64 text, etext, first_module;
};

/* One line of /proc/kallsyms, "ADDR T NAME[\t[MODULE]]": is it symbol
 * name?  Then *addr is its address. */
static bool ksym_is(const char *line, size_t len, const char *name, __u64 *addr)
{
	size_t n = strlen(name);
	char *end;

	/* the name starts after the address, a space, the type and a space */
	const char *sp = memchr(line, ' ', len);

	if (!sp || (size_t)(sp - line) + 3 + n > len || sp[2] != ' ' ||
	    memcmp(sp + 3, name, n) || (sp + 3 + n < line + len && sp[3 + n] != '\t'))
		return false;
	*addr = strtoull(line, &end, 16);
	return end == sp;
}

/*
 * The size of the kernel's text from /proc/iomem ("Kernel code": on x86
 * the physical range of _text.._etext; arm64 ends it elsewhere), or 0.
 * Much cheaper than reading /proc/kallsyms down to _etext, which has the
 * kernel format 95% of that file.
 */
static __u64 iomem_kernel_code(void)
{
#if defined(__x86_64__) || defined(__i386__)
	FILE *f = fopen("/proc/iomem", "re");
	char line[256];
	__u64 size = 0;

	if (!f)
		return 0;
	while (!size && fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char *p = line, *q;

		if (!strstr(line, ": Kernel code"))
			continue;
		while (*p == ' ')
			p++;
		start = strtoull(p, &q, 16);
		if (*q != '-')
			break;
		end = strtoull(q + 1, &q, 16);
		if (end > start)	/* without CAP_SYS_ADMIN both read 0 */
			size = end - start + 1;
	}
	fclose(f);
	return size;
#else
	return 0;
#endif
}

/*
 * _text (or _stext) and _etext from /proc/kallsyms, read by whole buffers
 * with names compared in place (sscanf per line took half of precord's
 * start).  _text is among the first lines; _etext is after every kernel
 * text symbol, so it comes from /proc/iomem where that has it.
 */
static void kallsyms_range(struct ksym_range *r)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	static char buf[1 << 16];
	size_t have = 0;
	ssize_t got;

	memset(r, 0, sizeof(*r));
	if (fd < 0)
		return;
	while (!(r->text && r->etext) && (got = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		char *p = buf, *end = buf + have + (size_t)got, *nl;

		while (!(r->text && r->etext) && (nl = memchr(p, '\n', (size_t)(end - p)))) {
			size_t len = (size_t)(nl - p);
			const char *sp = memchr(p, ' ', len);
			__u64 a;

			if (sp && sp + 3 < nl && sp[3] == '_') {	/* only _*text matter */
				if (ksym_is(p, len, "_text", &a)) {	/* one such line */
					__u64 size = iomem_kernel_code();

					r->text = a;
					if (size)
						r->etext = a + size;
				} else if (!r->text && ksym_is(p, len, "_stext", &a))
					r->text = a;
				else if (ksym_is(p, len, "_etext", &a))
					r->etext = a;
			}
			p = nl + 1;
		}
		have = (size_t)(end - p);
		if (have == sizeof(buf))	/* a line longer than the buffer */
			have = 0;
		memmove(buf, p, have);
	}
	close(fd);
}

int synth_kernel(struct pbuf *out, __u64 id_type)
{
	struct ksym_range r;
	FILE *f;
	char line[512], name[128];
	unsigned long long size, addr;
	int err;

	kallsyms_range(&r);
	if (!r.text) {
		pr_warn("cannot read kernel symbol addresses from /proc/kallsyms (kptr_restrict?); kernel frames will not resolve");
		return 0;
	}
	err = perfdata_encode_kernel_mmap(out, id_type, r.text,
					  r.etext > r.text ? r.etext - r.text : ~0ULL - r.text,
					  r.text, "[kernel.kallsyms]_text", NULL);
	if (err)
		return err;
	f = fopen("/proc/modules", "r");
	if (!f)
		return 0;
	/* name size refcount deps state address */
	while (fgets(line, sizeof(line), f)) {
		char mod[140];

		if (sscanf(line, "%127s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		snprintf(mod, sizeof(mod), "[%s]", name);
		err = perfdata_encode_kernel_mmap(out, id_type, addr, size, 0, mod, NULL);
		if (err)
			break;
	}
	fclose(f);
	return err;
}

static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -errno;
	buf[r] = 0;
	return (int)r;
}

static long status_field(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

int proc_tgid(__u32 tid)
{
	char path[64], status[4096];
	long tgid;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (read_small(path, status, sizeof(status)) < 0)
		return -ESRCH;
	tgid = status_field(status, "\nTgid:");
	return tgid > 0 ? (int)tgid : -ESRCH;
}

static void thread_comm(__u32 pid, __u32 tid, char *comm, size_t n)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	r = read_small(path, comm, n);
	if (r <= 0)
		snprintf(comm, n, ":%u", tid);
	else
		comm[strcspn(comm, "\n")] = 0;
}

void proc_comm(__u32 pid, char *comm, size_t n)
{
	thread_comm(pid, pid, comm, n);
}

/* One line of /proc/PID/maps: "start-end perms offset maj:min ino   path". */
static int parse_maps_line(char *line, struct perfdata_mmap2 *m, char **path)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
		   &maj, &min, &ino, &n) < 7 || !n || end <= start)
		return -EINVAL;
	*path = line + n;
	(*path)[strcspn(*path, "\n")] = 0;
	m->start = start;
	m->len = end - start;
	m->pgoff = off;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	return perms[2] == 'x' ? 0 : -ENOENT;
}

/* data_maps: readable non-executable mappings too, misc MMAP_DATA, as
 * perf record with mmap_data (--call-graph dwarf: perf's unwinder reads
 * .eh_frame_hdr through them). */
static int synth_maps(struct pbuf *out, __u64 id_type, struct dso_table *dt, __u32 pid,
		      bool data_maps)
{
	char path[64], line[4608];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -ESRCH;
	while (!err && fgets(line, sizeof(line), f)) {
		struct perfdata_mmap2 m = { .misc = PERF_RECORD_MISC_USER, .pid = pid, .tid = pid };
		char *name;
		int not_exec;

		if (!strchr(line, '\n'))	/* over-long line: skip its rest */
			while (fgets(line, sizeof(line), f) && !strchr(line, '\n'))
				;
		not_exec = parse_maps_line(line, &m, &name);
		if (not_exec == -ENOENT && data_maps && (m.prot & PROT_READ))
			m.misc |= PERF_RECORD_MISC_MMAP_DATA;
		else if (not_exec)
			continue;
		if (!*name)
			name = "//anon";
		m.filename = name;
		if (name[0] == '/' && name[1] != '/')
			dso_table__mmap(dt, pid, m.start, m.len, name,
					&(struct dso_file_id){ .maj = m.maj, .min = m.min, .ino = m.ino,
							       .pgoff = m.pgoff },
					m.build_id, &m.build_id_size);
		err = perfdata_encode_mmap2(out, id_type, &m, NULL);
	}
	fclose(f);
	return err;
}

int synth_process(struct pbuf *out, __u64 id_type, struct dso_table *dt, __u32 pid,
		  bool fork, bool data_maps)
{
	char path[64], status[4096], comm[32];
	struct dirent *de;
	long ppid;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (read_small(path, status, sizeof(status)) < 0)
		return -ESRCH;
	ppid = status_field(status, "\nPPid:");
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while (!err && (de = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid)
			continue;
		if (fork) {
			__u32 p = tid == pid ? (__u32)(ppid < 0 ? 0 : ppid) : pid;

			err = perfdata_encode_task(out, id_type, PERF_RECORD_FORK, pid, p,
						   (__u32)tid, tid == pid ? p : pid, 0, 0, NULL);
		}
		thread_comm(pid, (__u32)tid, comm, sizeof(comm));
		if (!err)
			err = perfdata_encode_comm(out, id_type, pid, (__u32)tid, comm, false,
						   NULL);
	}
	closedir(d);
	if (!err)
		err = synth_maps(out, id_type, dt, pid, data_maps);
	return err == -ESRCH ? 0 : err;
}

int synth_all(struct pbuf *out, __u64 id_type, struct dso_table *dt, bool data_maps)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid)
			continue;
		err = synth_process(out, id_type, dt, (__u32)pid, true, data_maps);
		if (err == -ESRCH)	/* gone since readdir: nothing to say */
			err = 0;
	}
	closedir(d);
	return err;
}
