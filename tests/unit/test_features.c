// SPDX-License-Identifier: GPL-2.0
/*
 * Feature-section payloads (user/perfdata/features*.c): each payload is
 * encoded, parsed back with the small reader below (perf's layouts) and
 * compared with values read independently (uname, sysconf, shell
 * commands over /proc and /sys); BUILD_ID and EVENT_DESC byte by byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "perfdata/features.h"
#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "precord/perf_file.h"
#include "util/log.h"

#include "harness.h"

/* ---- a reader of perf's payload encoding ---- */

struct rd {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};

static bool rd_need(struct rd *r, size_t n)
{
	if (r->bad || n > r->len - r->off) {
		r->bad = true;
		return false;
	}
	return true;
}

static uint32_t rd_u32(struct rd *r)
{
	uint32_t v = 0;

	if (rd_need(r, 4))
		memcpy(&v, r->p + r->off, 4);
	r->off += r->bad ? 0 : 4;
	return v;
}

static uint64_t rd_u64(struct rd *r)
{
	uint64_t v = 0;

	if (rd_need(r, 8))
		memcpy(&v, r->p + r->off, 8);
	r->off += r->bad ? 0 : 8;
	return v;
}

/* perf str: u32 len (multiple of 64), string, NUL padding up to len. */
static const char *rd_str(struct rd *r)
{
	uint32_t n = rd_u32(r), i;
	const char *s;

	if (r->bad || !n || n % 64 || !rd_need(r, n)) {
		r->bad = true;
		return "";
	}
	s = (const char *)r->p + r->off;
	i = (uint32_t)strnlen(s, n);
	if (i == n || n - i > 64)
		r->bad = true;		/* no NUL, or more padding than needed */
	for (; i < n; i++)
		if (s[i])
			r->bad = true;
	r->off += n;
	return r->bad ? "" : s;
}

static struct rd rd_of(const struct pbuf *b)
{
	return (struct rd){ b->data, b->len, 0, false };
}

/* Encode feature feat into a fresh buffer; returns the error. */
static int enc(int feat, struct pbuf *b, const struct perfdata_env *env)
{
	pbuf_free(b);
	return perfdata_feature_write(feat, b, env);
}

/* First line of a shell command's output, without '\n'. */
static bool sh(char *out, size_t size, const char *cmd)
{
	FILE *f = popen(cmd, "r");
	bool ok = f && fgets(out, (int)size, f);

	if (f)
		pclose(f);
	if (ok)
		out[strcspn(out, "\n")] = '\0';
	return ok;
}

static const struct perfdata_env empty_env;

/* ---- tests ---- */

TEST(uname_strings)
{
	struct pbuf b = { 0 };
	struct utsname u;
	struct rd r;
	const char *want[3];
	int feats[3] = { HEADER_HOSTNAME, HEADER_OSRELEASE, HEADER_ARCH }, i;

	CHECK(!uname(&u));
	want[0] = u.nodename;
	want[1] = u.release;
	want[2] = u.machine;
	for (i = 0; i < 3; i++) {
		CHECK_EQ(enc(feats[i], &b, &empty_env), 0);
		CHECK_EQ(b.len, 4 + (strlen(want[i]) + 1 + 63) / 64 * 64);
		r = rd_of(&b);
		CHECK_STR(rd_str(&r), want[i]);
		CHECK(!r.bad && r.off == b.len);
	}
	CHECK_EQ(enc(HEADER_VERSION, &b, &empty_env), 0);
	r = rd_of(&b);
	CHECK_STR(rd_str(&r), PRECORD_VERSION " (precord)");
	CHECK_EQ(b.len, 68);
	pbuf_free(&b);
}

/* Memory sizes move on a VM with memory hotplug: a value read between
 * two independent reads must lie between them. */
static bool between(uint64_t v, uint64_t a, uint64_t b)
{
	bool ok = (a <= b) ? (v >= a && v <= b) : (v >= b && v <= a);

	if (!ok)
		fprintf(stderr, "  %llu not between %llu and %llu\n", (unsigned long long)v,
			(unsigned long long)a, (unsigned long long)b);
	return ok;
}

