// SPDX-License-Identifier: GPL-2.0
/*
 * Feature-section payloads, as perf record 6.1 writes them
 * (tools/perf/util/header.c write_*).  This file has the dispatch table
 * and the writers that need only the recording (env) or uname; the ones
 * that read /proc and /sys are in features_sys.c.
 *
 * "str" below is perf's header string: u32 len, then the string
 * NUL-padded to len, a multiple of 64 (pbuf_put_perf_str).
 */
#include "perfdata/features.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "precord/perf_file.h"
#include "perfdata/features_sys.h"
#include "util/log.h"

#ifndef PRECORD_VERSION
#define PRECORD_VERSION "unknown"
#endif

#define BUILD_ID_EVENT_SIZE	36	/* header 8 + pid 4 + build_id 24 */

typedef int (*feat_writer_t)(struct pbuf *out, const struct perfdata_env *env);

/*
 * File format: a sequence of entries, one per DSO:
 *
 *	struct perf_event_header header;  type 0, misc = cpumode | 1 << 15,
 *	                                  size = 36 + len
 *	s32  pid;                         -1: the host
 *	u8   data[20];                    the id, zero-padded
 *	u8   size;                        1..20 (valid because of misc bit 15)
 *	u8   reserved[3];
 *	char filename[len];               NUL-padded, len = align(strlen + 1, 64)
 */
static int write_build_id(struct pbuf *out, const struct perfdata_env *env)
{
	size_t i;

	for (i = 0; i < env->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &env->build_ids[i];
		size_t len = b->filename ? align_up(strlen(b->filename) + 1, 64) : 0;
		__u8 id[24] = { 0 };

		if (!b->filename || !b->filename[0] || b->size < 1 ||
		    b->size > BUILD_ID_MAX || BUILD_ID_EVENT_SIZE + len > UINT16_MAX) {
			pr_warn("BUILD_ID: skipping entry %zu (%s): bad size or name", i,
				b->filename ? b->filename : "no name");
			continue;
		}
		memcpy(id, b->id, b->size);
		id[20] = b->size;
		pbuf_put_u32(out, 0);
		pbuf_put_u16(out, (__u16)(b->cpumode | PERF_RECORD_MISC_BUILD_ID_SIZE));
		pbuf_put_u16(out, (__u16)(BUILD_ID_EVENT_SIZE + len));
		pbuf_put_u32(out, (__u32)-1);
		pbuf_put(out, id, sizeof(id));
		pbuf_put(out, b->filename, strlen(b->filename));
		pbuf_put_zero(out, len - strlen(b->filename));
	}
	return out->err;
}

size_t perfdata_build_id_entry_size(const struct perfdata_build_id *b)
{
	return BUILD_ID_EVENT_SIZE + (b->filename ? align_up(strlen(b->filename) + 1, 64) : 0);
}

/* File format: str uname.nodename / .release / .machine. */
static int write_uname_field(struct pbuf *out, int feat)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	pbuf_put_perf_str(out, feat == HEADER_HOSTNAME ? u.nodename :
			       feat == HEADER_OSRELEASE ? u.release : u.machine);
	return out->err;
}

static int write_hostname(struct pbuf *out, const struct perfdata_env *env)
{
	(void)env;
	return write_uname_field(out, HEADER_HOSTNAME);
}

static int write_osrelease(struct pbuf *out, const struct perfdata_env *env)
{
	(void)env;
	return write_uname_field(out, HEADER_OSRELEASE);
}

static int write_arch(struct pbuf *out, const struct perfdata_env *env)
{
	(void)env;
	return write_uname_field(out, HEADER_ARCH);
}

/* File format: str version, "0.1.0 (precord)" where perf has "6.1.192". */
static int write_version(struct pbuf *out, const struct perfdata_env *env)
{
	(void)env;
	pbuf_put_perf_str(out, PRECORD_VERSION " (precord)");
	return out->err;
}

/*
 * File format:
 *	u32 nr;            1 + argc - 1
 *	str exe;           readlink("/proc/self/exe")
 *	str argv[1..argc-1];
 * (perf's argv starts at "record", i.e. after the program name.)
 */
static int write_cmdline(struct pbuf *out, const struct perfdata_env *env)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int i, argc = env->argv && env->argc > 0 ? env->argc : 1;

	if (n <= 0)
		n = (ssize_t)strlen(strcpy(exe, "precord"));
	exe[n] = '\0';
	pbuf_put_u32(out, (__u32)argc);
	pbuf_put_perf_str(out, exe);
	for (i = 1; i < argc; i++)
		pbuf_put_perf_str(out, env->argv[i] ? env->argv[i] : "");
	return out->err;
}

/*
 * File format:
 *	u32 nr;            events
 *	u32 attr_size;     128
 *	per event:
 *		struct perf_event_attr attr;   128 bytes, attr.size = 128
 *		u32 nr_ids;
 *		str name;
 *		u64 ids[nr_ids];               not aligned
 */
