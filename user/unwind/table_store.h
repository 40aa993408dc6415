/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph ehframe: the unwind tables loaded for the BPF walk, one
 * per build-id whoever maps the file.  A table is built once
 * (cfi_table__build), copied into the rows map (include/precord/
 * unwind_abi.h) with its page index, given an id in the tables map, and
 * reference-counted by the mappings that use it: the last put drops it
 * and frees its memory.  The rows map is the memory limit
 * (--unwind-max-bytes): a file whose table does not fit is counted, said
 * once, and left to frame pointers.  A table's bytes (rows and page index)
 * are charged to the process that loaded it and to that process's user
 * until the table is dropped: a process may hold a quarter of the map, a
 * user other than root half of it (table_store_target); past that its
 * tables are refused, counted and said once, and others keep their room.
 * A table can be built in steps against a deadline (table_store__build).
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
	/* slots one process, one user other than root may hold (0: no
	 * limit); table_store__new: nr_slots / TABLE_STORE_PROC_SHARE and
	 * nr_slots / TABLE_STORE_USER_SHARE */
	__u32 proc_share, user_share;
	int (*set_table)(void *ctx, __u32 id, const struct prec_unwind_table *d);
	void *ctx;
};
#define TABLE_STORE_PROC_SHARE	4
#define TABLE_STORE_USER_SHARE	2
struct table_store *table_store__new_target(const struct table_store_target *tg);

/* Who wants a table: the process (proc: never the same for two processes
 * of a recording, unlike pids), its pid (for messages) and its real uid. */
struct table_owner {
	__u64 proc;
	__u32 pid, uid;
};
void table_store__free(struct table_store *ts);		/* NULL-safe */

/*
 * The table of the file with build-id bid, for who's mapping at start of
 * file offset pgoff: a reference to it in *id, and in *bias what the
 * BPF walk subtracts from an address of the mapping to get the table's
 * pc.  fd (opened by the caller with its checks, read only if the table
 * is not built yet: then built at once) and name are the file.  0, or
 * -errno: -ENOENT no table (no build-id, no CFI, not an executable
 * segment of the file), -ENOSPC the limit is reached, -EDQUOT who's
 * process or user holds its share, -ENFILE too many tables.
 */
int table_store__get(struct table_store *ts, const struct table_owner *who, const __u8 *bid,
		     __u8 bid_size, int fd, const char *name, __u64 start, __u64 pgoff,
		     __u32 *id, __u64 *bias);
/* Whether the table of bid is loaded (a get costs nothing) or known to
 * be missing or refused for who: then table_store__get does not build. */
bool table_store__ready(struct table_store *ts, const struct table_owner *who,
			const __u8 *bid, __u8 bid_size);
/*
 * Build bid's table for who (as table_store__get would) until the
 * CLOCK_MONOTONIC time deadline_ns (0: none): 0 when it is ready
 * (loaded, or known to be missing or refused), -EAGAIN when the deadline
 * came first: the build is kept and the next call for bid goes on where
 * this one stopped; -EBUSY when TABLE_STORE_BUILDS stopped builds wait
 * already (a build is never thrown away: finish one of them first);
 * -ENOMEM.
 */
#define TABLE_STORE_BUILDS	2
int table_store__build(struct table_store *ts, const struct table_owner *who, const __u8 *bid,
		       __u8 bid_size, int fd, const char *name, __u64 deadline_ns);
/* Whether bid's build is stopped and kept; whether another may start. */
bool table_store__building(struct table_store *ts, const __u8 *bid, __u8 bid_size);
bool table_store__can_start(struct table_store *ts);
/* Stopped build i (0 .. TABLE_STORE_BUILDS - 1): false when none, else its
 * build-id.  drop_kept: it goes (no mapping waits for it any more). */
bool table_store__kept(const struct table_store *ts, int i, const __u8 **bid, __u8 *bid_size);
void table_store__drop_kept(struct table_store *ts, int i);
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
	__u64 share_files;	/* mappings refused: their process or user held its share */
	__u64 steps;		/* builds stopped at a deadline and gone on later */
	__u64 dropped_builds;	/* stopped builds no mapping waited for any more */
};
void table_store__stats(const struct table_store *ts, struct table_store_stats *out);

#endif
