/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bytes a process wrote to a file through glibc's stdio that are still
 * in its buffer.  V8 (node --perf-prof) writes its jitdump through a FILE
 * with a 2 MiB buffer: a service whose code was compiled once keeps the
 * records of that code in memory for as long as it compiles nothing new,
 * and its hottest functions are never named (perf inject has the same
 * blind spot until the process exits).
 *
 * How: the process's stdio streams are a list headed by glibc's exported
 * _IO_list_all; the FILE whose descriptor is the file's holds the
 * unwritten bytes between _IO_write_base and _IO_write_ptr (glibc's public
 * struct _IO_FILE layout, 64-bit processes only).  The process controls
 * all of it: the symbol comes from the libc it maps (its headers checked,
 * section sizes bounded, before libelf reads them), the walk of its list
 * is bounded, so are the bytes read (STDIO_TAIL_MAX), and the result is
 * only ever parsed as the jitdump records the process could have written
 * to the file itself.  Memory is read with process_vm_readv, nothing is
 * written, the process is not stopped.
 */
#ifndef PRECORD_JIT_STDIO_TAIL_H
#define PRECORD_JIT_STDIO_TAIL_H

#include <linux/types.h>

#include "util/buf.h"

/* More unwritten bytes than this are not read (V8's buffer: 2 MiB). */
#define STDIO_TAIL_MAX		(4u << 20)
/* FILEs looked at on a process's list. */
#define STDIO_TAIL_MAX_FILES	256

struct stdio_tail;

struct stdio_tail *stdio_tail__new(void);	/* NULL + errno */
void stdio_tail__free(struct stdio_tail *t);	/* NULL-safe */

/*
 * The unwritten bytes process pid's stdio holds for the file open on fd
 * (precord's own descriptor of the same file) into out (replaced), and
 * in *at the file's size, which they follow.  0 with out->len == 0: none
 * (no such stream, an empty buffer, not glibc); -EAGAIN: the process
 * wrote meanwhile (try later); -E2BIG: more than STDIO_TAIL_MAX;
 * -errno otherwise (-ESRCH: gone, -EPERM).
 */
int stdio_tail__peek(struct stdio_tail *t, __u32 pid, int fd, struct pbuf *out, __u64 *at);

#endif
