/* SPDX-License-Identifier: GPL-2.0 */
/*
 * THE wire format between precord's BPF programs and user space.
 * Include <vmlinux.h> (BPF) or <linux/types.h> (user) first.
 *
 * Every ring-buffer record starts with struct prec_rec_hdr {type, size};
 * size counts the header and is a multiple of 8.  The consumer checks size
 * against what it received before reading any other field.
 */
#ifndef PRECORD_BPF_ABI_H
#define PRECORD_BPF_ABI_H

enum prec_rec_type {
	PREC_REC_SAMPLE = 1,		/* bpf/sample.bpf.c: one CPU sample */
	PREC_REC_TRACE_BLOCK = 2,	/* bpf/trace.bpf.c: a block of XRay FDR records */
};

struct prec_rec_hdr {
	__u32 type;		/* enum prec_rec_type */
	__u32 size;		/* bytes, header included */
};

#define PREC_MAX_STACK		127	/* perf's default kernel.perf_event_max_stack */
/* Python frames a sample carries at most (bpf/python.bpf.h). */
#define PREC_PY_MAX_FRAMES	128

/* Target filter modes (rodata `filter_mode` of every program). */
enum prec_filter {
	PREC_FILTER_ALL = 0,	/* -a: every task */
	PREC_FILTER_TGID = 1,	/* tgid must be a key of the `targets` map */
	PREC_FILTER_TID = 2,	/* tid must be a key of the `targets` map (-t) */
};

/*
 * --call-graph dwarf: the user registers a sample carries, in the order of
 * perf's x86_64 register mask PREC_DWARF_REGS_MASK (AX BX CX DX SI DI BP
 * SP IP FLAGS CS SS R8-R15, ascending bit order of perf_regs.h), and the
 * largest user-stack copy (perf's limit for sample_stack_user).
 */
#define PREC_DWARF_NR_REGS	20
#define PREC_DWARF_REGS_MASK	0xff0fffULL
#define PREC_DWARF_MAX_STACK	65528

/*
 * PREC_REC_SAMPLE: ips[] holds nr_kernel kernel frames (innermost first,
 * ips[0] is the sampled ip when the sample hit the kernel) followed by
 * nr_user user frames (innermost first), then nr_py Python frames
 * (innermost first, struct prec_py_proc: the code object's address, bit 0
 * set on an entry frame).  With regs_abi != 0 (dwarf mode,
 * a task with a user context) PREC_DWARF_NR_REGS u64 user registers follow
 * the frames, then stack_len bytes of user stack read from the user SP,
 * zero-padded to 8 (dwarf samples carry no Python frames).
 * size = sizeof(struct prec_sample) + 8 * (nr_kernel + nr_user + nr_py)
 * [+ 8 * PREC_DWARF_NR_REGS + stack_len rounded up to 8].  The
 * stacks are as
 * bpf_get_stack gave them: depending on the kernel and the event's
 * sample_type they may start with a PERF_CONTEXT_* marker or end in zeros;
 * user space writes perf's form (perfdata_callchain_build).
 */
struct prec_sample {
	struct prec_rec_hdr hdr;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u64 time;		/* CLOCK_MONOTONIC ns */
	__u64 period;		/* event period (ns for cpu-clock) */
	__u64 ip;		/* sampled instruction pointer */
	__u32 cpu;
	__u16 nr_kernel;
	__u16 nr_user;
	__u8 user_mode;		/* 1 if the sample hit user mode */
	__u8 regs_abi;		/* dwarf: 2 = 64-bit user regs follow, 0 none */
	__u16 nr_py;		/* Python frames after the user frames */
	__u32 stack_len;	/* dwarf: user-stack bytes after the regs */
	__u64 cgroup;		/* cgroup v2 id of the task (--all-cgroups), else 0 */
	__u64 ips[];
};

/*
 * --aggregate (bpf/aggregate.bpf.h): samples counted in the kernel.  Two
 * generations of two hash maps, swapped by user space through the
 * one-slot map-in-map arrays agg_counts and agg_stacks:
 *   counts: struct prec_agg_key -> struct prec_agg_val
 *   stacks: stack_id -> __u64[PREC_AGG_STACK_WORDS] (the frames as in
 *           prec_sample.ips, the first nr_kernel + nr_user + nr_py used)
 * stack_id is a 64-bit hash of the frames and their split; 0 means no
 * frames (no -g).  cpu is 0 unless the file records the CPU.
 */
#define PREC_AGG_STACK_WORDS	(2 * PREC_MAX_STACK + PREC_PY_MAX_FRAMES)

struct prec_agg_key {
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 cpu;
	__u16 nr_kernel;
	__u16 nr_user;
	__u64 ip;
	__u64 stack_id;
	__u64 cgroup;
	__u16 nr_py;		/* Python frames after the user frames */
	__u16 pad[3];
};

