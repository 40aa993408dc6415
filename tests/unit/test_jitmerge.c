// SPDX-License-Identifier: GPL-2.0
/*
 * JIT merger end to end: jitdumps (both byte orders, moves, address reuse,
 * DEBUG_INFO, DEBUG_INFO2, TIER, EMBEDDED_SOURCE, unwinding info), perf
 * maps read incrementally, truncated and corrupt dumps, the output
 * directory rules, and 100,000 functions in few images.  The images are
 * read back with gelf: the symbol at each mapping's pgoff must be the
 * function that was loaded there at that time.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "jit/jitdump_encode.h"
#include "jit/merger.h"
#include "util/log.h"

static char tmpdir[] = "/tmp/precord-test-jitmerge-XXXXXX";

static void path_in(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const void *data, size_t len, bool append)
{
	int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	close(fd);
}

/* Name of the FUNC symbol whose value is addr in the image at path. */
static bool symbol_at(const char *path, __u64 addr, char *name, size_t n, __u64 *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *e;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 1; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			gelf_getsym(d, (int)i, &s);
			if (s.st_value == addr) {
				snprintf(name, n, "%s", elf_strptr(e, sh.sh_link, s.st_name));
				*size = s.st_size;
				found = true;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* The mappings as an array (freed by the caller). */
static size_t get_maps(struct jit_merger *m, struct jit_mapping **out)
{
	size_t n = jit_merger__nr_mappings(m), i;

	free(*out);
	*out = calloc(n + 1, sizeof(**out));
	for (i = 0; *out && i < n; i++)
		jit_merger__mapping(m, i, &(*out)[i]);
	return *out ? n : 0;
}

static void check_map(const struct jit_mapping *m, __u64 time, __u64 start, __u64 len,
		      const char *name)
{
	char got[256] = "";
	__u64 size = 0;

	CHECK_EQ(m->time, time);
	CHECK_EQ(m->start, start);
	CHECK_EQ(m->len, len);
	CHECK_EQ(m->build_id_size, 20);
	CHECK(m->path && m->path[0] == '/');
	CHECK(symbol_at(m->path, m->pgoff, got, sizeof(got), &size));
	CHECK_STR(got, name);
	CHECK_EQ(size, len);
}

/* A V8-shaped .eh_frame (see test_jitelf.c) for code_size bytes. */
static size_t make_eh_frame(__u8 *out, __u64 code_size)
{
	static const __u8 cie[28] = {
		0x18, 0, 0, 0, 0, 0, 0, 0, 3, 'z', 'L', 'R', 0, 1, 0x78, 0x10,
		2, 0xff, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0, 0, 0,
	};
	__u8 fde[36] = { 0x20, 0, 0, 0, 0x20, 0, 0, 0 };
	__s32 pc = -(__s32)(((code_size + 7) & ~7ULL) + 36);
	__u32 range = (__u32)code_size;

	memcpy(fde + 8, &pc, 4);
	memcpy(fde + 12, &range, 4);
	memcpy(out, cie, sizeof(cie));
	memcpy(out + 28, fde, sizeof(fde));
	memset(out + 64, 0, 4);
	return 68;
}

static void build_rich_dump(struct pbuf *b, bool swap)
{
	static const __u8 code[64] = { 0x55, [63] = 0xc3 };
	static const char *const files[] = { "outer.js", "inl.js" };
	static const char *const names[] = { "outer", "inlA" };
	static const struct jitdump_di2_function fns[] = { { 0, 0, 1, 0, 0 }, { 1, 1, 10, 2, 0 } };
	static const struct jitdump_di2_inline_call calls[] = { { 0, 1, 1, 5, 3 } };
	static const struct jitdump_di2_range ranges[] = { { 4, 8 } };
	static const struct jitdump_di2_line lines[] = { { 0, 0, 3, 0 }, { 4, 1, 11, 1 } };
	struct jitdump_di2_input di2 = { files, 2, names, 2, fns, 2, calls, 1, ranges, 1, lines, 2 };
	struct jitdump_debug_entry ents[3] = {
		{ 0x1000, 10, 1, "f1.js" }, { 0x1010, 11, 1, "f1.js" }, { 0x1020, 12, 1, "f1.js" },
	};
	__u8 eh[128];
	size_t ehn = make_eh_frame(eh, 64);

	jitdump_encode_header(b, swap, 2, 40, 0, 100, 1, 0);
	jitdump_encode_debug(b, swap, 9, 0x1000, ents, 3);
	jitdump_encode_unwind(b, swap, 9, eh, ehn, "hdr-ignored-here-xx!", 20, ehn + 20);
	jitdump_encode_load(b, swap, 10, 100, 101, 0x1000, code, 64, 1, "f1");
	jitdump_encode_tier(b, swap, 19, 3, "Optimized");
	jitdump_encode_di2(b, swap, 19, &di2);
	jitdump_encode_load(b, swap, 20, 100, 102, 0x2000, code, 32, 2, "f2 outer");
	jitdump_encode_source(b, swap, 21, "outer.js", "function outer(){}\n", 19);
	jitdump_encode_move(b, swap, 30, 100, 101, 0x1000, 0x3000, 64, 1);
	jitdump_encode_load(b, swap, 40, 100, 101, 0x1000, code, 16, 3, "f3 reuses f1's address");
	jitdump_encode_bare(b, swap, 99, 41);			/* unknown: skipped */
	jitdump_encode_load(b, swap, 42, 100, 101, 0x5000, code, 0, 4, "empty");
	jitdump_encode_bare(b, swap, JIT_CODE_CLOSE, 50);
}

static void merge_rich(bool swap, __u8 build_id[20])
{
	char dir[256], dump[256];
	struct jit_mapping *maps = NULL;
	const struct jit_image *imgs;
	struct jit_merger *m;
	struct jit_stats st;
	struct pbuf b = { 0 };
	size_t n;

	path_in(dir, sizeof(dir), swap ? "out-swapped" : "out-native");
	path_in(dump, sizeof(dump), swap ? "jit-100s.dump" : "jit-100.dump");
	build_rich_dump(&b, swap);
	write_file(dump, b.data, b.len, false);
	m = jit_merger__new(dir);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(jit_merger__add_jitdump(m, dump, -1, 0), 0);
	CHECK_EQ(jit_merger__finish(m), 0);
	n = get_maps(m, &maps);
	CHECK_EQ(n, 4);
	if (n == 4) {
		check_map(&maps[0], 10, 0x1000, 64, "f1");
		check_map(&maps[1], 20, 0x2000, 32, "f2 outer");
		check_map(&maps[2], 30, 0x3000, 64, "f1");
		check_map(&maps[3], 40, 0x1000, 16, "f3 reuses f1's address");
		CHECK_EQ(maps[2].pgoff, maps[0].pgoff);		/* a move maps the same code */
		CHECK(maps[3].pgoff != maps[0].pgoff);		/* reuse: other code */
		CHECK_EQ(maps[0].pid, 100);
		CHECK_EQ(maps[0].tid, 101);
		CHECK_EQ(maps[1].tid, 102);
	}
	st = jit_merger__stats(m);
	CHECK_EQ(st.loads, 3);
	CHECK_EQ(st.moves, 1);
	CHECK_EQ(st.debug, 2);
	CHECK_EQ(st.unwind, 1);
	CHECK_EQ(st.bad_records, 0);
	CHECK_EQ(st.images, 1);
	CHECK_EQ(jit_merger__images(m, &imgs), 1);
	CHECK_EQ(imgs[0].nr_funcs, 3);
	CHECK_EQ(imgs[0].build_id_size, 20);
	memcpy(build_id, imgs[0].build_id, 20);
	CHECK(!strncmp(jit_merger__dir(m), "/", 1));
	free(maps);
	jit_merger__free(m);
	pbuf_free(&b);
}

TEST(rich_dump_both_orders_same_image)
{
	__u8 native[20], swapped[20];

	merge_rich(false, native);
	merge_rich(true, swapped);
	/* byte order of the dump does not change the image */
	CHECK(!memcmp(native, swapped, 20));
}

/* First DW_LNE_set_address of the image's .debug_line. */
static __u64 first_line_address(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	__u64 addr = 0;
	size_t shstrndx;
	Elf *e;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	elf_getshdrstrndx(e, &shstrndx);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		__u32 hdr_len;
		const __u8 *p;

		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(e, shstrndx, sh.sh_name), ".debug_line"))
			continue;
		d = elf_getdata(scn, NULL);
		p = d->d_buf;
		memcpy(&hdr_len, p + 6, 4);
		p += 10 + hdr_len;
		CHECK(p[0] == 0 && p[1] == 9 && p[2] == 2);
		memcpy(&addr, p + 3, 8);
	}
	elf_end(e);
	close(fd);
	return addr;
}