TEST(nrcpus_mem_cpu)
{
	char want[512], cmd[512];
	uint64_t lo, hi;
	struct pbuf b = { 0 };
	struct rd r;

	CHECK_EQ(enc(HEADER_NRCPUS, &b, &empty_env), 0);
	CHECK_EQ(b.len, 8);
	r = rd_of(&b);
	CHECK(sh(want, sizeof(want),
		 "awk -F'[-,]' '{print $NF + 1}' /sys/devices/system/cpu/present"));
	CHECK_EQ(rd_u32(&r), atoi(want));
	CHECK_EQ(rd_u32(&r), sysconf(_SC_NPROCESSORS_ONLN));

	CHECK(sh(want, sizeof(want), "awk '/^MemTotal:/ {print $2}' /proc/meminfo"));
	lo = strtoull(want, NULL, 10);
	CHECK_EQ(enc(HEADER_TOTAL_MEM, &b, &empty_env), 0);
	CHECK_EQ(b.len, 8);
	CHECK(sh(want, sizeof(want), "awk '/^MemTotal:/ {print $2}' /proc/meminfo"));
	hi = strtoull(want, NULL, 10);
	r = rd_of(&b);
	CHECK(between(rd_u64(&r), lo, hi));

	CHECK_EQ(enc(HEADER_CPUDESC, &b, &empty_env), 0);
	r = rd_of(&b);
	CHECK(sh(want, sizeof(want),
		 "grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: //; s/[[:space:]]\\+/ /g'"));
	CHECK_STR(rd_str(&r), want);
	CHECK(!r.bad && r.off == b.len);

#if defined(__x86_64__)
	CHECK_EQ(enc(HEADER_CPUID, &b, &empty_env), 0);
	r = rd_of(&b);
	snprintf(cmd, sizeof(cmd), "awk -F': ' '/^vendor_id/ {v=$2} /^cpu family/ {f=$2} "
		 "/^model\\t/ {m=$2} /^stepping/ {s=$2; print v \",\" f \",\" m \",\" s; exit}' "
		 "/proc/cpuinfo");
	CHECK(sh(want, sizeof(want), cmd));
	CHECK_STR(rd_str(&r), want);
#endif
	pbuf_free(&b);
}

TEST(cmdline)
{
	char *argv[] = { "precord", "-g", "--", "sleep", "1", NULL };
	struct perfdata_env env = { .argc = 5, .argv = argv };
	char exe[4096];
	struct pbuf b = { 0 };
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct rd r;
	int i;

	exe[n > 0 ? n : 0] = '\0';
	CHECK_EQ(enc(HEADER_CMDLINE, &b, &env), 0);
	r = rd_of(&b);
	CHECK_EQ(rd_u32(&r), 5);
	CHECK_STR(rd_str(&r), exe);
	for (i = 1; i < 5; i++)
		CHECK_STR(rd_str(&r), argv[i]);
	CHECK(!r.bad && r.off == b.len);
	/* no argv: just the executable */
	CHECK_EQ(enc(HEADER_CMDLINE, &b, &empty_env), 0);
	r = rd_of(&b);
	CHECK_EQ(rd_u32(&r), 1);
	CHECK_STR(rd_str(&r), exe);
	pbuf_free(&b);
}

TEST(event_desc_bytes)
{
	__u64 ids0[2] = { 12, 13 }, ids1[1] = { 0x1122334455667788ull };
	struct perfdata_evsel ev[2] = {
		{ .name = "cpu-clock:pppH", .ids = ids0, .nr_ids = 2 },
		{ .name = "precord:foo", .ids = ids1, .nr_ids = 1 },
	};
	struct perfdata_env env = { .evsels = ev, .nr_evsels = 2 };
	struct pbuf b = { 0 };
	uint8_t *p;
	uint32_t u;

	ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev[0].attr.size = 0;			/* forced to 128 */
	ev[0].attr.sample_type = 0x127;
	ev[1].attr.type = 8;
	ev[1].attr.size = 128;
	ev[1].attr.config = 0xabc;
	CHECK_EQ(enc(HEADER_EVENT_DESC, &b, &env), 0);
	/* 8 + (128 + 4 + 68 + 16) + (128 + 4 + 68 + 8) */
	CHECK_EQ(b.len, 8 + 216 + 208);
	p = b.data;
	memcpy(&u, p, 4);
	CHECK_EQ(u, 2);
	memcpy(&u, p + 4, 4);
	CHECK_EQ(u, 128);
	memcpy(&u, p + 8, 4);
	CHECK_EQ(u, PERF_TYPE_SOFTWARE);
	memcpy(&u, p + 12, 4);
	CHECK_EQ(u, 128);			/* attr.size */
	CHECK_EQ(p[8 + 24], 0x27);		/* sample_type */
	memcpy(&u, p + 136, 4);
	CHECK_EQ(u, 2);				/* nr_ids */
	memcpy(&u, p + 140, 4);
	CHECK_EQ(u, 64);
	CHECK(!memcmp(p + 144, "cpu-clock:pppH", 15));
	CHECK(!memcmp(p + 208, ids0, 16));	/* unaligned ids right after */
	p += 224;
	memcpy(&u, p, 4);
	CHECK_EQ(u, 8);
	CHECK_EQ(p[8], 0xbc);			/* config */
	memcpy(&u, p + 128, 4);
	CHECK_EQ(u, 1);
	CHECK(!memcmp(p + 136, "precord:foo", 12));
	CHECK(!memcmp(p + 200, ids1, 8));

	/* no evsels: not written; ids missing: an error, len restored */
	CHECK_EQ(enc(HEADER_EVENT_DESC, &b, &empty_env), -ENODATA);
	ev[1].ids = NULL;
	pbuf_free(&b);
	pbuf_put(&b, "abc", 3);
	CHECK_EQ(perfdata_feature_write(HEADER_EVENT_DESC, &b, &env), -EINVAL);
	CHECK_EQ(b.len, 3);
	CHECK(!memcmp(b.data, "abc", 3));
	pbuf_free(&b);
}

