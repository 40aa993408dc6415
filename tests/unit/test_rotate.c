// SPDX-License-Identifier: GPL-2.0
/*
 * File rotation (--switch-output): the switch at time T puts every record
 * in exactly one file (time < T: the old one), the names and the removal
 * of the oldest files, and the tracked process state each new file
 * starts with.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "precord/perf_file.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "record/file_switch.h"
#include "record/proc_state.h"

static char dir[] = "/tmp/precord-test-rotate.XXXXXX";

static struct perfdata_writer *new_writer(const char *name)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .sample_type = PREC_SAMPLE_BASE_BITS, .sample_id_all = 1 };
	__u64 ids[1] = { 11 };
	char path[256];
	struct perfdata_writer *w;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return NULL;
	w = perfdata_writer__new(fd);
	CHECK_EQ(perfdata_writer__add_evsel(w, &a, "cpu-clock", ids, 1), 0);
	CHECK_EQ(perfdata_writer__begin(w), 0);
	return w;
}

static void queue_sample(struct perfdata_writer *w, __u64 time)
{
	struct perfdata_sample s = { .id = 11, .ip = time, .time = time, .period = 1 };
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, PREC_SAMPLE_BASE_BITS, &s), 0);
	CHECK_EQ(perfdata_writer__queue(w, time, b.data, b.len), 0);
	pbuf_free(&b);
}

/* The ips (= times) of the samples in the data section of name, in file
 * order, into out; their number. */
static int sample_times(const char *name, __u64 *out, int max)
{
	struct perf_file_header h;
	struct stat st;
	char path[256];
	__u8 *f;
	int fd, n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	f = malloc((size_t)st.st_size);
	if (!f || read(fd, f, (size_t)st.st_size) != st.st_size) {
		free(f);
		close(fd);
		return -1;
	}
	close(fd);
	memcpy(&h, f, sizeof(h));
	for (__u64 off = h.data.offset; off + 8 <= h.data.offset + h.data.size;) {
		struct perf_event_header rh;
		__u64 ip;

		memcpy(&rh, f + off, sizeof(rh));
		if (!rh.size)
			break;
		if (rh.type == PERF_RECORD_SAMPLE && n < max) {
			memcpy(&ip, f + off + 16, 8);	/* IDENTIFIER, then IP */
			out[n++] = ip;
		}
		off += rh.size;
	}
	free(f);
	return n;
}

TEST(sample_at_the_boundary_lands_in_exactly_one_file)
{
	static const __u64 before[] = { 20, 5, 10, 9, 10, 11 };
	struct perfdata_writer *a = new_writer("a"), *b = new_writer("b");
	struct perfdata_env env = { 0 };
	__u64 got[16];
	int n;

	CHECK(a && b);
	if (!a || !b)
		return;
	for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++)
		queue_sample(a, before[i]);
	CHECK_EQ(perfdata_writer__flush(a, 6), 0);	/* one round: 5 written */
	CHECK_EQ(perfdata_writer__hand_over(a, b, 10), 0);
	queue_sample(b, 12);
	queue_sample(a, 3);		/* late, into the old file: still one file */
	CHECK_EQ(perfdata_writer__hand_over(a, b, 10), -EBUSY);	/* b's queue is not empty */
	CHECK_EQ(perfdata_writer__finish(a, &env), 0);
	CHECK_EQ(perfdata_writer__finish(b, &env), 0);
	n = sample_times("a", got, 16);
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK_EQ(got[0], 5);
		CHECK_EQ(got[1], 9);
		CHECK_EQ(got[2], 3);
	}
	n = sample_times("b", got, 16);
	CHECK_EQ(n, 5);		/* both samples at T, then 11, 12, 20 */
	if (n == 5) {
		CHECK_EQ(got[0], 10);
		CHECK_EQ(got[1], 10);
		CHECK_EQ(got[2], 11);
		CHECK_EQ(got[3], 12);
		CHECK_EQ(got[4], 20);
	}
	perfdata_writer__free(a);
	perfdata_writer__free(b);
}

