// SPDX-License-Identifier: GPL-2.0
#include "record/target.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"

/* PF_KTHREAD among the task flags (the 9th field of /proc/PID/stat). */
#define TASK_PF_KTHREAD	0x00200000u

/*
 * Whether pid is a kernel thread; its name in comm (non-printable bytes
 * as '?').  /proc/PID/stat: "pid (comm) state ppid pgrp session tty_nr
 * tpgid flags ...", comm may hold spaces and ')', so the last ')' ends it.
 */
static bool is_kernel_thread(int pid, char *comm, size_t n)
{
	char path[64], buf[512];
	const char *open_p, *close_p;
	unsigned int flags = 0;
	ssize_t len;
	size_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = 0;
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p ||
	    sscanf(close_p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1)
		return false;
	for (k = 0; k + 1 < n && open_p + 1 + k < close_p; k++)
		comm[k] = isprint((unsigned char)open_p[1 + k]) ? open_p[1 + k] : '?';
	comm[k] = 0;
	return flags & TASK_PF_KTHREAD;
}

int target_check_pid(int pid, const char *what)
{
	char path[64], comm[32];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (access(path, R_OK)) {
		pr_err("cannot attach to %s %d: no such process", what, pid);
		return -ESRCH;
	}
	if (is_kernel_thread(pid, comm, sizeof(comm))) {
		pr_err("cannot record %s %d (%s): it is a kernel thread, which has no user stack; kernel threads are recorded only with -a (all CPUs)",
		       what, pid, comm);
		return -EINVAL;
	}
	return 0;
}

int target_pidfd(int pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

int target_spawn(char **argv, pid_t *pid, int *go_fd, int *exec_err_fd)
{
	int go[2], ee[2];
	pid_t child;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ee, O_CLOEXEC)) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		return err;
	}
	child = fork();
	if (child < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(ee[0]);
		close(ee[1]);
		return err;
	}
	if (child == 0) {
		char c;
		int e;

		close(go[1]);
		close(ee[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* precord gave up before starting us */
		execvp(argv[0], argv);
		e = errno;
		if (write(ee[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ee[1]);
	*pid = child;
	*go_fd = go[1];
	*exec_err_fd = ee[0];
	return 0;
}

int target_release(pid_t pid, int *go_fd, int *exec_err_fd)
{
	ssize_t n;
	int e = 0;

	(void)pid;
	if (write(*go_fd, "g", 1) != 1)
		return -errno;
	close(*go_fd);
	*go_fd = -1;
	do {
		n = read(*exec_err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(*exec_err_fd);
	*exec_err_fd = -1;
	return n == (ssize_t)sizeof(e) ? -e : 0;
}

char *target_resolve_exe(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	if (strchr(name, '/'))
		return realpath(name, NULL);
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char full[4096];

		snprintf(full, sizeof(full), "%s/%s", *dir ? dir : ".", name);
		if (access(full, X_OK) == 0)
			found = realpath(full, NULL);
	}
	free(copy);
	return found;
}