TEST(build_id_bytes)
{
	static char longname[70000];
	struct perfdata_build_id ids[] = {
		{ .cpumode = PERF_RECORD_MISC_KERNEL, .size = 20,
		  .id = { 0xab, 0xf9, 0xec, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0xfe },
		  .filename = "[kernel.kallsyms]" },
		{ .cpumode = PERF_RECORD_MISC_USER, .size = 0, .filename = "/bad/size0" },
		{ .cpumode = PERF_RECORD_MISC_USER, .size = 21, .filename = "/bad/size21" },
		{ .cpumode = PERF_RECORD_MISC_USER, .size = 20, .filename = NULL },
		{ .cpumode = PERF_RECORD_MISC_USER, .size = 20, .filename = longname },
		{ .cpumode = PERF_RECORD_MISC_USER, .size = 16, .id = { 0x11, 0x22 },
		  .filename = "/usr/lib/x86_64-linux-gnu/libxyyyyyyyyyyyyyyyyyyyyyyyyyyyy.so.1" },
	};
	struct perfdata_env env = { .build_ids = ids, .nr_build_ids = 6 };
	struct pbuf b = { 0 };
	uint8_t *p;
	uint32_t u32;
	uint16_t u16;
	int32_t pid;

	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	CHECK_EQ(strlen(ids[5].filename), 63);
	log_verbosity = -1;			/* the skipped entries warn */
	CHECK_EQ(enc(HEADER_BUILD_ID, &b, &env), 0);
	log_verbosity = 0;
	CHECK_EQ(b.len, 100 + 100);
	p = b.data;
	memcpy(&u32, p, 4);
	CHECK_EQ(u32, 0);			/* type 0 inside the feature */
	memcpy(&u16, p + 4, 2);
	CHECK_EQ(u16, 0x8001);			/* KERNEL | BUILD_ID_SIZE */
	memcpy(&u16, p + 6, 2);
	CHECK_EQ(u16, 100);			/* 36 + 64 (docs/perf-data.md §4) */
	memcpy(&pid, p + 8, 4);
	CHECK_EQ(pid, -1);
	CHECK(!memcmp(p + 12, ids[0].id, 20));
	CHECK_EQ(p[32], 20);
	CHECK(!p[33] && !p[34] && !p[35]);
	CHECK(!memcmp(p + 36, "[kernel.kallsyms]", 18));
	CHECK(!p[99]);
	p += 100;
	memcpy(&u16, p + 4, 2);
	CHECK_EQ(u16, 0x8002);
	memcpy(&u16, p + 6, 2);
	CHECK_EQ(u16, 100);			/* 63 + NUL = 64 */
	CHECK_EQ(p[12], 0x11);
	CHECK_EQ(p[13], 0x22);
	CHECK(!p[14] && !p[31]);
	CHECK_EQ(p[32], 16);
	CHECK(!memcmp(p + 36, ids[5].filename, 64));

	/* nothing valid: not written */
	env.build_ids = ids + 1;
	env.nr_build_ids = 4;
	log_verbosity = -1;
	CHECK_EQ(enc(HEADER_BUILD_ID, &b, &env), -ENODATA);
	log_verbosity = 0;
	CHECK_EQ(b.len, 0);
	CHECK_EQ(enc(HEADER_BUILD_ID, &b, &empty_env), -ENODATA);
	pbuf_free(&b);
}

