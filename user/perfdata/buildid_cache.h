/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's build-id cache ($HOME/.debug), laid out exactly as perf 6.1 lays
 * it out so that `perf report` finds binaries that are gone or on another
 * machine:
 *
 *   DIR/<path>/<hex>/elf                  copy of the DSO at <path>
 *   DIR/[kernel.kallsyms]/<hex>/kallsyms  copy of /proc/kallsyms (0755)
 *   DIR/[vdso]/<hex>/vdso                 the vdso image (0755)
 *   DIR/.build-id/<hex[0:2]>/<hex[2:]> -> ../../<path>/<hex>   (symlink to
 *                                         the directory, not to the file)
 *
 * Directories are 0755 (umask applies, as with perf's mkdir_p); copies of
 * files have the original's mode without the bits outside 0755 (perf
 * makes them all 0755: a root-only library would become readable).  Nothing
 * is created through a symlink: every directory is entered with
 * O_NOFOLLOW, every file is written under a temporary O_EXCL name and then
 * renamed into place without replacing anything.
 */
#ifndef PRECORD_PERFDATA_BUILDID_CACHE_H
#define PRECORD_PERFDATA_BUILDID_CACHE_H

#include <stddef.h>
#include <linux/types.h>

/*
 * The cache directory perf would use: override (perf's --buildid-dir) if
 * not NULL, else `buildid.dir` from perf's config files ($PERF_CONFIG
 * alone if set, else /etc/perfconfig then $HOME/.perfconfig), else
 * $HOME/.debug (".debug" without HOME).  Malloc'd; logged at -v.  NULL
 * with errno = 0 when the directory is "/dev/null" (perf's documented way
 * to disable the cache), NULL with errno = EPERM (and a warning) when it
 * is a symlink owned by neither the current user nor root (HOME kept
 * through sudo: the user's ~/.debug pointing at /etc), NULL with errno =
 * ENOMEM on allocation failure.  Every add checks the root again.
 */
char *buildid_cache_dir(const char *override);

/*
 * Add the regular file open on src_fd (read with pread/copy_file_range
 * from offset 0; its file offset is not used) as the DSO called name:
 * an absolute path as the process sees it, "[kernel.kallsyms]" or
 * "[vdso]" ("[vdso32]"/"[vdsox32]" share "[vdso]", as in perf).
 * id/size: its build-id (2..20 bytes: perf's link name needs 2 hex
 * digits for the directory and more for the link).  Returns 0 when added
 * or already cached, -EINVAL for a bad name/id/file type (name with "."
 * or ".." components, not a regular file), -ELOOP when a symlink or
 * another non-directory sits where the cache wants a directory (or a
 * non-regular file where it wants its file), other -errno from the file
 * system.
 */
int buildid_cache__add_fd(const char *cache_dir, const char *name,
			  const __u8 *id, int size, int src_fd);

/* Same for len bytes in memory (a kallsyms snapshot, the vdso image). */
int buildid_cache__add_data(const char *cache_dir, const char *name,
			    const __u8 *id, int size, const void *data, size_t len);

/* Remove name's copy for id (what add made: the file, its <hex>
 * directory if that is empty then, and the .build-id link if it points
 * there), never through a symlink.  0 also when there was none; -EINVAL
 * as add, -ELOOP when a symlink sits on the way (nothing removed), other
 * -errno from the file system. */
int buildid_cache__remove(const char *cache_dir, const char *name, const __u8 *id, int size);

#endif
