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

/* What the walks did, per CPU: n[enum prec_unwind_stat]. */
struct unwind_stats {
	__u64 n[PREC_UNWIND_STAT_NR];
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
#define UNWIND_MAX_FP_FRAME	(1 << 20)	/* bytes from SP to a frame pointer */

/*
 * Rows found, per CPU, direct-mapped by (table gen, pc): the frames of
 * the stacks a profile samples again and again return to the same
 * addresses, and a recursion to one address many times in a stack, so
 * most frames need neither the page index nor the search.  A table's
 * gen is never reused, so a row cached for a dropped table never
 * answers for another.
 */
struct unwind_cached_row {
	__u64 key;			/* gen << 32 | pc; 0: empty */
	struct prec_unwind_row row;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PREC_UNWIND_ROW_CACHE);
	__type(key, __u32);
	__type(value, struct unwind_cached_row);
} unwind_row_cache SEC(".maps");

/*
 * The user stack is read a window at a time: a bpf_probe_read_user
 * costs 25-50 ns here whatever its size up to a few hundred bytes (two
 * more 8-byte reads a frame took a 32-frame walk from 1.6 to 3.1 us), so
 * the walk copies UNWIND_WINDOW bytes from the lowest address it needs
 * and reads the return addresses and saved BPs of the frames above from
 * the copy.  A window ends early at the top of the main thread's stack
 * (mm->env_end: mapped from any address of that stack up to it); one
 * that crosses into an unmapped page elsewhere (a thread stack's top) is
 * read again up to the end of its first page.
 */
#define UNWIND_WINDOW		4096

/*
 * A walk's state, per CPU (one walk at a time).  Kept in a map value, not
 * on the walk's stack: the verifier sees unknown values there, not one
 * state per value of ip, sp or the frame count, so the bpf_loop
 * callback's states converge (kept on the stack, the last mapping alone
 * made the load fail with E2BIG).
 */
struct unwind_walk_state {
	__u64 ip, sp, bp;
	__u32 kn;			/* kernel frames before the user ones */
	__u32 n;			/* user frames written */
	__u32 exact;			/* ip is no return address: look it up as is */
	__u32 cfi, fp;			/* frames of each kind */
	__u32 hits;			/* rows found in unwind_row_cache */
	__u32 reads;			/* bpf_probe_read_user calls */
	/* the last mapping found and its table: a stack's frames mostly sit
	 * in a few files, so most frames skip the search of the list */
	__u64 map_start, map_end;	/* [start, end); end 0: none */
	__u64 map_bias;
	struct prec_unwind_table t;	/* gen 0: no table */
	/* the window of the stack */
	__u64 win_base;			/* user address of win[0]: 8-aligned */
	__u64 win_len;			/* bytes of win[] read; 0: none */
	__u64 stack_end;		/* the main thread's stack is mapped up to here */
	__u64 win[UNWIND_WINDOW / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_walk_state);
} unwind_walks SEC(".maps");

/* The bpf_loop callback's context: pointers only. */
struct unwind_walk {
	struct unwind_walk_state *s;
	__u64 *ips;			/* the sample's ips[] (a map value) */
	const struct prec_unwind_proc *proc;	/* NULL: frame pointers only */
};

/* Read the window from addr: 0, or -1 when addr is not readable. */
static __always_inline int unwind_window_load(struct unwind_walk_state *s, __u64 addr)
{
	__u64 len = UNWIND_WINDOW, page = 4096 - (addr & 4095);

	if (addr < s->stack_end && s->stack_end - addr < len)
		len = s->stack_end - addr;
	if (len < 16)
		len = 16;		/* a read straddling the end: let it fail */
	if (len > UNWIND_WINDOW)
		len = UNWIND_WINDOW;
	s->win_len = 0;
	s->reads++;
	if (bpf_probe_read_user(s->win, len, (void *)addr)) {
		if (page >= len)
			return -1;
		len = page < 16 ? 16 : page;
		if (len > UNWIND_WINDOW)
			len = UNWIND_WINDOW;
		s->reads++;
		if (bpf_probe_read_user(s->win, len, (void *)addr))
			return -1;
	}
	s->win_base = addr;
	s->win_len = len;
	return 0;
}