TEST(times_and_clock)
{
	struct perfdata_env env = {
		.first_sample_time = 268473222000ull, .last_sample_time = 268676432000ull,
		.have_clock = true, .clockid = 1, .clock_res_ns = 1,
		.clock_tod_ns = 1795307004145897000ull, .clock_ns = 268425721042ull,
	};
	struct pbuf b = { 0 };
	struct rd r;

	CHECK_EQ(enc(HEADER_SAMPLE_TIME, &b, &env), 0);
	r = rd_of(&b);
	CHECK_EQ(rd_u64(&r), env.first_sample_time);
	CHECK_EQ(rd_u64(&r), env.last_sample_time);
	CHECK_EQ(b.len, 16);
	CHECK_EQ(enc(HEADER_CLOCKID, &b, &env), 0);
	CHECK_EQ(b.len, 8);
	r = rd_of(&b);
	CHECK_EQ(rd_u64(&r), 1);
	CHECK_EQ(enc(HEADER_CLOCK_DATA, &b, &env), 0);
	CHECK_EQ(b.len, 24);
	r = rd_of(&b);
	CHECK_EQ(rd_u32(&r), 1);
	CHECK_EQ(rd_u32(&r), 1);
	CHECK_EQ(rd_u64(&r), env.clock_tod_ns);
	CHECK_EQ(rd_u64(&r), env.clock_ns);
	env.clock_res_ns = 0;			/* perf drops CLOCKID then */
	CHECK_EQ(enc(HEADER_CLOCKID, &b, &env), -ENODATA);
	env.have_clock = false;
	CHECK_EQ(enc(HEADER_CLOCK_DATA, &b, &env), -ENODATA);
	CHECK_EQ(enc(HEADER_CLOCKID, &b, &env), -ENODATA);
	pbuf_free(&b);
}

TEST(constant_features)
{
	int feats[] = { HEADER_BPF_PROG_INFO, HEADER_BPF_BTF }, i;
	struct pbuf b = { 0 };
	struct rd r;

	for (i = 0; i < 2; i++) {
		CHECK_EQ(enc(feats[i], &b, &empty_env), 0);
		CHECK_EQ(b.len, 4);
		r = rd_of(&b);
		CHECK_EQ(rd_u32(&r), 0);
	}
	pbuf_free(&b);
}

TEST(auxtrace_empty_index)
{
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_feature_write(HEADER_AUXTRACE, &b, &empty_env), 0);
	CHECK_EQ(b.len, 8);
	CHECK_EQ(*(__u64 *)b.data, 0);
	pbuf_free(&b);
}

TEST(not_written)
{
	int feats[] = { HEADER_RESERVED, HEADER_TRACING_DATA, HEADER_BRANCH_STACK,
			HEADER_GROUP_DESC, HEADER_STAT, HEADER_DIR_FORMAT,
			HEADER_COMPRESSED, HEADER_HYBRID_TOPOLOGY, HEADER_LAST_FEATURE,
			-1, 255, 100000 };
	struct pbuf b = { 0 };
	size_t i;

	pbuf_put(&b, "xy", 2);
	for (i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
		CHECK_EQ(perfdata_feature_write(feats[i], &b, &empty_env), -ENODATA);
		CHECK_EQ(b.len, 2);
	}
	/* a buffer already in error is left alone */
	b.err = -ENOMEM;
	CHECK_EQ(perfdata_feature_write(HEADER_HOSTNAME, &b, &empty_env), -ENOMEM);
	CHECK_EQ(b.len, 2);
	pbuf_free(&b);
}

/* Every feature appends after what is already in the buffer, non-empty. */
TEST(append_and_nonempty)
{
	__u64 ids[1] = { 7 };
	struct perfdata_evsel ev = { .name = "cpu-clock", .ids = ids, .nr_ids = 1 };
	struct perfdata_build_id bid = { .cpumode = 2, .size = 20, .filename = "/x" };
	struct perfdata_env env = { .evsels = &ev, .nr_evsels = 1, .build_ids = &bid,
				    .nr_build_ids = 1, .have_clock = true, .clock_res_ns = 1 };
	struct pbuf b = { 0 };
	size_t before;
	int feat, err;

	for (feat = 0; feat < HEADER_LAST_FEATURE; feat++) {
		before = b.len;
		err = perfdata_feature_write(feat, &b, &env);
		if (err)
			CHECK_EQ(b.len, before);
		else
			CHECK(b.len > before);
	}
	pbuf_free(&b);
}