TEST(switch_is_due_by_time_size_or_request)
{
	struct file_switch *fs = file_switch__new(&(struct file_switch_config){
		.output = "perf.data", .every_ns = 2000, .bytes = 0 }, 1000);
	struct file_switch *sz = file_switch__new(&(struct file_switch_config){
		.output = "perf.data", .bytes = 100 }, 0);
	struct file_switch *sig = file_switch__new(&(struct file_switch_config){
		.output = "perf.data", .on_signal = true }, 0);

	CHECK(!file_switch__due(fs, 2999, 1ULL << 40, false));
	CHECK(file_switch__due(fs, 3000, 0, false));
	file_switch__started(fs, 3500);		/* the cadence of the start: 5000 */
	CHECK(!file_switch__due(fs, 4999, 0, false));
	CHECK(file_switch__due(fs, 5000, 0, false));
	file_switch__started(fs, 9500);		/* a long switch: 7000, 9000 skipped */
	CHECK(!file_switch__due(fs, 10999, 0, false));
	CHECK(file_switch__due(fs, 11000, 0, false));
	CHECK(file_switch__due(fs, 0, 0, true));
	CHECK(!file_switch__due(sz, ~0ULL, 99, false));
	CHECK(file_switch__due(sz, 0, 100, false));
	CHECK(!file_switch__due(sig, ~0ULL, ~0ULL, false));
	CHECK(file_switch__due(sig, 0, 0, true));
	file_switch__free(fs);
	file_switch__free(sz);
	file_switch__free(sig);
}

/* A failed switch (the recording goes on in the same file) is tried
 * again at the next TIME, or a second later for SIZE, not every round;
 * a signal's request always. */
TEST(failed_switch_retried_later)
{
	const __u64 sec = FILE_SWITCH_RETRY_NS;
	struct file_switch *sz = file_switch__new(&(struct file_switch_config){
		.output = "perf.data", .bytes = 100 }, 0);
	struct file_switch *tm = file_switch__new(&(struct file_switch_config){
		.output = "perf.data", .every_ns = 5 * sec }, 0);

	CHECK(file_switch__due(sz, 7 * sec, 100, false));
	file_switch__failed(sz, 7 * sec);
	CHECK(!file_switch__due(sz, 8 * sec - 1, 1000, false));
	CHECK(file_switch__due(sz, 8 * sec - 1, 0, true));
	CHECK(file_switch__due(sz, 8 * sec, 1000, false));
	CHECK(file_switch__due(tm, 5 * sec, 0, false));
	file_switch__failed(tm, 5 * sec);
	CHECK(!file_switch__due(tm, 10 * sec - 1, 0, false));
	CHECK(file_switch__due(tm, 10 * sec, 0, false));
	file_switch__free(sz);
	file_switch__free(tm);
}

TEST(names_as_perf_names_them)
{
	struct file_switch *fs = file_switch__new(&(struct file_switch_config){
		.output = "out/perf.data", .every_ns = 1 }, 0);
	char buf[64], tiny[20];

	setenv("TZ", "UTC", 1);
	tzset();
	/* 2023-11-14 22:13:20.129 UTC: centiseconds 12 */
	CHECK_EQ(file_switch__name(fs, 1700000000129999999ULL, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "out/perf.data.2023111422132012");
	CHECK_EQ(file_switch__name(fs, 1700000000129999999ULL, tiny, sizeof(tiny)), -ENAMETOOLONG);
	file_switch__free(fs);
}

TEST(max_files_removes_the_oldest)
{
	struct file_switch *fs;
	char path[256], cfg_out[256];
	struct stat st;

	snprintf(cfg_out, sizeof(cfg_out), "%s/k", dir);
	fs = file_switch__new(&(struct file_switch_config){
		.output = cfg_out, .every_ns = 1, .max_files = 3 }, 0);
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/k.%d", dir, i);
		close(open(path, O_WRONLY | O_CREAT, 0600));
		CHECK_EQ(file_switch__kept(fs, path), i < 3 ? 0 : 1);
	}
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/k.%d", dir, i);
		CHECK_EQ(stat(path, &st) == 0, i >= 2);
		unlink(path);
	}
	file_switch__free(fs);
}

static void put_comm(struct pbuf *b, __u32 pid, __u32 tid, const char *comm, bool exec)
{
	CHECK_EQ(perfdata_encode_comm(b, PREC_SAMPLE_BASE_BITS, pid, tid, comm, exec, NULL), 0);
}

static void put_map(struct pbuf *b, __u32 pid, __u64 start, __u64 len, const char *name)
{
	struct perfdata_mmap2 m = { .misc = PERF_RECORD_MISC_USER, .pid = pid, .tid = pid,
				    .start = start, .len = len, .prot = 5, .filename = name };

	CHECK_EQ(perfdata_encode_mmap2(b, PREC_SAMPLE_BASE_BITS, &m, NULL), 0);
}

static void put_task(struct pbuf *b, __u32 type, __u32 pid, __u32 ppid, __u32 tid, __u64 time)
{
	CHECK_EQ(perfdata_encode_task(b, PREC_SAMPLE_BASE_BITS, type, pid, ppid, tid, ppid,
				      time, 0, NULL), 0);
}

