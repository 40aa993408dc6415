/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph ehframe: the unwind tables loaded for the BPF walk, one
 * per build-id whoever maps the file.  A table is built once
 * (cfi_table__build), copied into the rows map (include/precord/
 * unwind_abi.h) with its page index, given an id in the tables map, and
 * reference-counted by the mappings that use it: the last put drops it
 * and frees its memory.  The rows map is the memory limit
 * (--unwind-max-bytes): a file whose table does not fit is counted, said
 * once, and left to frame pointers.
 */
#ifndef PRECORD_UNWIND_TABLE_STORE_H
#define PRECORD_UNWIND_TABLE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct table_store;
struct unwind_map_fds;
struct prec_unwind_table;

/* NULL + errno (said why): tables into the BPF maps of fds. */
struct table_store *table_store__new(const struct unwind_map_fds *fds);

/*
 * Where the tables go: slots (nr_slots of them: unwind_rows as mapped)
 * and set_table, which writes table id's descriptor (0, or -errno) into
 * unwind_tables (ids below nr_tables).  table_store__new's are the BPF
 * maps; the unit tests' are memory.  NULL + errno.
 */
struct table_store_target {
	__u64 *slots;
	__u32 nr_slots, nr_tables;
	int (*set_table)(void *ctx, __u32 id, const struct prec_unwind_table *d);
	void *ctx;
};
struct table_store *table_store__new_target(const struct table_store_target *tg);
void table_store__free(struct table_store *ts);		/* NULL-safe */

/*
 * The table of the file with build-id bid, for its mapping at start of
 * file offset pgoff: a reference to it in *id, and in *bias what the
 * BPF walk subtracts from an address of the mapping to get the table's
 * pc.  fd (opened by the caller with its checks, read only if the table
 * is not built yet) and name are the file.  0, or -errno: -ENOENT no
 * table (no build-id, no CFI, not an executable segment of the file),
 * -ENOSPC the limit is reached, -ENFILE too many tables.
 */
int table_store__get(struct table_store *ts, const __u8 *bid, __u8 bid_size, int fd,
		     const char *name, __u64 start, __u64 pgoff, __u32 *id, __u64 *bias);
/* Whether the table of bid is loaded (a get costs nothing) or known to
 * be missing: then table_store__get does not build. */
bool table_store__ready(struct table_store *ts, const __u8 *bid, __u8 bid_size);
/* One more reference to a table *id came with (a mapping split in two). */
void table_store__ref(struct table_store *ts, __u32 id);
void table_store__put(struct table_store *ts, __u32 id);

struct table_store_stats {
	__u64 built;		/* tables built */
	__u64 loaded;		/* loaded now */
	__u64 dropped;		/* dropped: no mapping used them any more */
	__u64 bytes, peak_bytes, max_bytes;	/* of the rows map */
	__u64 full_files;	/* files left to frame pointers by the limit */
	__u64 no_cfi;		/* files without a table (no CFI, not readable) */
	__u64 refused;		/* of which refused: sections over elf/sections.h's limits */
	__u64 build_ns;		/* time spent building tables */
};
void table_store__stats(const struct table_store *ts, struct table_store_stats *out);

#endif
