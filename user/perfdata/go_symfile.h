/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The build-id cache's entry for a stripped Go binary: instead of a copy
 * of the binary (whose missing .symtab would leave perf report with
 * addresses), a symbol file (elf/symfile.h) made from its .gopclntab
 * (elf/gosyms.h), under the id precord recorded for it
 * (elf_build_id_or_go_fd).  perf report finds it as DIR/.build-id/xx/
 * REST/elf and names the Go functions with no option.
 */
#ifndef PRECORD_PERFDATA_GO_SYMFILE_H
#define PRECORD_PERFDATA_GO_SYMFILE_H

#include <linux/types.h>

/*
 * If the ELF file open on fd (read with pread) is a stripped Go binary,
 * add its symbol file to the cache at cache_dir as name's entry for
 * id/size (flags as buildid_cache__add_fd).  0 when added or already
 * there; -ENOENT when fd is not a stripped Go binary (copy it as usual);
 * -EFBIG for a table over the limits (one warning); other -errno
 * (buildid_cache__add_fd's, the writer's).
 */
int go_symfile__cache(const char *cache_dir, const char *name, const __u8 *id, int size,
		      int fd, unsigned int flags);

#endif