/* Lines of a shell command's output, numbered from 0. */
static int sh_lines(char lines[][256], int max, const char *cmd)
{
	FILE *f = popen(cmd, "r");
	int n = 0;

	while (f && n < max && fgets(lines[n], 256, f)) {
		lines[n][strcspn(lines[n], "\n")] = '\0';
		n++;
	}
	if (f)
		pclose(f);
	return n;
}

TEST(cpu_topology)
{
	static char want[64][256];
	struct pbuf b = { 0 };
	uint32_t n, i, nr;
	char buf[256];
	struct rd r;
	int nw;

	CHECK_EQ(enc(HEADER_CPU_TOPOLOGY, &b, &empty_env), 0);
	r = rd_of(&b);
	CHECK(sh(buf, sizeof(buf),
		 "awk -F'[-,]' '{print $NF + 1}' /sys/devices/system/cpu/present"));
	nr = (uint32_t)atoi(buf);
	/* distinct lists of online CPUs, first-seen order */
	nw = sh_lines(want, 64, "for c in $(ls -d /sys/devices/system/cpu/cpu[0-9]* | sort -V); do "
		      "cat $c/topology/package_cpus_list; done | awk '!s[$0]++'");
	n = rd_u32(&r);
	CHECK_EQ(n, nw);
	for (i = 0; i < n && i < 64; i++)
		CHECK_STR(rd_str(&r), want[i]);
	nw = sh_lines(want, 64, "for c in $(ls -d /sys/devices/system/cpu/cpu[0-9]* | sort -V); do "
		      "cat $c/topology/core_cpus_list; done | awk '!s[$0]++'");
	n = rd_u32(&r);
	CHECK_EQ(n, nw);
	for (i = 0; i < n && i < 64; i++)
		CHECK_STR(rd_str(&r), want[i]);
	for (i = 0; i < nr; i++) {
		snprintf(buf, sizeof(buf), "cat /sys/devices/system/cpu/cpu%u/topology/core_id", i);
		CHECK(sh(want[0], 256, buf));
		CHECK_EQ((int32_t)rd_u32(&r), atoi(want[0]));
		snprintf(buf, sizeof(buf),
			 "cat /sys/devices/system/cpu/cpu%u/topology/physical_package_id", i);
		CHECK(sh(want[0], 256, buf));
		CHECK_EQ((int32_t)rd_u32(&r), atoi(want[0]));
	}
	if (!access("/sys/devices/system/cpu/cpu0/topology/die_cpus_list", F_OK)) {
		nw = sh_lines(want, 64, "for c in $(ls -d /sys/devices/system/cpu/cpu[0-9]* | "
			      "sort -V); do cat $c/topology/die_cpus_list; done | awk '!s[$0]++'");
		n = rd_u32(&r);
		CHECK_EQ(n, nw);
		for (i = 0; i < n && i < 64; i++)
			CHECK_STR(rd_str(&r), want[i]);
		for (i = 0; i < nr; i++) {
			snprintf(buf, sizeof(buf),
				 "cat /sys/devices/system/cpu/cpu%u/topology/die_id", i);
			CHECK(sh(want[0], 256, buf));
			CHECK_EQ((int32_t)rd_u32(&r), atoi(want[0]));
		}
	}
	CHECK(!r.bad);
	CHECK_EQ(r.off, b.len);		/* revisions are told apart by size */
	pbuf_free(&b);
}