struct prec_agg_val {
	__u64 count;		/* samples */
	__u64 period;		/* sum of their periods */
};

/* Per-CPU counters of the aggregation (the agg_stats array). */
struct prec_agg_stats {
	__u64 taken;		/* samples kept, aggregated or not */
	__u64 full;		/* sent to the ring: a map of the generation was full */
	__u64 inserts;		/* new keys, both generations together */
};

/*
 * Python (bpf/python.bpf.h, user/record/pyprocs.c): the CPython processes
 * user space found, by tgid in the py_procs map.  The BPF program finds
 * the sampled thread's own PyThreadState by walking runtime -> head
 * interpreter -> its threads, comparing native_thread_id with the task's
 * tid in its own PID namespace, then walks the thread's interpreter
 * frames (current frame -> previous) and records one word per frame: the
 * code object's address, | PREC_PY_ENTRY on a frame that entered the
 * evaluation loop (3.11's is_entry; 3.12+: the frame above a shim frame).  The offsets come from user space's
 * table of versions (docs/python.md); a failed read ends the walk.
 */
#define PREC_PY_ENTRY		1ULL
#define PREC_PY_MAX_THREADS	128	/* threads looked at per sample */

struct prec_py_proc {
	__u64 runtime;			/* address of _PyRuntime in the process */
	__u16 rt_interp_head;		/* _PyRuntime.interpreters.head */
	__u16 is_threads_head;		/* PyInterpreterState.threads.head */
	__u16 ts_next;			/* PyThreadState.next */
	__u16 ts_native_tid;		/* PyThreadState.native_thread_id */
	__u16 ts_frame;			/* PyThreadState.cframe (3.11) */
	__u16 cf_current;		/* _PyCFrame.current_frame; 0xffff: ts_frame is the frame */
	__u16 fr_code;			/* _PyInterpreterFrame.f_code */
	__u16 fr_previous;		/* .previous */
	__u16 fr_entry;			/* .is_entry (a byte), 0xffff: none */
	__u16 fr_owner;			/* .owner (a byte), 0xffff: none */
	__u16 owner_shim;		/* owner of the C stack's shim frames (3.12+: 3):
					 * not recorded; the frame before it is an entry */
	__u16 pad;
};

/* Per-CPU counters of the Python walks (the py_stats array). */
struct prec_py_stats {
	__u64 walks;		/* samples of a Python process */
	__u64 no_thread;	/* its thread state not found (not Python, too many threads) */
	__u64 frames;		/* frames recorded */
	__u64 truncated;	/* walks stopped at PREC_PY_MAX_FRAMES */
	__u64 read_failed;	/* walks ended by a failed read */
};

/*
 * --call-graph ehframe: the unwind table of one ELF file, built by user
 * space from its .eh_frame (or .debug_frame) and walked by the BPF
 * program.  Rows are sorted by pc; a row holds from its pc up to the next
 * row's.  pc is the file's virtual address (p_vaddr space) minus the
 * table's base.  For the frame whose code is at pc:
 *   CFA  = (cfa_kind SP: SP, BP: BP) + cfa_off
 *   return address at CFA - 8, the caller's SP = CFA (x86-64)
 *   BP   = bp_off ? the word at CFA + 8 * bp_off : unchanged
 * PLT: CFA = SP + 8, + 8 more when (ip & 15) >= cfa_off (the stubs' CFA
 * expression).  SIGNAL: the frame of the kernel's rt_sigreturn trampoline:
 * SP points at the ucontext, whose sigcontext holds the interrupted
 * registers.  END: the outermost frame (return address undefined): the
 * walk stops.  NONE: no rule here (between FDEs, or an expression we do
 * not evaluate): the walk falls back to the frame pointer.
 */
enum prec_cfa_kind {
	PREC_CFA_SP = 0,
	PREC_CFA_BP = 1,
	PREC_CFA_PLT = 2,
	PREC_CFA_SIGNAL = 3,
	PREC_CFA_END = 4,
	PREC_CFA_NONE = 5,
};

struct prec_unwind_row {
	__u32 pc;
	__s16 cfa_off;
	__u8 cfa_kind;		/* enum prec_cfa_kind */
	__s8 bp_off;		/* in 8-byte words from the CFA; 0: BP unchanged */
};

/*
 * PREC_REC_TRACE_BLOCK: one per-CPU buffer of XRay-FDR-style records
 * (8-byte function records, 16-byte metadata records) from the uprobe
 * programs.  data[] holds len bytes; size = sizeof(struct
 * prec_trace_block) + len rounded up to 8.  Owned by the tracing code
 * (bpf/trace.bpf.c, user/trace/).
 */
struct prec_trace_block {
	struct prec_rec_hdr hdr;
	__u32 cpu;
	__u32 len;		/* bytes in data[], a multiple of 8 */
	__u64 seq;		/* per-CPU block number, from 0 */
	__u8 data[];
};
/*
 * len == 0: a flush marker, sent by trace_flush after that CPU's partial
 * block; seq is then the flush round that user space passed in.
 */