static int write_event_desc(struct pbuf *out, const struct perfdata_env *env)
{
	size_t i;

	if (!env->nr_evsels || !env->evsels)
		return -ENODATA;
	pbuf_put_u32(out, (__u32)env->nr_evsels);
	pbuf_put_u32(out, PERF_ATTR_WRITE_SIZE);
	for (i = 0; i < env->nr_evsels; i++) {
		const struct perfdata_evsel *e = &env->evsels[i];
		__u8 attr[PERF_ATTR_WRITE_SIZE] = { 0 };
		__u32 size = PERF_ATTR_WRITE_SIZE;

		if (e->nr_ids && !e->ids)
			return -EINVAL;
		memcpy(attr, &e->attr, sizeof(e->attr) < sizeof(attr) ?
				       sizeof(e->attr) : sizeof(attr));
		memcpy(attr + 4, &size, sizeof(size));
		pbuf_put(out, attr, sizeof(attr));
		pbuf_put_u32(out, e->nr_ids);
		pbuf_put_perf_str(out, e->name ? e->name : "unknown");
		pbuf_put(out, e->ids, (size_t)e->nr_ids * sizeof(__u64));
	}
	return out->err;
}

/* File format: u64 first_sample_time, u64 last_sample_time. */
static int write_sample_time(struct pbuf *out, const struct perfdata_env *env)
{
	pbuf_put_u64(out, env->first_sample_time);
	pbuf_put_u64(out, env->last_sample_time);
	return out->err;
}

/* File format: u64 resolution of the clock in ns (perf drops it if 0). */
static int write_clockid(struct pbuf *out, const struct perfdata_env *env)
{
	if (!env->have_clock || !env->clock_res_ns)
		return -ENODATA;
	pbuf_put_u64(out, env->clock_res_ns);
	return out->err;
}

/* File format: u32 version = 1, u32 clockid, u64 tod_ns, u64 clockid_ns. */
static int write_clock_data(struct pbuf *out, const struct perfdata_env *env)
{
	if (!env->have_clock)
		return -ENODATA;
	pbuf_put_u32(out, 1);
	pbuf_put_u32(out, (__u32)env->clockid);
	pbuf_put_u64(out, env->clock_tod_ns);
	pbuf_put_u64(out, env->clock_ns);
	return out->err;
}

/* File format: u32 count = 0 (no BPF program info / BTF recorded). */
static int write_u32_zero(struct pbuf *out, const struct perfdata_env *env)
{
	(void)env;
	pbuf_put_u32(out, 0);
	return out->err;
}

/*
 * File format: u64 nr = 0, then nr × {u64 file_offset, u64 size}: the AUX
 * area index.  precord takes no AUX data, so the index is empty (8 bytes;
 * an empty section would make perf drop every later feature).
 */
static int write_auxtrace(struct pbuf *out, const struct perfdata_env *env)
{
	(void)env;
	pbuf_put_u64(out, 0);
	return out->err;
}

static const feat_writer_t feat_writers[HEADER_LAST_FEATURE] = {
	[HEADER_BUILD_ID]	= write_build_id,
	[HEADER_HOSTNAME]	= write_hostname,
	[HEADER_OSRELEASE]	= write_osrelease,
	[HEADER_VERSION]	= write_version,
	[HEADER_ARCH]		= write_arch,
	[HEADER_NRCPUS]		= perfdata_feat_write_nrcpus,
	[HEADER_CPUDESC]	= perfdata_feat_write_cpudesc,
	[HEADER_CPUID]		= perfdata_feat_write_cpuid,
	[HEADER_TOTAL_MEM]	= perfdata_feat_write_total_mem,
	[HEADER_CMDLINE]	= write_cmdline,
	[HEADER_EVENT_DESC]	= write_event_desc,
	[HEADER_CPU_TOPOLOGY]	= perfdata_feat_write_cpu_topology,
	[HEADER_NUMA_TOPOLOGY]	= perfdata_feat_write_numa_topology,
	[HEADER_PMU_MAPPINGS]	= perfdata_feat_write_pmu_mappings,
	[HEADER_CACHE]		= perfdata_feat_write_cache,
	[HEADER_SAMPLE_TIME]	= write_sample_time,
	[HEADER_MEM_TOPOLOGY]	= perfdata_feat_write_mem_topology,
	[HEADER_AUXTRACE]	= write_auxtrace,
	[HEADER_CLOCKID]	= write_clockid,
	[HEADER_BPF_PROG_INFO]	= write_u32_zero,
	[HEADER_BPF_BTF]	= write_u32_zero,
	[HEADER_CPU_PMU_CAPS]	= perfdata_feat_write_cpu_pmu_caps,
	[HEADER_CLOCK_DATA]	= write_clock_data,
	[HEADER_PMU_CAPS]	= perfdata_feat_write_pmu_caps,
	/*
	 * Not written, as perf record does not write them for a plain
	 * sampling session: TRACING_DATA (no tracepoint attrs), BRANCH_STACK,
	 * GROUP_DESC, STAT, DIR_FORMAT, COMPRESSED, HYBRID_TOPOLOGY.
	 * AUXTRACE is written, as an empty index, so that readers see that
	 * the recording took no AUX area data.
	 */
};

int perfdata_feature_write(int feat, struct pbuf *out, const struct perfdata_env *env)
{
	size_t start = out->len;
	int old_err = out->err, err;

	if (feat <= 0 || feat >= HEADER_LAST_FEATURE || !feat_writers[feat])
		return -ENODATA;
	if (old_err)
		return old_err;
	err = feat_writers[feat](out, env);
	if (!err && out->len == start)
		err = -ENODATA;		/* never an empty payload */
	if (err) {
		out->len = start;
		out->err = 0;		/* a failed growth left the data intact */
	}
	return err;
}