/* Counts of COMM and MMAP2 records in b for pid; the starts of the maps. */
static void count(const struct pbuf *b, __u32 pid, int *comms, int *maps, __u64 *starts)
{
	*comms = *maps = 0;
	for (size_t off = 0; off + 8 <= b->len;) {
		struct perf_event_header h;
		__u32 p;

		memcpy(&h, b->data + off, sizeof(h));
		memcpy(&p, b->data + off + 8, 4);
		if (p == pid && h.type == PERF_RECORD_COMM)
			(*comms)++;
		if (p == pid && h.type == PERF_RECORD_MMAP2)
			memcpy(&starts[(*maps)++], b->data + off + 16, 8);
		off += h.size;
	}
}

TEST(state_follows_forks_exits_execs_and_remaps)
{
	struct proc_state *ps = proc_state__new(PREC_SAMPLE_BASE_BITS);
	struct pbuf in = { 0 }, out = { 0 };
	struct proc_state_stats st;
	__u64 starts[8];
	int comms, maps;

	put_comm(&in, 100, 100, "server", false);
	put_map(&in, 100, 0x1000, 0x3000, "/usr/bin/server");
	put_map(&in, 100, 0x10000, 0x1000, "/lib/libc.so.6");
	put_task(&in, PERF_RECORD_FORK, 100, 100, 102, 20);	/* a thread */
	put_task(&in, PERF_RECORD_FORK, 101, 100, 101, 30);	/* a child */
	put_map(&in, 100, 0x2000, 0x1000, "//anon");		/* a hole in the binary */
	put_task(&in, PERF_RECORD_EXIT, 101, 100, 101, 50);
	put_comm(&in, 103, 103, "sh", false);
	put_map(&in, 103, 0x5000, 0x1000, "/bin/sh");
	put_comm(&in, 103, 103, "true", true);			/* exec: maps gone */
	put_map(&in, 103, 0x7000, 0x1000, "/bin/true");
	CHECK_EQ(proc_state__records(ps, in.data, in.len), 0);

	CHECK_EQ(proc_state__synthesize(ps, &out, 60), 0);
	count(&out, 100, &comms, &maps, starts);
	CHECK_EQ(comms, 2);			/* 100 and its thread 102 */
	CHECK_EQ(maps, 4);			/* 0x1000, 0x3000 (split), libc, anon */
	count(&out, 101, &comms, &maps, starts);
	CHECK_EQ(comms + maps, 0);		/* exited before 60 */
	count(&out, 103, &comms, &maps, starts);
	CHECK_EQ(comms, 1);
	CHECK_EQ(maps, 1);
	CHECK_EQ(starts[0], 0x7000);

	pbuf_reset(&out);
	CHECK_EQ(proc_state__synthesize(ps, &out, 50), 0);	/* exited at 50: still in */
	count(&out, 101, &comms, &maps, starts);
	CHECK_EQ(comms, 1);
	CHECK_EQ(maps, 2);			/* the parent's, before its remap */

	proc_state__collect(ps, 60, NULL, NULL);
	st = proc_state__stats(ps);
	CHECK_EQ(st.procs, 2);
	CHECK_EQ(st.threads, 3);
	proc_state__free(ps);
	pbuf_free(&in);
	pbuf_free(&out);
}

TEST(state_memory_follows_the_live_processes)
{
	struct proc_state *ps = proc_state__new(PREC_SAMPLE_BASE_BITS);
	struct pbuf in = { 0 };

	for (__u32 pid = 1000; pid < 21000; pid++) {
		pbuf_reset(&in);
		put_task(&in, PERF_RECORD_FORK, pid, 1, pid, pid);
		put_comm(&in, pid, pid, "churn", true);
		put_map(&in, pid, 0x400000, 0x1000, "/bin/true");
		put_task(&in, PERF_RECORD_EXIT, pid, 1, pid, pid + 1);
		CHECK_EQ(proc_state__records(ps, in.data, in.len), 0);
		if (pid % 1000 == 0)
			proc_state__collect(ps, pid, NULL, NULL);
	}
	proc_state__collect(ps, ~0ULL, NULL, NULL);
	CHECK_EQ(proc_state__stats(ps).procs, 0);
	proc_state__free(ps);
	pbuf_free(&in);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(sample_at_the_boundary_lands_in_exactly_one_file);
	RUN(switch_is_due_by_time_size_or_request);
	RUN(failed_switch_retried_later);
	RUN(names_as_perf_names_them);
	RUN(max_files_removes_the_oldest);
	RUN(state_follows_forks_exits_execs_and_remaps);
	RUN(state_memory_follows_the_live_processes);
	unlink(strcat(strcpy((char[300]){ 0 }, dir), "/a"));
	unlink(strcat(strcpy((char[300]){ 0 }, dir), "/b"));
	rmdir(dir);
	return HARNESS_DONE();
}