TEST(v8_debug_bias)
{
	static const __u8 code[32];
	struct jitdump_debug_entry ents[2] = {
		{ 0x1000 + 0x40, 5, 1, "v8.js" }, { 0x1008 + 0x40, 6, 1, "v8.js" },
	};
	struct jit_mapping *maps = NULL;
	char dir[256], dump[256];
	struct jit_merger *m;
	struct pbuf b = { 0 };

	path_in(dir, sizeof(dir), "out-v8");
	path_in(dump, sizeof(dump), "jit-v8.dump");
	jitdump_encode_header(&b, false, 1, 40, 0xDEADBEEF, 7, 1, 0);
	jitdump_encode_debug(&b, false, 1, 0x1000, ents, 2);
	jitdump_encode_load(&b, false, 2, 7, 7, 0x1000, code, 32, 1, "JS:*v8fn");
	write_file(dump, b.data, b.len, false);
	m = jit_merger__new(dir);
	CHECK(m && !jit_merger__add_jitdump(m, dump, -1, 77) && !jit_merger__finish(m));
	if (m && get_maps(m, &maps) == 1) {
		CHECK_EQ(maps[0].pid, 77);		/* given pid wins; other ns: tid too */
		CHECK_EQ(maps[0].tid, 77);
		/* V8 adds 0x40 to every debug address: the first row is the start */
		CHECK_EQ(first_line_address(maps[0].path), maps[0].pgoff);
	}
	free(maps);
	jit_merger__free(m);
	pbuf_free(&b);
}

