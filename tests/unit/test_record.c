// SPDX-License-Identifier: GPL-2.0
/* Record encoders: encode, parse the bytes back by perf's rules, compare. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "precord/perf_file.h"
#include "perfdata/record.h"

static __u64 rd64(const __u8 *p) { __u64 v; memcpy(&v, p, 8); return v; }
static __u32 rd32(const __u8 *p) { __u32 v; memcpy(&v, p, 4); return v; }

static const struct perf_event_header *hdr(const struct pbuf *b)
{
	return (const void *)b->data;
}

/* The layout of files with more than one attr: {pid,tid}{time}{cpu,res}{id}. */
#define ID	PREC_SAMPLE_ID_BITS
#define ID_SIZE	32

/* The sample_id_all trailer is parsed from the end, as perf does. */
static void check_trailer(const struct pbuf *b, const struct perfdata_sample_id *sid)
{
	const __u8 *t = b->data + b->len - ID_SIZE;

	CHECK_EQ(rd32(t), sid->pid);
	CHECK_EQ(rd32(t + 4), sid->tid);
	CHECK_EQ(rd64(t + 8), sid->time);
	CHECK_EQ(rd32(t + 16), sid->cpu);
	CHECK_EQ(rd64(t + 24), sid->id);
}

TEST(sample_all_fields)
{
	__u64 chain[] = { (__u64)-128, 0xffffffff81000010ULL, (__u64)-512, 0x401000, 0x401100 };
	struct perfdata_sample s = {
		.misc = PERF_RECORD_MISC_KERNEL, .id = 77, .ip = 0xffffffff81000010ULL,
		.pid = 10, .tid = 11, .time = 123456789, .addr = 0xabc, .cpu = 1,
		.period = 1001001, .callchain = chain, .nr_callchain = 5,
		.raw = "xyz", .raw_size = 3, .weight = 4242,
	};
	__u64 st = PREC_SAMPLE_BASE_BITS | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN |
		   PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT;
	struct pbuf b = { 0 };
	const __u8 *p;

	CHECK_EQ(perfdata_encode_sample(&b, st, &s), 0);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_SAMPLE);
	CHECK_EQ(hdr(&b)->misc, PERF_RECORD_MISC_KERNEL);
	CHECK_EQ(hdr(&b)->size, b.len);
	CHECK_EQ(b.len % 8, 0);
	p = b.data + 8;
	CHECK_EQ(rd64(p), 77); p += 8;			/* IDENTIFIER */
	CHECK(rd64(p) == s.ip); p += 8;			/* IP */
	CHECK_EQ(rd32(p), 10); CHECK_EQ(rd32(p + 4), 11); p += 8;
	CHECK_EQ(rd64(p), 123456789); p += 8;		/* TIME */
	CHECK_EQ(rd64(p), 0xabc); p += 8;		/* ADDR */
	CHECK_EQ(rd32(p), 1); p += 8;			/* CPU */
	CHECK_EQ(rd64(p), 1001001); p += 8;		/* PERIOD */
	CHECK_EQ(rd64(p), 5); p += 8;			/* CALLCHAIN */
	CHECK(!memcmp(p, chain, sizeof(chain))); p += sizeof(chain);
	CHECK_EQ(rd32(p), 4); CHECK(!memcmp(p + 4, "xyz", 3)); p += 8;	/* RAW */
	CHECK_EQ(rd64(p), 4242); p += 8;		/* WEIGHT */
	CHECK(p == b.data + b.len);
	pbuf_free(&b);
}

TEST(sample_user_regs)
{
	__u64 regs[2] = { 0x1111, 0x2222 };
	struct perfdata_sample s = { .ip = 1, .regs_abi = 2, .regs = regs, .nr_regs = 2,
				     .weight = 9 };
	__u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_WEIGHT;
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, st, &s), 0);
	CHECK_EQ(b.len, 8 + 8 + 8 + 16 + 8);
	CHECK_EQ(rd64(b.data + 16), 2);		/* abi */
	CHECK_EQ(rd64(b.data + 24), 0x1111);
	CHECK_EQ(rd64(b.data + 32), 0x2222);
	CHECK_EQ(rd64(b.data + 40), 9);		/* weight after the registers */
	pbuf_reset(&b);
	s.regs_abi = 0;				/* no registers: just the abi word */
	CHECK_EQ(perfdata_encode_sample(&b, st, &s), 0);
	CHECK_EQ(b.len, 8 + 8 + 8 + 8);
	pbuf_free(&b);
}

