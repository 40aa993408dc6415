// SPDX-License-Identifier: GPL-2.0
/*
 * The perf.data reader and the symbolizer: files written with precord's
 * own encoders (user/perfdata/record.h) read back, in time order; hostile
 * files (truncated, sizes past the end, zero sizes, bad counts) refused or
 * read up to the damage without a crash; this test binary itself as the
 * fixture ELF the symbolizer names a function of.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"
#include "perfdata/record.h"
#include "precord/perf_file.h"
#include "report/perf_reader.h"
#include "report/profile.h"
#include "report/symbolizer.h"
#include "util/buf.h"
#include "util/log.h"

static char tmpdir[] = "/tmp/precord-test-reader-XXXXXX";
static char path[256];

#define ST (PREC_SAMPLE_BASE_BITS | PERF_SAMPLE_CALLCHAIN)

/* A non-inlined function of this binary: the symbolizer's fixture. */
__attribute__((noinline)) int fixture_target(int x)
{
	return x * 3 + 1;
}

/* Write header + one attr (ids 7, 8) + data + no features. */
static void write_file(const char *p, const struct pbuf *data, __u64 sample_type)
{
	struct perf_file_header h = { .magic = PERF_MAGIC2, .size = sizeof(h),
				      .attr_size = sizeof(struct perf_event_attr) + 16 };
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_type = sample_type,
				     .sample_id_all = 1, .freq = 1, .sample_freq = 999 };
	__u64 ids[2] = { 7, 8 };
	struct perf_file_section idsec = { sizeof(h), sizeof(ids) };
	FILE *f = fopen(p, "wb");

	h.attrs = (struct perf_file_section){ sizeof(h) + sizeof(ids), h.attr_size };
	h.data = (struct perf_file_section){ h.attrs.offset + h.attrs.size, data->len };
	fwrite(&h, sizeof(h), 1, f);
	fwrite(ids, sizeof(ids), 1, f);
	fwrite(&a, sizeof(a), 1, f);
	fwrite(&idsec, sizeof(idsec), 1, f);
	fwrite(data->data, 1, data->len, f);
	fclose(f);
}

static void add_sample(struct pbuf *b, __u32 pid, __u64 time, __u64 ip)
{
	__u64 chain[2] = { PERF_CONTEXT_USER, ip };
	struct perfdata_sample s = { .misc = PERF_RECORD_MISC_USER, .ip = ip, .pid = pid,
				     .tid = pid, .time = time, .period = 1000, .id = 7,
				     .callchain = chain, .nr_callchain = 2 };

	CHECK_EQ(perfdata_encode_sample(b, ST, &s), 0);
}

struct seen {
	int n, samples, comms, mmaps;
	__u64 last_time;
	bool ordered;
	char comm[32];
};

static int collect(void *ctx, const struct perf_event_view *ev)
{
	struct seen *s = ctx;

	s->n++;
	if (ev->has_sid && ev->sid.time < s->last_time)
		s->ordered = false;
	if (ev->has_sid)
		s->last_time = ev->sid.time;
	if (ev->type == PERF_RECORD_SAMPLE)
		s->samples++;
	if (ev->type == PERF_RECORD_COMM) {
		s->comms++;
		snprintf(s->comm, sizeof(s->comm), "%s", ev->comm.comm);
	}
	if (ev->type == PERF_RECORD_MMAP2)
		s->mmaps++;
	return 0;
}

static int read_all(const char *p, struct seen *s)
{
	struct perf_reader *r = perf_reader__open(p);
	int err;

	memset(s, 0, sizeof(*s));
	s->ordered = true;
	if (!r)
		return -errno;
	err = perf_reader__read(r, collect, s);
	perf_reader__free(r);
	return err;
}

TEST(round_trip_in_time_order)
{
	struct perfdata_sample_id sid = { .pid = 5, .tid = 5, .time = 100, .id = 7 };
	struct pbuf b = { 0 };
	struct seen s;

	CHECK_EQ(perfdata_encode_comm(&b, ST, 5, 5, "worker", false, &sid), 0);
	add_sample(&b, 5, 300, 0x1000);
	add_sample(&b, 5, 200, 0x1000);		/* older, same round */
	CHECK_EQ(perfdata_encode_finished_round(&b), 0);
	add_sample(&b, 5, 250, 0x1000);		/* still before the next round */
	CHECK_EQ(perfdata_encode_lost_samples(&b, ST, 3, &sid), 0);
	write_file(path, &b, ST);
	CHECK_EQ(read_all(path, &s), 0);
	CHECK_EQ(s.samples, 3);
	CHECK_EQ(s.comms, 1);
	CHECK(s.ordered);
	CHECK_STR(s.comm, "worker");
	pbuf_free(&b);
}

