// SPDX-License-Identifier: GPL-2.0
/*
 * ELF build-ids (user/elf/buildid.c) and perf's build-id cache
 * (user/perfdata/buildid_cache.c): hand-made ELF files with known notes,
 * hostile ELF files, the cache layout perf 6.1 uses, idempotence, and
 * planted symlinks that must not be followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/headers.h"
#include "perfdata/buildid_cache.h"
#include "record/dsos.h"
#include "util/log.h"

#include "harness.h"

/* ---- a tiny ELF writer (any class, any byte order) ---- */

struct img {
	unsigned char b[8192];
	size_t len;
	bool be;
};

static void put(struct img *m, size_t off, uint64_t v, int size)
{
	int i;

	for (i = 0; i < size; i++)
		m->b[off + i] = (unsigned char)(v >> (8 * (m->be ? size - 1 - i : i)));
}

/* Append a note at m->len, aligned to align. */
static void note_add(struct img *m, uint32_t namesz, const char *name, uint32_t type,
		     const void *desc, uint32_t descsz, size_t align)
{
	size_t o = m->len;

	put(m, o, namesz, 4);
	put(m, o + 4, descsz, 4);
	put(m, o + 8, type, 4);
	memcpy(m->b + o + 12, name, strlen(name) + 1);
	o = (o + 12 + namesz + align - 1) & ~(align - 1);
	if (desc)
		memcpy(m->b + o, desc, descsz);
	m->len = (o + descsz + align - 1) & ~(align - 1);
}

struct elf_spec {
	bool elf32, be, phdr, shdr;
	size_t align;		/* note alignment: 4 or 8 */
};

/*
 * [ehdr][phdr][notes][shdr null][shdr note].  The caller adds notes with
 * note_add() between elf_begin_img() and elf_finish_img().
 */
static void elf_begin_img(struct img *m, const struct elf_spec *s)
{
	memset(m, 0, sizeof(*m));
	m->be = s->be;
	m->len = s->elf32 ? 52 + 32 : 64 + 56;
}

static void elf_finish_img(struct img *m, const struct elf_spec *s)
{
	size_t eh = s->elf32 ? 52 : 64, ph = s->elf32 ? 32 : 56, sh = s->elf32 ? 40 : 64;
	size_t notes = eh + ph, nlen = m->len - notes, shoff = (m->len + 7) & ~7ul;

	memcpy(m->b, "\177ELF", 4);
	m->b[4] = s->elf32 ? 1 : 2;
	m->b[5] = s->be ? 2 : 1;
	m->b[6] = 1;
	put(m, 16, 3, 2);			/* ET_DYN */
	put(m, 18, s->elf32 ? 3 : 62, 2);	/* EM_386 / EM_X86_64 */
	put(m, 20, 1, 4);
	if (s->elf32) {
		put(m, 28, s->phdr ? eh : 0, 4);
		put(m, 32, s->shdr ? shoff : 0, 4);
		put(m, 40, eh, 2);
		put(m, 42, ph, 2);
		put(m, 44, s->phdr, 2);
		put(m, 46, sh, 2);
		put(m, 48, s->shdr ? 2 : 0, 2);
		put(m, eh, 4, 4);			/* PT_NOTE */
		put(m, eh + 4, notes, 4);
		put(m, eh + 16, nlen, 4);
		put(m, eh + 28, s->align, 4);
		put(m, shoff + sh + 4, 7, 4);		/* SHT_NOTE */
		put(m, shoff + sh + 16, notes, 4);
		put(m, shoff + sh + 20, nlen, 4);
		put(m, shoff + sh + 32, s->align, 4);
	} else {
		put(m, 32, s->phdr ? eh : 0, 8);
		put(m, 40, s->shdr ? shoff : 0, 8);
		put(m, 52, eh, 2);
		put(m, 54, ph, 2);
		put(m, 56, s->phdr, 2);
		put(m, 58, sh, 2);
		put(m, 60, s->shdr ? 2 : 0, 2);
		put(m, eh, 4, 4);
		put(m, eh + 8, notes, 8);
		put(m, eh + 32, nlen, 8);
		put(m, eh + 48, s->align, 8);
		put(m, shoff + sh + 4, 7, 4);
		put(m, shoff + sh + 24, notes, 8);
		put(m, shoff + sh + 32, nlen, 8);
		put(m, shoff + sh + 48, s->align, 8);
	}
	m->len = s->shdr ? shoff + 2 * sh : m->len;
}

static const unsigned char known_id[32] = {
	0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
	0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
	0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
};

static char tmpdir[] = "/tmp/precord-test-buildid.XXXXXX";

#define PATHSZ 1024	/* every path in this test is short */

static int write_tmp(const char *name, const void *data, size_t len, char *path)
{
	int fd;

	snprintf(path, PATHSZ, "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		return -1;
	return fd;
}

/* Build-id of an image written to a temporary file. */
static int id_of(const struct img *m, __u8 id[20])
{
	char path[PATHSZ];
	int fd = write_tmp("elf", m->b, m->len, path), ret;

	if (fd < 0)
		return -999;
	ret = elf_build_id_fd(fd, id);
	close(fd);
	return ret;
}

static int id_of_spec(const struct elf_spec *s, uint32_t descsz, __u8 id[20])
{
	struct img m;

	elf_begin_img(&m, s);
	note_add(&m, 4, "GNU", 1, "\0\0\0\0\3\0\0\0\2\0\0\0\0\0\0\0", 16, s->align);
	note_add(&m, 4, "GNU", 3, known_id, descsz, s->align);
	elf_finish_img(&m, s);
	return id_of(&m, id);
}

TEST(elf_layouts)
{
	static const struct elf_spec specs[] = {
		{ .phdr = true, .shdr = true, .align = 4 },
		{ .phdr = true, .align = 4 },			/* no sections */
		{ .shdr = true, .align = 4 },			/* no segments */
		{ .phdr = true, .shdr = true, .align = 8 },	/* 8-aligned notes */
		{ .elf32 = true, .phdr = true, .shdr = true, .align = 4 },
		{ .be = true, .phdr = true, .shdr = true, .align = 4 },
		{ .be = true, .elf32 = true, .shdr = true, .align = 4 },
	};
	__u8 id[20];
	size_t i;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		memset(id, 0, sizeof(id));
		CHECK_EQ(id_of_spec(&specs[i], 20, id), 20);
		CHECK(!memcmp(id, known_id, 20));
	}
	/* 16-byte (MD5/UUID) ids; > 20 bytes cut to 20, as perf does. */
	CHECK_EQ(id_of_spec(&specs[0], 16, id), 16);
	CHECK(!memcmp(id, known_id, 16));
	CHECK_EQ(id[16], 0);
	CHECK_EQ(id_of_spec(&specs[0], 32, id), 20);
	CHECK(!memcmp(id, known_id, 20));
	CHECK_EQ(id_of_spec(&specs[0], 0, id), -ENOENT);
}

TEST(elf_no_or_wrong_note)
{
	struct elf_spec s = { .phdr = true, .shdr = true, .align = 4 };
	struct img m;
	__u8 id[20];

	elf_begin_img(&m, &s);
	note_add(&m, 4, "GNU", 1, known_id, 16, 4);	/* ABI tag only */
	note_add(&m, 4, "Go\0", 3, known_id, 20, 4);	/* wrong name */
	note_add(&m, 3, "GN", 3, known_id, 20, 4);	/* wrong namesz */
	elf_finish_img(&m, &s);
	CHECK_EQ(id_of(&m, id), -ENOENT);
}

