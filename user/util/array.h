/* SPDX-License-Identifier: GPL-2.0 */
/* Growable arrays and opening untrusted input files. */
#ifndef PRECORD_UTIL_ARRAY_H
#define PRECORD_UTIL_ARRAY_H

#include <stddef.h>

/* Make room for need elements of elem bytes in *v (capacity *cap),
 * doubling.  0 or -ENOMEM (then *v and *cap are unchanged). */
int array_grow(void **v, size_t *cap, size_t need, size_t elem);

#define ARRAY_GROW(arr, cap, need) \
	array_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/*
 * An input file precord reads but does not trust: fd if >= 0 (taken
 * over), else path opened read-only without blocking on FIFOs or taking a
 * controlling terminal.  Only a regular file is accepted.  Returns the fd
 * or -errno (-EINVAL for anything but a regular file; fd is then closed).
 */
int open_regular_file(const char *path, int fd);

#endif
