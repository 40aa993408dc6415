// SPDX-License-Identifier: GPL-2.0
/*
 * STAND-IN until the perf.data reader and symbolizer of user/report/ land:
 * the samples as `perf script` prints them.  Times: perf's monotonic
 * clock, placed on the wall clock by the file's mtime (the last sample).
 */
#include "source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "util/buf.h"
#include "util/log.h"

struct fleet_source {
	int unused;
};

struct fleet_source *fleet_source__new(void)
{
	return calloc(1, sizeof(struct fleet_source));
}

void fleet_source__free(struct fleet_source *src)
{
	free(src);
}

static int run_script(const char *path, struct pbuf *out)
{
	char *cmd = NULL;
	FILE *f;
	char buf[65536];
	size_t n;
	int st;

	if (strchr(path, '\''))
		return -EINVAL;
	if (asprintf(&cmd, "perf script -i '%s' -F comm,pid,time,period,ip,sym,dso --ns 2>/dev/null", path) < 0)
		return -ENOMEM;
	f = popen(cmd, "r");
	free(cmd);
	if (!f)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		pbuf_put(out, buf, n);
	st = pclose(f);
	pbuf_put_u8(out, 0);
	if (out->err)
		return -ENOMEM;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EINVAL;
}

int fleet_source__read(struct fleet_source *src, const char *path, fleet_sample_cb cb,
		       void *ctx, struct fleet_file_info *info)
{
	struct pbuf out = { 0 };
	struct fleet_frame frames[256];
	struct fleet_sample s = { 0 };
	struct stat st;
	double last = 0, wall;
	char *p, *line, *save = NULL;
	int err;

	(void)src;
	if (stat(path, &st))
		return -errno;
	err = run_script(path, &out);
	if (err) {
		pr_err("push: %s: perf script cannot read it", path);
		pbuf_free(&out);
		return err;
	}
	/* last sample time */
	for (p = (char *)out.data; (p = strchr(p, ':')); p++) {
		char *b = p;
		while (b > (char *)out.data && b[-1] != ' ')
			b--;
		if (b != p && p[1] == ' ' && strchr(b, '.') && strchr(b, '.') < p) {
			double t = strtod(b, NULL);
			if (t > last)
				last = t;
		}
	}
	wall = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
	s.frames = frames;
	s.cgroup = "";
	for (line = strtok_r((char *)out.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != '\t' && line[0] != ' ') {
			/* "comm pid time: period ip sym (dso)" or a header of a chain */
			char *colon = strstr(line, ": ");
			char *q;

			if (s.comm) {
				err = cb(ctx, &s);
				info->samples += s.count;
				if (err)
					break;
			}
			s = (struct fleet_sample){ .frames = frames, .cgroup = "", .count = 1 };
			if (!colon)
				continue;
			*colon = 0;
			q = strrchr(line, ' ');
			s.time = (uint64_t)(wall - (last - strtod(q + 1, NULL)));
			*q = 0;
			while (q > line && q[-1] == ' ')
				*--q = 0;
			q = strrchr(line, ' ');
			s.pid = (uint32_t)atoi(q + 1);
			while (q > line && q[-1] == ' ')
				q--;
			*q = 0;
			s.comm = line;
			while (*s.comm == ' ')
				s.comm++;
			s.weight = strtoull(colon + 2, &q, 10);
			/* no chain: the ip line is on the same line */
			while (*q == ' ')
				q++;
			if (*q) {
				char *sym = strchr(q, ' '), *dso;
				if (sym) {
					sym++;
					dso = strrchr(sym, '(');
					if (dso) {
						dso[-1] = 0;
						dso++;
						dso[strlen(dso) - 1] = 0;
						frames[0] = (struct fleet_frame){ sym, dso, "" };
						s.nr = 1;
					}
				}
			}
		} else if (s.comm && s.nr < 256) {
			char *q = line, *sym, *dso;

			while (*q == ' ' || *q == '\t')
				q++;
			sym = strchr(q, ' ');
			if (!sym)
				continue;
			sym++;
			dso = strrchr(sym, '(');
			if (!dso || dso == sym)
				continue;
			dso[-1] = 0;
			dso++;
			dso[strlen(dso) - 1] = 0;
			frames[s.nr++] = (struct fleet_frame){ sym, dso, "" };
		}
	}
	if (!err && s.comm) {
		err = cb(ctx, &s);
		info->samples += s.count;
	}
	pbuf_free(&out);
	return err;
}