/* Find this binary's mapping of fixture_target in /proc/self/maps. */
static int self_mapping(__u64 *start, __u64 *end, __u64 *pgoff, char *file, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	__u64 ip = (__u64)(uintptr_t)&fixture_target;
	int ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], name[512] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &s, &e, perms, &off, name) < 4)
			continue;
		if (ip >= s && ip < e) {
			*start = s, *end = e, *pgoff = off;
			snprintf(file, size, "%s", name);
			ret = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

struct named {
	int n;
	char sym[64], dso[512], comm[32];
};

static int on_sample(void *ctx, const struct profile_sample *s)
{
	struct named *nm = ctx;

	nm->n++;
	snprintf(nm->sym, sizeof(nm->sym), "%s", s->frames[0].sym ? s->frames[0].sym : "?");
	snprintf(nm->dso, sizeof(nm->dso), "%s", s->frames[0].dso->name);
	snprintf(nm->comm, sizeof(nm->comm), "%s", s->comm);
	return 0;
}

TEST(symbolizer_names_a_function_of_a_fixture_elf)
{
	struct perfdata_sample_id sid = { .pid = 9, .tid = 9, .time = 1, .id = 7 };
	struct perfdata_mmap2 m = { .misc = PERF_RECORD_MISC_USER, .pid = 9, .tid = 9,
				    .prot = 5, .flags = 2 };
	char file[512] = "";
	__u64 start = 0, end = 0, pgoff = 0;
	struct pbuf b = { 0 };
	struct named nm = { 0 };
	struct profile_info info;
	struct sym_cache *c = sym_cache__new(tmpdir);	/* an empty build-id cache */

	CHECK(c != NULL);
	CHECK_EQ(self_mapping(&start, &end, &pgoff, file, sizeof(file)), 0);
	m.start = start;
	m.len = end - start;
	m.pgoff = pgoff;
	m.filename = file;
	CHECK_EQ(perfdata_encode_comm(&b, ST, 9, 9, "fixture", false, &sid), 0);
	CHECK_EQ(perfdata_encode_mmap2(&b, ST, &m, &sid), 0);
	add_sample(&b, 9, 10, (__u64)(uintptr_t)&fixture_target + 2);
	add_sample(&b, 10, 11, 0x1234);			/* no process, no map */
	write_file(path, &b, ST);
	CHECK_EQ(profile__read(path, &(struct profile_opts){ .cache = c }, on_sample, &nm, &info), 0);
	CHECK_EQ(info.samples, 2);
	CHECK_EQ(info.period, 2000);
	CHECK_EQ(nm.n, 2);
	/* the last sample: perf's conventions for what is unknown */
	CHECK_STR(nm.dso, "[unknown]");
	CHECK_STR(nm.sym, "?");
	CHECK_STR(nm.comm, ":10");
	profile_info_free(&info);
	/* again, for the first sample alone, from the cache */
	b.len = 0;
	CHECK_EQ(perfdata_encode_comm(&b, ST, 9, 9, "fixture", false, &sid), 0);
	CHECK_EQ(perfdata_encode_mmap2(&b, ST, &m, &sid), 0);
	add_sample(&b, 9, 10, (__u64)(uintptr_t)&fixture_target + 2);
	write_file(path, &b, ST);
	CHECK_EQ(profile__read(path, &(struct profile_opts){ .cache = c }, on_sample, &nm, &info), 0);
	CHECK_STR(nm.sym, "fixture_target");
	CHECK_STR(nm.dso, file);
	CHECK_STR(nm.comm, "fixture");
	CHECK_EQ(sym_cache__stats(c)->loads, 1);	/* the ELF, once for both files */
	profile_info_free(&info);
	sym_cache__free(c);
	pbuf_free(&b);
}

/* A file whose one sample hits fixture_target in a copy of this binary
 * at elf (no build-id recorded: the file at its path is read). */
static int read_copy(struct sym_cache *c, const char *elf, struct named *nm)
{
	struct perfdata_sample_id sid = { .pid = 9, .tid = 9, .time = 1, .id = 7 };
	struct perfdata_mmap2 m = { .misc = PERF_RECORD_MISC_USER, .pid = 9, .tid = 9,
				    .prot = 5, .flags = 2, .filename = elf };
	char file[512] = "";
	__u64 start = 0, end = 0, pgoff = 0;
	struct pbuf b = { 0 };
	struct profile_info info;
	int err;

	struct stat st;

	CHECK_EQ(self_mapping(&start, &end, &pgoff, file, sizeof(file)), 0);
	m.start = start;
	m.len = end - start;
	m.pgoff = pgoff;
	/* the copy's identity, as the kernel records it: it is in a
	 * private directory, so read as root only when it is that file */
	CHECK_EQ(stat(elf, &st), 0);
	m.maj = major(st.st_dev);
	m.min = minor(st.st_dev);
	m.ino = st.st_ino;
	CHECK_EQ(perfdata_encode_comm(&b, ST, 9, 9, "fixture", false, &sid), 0);
	CHECK_EQ(perfdata_encode_mmap2(&b, ST, &m, &sid), 0);
	add_sample(&b, 9, 10, (__u64)(uintptr_t)&fixture_target + 2);
	write_file(path, &b, ST);
	pbuf_free(&b);
	err = profile__read(path, &(struct profile_opts){ .cache = c }, on_sample, nm, &info);
	if (!err)
		profile_info_free(&info);
	return err;
}

/* Issue 18, finding 11: push's cache lives as long as the recorder; the
 * tables of binaries no longer sampled are evicted, least recently used
 * first, to stay under the limit, and loaded again when needed. */
TEST(symbol_cache_is_bounded_lru)
{
	struct sym_cache *c = sym_cache__new(tmpdir);
	const struct sym_cache_stats *st = c ? sym_cache__stats(c) : NULL;
	char elf[5][300], cmd[700];
	struct named nm = { 0 };
	__u64 one, limit;

	CHECK(c != NULL);
	if (!c)
		return;
	for (int i = 0; i < 5; i++) {
		snprintf(elf[i], sizeof(elf[i]), "%.200s/copy%d", tmpdir, i);
		snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %.299s", (int)getpid(), elf[i]);
		CHECK_EQ(system(cmd), 0);
	}
	CHECK_EQ(read_copy(c, elf[0], &nm), 0);
	CHECK_STR(nm.sym, "fixture_target");
	one = st->bytes;
	CHECK(one > 0);
	limit = 2 * one + one / 2;		/* room for two tables */
	sym_cache__set_max_bytes(c, limit);
	for (int i = 1; i < 5; i++) {
		CHECK_EQ(read_copy(c, elf[i], &nm), 0);
		CHECK_STR(nm.sym, "fixture_target");
		CHECK_STR(nm.dso, elf[i]);
		CHECK(st->bytes <= limit);
	}
	CHECK_EQ(st->loads, 5);
	CHECK_EQ(st->evicted, 3);
	CHECK_EQ(st->bytes, 2 * one);
	/* copy 3 was used after copy 4 is not: copy 4 and 3 are held */
	CHECK_EQ(read_copy(c, elf[3], &nm), 0);
	CHECK_EQ(read_copy(c, elf[4], &nm), 0);
	CHECK_EQ(st->loads, 5);
	/* copy 0, evicted: loaded again, named again; copy 3 goes */
	CHECK_EQ(read_copy(c, elf[0], &nm), 0);
	CHECK_STR(nm.sym, "fixture_target");
	CHECK_EQ(st->loads, 6);
	CHECK_EQ(st->evicted, 4);
	CHECK_EQ(read_copy(c, elf[4], &nm), 0);
	CHECK_EQ(st->loads, 6);
	CHECK_EQ(read_copy(c, elf[3], &nm), 0);
	CHECK_EQ(st->loads, 7);
	/* the default: 256 MiB */
	sym_cache__free(c);
	c = sym_cache__new(tmpdir);
	CHECK_EQ(read_copy(c, elf[0], &nm), 0);
	CHECK_EQ(sym_cache__stats(c)->evicted, 0);
	CHECK(SYM_CACHE_MAX_BYTES == 256ULL << 20);
	sym_cache__free(c);
	for (int i = 0; i < 5; i++)
		unlink(elf[i]);
}

/* Patch bytes of the file at off. */
static void patch(const char *p, long off, const void *v, size_t n)
{
	int fd = open(p, O_WRONLY);

	CHECK(fd >= 0 && pwrite(fd, v, n, off) == (ssize_t)n);
	close(fd);
}

TEST(hostile_headers_are_refused)
{
	struct pbuf b = { 0 };
	struct seen s;
	__u64 v;

	add_sample(&b, 5, 300, 0x1000);
	write_file(path, &b, ST);
	CHECK_EQ(read_all(path, &s), 0);
	CHECK_EQ(s.samples, 1);

	v = 0x7fffffffffffULL;			/* attrs.size: a huge attr count */
	patch(path, offsetof(struct perf_file_header, attrs.size), &v, 8);
	CHECK_EQ(read_all(path, &s), -EINVAL);
	write_file(path, &b, ST);
	v = 8;					/* attr_size below any attr */
	patch(path, offsetof(struct perf_file_header, attr_size), &v, 8);
	CHECK_EQ(read_all(path, &s), -EINVAL);
	write_file(path, &b, ST);
	v = 1ULL << 40;				/* ids past the end */
	patch(path, 104 + 16 + sizeof(struct perf_event_attr) + 8, &v, 8);
	CHECK_EQ(read_all(path, &s), -EINVAL);
	write_file(path, &b, ST);
	v = __builtin_bswap64(PERF_MAGIC2);
	patch(path, 0, &v, 8);
	CHECK_EQ(read_all(path, &s), -ENOTSUP);
	pbuf_free(&b);
}

TEST(hostile_records_are_skipped_or_end_the_data)
{
	struct perfdata_sample_id sid = { .pid = 5, .tid = 5, .time = 100, .id = 7 };
	struct pbuf b = { 0 };
	struct seen s;
	long data = 104 + 16 + (long)sizeof(struct perf_event_attr) + 16;
	__u16 sz;
	__u64 nr = 1ULL << 60;
	size_t first;

	add_sample(&b, 5, 300, 0x1000);
	first = b.len;
	add_sample(&b, 5, 301, 0x1000);
	CHECK_EQ(perfdata_encode_comm(&b, ST, 5, 5, "x", false, &sid), 0);
	write_file(path, &b, ST);

	/* a callchain count past the record: that sample skipped, rest kept */
	patch(path, data + (long)first + 8 + 48, &nr, 8);
	CHECK_EQ(read_all(path, &s), 0);
	CHECK_EQ(s.samples, 1);
	CHECK_EQ(s.comms, 1);

	/* size 0: nothing after it can be found */
	write_file(path, &b, ST);
	sz = 0;
	patch(path, data + (long)first + 6, &sz, 2);
	CHECK_EQ(read_all(path, &s), 0);
	CHECK_EQ(s.samples, 1);
	CHECK_EQ(s.comms, 0);

	/* a size past the end of the data section */
	write_file(path, &b, ST);
	sz = 0xfff8;
	patch(path, data + (long)first + 6, &sz, 2);
	CHECK_EQ(read_all(path, &s), 0);
	CHECK_EQ(s.samples, 1);

	/* every truncation of the file: refused or read, never a crash
	 * (one error line each, not shown) */
	write_file(path, &b, ST);
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	dup2(null, 2);
	for (long n = 0; n < data + (long)b.len; n++) {
		CHECK_EQ(truncate(path, n), 0);
		read_all(path, &s);
		write_file(path, &b, ST);
	}
	dup2(saved, 2);
	close(saved);
	close(null);
	pbuf_free(&b);
}

int main(void)
{
	log_verbosity = -1;
	return HARNESS_WITH_TMPDIR(tmpdir, {
		snprintf(path, sizeof(path), "%s/t.data", tmpdir);
		RUN(round_trip_in_time_order);
		RUN(symbolizer_names_a_function_of_a_fixture_elf);
		RUN(symbol_cache_is_bounded_lru);
		RUN(hostile_headers_are_refused);
		RUN(hostile_records_are_skipped_or_end_the_data);
	});
}