TEST(numa_topology)
{
	static char nodes[64][256];
	char buf[256], cmd[1024];
	uint64_t lo[64];
	struct pbuf b = { 0 };
	uint32_t n, i;
	struct rd r;
	int nn;

	if (access("/sys/devices/system/node/online", R_OK)) {
		CHECK(enc(HEADER_NUMA_TOPOLOGY, &b, &empty_env) < 0);
		return;
	}
	nn = sh_lines(nodes, 64, "ls -d /sys/devices/system/node/node[0-9]* | "
		      "sed 's/.*node//' | sort -n");
	for (i = 0; i < (uint32_t)nn && i < 64; i++) {
		snprintf(cmd, sizeof(cmd), "awk '/MemTotal:/ {print $4}' "
			 "/sys/devices/system/node/node%.32s/meminfo", nodes[i]);
		CHECK(sh(buf, sizeof(buf), cmd));
		lo[i] = strtoull(buf, NULL, 10);
	}
	CHECK_EQ(enc(HEADER_NUMA_TOPOLOGY, &b, &empty_env), 0);
	r = rd_of(&b);
	n = rd_u32(&r);
	CHECK_EQ(n, nn);
	for (i = 0; i < n && i < 64; i++) {
		CHECK_EQ(rd_u32(&r), atoi(nodes[i]));
		snprintf(cmd, sizeof(cmd), "awk '/MemTotal:/ {print $4}' "
			 "/sys/devices/system/node/node%.32s/meminfo", nodes[i]);
		CHECK(sh(buf, sizeof(buf), cmd));
		CHECK(between(rd_u64(&r), lo[i], strtoull(buf, NULL, 10)));
		CHECK(rd_u64(&r) > 0);		/* MemFree moves; just present */
		snprintf(cmd, sizeof(cmd), "cat /sys/devices/system/node/node%.32s/cpulist", nodes[i]);
		CHECK(sh(buf, sizeof(buf), cmd));
		CHECK_STR(rd_str(&r), buf);
	}
	CHECK(!r.bad && r.off == b.len);
	pbuf_free(&b);
}

TEST(pmu_mappings_and_caps)
{
	static char pmus[128][256];
	char buf[256], cmd[512];
	struct pbuf b = { 0 };
	uint32_t n, i, type;
	const char *name;
	struct rd r;
	int np;

	CHECK_EQ(enc(HEADER_PMU_MAPPINGS, &b, &empty_env), 0);
	r = rd_of(&b);
	np = sh_lines(pmus, 128, "ls -U /sys/bus/event_source/devices");
	n = rd_u32(&r);
	CHECK(n > 0 && (int)n <= np);
	for (i = 0; i < n; i++) {
		type = rd_u32(&r);
		name = rd_str(&r);
		snprintf(cmd, sizeof(cmd), "cat '/sys/bus/event_source/devices/%s/type'", name);
		CHECK(sh(buf, sizeof(buf), cmd));
		CHECK_EQ(type, atoi(buf));
		if ((int)i < np && strncmp(pmus[i], "cpu_", 4))
			CHECK_STR(name, pmus[i]);	/* perf's (readdir) order */
	}
	CHECK(!r.bad && r.off == b.len);

	/* PMU_CAPS: u32 count and that many well-formed entries */
	CHECK_EQ(enc(HEADER_PMU_CAPS, &b, &empty_env), 0);
	r = rd_of(&b);
	n = rd_u32(&r);
	for (i = 0; i < n; i++) {
		uint32_t k, nc = rd_u32(&r);

		for (k = 0; k < 2 * nc; k++)
			rd_str(&r);
		rd_str(&r);
	}
	CHECK(!r.bad && r.off == b.len);
	if (access("/sys/bus/event_source/devices/cpu", F_OK))
		CHECK_EQ(enc(HEADER_CPU_PMU_CAPS, &b, &empty_env), -ENODATA);
	else
		CHECK_EQ(enc(HEADER_CPU_PMU_CAPS, &b, &empty_env), 0);
	pbuf_free(&b);
}

TEST(cache)
{
	char cmd[512], buf[256];
	struct pbuf b = { 0 };
	uint32_t n, i, level, prev = 0, line, sets, ways;
	const char *type, *size, *map;
	struct rd r;

	CHECK_EQ(enc(HEADER_CACHE, &b, &empty_env), 0);
	r = rd_of(&b);
	CHECK_EQ(rd_u32(&r), 1);
	n = rd_u32(&r);
	CHECK(sh(buf, sizeof(buf), "cat /sys/devices/system/cpu/cpu*/cache/index[0-3]/level "
		 "2>/dev/null | wc -l"));
	CHECK(n > 0 || atoi(buf) == 0);
	for (i = 0; i < n; i++) {
		level = rd_u32(&r);
		line = rd_u32(&r);
		sets = rd_u32(&r);
		ways = rd_u32(&r);
		type = rd_str(&r);
		size = rd_str(&r);
		map = rd_str(&r);
		CHECK(level >= prev);			/* sorted by level */
		prev = level;
		/* some index directory of some CPU has exactly these values */
		snprintf(cmd, sizeof(cmd),
			 "cd /sys/devices/system/cpu && for d in cpu*/cache/index[0-3]; do "
			 "[ \"$(cat $d/level) $(cat $d/coherency_line_size) $(cat $d/number_of_sets) "
			 "$(cat $d/ways_of_associativity) $(cat $d/type) $(cat $d/size) "
			 "$(cat $d/shared_cpu_list)\" = '%u %u %u %u %s %s %s' ] && echo yes && break; "
			 "done", level, line, sets, ways, type, size, map);
		CHECK(sh(buf, sizeof(buf), cmd) && !strcmp(buf, "yes"));
	}
	CHECK(!r.bad && r.off == b.len);
	pbuf_free(&b);
}

