/* SPDX-License-Identifier: GPL-2.0 */
/* Processes to record: checks on -p/-t ids, and the `-- command` child,
 * which is forked early and exec'd only once sampling is armed. */
#ifndef PRECORD_RECORD_TARGET_H
#define PRECORD_RECORD_TARGET_H

#include <sys/types.h>

/* 0 if pid exists and is not a kernel thread (those have no user stacks:
 * only -a records them); otherwise prints why and returns -errno. */
int target_check_pid(int pid, const char *what);
/* A pidfd that becomes readable when pid exits, or -1. */
int target_pidfd(int pid);
/* Fork a child that waits on *go_fd before exec'ing argv. */
int target_spawn(char **argv, pid_t *pid, int *go_fd, int *exec_err_fd);
/* Let the child exec; returns -errno if the exec failed. Closes the fds. */
int target_release(pid_t pid, int *go_fd, int *exec_err_fd);
/* The path execvp would run for name (malloc'd), or NULL. */
char *target_resolve_exe(const char *name);

#endif
