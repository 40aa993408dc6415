/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes a recording follows: the -p/-t ids (checked, watched
 * through pidfds, mirrored into the BPF target map), the `-- command`
 * child (forked early, exec'd only once sampling is armed, reaped), and
 * the set of processes (threads with -t) whose records are kept, which
 * grows with their forks and shrinks with their exits.  With -a every
 * process is a target.
 */
#ifndef PRECORD_RECORD_TARGET_H
#define PRECORD_RECORD_TARGET_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "opts.h"
#include "util/buf.h"

struct target_set;
struct dso_table;

/* all: -a; by_tid: -t (the set holds threads).  NULL + errno. */
struct target_set *target_set__new(bool all, bool by_tid);
/* Kills and reaps a command still running; closes every fd.  NULL-safe. */
void target_set__free(struct target_set *t);

/* -p (what "PID") or -t ("TID") ids: each must exist and not be a kernel
 * thread (else says why, -errno); added to the set and to the BPF map at
 * map_fd, and watched for its exit. */
int target_set__add_listed(struct target_set *t, const int *ids, int nr, const char *what,
			   int map_fd);

/* Fork the command, which waits to be released before exec'ing argv.
 * Without -p/-t/-a it is a target from its exec on. */
int target_set__spawn(struct target_set *t, char **argv);
/* The targets o names: -p and -t ids (map_fd: as add_listed), then the
 * command spawned (SIGCHLD caught first).  0 or -errno (said why). */
int target_set__add_opts(struct target_set *t, const struct prec_opts *o, int map_fd);
/* The command's pid: 0 if none. */
pid_t target_set__command(const struct target_set *t);
/* The command's pid if it is recorded from its exec on (no -p/-t/-a), else 0. */
pid_t target_set__exec_command(const struct target_set *t);
/* Let the command exec; -errno (said why, the child reaped) if it failed. */
int target_set__release(struct target_set *t);
/* After SIGCHLD: note the command's exit if it has. */
void target_set__reap(struct target_set *t);
/* The command exited, or every -p/-t target did. */
bool target_set__gone(const struct target_set *t);
/* At the end of the recording: a command that only set the duration
 * (-p/-t/-a) gets SIGTERM, and a recorded one too when pass_term. */
void target_set__end_command(struct target_set *t, bool pass_term);
/* Wait for the command: its exit status, 0 when none or killed. */
int target_set__wait_command(struct target_set *t);

bool target_set__has(const struct target_set *t, __u32 id);
/* A FORK (pid from ppid): a new process of a target is a target too. */
int target_set__fork(struct target_set *t, __u32 ppid, __u32 pid);
/* An EXIT of thread tid of process pid: a process leaves the set when its
 * main thread exits (a thread with -t), as bpf/sample.bpf.c's on_exit
 * takes it out of the BPF set: a process that later gets the pid is none. */
void target_set__exit(struct target_set *t, __u32 pid, __u32 tid);

/* COMM/FORK/MMAP2 records into out for the targets that exist before the
 * recording starts (every process with -a; not the command, which is
 * still precord until it execs); data_maps: readable data mappings too. */
int target_set__synthesize(const struct target_set *t, struct pbuf *out, __u64 id_type,
			   struct dso_table *dt, bool data_maps);

/* The path execvp would run for name (malloc'd), or NULL. */
char *target_resolve_exe(const char *name);

#endif
