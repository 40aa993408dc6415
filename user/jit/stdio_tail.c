// SPDX-License-Identifier: GPL-2.0
/*
 * The unwritten tail of a glibc stdio stream of another process (see
 * stdio_tail.h).  Steps: the process's descriptor of the file (by device
 * and inode, /proc/PID/fd), its libc (the mapping at file offset 0 of a
 * libc.so.6, opened through /proc/PID/map_files), _IO_list_all in that
 * libc's .dynsym (cached per libc file), the list walked for the FILE of
 * that descriptor, then its buffer read and the FILE read again: the same
 * buffer, no byte taken back, and the file no longer than before, or
 * -EAGAIN.
 */
#include "jit/stdio_tail.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "elf/headers.h"
#include "util/array.h"
#include "util/io.h"

/* glibc's struct _IO_FILE on LP64 (bits/types/struct_FILE.h). */
#define FILE_FLAGS		0
#define FILE_WRITE_BASE		32
#define FILE_WRITE_PTR		40
#define FILE_CHAIN		104
#define FILE_FILENO		112
#define FILE_BYTES		120
#define IO_MAGIC_MASK		0xFFFF0000u
#define IO_MAGIC		0xFBAD0000u

/* A process's descriptors looked at, and the size of a .dynsym or
 * .dynstr read (Debian 12's libc: 59 KB and 23 KB). */
#define MAX_FDS			65536
#define MAX_DYN_BYTES		(8u << 20)
#define MAPS_MAX_BYTES		(16u << 20)
#define CACHE_SIZE		8

struct libc_ent {
	__u64 dev, ino, size, mtime;
	__u64 list_off;		/* _IO_list_all - the load bias; 0: none */
	__u64 load_vaddr;	/* p_vaddr (page) of the PT_LOAD at offset 0 */
};

struct stdio_tail {
	struct libc_ent cache[CACHE_SIZE];
	unsigned int next;
};

struct stdio_tail *stdio_tail__new(void)
{
	return calloc(1, sizeof(struct stdio_tail));
}

void stdio_tail__free(struct stdio_tail *t)
{
	free(t);
}

static int read_mem(__u32 pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The descriptor number pid has the file (dev, ino) open as, or -ENOENT. */
static int target_fd(__u32 pid, dev_t dev, ino_t ino)
{
	char path[64];
	struct dirent *de;
	unsigned int seen = 0;
	int fd = -ENOENT;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (fd < 0 && seen++ < MAX_FDS && (de = readdir(d))) {
		struct stat st;
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || v < 0 || v > 0x7fffffff)
			continue;
		/* stat through the descriptor's link: the file's identity,
		 * nothing opened */
		if (!fstatat(dirfd(d), de->d_name, &st, 0) && st.st_dev == dev && st.st_ino == ino)
			fd = (int)v;
	}
	closedir(d);
	return fd;
}

static bool is_libc_path(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && !strcmp(b + 1, "libc.so.6");
}

/* The start of pid's first mapping of a libc.so.6 at file offset 0. */
static int find_libc(__u32 pid, __u64 *start, __u64 *end)
{
	char path[64], *line = NULL;
	size_t cap = 0, bytes = 0;
	ssize_t n;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (err == -ENOENT && bytes < MAPS_MAX_BYTES && (n = getline(&line, &cap, f)) > 0) {
		unsigned long long s, e, off;
		int name_at = 0;

		bytes += (size_t)n;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &off, &name_at) != 3 ||
		    !name_at)
			continue;
		if (off == 0 && is_libc_path(line + name_at)) {
			*start = s;
			*end = e;
			err = 0;
		}
	}
	free(line);
	fclose(f);
	return err;
}

/* Section header i of a 64-bit file whose headers elf_headers_check_fd
 * accepted. */
static int read_shdr(int fd, const Elf64_Ehdr *eh, size_t i, Elf64_Shdr *sh)
{
	ssize_t n = pread_full(fd, sh, sizeof(*sh), (off_t)(eh->e_shoff + i * sizeof(*sh)));

	return n == (ssize_t)sizeof(*sh) ? 0 : -ENOEXEC;
}

/* size bytes at off of a file of file_size bytes, bounded. */
static void *read_section(int fd, __u64 off, __u64 size, __u64 file_size)
{
	void *p;

	if (!size || size > MAX_DYN_BYTES || off > file_size || size > file_size - off)
		return NULL;
	p = malloc(size);
	if (p && pread_full(fd, p, size, (off_t)off) != (ssize_t)size) {
		free(p);
		p = NULL;
	}
	return p;
}

static int dynsym_lookup(int fd, const Elf64_Ehdr *eh, __u64 file_size, const char *name,
			 __u64 *value)
{
	Elf64_Shdr sym, str;
	size_t nsec = eh->e_shnum;
	int err = -ENOENT;

	for (size_t i = 1; i < nsec && err == -ENOENT; i++) {
		Elf64_Sym *syms;
		char *strs;

		if (read_shdr(fd, eh, i, &sym))
			return -ENOEXEC;
		if (sym.sh_type != SHT_DYNSYM || sym.sh_entsize != sizeof(Elf64_Sym) ||
		    sym.sh_link >= nsec || read_shdr(fd, eh, sym.sh_link, &str))
			continue;
		syms = read_section(fd, sym.sh_offset, sym.sh_size, file_size);
		strs = read_section(fd, str.sh_offset, str.sh_size, file_size);
		for (size_t k = 0; syms && strs && k < sym.sh_size / sizeof(*syms); k++) {
			__u32 at = syms[k].st_name;

			if (at < str.sh_size && syms[k].st_shndx != SHN_UNDEF &&
			    strnlen(strs + at, str.sh_size - at) == strlen(name) &&
			    !memcmp(strs + at, name, strlen(name))) {
				*value = syms[k].st_value;
				err = 0;
				break;
			}
		}
		free(syms);
		free(strs);
	}
	return err;
}

