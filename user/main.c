// SPDX-License-Identifier: GPL-2.0
/* precord: parse the command line, run the recording (or the check). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fleet/fleet.h"
#include "opts.h"
#include "record/session.h"
#include "report/pprof.h"

static struct rlimit nofile_orig;

/* A command precord starts gets the limit precord was started with
 * (select() users break above 1024 descriptors). */
static void nofile_restore(void)
{
	setrlimit(RLIMIT_NOFILE, &nofile_orig);
}

/*
 * Open descriptors: the soft limit raised to the hard limit, as the DSO
 * table sizes its descriptor cache from it (record/dsos.c): at the usual
 * 1024 a target mapping 1100 files made opens fail with EMFILE.
 */
static void nofile_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &nofile_orig) || nofile_orig.rlim_cur == nofile_orig.rlim_max)
		return;
	rl = (struct rlimit){ nofile_orig.rlim_max, nofile_orig.rlim_max };
	if (!setrlimit(RLIMIT_NOFILE, &rl))
		pthread_atfork(NULL, NULL, nofile_restore);
}

/*
 * precord SUBCOMMAND ...: the commands that do not record (the fleet
 * store's and the exporters').  Each gets argv from its own name on and
 * returns the exit status.  `precord check` is a recording option.
 */
static const struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
} subcommands[] = {
	{ "export", export_main },
	{ "fleet-schema", fleet_schema_main },
	{ "push", fleet_push_main },
	{ "query", fleet_query_main },
	{ NULL, NULL },
};

static const struct subcommand *find_subcommand(int argc, char **argv)
{
	for (const struct subcommand *c = subcommands; argc > 1 && c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct subcommand *sub = find_subcommand(argc, argv);
	struct prec_opts o;
	int rc;

	if (sub)
		return sub->run(argc - 1, argv + 1);
	rc = opts_parse(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	nofile_raise();
	rc = o.check ? record_check() : record_session__run(&o);
	opts_free(&o);
	return rc;
}
