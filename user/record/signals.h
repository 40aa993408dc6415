/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The signals a recording takes.  SIGINT and SIGTERM stop it; SIGHUP
 * does too unless it rotates (--switch-output): then SIGHUP, like perf's
 * SIGUSR2, asks for a file switch (as log daemons reopen their files on
 * HUP).  SIGCHLD says the command may have exited.  The handlers only
 * note what came; the loop asks.
 */
#ifndef PRECORD_RECORD_SIGNALS_H
#define PRECORD_RECORD_SIGNALS_H

#include <stdbool.h>

/* SIGCHLD noted (before the command is forked). */
void record_signals_catch_child(void);
/* SIGINT, SIGTERM and SIGHUP noted; rotating: SIGHUP and SIGUSR2 ask
 * for a switch. */
void record_signals_catch_stop(bool rotating);

/* The stop signal received last, 0: none. */
int record_signals_stop(void);
/* Stop signals received so far (long reads of JIT sources stop on one). */
unsigned int record_signals_stop_requests(void);
/* Whether SIGCHLD came (once it has, the command is reaped each round). */
bool record_signals_child_exited(void);
/* Whether a switch was asked for and not yet taken. */
bool record_signals_switch_asked(void);
void record_signals_switch_taken(void);

#endif