/* The in-place writer of the hot path gives perfdata_encode_sample's bytes. */
TEST(base_sample_in_place_matches_encoder)
{
	struct perfdata_sample s = { .misc = PERF_RECORD_MISC_USER, .id = 0x7e00000000000003ULL,
				     .ip = 0x401136, .pid = 11, .tid = 12, .time = 123456789,
				     .cpu = 3, .period = 777, .weight = 777 };

	for (int weight = 0; weight < 2; weight++) {
		__u64 st = PREC_SAMPLE_BASE_BITS | (weight ? PERF_SAMPLE_WEIGHT : 0);
		__u8 dst[128];
		struct pbuf b = { 0 };
		size_t n = perfdata_base_sample_size(weight);

		CHECK_EQ(perfdata_encode_sample(&b, st, &s), 0);
		CHECK_EQ(n, b.len);
		memset(dst, 0xa5, sizeof(dst));
		perfdata_put_base_sample(dst, &s, weight);
		CHECK(!memcmp(dst, b.data, b.len));
		CHECK_EQ(dst[n], 0xa5);		/* nothing written past the record */
		pbuf_free(&b);
	}
}

TEST(sample_minimal_and_unsupported_bits)
{
	struct perfdata_sample s = { .ip = 1 };
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, PERF_SAMPLE_IP, &s), 0);
	CHECK_EQ(b.len, 16);
	CHECK_EQ(perfdata_encode_sample(&b, PERF_SAMPLE_IP | PERF_SAMPLE_READ, &s), -EINVAL);
	CHECK_EQ(b.len, 16);		/* nothing appended on error */
	pbuf_free(&b);
}

TEST(sample_too_big_is_refused_whole)
{
	static __u64 chain[9000];
	struct perfdata_sample s = { .callchain = chain, .nr_callchain = 9000 };
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, PERF_SAMPLE_CALLCHAIN, &s), -E2BIG);
	CHECK_EQ(b.len, 0);
	pbuf_free(&b);
}

TEST(comm_truncates_and_pads)
{
	struct perfdata_sample_id sid = { .pid = 5, .tid = 6, .time = 99, .cpu = 1, .id = 3 };
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_comm(&b, ID, 5, 6, "a-very-long-command-name", true, &sid), 0);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_COMM);
	CHECK_EQ(hdr(&b)->misc, PERF_RECORD_MISC_COMM_EXEC);
	CHECK_EQ(b.len % 8, 0);
	CHECK_EQ(rd32(b.data + 8), 5);
	CHECK_STR((const char *)b.data + 16, "a-very-long-com");	/* TASK_COMM_LEN - 1 */
	CHECK_EQ(b.len, 8 + 8 + 16 + ID_SIZE);
	check_trailer(&b, &sid);
	pbuf_free(&b);
}

TEST(mmap2_inode_and_build_id_forms)
{
	struct perfdata_mmap2 m = {
		.misc = PERF_RECORD_MISC_USER, .pid = 1, .tid = 2, .start = 0x400000,
		.len = 0x1000, .pgoff = 0x2000, .maj = 8, .min = 1, .ino = 1234,
		.ino_generation = 7, .prot = 5, .flags = 2, .filename = "/usr/bin/x",
	};
	struct perfdata_sample_id sid = { .time = 5 };
	struct pbuf b = { 0 };
	const __u8 *p;

	CHECK_EQ(perfdata_encode_mmap2(&b, ID, &m, &sid), 0);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_MMAP2);
	CHECK_EQ(hdr(&b)->misc, PERF_RECORD_MISC_USER);
	p = b.data + 8;
	CHECK_EQ(rd64(p + 8), 0x400000);
	CHECK_EQ(rd64(p + 16), 0x1000);
	CHECK_EQ(rd64(p + 24), 0x2000);
	CHECK_EQ(rd32(p + 32), 8);
	CHECK_EQ(rd64(p + 40), 1234);
	CHECK_EQ(rd64(p + 48), 7);
	CHECK_EQ(rd32(p + 56), 5);
	CHECK_STR((const char *)p + 64, "/usr/bin/x");
	CHECK_EQ(b.len % 8, 0);
	check_trailer(&b, &sid);

	pbuf_reset(&b);
	m.build_id_size = 20;
	memset(m.build_id, 0xab, 20);
	CHECK_EQ(perfdata_encode_mmap2(&b, ID, &m, &sid), 0);
	CHECK_EQ(hdr(&b)->misc, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	p = b.data + 8;
	CHECK_EQ(p[32], 20);
	CHECK_EQ(p[36], 0xab);
	CHECK_EQ(p[55], 0xab);

	m.build_id_size = 21;
	CHECK_EQ(perfdata_encode_mmap2(&b, ID, &m, &sid), -EINVAL);
	pbuf_free(&b);
}