TEST(elf_hostile)
{
	struct elf_spec s = { .phdr = true, .shdr = true, .align = 4 };
	size_t eh = 64, notes = 64 + 56;
	struct img m, bad;
	char path[PATHSZ];
	__u8 id[20];
	int fd;

	elf_begin_img(&m, &s);
	note_add(&m, 4, "GNU", 3, known_id, 20, 4);
	elf_finish_img(&m, &s);
	CHECK_EQ(id_of(&m, id), 20);

	/* not ELF, empty, truncated header */
	memcpy(&bad, &m, sizeof(m));
	memcpy(bad.b, "#!/bin/sh\n", 10);
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	bad.len = 0;
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	memcpy(&bad, &m, sizeof(m));
	bad.len = 30;
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	/* truncated in the middle of the note */
	bad.len = notes + 20;
	CHECK(id_of(&bad, id) < 0);
	/* bad EI_DATA */
	memcpy(&bad, &m, sizeof(m));
	bad.b[5] = 7;
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);

	/* namesz / descsz that overflow the note area (and size_t sums) */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, notes, 0xffffffff, 4);
	CHECK_EQ(id_of(&bad, id), -ENOENT);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, notes + 4, 0xfffffffc, 4);
	CHECK_EQ(id_of(&bad, id), -ENOENT);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, notes + 4, 21, 4);		/* descsz > 20 running past the end */
	CHECK_EQ(id_of(&bad, id), -ENOENT);
	/* segment / section pointing past the end of the file */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, eh + 8, 0xfffffffffff0ull, 8);
	put(&bad, 40, 0, 8);			/* no sections to fall back on */
	put(&bad, 60, 0, 2);
	CHECK_EQ(id_of(&bad, id), -ENOENT);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, eh + 32, 0x7fffffffffffffffull, 8);
	put(&bad, 40, 0, 8);
	put(&bad, 60, 0, 2);
	CHECK_EQ(id_of(&bad, id), -ENOENT);
	/* program header table far outside the file, many entries */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 32, 0xffffffffff00ull, 8);
	put(&bad, 56, 0xffff, 2);
	CHECK(id_of(&bad, id) == 20 || id_of(&bad, id) < 0);	/* no crash */
	/* section headers past the end */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 40, 0xfffffffffff0ull, 8);
	put(&bad, 32, 0, 8);
	put(&bad, 56, 0, 2);
	CHECK(id_of(&bad, id) < 0);

	/* the fd's offset is not used or moved */
	fd = write_tmp("off", m.b, m.len, path);
	CHECK(fd >= 0);
	lseek(fd, 5, SEEK_SET);
	CHECK_EQ(elf_build_id_fd(fd, id), 20);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 5);
	close(fd);
	CHECK_EQ(elf_build_id_path(path, id), 20);
	CHECK_EQ(elf_build_id_path("/nonexistent/precord", id), -ENOENT);
	CHECK(elf_build_id_path(tmpdir, id) < 0);
	CHECK_EQ(elf_build_id_mem(m.b, m.len, id), 20);
	CHECK_EQ(elf_build_id_mem(m.b, 10, id), -ENOEXEC);
}

static double now_s(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* Section and segment counts checked against the file before libelf
 * allocates from them: a sparse file claiming 4M sections in section 0
 * cost 1.1 GB and 12.8 s. */
TEST(elf_counts)
{
	struct elf_spec s = { .phdr = true, .shdr = true, .align = 4 };
	size_t shoff;
	struct img m, bad;
	char path[PATHSZ];
	__u8 id[20];
	double t0;
	int fd;

	elf_begin_img(&m, &s);
	note_add(&m, 4, "GNU", 3, known_id, 20, 4);
	elf_finish_img(&m, &s);
	shoff = m.len - 2 * 64;
	CHECK_EQ(elf_headers_check_mem(m.b, m.len), 0);

	/* extended section count (e_shnum 0, section 0's sh_size) */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 60, 0, 2);
	put(&bad, shoff + 32, 4u << 20, 8);
	CHECK_EQ(elf_headers_check_mem(bad.b, bad.len), -E2BIG);
	CHECK_EQ(id_of(&bad, id), -E2BIG);
	put(&bad, shoff + 32, 2, 8);			/* 2: as many as there are */
	CHECK_EQ(elf_headers_check_mem(bad.b, bad.len), 0);
	CHECK_EQ(id_of(&bad, id), 20);
	put(&bad, shoff + 32, 3, 8);			/* one past the end */
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	/* the same 4M sections in a sparse file big enough to hold them:
	 * refused at once, not after libelf's gigabyte */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 60, 0, 2);
	put(&bad, shoff + 32, 4u << 20, 8);
	fd = write_tmp("sparse", bad.b, bad.len, path);
	CHECK(fd >= 0 && !ftruncate(fd, (off_t)shoff + (64l << 22)));
	t0 = now_s();
	CHECK_EQ(elf_build_id_fd(fd, id), -E2BIG);
	CHECK(now_s() - t0 < 0.1);
	close(fd);
	/* extended segment count (PN_XNUM, section 0's sh_info) */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 56, 0xffff, 2);
	put(&bad, shoff + 44, 1, 4);
	CHECK_EQ(elf_headers_check_mem(bad.b, bad.len), 0);
	CHECK_EQ(id_of(&bad, id), 20);
	put(&bad, shoff + 44, 5000, 4);
	CHECK_EQ(id_of(&bad, id), -E2BIG);
	put(&bad, shoff + 44, 60, 4);			/* past the end */
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	/* plain counts: tables past the end, wrong entry sizes */
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 60, 300, 2);
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 56, 300, 2);
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 58, 40, 2);
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 54, 32, 2);
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 40, 0, 8);				/* sections but no table */
	CHECK_EQ(id_of(&bad, id), -ENOEXEC);
	memcpy(&bad, &m, sizeof(m));
	put(&bad, 40, ~0ull - 8, 8);			/* offset + size overflows */
	CHECK_EQ(elf_headers_check_mem(bad.b, bad.len), -ENOEXEC);
	memcpy(&bad, &m, sizeof(m));
	bad.b[4] = 3;					/* no such class */
	CHECK_EQ(elf_headers_check_mem(bad.b, bad.len), -ENOEXEC);
	CHECK_EQ(elf_headers_check_mem(m.b, 63), -ENOEXEC);
	CHECK_EQ(elf_headers_check_mem(NULL, 0), -ENOEXEC);
	/* 32-bit and big-endian layouts pass */
	s = (struct elf_spec){ .elf32 = true, .be = true, .phdr = true, .shdr = true, .align = 4 };
	elf_begin_img(&m, &s);
	note_add(&m, 4, "GNU", 3, known_id, 20, 4);
	elf_finish_img(&m, &s);
	CHECK_EQ(elf_headers_check_mem(m.b, m.len), 0);
	put(&m, 48, 0, 2);
	put(&m, m.len - 2 * 40 + 20, 1u << 20, 4);
	CHECK_EQ(elf_headers_check_mem(m.b, m.len), -E2BIG);
}