/* The p_vaddr (page) of the PT_LOAD that maps file offset 0. */
static int load_vaddr(int fd, const Elf64_Ehdr *eh, __u64 *vaddr)
{
	for (size_t i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread_full(fd, &ph, sizeof(ph), (off_t)(eh->e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return -ENOEXEC;
		if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*vaddr = ph.p_vaddr & ~0xfffULL;
			return 0;
		}
	}
	return -ENOENT;
}

/* Fill e (identity already set) from the libc open on fd. */
static void libc_read(int fd, struct libc_ent *e)
{
	Elf64_Ehdr eh;

	if (elf_headers_check_fd(fd) ||
	    pread_full(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_phentsize != sizeof(Elf64_Phdr))
		return;
	if (load_vaddr(fd, &eh, &e->load_vaddr) ||
	    dynsym_lookup(fd, &eh, e->size, "_IO_list_all", &e->list_off))
		e->list_off = 0;
}

/* The address of _IO_list_all in pid, or 0. */
static __u64 list_head(struct stdio_tail *t, __u32 pid)
{
	__u64 start = 0, end = 0;
	struct libc_ent *e = NULL;
	struct stat st;
	char path[96];
	int fd;

	if (find_libc(pid, &start, &end))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)start, (unsigned long long)end);
	fd = open_regular_file(path, -1);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	for (unsigned int i = 0; i < CACHE_SIZE && !e; i++) {
		struct libc_ent *c = &t->cache[i];

		if (c->ino && c->dev == (__u64)st.st_dev && c->ino == (__u64)st.st_ino &&
		    c->size == (__u64)st.st_size && c->mtime == (__u64)st.st_mtime)
			e = c;
	}
	if (!e) {
		e = &t->cache[t->next++ % CACHE_SIZE];
		*e = (struct libc_ent){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
					.mtime = (__u64)st.st_mtime };
		libc_read(fd, e);
	}
	close(fd);
	if (!e->list_off || e->list_off < e->load_vaddr)
		return 0;
	return start + (e->list_off - e->load_vaddr);
}

struct file_view {
	__u32 flags;
	int fileno;
	__u64 write_base, write_ptr, chain;
};

static int read_file_struct(__u32 pid, __u64 addr, struct file_view *v)
{
	__u8 b[FILE_BYTES];
	int err = read_mem(pid, addr, b, sizeof(b));

	if (err)
		return err;
	memcpy(&v->flags, b + FILE_FLAGS, 4);
	memcpy(&v->write_base, b + FILE_WRITE_BASE, 8);
	memcpy(&v->write_ptr, b + FILE_WRITE_PTR, 8);
	memcpy(&v->chain, b + FILE_CHAIN, 8);
	memcpy(&v->fileno, b + FILE_FILENO, 4);
	return 0;
}

/* The address of pid's FILE for descriptor tfd, or 0. */
static __u64 find_stream(__u32 pid, __u64 head, int tfd)
{
	__u64 fp;

	if (read_mem(pid, head, &fp, sizeof(fp)))
		return 0;
	for (unsigned int i = 0; fp && i < STDIO_TAIL_MAX_FILES; i++) {
		struct file_view v;

		if (read_file_struct(pid, fp, &v) || (v.flags & IO_MAGIC_MASK) != IO_MAGIC)
			return 0;
		if (v.fileno == tfd)
			return fp;
		fp = v.chain;
	}
	return 0;
}

int stdio_tail__peek(struct stdio_tail *t, __u32 pid, int fd, struct pbuf *out, __u64 *at)
{
	struct file_view v, again;
	struct stat st, st2;
	__u64 head, fp, n;
	int tfd, err;

	pbuf_reset(out);
	if (fstat(fd, &st))
		return -errno;
	tfd = target_fd(pid, st.st_dev, st.st_ino);
	if (tfd < 0)
		return tfd == -ENOENT ? 0 : tfd;
	head = list_head(t, pid);
	fp = head ? find_stream(pid, head, tfd) : 0;
	if (!fp)
		return 0;
	err = read_file_struct(pid, fp, &v);
	if (err)
		return err;
	if (v.write_ptr <= v.write_base)
		return 0;
	n = v.write_ptr - v.write_base;
	if (n > STDIO_TAIL_MAX)
		return -E2BIG;
	if (pbuf_reserve(out, (size_t)n))
		return -ENOMEM;
	err = read_mem(pid, v.write_base, out->data, (size_t)n);
	if (err)
		return err;
	/* A flush between the reads moves the bytes to the file: the
	 * same buffer, as long, and the same file size, or nothing. */
	if (read_file_struct(pid, fp, &again) || again.write_base != v.write_base ||
	    again.write_ptr < v.write_ptr || fstat(fd, &st2) || st2.st_size != st.st_size)
		return -EAGAIN;
	out->len = (size_t)n;
	*at = (__u64)st.st_size;
	return 0;
}
