/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to features*.c: the feature writers that read the running system
 * (features_sys.c, features_pmu.c) and their small /sys readers.  Each
 * writer appends one payload and returns 0 or -errno.
 */
#ifndef PRECORD_PERFDATA_FEATURES_SYS_H
#define PRECORD_PERFDATA_FEATURES_SYS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/features.h"

#define SYS_CPU		"/sys/devices/system/cpu"
#define SYS_NODE	"/sys/devices/system/node"
#define SYS_PMUS	"/sys/bus/event_source/devices"
#define SYS_BUF		4096	/* a sysfs attribute is at most a page */

/* Read at most size - 1 bytes of the file named by fmt into buf, NUL
 * ended.  Returns the byte count (0 = empty) or -errno. */
int perfdata_sys_read(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* First line without its '\n' into buf[SYS_BUF] (perf: getline and cut).
 * 0, -ENODATA for an empty file, or -errno. */
#define sys_line(buf, ...)						\
	({ int _n = perfdata_sys_read(buf, SYS_BUF, __VA_ARGS__);	\
	   if (_n > 0)							\
		buf[strcspn(buf, "\n")] = '\0';				\
	   _n > 0 ? 0 : _n < 0 ? _n : -ENODATA; })

/* perf's sysfs__read_int(): atoi() of the content; -1 when unreadable. */
#define sys_int(v, ...)							\
	({ char _b[64];							\
	   int _n = perfdata_sys_read(_b, sizeof(_b), __VA_ARGS__);	\
	   if (_n > 0)							\
		*(v) = atoi(_b);					\
	   _n > 0 ? 0 : -1; })

/* Blanks cut from both ends, in place. */
char *perfdata_strim(char *s);
/* perf's cpu__max_present_cpu() ("present") / cpu__max_cpu() ("possible"):
 * the last id of that sysfs cpu list + 1, or 4096 as perf defaults. */
__u32 perfdata_cpu_max(const char *which);

int perfdata_feat_write_nrcpus(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_cpudesc(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_cpuid(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_total_mem(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_cpu_topology(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_numa_topology(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_pmu_mappings(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_cache(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_mem_topology(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_cpu_pmu_caps(struct pbuf *out, const struct perfdata_env *env);
int perfdata_feat_write_pmu_caps(struct pbuf *out, const struct perfdata_env *env);

#endif
