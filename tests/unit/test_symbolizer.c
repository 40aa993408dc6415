// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 18, finding 5: the symbolizer's process table.  A FORK shares its
 * parent's mappings (no copy), an EXIT drops a single-threaded process's
 * mappings, inserts and lookups cost O(log n) tree steps, a file over
 * the cap is refused by itself; a 1 MB perf.data of forks and mmaps
 * (written with precord's own writer) is exported in little memory (the
 * copy per FORK made such a file need 1.27 GB).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "precord/perf_file.h"
#include "report/maptree.h"
#include "report/perf_reader.h"
#include "report/profile.h"
#include "report/symbolizer.h"
#include "util/buf.h"
#include "util/safe_open.h"

#define ST PREC_SAMPLE_BASE_BITS

static char tmpdir[] = "/tmp/precord-test-symbolizer-XXXXXX";
static char path[256];

/* A perf.data of precord's writer holding the records in b (or none). */
static int write_perfdata(const char *p, const struct pbuf *b)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_type = ST,
				     .sample_id_all = 1, .sample_period = 1000 };
	__u64 ids[1] = { 7 };
	struct perfdata_env env = { 0 };
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600), err;
	struct perfdata_writer *w = fd < 0 ? NULL : perfdata_writer__new(fd);

	if (!w)
		return -1;
	err = perfdata_writer__add_evsel(w, &a, "cpu-clock", ids, 1) < 0 ||
	      perfdata_writer__begin(w) ||
	      (b && b->len && perfdata_writer__append(w, b->data, b->len)) ||
	      perfdata_writer__finish(w, &env);
	perfdata_writer__free(w);
	return err ? -1 : 0;
}

struct fixture {
	struct perf_reader *r;
	struct sym_cache *c;
	struct symbolizer *s;
};

static void fixture_open(struct fixture *f)
{
	CHECK_EQ(write_perfdata(path, NULL), 0);
	f->r = perf_reader__open(path);
	f->c = sym_cache__new(tmpdir);
	f->s = f->r && f->c ? symbolizer__new(f->c, f->r) : NULL;
	CHECK(f->s != NULL);
}

static void fixture_close(struct fixture *f)
{
	symbolizer__free(f->s);
	sym_cache__free(f->c);
	perf_reader__free(f->r);
}

static int mmap_ev(struct symbolizer *s, __u32 pid, __u32 tid, __u64 start, __u64 len,
		   const char *name)
{
	struct perf_event_view ev = { .type = PERF_RECORD_MMAP2, .misc = PERF_RECORD_MISC_USER };

	ev.mmap = (struct perf_mmap_view){ .pid = pid, .tid = tid, .start = start, .len = len,
					   .pgoff = start & 0xfffff, .prot = 5,
					   .filename = name };
	return symbolizer__event(s, &ev);
}

static int task_ev(struct symbolizer *s, __u32 type, __u32 pid, __u32 ppid, __u32 tid,
		   __u32 ptid)
{
	struct perf_event_view ev = { .type = type };

	ev.task.pid = pid;
	ev.task.ppid = ppid;
	ev.task.tid = tid;
	ev.task.ptid = ptid;
	return symbolizer__event(s, &ev);
}

/* The mapping start of pid's ip (0: none). */
static __u64 map_of(struct symbolizer *s, __u32 pid, __u64 ip)
{
	struct perf_event_view ev = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER };
	struct sym_frame f;

	ev.sample.pid = ev.sample.tid = pid;
	ev.sample.ip = ip;
	return symbolizer__frames(s, &ev, &f, 1) == 1 ? f.map_start : 0;
}

TEST(later_mapping_cuts_what_it_overlaps)
{
	struct fixture f;

	fixture_open(&f);
	CHECK_EQ(mmap_ev(f.s, 1, 1, 0x10000, 0x40000, "/a"), 0);
	CHECK_EQ(mmap_ev(f.s, 1, 1, 0x20000, 0x10000, "/b"), 0);	/* inside /a */
	CHECK_EQ(map_of(f.s, 1, 0x18000), 0x10000);
	CHECK_EQ(map_of(f.s, 1, 0x28000), 0x20000);
	CHECK_EQ(map_of(f.s, 1, 0x38000), 0x30000);	/* /a's tail */
	CHECK_EQ(map_of(f.s, 1, 0x50000), 0);
	CHECK_EQ(mmap_ev(f.s, 1, 1, 0x8000, 0x30000, "/c"), 0);	/* over /a's head and /b */
	CHECK_EQ(map_of(f.s, 1, 0x28000), 0x8000);
	CHECK_EQ(map_of(f.s, 1, 0x38000), 0x38000);
	CHECK_EQ(symbolizer__stats(f.s)->map_nodes, 2);
	fixture_close(&f);
}