TEST(kernel_mmap)
{
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_kernel_mmap(&b, ID, 0xffffffff81000000ULL, 0x1206448,
					     0xffffffff81000000ULL, "[kernel.kallsyms]_text", NULL), 0);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_MMAP);
	CHECK_EQ(hdr(&b)->misc, PERF_RECORD_MISC_KERNEL);
	CHECK_EQ(rd32(b.data + 8), 0xffffffff);
	CHECK(rd64(b.data + 32) == 0xffffffff81000000ULL);	/* pgoff = _text */
	CHECK_STR((const char *)b.data + 40, "[kernel.kallsyms]_text");
	pbuf_free(&b);
}

TEST(task_lost_and_markers)
{
	struct perfdata_sample_id sid = { .id = 9 };
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_task(&b, ID, PERF_RECORD_FORK, 3, 2, 4, 2, 77, 0, &sid), 0);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_FORK);
	CHECK_EQ(rd32(b.data + 8), 3);
	CHECK_EQ(rd32(b.data + 12), 2);
	CHECK_EQ(rd64(b.data + 24), 77);
	CHECK_EQ(perfdata_encode_task(&b, ID, PERF_RECORD_COMM, 1, 1, 1, 1, 0, 0, &sid), -EINVAL);
	pbuf_reset(&b);
	CHECK_EQ(perfdata_encode_lost_samples(&b, ID, 12, &sid), 0);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_LOST_SAMPLES);
	CHECK_EQ(rd64(b.data + 8), 12);
	check_trailer(&b, &sid);
	pbuf_reset(&b);
	CHECK_EQ(perfdata_encode_lost(&b, ID, 9, 3, &sid), 0);
	CHECK_EQ(rd64(b.data + 8), 9);
	CHECK_EQ(rd64(b.data + 16), 3);
	pbuf_reset(&b);
	CHECK_EQ(perfdata_encode_finished_round(&b), 0);
	CHECK_EQ(perfdata_encode_finished_init(&b), 0);
	CHECK_EQ(b.len, 16);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_FINISHED_ROUND);
	CHECK_EQ(((const struct perf_event_header *)(b.data + 8))->type, PERF_RECORD_FINISHED_INIT);
	pbuf_free(&b);
}

/* --all-cgroups: the id is the last field (after WEIGHT), as perf's
 * evsel__parse_sample reads it. */
TEST(sample_cgroup_comes_last)
{
	__u64 chain[] = { (__u64)-512, 0x401000 };
	struct perfdata_sample s = { .ip = 0x401000, .pid = 5, .tid = 6, .time = 7, .cpu = 1,
				     .period = 250000, .callchain = chain, .nr_callchain = 2,
				     .weight = 3, .cgroup = 0x1234 };
	__u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		   PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CGROUP;
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, st, &s), 0);
	CHECK_EQ(b.len, 8 + 8 + 8 + 8 + 8 + 8 + 8 + 16 + 8);
	CHECK_EQ(hdr(&b)->size, b.len);
	CHECK_EQ(rd64(b.data + 48), 2);			/* CALLCHAIN nr */
	CHECK_EQ(rd64(b.data + b.len - 8), 0x1234);	/* CGROUP */
	pbuf_reset(&b);
	CHECK_EQ(perfdata_encode_sample(&b, st | PERF_SAMPLE_WEIGHT, &s), 0);
	CHECK_EQ(rd64(b.data + b.len - 16), 3);		/* WEIGHT, then */
	CHECK_EQ(rd64(b.data + b.len - 8), 0x1234);	/* CGROUP */
	pbuf_free(&b);
}

