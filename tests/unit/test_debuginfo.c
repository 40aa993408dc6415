// SPDX-License-Identifier: GPL-2.0
/*
 * Debug files of stripped DSOs (issue 21): the negative cache
 * (perfdata/debug_misses.h: expiry, bounds, malformed lines, merge on
 * save), the checks on a candidate debug file (elf/debugfile.h: not ELF,
 * another build-id, no .symtab, a sparse .symtab, .gnu_debuglink), and
 * the local lookup of perfdata/debuginfo.h into a build-id cache (a
 * /usr/lib/debug-like root, a .gnu_debuglink beside the DSO) without any
 * server.  The DSOs are copies of the unwind fixture (a .so with a
 * build-id and a .symtab) with their .symtab turned into PROGBITS.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/debugfile.h"
#include "perfdata/debug_misses.h"
#include "perfdata/debuginfo.h"
#include "util/log.h"
#include "harness.h"

static char fixture[PATH_MAX], fixture_link[PATH_MAX], fixture_other[PATH_MAX];
static char tmpdir[] = "/tmp/precord-debuginfo-XXXXXX";

static const char *tmp(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static int write_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok = fd >= 0 && write(fd, p, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* Copy src to dst; strip: its SHT_SYMTAB made PROGBITS (no .symtab);
 * sparse: the .symtab moved 64 MiB past the end, into a hole. */
static int copy_elf(const char *src, const char *dst, bool strip, bool sparse)
{
	size_t len, i;
	unsigned char *p = harness_slurp(src, &len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Shdr *sh;
	uint64_t off = ((uint64_t)len + 4095) & ~4095ull;
	int fd, ret = -1;

	if (!p)
		return -1;
	sh = (Elf64_Shdr *)(p + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		if (strip)
			sh[i].sh_type = SHT_PROGBITS;
		if (sparse) {
			sh[i].sh_offset = off + (64u << 20);
			sh[i].sh_size = 32u << 20;
		}
	}
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd >= 0 && write(fd, p, len) == (ssize_t)len &&
	    (!sparse || !ftruncate(fd, (off_t)(off + (96u << 20)))))
		ret = 0;
	if (fd >= 0)
		close(fd);
	free(p);
	return ret;
}