/* readelf -n as an independent reader of a real binary. */
TEST(elf_real_binary)
{
	char line[512], hex[BUILD_ID_HEX_SIZE], *p;
	FILE *f = popen("readelf -n /bin/true 2>/dev/null", "r");
	bool seen = false;
	__u8 id[20];
	int n = elf_build_id_path("/bin/true", id);

	CHECK(n > 0);
	build_id_hex(id, n, hex);
	while (f && fgets(line, sizeof(line), f)) {
		p = strstr(line, "Build ID: ");
		if (!p)
			continue;
		p += 10;
		p[strcspn(p, "\n")] = '\0';
		CHECK_STR(hex, p);
		seen = true;
	}
	if (f)
		pclose(f);
	if (!seen)
		fprintf(stderr, "  (readelf not available: /bin/true id not cross-checked)\n");
}

TEST(kernel_and_vdso)
{
	char hex[BUILD_ID_HEX_SIZE], line[256], path[PATHSZ];
	const void *img = NULL;
	size_t len = 0;
	__u8 id[20], id2[20];
	int n, fd;
	FILE *f;

	n = kernel_build_id(id);
	if (access("/sys/kernel/notes", R_OK) == 0) {
		CHECK(n > 0);
		build_id_hex(id, n, hex);
		/* perf as the independent oracle when it is installed */
		f = popen("perf buildid-list -k 2>/dev/null", "r");
		if (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			CHECK_STR(hex, line);
		}
		if (f)
			pclose(f);
	}
	n = vdso_build_id(id, &img, &len);
	CHECK(n > 0);
	CHECK(img && len >= 4096 && len % 4096 == 0);
	if (n > 0 && img) {
		CHECK(!memcmp(img, "\177ELF", 4));
		fd = write_tmp("vdso", img, len, path);
		CHECK_EQ(elf_build_id_fd(fd, id2), n);
		CHECK(!memcmp(id, id2, (size_t)n));
		close(fd);
	}
}

TEST(hex)
{
	char out[BUILD_ID_HEX_SIZE];

	build_id_hex(known_id, 20, out);
	CHECK_STR(out, "deadbeef0123456789abcdef1032547698badcfe");
	build_id_hex(known_id, 2, out);
	CHECK_STR(out, "dead");
	build_id_hex(known_id, 25, out);
	CHECK_EQ(strlen(out), 40);
	build_id_hex(known_id, -1, out);
	CHECK_STR(out, "");
}

/* ---- build-id cache ---- */

static bool is_symlink_to(const char *path, const char *target)
{
	char buf[4096];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	if (strcmp(buf, target))
		fprintf(stderr, "  %s -> %s, want %s\n", path, buf, target);
	return !strcmp(buf, target);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? (mode_t)-1 : st.st_mode;
}

static bool file_equals(const char *path, const void *data, size_t len)
{
	static unsigned char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)len && !memcmp(buf, data, len);
}

static int count_entries(const char *dir)
{
	char cmd[PATHSZ + 64];
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	f = popen(cmd, "r");
	if (f && fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f)
		pclose(f);
	return n;
}

TEST(cache_layout)
{
	struct elf_spec s = { .phdr = true, .shdr = true, .align = 4 };
	char cache[256], src[PATHSZ], p[PATHSZ], hex[BUILD_ID_HEX_SIZE];
	static const char ksyms[] = "ffffffff81000000 T _text\n";
	const void *vimg;
	struct stat st1, st2;
	struct img m;
	size_t vlen;
	__u8 id[20], vid[20];
	int fd, n;

	snprintf(cache, sizeof(cache), "%s/home/.debug", tmpdir);	/* created */
	elf_begin_img(&m, &s);
	note_add(&m, 4, "GNU", 3, known_id, 20, 4);
	elf_finish_img(&m, &s);
	fd = write_tmp("libfoo.so", m.b, m.len, src);
	CHECK_EQ(elf_build_id_fd(fd, id), 20);
	build_id_hex(id, 20, hex);
	lseek(fd, 17, SEEK_SET);		/* the copy starts at 0 anyway */

	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/lib//test/libfoo.so", id, 20, fd, 0), 0);
	snprintf(p, sizeof(p), "%s/usr/lib/test/libfoo.so/%s/elf", cache, hex);
	CHECK(file_equals(p, m.b, m.len));
	CHECK_EQ(mode_of(p), S_IFREG | 0644);		/* the source's, not wider */
	CHECK(!stat(p, &st1));
	snprintf(p, sizeof(p), "%s/usr/lib/test/libfoo.so/%s", cache, hex);
	CHECK_EQ(mode_of(p), S_IFDIR | 0700);		/* perf: 0755 */
	CHECK_EQ(mode_of(cache), S_IFDIR | 0700);
	snprintf(p, sizeof(p), "%s/usr", cache);
	CHECK_EQ(mode_of(p), S_IFDIR | 0700);
	snprintf(p, sizeof(p), "%s/.build-id/de", cache);
	CHECK_EQ(mode_of(p), S_IFDIR | 0700);
	snprintf(p, sizeof(p), "%s/usr/lib/test/libfoo.so/%s", cache, hex);
	CHECK_EQ(count_entries(p), 2);			/* no temporary left */
	snprintf(p, sizeof(p), "%s/usr/lib/test/libfoo.so/%s/elf.id", cache, hex);
	CHECK_EQ(mode_of(p), S_IFREG | 0600);		/* the source it was made from */
	snprintf(p, sizeof(p), "%s/.build-id/de/%s", cache, hex + 2);
	CHECK(is_symlink_to(p, "../../usr/lib/test/libfoo.so/deadbeef0123456789abcdef1032547698badcfe"));
	/* perf's reader: follow the link, append "elf" */
	snprintf(p, sizeof(p), "%s/.build-id/de/%s/elf", cache, hex + 2);
	CHECK(file_equals(p, m.b, m.len));

	/* idempotent: same inode, same bytes */
	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/lib/test/libfoo.so", id, 20, fd, 0), 0);
	CHECK(!stat(p, &st2));
	CHECK_EQ(st1.st_ino, st2.st_ino);
	close(fd);

	/* kernel: [kernel.kallsyms]/<id>/kallsyms */
	CHECK_EQ(buildid_cache__add_data(cache, "[kernel.kallsyms]", known_id + 1, 20,
					 ksyms, sizeof(ksyms) - 1), 0);
	build_id_hex(known_id + 1, 20, hex);
	snprintf(p, sizeof(p), "%s/[kernel.kallsyms]/%s/kallsyms", cache, hex);
	CHECK(file_equals(p, ksyms, sizeof(ksyms) - 1));
	CHECK_EQ(mode_of(p), S_IFREG | 0600);		/* real addresses: root's only */
	/* an older precord's 0755 copy is narrowed when met again */
	CHECK(!chmod(p, 0755));
	CHECK_EQ(buildid_cache__add_data(cache, "[kernel.kallsyms]", known_id + 1, 20,
					 ksyms, sizeof(ksyms) - 1), 0);
	CHECK_EQ(mode_of(p), S_IFREG | 0600);
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s", cache, hex, hex + 2);
	CHECK(is_symlink_to(p, "../../[kernel.kallsyms]/adbeef0123456789abcdef1032547698badcfeaa"));

	/* vdso: [vdso]/<id>/vdso, also for [vdso32] */
	n = vdso_build_id(vid, &vimg, &vlen);
	CHECK(n > 0);
	if (n > 0) {
		CHECK_EQ(buildid_cache__add_data(cache, "[vdso]", vid, n, vimg, vlen), 0);
		build_id_hex(vid, n, hex);
		snprintf(p, sizeof(p), "%s/[vdso]/%s/vdso", cache, hex);
		CHECK(file_equals(p, vimg, vlen));
	}
	CHECK_EQ(buildid_cache__add_data(cache, "[vdso32]", known_id + 2, 16, "x", 1), 0);
	build_id_hex(known_id + 2, 16, hex);
	snprintf(p, sizeof(p), "%s/[vdso]/%s/vdso", cache, hex);
	CHECK(file_equals(p, "x", 1));
}

