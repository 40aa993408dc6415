// SPDX-License-Identifier: GPL-2.0
#include "record/target.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "opts.h"
#include "record/signals.h"
#include "record/synth.h"
#include "record/tidset.h"
#include "util/io.h"
#include "util/log.h"

struct target_set {
	bool all;			/* -a */
	bool by_tid;			/* -t */
	struct tidset ids;		/* tgids (or tids with -t) recorded */
	int *pidfds;			/* of the -p/-t ids; -1: none */
	int nr_pidfds;
	char *cmd;			/* the command's argv[0] */
	pid_t child;			/* the command, 0: none */
	int go_fd, exec_err_fd;
	int child_status;
	bool child_done;
};

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

static int check_pid(int pid, const char *what)
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

static int pidfd_of(int pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

static int spawn(char **argv, pid_t *pid, int *go_fd, int *exec_err_fd)
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

static int release(int *go_fd, int *exec_err_fd)
{
	ssize_t n;
	int e = 0;

	if (write(*go_fd, "g", 1) != 1)
		return -errno;
	close(*go_fd);
	*go_fd = -1;
	n = read_full(*exec_err_fd, &e, sizeof(e));	/* EOF: the exec worked */
	close(*exec_err_fd);
	*exec_err_fd = -1;
	return n == (ssize_t)sizeof(e) ? -e : 0;
}

struct target_set *target_set__new(bool all, bool by_tid)
{
	struct target_set *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->all = all;
	t->by_tid = by_tid;
	t->go_fd = t->exec_err_fd = -1;
	t->pidfds = calloc(PREC_MAX_PIDS, sizeof(int));
	if (!t->pidfds) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void target_set__free(struct target_set *t)
{
	if (!t)
		return;
	if (t->child > 0 && !t->child_done) {
		kill(t->child, SIGKILL);
		waitpid(t->child, NULL, 0);
	}
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->exec_err_fd >= 0)
		close(t->exec_err_fd);
	for (int i = 0; i < t->nr_pidfds; i++)
		if (t->pidfds[i] >= 0)
			close(t->pidfds[i]);
	free(t->pidfds);
	free(t->cmd);
	tidset_free(&t->ids);
	free(t);
}

int target_set__add_listed(struct target_set *t, const int *ids, int nr, const char *what,
			   int map_fd)
{
	int err = 0;

	for (int i = 0; !err && i < nr; i++) {
		__u32 id = (__u32)ids[i];
		__u8 one = 1;

		if (t->nr_pidfds >= PREC_MAX_PIDS)
			return -E2BIG;
		err = check_pid(ids[i], what);
		if (!err && bpf_map_update_elem(map_fd, &id, &one, BPF_ANY))
			err = -errno;
		if (!err)
			err = tidset_add(&t->ids, id);
		if (!err)
			t->pidfds[t->nr_pidfds++] = pidfd_of(ids[i]);
	}
	return err;
}

int target_set__spawn(struct target_set *t, char **argv)
{
	int err;

	t->cmd = strdup(argv[0]);
	if (!t->cmd)
		return -ENOMEM;
	err = spawn(argv, &t->child, &t->go_fd, &t->exec_err_fd);
	if (err) {
		pr_err("cannot start '%s': %s", argv[0], strerror(-err));
		return err;
	}
	/* The command is sampled from its exec on (bpf on_exec), as perf's
	 * enable_on_exec does; its side-band records are kept from now. */
	if (target_set__exec_command(t))
		err = tidset_add(&t->ids, (__u32)t->child);
	return err;
}

int target_set__add_opts(struct target_set *t, const struct prec_opts *o, int map_fd)
{
	int err = target_set__add_listed(t, o->pids, o->nr_pids, "PID", map_fd);

	if (!err)
		err = target_set__add_listed(t, o->tids, o->nr_tids, "TID", map_fd);
	if (err || !o->cmd)
		return err;
	record_signals_catch_child();
	return target_set__spawn(t, o->cmd);
}

pid_t target_set__command(const struct target_set *t)
{
	return t->child > 0 ? t->child : 0;
}

pid_t target_set__exec_command(const struct target_set *t)
{
	return !t->all && !t->nr_pidfds ? target_set__command(t) : 0;
}

int target_set__release(struct target_set *t)
{
	int err;

	if (t->child <= 0)
		return 0;
	err = release(&t->go_fd, &t->exec_err_fd);
	if (err) {
		pr_err("cannot run '%s': %s", t->cmd, strerror(-err));
		waitpid(t->child, NULL, 0);
		t->child = 0;
	}
	return err;
}

void target_set__reap(struct target_set *t)
{
	int st;

	if (t->child <= 0 || t->child_done)
		return;
	if (waitpid(t->child, &st, WNOHANG) == t->child) {
		t->child_status = st;
		t->child_done = true;
	}
}

bool target_set__gone(const struct target_set *t)
{
	int alive = 0;

	if (t->child > 0 && t->child_done)
		return true;
	if (!t->nr_pidfds)
		return false;
	for (int i = 0; i < t->nr_pidfds; i++) {
		struct pollfd p = { .fd = t->pidfds[i], .events = POLLIN };

		if (t->pidfds[i] >= 0 && poll(&p, 1, 0) == 0)
			alive++;
	}
	return alive == 0;
}

void target_set__end_command(struct target_set *t, bool pass_term)
{
	if (t->child > 0 && !t->child_done && (pass_term || t->nr_pidfds || t->all))
		kill(t->child, SIGTERM);
}

int target_set__wait_command(struct target_set *t)
{
	if (t->child <= 0)
		return 0;
	if (!t->child_done && waitpid(t->child, &t->child_status, 0) == t->child)
		t->child_done = true;
	return WIFEXITED(t->child_status) ? WEXITSTATUS(t->child_status) : 0;
}

bool target_set__has(const struct target_set *t, __u32 id)
{
	return t->all || tidset_has(&t->ids, id);
}

int target_set__fork(struct target_set *t, __u32 ppid, __u32 pid)
{
	if (!t->all && !t->by_tid && pid != ppid && tidset_has(&t->ids, ppid) &&
	    tidset_add(&t->ids, pid))
		return -ENOMEM;
	return 0;
}

void target_set__exit(struct target_set *t, __u32 pid, __u32 tid)
{
	if (t->by_tid)
		tidset_del(&t->ids, tid);
	else if (!t->all && pid == tid)
		tidset_del(&t->ids, pid);
}

int target_set__synthesize(const struct target_set *t, struct pbuf *out, __u64 id_type,
			   struct dso_table *dt, bool data_maps)
{
	int err = 0;

	if (t->all)
		return synth_all(out, id_type, dt, data_maps);
	for (size_t i = 0; !err && i < t->ids.cap; i++) {
		__u32 id = t->ids.keys[i];
		int tgid;

		if (!id || (t->child > 0 && id == (__u32)t->child))
			continue;	/* the command: still precord until it execs */
		tgid = t->by_tid ? proc_tgid(id) : (int)id;
		if (tgid > 0)
			err = synth_process(out, id_type, dt, (__u32)tgid, false, data_maps);
	}
	return err;
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