/* The largest dwarf stack still leaves room for the cgroup id. */
TEST(sample_cgroup_after_largest_stack)
{
	size_t size = 65528;
	__u8 *stack = malloc(size);
	__u64 regs[1] = { 1 };
	struct perfdata_sample s = { .ip = 1, .regs_abi = 2, .regs = regs, .nr_regs = 1,
				     .stack = stack, .stack_dyn = (__u32)size, .cgroup = 99 };
	__u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
		   PERF_SAMPLE_CGROUP;
	struct pbuf b = { 0 };

	CHECK(stack != NULL);
	if (stack) {
		memset(stack, 0x5a, size);
		CHECK_EQ(perfdata_encode_sample(&b, st, &s), 0);
		CHECK(b.len <= 0xfff8);
		CHECK_EQ(hdr(&b)->size, b.len);
		CHECK_EQ(rd64(b.data + b.len - 8), 99);
	}
	pbuf_free(&b);
	free(stack);
}

/* PERF_RECORD_CGROUP: u64 id, the path NUL-padded to 8, the trailer. */
TEST(cgroup_record)
{
	struct perfdata_sample_id sid = { .pid = 1, .tid = 2, .time = 3, .cpu = 1, .id = 4 };
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_cgroup(&b, ID, 1, "/", NULL), 0);
	CHECK_EQ(hdr(&b)->type, PERF_RECORD_CGROUP);
	CHECK_EQ(hdr(&b)->misc, 0);
	CHECK_EQ(b.len, 8 + 8 + 8 + ID_SIZE);		/* "/" takes 8 */
	CHECK_EQ(rd64(b.data + 8), 1);
	CHECK_STR((const char *)b.data + 16, "/");
	pbuf_reset(&b);
	CHECK_EQ(perfdata_encode_cgroup(&b, ID, 0x2a5f, "/precord-test.ab/x", &sid), 0);
	CHECK_EQ(b.len, 8 + 8 + 24 + ID_SIZE);		/* 19 bytes take 24 */
	CHECK_EQ(hdr(&b)->size, b.len);
	CHECK_EQ(rd64(b.data + 8), 0x2a5f);
	CHECK_STR((const char *)b.data + 16, "/precord-test.ab/x");
	CHECK(b.data[16 + 18] == 0 && b.data[16 + 23] == 0);
	check_trailer(&b, &sid);
	pbuf_free(&b);
}

/* Every layout precord writes: the trailer has the attr's id fields in
 * perf's order, and parsing it gives back what was written. */
TEST(trailer_follows_the_layout)
{
	static const struct {
		__u64 type;
		size_t size;
	} layouts[] = {
		{ PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD, 16 },
		{ PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN, 24 },
		{ PREC_SAMPLE_BASE_BITS | PERF_SAMPLE_CALLCHAIN, 32 },
		{ PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU, 32 },
		{ PERF_SAMPLE_IP, 0 },
	};
	struct perfdata_sample_id sid = { .pid = 5, .tid = 6, .time = 99, .cpu = 1, .id = 3 };

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		__u64 t = layouts[i].type;
		struct perfdata_sample_id got;
		struct pbuf b = { 0 };
		const __u8 *p;

		CHECK_EQ(perfdata_sample_id_size(t), layouts[i].size);
		CHECK_EQ(perfdata_encode_comm(&b, t, 5, 6, "x", false, &sid), 0);
		CHECK_EQ(b.len, 8 + 8 + 8 + layouts[i].size);
		p = b.data + 24;
		if (t & PERF_SAMPLE_TID) {
			CHECK_EQ(rd32(p), 5);
			CHECK_EQ(rd32(p + 4), 6);
			p += 8;
		}
		if (t & PERF_SAMPLE_TIME) {
			CHECK_EQ(rd64(p), 99);
			p += 8;
		}
		if (t & PERF_SAMPLE_ID) {
			CHECK_EQ(rd64(p), 3);
			p += 8;
		}
		if (t & PERF_SAMPLE_CPU) {
			CHECK_EQ(rd32(p), 1);
			p += 8;
		}
		if (t & PERF_SAMPLE_IDENTIFIER) {
			CHECK_EQ(rd64(p), 3);
			p += 8;
		}
		CHECK(p == b.data + b.len);
		CHECK_EQ(perfdata_sample_id_parse(t, hdr(&b), 16, &got), 0);
		CHECK_EQ(got.pid, t & PERF_SAMPLE_TID ? 5 : 0);
		CHECK_EQ(got.time, t & PERF_SAMPLE_TIME ? 99 : 0);
		CHECK_EQ(got.cpu, t & PERF_SAMPLE_CPU ? 1 : 0);
		CHECK_EQ(got.id, t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER) ? 3 : 0);
		/* no room for the trailer after the fixed part: refused */
		if (layouts[i].size)
			CHECK_EQ(perfdata_sample_id_parse(t, hdr(&b), 24 + 8, &got), -EINVAL);
		pbuf_free(&b);
	}
}