/*
 * The 8 bytes at user address addr, from the window: 0, or -1.  Saved
 * registers sit 8-aligned (the ABI keeps SP so); the rare unaligned one
 * is read as it is, so the window is read a word at a time (as bytes,
 * the compiler made 22 instructions of each read).
 */
static __always_inline int unwind_read(struct unwind_walk_state *s, __u64 addr, __u64 *out)
{
	__u64 off = addr - s->win_base;

	if (addr & 7) {
		s->reads++;
		return bpf_probe_read_user(out, 8, (void *)addr) ? -1 : 0;
	}
	if (addr < s->win_base || off + 8 > s->win_len) {
		if (unwind_window_load(s, addr))
			return -1;
		off = 0;
	}
	off >>= 3;
	if (off >= UNWIND_WINDOW / 8)
		return -1;
	*out = s->win[off];
	return 0;
}

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
	__u64 page = pc >> (t->page_shift & 63);
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
static __always_inline int unwind_row_of(const struct unwind_walk *w,
					 struct prec_unwind_row *row)
{
	struct unwind_walk_state *s = w->s;
	const struct prec_unwind_map *m;
	const struct prec_unwind_table *t;
	struct unwind_cached_row *c;
	/* a return address is looked up at the call (ip - 1): the call may
	 * be a function's last instruction (noreturn callees) */
	__u64 ip = s->exact ? s->ip : s->ip - 1, pc, key;
	__u32 slot;

	if (!w->proc)
		return -1;
	if (ip < s->map_start || ip >= s->map_end) {
		m = unwind_find_map(w->proc, ip);
		if (!m)
			return -1;
		t = bpf_map_lookup_elem(&unwind_tables, &m->table);
		if (!t)
			return -1;
		s->map_start = m->start;
		s->map_end = m->end;
		s->map_bias = m->bias;
		s->t = *t;
	}
	pc = ip - s->map_bias;
	if (!s->t.gen || pc >> 32)
		return -1;		/* dropped, or past any table (pc is 32 bits) */
	key = (__u64)s->t.gen << 32 | pc;
	/* Fibonacci hashing: consecutive pcs and gens spread over the cache */
	slot = (__u32)((key * 0x9e3779b97f4a7c15ULL) >> 54) & (PREC_UNWIND_ROW_CACHE - 1);
	c = bpf_map_lookup_elem(&unwind_row_cache, &slot);
	if (c && c->key == key) {
		*row = c->row;
		s->hits++;
		return 0;
	}
	if (unwind_find_row(&s->t, pc, row))
		return -1;
	if (c) {
		c->key = key;
		c->row = *row;
	}
	return 0;
}

