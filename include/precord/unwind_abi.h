/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph ehframe: the BPF maps the unwinder of bpf/unwind.bpf.h
 * reads and user/unwind/ writes.  Include <vmlinux.h> (BPF) or
 * <linux/types.h> (user) first.  The rows themselves are struct
 * prec_unwind_row of bpf_abi.h.
 *
 *   unwind_rows    ARRAY of 8-byte slots (BPF_F_MMAPABLE; user space
 *                  writes it through its mapping).  A table takes
 *                  nr_rows slots of rows, then its page index: nr_pages
 *                  + 1 __u32 entries, two to a slot, at most nr_rows + 1
 *                  (the page size is the table's own).  Sized from
 *                  --unwind-max-bytes.
 *   unwind_tables  ARRAY keyed by table id: struct prec_unwind_table.
 *                  One table per build-id, shared by every process
 *                  mapping the file.
 *   unwind_procs   HASH keyed by tgid: struct prec_unwind_proc, the
 *                  process's executable mappings that have a table,
 *                  sorted by start.
 *   unwind_stats   PERCPU_ARRAY of one __u64 n[PREC_UNWIND_STAT_NR]:
 *                  what the walks did (user space sums them for -v).
 */
#ifndef PRECORD_UNWIND_ABI_H
#define PRECORD_UNWIND_ABI_H

#define PREC_UNWIND_MAX_MAPS	256	/* mappings with a table per process */
/* The page index's smallest granule, 4 KiB of pc: a table whose rows are
 * sparser than one a page gets larger pages (page_shift), so that its
 * index never has more entries than rows + 1, whatever range its file
 * claims. */
#define PREC_UNWIND_PAGE_SHIFT	12
#define PREC_UNWIND_MAX_TABLES	16384	/* tables loaded at once */
#define PREC_UNWIND_MAX_PROCS	16384	/* processes with mapping lists */
/* Steps of a binary search among a page's rows: up to 2^24 rows. */
#define PREC_UNWIND_SEARCH_STEPS	24
/* Rows found, kept per CPU by (table gen, pc): a power of two. */
#define PREC_UNWIND_ROW_CACHE	1024

/*
 * Page p of a table's pc space (p << page_shift up to the next page) has
 * its row among rows [idx[p], idx[p + 1]] (relative to first_row), where
 * idx[p] is the last row whose pc <= p << page_shift (0 when
 * none: rows[0].pc is then checked).  A pc at or past page nr_pages has
 * no row.
 */
enum prec_unwind_stat {
	PREC_UNWIND_STAT_WALKS,		/* samples with a user stack walked */
	PREC_UNWIND_STAT_CFI,		/* frames unwound with a table's row */
	PREC_UNWIND_STAT_FP,		/* frames unwound with the frame pointer */
	PREC_UNWIND_STAT_NO_PROC,	/* walks of a process with no mapping list */
	PREC_UNWIND_STAT_FULL,		/* walks cut at PREC_MAX_STACK frames */
	PREC_UNWIND_STAT_CACHED,	/* rows of STAT_CFI found in the row cache */
	PREC_UNWIND_STAT_READS,		/* reads of the user stack (windows) */
	PREC_UNWIND_STAT_NR,
};

struct prec_unwind_table {
	__u32 first_row;	/* slot of rows[0] in unwind_rows */
	__u32 nr_rows;
	__u32 first_page;	/* slot of idx[0], idx[1] */
	__u32 nr_pages;
	/*
	 * Never 0, and never the same for two tables loaded in one
	 * recording (an id and its slots are reused, a gen is not): the
	 * walk's row cache keys rows by it.
	 */
	__u32 gen;
	__u32 page_shift;	/* PREC_UNWIND_PAGE_SHIFT .. 32 */
};

/* pc of the table = ip - bias, for start <= ip < end. */
struct prec_unwind_map {
	__u64 start, end;
	__u64 bias;
	__u32 table;		/* key of unwind_tables */
	__u32 pad;
};

struct prec_unwind_proc {
	__u32 nr;		/* entries of maps[] in use */
	__u32 pad;
	struct prec_unwind_map maps[PREC_UNWIND_MAX_MAPS];
};

#endif