TEST(perf_map_times_and_final_line)
{
	struct jit_mapping *maps = NULL;
	char dir[256], map[256];
	struct jit_merger *m;
	size_t n;

	path_in(dir, sizeof(dir), "out-map");
	path_in(map, sizeof(map), "perf-55.map");
	write_file(map, "1000 10 first\nthis is junk\n", 27, false);
	m = jit_merger__new(dir);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(jit_merger__add_perf_map(m, map, -1, 55, 5), 0);
	CHECK_EQ(jit_merger__poll(m, 50), 0);
	write_file(map, "2000 20 second one\n1000 18 reused\n3000 30 thi", 45, true);
	CHECK_EQ(jit_merger__poll(m, 80), 0);
	write_file(map, "rd", 2, true);
	CHECK_EQ(jit_merger__finish(m), 0);
	CHECK_EQ(jit_merger__poll(m, 90), -EINVAL);
	n = get_maps(m, &maps);
	CHECK_EQ(n, 4);
	if (n == 4) {
		/* new addresses: valid since the map's base time; a reused
		 * start address: from the poll that read it */
		check_map(&maps[0], 5, 0x1000, 0x10, "first");
		check_map(&maps[1], 5, 0x2000, 0x20, "second one");
		check_map(&maps[2], 5, 0x3000, 0x30, "third");
		check_map(&maps[3], 50, 0x1000, 0x18, "reused");
		CHECK_EQ(maps[0].pid, 55);
		CHECK_EQ(maps[0].tid, 55);
	}
	CHECK_EQ(jit_merger__stats(m).map_entries, 4);
	CHECK_EQ(jit_merger__stats(m).bad_records, 1);
	free(maps);
	jit_merger__free(m);
}

TEST(live_dump_incremental)
{
	static const __u8 code[16];
	struct jit_mapping *maps = NULL;
	char dir[256], dump[256];
	struct jit_merger *m;
	struct pbuf b = { 0 };
	size_t cut;

	path_in(dir, sizeof(dir), "out-live");
	path_in(dump, sizeof(dump), "jit-live.dump");
	jitdump_encode_header(&b, false, 1, 40, 0, 9, 1, 0);
	jitdump_encode_load(&b, false, 10, 9, 9, 0x1000, code, 16, 1, "early");
	cut = b.len + 20;
	jitdump_encode_load(&b, false, 20, 9, 9, 0x2000, code, 16, 2, "late");
	write_file(dump, b.data, cut, false);
	m = jit_merger__new(dir);
	CHECK(m && !jit_merger__add_jitdump(m, dump, -1, 9));
	CHECK_EQ(jit_merger__stats(m).loads, 1);
	CHECK_EQ(jit_merger__poll(m, 15), 0);
	CHECK_EQ(jit_merger__stats(m).loads, 1);
	write_file(dump, b.data + cut, b.len - cut, true);
	CHECK_EQ(jit_merger__poll(m, 25), 0);
	CHECK_EQ(jit_merger__stats(m).loads, 2);
	CHECK_EQ(jit_merger__finish(m), 0);
	CHECK_EQ(get_maps(m, &maps), 2);
	check_map(&maps[1], 20, 0x2000, 16, "late");
	free(maps);
	jit_merger__free(m);
	pbuf_free(&b);
}