TEST(mem_topology)
{
	char cmd[512], buf[256];
	struct pbuf b = { 0 };
	uint64_t nr, i, node, nbits, w, k, bits_set;
	struct rd r;

	if (access("/sys/devices/system/memory/block_size_bytes", R_OK)) {
		CHECK(enc(HEADER_MEM_TOPOLOGY, &b, &empty_env) < 0);
		return;
	}
	CHECK_EQ(enc(HEADER_MEM_TOPOLOGY, &b, &empty_env), 0);
	r = rd_of(&b);
	CHECK_EQ(rd_u64(&r), 1);
	CHECK(sh(buf, sizeof(buf), "cat /sys/devices/system/memory/block_size_bytes"));
	CHECK_EQ(rd_u64(&r), strtoull(buf, NULL, 16));
	nr = rd_u64(&r);
	CHECK(sh(buf, sizeof(buf), "ls -d /sys/devices/system/node/node[0-9]* | wc -l"));
	CHECK_EQ(nr, atoi(buf));
	for (i = 0; i < nr && !r.bad; i++) {
		node = rd_u64(&r);
		nbits = rd_u64(&r);
		CHECK_EQ(rd_u64(&r), nbits);
		snprintf(cmd, sizeof(cmd), "ls /sys/devices/system/node/node%llu | "
			 "sed -n 's/^memory\\([0-9]\\+\\)$/\\1/p' | sort -n | tail -1",
			 (unsigned long long)node);
		buf[0] = '\0';
		sh(buf, sizeof(buf), cmd);
		CHECK_EQ(nbits, (uint64_t)atoll(buf) + 1);
		for (k = bits_set = 0; k < (nbits + 63) / 64; k++) {
			w = rd_u64(&r);
			bits_set += (uint64_t)__builtin_popcountll(w);
		}
		snprintf(cmd, sizeof(cmd), "ls /sys/devices/system/node/node%llu | "
			 "grep -c '^memory[0-9]\\+$'", (unsigned long long)node);
		CHECK(sh(buf, sizeof(buf), cmd));
		CHECK_EQ(bits_set, atoll(buf));
	}
	CHECK(!r.bad && r.off == b.len);
	pbuf_free(&b);
}


