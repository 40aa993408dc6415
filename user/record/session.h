/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PRECORD_RECORD_SESSION_H
#define PRECORD_RECORD_SESSION_H

#include "opts.h"

/* Runs one recording as o says.  Returns the process exit status. */
int record_session__run(const struct prec_opts *o);

/* `precord check`: the kernel features precord needs.  Exit status. */
int record_check(void);
/* What a recording needs first (root, BTF): 0, or -errno after one line
 * that says what to do. */
int record_check_prereqs(void);

#endif
