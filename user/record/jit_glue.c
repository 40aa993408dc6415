// SPDX-License-Identifier: GPL-2.0
/* Glue between the recording session and the JIT merger (user/jit/). */
#include "record/session_int.h"

int session_jit_setup(struct session *s) { (void)s; return 0; }
int session_jit_poll(struct session *s) { (void)s; return 0; }
int session_jit_finish(struct session *s) { (void)s; return 0; }
void session_jit_free(struct session *s) { (void)s; }
bool session_jit_mmap(struct session *s, __u32 pid, const char *name, __u32 prot, __u64 time)
{
	(void)s; (void)pid; (void)name; (void)prot; (void)time;
	return false;
}