/* One dump mapped many times is one source; --jit-max-bytes stops all
 * reading at its bytes, whole records only; stats count what was read. */
TEST(one_source_per_file_and_byte_limit)
{
	static const __u8 code[4000];
	char dir[256], dump[256];
	struct jit_merger *m;
	struct pbuf b = { 0 };
	struct jit_stats st;
	size_t rec;

	path_in(dir, sizeof(dir), "out-limit");
	path_in(dump, sizeof(dump), "jit-77.dump");
	jitdump_encode_header(&b, false, 1, 40, 0, 77, 1, 0);
	for (int i = 0; i < 10; i++)
		jitdump_encode_load(&b, false, 10 + i, 77, 77, 0x10000 + 0x1000 * i, code,
				    sizeof(code), i, "f");
	rec = (b.len - 40) / 10;
	write_file(dump, b.data, b.len, false);
	m = jit_merger__new(dir);
	CHECK(m != NULL);
	if (!m)
		return;
	jit_merger__set_limits(m, &(struct jit_limits){ .max_bytes = 3 * rec + rec / 2 });
	for (int i = 0; i < 20; i++)
		CHECK_EQ(jit_merger__add_jitdump(m, dump, -1, 77), 0);
	CHECK_EQ(jit_merger__poll(m, 100), 0);
	CHECK_EQ(jit_merger__finish(m), 0);
	st = jit_merger__stats(m);
	CHECK_EQ(st.loads, 3);
	CHECK_EQ(st.bytes_read, 3 * rec);
	CHECK_EQ(st.unread_sources, 1);
	CHECK_EQ(jit_merger__nr_mappings(m), 3);
	jit_merger__free(m);
	pbuf_free(&b);
}

static bool stop_now(void *ctx)
{
	(void)ctx;
	return true;
}

/* A stop request: nothing more is read, neither by poll nor by finish. */
TEST(stop_request)
{
	char dir[256], map[256];
	struct jit_merger *m;

	path_in(dir, sizeof(dir), "out-stop");
	path_in(map, sizeof(map), "perf-78.map");
	write_file(map, "1000 10 first\n", 14, false);
	m = jit_merger__new(dir);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(jit_merger__add_perf_map(m, map, -1, 78, 5), 0);
	CHECK_EQ(jit_merger__stats(m).map_entries, 1);
	jit_merger__set_limits(m, &(struct jit_limits){ .stop = stop_now });
	write_file(map, "2000 10 second\n", 15, true);
	CHECK_EQ(jit_merger__poll(m, 50), 0);
	CHECK_EQ(jit_merger__finish(m), 0);
	CHECK_EQ(jit_merger__stats(m).map_entries, 1);
	CHECK_EQ(jit_merger__stats(m).unread_sources, 1);
	jit_merger__free(m);
}