static int open_ro(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* ---- the negative cache --------------------------------------------------- */

#define HEX_A "0123456789abcdef0123456789abcdef01234567"
#define HEX_B "89abcdef0123456789abcdef0123456789abcdef"

TEST(misses_roundtrip_and_expiry)
{
	int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	struct debug_misses *m = debug_misses__load(dfd, 1000, 100);

	CHECK(m);
	CHECK(!debug_misses__has(m, HEX_A));
	debug_misses__add(m, HEX_A, 1000);
	debug_misses__add(m, "not-hex", 1000);		/* refused */
	CHECK(debug_misses__has(m, HEX_A));
	CHECK_EQ(debug_misses__save(m, dfd), 0);
	debug_misses__free(m);
	/* read again within the expiry, then past it */
	m = debug_misses__load(dfd, 1099, 100);
	CHECK(debug_misses__has(m, HEX_A));
	CHECK(!debug_misses__has(m, "not-hex"));
	debug_misses__free(m);
	m = debug_misses__load(dfd, 1100, 100);
	CHECK(!debug_misses__has(m, HEX_A));
	debug_misses__free(m);
	/* another process's addition is merged when saving */
	m = debug_misses__load(dfd, 1050, 100);
	{
		struct debug_misses *o = debug_misses__load(dfd, 1050, 100);

		debug_misses__add(o, HEX_B, 1050);
		CHECK_EQ(debug_misses__save(o, dfd), 0);
		debug_misses__free(o);
	}
	debug_misses__add(m, HEX_A, 1050);
	CHECK_EQ(debug_misses__save(m, dfd), 0);
	debug_misses__free(m);
	m = debug_misses__load(dfd, 1060, 100);
	CHECK(debug_misses__has(m, HEX_A));
	CHECK(debug_misses__has(m, HEX_B));
	debug_misses__free(m);
	unlinkat(dfd, DEBUG_MISSES_FILE, 0);
	close(dfd);
}

TEST(misses_hostile_file)
{
	int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	const char *path = tmp(DEBUG_MISSES_FILE);
	FILE *f = fopen(path, "w");
	struct debug_misses *m;
	char hex[BUILD_ID_HEX_SIZE];

	/* malformed lines, a time from the far future, then more entries
	 * than are kept: the newest DEBUG_MISSES_MAX stay */
	fprintf(f, "zz 1000\n%s\n%s 12x\n%s 999999999\n" HEX_A "0000000000000000000000 1000\n",
		HEX_A, HEX_A, HEX_B);
	for (unsigned int i = 0; i < DEBUG_MISSES_MAX + 10; i++)
		fprintf(f, "%08x%032x %u\n", i, 0u, 1000 + i);
	fclose(f);
	m = debug_misses__load(dfd, 1000 + DEBUG_MISSES_MAX + 10, 1u << 20);
	CHECK(m);
	CHECK(!debug_misses__has(m, HEX_A));
	CHECK(!debug_misses__has(m, HEX_B));
	snprintf(hex, sizeof(hex), "%08x%032x", 0u, 0u);
	CHECK(!debug_misses__has(m, hex));		/* the oldest: dropped */
	snprintf(hex, sizeof(hex), "%08x%032x", DEBUG_MISSES_MAX + 9, 0u);
	CHECK(debug_misses__has(m, hex));
	debug_misses__free(m);
	/* not a regular file: nothing read, nothing hangs */
	unlink(path);
	CHECK_EQ(mkfifo(path, 0600), 0);
	m = debug_misses__load(dfd, 1000, 100);
	CHECK(m && !debug_misses__has(m, HEX_A));
	debug_misses__free(m);
	unlink(path);
	close(dfd);
}

/* ---- the checks on a debug file ------------------------------------------ */

TEST(debug_file_checks)
{
	__u8 id[BUILD_ID_SIZE], other[BUILD_ID_SIZE];
	int n, fd;

	fd = open_ro(fixture);
	n = elf_build_id_fd(fd, id);
	CHECK(n >= 2);
	CHECK_EQ(elf_has_own_names_fd(fd), 1);
	CHECK_EQ(elf_debug_file_check(fd, id, n), 0);
	memcpy(other, id, sizeof(other));
	other[0] ^= 1;
	CHECK_EQ(elf_debug_file_check(fd, other, n), -ESTALE);
	CHECK_EQ(elf_debug_file_check(fd, id, n - 1), -ESTALE);
	close(fd);

	/* not ELF */
	CHECK_EQ(write_file(tmp("junk"), "\177ELF junk junk junk", 19), 0);
	fd = open_ro(tmp("junk"));
	CHECK_EQ(elf_has_own_names_fd(fd), -ENOEXEC);
	CHECK(elf_debug_file_check(fd, id, n) < 0);
	close(fd);

	/* no .symtab */
	CHECK_EQ(copy_elf(fixture, tmp("stripped.so"), true, false), 0);
	fd = open_ro(tmp("stripped.so"));
	CHECK_EQ(elf_has_own_names_fd(fd), 0);
	CHECK_EQ(elf_debug_file_check(fd, id, n), -ENOENT);
	close(fd);

	/* a .symtab in a hole of a sparse file: refused before libelf reads it */
	CHECK_EQ(copy_elf(fixture, tmp("sparse.so"), false, true), 0);
	fd = open_ro(tmp("sparse.so"));
	CHECK_EQ(elf_debug_file_check(fd, id, n), -EFBIG);
	close(fd);
}

TEST(debuglink)
{
	char name[NAME_MAX + 1];
	__u32 crc = 0;
	int fd = open_ro(fixture_link);

	CHECK_EQ(elf_debuglink_fd(fd, name, sizeof(name), &crc), 0);
	CHECK_STR(name, "cfi_fixture_debug.so");
	CHECK(crc != 0);
	CHECK_EQ(elf_debuglink_fd(fd, name, 4, &crc), -ENOEXEC);	/* no room */
	close(fd);
	fd = open_ro(fixture);
	CHECK_EQ(elf_debuglink_fd(fd, name, sizeof(name), &crc), -ENOENT);
	close(fd);
}

/* ---- the local lookup into a build-id cache -------------------------------- */

static int find(struct debuginfo *di, const char *path)
{
	__u8 id[BUILD_ID_SIZE];
	int fd = open_ro(path), n = elf_build_id_fd(fd, id), err;

	err = debuginfo__find(di, &(struct debuginfo_dso){
		.name = path, .id = id, .id_size = n, .fd = fd,
	}, debuginfo__deadline(di), false);
	close(fd);
	return err;
}

static bool cached(const char *path)
{
	__u8 id[BUILD_ID_SIZE];
	char hex[BUILD_ID_HEX_SIZE], c[PATH_MAX];
	int fd = open_ro(path), n = elf_build_id_fd(fd, id);
	struct stat st;

	close(fd);
	build_id_hex(id, n, hex);
	snprintf(c, sizeof(c), "%s/cache%s/%s/debug", tmpdir, path, hex);
	return !stat(c, &st) && S_ISREG(st.st_mode) && st.st_size > 0;
}

TEST(local_lookup)
{
	char dir[PATH_MAX], root[PATH_MAX];
	__u8 id[BUILD_ID_SIZE];
	char hex[BUILD_ID_HEX_SIZE];
	int fd = open_ro(fixture), n = elf_build_id_fd(fd, id);
	struct debuginfo *di;
	struct debuginfo_stats st;

	close(fd);
	build_id_hex(id, n, hex);
	snprintf(root, sizeof(root), "%s/root", tmpdir);
	snprintf(dir, sizeof(dir), "%s/root/.build-id/%.2s", tmpdir, hex);
	CHECK_EQ(mkdir(root, 0755), 0);
	CHECK_EQ(mkdir(tmp("root/.build-id"), 0755), 0);
	CHECK_EQ(mkdir(dir, 0755), 0);
	CHECK_EQ(mkdir(tmp("lib"), 0755), 0);
	CHECK_EQ(mkdir(tmp("lib2"), 0755), 0);
	di = debuginfo__new(&(struct debuginfo_config){
		.cache_dir = tmp("cache"), .debug_root = root, .no_server = true,
	});
	CHECK(di);

	/* a DSO with its own .symtab: nothing to look up */
	CHECK_EQ(copy_elf(fixture, tmp("lib/full.so"), false, false), 0);
	CHECK_EQ(find(di, tmp("lib/full.so")), -ENODATA);
	/* stripped, nothing anywhere */
	CHECK_EQ(copy_elf(fixture, tmp("lib/a.so"), true, false), 0);
	CHECK_EQ(find(di, tmp("lib/a.so")), -ENOENT);
	/* a candidate with another build-id under the root: refused */
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s.debug", hex + 2);
	CHECK_EQ(copy_elf(fixture_other, dir, false, false), 0);
	CHECK_EQ(find(di, tmp("lib/a.so")), -ENOENT);
	/* the right one under ROOT/.build-id: found, cached as perf reads it */
	CHECK_EQ(copy_elf(fixture, dir, false, false), 0);
	CHECK_EQ(find(di, tmp("lib/a.so")), 0);
	CHECK(cached(tmp("lib/a.so")));
	/* again: from the cache */
	CHECK_EQ(find(di, tmp("lib/a.so")), 0);
	unlink(dir);
	/* .gnu_debuglink: the name beside the DSO, then in .debug/ */
	CHECK_EQ(copy_elf(fixture_link, tmp("lib2/b.so"), true, false), 0);
	CHECK_EQ(mkdir(tmp("lib2/.debug"), 0755), 0);
	CHECK_EQ(copy_elf(fixture, tmp("lib2/.debug/cfi_fixture_debug.so"), false, false), 0);
	CHECK_EQ(find(di, tmp("lib2/b.so")), 0);
	CHECK(cached(tmp("lib2/b.so")));
	st = debuginfo__stats(di);
	CHECK_EQ(st.asked, 5);
	CHECK_EQ(st.local, 2);
	CHECK_EQ(st.cached, 1);
	CHECK_EQ(st.missing, 2);
	CHECK_EQ(st.refused, 1);
	CHECK_EQ(st.failed, 0);
	debuginfo__free(di);
}

int main(int argc, char **argv)
{
	(void)argc;
	log_verbosity = getenv("DEBUGINFO_TEST_VERBOSE") ? 2 : -1;
	elf_version(EV_CURRENT);
	unsetenv("DEBUGINFOD_URLS");
	harness_fixture(argv[0], "cfi_fixture.so", fixture, sizeof(fixture));
	harness_fixture(argv[0], "cfi_fixture_link.so", fixture_link, sizeof(fixture_link));
	harness_fixture(argv[0], "cfi_fixture_debug.so", fixture_other, sizeof(fixture_other));
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(misses_roundtrip_and_expiry);
		RUN(misses_hostile_file);
		RUN(debug_file_checks);
		RUN(debuglink);
		RUN(local_lookup);
	});
}