/* 2,000 children of a process with 1,000 mappings: nothing copied at
 * FORK (the old code copied 1,000 entries per child: 2,000,000), a
 * child's own mapping copies O(log n) nodes, the parent keeps its own. */
TEST(fork_shares_the_parents_maps)
{
	struct fixture f;
	const struct symbolizer_stats *st;
	__u64 before;

	fixture_open(&f);
	for (int i = 0; i < 1000; i++)
		CHECK_EQ(mmap_ev(f.s, 100, 100, 0x100000 + (__u64)i * 0x2000, 0x1000, "/lib"), 0);
	for (__u32 c = 1000; c < 3000; c++)
		CHECK_EQ(task_ev(f.s, PERF_RECORD_FORK, c, 100, c, 100), 0);
	st = symbolizer__stats(f.s);
	CHECK_EQ(st->map_nodes, 1000);
	CHECK_EQ(st->procs, 2001);
	CHECK(st->bytes < 2001 * 64 + 1000 * 2 * maptree__node_size());
	CHECK_EQ(map_of(f.s, 2999, 0x100000 + 999 * 0x2000), 0x100000 + 999 * 0x2000);
	before = st->map_nodes;
	CHECK_EQ(mmap_ev(f.s, 1500, 1500, 0x100000 + 500 * 0x2000, 0x800, "/other"), 0);
	st = symbolizer__stats(f.s);
	CHECK(st->map_nodes - before <= 64);		/* a path, not a list */
	CHECK_EQ(map_of(f.s, 1500, 0x100000 + 500 * 0x2000 + 0x900), 0x100000 + 500 * 0x2000 + 0x800);
	CHECK_EQ(map_of(f.s, 100, 0x100000 + 500 * 0x2000 + 0x900), 0x100000 + 500 * 0x2000);
	CHECK_EQ(map_of(f.s, 1501, 0x100000 + 500 * 0x2000 + 0x900), 0x100000 + 500 * 0x2000);
	fixture_close(&f);
}