TEST(truncated_and_corrupt_dumps)
{
	static const __u8 code[16];
	struct jit_mapping *maps = NULL;
	char dir[256], d1[256], d2[256], d3[256];
	struct jit_merger *m;
	struct pbuf b = { 0 };
	size_t at;

	path_in(dir, sizeof(dir), "out-bad");
	path_in(d1, sizeof(d1), "trunc.dump");
	path_in(d2, sizeof(d2), "corrupt.dump");
	path_in(d3, sizeof(d3), "tsc.dump");
	jitdump_encode_header(&b, false, 1, 40, 0, 1, 1, 0);
	jitdump_encode_load(&b, false, 10, 1, 1, 0x1000, code, 16, 1, "whole");
	jitdump_encode_load(&b, false, 11, 1, 1, 0x2000, code, 16, 2, "cut short");
	write_file(d1, b.data, b.len - 3, false);
	pbuf_reset(&b);
	jitdump_encode_header(&b, false, 1, 40, 0, 2, 1, 0);
	jitdump_encode_load(&b, false, 12, 2, 2, 0x1000, code, 16, 1, "good");
	jitdump_encode_move(&b, false, 13, 2, 2, 0x9000, 0xa000, 16, 42);	/* unknown index */
	at = b.len;
	jitdump_encode_load(&b, false, 14, 2, 2, 0x3000, code, 16, 3, "bad size");
	memcpy(b.data + at + 4, &(__u32){ 7 }, 4);
	jitdump_encode_load(&b, false, 15, 2, 2, 0x4000, code, 16, 4, "never read");
	write_file(d2, b.data, b.len, false);
	pbuf_reset(&b);
	jitdump_encode_header(&b, false, 1, 40, 0, 3, 1, JITDUMP_FLAG_ARCH_TIMESTAMP);
	jitdump_encode_load(&b, false, 16, 3, 3, 0x5000, code, 16, 1, "tsc");
	write_file(d3, b.data, b.len, false);

	m = jit_merger__new(dir);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(jit_merger__add_jitdump(m, d1, -1, 1), 0);
	CHECK_EQ(jit_merger__add_jitdump(m, d2, -1, 2), 0);
	CHECK_EQ(jit_merger__add_jitdump(m, d3, -1, 3), -ENOTSUP);
	CHECK_EQ(jit_merger__add_jitdump(m, "/nonexistent.dump", -1, 4), -ENOENT);
	CHECK_EQ(jit_merger__add_mlpd(m, "/nonexistent.mlpd", 5), 0);	/* read at finish */
	CHECK_EQ(jit_merger__finish(m), 0);
	CHECK_EQ(get_maps(m, &maps), 2);
	check_map(&maps[0], 10, 0x1000, 16, "whole");
	check_map(&maps[1], 12, 0x1000, 16, "good");
	CHECK_EQ(maps[1].pid, 2);
	CHECK_EQ(jit_merger__stats(m).bad_records, 2);	/* move + framing */
	free(maps);
	jit_merger__free(m);
	pbuf_free(&b);
}

TEST(output_directory_rules)
{
	char dir[256], link[256], file[300];
	struct jit_merger *m;
	const struct jit_image *imgs;
	char perf_map[256];

	path_in(dir, sizeof(dir), "out-existing");
	path_in(link, sizeof(link), "out-link");
	path_in(perf_map, sizeof(perf_map), "perf-9.map");
	CHECK_EQ(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/jit-0.so", dir);
	write_file(file, "keep me", 7, false);
	CHECK_EQ(symlink(dir, link), 0);
	errno = 0;
	CHECK(jit_merger__new(link) == NULL);
	CHECK_EQ(errno, ELOOP);
	CHECK(jit_merger__new("/proc/self/no/such/dir") == NULL);
	write_file(perf_map, "1000 8 fn\n", 10, false);
	m = jit_merger__new(dir);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(jit_merger__add_perf_map(m, perf_map, -1, 9, 1), 0);
	CHECK_EQ(jit_merger__finish(m), 0);
	CHECK_EQ(jit_merger__images(m, &imgs), 1);
	CHECK(strstr(imgs[0].path, "/jit-1.so") != NULL);	/* jit-0.so was taken */
	jit_merger__free(m);
	{
		char buf[16] = "";
		int fd = open(file, O_RDONLY);

		CHECK(read(fd, buf, sizeof(buf)) == 7);
		CHECK_STR(buf, "keep me");
		close(fd);
	}
}

TEST(many_functions_few_images)
{
	static __u8 code[96];
	struct jit_mapping *maps = NULL;
	const struct jit_image *imgs;
	char dir[256], dump[256];
	struct jit_merger *m;
	struct pbuf b = { 0 };
	struct timespec t0, t1;
	size_t n, k;
	char name[64];

	path_in(dir, sizeof(dir), "out-many");
	path_in(dump, sizeof(dump), "jit-many.dump");
	jitdump_encode_header(&b, false, 1, 40, 0, 3, 1, 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "JS:*fn%d file.js:%d:1", i, i);
		jitdump_encode_load(&b, false, 100 + i, 3, 3, 0x10000000ULL + 128ULL * i, code,
				    sizeof(code), i, name);
	}
	write_file(dump, b.data, b.len, false);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	m = jit_merger__new(dir);
	CHECK(m && !jit_merger__add_jitdump(m, dump, -1, 3) && !jit_merger__finish(m));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!m)
		return;
	n = get_maps(m, &maps);
	k = jit_merger__images(m, &imgs);
	CHECK_EQ(n, 100000);
	CHECK(k >= 1 && k * 100 <= n);
	fprintf(stderr, "  # 100000 functions: %zu image(s), %.2f s\n", k,
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (n == 100000) {
		check_map(&maps[0], 100, 0x10000000, 96, "JS:*fn0 file.js:0:1");
		check_map(&maps[99999], 100 + 99999, 0x10000000ULL + 128ULL * 99999, 96,
			  "JS:*fn99999 file.js:99999:1");
	}
	free(maps);
	jit_merger__free(m);
	pbuf_free(&b);
}