/* Count lines of cmd's output that contain needle. */
static int sh_count(const char *cmd, const char *needle)
{
	char line[4096];
	FILE *f = popen(cmd, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	if (f)
		pclose(f);
	return n;
}

/*
 * A whole file through the lead's writer, read by perf itself: no warning,
 * and `perf report --header-only -I` lists what perf record -k mono lists
 * (the same "missing features" line on this kind of machine).
 */
TEST(full_file_perf_header)
{
	char dir[] = "/tmp/precord-test-features.XXXXXX", path[256], cmd[1024];
	char *argv[] = { "precord", "-k", "mono", "-g", "--", "sleep", "0.2", NULL };
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .size = 128 };
	struct perfdata_build_id bids[2];
	struct perfdata_env env = { .argc = 7, .argv = argv, .have_clock = true,
				    .clockid = CLOCK_MONOTONIC, .clock_res_ns = 1 };
	struct perfdata_sample_id sid = { .pid = 42, .tid = 42, .time = 1000 };
	struct perfdata_sample smp = { .misc = PERF_RECORD_MISC_USER, .ip = 0x401000,
				       .pid = 42, .tid = 42, .time = 2000, .period = 250000 };
	const char *missing = "missing features: TRACING_DATA BRANCH_STACK GROUP_DESC "
			      "STAT DIR_FORMAT COMPRESSED";
	struct perfdata_writer *w;
	struct pbuf rec = { 0 };
	struct timespec ts;
	__u64 id = 1;
	int fd, n;

	if (system("command -v perf >/dev/null 2>&1")) {
		fprintf(stderr, "  (perf not installed: skipped)\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/p.data", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	w = perfdata_writer__new(fd);
	CHECK(w != NULL);
	if (!w)
		return;
	attr.sample_type = PREC_SAMPLE_BASE_BITS;
	attr.sample_freq = 4000;
	attr.freq = 1;
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	CHECK_EQ(perfdata_writer__add_evsel(w, &attr, "cpu-clock:pppH", &id, 1), 0);
	CHECK_EQ(perfdata_writer__begin(w), 0);
	CHECK_EQ(perfdata_encode_comm(&rec, attr.sample_type, 42, 42, "sleep", false, &sid), 0);
	smp.id = id;
	CHECK_EQ(perfdata_writer__append(w, rec.data, rec.len), 0);
	pbuf_reset(&rec);
	CHECK_EQ(perfdata_encode_sample(&rec, attr.sample_type, &smp), 0);
	CHECK_EQ(perfdata_writer__queue(w, smp.time, rec.data, rec.len), 0);
	n = kernel_build_id(bids[0].id);
	bids[0].cpumode = PERF_RECORD_MISC_KERNEL;
	bids[0].size = (__u8)(n > 0 ? n : 0);
	bids[0].filename = "[kernel.kallsyms]";
	n = vdso_build_id(bids[1].id, NULL, NULL);
	bids[1].cpumode = PERF_RECORD_MISC_USER;
	bids[1].size = (__u8)(n > 0 ? n : 0);
	bids[1].filename = "[vdso]";
	env.build_ids = bids;
	env.nr_build_ids = 2;
	env.first_sample_time = 2000;
	env.last_sample_time = 2000;
	clock_gettime(CLOCK_REALTIME, &ts);
	env.clock_tod_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	env.clock_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	CHECK_EQ(perfdata_writer__finish(w, &env), 0);
	perfdata_writer__free(w);

	/* nothing on stderr */
	snprintf(cmd, sizeof(cmd), "cd %s && HOME=%s perf report -i p.data --header-only -I "
		 "2>&1 >/dev/null", dir, dir);
	CHECK_EQ(sh_count(cmd, ""), 0);
	snprintf(cmd, sizeof(cmd), "cd %s && HOME=%s perf report -i p.data --header-only -I "
		 "2>/dev/null", dir, dir);
	CHECK_EQ(sh_count(cmd, missing), 1);
	CHECK_EQ(sh_count(cmd, "# hostname : "), 1);
	CHECK_EQ(sh_count(cmd, "# perf version : " PRECORD_VERSION " (precord)"), 1);
	CHECK_EQ(sh_count(cmd, "# nrcpus avail : "), 1);
	CHECK_EQ(sh_count(cmd, "# cmdline : "), 1);
	CHECK_EQ(sh_count(cmd, "# event : name = cpu-clock:pppH"), 1);
	CHECK_EQ(sh_count(cmd, "# sibling sockets : "), 1);
	CHECK(sh_count(cmd, "Socket ID") >= 1);
	CHECK_EQ(sh_count(cmd, "# pmu mappings: "), 1);
	CHECK_EQ(sh_count(cmd, "# CPU cache info:"), 1);
	CHECK_EQ(sh_count(cmd, "# memory nodes (nr "), 1);
	CHECK_EQ(sh_count(cmd, "# clockid: monotonic (1)"), 1);
	CHECK_EQ(sh_count(cmd, "# reference time: "), 1);
	snprintf(cmd, sizeof(cmd), "cd %s && HOME=%s perf buildid-list -i p.data 2>&1", dir, dir);
	CHECK_EQ(sh_count(cmd, " [kernel.kallsyms]"), 1);
	CHECK_EQ(sh_count(cmd, " [vdso]"), 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(!system(cmd));
	pbuf_free(&rec);
}

int main(void)
{
	RUN(uname_strings);
	RUN(nrcpus_mem_cpu);
	RUN(cmdline);
	RUN(event_desc_bytes);
	RUN(build_id_bytes);
	RUN(times_and_clock);
	RUN(constant_features);
	RUN(auxtrace_empty_index);
	RUN(not_written);
	RUN(append_and_nonempty);
	RUN(cpu_topology);
	RUN(numa_topology);
	RUN(pmu_mappings_and_caps);
	RUN(cache);
	RUN(mem_topology);
	RUN(full_file_perf_header);
	return HARNESS_DONE();
}
