/* SPDX-License-Identifier: GPL-2.0 */
/* Internals shared by merger.c and merger_jitdump.c (see merger.h). */
#ifndef PRECORD_JIT_MERGER_INT_H
#define PRECORD_JIT_MERGER_INT_H

#include <stdbool.h>
#include <linux/types.h>

#include "jit/budget.h"
#include "jit/jitdump.h"
#include "jit/jitelf.h"
#include "jit/merger.h"
#include "jit/perfmap.h"
#include "util/buf.h"

struct stdio_tail;

enum src_kind { SRC_JITDUMP, SRC_PERFMAP, SRC_MLPD };

struct source {
	enum src_kind kind;
	char *path;
	__u32 pid;
	__u64 dev, ino;			/* one source per file */
	struct jitdump_reader *jd;
	struct perfmap_reader *pm;
	__u64 time;			/* perf map: time of lines read from now on */
	__u64 base_time;		/* perf map: time of lines for new addresses */
	__u64 *starts;			/* perf map: start addresses seen (hash set) */
	size_t nstarts, starts_cap;
	/* records that apply to the next JIT_CODE_LOAD, kept whole */
	struct pbuf pend_debug, pend_di2, pend_unwind;
	unsigned int warnings;
};

struct image_slot {
	char *path;
	__u8 build_id[20];
	__u64 size;
	__u32 nr_funcs;
	__u64 *func_addr;		/* after writing */
	__u64 dev, ino;			/* of the file written */
	__u32 listed;			/* the last checkpoint that listed it */
	bool ok;			/* written, and not pruned since */
};

struct imap {				/* a mapping; jit_mapping on demand */
	__u64 time, start, len;
	__u32 pid, tid;
	__u32 image;
	__s32 func;
	__u32 seq;			/* insertion order: ties keep it */
};

struct code_ent {			/* (source, code_index) → function */
	__u64 code_index, size;
	__u32 src, image;
	__s32 func;
	bool used;
};

struct jit_merger {
	char *dir;
	int dirfd;
	unsigned int seq;
	struct source *srcs;
	size_t nr_srcs, cap_srcs;
	struct jitelf_image *img;	/* open image, index nr_images - 1 */
	struct image_slot *images;
	size_t nr_images, cap_images;
	struct imap *imaps;
	size_t nr_imaps, cap_imaps;
	__u32 imap_seq;			/* next imap's seq */
	__u32 checkpoint;		/* the last checkpoint's number */
	struct code_ent *codes;
	size_t nr_codes, nr_code_slots;
	size_t nr_maps;			/* after finish: imaps[0..nr_maps) */
	struct jit_image *out_images;
	size_t nr_out_images;
	struct jit_stats st;
	struct jit_limits lim;
	size_t next_src;		/* the first source of the next poll */
	struct stdio_tail *tail;	/* NULL until a jitdump of a process */
	bool finished, full_warned, cap_warned;
	bool have_outputs;		/* mappings and images built (finish, checkpoint) */
};

/* Keep a DEBUG_INFO/UNWINDING_INFO record for the next load only up to
 * this size (a hostile dump could park 3 x 64 MiB per source). */
#define JIT_MAX_PENDING		(8u << 20)

/* Add a function to the open image (starting a new image when it is
 * full); returns its index in that image or -errno. */
int merger_add_func(struct jit_merger *m, const char *name, const void *code, __u64 size);
/* A mapping of function func of image image; -E2BIG past the limit. */
int merger_add_imap(struct jit_merger *m, __u64 time, __u32 pid, __u32 tid,
		    __u64 start, __u64 len, __u32 image, __s32 func);
struct code_ent *merger_code_find(struct jit_merger *m, __u32 src, __u64 idx, bool *found);
int merger_code_put(struct jit_merger *m, const struct code_ent *e);

struct jd_ctx {
	struct jit_merger *m;
	__u32 src;
};

/* jitdump_reader callback: ctx is a struct jd_ctx. */
int merger_jitdump_record(void *ctx, const struct jitdump_record *rec);

#endif
