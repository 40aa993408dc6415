// SPDX-License-Identifier: GPL-2.0
/* Glue between the recording session and function tracing (user/trace/). */
#include <stdio.h>

#include "record/session_int.h"

int session_trace_setup(struct session *s) { (void)s; return 0; }
int session_trace_add_evsels(struct session *s) { (void)s; return 0; }
int session_trace_consume(struct session *s) { (void)s; return 0; }
int session_trace_finish(struct session *s) { (void)s; return 0; }
__u64 session_trace_lost(struct session *s) { (void)s; return 0; }
void session_trace_summary(struct session *s, char *buf, size_t n) { (void)s; if (n) buf[0] = 0; }
void session_trace_free(struct session *s) { (void)s; }