#define K(x)	(0xffffffff81000000ULL + (x))
#define CK	((__u64)PERF_CONTEXT_KERNEL)
#define CU	((__u64)PERF_CONTEXT_USER)

static void check_chain(const __u64 *kern, __u32 nk, const __u64 *user, __u32 nu,
			const __u64 *want, __u32 nwant)
{
	__u64 out[16];
	__u32 n;

	memset(out, 0xee, sizeof(out));
	n = perfdata_callchain_build(out, kern, nk, user, nu);
	CHECK_EQ(n, nwant);
	CHECK(n <= nk + nu + 2);
	CHECK(!nwant || !memcmp(out, want, nwant * 8));
}

/* One marker per context whatever the stack helper gave, no trailing zeros. */
TEST(callchain_one_marker_per_context)
{
	const __u64 k[] = { K(1), K(2) }, km[] = { CK, K(1), K(2) };
	const __u64 u[] = { 0x401000, 0x402000 }, um[] = { CU, 0x401000, 0x402000 };
	const __u64 uz[] = { 0x401000, 0x402000, 0, 0 }, umz[] = { CU, 0x401000, 0x402000, 0 };
	const __u64 zeros[] = { 0, 0 }, only_marker[] = { CU };
	const __u64 mid_zero[] = { 0x401000, 0, 0x402000 };
	const __u64 both[] = { CK, K(1), K(2), CU, 0x401000, 0x402000 };
	const __u64 user_only[] = { CU, 0x401000, 0x402000 };
	const __u64 kern_only[] = { CK, K(1), K(2) };
	const __u64 keep_mid[] = { CU, 0x401000, 0, 0x402000 };
	/* seen with -a in a fuzzer built without frame pointers */
	const __u64 garbage[] = { 0x7f8eaceabb75, 0x100003f48, 0, ~0ULL };
	const __u64 garbage_out[] = { CU, 0x7f8eaceabb75, 0x100003f48 };

	check_chain(k, 2, u, 2, both, 6);		/* no markers (bpf_get_stack) */
	check_chain(km, 3, um, 3, both, 6);		/* markers (6.18, CALLCHAIN event) */
	check_chain(km, 3, u, 2, both, 6);
	check_chain(k, 2, umz, 4, both, 6);		/* marker and a trailing zero */
	check_chain(NULL, 0, uz, 4, user_only, 3);	/* user-mode sample */
	check_chain(km, 3, NULL, 0, kern_only, 3);	/* kernel thread */
	check_chain(NULL, 0, zeros, 2, NULL, 0);	/* nothing left: no marker */
	check_chain(km, 1, only_marker, 1, NULL, 0);
	check_chain(NULL, 0, mid_zero, 3, keep_mid, 4);	/* only the end is trimmed */
	check_chain(NULL, 0, garbage, 4, garbage_out, 3);	/* zero, then a "marker" */
}

