/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph ehframe: the user stack walked in the BPF program with the
 * unwind tables user space derives from each file's .eh_frame (maps and
 * their layout: include/precord/unwind_abi.h; a row's rule: struct
 * prec_unwind_row of bpf_abi.h).  x86-64.
 *
 * Per frame: the process's mapping of ip (binary search of its sorted
 * list, found once per sample by tgid), the table's page index, a binary
 * search among that page's rows, the rule applied: the return address
 * and the saved BP read in one bpf_probe_read_user when they are
 * adjacent.  Where ip has no table (JIT code, anonymous memory, a table
 * not loaded yet or refused for memory) or its row is NONE, the frame
 * pointer: [BP] the caller's BP, [BP + 8] the return address, SP = BP +
 * 16.  The walk stops at END, at a zero or non-canonical return address,
 * at a CFA that does not grow, at a read that fails, and at
 * PREC_MAX_STACK frames.
 */
#ifndef PRECORD_BPF_UNWIND_H
#define PRECORD_BPF_UNWIND_H

#include "precord/unwind_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);			/* sized by user space */
	__type(key, __u32);
	__type(value, __u64);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);			/* PREC_UNWIND_MAX_TABLES in ehframe mode */
	__type(key, __u32);
	__type(value, struct prec_unwind_table);
} unwind_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* 8 KiB a value: only live ones */
	__uint(max_entries, 1);			/* PREC_UNWIND_MAX_PROCS in ehframe mode */
	__type(key, __u32);
	__type(value, struct prec_unwind_proc);
} unwind_procs SEC(".maps");

/* What the walks did, per CPU (user space sums them for -v). */
enum unwind_stat {
	UNWIND_STAT_WALKS,		/* samples with a user stack walked */
	UNWIND_STAT_CFI,		/* frames unwound with a table's row */
	UNWIND_STAT_FP,			/* frames unwound with the frame pointer */
	UNWIND_STAT_NO_PROC,		/* walks of a process with no mapping list */
	UNWIND_STAT_FULL,		/* walks cut at PREC_MAX_STACK frames */
	UNWIND_STAT_NR,
};

struct unwind_stats {
	__u64 n[UNWIND_STAT_NR];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_stats);
} unwind_stats SEC(".maps");

#define UNWIND_USER_TOP		0x0000800000000000ULL	/* canonical user addresses */
/* x86-64 rt_sigframe: SP at the ucontext (the handler's ret popped
 * pretcode); uc_mcontext at +40, in it rbp +80, rsp +120, rip +128. */
#define UNWIND_SIG_RBP		120
#define UNWIND_SIG_WORDS	7		/* rbp rbx rdx rax rcx rsp rip */

/*
 * The last mapping a walk found, per CPU: a stack's frames mostly sit in
 * a few files, so most frames skip the search of the mapping list.
 * Kept in the walk's own (stack) state it made the verifier's bpf_loop
 * callback states never converge (E2BIG at load).
 */
struct unwind_last_map {
	__u64 start, end;		/* [start, end); end 0: none */
	__u64 bias;
	__u32 table;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_last_map);
} unwind_last SEC(".maps");

struct unwind_walk {
	__u64 ip, sp, bp;
	__u64 *ips;			/* the sample's ips[] (a map value) */
	const struct prec_unwind_proc *proc;	/* NULL: frame pointers only */
	__u32 kn;			/* kernel frames before the user ones */
	__u32 n;			/* user frames written */
	__u32 exact;			/* ip is no return address: look it up as is */
	__u32 cfi, fp;			/* frames of each kind */
	/*
	 * The last mapping and the last row found: the frames of a stack
	 * mostly sit in a few files, and a recursion returns to one address
	 * again and again, so most frames need neither search.
	 */
	struct unwind_last_map *last;	/* this CPU's (a map value: the verifier
					 * sees unknown values, not one state per
					 * value kept on the stack) */
};

