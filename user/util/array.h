/* SPDX-License-Identifier: GPL-2.0 */
/* Growable arrays and opening untrusted input files. */
#ifndef PRECORD_UTIL_ARRAY_H
#define PRECORD_UTIL_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/* Make room for need elements of elem bytes in *v (capacity *cap),
 * doubling.  0 or -ENOMEM (then *v and *cap are unchanged). */
int array_grow(void **v, size_t *cap, size_t need, size_t elem);

#define ARRAY_GROW(arr, cap, need) \
	array_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/*
 * In n pointers to records sorted by a u32 key at byte key_off of each
 * record (a pid, say), the index of the first whose key is >= key: where
 * key is, or where it would go.
 */
size_t ptrs_lower_bound_u32(void *const *ptrs, size_t n, size_t key_off, uint32_t key);

/*
 * An input file precord reads but does not trust: fd if >= 0 (taken
 * over), else path opened read-only without blocking on FIFOs or taking a
 * controlling terminal.  Only a regular file is accepted.  Returns the fd
 * or -errno (-EINVAL for anything but a regular file; fd is then closed).
 */
int open_regular_file(const char *path, int fd);

/* Such a file kept open by a reader: its fd and the name its messages use. */
struct input_file {
	int fd;
	char *path;
};

/*
 * open_regular_file(path, fd) into f, with a copy of path (name when path
 * is NULL).  0, or -errno with nothing left open (fd closed too).
 */
int input_file_open(struct input_file *f, const char *path, int fd, const char *name);
void input_file_close(struct input_file *f);

#endif
