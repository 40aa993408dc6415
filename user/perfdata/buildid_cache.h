/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's build-id cache ($HOME/.debug), laid out exactly as perf 6.1 lays
 * it out so that `perf report` finds binaries that are gone or on another
 * machine:
 *
 *   DIR/<path>/<hex>/elf                  copy of the DSO at <path>
 *   DIR/[kernel.kallsyms]/<hex>/kallsyms  copy of /proc/kallsyms (0600)
 *   DIR/[vdso]/<hex>/vdso                 the vdso image (0755)
 *   DIR/<path>/<hex>/debug                its debug file (a .symtab: issue 21;
 *                                         what `perf buildid-cache
 *                                         --debuginfod` makes, perf report's
 *                                         BUILD_ID_CACHE_DEBUGINFO)
 *   DIR/.build-id/<hex[0:2]>/<hex[2:]> -> ../../<path>/<hex>   (symlink to
 *                                         the directory, not to the file)
 *   DIR/.precord/                         precord's own (0700): debuginfod's
 *                                         download cache, the misses
 *
 * Directories precord creates are 0700 (perf makes them 0755; umask
 * applies); a copy is never more readable than its source: the original's
 * mode without the bits outside 0755, group bits only as far as others'
 * when the original's group is not ours, owner only behind a directory
 * others cannot search (perf makes them all 0755: a root-only library,
 * or a binary in a 0700 home, would become readable).  kallsyms copies
 * are 0600 (an existing wider copy of ours is narrowed).  Nothing is
 * created through a symlink: every directory is entered with O_NOFOLLOW,
 * every file is written under a temporary O_EXCL name and then renamed
 * into place without replacing anything.
 *
 * What a process writes into the cache is bounded: a copy writes the
 * source's data extents only (holes stay holes), at most
 * BUILDID_CACHE_FILE_MAX (or the run's limit if lower) for one file, at
 * most the run's limit (--buildid-cache-max) in all; a file over either
 * is not cached (-EFBIG, -EDQUOT), and the first refusal of each kind is
 * said in a warning.
 */
#ifndef PRECORD_PERFDATA_BUILDID_CACHE_H
#define PRECORD_PERFDATA_BUILDID_CACHE_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Identity (issue 18, finding 13): anyone can build a file carrying a
 * victim's build-id, and a process in its own mount namespace can map it
 * under the victim's path.  An ELF copy lists in <hex>/elf.id the files
 * (device, inode, size, mtime) it was made from or found byte-equal to;
 * another file added under the same path and id with other bytes makes
 * <hex>/BUILDID_CACHE_CONFLICT: the copy is then not used (precord's
 * symbolizer checks for it) and its .build-id link is removed.  Two
 * paths with one id and different bytes: the .build-id link is removed
 * and .build-id/xx/<rest>.conflict keeps it from being made again (perf
 * report then reads each file at its path).  Each conflict is said once,
 * in a warning.
 */
#define BUILDID_CACHE_CONFLICT		"conflict"

/* precord's own directory in the cache (no DSO path may land there). */
#define BUILDID_CACHE_PRIVATE_DIR	".precord"

#define BUILDID_CACHE_DEFAULT_MAX	(2ull << 30)	/* per run */
#define BUILDID_CACHE_FILE_MAX		(1ull << 30)	/* per file */

/* add_fd flags: a directory on the original's path is closed to others
 * (no o+x): the copy is readable by its owner only. */
#define BUILDID_CACHE_PRIVATE		1u

/* Bytes this process may write into the cache from now on (0: the
 * default); one file at most min(max_total, BUILDID_CACHE_FILE_MAX).
 * Resets the count and the warnings. */
void buildid_cache__set_max(__u64 max_total);

/* Bytes written into the cache since the last set_max (copies kept). */
__u64 buildid_cache__bytes_written(void);

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
 * digits for the directory and more for the link); flags:
 * BUILDID_CACHE_PRIVATE or 0.  Returns 0 when added or already cached,
 * -EINVAL for a bad name/id/file type (name with "." or ".."
 * components, not a regular file), -ELOOP when a symlink or another
 * non-directory sits where the cache wants a directory (or a non-regular
 * file where it wants its file), -EFBIG / -EDQUOT over the limit per
 * file / per run (nothing written), other -errno from the file system.
 */
int buildid_cache__add_fd(const char *cache_dir, const char *name,
			  const __u8 *id, int size, int src_fd, unsigned int flags);

/*
 * The debug file open on debug_fd as the one of the DSO called name (an
 * absolute path) with build-id id: DIR/<path>/<hex>/debug, where stock
 * perf report reads a build-id's debug file with no option; readable by
 * the cache's owner only (a debuginfod server may serve what only its
 * users may read), at most as the DSO's own copy (dso_fd: the DSO, for
 * its mode; flags as add_fd).  The caller has checked the file
 * (elf/debugfile.h).  Returns as add_fd.
 */
int buildid_cache__add_debug_fd(const char *cache_dir, const char *name, const __u8 *id,
				int size, int debug_fd, int dso_fd, unsigned int flags);

/* The debug file cached for (name, id), opened read-only without
 * following a symlink: fd, or -ENOENT, -ESTALE (the entry is in
 * conflict), -errno. */
int buildid_cache__open_debug(const char *cache_dir, const char *name, const __u8 *id,
			      int size);

/* DIR/BUILDID_CACHE_PRIVATE_DIR, created 0700 if missing, opened
 * without following a symlink: a directory fd or -errno. */
int buildid_cache__open_private(const char *cache_dir);

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