static __always_inline const struct prec_unwind_map *
unwind_find_map(const struct prec_unwind_proc *p, __u64 ip)
{
	__u32 lo = 0, hi = p->nr;

	if (hi > PREC_UNWIND_MAX_MAPS)
		hi = PREC_UNWIND_MAX_MAPS;
	for (int k = 0; k < 9 && lo < hi; k++) {	/* 2^9 > PREC_UNWIND_MAX_MAPS */
		__u32 mid = (lo + hi) / 2;
		const struct prec_unwind_map *m = &p->maps[mid & (PREC_UNWIND_MAX_MAPS - 1)];

		if (ip < m->start)
			hi = mid;
		else if (ip >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/* Entry p of a table's page index into *out; -1 when the slot is out of
 * the map. */
static __always_inline int unwind_page_idx(const struct prec_unwind_table *t, __u64 p,
					   __u32 *out)
{
	__u32 slot = t->first_page + (__u32)(p >> 1);
	__u32 *v = bpf_map_lookup_elem(&unwind_rows, &slot);

	if (!v)
		return -1;
	*out = v[p & 1];
	return 0;
}

/* The row in effect at pc of table t: 0 and *out, or -1 when none. */
static __always_inline int unwind_find_row(const struct prec_unwind_table *t, __u64 pc,
					   struct prec_unwind_row *out)
{
	__u64 page = pc >> PREC_UNWIND_PAGE_SHIFT;
	struct prec_unwind_row *r;
	__u32 slot, lo, hi;

	if (page >= t->nr_pages || !t->nr_rows)
		return -1;
	if (unwind_page_idx(t, page, &lo) || unwind_page_idx(t, page + 1, &hi))
		return -1;
	if (hi >= t->nr_rows)
		hi = t->nr_rows - 1;
	if (lo > hi)
		return -1;
	for (int k = 0; k < PREC_UNWIND_SEARCH_STEPS && lo < hi; k++) {
		__u32 mid = lo + (hi - lo + 1) / 2;

		slot = t->first_row + mid;
		r = bpf_map_lookup_elem(&unwind_rows, &slot);
		if (!r)
			return -1;
		if (r->pc <= pc)
			lo = mid;
		else
			hi = mid - 1;
	}
	slot = t->first_row + lo;
	r = bpf_map_lookup_elem(&unwind_rows, &slot);
	if (!r || r->pc > pc)
		return -1;
	*out = *r;
	return 0;
}

/* The row for the walk's current frame: 0 and *row, -1 when none. */
static __always_inline int unwind_row_of(struct unwind_walk *w, struct prec_unwind_row *row)
{
	const struct prec_unwind_table *t;
	const struct prec_unwind_map *m;
	/* a return address is looked up at the call (ip - 1): the call may
	 * be a function's last instruction (noreturn callees) */
	__u64 ip = w->exact ? w->ip : w->ip - 1;
	__u32 id;

	if (!w->proc)
		return -1;
	if (!w->last)
		return -1;
	if (ip < w->last->start || ip >= w->last->end) {
		m = unwind_find_map(w->proc, ip);
		if (!m)
			return -1;
		w->last->start = m->start;
		w->last->end = m->end;
		w->last->bias = m->bias;
		w->last->table = m->table;
	}
	id = w->last->table;
	t = bpf_map_lookup_elem(&unwind_tables, &id);
	if (!t)
		return -1;
	return unwind_find_row(t, ip - w->last->bias, row);
}

/* One frame up (bpf_loop callback): 0 to go on, 1 to stop. */
static long unwind_step(__u32 i, void *arg)
{
	struct unwind_walk *w = arg;
	struct prec_unwind_row row;
	__u64 cfa, ra, bp = w->bp, words[UNWIND_SIG_WORDS];
	__u32 idx;

	(void)i;
	if (w->n >= PREC_MAX_STACK)
		return 1;
	if (unwind_row_of(w, &row) || row.cfa_kind == PREC_CFA_NONE)
		goto frame_pointer;
	switch (row.cfa_kind) {
	case PREC_CFA_SP:
		cfa = w->sp + row.cfa_off;
		break;
	case PREC_CFA_BP:
		cfa = w->bp + row.cfa_off;
		break;
	case PREC_CFA_PLT:
		cfa = w->sp + 8 + ((w->ip & 15) >= (__u64)(__s64)row.cfa_off ? 8 : 0);
		break;
	case PREC_CFA_SIGNAL:
		/* the interrupted registers, from the ucontext at SP */
		if (bpf_probe_read_user(words, sizeof(words), (void *)(w->sp + UNWIND_SIG_RBP)))
			return 1;
		bp = words[0];
		cfa = words[5];
		ra = words[6];
		w->exact = 1;
		w->cfi++;
		goto next;
	default:			/* END: the outermost frame */
		return 1;
	}
	if (cfa <= w->sp)
		return 1;
	if (row.bp_off == -2) {		/* BP saved next to the return address */
		if (bpf_probe_read_user(words, 16, (void *)(cfa - 16)))
			return 1;
		bp = words[0];
		ra = words[1];
	} else {
		if (bpf_probe_read_user(&ra, 8, (void *)(cfa - 8)))
			return 1;
		if (row.bp_off && bpf_probe_read_user(&bp, 8, (void *)(cfa + 8 * (__s64)row.bp_off)))
			return 1;
	}
	w->exact = 0;
	w->cfi++;
	goto next;

frame_pointer:
	if (!w->bp || w->bp < w->sp || (w->bp & 7))
		return 1;
	if (bpf_probe_read_user(words, 16, (void *)w->bp))
		return 1;
	cfa = w->bp + 16;
	bp = words[0];
	ra = words[1];
	w->exact = 0;
	w->fp++;

next:
	if (!ra || ra >= UNWIND_USER_TOP)
		return 1;
	w->ip = ra;
	w->sp = cfa;
	w->bp = bp;
	idx = w->kn + w->n;
	if (idx >= 2 * PREC_MAX_STACK)
		return 1;
	w->ips[idx] = ra;
	w->n++;
	return 0;
}

/*
 * The user stack of process tgid from the registers r: ips[kn] on, at
 * most PREC_MAX_STACK frames, innermost first (the sampled ip first).
 * Returns the number of frames.
 */
static __always_inline __u32 unwind_user(struct pt_regs *r, __u32 tgid, __u64 *ips, __u32 kn)
{
	struct unwind_walk w = {
		.ip = r->ip, .sp = r->sp, .bp = r->bp, .ips = ips, .kn = kn, .exact = 1,
	};
	struct unwind_stats *st;
	__u32 zero = 0;

	if (!w.ip || w.ip >= UNWIND_USER_TOP || kn >= PREC_MAX_STACK)
		return 0;
	w.proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	/* found by another walk: maybe another process's, forgotten */
	w.last = bpf_map_lookup_elem(&unwind_last, &zero);
	if (w.last)
		w.last->end = 0;
	ips[kn] = w.ip;
	w.n = 1;
	bpf_loop(PREC_MAX_STACK - 1, unwind_step, &w, 0);
	st = bpf_map_lookup_elem(&unwind_stats, &zero);
	if (st) {
		st->n[UNWIND_STAT_WALKS]++;
		st->n[UNWIND_STAT_CFI] += w.cfi;
		st->n[UNWIND_STAT_FP] += w.fp;
		if (!w.proc)
			st->n[UNWIND_STAT_NO_PROC]++;
		if (w.n >= PREC_MAX_STACK)
			st->n[UNWIND_STAT_FULL]++;
	}
	return w.n;
}

#endif