TEST(perf_str_pads_to_64)
{
	struct pbuf b = { 0 };

	CHECK_EQ(pbuf_put_perf_str(&b, "abc"), 0);
	CHECK_EQ(b.len, 4 + 64);
	CHECK_EQ(rd32(b.data), 64);
	CHECK_STR((const char *)b.data + 4, "abc");
	pbuf_reset(&b);
	{
		char s[65];

		memset(s, 'x', 64);
		s[64] = 0;
		CHECK_EQ(pbuf_put_perf_str(&b, s), 0);
		CHECK_EQ(rd32(b.data), 128);
	}
	pbuf_free(&b);
}

/*
 * A dwarf-mode sample read back by perf's rules (evsel__parse_sample):
 * CALLCHAIN, then REGS_USER {abi, one u64 per mask bit when abi != 0},
 * then STACK_USER {size, data[size], dyn_size <= size when size != 0},
 * then WEIGHT.  Returns the pointer past what it read, NULL if perf
 * would refuse the sample.
 */
static const __u8 *parse_dwarf(const __u8 *p, const __u8 *end, __u32 nr_regs,
			       __u64 *abi, const __u64 **regs, __u64 *size,
			       const __u8 **data, __u64 *dyn)
{
	__u64 nr = rd64(p);

	p += 8 + 8 * nr;				/* CALLCHAIN */
	*abi = rd64(p);
	p += 8;
	*regs = *abi ? (const __u64 *)p : NULL;
	if (*abi)
		p += 8 * nr_regs;
	*size = rd64(p);
	p += 8;
	*data = NULL;
	*dyn = 0;
	if (*size) {
		if (p + *size + 8 > end)
			return NULL;
		*data = p;
		p += *size;
		*dyn = rd64(p);
		p += 8;
		if (*dyn > *size)
			return NULL;			/* "user stack dump failure" */
	}
	return p <= end ? p : NULL;
}

#define DWARF_BITS (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN | \
		    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

TEST(sample_dwarf_regs_and_stack_round_trip)
{
	__u64 chain[] = { (__u64)-128, 0xffffffff81000010ULL, 0xffffffff81000020ULL };
	__u64 regs[20], abi, size, dyn;
	__u8 stack[13];
	struct perfdata_sample s = {
		.misc = PERF_RECORD_MISC_KERNEL, .ip = chain[1], .pid = 3, .tid = 4,
		.callchain = chain, .nr_callchain = 3, .regs_abi = 2, .regs = regs,
		.nr_regs = 20, .stack = stack, .stack_dyn = sizeof(stack), .weight = 77,
	};
	const __u64 *r;
	const __u8 *data, *p;
	struct pbuf b = { 0 };

	for (int i = 0; i < 20; i++)
		regs[i] = 0x1000 + (__u64)i;
	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (__u8)(0xa0 + i);
	CHECK_EQ(perfdata_encode_sample(&b, DWARF_BITS | PERF_SAMPLE_WEIGHT, &s), 0);
	CHECK_EQ(hdr(&b)->size, b.len);
	CHECK_EQ(b.len % 8, 0);
	/* header, ip, tid, chain 1+3, abi + 20 regs, size, 16 bytes, dyn, weight */
	CHECK_EQ(b.len, 8 + 8 + 8 + 32 + 168 + 8 + 16 + 8 + 8);
	p = parse_dwarf(b.data + 24, b.data + b.len, 20, &abi, &r, &size, &data, &dyn);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(abi, 2);
	CHECK(r && !memcmp(r, regs, sizeof(regs)));
	CHECK_EQ(size, 16);		/* dyn_size rounded up to 8, not the attr's size */
	CHECK_EQ(dyn, sizeof(stack));
	CHECK(!memcmp(data, stack, sizeof(stack)));
	CHECK(data[13] == 0 && data[14] == 0 && data[15] == 0);	/* padding is zeros */
	CHECK_EQ(rd64(p), 77);		/* WEIGHT after STACK_USER */
	CHECK(p + 8 == b.data + b.len);
	pbuf_free(&b);
}