TEST(images_split_at_the_cap)
{
	struct jit_mapping *maps = NULL;
	const struct jit_image *imgs;
	char dir[256], dump[256];
	struct jit_merger *m;
	struct pbuf b = { 0 };
	const __u64 big = 12u << 20;

	path_in(dir, sizeof(dir), "out-split");
	path_in(dump, sizeof(dump), "jit-split.dump");
	jitdump_encode_header(&b, false, 1, 40, 0, 4, 1, 0);
	for (int i = 0; i < 3; i++)
		jitdump_encode_load(&b, false, 10 + i, 4, 4, 0x10000000ULL * (i + 1), NULL, big, i,
				    i == 2 ? "third" : "big");
	write_file(dump, b.data, b.len, false);
	pbuf_free(&b);
	m = jit_merger__new(dir);
	CHECK(m && !jit_merger__add_jitdump(m, dump, -1, 4) && !jit_merger__finish(m));
	if (!m)
		return;
	CHECK_EQ(jit_merger__images(m, &imgs), 2);
	CHECK_EQ(get_maps(m, &maps), 3);
	CHECK(maps[0].path == maps[1].path);
	CHECK(maps[2].path != maps[0].path);
	check_map(&maps[2], 12, 0x30000000, big, "third");
	CHECK_EQ(jit_merger__stats(m).images, 2);
	free(maps);
	jit_merger__free(m);
}

/* Random bytes after a valid header: never a crash, never an error. */
TEST(hostile_dumps)
{
	char dir[256], dump[256];
	unsigned int seed = 3;

	path_in(dir, sizeof(dir), "out-hostile");
	path_in(dump, sizeof(dump), "jit-hostile.dump");
	for (int round = 0; round < 40; round++) {
		struct pbuf b = { 0 };
		struct jit_merger *m;

		build_rich_dump(&b, round & 1);
		for (int k = 0; k < 8; k++) {
			seed = seed * 1103515245 + 12345;
			b.data[40 + (seed >> 8) % (b.len - 40)] ^= (__u8)(seed >> 2) | 1;
		}
		write_file(dump, b.data, b.len, false);
		m = jit_merger__new(dir);
		CHECK(m != NULL);
		if (m) {
			jit_merger__add_jitdump(m, dump, -1, 1);
			CHECK_EQ(jit_merger__finish(m), 0);
		}
		jit_merger__free(m);
		pbuf_free(&b);
	}
}

static bool pid_is_100(void *ctx, __u32 pid)
{
	(void)ctx;
	return pid == 100;
}

/* An exited process forgotten between checkpoints: its source is closed
 * (what its dump gets later is not read), its mappings and an image only
 * it used leave the next checkpoint's lists, and the other process's
 * code indices still find their functions (its source moved down a slot:
 * a move must name its own function, not the forgotten one's).  Pruning
 * removes that image once the files of every checkpoint that listed it
 * are gone, and no other. */