/*
 * Issue 18, finding 13: a file carrying another's build-id, cached first,
 * made the .build-id link (perf report's lookup) name the other's frames
 * with its symbols.  Two files with one build-id and different bytes:
 * the link is removed, a marker keeps it from coming back, each copy
 * stays under its own path; the same bytes at two paths keep the link.
 */
TEST(cache_conflicting_build_ids)
{
	struct elf_spec s = { .phdr = true, .shdr = true, .align = 4 };
	char cache[256], a[PATHSZ], b[PATHSZ], p[PATHSZ], hex[BUILD_ID_HEX_SIZE];
	struct img m;
	__u8 id[20];
	int fa, fb, fc;

	snprintf(cache, sizeof(cache), "%s/conflict/.debug", tmpdir);
	elf_begin_img(&m, &s);
	note_add(&m, 4, "GNU", 3, known_id, 20, 4);
	elf_finish_img(&m, &s);
	fa = write_tmp("attacker.so", m.b, m.len, a);
	m.b[m.len++] = 'X';			/* same id, other bytes */
	fb = write_tmp("victim.so", m.b, m.len, b);
	fc = write_tmp("victim-copy.so", m.b, m.len, p);
	CHECK_EQ(elf_build_id_fd(fb, id), 20);
	build_id_hex(id, 20, hex);

	CHECK_EQ(buildid_cache__add_fd(cache, "/home/evil/lib.so", id, 20, fa, 0), 0);
	snprintf(p, sizeof(p), "%s/.build-id/de/%s", cache, hex + 2);
	CHECK(is_symlink_to(p, "../../home/evil/lib.so/deadbeef0123456789abcdef1032547698badcfe"));
	/* the victim: the same id, other bytes */
	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/bin/victim", id, 20, fb, 0), 0);
	CHECK_EQ(access(p, F_OK), -1);			/* the link is gone */
	snprintf(p, sizeof(p), "%s/.build-id/de/%s.conflict", cache, hex + 2);
	CHECK_EQ(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/usr/bin/victim/%s/elf", cache, hex);
	CHECK(file_equals(p, m.b, m.len));		/* each under its own path */
	/* the attacker again, or a third file: no link made again */
	CHECK_EQ(buildid_cache__add_fd(cache, "/home/evil/lib.so", id, 20, fa, 0), 0);
	CHECK_EQ(buildid_cache__add_fd(cache, "/opt/victim", id, 20, fc, 0), 0);
	snprintf(p, sizeof(p), "%s/.build-id/de/%s", cache, hex + 2);
	CHECK_EQ(access(p, F_OK), -1);

	/* one path, one id, other bytes (a bind mount in a process's own
	 * mount namespace): the entry is marked, its link removed, once */
	snprintf(cache, sizeof(cache), "%s/samepath/.debug", tmpdir);
	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/bin/victim", id, 20, fa, 0), 0);
	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/bin/victim", id, 20, fa, 0), 0);
	snprintf(p, sizeof(p), "%s/usr/bin/victim/%s/conflict", cache, hex);
	CHECK_EQ(access(p, F_OK), -1);			/* the same file again: fine */
	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/bin/victim", id, 20, fc, 0), 0);
	CHECK_EQ(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/.build-id/de/%s", cache, hex + 2);
	CHECK_EQ(faccessat(AT_FDCWD, p, F_OK, AT_SYMLINK_NOFOLLOW), -1);
	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/bin/victim", id, 20, fa, 0), 0);
	CHECK_EQ(faccessat(AT_FDCWD, p, F_OK, AT_SYMLINK_NOFOLLOW), -1);

	/* the same bytes at two paths (a copy, a hard link): the link stays */
	snprintf(cache, sizeof(cache), "%s/same/.debug", tmpdir);
	CHECK_EQ(buildid_cache__add_fd(cache, "/usr/bin/victim", id, 20, fb, 0), 0);
	CHECK_EQ(buildid_cache__add_fd(cache, "/opt/victim", id, 20, fc, 0), 0);
	snprintf(p, sizeof(p), "%s/.build-id/de/%s", cache, hex + 2);
	CHECK(is_symlink_to(p, "../../usr/bin/victim/deadbeef0123456789abcdef1032547698badcfe"));
	close(fa);
	close(fb);
	close(fc);
}

TEST(cache_bad_input)
{
	char cache[256], p[PATHSZ];
	int pipefd[2];

	snprintf(cache, sizeof(cache), "%s/bad", tmpdir);
	CHECK_EQ(buildid_cache__add_data(cache, "relative/x.so", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/a/../b.so", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/a/./b.so", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/..", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/.build-id/de/x", known_id, 20, "x", 1), -EINVAL);
	/* precord's own directory (its download cache, its misses) is no DSO's */
	CHECK_EQ(buildid_cache__add_data(cache, "/.precord/debuginfod/x", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "[heap]", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/x.so", known_id, 0, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/x.so", known_id, 1, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/x.so", known_id, 21, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(NULL, "/x.so", known_id, 20, "x", 1), -EINVAL);
	CHECK_EQ(buildid_cache__add_data(cache, "/x.so", known_id, 20, NULL, 1), -EINVAL);
	CHECK(!pipe(pipefd));
	CHECK_EQ(buildid_cache__add_fd(cache, "/x.so", known_id, 20, pipefd[0], 0), -EINVAL);
	close(pipefd[0]);
	close(pipefd[1]);
	CHECK_EQ(buildid_cache__add_fd(cache, "/x.so", known_id, 20, -1, 0), -EBADF);
	/* a name component longer than NAME_MAX */
	memset(p, 'a', 300);
	p[0] = '/';
	p[300] = '\0';
	CHECK_EQ(buildid_cache__add_data(cache, p, known_id, 20, "x", 1), -ENAMETOOLONG);
}

TEST(cache_planted_symlinks)
{
	char cache[256], victim[256], p[PATHSZ], q[PATHSZ], hex[BUILD_ID_HEX_SIZE];

	build_id_hex(known_id, 20, hex);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	CHECK(!mkdir(victim, 0700));

	/* a directory of the DSO path is a symlink */
	snprintf(cache, sizeof(cache), "%s/c1", tmpdir);
	CHECK(!mkdir(cache, 0755));
	snprintf(p, sizeof(p), "%s/usr", cache);
	CHECK(!symlink(victim, p));
	CHECK_EQ(buildid_cache__add_data(cache, "/usr/lib/x.so", known_id, 20, "x", 1), -ELOOP);
	CHECK_EQ(count_entries(victim), 0);

	/* the file itself is a symlink (dangling, into victim) */
	snprintf(cache, sizeof(cache), "%s/c2", tmpdir);
	snprintf(q, sizeof(q), "mkdir -p '%s/c2/lib/x.so/%s'", tmpdir, hex);
	CHECK(!system(q));
	snprintf(p, sizeof(p), "%s/c2/lib/x.so/%s/elf", tmpdir, hex);
	snprintf(q, sizeof(q), "%s/planted", victim);
	CHECK(!symlink(q, p));
	CHECK_EQ(buildid_cache__add_data(cache, "/lib/x.so", known_id, 20, "x", 1), -ELOOP);
	CHECK_EQ(count_entries(victim), 0);
	CHECK(is_symlink_to(p, q));

	/* .build-id/xx is a symlink */
	snprintf(cache, sizeof(cache), "%s/c3", tmpdir);
	snprintf(q, sizeof(q), "mkdir -p '%s/c3/.build-id'", tmpdir);
	CHECK(!system(q));
	snprintf(p, sizeof(p), "%s/c3/.build-id/de", tmpdir);
	CHECK(!symlink(victim, p));
	CHECK_EQ(buildid_cache__add_data(cache, "/lib/x.so", known_id, 20, "x", 1), -ELOOP);
	CHECK_EQ(count_entries(victim), 0);

	/* a regular file where a directory should be */
	snprintf(cache, sizeof(cache), "%s/c4", tmpdir);
	CHECK(!mkdir(cache, 0755));
	snprintf(p, sizeof(p), "%s/lib", cache);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	CHECK_EQ(buildid_cache__add_data(cache, "/lib/x.so", known_id, 20, "x", 1), -ELOOP);

	/* an existing link for the id is left alone (perf: "already linked") */
	snprintf(cache, sizeof(cache), "%s/c5", tmpdir);
	snprintf(p, sizeof(p), "mkdir -p '%s/c5/.build-id/de'", tmpdir);
	CHECK(!system(p));
	snprintf(p, sizeof(p), "%s/c5/.build-id/de/%s", tmpdir, hex + 2);
	CHECK(!symlink(victim, p));
	CHECK_EQ(buildid_cache__add_data(cache, "/lib/x.so", known_id, 20, "x", 1), 0);
	CHECK(is_symlink_to(p, victim));
	CHECK_EQ(count_entries(victim), 0);
}

/* remove undoes add: the copy, its directory, its link; a link for the
 * same id that points at another path's copy stays; nothing is removed
 * through a planted symlink. */
TEST(cache_remove)
{
	char cache[256], victim[256], p[PATHSZ], q[PATHSZ], hex[BUILD_ID_HEX_SIZE];

	build_id_hex(known_id, 20, hex);
	snprintf(cache, sizeof(cache), "%s/rm", tmpdir);
	CHECK_EQ(buildid_cache__add_data(cache, "/a/x.so", known_id, 20, "x", 1), 0);
	CHECK_EQ(buildid_cache__add_data(cache, "/b/x.so", known_id, 20, "x", 1), 0);
	snprintf(p, sizeof(p), "%s/.build-id/de/%s", cache, hex + 2);
	CHECK(is_symlink_to(p, "../../a/x.so/deadbeef0123456789abcdef1032547698badcfe"));

	CHECK_EQ(buildid_cache__remove(cache, "/b/x.so", known_id, 20), 0);
	snprintf(q, sizeof(q), "%s/b/x.so/%s", cache, hex);
	CHECK(access(q, F_OK) != 0);
	CHECK(is_symlink_to(p, "../../a/x.so/deadbeef0123456789abcdef1032547698badcfe"));

	CHECK_EQ(buildid_cache__remove(cache, "/a/x.so", known_id, 20), 0);
	snprintf(q, sizeof(q), "%s/a/x.so/%s", cache, hex);
	CHECK(access(q, F_OK) != 0);
	CHECK(faccessat(AT_FDCWD, p, F_OK, AT_SYMLINK_NOFOLLOW) != 0);
	snprintf(q, sizeof(q), "%s/.build-id/de", cache);
	CHECK(access(q, F_OK) != 0);		/* empty: gone */
	CHECK_EQ(buildid_cache__remove(cache, "/a/x.so", known_id, 20), 0);	/* again */
	CHECK_EQ(buildid_cache__remove(cache, "/a/../x.so", known_id, 20), -EINVAL);
	snprintf(q, sizeof(q), "%s/none", tmpdir);
	CHECK_EQ(buildid_cache__remove(q, "/a/x.so", known_id, 20), 0);
	CHECK(access(q, F_OK) != 0);		/* not created */

	/* a directory on the path is a symlink to a victim's copy */
	snprintf(victim, sizeof(victim), "%s/rmvictim", tmpdir);
	snprintf(q, sizeof(q), "mkdir -p '%s/lib/x.so/%s' && touch '%s/lib/x.so/%s/elf'",
		 victim, hex, victim, hex);
	CHECK(!system(q));
	snprintf(cache, sizeof(cache), "%s/rm2", tmpdir);
	CHECK(!mkdir(cache, 0755));
	snprintf(p, sizeof(p), "%s/usr", cache);
	CHECK(!symlink(victim, p));
	CHECK_EQ(buildid_cache__remove(cache, "/usr/lib/x.so", known_id, 20), -ELOOP);
	snprintf(q, sizeof(q), "%s/lib/x.so/%s/elf", victim, hex);
	CHECK(access(q, F_OK) == 0);
}

/* perf itself as the oracle for the layout, when it is installed: a copy
 * of /bin/true added by perf buildid-cache -a and by us. */
TEST(cache_matches_perf)
{
	static unsigned char bin[1 << 20];
	char src[PATHSZ], cmd[4 * PATHSZ], hex[BUILD_ID_HEX_SIZE], mine[256], theirs[256];
	char p[4 * PATHSZ];
	__u8 id[20];
	ssize_t len;
	int fd;

	fd = open("/bin/true", O_RDONLY);
	len = fd >= 0 ? read(fd, bin, sizeof(bin)) : -1;
	if (fd >= 0)
		close(fd);
	if (system("command -v perf >/dev/null 2>&1") || len <= 0 ||
	    len == (ssize_t)sizeof(bin)) {
		fprintf(stderr, "  (perf or /bin/true missing: skipped)\n");
		return;
	}
	fd = write_tmp("oracle", bin, (size_t)len, src);
	CHECK_EQ(elf_build_id_fd(fd, id), 20);
	build_id_hex(id, 20, hex);
	snprintf(mine, sizeof(mine), "%s/mine", tmpdir);
	CHECK_EQ(buildid_cache__add_fd(mine, src, id, 20, fd, 0), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "HOME='%s/perfhome' PERF_CONFIG=/dev/null perf buildid-cache -a '%s' >/dev/null 2>&1",
		 tmpdir, src);
	CHECK(!system(cmd));
	snprintf(theirs, sizeof(theirs), "%s/perfhome/.debug", tmpdir);
	/* same link text, same bytes under it */
	snprintf(cmd, sizeof(cmd), "../..%s/%s", src, hex);
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s", theirs, hex, hex + 2);
	CHECK(is_symlink_to(p, cmd));
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s", mine, hex, hex + 2);
	CHECK(is_symlink_to(p, cmd));
	snprintf(p, sizeof(p), "%s%s/%s/elf", theirs, src, hex);
	CHECK(file_equals(p, bin, (size_t)len));
	snprintf(p, sizeof(p), "%s%s/%s/elf", mine, src, hex);
	CHECK(file_equals(p, bin, (size_t)len));
	CHECK_EQ(mode_of(p), S_IFREG | 0644);		/* perf: 0755, wider than the source */
}

/* An ELF with build-id known_id + first, written to tmpdir/name. */
static int write_elf(const char *name, int first, mode_t mode, char *path)
{
	struct elf_spec s = { .phdr = true, .shdr = true, .align = 4 };
	struct img m;
	int fd;

	elf_begin_img(&m, &s);
	note_add(&m, 4, "GNU", 3, known_id + first, 20, 4);
	elf_finish_img(&m, &s);
	fd = write_tmp(name, m.b, m.len, path);
	if (fd >= 0 && (fchmod(fd, mode) || ftruncate(fd, 4096))) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct dso_file_id file_id(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return (struct dso_file_id){ 0 };
	return (struct dso_file_id){ .maj = major(st.st_dev), .min = minor(st.st_dev),
				     .ino = st.st_ino };
}

/* What dso_table__mmap reads for a mapping named name with identity id. */
static int dso_bid(struct dso_table *dt, __u64 start, const char *name,
		   const struct dso_file_id *id)
{
	__u8 bid[20], n = 0;

	dso_table__mmap(dt, (__u32)getpid(), start, 4096, name, id, bid, &n);
	if (n == 20 && memcmp(bid, known_id, 20) && memcmp(bid, known_id + 1, 20))
		return -1;
	return n ? bid[0] : 0;	/* which file: 0xde (known_id) or 0xad (+1) */
}

/*
 * The mapped file is opened only if it is the file the mapping named:
 * after the mapping is gone the process can swap the path for a symlink,
 * a FIFO or another file (root opened /dev/kmsg and copied a root-only
 * file into the cache that way).
 */
TEST(dso_open_hostile)
{
	char lib[PATHSZ], other[PATHSZ], p[3 * PATHSZ], cache[256], hex[BUILD_ID_HEX_SIZE];
	const struct perfdata_build_id *ids;
	struct dso_table *dt = dso_table__new();
	struct dso_file_id id, oid, fid, tid;
	int fd = write_elf("lib.so", 0, 0600, lib), ofd = write_elf("other.so", 1, 0644, other);
	struct timespec ts;
	long gen = 0;
	void *map;
	__u64 a;
	size_t nr;

	CHECK(dt && fd >= 0 && ofd >= 0);
	id = file_id(fd);
	oid = file_id(ofd);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(map != MAP_FAILED);
	a = (__u64)(uintptr_t)map;
	/* mapped: read (map_files as root, the path otherwise) */
	CHECK_EQ(dso_bid(dt, a, lib, &id), 0xde);
	dso_table__hit(dt, (__u32)getpid(), a);
	CHECK_EQ(dso_bid(dt, a, lib, &oid), 0);		/* not the file named */
	munmap(map, 4096);
	/* gone: by path inside /proc/PID/root, the same inode only */
	CHECK_EQ(dso_bid(dt, a + 8192, lib, &id), 0xde);
	CHECK_EQ(dso_bid(dt, a + 8192, lib, NULL), 0);	/* identity unknown */
	/* the inode number of an unmapped file reused by a newer one: a file
	 * changed after the mapping, or of another generation, is refused */
	CHECK(!clock_gettime(CLOCK_MONOTONIC, &ts));
	tid = id;
	tid.time = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec + 1000000000ull;
	CHECK_EQ(dso_bid(dt, a + 8192, lib, &tid), 0xde);	/* mapped after: fine */
	tid.time -= 3000000000ull;
	CHECK_EQ(dso_bid(dt, a + 8192, lib, &tid), 0);		/* mapped before it was made */
	tid = id;
	fd = open(lib, O_RDONLY);
	if (!ioctl(fd, FS_IOC_GETVERSION, &gen)) {
		tid.has_generation = true;
		tid.ino_generation = (__u32)gen;
		CHECK_EQ(dso_bid(dt, a + 8192, lib, &tid), 0xde);
		tid.ino_generation = (__u32)gen + 1;
		CHECK_EQ(dso_bid(dt, a + 8192, lib, &tid), 0);
	}
	close(fd);
	CHECK_EQ(dso_bid(dt, a + 8192, other, &id), 0);
	/* the path swapped for a symlink: never followed, even to the named inode */
	snprintf(p, sizeof(p), "%s/link.so", tmpdir);
	CHECK(!symlink(lib, p));
	CHECK_EQ(dso_bid(dt, a + 8192, p, &id), 0);
	snprintf(p, sizeof(p), "%s/dirlink", tmpdir);
	CHECK(!symlink(tmpdir, p));
	strcat(p, "/lib.so");
	CHECK_EQ(dso_bid(dt, a + 8192, p, &id), 0);
	/* a FIFO with the very identity: not opened (would block) */
	snprintf(p, sizeof(p), "%s/fifo", tmpdir);
	CHECK(!mkfifo(p, 0666));
	fd = open(p, O_RDONLY | O_NONBLOCK);
	fid = file_id(fd);
	close(fd);
	CHECK_EQ(dso_bid(dt, a + 8192, p, &fid), 0);
	/* a device with the very identity */
	fd = open("/dev/null", O_RDONLY);
	fid = file_id(fd);
	close(fd);
	CHECK_EQ(dso_bid(dt, a + 8192, "/dev/null", &fid), 0);

	/* the sampled 0600 file is cached 0600, not 0755 */
	snprintf(cache, sizeof(cache), "%s/dsocache", tmpdir);
	CHECK_EQ(dso_table__finish(dt, cache, false, &ids, &nr), 0);
	build_id_hex(known_id, 20, hex);
	snprintf(p, sizeof(p), "%s%s/%s/elf", cache, lib, hex);
	CHECK_EQ(mode_of(p), S_IFREG | 0600);
	dso_table__free(dt);
	close(ofd);
}

/* Out of descriptors: a kept one is given up and the open retried. */
TEST(dso_emfile_retry)
{
	struct rlimit old, rl;
	struct dso_table *dt;
	struct dso_file_id id[4];
	char path[PATHSZ], name[16];
	int fds[4], dups[256], nd = 0, i;

	CHECK(!getrlimit(RLIMIT_NOFILE, &old));
	rl = old;
	rl.rlim_cur = 64;
	CHECK(!setrlimit(RLIMIT_NOFILE, &rl));
	dt = dso_table__new();
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "many%d.so", i);
		fds[i] = write_elf(name, i & 1, 0644, path);
		id[i] = file_id(fds[i]);
		close(fds[i]);
		if (i < 3)
			CHECK(dso_bid(dt, 0x10000 * (i + 1), path, &id[i]) > 0);
	}
	while (nd < 256 && (dups[nd] = dup(0)) >= 0)
		nd++;
	CHECK(nd < 256);
	CHECK(dso_bid(dt, 0x50000, path, &id[3]) > 0);	/* needs two descriptors */
	while (nd)
		close(dups[--nd]);
	CHECK(!setrlimit(RLIMIT_NOFILE, &old));
	dso_table__free(dt);
}

/* A cache root that is another user's symlink is refused (HOME kept
 * through sudo: ~/.debug -> /etc); ours or root's is fine. */
TEST(cache_root_link)
{
	char dir[256], link[256], p[PATHSZ];
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *d;

	snprintf(dir, sizeof(dir), "%s/realcache", tmpdir);
	CHECK(!mkdir(dir, 0755));
	snprintf(link, sizeof(link), "%s/linkcache", tmpdir);
	CHECK(!symlink(dir, link));
	d = buildid_cache_dir(link);		/* our own link */
	CHECK_STR(d, link);
	free(d);
	CHECK_EQ(buildid_cache__add_data(link, "/lib/x.so", known_id, 20, "x", 1), 0);
	if (geteuid()) {
		fprintf(stderr, "  (not root: another user's link not tried)\n");
		free(old_home);
		return;
	}
	CHECK(!lchown(link, 65534, 65534));
	log_verbosity = -1;
	errno = 0;
	CHECK(!buildid_cache_dir(link));
	CHECK_EQ(errno, EPERM);
	snprintf(p, sizeof(p), "%s/sudohome", tmpdir);
	CHECK(!mkdir(p, 0755));
	setenv("HOME", p, 1);
	snprintf(p, sizeof(p), "%s/sudohome/.debug", tmpdir);
	CHECK(!symlink(dir, p) && !lchown(p, 65534, 65534));
	setenv("PERF_CONFIG", "/dev/null", 1);
	CHECK(!buildid_cache_dir(NULL));
	unsetenv("PERF_CONFIG");
	log_verbosity = 0;
	CHECK_EQ(buildid_cache__add_data(link, "/lib/y.so", known_id + 1, 20, "y", 1), -EPERM);
	snprintf(p, sizeof(p), "%s/lib/y.so", dir);
	CHECK(access(p, F_OK));
	if (old_home)
		setenv("HOME", old_home, 1);
	free(old_home);
}

static void set_env(const char *k, const char *v)
{
	if (v)
		setenv(k, v, 1);
	else
		unsetenv(k);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void check_dir(const char *override, const char *want)
{
	char *d;

	errno = 12345;
	d = buildid_cache_dir(override);
	if (want) {
		CHECK_STR(d, want);
	} else {
		CHECK(!d);
		CHECK_EQ(errno, 0);
	}
	free(d);
}

TEST(cache_dir_config)
{
	char home[256], cfg[PATHSZ], want[PATHSZ];
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *old_cfg = getenv("PERF_CONFIG") ? strdup(getenv("PERF_CONFIG")) : NULL;

	snprintf(home, sizeof(home), "%s/cfghome", tmpdir);
	CHECK(!mkdir(home, 0755));
	snprintf(cfg, sizeof(cfg), "%s/perfconfig", tmpdir);
	set_env("HOME", home);
	set_env("PERF_CONFIG_NOSYSTEM", "1");	/* keep /etc/perfconfig out */
	set_env("PERF_CONFIG", NULL);

	snprintf(want, sizeof(want), "%s/.debug", home);
	check_dir(NULL, want);
	check_dir("/opt/cache", "/opt/cache");
	check_dir("", want);			/* perf: empty = default */
	check_dir("/dev/null", NULL);

	/* $HOME/.perfconfig */
	snprintf(cfg, sizeof(cfg), "%s/.perfconfig", home);
	write_text(cfg, "[report]\n\tchildren = false\n[buildid]\n\tdir = /from/home\n");
	check_dir(NULL, "/from/home");
	check_dir("/opt/cache", "/opt/cache");	/* the option wins */
	write_text(cfg, "");			/* empty: ignored */
	check_dir(NULL, want);

	/* $PERF_CONFIG alone */
	snprintf(cfg, sizeof(cfg), "%s/perfconfig", tmpdir);
	set_env("PERF_CONFIG", cfg);
	write_text(cfg, "# comment\n[BuildID]\n  Dir  =  \"/a b\"  # trailing\n");
	check_dir(NULL, "/a b");
	write_text(cfg, "[buildid]\ndir = /x\\\n/y ; c\n");
	check_dir(NULL, "/x/y");
	write_text(cfg, "[buildid \"sub\"]\ndir = /no\n[other]\ndir = /no\n");
	check_dir(NULL, want);
	write_text(cfg, "[buildid]\ndir = /first\n!bad line\ndir = /second\n");
	log_verbosity = -1;
	check_dir(NULL, "/first");		/* values before a bad line count */
	log_verbosity = 0;
	write_text(cfg, "[buildid]\n\tdir = /dev/null\n");
	check_dir(NULL, NULL);			/* perf's way to turn it off */
	write_text(cfg, "[buildid]\r\ndir=/crlf\r\n");
	check_dir(NULL, "/crlf");
	write_text(cfg, "[buildid]\ndir\n");	/* no value: ignored */
	check_dir(NULL, want);

	set_env("HOME", NULL);
	set_env("PERF_CONFIG", NULL);
	check_dir(NULL, ".debug");

	set_env("PERF_CONFIG_NOSYSTEM", NULL);
	set_env("HOME", old_home);
	set_env("PERF_CONFIG", old_cfg);
	free(old_home);
	free(old_cfg);
}

/* The mode of name's copy in cache (known_id + first), after adding the
 * file at src with mode (and group gid unless -1) and flags; the copy is
 * removed again. */
static mode_t copy_mode_of(const char *cache, const char *src, mode_t mode, gid_t gid,
			   unsigned int flags)
{
	char p[PATHSZ + 128], hex[BUILD_ID_HEX_SIZE];
	int fd = open(src, O_RDONLY);
	mode_t m = (mode_t)-1;

	if (fd < 0 || chmod(src, mode) || (gid != (gid_t)-1 && chown(src, (uid_t)-1, gid)))
		goto out;
	if (buildid_cache__add_fd(cache, "/mode/x.so", known_id, 20, fd, flags))
		goto out;
	build_id_hex(known_id, 20, hex);
	snprintf(p, sizeof(p), "%s/mode/x.so/%s/elf", cache, hex);
	m = mode_of(p) & 07777;
	buildid_cache__remove(cache, "/mode/x.so", known_id, 20);
out:
	if (fd >= 0)
		close(fd);
	return m;
}

/*
 * A copy is never more readable than its original (issue 18: binaries
 * from 0700 directories were copied readable by all): the original's
 * bits within 0755; our group's bits only as far as others' when the
 * original's group is another; owner only behind a closed directory.
 */
TEST(cache_modes)
{
	char cache[256], src[PATHSZ];
	int fd = write_elf("modes.so", 0, 0644, src);

	CHECK(fd >= 0);
	close(fd);
	snprintf(cache, sizeof(cache), "%s/modecache", tmpdir);
	CHECK_EQ(copy_mode_of(cache, src, 0644, -1, 0), 0644);
	CHECK_EQ(copy_mode_of(cache, src, 0755, -1, 0), 0755);
	CHECK_EQ(copy_mode_of(cache, src, 0640, -1, 0), 0640);
	CHECK_EQ(copy_mode_of(cache, src, 04777, -1, 0), 0755);	/* no setuid, no o+w */
	CHECK_EQ(copy_mode_of(cache, src, 0600, -1, 0), 0600);
	CHECK_EQ(copy_mode_of(cache, src, 0755, -1, BUILDID_CACHE_PRIVATE), 0700);
	CHECK_EQ(copy_mode_of(cache, src, 0644, -1, BUILDID_CACHE_PRIVATE), 0600);
	if (geteuid()) {
		fprintf(stderr, "  (not root: the other-group cases skipped)\n");
		return;
	}
	/* another group's file: our group (the copy's) gets what others get */
	CHECK_EQ(copy_mode_of(cache, src, 0640, getegid() + 4242, 0), 0600);
	CHECK_EQ(copy_mode_of(cache, src, 0750, getegid() + 4242, 0), 0700);
	CHECK_EQ(copy_mode_of(cache, src, 0754, getegid() + 4242, 0), 0744);
	CHECK_EQ(copy_mode_of(cache, src, 0755, getegid() + 4242, 0), 0755);
}

/* Bytes of a file on disk (st_blocks), -1 on error. */
static long long disk_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_blocks * 512;
}

/*
 * A sparse source (issue 18: 12 KB on disk truncated to 1 GiB became
 * 1.1 GiB in the cache): the copy writes its data only, holes stay
 * holes, and the bytes read back the same.
 */
TEST(cache_sparse)
{
	static unsigned char chunk[8192];
	char cache[256], src[PATHSZ], p[PATHSZ + 128], hex[BUILD_ID_HEX_SIZE];
	const __u64 big = 1ull << 30;
	unsigned char got[sizeof(chunk)];
	struct stat st;
	int fd = write_elf("sparse.so", 0, 0644, src), cfd;

	CHECK(fd >= 0);
	memset(chunk, 0x5a, sizeof(chunk));
	CHECK(!ftruncate(fd, (off_t)big));
	CHECK_EQ(pwrite(fd, chunk, sizeof(chunk), (off_t)(big / 2)), sizeof(chunk));
	CHECK(!fsync(fd));
	if (disk_bytes(src) > (1 << 20)) {
		fprintf(stderr, "  (no holes on this file system: skipped)\n");
		close(fd);
		return;
	}
	snprintf(cache, sizeof(cache), "%s/sparsecache", tmpdir);
	buildid_cache__set_max(0);
	CHECK_EQ(buildid_cache__add_fd(cache, "/big/sparse.so", known_id, 20, fd, 0), 0);
	close(fd);
	CHECK(buildid_cache__bytes_written() <= 64 * 1024);	/* the data, not 1 GiB */
	CHECK(buildid_cache__bytes_written() >= sizeof(chunk));
	build_id_hex(known_id, 20, hex);
	snprintf(p, sizeof(p), "%s/big/sparse.so/%s/elf", cache, hex);
	CHECK(!stat(p, &st));
	CHECK_EQ(st.st_size, big);			/* the same bytes to a reader */
	CHECK(disk_bytes(p) >= 0 && disk_bytes(p) <= (1 << 20));
	cfd = open(p, O_RDONLY);
	CHECK_EQ(pread(cfd, got, sizeof(got), (off_t)(big / 2)), sizeof(got));
	CHECK(!memcmp(got, chunk, sizeof(chunk)));
	CHECK_EQ(pread(cfd, got, 16, (off_t)(big / 4)), 16);
	CHECK(!memcmp(got, (unsigned char[16]){ 0 }, 16));	/* a hole reads zeros */
	CHECK_EQ(elf_build_id_fd(cfd, (__u8[20]){ 0 }), 20);
	close(cfd);
	CHECK(!unlink(src));
}

/* A file of len bytes of data (an ELF followed by filler). */
static int write_filled(const char *name, int first, size_t len, char *path)
{
	static unsigned char fill[1 << 16];
	int fd = write_elf(name, first, 0644, path);
	off_t off = 4096;

	memset(fill, 0x11, sizeof(fill));
	while (fd >= 0 && (size_t)off < len) {
		size_t n = len - (size_t)off < sizeof(fill) ? len - (size_t)off : sizeof(fill);

		if (pwrite(fd, fill, n, off) != (ssize_t)n) {
			close(fd);
			return -1;
		}
		off += (off_t)n;
	}
	return fd;
}

/*
 * Bytes written into the cache are bounded per file and per run
 * (--buildid-cache-max): a file over either is not cached and nothing
 * of it is left; what is already cached stays a success.
 */
TEST(cache_budget)
{
	char cache[256], a[PATHSZ], b[PATHSZ], p[PATHSZ + 128], hex[BUILD_ID_HEX_SIZE];
	int fa = write_filled("budget_a.so", 0, 100 * 1024, a);
	int fb = write_filled("budget_b.so", 1, 100 * 1024, b);

	CHECK(fa >= 0 && fb >= 0);
	snprintf(cache, sizeof(cache), "%s/budgetcache", tmpdir);
	/* per file: 100K over a 64K limit */
	buildid_cache__set_max(64 * 1024);
	CHECK_EQ(buildid_cache__add_fd(cache, "/b/a.so", known_id, 20, fa, 0), -EFBIG);
	CHECK_EQ(buildid_cache__bytes_written(), 0);
	build_id_hex(known_id, 20, hex);
	snprintf(p, sizeof(p), "%s/b/a.so/%s", cache, hex);
	CHECK(access(p, F_OK) && errno == ENOENT);	/* no empty <hex> left */
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s", cache, hex, hex + 2);
	CHECK(access(p, F_OK) && errno == ENOENT);
	CHECK_EQ(buildid_cache__add_data(cache, "[kernel.kallsyms]", known_id, 20, a,
					 100 * 1024), -EFBIG);
	/* per run: the first fits, the second not */
	buildid_cache__set_max(150 * 1024);
	CHECK_EQ(buildid_cache__add_fd(cache, "/b/a.so", known_id, 20, fa, 0), 0);
	CHECK_EQ(buildid_cache__bytes_written(), 100 * 1024);
	CHECK_EQ(buildid_cache__add_fd(cache, "/b/b.so", known_id + 1, 20, fb, 0), -EDQUOT);
	CHECK_EQ(buildid_cache__bytes_written(), 100 * 1024);
	build_id_hex(known_id + 1, 20, hex);
	snprintf(p, sizeof(p), "%s/b/b.so/%s", cache, hex);
	CHECK(access(p, F_OK) && errno == ENOENT);
	/* already cached: no bytes, no refusal */
	CHECK_EQ(buildid_cache__add_fd(cache, "/b/a.so", known_id, 20, fa, 0), 0);
	CHECK_EQ(buildid_cache__bytes_written(), 100 * 1024);
	CHECK_EQ(buildid_cache__add_data(cache, "[vdso]", known_id + 2, 20, "x", 1), 0);
	CHECK_EQ(buildid_cache__bytes_written(), 100 * 1024 + 1);
	buildid_cache__set_max(0);
	CHECK_EQ(buildid_cache__add_fd(cache, "/b/b.so", known_id + 1, 20, fb, 0), 0);
	close(fa);
	close(fb);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	umask(022);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(elf_layouts);
	RUN(elf_no_or_wrong_note);
	RUN(elf_hostile);
	RUN(elf_counts);
	RUN(elf_real_binary);
	RUN(kernel_and_vdso);
	RUN(hex);
	RUN(cache_layout);
	RUN(cache_conflicting_build_ids);
	RUN(cache_bad_input);
	RUN(cache_planted_symlinks);
	RUN(cache_remove);
	RUN(cache_matches_perf);
	RUN(cache_dir_config);
	RUN(dso_open_hostile);
	RUN(dso_emfile_retry);
	RUN(cache_root_link);
	RUN(cache_modes);
	RUN(cache_sparse);
	RUN(cache_budget);
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return HARNESS_DONE();
}