/* One frame up (bpf_loop callback): 0 to go on, 1 to stop. */
static long unwind_step(__u32 i, void *arg)
{
	const struct unwind_walk *w = arg;
	struct unwind_walk_state *s = w->s;
	struct prec_unwind_row row;
	__u64 cfa, ra, bp = s->bp, words[UNWIND_SIG_WORDS];
	__u32 idx;

	(void)i;
	if (s->n >= PREC_MAX_STACK)
		return 1;
	if (unwind_row_of(w, &row) || row.cfa_kind == PREC_CFA_NONE)
		goto frame_pointer;
	switch (row.cfa_kind) {
	case PREC_CFA_SP:
		cfa = s->sp + row.cfa_off;
		break;
	case PREC_CFA_BP:
		cfa = s->bp + row.cfa_off;
		break;
	case PREC_CFA_PLT:
		cfa = s->sp + 8 + ((s->ip & 15) >= (__u64)(__s64)row.cfa_off ? 8 : 0);
		break;
	case PREC_CFA_SIGNAL:
		/* the interrupted registers, from the ucontext at SP (rare:
		 * read as it is, not through the window) */
		s->reads++;
		if (bpf_probe_read_user(words, sizeof(words), (void *)(s->sp + UNWIND_SIG_RBP)))
			return 1;
		bp = words[0];
		cfa = words[5];
		ra = words[6];
		s->exact = 1;
		s->cfi++;
		goto next;
	default:			/* END: the outermost frame */
		return 1;
	}
	if (cfa <= s->sp)
		return 1;
	/* the saved BP (below the return address) first: windows start at
	 * the lowest address a frame needs */
	if (row.bp_off && unwind_read(s, cfa + 8 * (__s64)row.bp_off, &bp))
		return 1;
	if (unwind_read(s, cfa - 8, &ra))
		return 1;
	s->exact = 0;
	s->cfi++;
	goto next;

frame_pointer:
	/* a BP far above SP is no frame pointer: code without one left
	 * another stack's address there (a coroutine's start on its own
	 * stack, nofp --stack-top, read a made-up frame off the main stack) */
	if (!s->bp || s->bp < s->sp || (s->bp & 7) || s->bp - s->sp > UNWIND_MAX_FP_FRAME)
		return 1;
	cfa = s->bp + 16;
	if (unwind_read(s, s->bp, &bp) || unwind_read(s, cfa - 8, &ra))
		return 1;
	s->exact = 0;
	s->fp++;

next:
	if (!ra || ra >= UNWIND_USER_TOP)
		return 1;
	s->ip = ra;
	s->sp = cfa;
	s->bp = bp;
	idx = s->kn + s->n;
	if (idx >= 2 * PREC_MAX_STACK)
		return 1;
	w->ips[idx] = ra;
	s->n++;
	return 0;
}

/*
 * The user stack of process tgid from the registers r: ips[kn] on, at
 * most PREC_MAX_STACK frames, innermost first (the sampled ip first).
 * Returns the number of frames.
 */
static __always_inline __u32 unwind_user(struct pt_regs *r, __u32 tgid, __u64 *ips, __u32 kn)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;
	struct unwind_walk w = { .ips = ips };
	struct unwind_stats *st;
	struct unwind_walk_state *s;
	__u32 zero = 0;

	if (!r->ip || r->ip >= UNWIND_USER_TOP || kn >= PREC_MAX_STACK)
		return 0;
	s = bpf_map_lookup_elem(&unwind_walks, &zero);
	if (!s)
		return 0;
	w.s = s;
	w.proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	s->ip = r->ip;
	s->sp = r->sp;
	s->bp = r->bp;
	s->kn = kn;
	s->n = 1;
	s->exact = 1;
	s->cfi = s->fp = s->hits = s->reads = 0;
	s->map_end = 0;			/* another process's, maybe */
	s->win_len = 0;
	s->stack_end = mm ? mm->env_end : 0;
	ips[kn] = s->ip;
	bpf_loop(PREC_MAX_STACK - 1, unwind_step, &w, 0);
	st = bpf_map_lookup_elem(&unwind_stats, &zero);
	if (st) {
		st->n[PREC_UNWIND_STAT_WALKS]++;
		st->n[PREC_UNWIND_STAT_CFI] += s->cfi;
		st->n[PREC_UNWIND_STAT_FP] += s->fp;
		st->n[PREC_UNWIND_STAT_CACHED] += s->hits;
		st->n[PREC_UNWIND_STAT_READS] += s->reads;
		if (!w.proc)
			st->n[PREC_UNWIND_STAT_NO_PROC]++;
		if (s->n >= PREC_MAX_STACK)
			st->n[PREC_UNWIND_STAT_FULL]++;
	}
	return s->n;
}

#endif