TEST(forget_exited_process_and_prune)
{
	static const __u8 code[16];
	struct jit_mapping *maps = NULL;
	const struct jit_image *imgs;
	char dir[256], da[256], db[256], a_image[512], b_image[512] = "";
	struct pbuf a = { 0 }, b = { 0 };
	struct jit_merger *m;
	size_t n;

	path_in(dir, sizeof(dir), "out-forget");
	path_in(da, sizeof(da), "jit-100.dump");
	path_in(db, sizeof(db), "jit-200.dump");
	jitdump_encode_header(&a, false, 1, 40, 0, 100, 1, 0);
	jitdump_encode_load(&a, false, 10, 100, 100, 0x1000, code, 16, 1, "a1");
	write_file(da, a.data, a.len, false);
	jitdump_encode_header(&b, false, 1, 40, 0, 200, 1, 0);
	jitdump_encode_load(&b, false, 20, 200, 200, 0x5000, code, 16, 1, "b1");
	write_file(db, b.data, b.len, false);

	m = jit_merger__new(dir);
	CHECK(m && !jit_merger__add_jitdump(m, da, -1, 100) && !jit_merger__checkpoint(m, 1));
	if (!m)
		return;
	CHECK_EQ(get_maps(m, &maps), 1);
	snprintf(a_image, sizeof(a_image), "%s", maps ? maps[0].path : "");
	CHECK(!jit_merger__add_jitdump(m, db, -1, 200) && !jit_merger__checkpoint(m, 2));
	CHECK_EQ(jit_merger__nr_mappings(m), 2);
	CHECK_EQ(jit_merger__images(m, &imgs), 2);

	CHECK_EQ(jit_merger__forget(m, pid_is_100, NULL), 0);
	n = get_maps(m, &maps);
	CHECK_EQ(n, 1);
	if (n == 1)
		check_map(&maps[0], 20, 0x5000, 16, "b1");

	pbuf_reset(&a);
	jitdump_encode_load(&a, false, 30, 100, 100, 0x2000, code, 16, 2, "a2");
	write_file(da, a.data, a.len, true);
	pbuf_reset(&b);
	jitdump_encode_move(&b, false, 40, 200, 200, 0x5000, 0x6000, 16, 1);
	jitdump_encode_load(&b, false, 50, 200, 200, 0x7000, code, 16, 2, "b2");
	write_file(db, b.data, b.len, true);
	CHECK_EQ(jit_merger__poll(m, 60), 0);
	CHECK_EQ(jit_merger__checkpoint(m, 3), 0);
	n = get_maps(m, &maps);
	CHECK_EQ(n, 3);
	if (n == 3) {
		check_map(&maps[0], 20, 0x5000, 16, "b1");
		check_map(&maps[1], 40, 0x6000, 16, "b1");
		check_map(&maps[2], 50, 0x7000, 16, "b2");
		for (size_t i = 0; i < n; i++)
			CHECK_EQ(maps[i].pid, 200);
		snprintf(b_image, sizeof(b_image), "%s", maps[0].path);
	}
	/* a1's image is no mapping's any more; b1's and b2's are listed */
	CHECK_EQ(jit_merger__images(m, &imgs), 2);
	/* a1's image was listed by checkpoints 1 and 2 (pid 100 lived until
	 * forgotten after 2): it stays while file 2 does, then goes alone */
	CHECK_EQ(jit_merger__prune(m, 2, NULL, NULL), 0);
	CHECK(access(a_image, F_OK) == 0);
	CHECK_EQ(jit_merger__prune(m, 3, NULL, NULL), 1);
	CHECK(access(a_image, F_OK) != 0);
	CHECK(access(b_image, F_OK) == 0);	/* b1's: listed by 3 */
	CHECK_EQ(jit_merger__prune(m, 3, NULL, NULL), 0);
	CHECK_EQ(jit_merger__stats(m).images_pruned, 1);
	CHECK_EQ(jit_merger__stats(m).loads, 3);
	CHECK_EQ(jit_merger__finish(m), 0);
	CHECK_EQ(jit_merger__nr_mappings(m), 3);
	free(maps);
	jit_merger__free(m);
	pbuf_free(&a);
	pbuf_free(&b);
}

int main(void)
{
	log_verbosity = -1;
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(rich_dump_both_orders_same_image);
		RUN(v8_debug_bias);
		RUN(perf_map_times_and_final_line);
		RUN(live_dump_incremental);
		RUN(one_source_per_file_and_byte_limit);
		RUN(stop_request);
		RUN(truncated_and_corrupt_dumps);
		RUN(output_directory_rules);
		RUN(many_functions_few_images);
		RUN(images_split_at_the_cap);
		RUN(hostile_dumps);
		RUN(forget_exited_process_and_prune);
	});
}