/*
 * The stream inside a block (docs/tracing.md has the full grammar).  Every
 * block is self-contained:
 *
 *   Block    := Thread+
 *   Thread   := NewBuffer(tid) [Pid(tgid)] NewCPUId(cpu, abs time) Body*
 *   Body     := [LoadBias] Function(entry) CallArgument{nr_args}
 *             | Function(exit) | TSCWrap(abs time)
 *
 * Pid is left out when the thread belongs to the previous Thread's process
 * (never in the first Thread of a block).  Function records are 8 bytes:
 * bit 0 = 0, bits 1-3 action, bits 4-31 function id, bits 32-63 time delta
 * to the previous record.  Metadata records are 16 bytes: bit 0 = 1, bits
 * 1-7 kind, 15 bytes of payload.  Times are bpf_ktime_get_ns().
 */
#define PREC_TRACE_BLOCK_DATA	16320	/* data bytes per per-CPU block */
#define PREC_TRACE_MAX_ARGS	6	/* --trace-args: DI SI DX CX R8 R9 */
#define PREC_TRACE_BIAS_SLOTS	16	/* binaries told apart by LoadBias */
#define PREC_TRACE_MAX_FUNCS	(1u << 28)

/* Function record actions (XRay's). */
enum prec_xray_action {
	PREC_XRAY_ENTER = 0,
	PREC_XRAY_EXIT = 1,
	PREC_XRAY_TAIL_EXIT = 2,
	PREC_XRAY_ENTER_ARGS = 3,
};

/* Metadata record kinds: XRay FDR's 0-9, then precord's own. */
enum prec_xray_md {
	PREC_XRAY_MD_NEW_BUFFER = 0,	/* s32 tid */
	PREC_XRAY_MD_END_OF_BUFFER = 1,
	PREC_XRAY_MD_NEW_CPU_ID = 2,	/* u16 cpu, u64 absolute time */
	PREC_XRAY_MD_TSC_WRAP = 3,	/* u64 absolute time */
	PREC_XRAY_MD_WALLTIME = 4,	/* u64 seconds, u32 microseconds */
	PREC_XRAY_MD_CUSTOM_EVENT = 5,	/* s32 size, s32 delta; size bytes follow */
	PREC_XRAY_MD_CALL_ARGUMENT = 6,	/* u64 argument */
	PREC_XRAY_MD_BUFFER_EXTENTS = 7,	/* u64 bytes that follow */
	PREC_XRAY_MD_TYPED_EVENT = 8,	/* s32 size, s32 delta, u16 type */
	PREC_XRAY_MD_PID = 9,		/* s32 pid */
	/*
	 * precord only (never in an --xray-out file): u64 load bias, u8 slot.
	 * Precedes the entry record it belongs to; the function's runtime
	 * address is bias + its file offset (see PREC_TRACE_COOKIE).
	 */
	PREC_XRAY_MD_LOAD_BIAS = 10,
};

/*
 * bpf_cookie of each uprobe/uretprobe: bits 0-27 function id, bits 28-31
 * the bias slot of its binary, bits 32-63 the function's file offset.
 */
#define PREC_TRACE_COOKIE(id, slot, off) \
	((__u64)(id) | ((__u64)(slot) & 15) << 28 | (__u64)(off) << 32)

/*
 * Per-CPU state of bpf/trace.bpf.c (value of the `trace_cpu` per-CPU
 * array).  hdr..data has the layout of struct prec_trace_block, so a
 * block leaves with one bpf_ringbuf_output().  busy guards the value
 * against a preempted program or the flush program (run on the CPU by
 * BPF_PROG_TEST_RUN) and is taken with an atomic exchange.
 */
struct prec_trace_cpu {
	__u64 busy;
	__u64 last_time;	/* time of the last record written */
	__u64 events;		/* hits written into blocks */
	__u64 busy_lost;	/* hits not written: the buffer was busy */
	__u64 ring_lost;	/* hits in blocks the ring buffer had no room for */
	__u64 blocks;		/* blocks sent */
	__u64 lost_blocks;	/* blocks the ring buffer had no room for */
	__u64 ring_bytes;	/* bytes sent, ring headers (8 each) included */
	__u64 foreign;		/* hits in tasks outside the targets, dropped */
	__u64 bias[PREC_TRACE_BIAS_SLOTS];	/* LoadBias written in this Thread */
	__u32 tid;		/* tid and tgid of the current Thread */
	__u32 tgid;
	__u32 block_events;	/* hits in the pending block */
	__u32 pad;
	struct prec_rec_hdr hdr;	/* = struct prec_trace_block */
	__u32 cpu;
	__u32 len;
	__u64 seq;
	__u8 data[PREC_TRACE_BLOCK_DATA];
};

#endif
