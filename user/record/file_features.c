// SPDX-License-Identifier: GPL-2.0
#include "record/file_features.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "perfdata/buildid_cache.h"
#include "perfdata/features.h"
#include "record/debug_fetch.h"
#include "record/dsos.h"
#include "record/output.h"
#include "record/sample_converter.h"

struct file_features {
	struct file_features_config cfg;
	const struct sample_converter *conv;	/* NULL: none yet */
	struct debug_fetch *debug;	/* the stripped DSOs' debug files, NULL: none */
	char *cache_dir;		/* build-id cache, NULL: none (or not read yet) */
	__u64 start_ns, start_tod_ns;	/* CLOCK_MONOTONIC, time of day */
	__u64 file_start;		/* the switch time that began this file */
};

struct file_features *file_features__new(const struct file_features_config *cfg)
{
	struct file_features *ff = calloc(1, sizeof(*ff));

	if (ff) {
		ff->cfg = *cfg;
		buildid_cache__set_max(cfg->o->buildid_cache_max);	/* for the run */
	}
	return ff;
}

void file_features__free(struct file_features *ff)
{
	if (!ff)
		return;
	free(ff->cache_dir);
	free(ff);
}

void file_features__set_converter(struct file_features *ff, const struct sample_converter *conv)
{
	ff->conv = conv;
}

void file_features__set_debug_fetch(struct file_features *ff, struct debug_fetch *df)
{
	ff->debug = df;
}

void file_features__start(struct file_features *ff, __u64 mono_ns, __u64 tod_ns)
{
	ff->start_ns = mono_ns;
	ff->start_tod_ns = tod_ns;
}

void file_features__file_start(struct file_features *ff, __u64 t)
{
	ff->file_start = t;
}

const char *file_features__cache_dir(struct file_features *ff)
{
	if (!ff->cache_dir && !ff->cfg.o->no_buildid_cache)
		ff->cache_dir = buildid_cache_dir(ff->cfg.o->buildid_dir);
	return ff->cache_dir;
}

/* What the file's features say of the recording; tod, mono: the clocks
 * at its start (0 when only measuring). */
static void make_env(const struct file_features *ff, struct perfdata_env *env, __u64 tod,
		     __u64 mono)
{
	const struct prec_opts *o = ff->cfg.o;
	struct sample_counts n = { 0 };
	struct timespec res;

	if (ff->conv)
		sample_converter__counts(ff->conv, &n);
	*env = (struct perfdata_env){
		.argc = o->argc, .argv = o->argv,
		.first_sample_time = n.first_time, .last_sample_time = n.last_time,
		.have_clock = true, .clockid = o->clockid,
		.clock_tod_ns = tod, .clock_ns = mono,
	};
	if (!clock_getres(o->clockid, &res))
		env->clock_res_ns = (__u64)res.tv_sec * 1000000000ULL + (__u64)res.tv_nsec;
	/* a rotated file: its own part of the samples' times (SAMPLE_TIME) */
	if (env->first_sample_time && env->first_sample_time < ff->file_start)
		env->first_sample_time = ff->file_start;
}

int file_features__reserve(struct file_features *ff, struct output *out)
{
	struct perfdata_env env;

	make_env(ff, &env, 0, 0);
	return output__reserve_features(out, &env, dso_table__build_id_bytes(ff->cfg.dt));
}

int file_features__write(struct file_features *ff, struct output *out)
{
	const struct perfdata_build_id *ids = NULL;
	size_t nr_ids = 0;
	struct perfdata_env env;
	int err = dso_table__finish(ff->cfg.dt, file_features__cache_dir(ff), true, &ids,
				    &nr_ids);

	if (err)
		return err;
	debug_fetch__file(ff->debug, ff->cfg.dt);	/* in the background */
	make_env(ff, &env, ff->start_tod_ns, ff->start_ns);
	env.build_ids = ids;
	env.nr_build_ids = nr_ids;
	return output__finish(out, &env);
}
