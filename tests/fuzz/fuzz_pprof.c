// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the pprof writer (user/report/pprof.c, through its one
 * entry pprof_export): the input is a script of records from which the
 * harness writes a well-formed perf.data (header, one cpu-clock attr,
 * COMM, MMAP2 and SAMPLE records), so that the fuzzer spends its time on
 * names, counts and stacks rather than on the file's framing (which
 * fuzz_perf_reader covers).  The profile written must gunzip, unpack with
 * protobuf-c's perftools.profiles.Profile, hold only references that
 * exist (string table, locations, mappings, functions), and give back the
 * counts: samples/count sums to the samples written, the second value
 * sums their periods.
 *
 * Script bytes: op % 3 then its operands —
 *   0 COMM   pid byte, name length byte (% 64), name bytes
 *   1 MMAP2  pid byte, start page byte, pages byte, name length byte
 *            (% 64), name bytes (under /nonexistent/precord-fuzz/: no
 *            file of this machine is opened for a fuzzed name)
 *   2 SAMPLE pid byte, period byte, depth byte (% 8), a byte per frame
 *            (an address: page and offset within the first 16 pages)
 * Files go to a directory of their own in /dev/shm (else /tmp).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gen/profile.pb-c.h"
#include "precord/perf_file.h"
#include "report/pprof.h"
#include "util/log.h"

#define BASE		0x400000ULL
#define PAGE		4096ULL
#define MAX_RECORDS	256

struct out {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;

		while (cap < o->len + n)
			cap *= 2;
		o->p = realloc(o->p, cap);
		if (!o->p)
			abort();
		o->cap = cap;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

static void put_u32(struct out *o, uint32_t v)
{
	put(o, &v, 4);
}

static void put_u64(struct out *o, uint64_t v)
{
	put(o, &v, 8);
}

/* A NUL-terminated string padded to 8 bytes. */
static void put_str(struct out *o, const char *s, size_t n)
{
	static const uint8_t zero[8];

	put(o, s, n);
	put(o, zero, 8 - n % 8);
}

struct in {
	const uint8_t *p, *end;
};

static int take(struct in *in)
{
	return in->p < in->end ? *in->p++ : -1;
}

/* Up to max bytes of name (a NUL ends it early, as in the kernel's). */
static size_t take_name(struct in *in, char *buf, size_t max)
{
	int len = take(in);
	size_t n = len < 0 ? 0 : (size_t)len % max;

	if (n > (size_t)(in->end - in->p))
		n = (size_t)(in->end - in->p);
	memcpy(buf, in->p, n);
	in->p += n;
	buf[n] = 0;
	return strlen(buf);
}

/* The record header, the body so far, the sample_id_all trailer (TID,
 * TIME) for the non-sample records. */
static void record(struct out *o, uint32_t type, const struct out *body, uint32_t pid,
		   uint64_t time)
{
	struct perf_event_header h = { type, 0, (uint16_t)(sizeof(h) + body->len +
							   (type != PERF_RECORD_SAMPLE ? 16 : 0)) };

	put(o, &h, sizeof(h));
	put(o, body->p, body->len);
	if (type != PERF_RECORD_SAMPLE) {
		put_u32(o, pid);
		put_u32(o, pid);
		put_u64(o, time);
	}
}

/* The perf.data of the script; the samples and their periods written. */
static void write_file(struct in *in, struct out *f, uint64_t *samples, uint64_t *periods)
{
	struct perf_file_header hdr = { 0 };
	struct perf_event_attr attr = { 0 };
	struct perf_file_section ids = { 0 };
	struct out body = { 0 };
	uint64_t time = 1000000;
	int op, nr = 0;

	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = PERF_ATTR_WRITE_SIZE;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	attr.sample_freq = 99;
	attr.freq = 1;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	hdr.magic = PERF_MAGIC2;
	hdr.size = sizeof(hdr);
	hdr.attr_size = PERF_ATTR_WRITE_SIZE + sizeof(ids);
	hdr.attrs.offset = sizeof(hdr);
	hdr.attrs.size = hdr.attr_size;
	hdr.data.offset = hdr.attrs.offset + hdr.attrs.size;
	put(f, &hdr, sizeof(hdr));
	put(f, &attr, PERF_ATTR_WRITE_SIZE);
	put(f, &ids, sizeof(ids));
	while (nr++ < MAX_RECORDS && (op = take(in)) >= 0) {
		uint32_t pid = 100 + (uint32_t)(take(in) & 7);
		char name[80];

		body.len = 0;
		time += 1000;
		if (op % 3 == 0) {
			size_t n = take_name(in, name, 64);

			put_u32(&body, pid);
			put_u32(&body, pid);
			put_str(&body, name, n);
			record(f, PERF_RECORD_COMM, &body, pid, time);
		} else if (op % 3 == 1) {
			uint64_t start = BASE + (uint64_t)(take(in) & 15) * PAGE;
			uint64_t pages = 1 + (uint64_t)(take(in) & 7);
			size_t n = (size_t)snprintf(name, sizeof(name), "/nonexistent/precord-fuzz/");

			n += take_name(in, name + n, 48);
			put_u32(&body, pid);
			put_u32(&body, pid);
			put_u64(&body, start);
			put_u64(&body, pages * PAGE);
			put_u64(&body, 0);			/* pgoff */
			put_u32(&body, 0);			/* maj */
			put_u32(&body, 0);			/* min */
			put_u64(&body, 1);			/* ino */
			put_u64(&body, 0);			/* ino_generation */
			put_u32(&body, 5);			/* PROT_READ | PROT_EXEC */
			put_u32(&body, 2);			/* MAP_PRIVATE */
			put_str(&body, name, n);
			record(f, PERF_RECORD_MMAP2, &body, pid, time);
		} else {
			uint64_t period = 1 + (uint64_t)(take(in) & 0xff) * 1000;
			int depth = 1 + (take(in) & 7);
			uint64_t ips[8];

			for (int i = 0; i < depth; i++) {
				int b = take(in);

				ips[i] = BASE + (uint64_t)((b < 0 ? 0 : b) & 15) * PAGE + 16 * (uint64_t)i;
			}
			put_u64(&body, ips[0]);
			put_u32(&body, pid);
			put_u32(&body, pid);
			put_u64(&body, time);
			put_u64(&body, period);
			put_u64(&body, (uint64_t)depth + 1);
			put_u64(&body, PERF_CONTEXT_USER);
			for (int i = 0; i < depth; i++)
				put_u64(&body, ips[i]);
			record(f, PERF_RECORD_SAMPLE, &body, pid, time);
			(*samples)++;
			*periods += period;
		}
	}
	free(body.p);
	((struct perf_file_header *)f->p)->data.size = f->len - hdr.data.offset;
}

static uint8_t *gunzip_file(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0;
	int n;

	*len = 0;
	if (!gz)
		abort();
	do {
		if (*len + 65536 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = gzread(gz, buf + *len, 65536);
		if (n < 0)
			abort();
		*len += (size_t)n;
	} while (n > 0);
	gzclose(gz);
	return buf;
}

static void check_profile(const Perftools__Profiles__Profile *p, uint64_t samples,
			  uint64_t periods)
{
	uint64_t got_samples = 0, got_periods = 0;
	size_t ns = p->n_string_table;

#define STR_OK(i) ((i) >= 0 && (size_t)(i) < ns)
	if (!ns || strcmp(p->string_table[0], "") || p->n_sample_type != 2)
		abort();
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (!STR_OK(p->sample_type[i]->type) || !STR_OK(p->sample_type[i]->unit))
			abort();
	for (size_t i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id != i + 1 || !STR_OK(p->mapping[i]->filename) ||
		    !STR_OK(p->mapping[i]->build_id))
			abort();
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id != i + 1 || !STR_OK(p->function[i]->name) ||
		    !STR_OK(p->function[i]->system_name) || !STR_OK(p->function[i]->filename))
			abort();
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (l->id != i + 1 || l->mapping_id > p->n_mapping)
			abort();
		for (size_t j = 0; j < l->n_line; j++)
			if (!l->line[j]->function_id || l->line[j]->function_id > p->n_function)
				abort();
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (s->n_value != 2 || s->value[0] <= 0 || s->value[1] < 0)
			abort();
		for (size_t j = 0; j < s->n_location_id; j++)
			if (!s->location_id[j] || s->location_id[j] > p->n_location)
				abort();
		for (size_t j = 0; j < s->n_label; j++)
			if (!STR_OK(s->label[j]->key) || !STR_OK(s->label[j]->str))
				abort();
		got_samples += (uint64_t)s->value[0];
		got_periods += (uint64_t)s->value[1];
	}
	for (size_t i = 0; i < p->n_comment; i++)
		if (!STR_OK(p->comment[i]))
			abort();
	if (got_samples != samples || got_periods != periods)
		abort();
#undef STR_OK
}

