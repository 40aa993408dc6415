// SPDX-License-Identifier: GPL-2.0
/* precord: parse the command line, run the recording (or the check). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fleet/fleet.h"
#include "opts.h"
#include "record/session.h"
#include "report/pprof.h"
#include "util/printable.h"

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

static void args_free(char **args)
{
	for (size_t i = 0; args && args[i]; i++)
		free(args[i]);
	free(args);
}

static const struct subcommand *find_subcommand(int argc, char **argv)
{
	for (const struct subcommand *c = subcommands; argc > 1 && c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c;
	return NULL;
}

/*
 * A password in a store's URL on the command line (--push, push, query,
 * fleet-schema) is shown to every user by ps: precord works on copies of
 * its arguments and overwrites the passwords of the originals (what
 * /proc/PID/cmdline shows, and the CMDLINE the recorder writes in its
 * files) with '*'.  The window before that is why PRECORD_CH_PASSWORD is
 * the way to give one (docs/fleet.md).  NULL: out of memory.
 */
static char **args_hide_passwords(int argc, char **argv)
{
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));

	for (int i = 0; copy && i < argc; i++) {
		if (!(copy[i] = strdup(argv[i]))) {
			args_free(copy);
			return NULL;
		}
	}
	for (int i = 0; copy && i < argc; i++)
		if (strstr(argv[i], "://"))
			url_hide_password(argv[i]);
	return copy;
}

int main(int argc, char **argv)
{
	const struct subcommand *sub = find_subcommand(argc, argv);
	char **args = args_hide_passwords(argc, argv);
	struct prec_opts o;
	int rc;

	if (!args) {
		fputs("precord: out of memory\n", stderr);
		return 1;
	}
	if (sub) {
		rc = sub->run(argc - 1, args + 1);
		args_free(args);
		return rc;
	}
	rc = opts_parse(argc, args, &o);
	o.argv = argv;		/* CMDLINE: without the passwords */
	if (rc) {
		args_free(args);
		return rc > 0 ? 0 : 2;
	}
	nofile_raise();
	rc = o.check ? record_check() : record_session__run(&o);
	opts_free(&o);
	args_free(args);
	return rc;
}
