// SPDX-License-Identifier: GPL-2.0
/*
 * PMU feature payloads (PMU_MAPPINGS, CPU_PMU_CAPS, PMU_CAPS), read from
 * /sys/bus/event_source/devices the way perf 6.1's pmu.c scans it: in
 * readdir order, skipping PMUs without a readable "type" and "cpu_*"
 * PMUs that are not mounted hybrid PMUs.
 */
#include "perfdata/features_sys.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "util/log.h"

#define MAX_PMUS	4096

struct pmu_info {
	char name[NAME_MAX + 1];
	__u32 type;
};

static bool pmu_type(const char *name, __u32 *type)
{
	char buf[64];

	if (perfdata_sys_read(buf, sizeof(buf), SYS_PMUS "/%s/type", name) <= 0)
		return false;
	return sscanf(buf, "%u", type) == 1;
}

/* The PMUs perf lists, in its order.  Count or -errno; *out malloc'd. */
static int pmus_scan(struct pmu_info **out)
{
	DIR *dir = opendir(SYS_PMUS);
	struct pmu_info *p = NULL, *np;
	struct dirent *ent;
	char cpus[PATH_MAX];
	int n = 0;

	if (!dir)
		return -errno;
	while ((ent = readdir(dir)) && n < MAX_PMUS) {
		if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..") ||
		    strlen(ent->d_name) > NAME_MAX)
			continue;
		snprintf(cpus, sizeof(cpus), SYS_PMUS "/%s/cpus", ent->d_name);
		if (!strncmp(ent->d_name, "cpu_", 4) && access(cpus, F_OK))
			continue;	/* perf: "cpu_*" only if hybrid-mounted */
		np = realloc(p, (size_t)(n + 1) * sizeof(*p));
		if (!np) {
			n = -ENOMEM;
			break;
		}
		p = np;
		strcpy(p[n].name, ent->d_name);
		if (pmu_type(p[n].name, &p[n].type))
			n++;
	}
	closedir(dir);
	if (n < 0)
		free(p);
	else
		*out = p;
	return n;
}

/*
 * File format:
 *	u32 nr;
 *	{ u32 type; str name; }[nr]
 */
int perfdata_feat_write_pmu_mappings(struct pbuf *out, const struct perfdata_env *env)
{
	struct pmu_info *pmus = NULL;
	int n = pmus_scan(&pmus), i;

	(void)env;
	if (n < 0)
		return n;
	pbuf_put_u32(out, (__u32)n);
	for (i = 0; i < n; i++) {
		pbuf_put_u32(out, pmus[i].type);
		pbuf_put_perf_str(out, pmus[i].name);
	}
	free(pmus);
	return out->err;
}

/*
 * u32 nr_caps, then nr_caps × (str name, str value) from <pmu>/caps/.
 * The value is the file's first line minus its last character (perf's
 * perf_pmu__new_caps).  Returns nr_caps or -errno.
 */
static int pmu_caps_put(struct pbuf *out, const char *pmu)
{
	char path[PATH_MAX], val[128];
	struct dirent *ent;
	size_t at = out->len;
	__u32 nr = 0;
	FILE *f;
	DIR *dir;

	snprintf(path, sizeof(path), SYS_PMUS "/%s/caps", pmu);
	pbuf_put_u32(out, 0);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((ent = readdir(dir))) {
		if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), SYS_PMUS "/%s/caps/%s", pmu, ent->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f) && val[0]) {
			val[strlen(val) - 1] = '\0';
			pbuf_put_perf_str(out, ent->d_name);
			pbuf_put_perf_str(out, val);
			nr++;
		}
		fclose(f);
	}
	closedir(dir);
	if (!out->err)
		memcpy(out->data + at, &nr, sizeof(nr));
	return out->err ? out->err : (int)nr;
}

/* File format: u32 nr_caps; (str name, str value)[nr_caps] of PMU "cpu".
 * Not written without a "cpu" PMU (perf drops it then). */
int perfdata_feat_write_cpu_pmu_caps(struct pbuf *out, const struct perfdata_env *env)
{
	__u32 type;
	int n;

	(void)env;
	if (!pmu_type("cpu", &type))
		return -ENODATA;
	n = pmu_caps_put(out, "cpu");
	return n < 0 ? n : 0;
}

/*
 * File format:
 *	u32 nr_pmu;          PMUs other than "cpu" that have caps
 *	{ u32 nr_caps; (str name, str value)[nr_caps]; str pmu_name; }[nr_pmu]
 * hybrid ("cpu_*") PMUs first.  Most machines: just u32 0.
 */
int perfdata_feat_write_pmu_caps(struct pbuf *out, const struct perfdata_env *env)
{
	struct pmu_info *pmus = NULL;
	struct pbuf body = { 0 };
	int n = pmus_scan(&pmus), i, pass, caps;
	__u32 nr = 0;
	size_t len;

	(void)env;
	if (n < 0)
		return n;
	for (pass = 0; pass < 2 && !body.err; pass++) {
		for (i = 0; i < n; i++) {
			if (!strcmp(pmus[i].name, "cpu") ||
			    !strncmp(pmus[i].name, "cpu_", 4) != !pass)
				continue;
			len = body.len;
			caps = pmu_caps_put(&body, pmus[i].name);
			if (caps <= 0) {
				body.len = len;
				continue;
			}
			pbuf_put_perf_str(&body, pmus[i].name);
			nr++;
		}
	}
	pbuf_put_u32(out, nr);
	pbuf_put(out, body.data, body.len);
	if (body.err)
		out->err = body.err;
	pbuf_free(&body);
	free(pmus);
	return out->err;
}