static char dir[64], in_path[96], out_path[96];

static void remove_files(void)
{
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sym_cache *cache;
	struct in in = { data, data + size };
	struct out f = { 0 };
	uint64_t samples = 0, periods = 0;
	Perftools__Profiles__Profile *p;
	uint8_t *pb;
	size_t len;
	int fd, err;

	log_verbosity = -1;
	if (!cache) {
		cache = sym_cache__new("/nonexistent/precord-fuzz-cache");
		snprintf(dir, sizeof(dir), "/dev/shm/precord-fuzz-pprof.%d", (int)getpid());
		if (mkdir(dir, 0700) && errno != EEXIST) {
			snprintf(dir, sizeof(dir), "/tmp/precord-fuzz-pprof.%d", (int)getpid());
			if (mkdir(dir, 0700) && errno != EEXIST)
				abort();
		}
		snprintf(in_path, sizeof(in_path), "%s/in.data", dir);
		snprintf(out_path, sizeof(out_path), "%s/out.pb.gz", dir);
		atexit(remove_files);
	}
	write_file(&in, &f, &samples, &periods);
	fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, f.p, f.len) != (ssize_t)f.len)
		abort();
	close(fd);
	free(f.p);
	unlink(out_path);
	if (!samples)
		return 0;	/* "no samples to export": an error line each time */
	err = pprof_export(in_path, out_path, &(struct pprof_opts){ .cache = cache });
	if (err)
		abort();
	pb = gunzip_file(out_path, &len);
	p = perftools__profiles__profile__unpack(NULL, len, pb);
	if (!p)
		abort();
	check_profile(p, samples, periods);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(pb);
	return 0;
}
