/* SPDX-License-Identifier: GPL-2.0 */
/* The fleet store's subcommands (docs/fleet.md): precord NAME ARGS... */
#ifndef PRECORD_FLEET_FLEET_H
#define PRECORD_FLEET_FLEET_H

int fleet_schema_main(int argc, char **argv);	/* store.c */
int fleet_push_main(int argc, char **argv);	/* push.c */
int fleet_query_main(int argc, char **argv);	/* query.c */

#endif