TEST(sample_dwarf_kernel_thread_has_no_regs_and_no_stack)
{
	__u64 chain[] = { (__u64)-128, 0xffffffff81000010ULL };
	struct perfdata_sample s = { .ip = chain[1], .callchain = chain, .nr_callchain = 2 };
	__u64 abi, size, dyn;
	const __u64 *r;
	const __u8 *data, *p;
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, DWARF_BITS, &s), 0);
	/* header, ip, tid, chain, abi 0 (no regs), size 0 (no data, no dyn_size) */
	CHECK_EQ(b.len, 8 + 8 + 8 + 24 + 8 + 8);
	p = parse_dwarf(b.data + 24, b.data + b.len, 20, &abi, &r, &size, &data, &dyn);
	CHECK(p == b.data + b.len);
	CHECK_EQ(abi, 0);
	CHECK(r == NULL);
	CHECK_EQ(size, 0);
	pbuf_free(&b);
}

TEST(sample_dwarf_empty_copy_writes_size_zero)
{
	__u64 regs[20] = { 0 }, abi, size, dyn;
	__u8 stack[8] = { 0 };
	struct perfdata_sample s = { .regs_abi = 2, .regs = regs, .nr_regs = 20,
				     .stack = stack, .stack_dyn = 0 };
	const __u64 *r;
	const __u8 *data, *p;
	struct pbuf b = { 0 };

	CHECK_EQ(perfdata_encode_sample(&b, DWARF_BITS, &s), 0);
	p = parse_dwarf(b.data + 24, b.data + b.len, 20, &abi, &r, &size, &data, &dyn);
	CHECK(p == b.data + b.len);
	CHECK_EQ(abi, 2);
	CHECK_EQ(size, 0);
	pbuf_free(&b);
}

/* 65528 bytes of stack cannot fit with the rest: cut as the kernel cuts it. */
TEST(sample_dwarf_largest_stack_is_cut_to_fit)
{
	__u64 chain[128], regs[20] = { 0 }, abi, size, dyn;
	__u8 *stack = malloc(65528);
	struct perfdata_sample s = { .callchain = chain, .nr_callchain = 128, .regs_abi = 2,
				     .regs = regs, .nr_regs = 20, .stack_dyn = 65528,
				     .weight = 5 };
	const __u64 *r;
	const __u8 *data, *p;
	struct pbuf b = { 0 };

	CHECK(stack != NULL);
	if (!stack)
		return;
	memset(stack, 0x5a, 65528);
	s.stack = stack;
	chain[0] = (__u64)-128;
	for (int i = 1; i < 128; i++)
		chain[i] = 0xffffffff81000000ULL + (__u64)i;
	CHECK_EQ(perfdata_encode_sample(&b, DWARF_BITS | PERF_SAMPLE_WEIGHT, &s), 0);
	CHECK(b.len <= 0xfff8);
	CHECK_EQ(hdr(&b)->size, b.len);
	p = parse_dwarf(b.data + 24, b.data + b.len, 20, &abi, &r, &size, &data, &dyn);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(size % 8, 0);
		CHECK_EQ(dyn, size);
		CHECK(size > 60000 && size < 65528);
		CHECK(data[0] == 0x5a && data[size - 1] == 0x5a);
		CHECK_EQ(rd64(p), 5);
		CHECK(p + 8 == b.data + b.len);
	}
	pbuf_free(&b);
	free(stack);
}

int main(void)
{
	RUN(sample_all_fields);
	RUN(sample_user_regs);
	RUN(sample_dwarf_regs_and_stack_round_trip);
	RUN(sample_dwarf_kernel_thread_has_no_regs_and_no_stack);
	RUN(sample_dwarf_empty_copy_writes_size_zero);
	RUN(sample_dwarf_largest_stack_is_cut_to_fit);
	RUN(base_sample_in_place_matches_encoder);
	RUN(sample_minimal_and_unsupported_bits);
	RUN(sample_too_big_is_refused_whole);
	RUN(comm_truncates_and_pads);
	RUN(mmap2_inode_and_build_id_forms);
	RUN(kernel_mmap);
	RUN(task_lost_and_markers);
	RUN(sample_cgroup_comes_last);
	RUN(sample_cgroup_after_largest_stack);
	RUN(cgroup_record);
	RUN(trailer_follows_the_layout);
	RUN(callchain_one_marker_per_context);
	RUN(perf_str_pads_to_64);
	return HARNESS_DONE();
}