TEST(exit_keeps_the_maps_until_the_pid_is_reused)
{
	struct fixture f;
	const struct symbolizer_stats *st;

	fixture_open(&f);
	CHECK_EQ(mmap_ev(f.s, 10, 10, 0x1000, 0x1000, "/p"), 0);
	CHECK_EQ(task_ev(f.s, PERF_RECORD_FORK, 11, 10, 11, 10), 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(mmap_ev(f.s, 11, 11, 0x10000 + (__u64)i * 0x1000, 0x1000, "/c"), 0);
	st = symbolizer__stats(f.s);
	CHECK_EQ(st->map_nodes, 102);			/* the shared node copied once */
	/* samples after the EXIT (--off-cpu's sums, written at the end;
	 * other threads) still find the maps, as in perf report */
	CHECK_EQ(task_ev(f.s, PERF_RECORD_EXIT, 11, 10, 11, 10), 0);
	CHECK_EQ(map_of(f.s, 11, 0x10000 + 50 * 0x1000 + 8), 0x10000 + 50 * 0x1000);
	CHECK_EQ(map_of(f.s, 11, 0x1800), 0x1000);
	CHECK_EQ(map_of(f.s, 10, 0x1800), 0x1000);
	/* the pid reused by a new process: the old maps go, the parent's come */
	CHECK_EQ(task_ev(f.s, PERF_RECORD_FORK, 11, 10, 11, 10), 0);
	st = symbolizer__stats(f.s);
	CHECK_EQ(st->map_nodes, 1);
	CHECK_EQ(map_of(f.s, 11, 0x10000 + 50 * 0x1000 + 8), 0);
	CHECK_EQ(map_of(f.s, 11, 0x1800), 0x1000);
	fixture_close(&f);
}

/* Finding 8: what the symbolizer opens for a recorded path, as the
 * recorder opens mapped files (util/safe_open.c). */
TEST(recorded_paths_open_only_the_recorded_regular_file)
{
	char f[300], link[300], dirlink[300], fifo[300], via[400];
	struct file_ident id = { .check_dev = true };
	struct stat st;
	int fd;

	snprintf(f, sizeof(f), "%s/file", tmpdir);
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	snprintf(dirlink, sizeof(dirlink), "%s/dirlink", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	snprintf(via, sizeof(via), "%s/file", dirlink);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
	CHECK_EQ(symlink(f, link), 0);
	CHECK_EQ(symlink(tmpdir, dirlink), 0);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	CHECK_EQ(stat(f, &st), 0);
	fd = safe_open_file(AT_FDCWD, f, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(safe_open_file(AT_FDCWD, link, NULL), -EINVAL);	/* the link itself */
	CHECK_EQ(safe_open_file(AT_FDCWD, via, NULL), -ELOOP);	/* a symlink on the way */
	CHECK_EQ(safe_open_file(AT_FDCWD, fifo, NULL), -EINVAL);	/* not opened: no block */
	CHECK_EQ(safe_open_file(AT_FDCWD, "/dev/null", NULL), -EINVAL);
	id.maj = major(st.st_dev);
	id.min = minor(st.st_dev);
	id.ino = st.st_ino + 1;
	CHECK_EQ(safe_open_file(AT_FDCWD, f, &id), -ESTALE);		/* another file */
	id.ino = st.st_ino;
	id.min++;
	CHECK_EQ(safe_open_file(AT_FDCWD, f, &id), -ESTALE);
	id.min--;
	fd = safe_open_file(AT_FDCWD, f, &id);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* below a directory: nothing outside it */
	fd = open(tmpdir, O_PATH | O_DIRECTORY);
	CHECK_EQ(safe_open_file(fd, "../etc/passwd", NULL), -EXDEV);
	CHECK_EQ(safe_open_file(fd, "link", NULL), -EINVAL);
	close(fd);
	CHECK(path_public(AT_FDCWD, "/usr/bin/true"));
	CHECK(!path_public(AT_FDCWD, f));		/* the test's directory is 0700 */
	unlink(f);
	unlink(link);
	unlink(dirlink);
	unlink(fifo);
}

/* Tree steps per mapping for n and 16n mappings in a scattered order:
 * O(log n) grows by a small factor (the old list: 16 times). */
static double steps_per_op(int n)
{
	struct fixture f;
	__u64 steps;
	__u32 x = 12345;

	fixture_open(&f);
	for (int i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		CHECK_EQ(mmap_ev(f.s, 1, 1, ((__u64)(x % (__u32)(64 * n)) << 12), 0x1000, "/m"), 0);
	}
	for (int i = 0; i < n; i++)
		map_of(f.s, 1, ((__u64)i * 64) << 12);
	steps = symbolizer__stats(f.s)->map_steps;
	fixture_close(&f);
	return (double)steps / (2.0 * n);
}

TEST(many_mmaps_cost_log_steps)
{
	double small = steps_per_op(4000), big = steps_per_op(64000);

	printf("# steps per operation: %.1f for 4000 mappings, %.1f for 64000\n", small, big);
	CHECK(big < 2.0 * small);
	CHECK(small < 100);
}

TEST(cap_refuses_the_file)
{
	struct fixture f;
	int err = 0;
	__u32 pid;

	fixture_open(&f);
	CHECK_EQ(mmap_ev(f.s, 1, 1, 0x1000, 0x1000, "/p"), 0);
	for (pid = 2; pid < SYMBOLIZER_MAX_ENTRIES + 10 && !err; pid++)
		err = task_ev(f.s, PERF_RECORD_FORK, pid, 1, pid, 1);
	CHECK_EQ(err, -E2BIG);
	CHECK(pid <= SYMBOLIZER_MAX_ENTRIES + 1);
	CHECK_EQ(mmap_ev(f.s, 1, 1, 0x8000, 0x1000, "/q"), -E2BIG);
	fixture_close(&f);
}

/*
 * The hostile file of finding 5, about 1 MB: a process with 6,000
 * mappings, then forks, each child mapping one page of its own.  The
 * export runs in a child process whose peak RSS is measured (and whose
 * address space is limited to 1 GiB outside sanitizer builds, so the old
 * code fails instead of taking the machine's memory).
 */
static void build_amplifier(struct pbuf *b, int nmaps, size_t bytes, bool exits)
{
	struct perfdata_sample_id sid = { .pid = 1, .tid = 1, .time = 1, .id = 7 };
	struct perfdata_mmap2 m = { .misc = PERF_RECORD_MISC_USER, .pid = 1, .tid = 1,
				    .len = 0x1000, .prot = 5, .flags = 2, .filename = "/x" };
	struct perfdata_sample s = { .misc = PERF_RECORD_MISC_USER, .ip = 0x400010, .period = 1,
				      .id = 7 };
	__u32 pid = 2;

	for (int i = 0; i < nmaps; i++) {
		m.start = 0x400000 + (__u64)i * 0x2000;
		CHECK_EQ(perfdata_encode_mmap2(b, ST, &m, &sid), 0);
	}
	while (b->len < bytes) {
		sid.time++;
		CHECK_EQ(perfdata_encode_task(b, ST, PERF_RECORD_FORK, pid, 1, pid, 1, sid.time,
					      0, &sid), 0);
		m.pid = m.tid = sid.pid = sid.tid = pid;
		m.start = 0x400000 + (__u64)(pid % nmaps) * 0x2000 + 0x1000;
		CHECK_EQ(perfdata_encode_mmap2(b, ST, &m, &sid), 0);
		if (exits) {
			s.pid = s.tid = pid;
			s.time = ++sid.time;
			s.ip = m.start + 0x10;
			CHECK_EQ(perfdata_encode_sample(b, ST, &s), 0);
			CHECK_EQ(perfdata_encode_task(b, ST, PERF_RECORD_EXIT, pid, 1, pid, 1,
						      sid.time, 0, &sid), 0);
		}
		sid.pid = sid.tid = 1;
		pid++;
	}
}

static void write_amplifier(const char *p, int nmaps, size_t bytes, bool exits)
{
	struct pbuf b = { 0 };

	build_amplifier(&b, nmaps, bytes, exits);
	CHECK_EQ(write_perfdata(p, &b), 0);
	pbuf_free(&b);
}

static int count_sample(void *ctx, const struct profile_sample *s)
{
	(void)ctx; (void)s;
	return 0;
}

TEST(amplifying_file_exports_in_little_memory)
{
	struct rusage ru;
	struct stat st;
	int status = -1;
	pid_t pid;

	write_amplifier(path, 6000, 1 << 20, false);
	CHECK_EQ(stat(path, &st), 0);
	pid = fork();
	if (!pid) {
		struct profile_info info;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
		struct rlimit rl = { 1ull << 30, 1ull << 30 };

		setrlimit(RLIMIT_AS, &rl);
#endif
		/* a file without samples: the whole table is built */
		_exit(profile__read(path, NULL, count_sample, NULL, &info) ? 1 : 0);
	}
	CHECK(pid > 0);
	CHECK_EQ(wait4(pid, &status, 0, &ru), pid);
	printf("# %lld-byte file: exit %d, peak RSS %ld KiB\n", (long long)st.st_size,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1, ru.ru_maxrss);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(ru.ru_maxrss < 300 * 1024);
#if !defined(__SANITIZE_ADDRESS__)
	CHECK(ru.ru_maxrss < 64 * 1024);	/* linear: about 20 MiB here */
#endif
}

/* Seeds of tests/fuzz/fuzz_perf_amplify.c: the records of small
 * amplifiers (a data section, no header). */
static void write_records(const char *dir, const char *name, int nmaps, size_t bytes, bool exits)
{
	struct pbuf b = { 0 };
	char p[512];
	FILE *f;

	build_amplifier(&b, nmaps, bytes, exits);
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "wb");
	CHECK(f && fwrite(b.data, 1, b.len, f) == b.len);
	if (f)
		fclose(f);
	pbuf_free(&b);
}

static int write_corpus(const char *dir)
{
	write_records(dir, "fork-mmap", 20, 5000, false);
	write_records(dir, "fork-mmap-sample-exit", 8, 6000, true);
	write_records(dir, "mmaps", 60, 0, false);
	return harness_failed_checks ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-corpus"))
		return write_corpus(argv[2]);
	return HARNESS_WITH_TMPDIR(tmpdir, {
		snprintf(path, sizeof(path), "%s/t.data", tmpdir);
		/* first: a child forked later would inherit the others' heap */
		RUN(amplifying_file_exports_in_little_memory);
		RUN(later_mapping_cuts_what_it_overlaps);
		RUN(fork_shares_the_parents_maps);
		RUN(exit_keeps_the_maps_until_the_pid_is_reused);
		RUN(many_mmaps_cost_log_steps);
		RUN(cap_refuses_the_file);
		RUN(recorded_paths_open_only_the_recorded_regular_file);
	});
}
