// SPDX-License-Identifier: GPL-2.0
#include "record/pyprocs.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <bpf/bpf.h>

#include "elf/headers.h"
#include "elf/sections.h"
#include "precord/bpf_abi.h"
#include "record/jit_sources.h"
#include "record/pyframes.h"
#include "record/tidset.h"
#include "util/array.h"
#include "util/keymap.h"
#include "util/log.h"
#include "util/printable.h"

#define PY_MAX_LOADS		8	/* PT_LOADs kept per file */
#define PY_RECHECK_NS		1000000000ULL	/* a slot's identity read again */
#define PY_DEAD_NS		5000000000ULL	/* an exited process kept this long */
#define PY_UNKNOWN_NAME		"[python unknown]"

/* What a mapped ELF file says (cached by build-id). */
struct py_file {
	bool python;
	__u64 runtime, eval, eval_size, code_type, unicode_type, version;	/* st_value */
	__u32 nr_loads;
	struct { __u64 vaddr, offset; } loads[PY_MAX_LOADS];
};

struct py_slot {
	__u64 addr;			/* its frames' address */
	__u64 code;			/* the code object's address, 0: unknown */
	struct py_code_id id;
	__u64 checked;			/* sample time of the last identity read */
};

struct py_proc {
	__u32 pid;
	const struct py_layout *l;
	struct py_types types;
	__u64 eval_lo, eval_hi;
	struct keymap codes;		/* code address -> slot index + 1 */
	struct keymap bad;		/* code address -> time its read failed */
	struct py_slot *slots;
	size_t nr_slots, cap_slots;
	__u64 unknown;			/* its "[python unknown]" address, 0: none yet */
	__u64 found;			/* time of the mapping that showed it: its slots' */
	__u64 exited;			/* time of its EXIT, 0: alive */
	bool in_bpf;
};

struct pyprocs {
	int map_fd;
	struct jit_sources *js;
	struct keymap files;		/* build-id -> index + 1 of files[] */
	struct py_file *file_v;
	size_t nr_files, cap_files;
	struct tidset said;		/* processes of an unsupported version, said */
	struct py_proc **procs;		/* sorted by pid */
	size_t nr_procs, cap_procs;
	size_t nr_slots;		/* all processes */
	__u64 next_slot;		/* slot numbers are never reused: no two
					 * processes (a pid reused) share an address */
	__u64 sb_time;			/* of the side-band record being handled */
	char sym[PY_MAX_SYMBOL];
	/* counts */
	__u64 found, unsupported, bpf_full, names, unreadable, reused, over_limit;
	__u64 name_errors, spliced, unknown_procs;
};

struct pyprocs *pyprocs__new(int map_fd, struct jit_sources *js)
{
	struct pyprocs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->map_fd = map_fd;
	p->js = js;
	return p;
}

static void proc_free(struct py_proc *pp)
{
	if (!pp)
		return;
	keymap_free(&pp->codes);
	keymap_free(&pp->bad);
	free(pp->slots);
	free(pp);
}

void pyprocs__free(struct pyprocs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_procs; i++)
		proc_free(p->procs[i]);
	free(p->procs);
	keymap_free(&p->files);
	tidset_free(&p->said);
	free(p->file_v);
	free(p);
}

/* ---- processes, sorted by pid ---- */

static size_t proc_index(const struct pyprocs *p, __u32 pid, bool *found)
{
	size_t lo = ptrs_lower_bound_u32((void *const *)p->procs, p->nr_procs,
					 offsetof(struct py_proc, pid), pid);

	*found = lo < p->nr_procs && p->procs[lo]->pid == pid;
	return lo;
}

static struct py_proc *proc_find(const struct pyprocs *p, __u32 pid)
{
	bool found;
	size_t i = proc_index(p, pid, &found);

	return found ? p->procs[i] : NULL;
}

static void proc_remove(struct pyprocs *p, __u32 pid)
{
	bool found;
	size_t i = proc_index(p, pid, &found);
	struct py_proc *pp;

	if (!found)
		return;
	pp = p->procs[i];
	if (pp->in_bpf)
		bpf_map_delete_elem(p->map_fd, &pid);
	p->nr_slots -= pp->nr_slots;
	proc_free(pp);
	memmove(&p->procs[i], &p->procs[i + 1], (p->nr_procs - i - 1) * sizeof(*p->procs));
	p->nr_procs--;
}

/* Processes that exited more than PY_DEAD_NS before now: their late
 * samples are converted by then. */
static void collect_dead(struct pyprocs *p, __u64 now)
{
	for (size_t i = p->nr_procs; i-- > 0;) {
		struct py_proc *pp = p->procs[i];

		if (pp->exited && pp->exited + PY_DEAD_NS < now)
			proc_remove(p, pp->pid);
	}
}

/* A new entry for pid (an old one replaced): NULL when full or no memory. */
static struct py_proc *proc_add(struct pyprocs *p, __u32 pid)
{
	struct py_proc *pp;
	bool found;
	size_t i;

	proc_remove(p, pid);
	if (p->nr_procs >= PY_MAX_PROCS) {
		p->bpf_full++;
		return NULL;
	}
	i = proc_index(p, pid, &found);
	pp = calloc(1, sizeof(*pp));
	if (!pp || ARRAY_GROW(p->procs, p->cap_procs, p->nr_procs + 1)) {
		free(pp);
		return NULL;
	}
	memmove(&p->procs[i + 1], &p->procs[i], (p->nr_procs - i) * sizeof(*p->procs));
	p->procs[i] = pp;
	p->nr_procs++;
	pp->pid = pid;
	return pp;
}

/* ---- memory of a process ---- */

static int read_mem(void *ctx, __u64 addr, void *buf, size_t len)
{
	__u32 pid = *(const __u32 *)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (n < 0 && errno == ESRCH)
		return -ESRCH;		/* gone: its code objects stay as they were */
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* ---- files ---- */

enum { SYM_RUNTIME, SYM_EVAL, SYM_CODE, SYM_UNICODE, SYM_VERSION, NR_SYMS };
static const char *const sym_names[NR_SYMS] = {
	"_PyRuntime", "_PyEval_EvalFrameDefault", "PyCode_Type", "PyUnicode_Type",
	"Py_Version",
};

static void scan_dynsym(Elf *elf, struct elf_reads *rd, struct py_file *f)
{
	__u64 *vals[NR_SYMS] = { &f->runtime, &f->eval, &f->code_type, &f->unicode_type,
				 &f->version };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		if (elf_reads__admit(rd, &sh, ELF_READ_MAX_SYMS) ||
		    elf_reads__admit_index(rd, elf, sh.sh_link, ELF_READ_MAX_SYMS))
			return;
		data = elf_getdata(scn, NULL);
		if (!data)
			return;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			for (int k = 0; k < NR_SYMS; k++) {
				if (strcmp(name, sym_names[k]))
					continue;
				*vals[k] = sym.st_value;
				if (k == SYM_EVAL)
					f->eval_size = sym.st_size;
			}
		}
		return;
	}
}

static void scan_file(int fd, struct py_file *f)
{
	struct elf_reads rd;
	Elf *elf;
	size_t nph = 0;

	memset(f, 0, sizeof(*f));
	elf_version(EV_CURRENT);
	if (fd < 0 || elf_headers_check_fd(fd))
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	if (elf_kind(elf) != ELF_K_ELF || elf_reads__init_fd(&rd, elf, fd) ||
	    elf_getphdrnum(elf, &nph)) {
		elf_end(elf);
		return;
	}
	for (size_t i = 0; i < nph && f->nr_loads < PY_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			f->loads[f->nr_loads].vaddr = ph.p_vaddr;
			f->loads[f->nr_loads].offset = ph.p_offset;
			f->nr_loads++;
		}
	}
	scan_dynsym(elf, &rd, f);
	elf_end(elf);
	/* Py_Version came with 3.11: without it, an older CPython */
	f->python = f->runtime && f->eval && f->eval_size && f->code_type && f->unicode_type &&
		    f->nr_loads;
}

/* The file's facts, scanned once per build-id; NULL: none (no memory). */
static const struct py_file *file_facts(struct pyprocs *p, int fd, const __u8 *bid,
					__u8 bid_size, struct py_file *tmp)
{
	uint64_t *v;
	bool added;

	if (!bid_size || bid_size > 20) {
		scan_file(fd, tmp);
		return tmp;
	}
	v = keymap_put(&p->files, bid, bid_size, &added);
	if (!v)
		return NULL;
	if (!added)
		return &p->file_v[*v - 1];
	if (ARRAY_GROW(p->file_v, p->cap_files, p->nr_files + 1)) {
		*v = 0;		/* looked at again next time */
		scan_file(fd, tmp);
		return tmp;
	}
	scan_file(fd, &p->file_v[p->nr_files]);
	*v = ++p->nr_files;
	return &p->file_v[*v - 1];
}

/* The load bias of the file mapped at start from file offset pgoff. */
static bool file_bias(const struct py_file *f, __u64 start, __u64 pgoff, __u64 *bias)
{
	for (__u32 i = 0; i < f->nr_loads; i++) {
		__u64 page_off = f->loads[i].offset & ~0xfffULL;

		if (i + 1 < f->nr_loads && (f->loads[i + 1].offset & ~0xfffULL) <= pgoff)
			continue;
		if (page_off > pgoff)
			return false;
		*bias = start - (f->loads[i].vaddr - (f->loads[i].offset - pgoff));
		return true;
	}
	return false;
}

static void register_proc(struct pyprocs *p, __u32 pid, const struct py_file *f, __u64 bias)
{
	char shown[PRINTABLE_MAX];
	const struct py_layout *l;
	struct prec_py_proc val;
	struct py_proc *pp;
	__u64 version = 0;

	if (f->version && read_mem(&pid, bias + f->version, &version, 4))
		return;		/* gone already */
	l = py_layout_find(version);
	if (l && l->debug_cookie) {
		char cookie[8] = { 0 };

		if (read_mem(&pid, bias + f->runtime, cookie, sizeof(cookie)) ||
		    memcmp(cookie, l->debug_cookie, sizeof(cookie)))
			l = NULL;	/* not the build the table describes */
	}
	if (!l) {
		if (tidset_has(&p->said, pid))
			return;
		tidset_add(&p->said, pid);	/* -ENOMEM: said again, at worst */
		if (f->version)
			snprintf(shown, sizeof(shown), "%llu.%llu",
				 (unsigned long long)(version >> 24 & 0xff),
				 (unsigned long long)(version >> 16 & 0xff));
		else
			snprintf(shown, sizeof(shown), "before 3.11");
		pr_warn("process %u runs CPython %s, whose frames precord does not read (3.11 to 3.13): its native frames only",
			pid, shown);
		p->unsupported++;
		return;
	}
	pp = proc_add(p, pid);
	if (!pp)
		return;
	pp->found = p->sb_time;
	pp->l = l;
	pp->types.code = bias + f->code_type;
	pp->types.unicode = bias + f->unicode_type;
	pp->eval_lo = bias + f->eval;
	pp->eval_hi = pp->eval_lo + f->eval_size;
	val = l->walk;
	val.runtime = bias + f->runtime;
	if (bpf_map_update_elem(p->map_fd, &pid, &val, BPF_ANY)) {
		p->bpf_full++;
		return;
	}
	pp->in_bpf = true;
	p->found++;
	pr_debug("process %u: CPython %s, _PyRuntime at %#llx", pid, l->name,
		 (unsigned long long)val.runtime);
}

void pyprocs__mmap(void *ctx, __u32 pid, __u64 start, __u64 len, __u64 pgoff, int fd,
		   const char *name, const __u8 *bid, __u8 bid_size)
{
	struct pyprocs *p = ctx;
	const struct py_file *f;
	struct py_proc *pp;
	struct py_file tmp;
	__u64 bias;

	(void)len;
	(void)name;
	if (!p || !pid)
		return;
	pp = proc_find(p, pid);
	if (pp && !pp->exited)
		return;		/* found already (libpython and python both) */
	f = file_facts(p, fd, bid, bid_size, &tmp);
	if (!f || !f->python || !file_bias(f, start, pgoff, &bias))
		return;
	register_proc(p, pid, f, bias);
}

void pyprocs__sideband_time(struct pyprocs *p, __u64 time)
{
	if (p)
		p->sb_time = time;
}

void pyprocs__fork(struct pyprocs *p, __u32 ppid, __u32 pid, __u64 time)
{
	struct py_proc *parent, *child;
	struct prec_py_proc val;

	if (!p)
		return;
	parent = proc_find(p, ppid);
	if (!parent || parent->exited) {
		proc_remove(p, pid);
		return;
	}
	child = proc_add(p, pid);	/* parent stays where it is */
	if (!child)
		return;
	child->found = time;
	child->l = parent->l;
	child->types = parent->types;
	child->eval_lo = parent->eval_lo;
	child->eval_hi = parent->eval_hi;
	if (bpf_map_lookup_elem(p->map_fd, &ppid, &val) ||
	    bpf_map_update_elem(p->map_fd, &pid, &val, BPF_ANY))
		return;
	child->in_bpf = true;
	p->found++;
}

void pyprocs__exec(struct pyprocs *p, __u32 pid)
{
	if (!p)
		return;
	proc_remove(p, pid);
	tidset_del(&p->said, pid);
}

void pyprocs__exit(struct pyprocs *p, __u32 pid, __u64 time)
{
	struct py_proc *pp;

	if (!p)
		return;
	tidset_del(&p->said, pid);
	collect_dead(p, time);
	pp = proc_find(p, pid);
	if (!pp)
		return;
	if (pp->in_bpf)
		bpf_map_delete_elem(p->map_fd, &pid);
	pp->in_bpf = false;
	pp->exited = time ? time : 1;
}

/* ---- slots ---- */

/* A slot's bytes in the image, int3s: the symbol is then in .text, where
 * every reader of the images (perf, precord export and push) finds it. */
static const __u8 slot_code[PY_SLOT_BYTES] = {
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};

/*
 * A new slot named name, mapped from the time the process was found (so
 * that every sample of it, whatever order they are converted in, comes
 * after); UINT32_MAX past the limits or on failure.
 */
static __u32 slot_new(struct pyprocs *p, struct py_proc *pp, const char *name)
{
	__u32 slot = (__u32)pp->nr_slots;
	__u64 start = PY_IMAGE_BASE + p->next_slot * PY_SLOT_BYTES;
	int err;

	if (pp->nr_slots >= PY_MAX_SLOTS_PROC || p->nr_slots >= PY_MAX_SLOTS ||
	    ARRAY_GROW(pp->slots, pp->cap_slots, pp->nr_slots + 1)) {
		p->over_limit++;
		return UINT32_MAX;
	}
	err = jit_sources__add_named(p->js, pp->pid, pp->found, start, PY_SLOT_BYTES, name,
				     slot_code);
	if (err) {
		if (!p->name_errors++)
			pr_warn("Python frames: cannot name a code object of process %u: %s (counted)",
				pp->pid, strerror(-err));
		return UINT32_MAX;
	}
	memset(&pp->slots[slot], 0, sizeof(pp->slots[slot]));
	pp->slots[slot].addr = start + PY_SLOT_BYTES / 2;
	p->next_slot++;
	pp->nr_slots++;
	p->nr_slots++;
	return slot;
}

/* The process's "[python unknown]" frame. */
static __u64 unknown_addr(struct pyprocs *p, struct py_proc *pp)
{
	if (!pp->unknown) {
		__u32 slot = slot_new(p, pp, PY_UNKNOWN_NAME);

		if (slot == UINT32_MAX)
			return PY_IMAGE_BASE - PY_SLOT_BYTES;	/* mapped by nothing */
		pp->unknown = pp->slots[slot].addr;
	}
	return pp->unknown;
}

struct splice_ctx {
	struct pyprocs *p;
	struct py_proc *pp;
	__u64 time;
};

static bool same_id(const struct py_code_id *a, const struct py_code_id *b)
{
	return a->qualname == b->qualname && a->filename == b->filename &&
	       a->firstlineno == b->firstlineno;
}

static __u64 frame_addr(void *arg, __u64 word)
{
	struct splice_ctx *c = arg;
	struct pyprocs *p = c->p;
	struct py_proc *pp = c->pp;
	__u64 code = word & ~PREC_PY_ENTRY;
	uint64_t *v;
	struct py_code_id id;
	bool added;
	__u32 slot;

	v = keymap_get_u64(&pp->codes, code);
	if (v) {
		struct py_slot *s = &pp->slots[*v - 1];
		int err;

		if (c->time < s->checked + PY_RECHECK_NS)
			return s->addr;
		err = py_code_identity(pp->l, &pp->types, read_mem, &pp->pid, code, &id);
		if (err == -ESRCH || (!err && same_id(&id, &s->id))) {
			s->checked = c->time;
			return s->addr;
		}
		p->reused++;
	}
	/* what could not be read is not read again for a while: a hostile
	 * chain of unreadable frames costs a read per address a second */
	v = keymap_get_u64(&pp->bad, code);
	if (v && c->time < *v + PY_RECHECK_NS)
		return unknown_addr(p, pp);
	if (py_code_symbol(pp->l, &pp->types, read_mem, &pp->pid, code, &id, p->sym,
			   sizeof(p->sym))) {
		p->unreadable++;
		if (!v && pp->bad.nr < PY_MAX_SLOTS_PROC)
			v = keymap_put_u64(&pp->bad, code, &added);
		if (v)
			*v = c->time;
		return unknown_addr(p, pp);
	}
	slot = slot_new(p, pp, p->sym);
	if (slot == UINT32_MAX)
		return unknown_addr(p, pp);
	pp->slots[slot].code = code;
	pp->slots[slot].id = id;
	pp->slots[slot].checked = c->time;
	v = keymap_put_u64(&pp->codes, code, &added);
	if (v)
		*v = slot + 1;
	p->names++;
	return pp->slots[slot].addr;
}

__u32 pyprocs__splice(struct pyprocs *p, __u32 pid, __u64 time, bool leaf, const __u64 *user,
		      __u32 nu, const __u64 *py, __u32 npy, __u64 *out, __u32 cap)
{
	struct splice_ctx c = { .p = p, .time = time };

	c.pp = p ? proc_find(p, pid) : NULL;
	if (!c.pp) {
		__u32 n = nu < cap ? nu : cap;

		if (p)
			p->unknown_procs++;
		memcpy(out, user, n * sizeof(*out));
		return n;
	}
	p->spliced++;
	return py_splice(&(struct py_chain){ user, nu, py, npy, leaf }, c.pp->eval_lo,
			 c.pp->eval_hi, frame_addr, &c, out, cap);
}

void pyprocs__print_stats(const struct pyprocs *p, const struct prec_py_stats *bpf)
{
	if (!p)
		return;
	if (p->bpf_full)
		pr_warn("Python: %llu processes not followed: %u at most at once",
			(unsigned long long)p->bpf_full, PY_MAX_PROCS);
	if (p->over_limit)
		pr_warn("Python: %llu frames named \"" PY_UNKNOWN_NAME "\": past %u code objects a process or %u in all",
			(unsigned long long)p->over_limit, PY_MAX_SLOTS_PROC, PY_MAX_SLOTS);
	if (p->unreadable)
		pr_info("Python: %llu frames whose code object could not be read (exited, freed or not a code object) named \"" PY_UNKNOWN_NAME "\"",
			(unsigned long long)p->unreadable);
	if (!p->found && !p->names)
		return;		/* no Python process: nothing to say */
	pr_info("Python: %llu processes, %llu code objects named (%llu addresses reused), %llu samples spliced, %llu of unknown processes",
		(unsigned long long)p->found, (unsigned long long)p->names,
		(unsigned long long)p->reused, (unsigned long long)p->spliced,
		(unsigned long long)p->unknown_procs);
	if (bpf && log_verbosity > 0)
		pr_info("Python: BPF walks %llu, frames %llu, no thread state %llu, cut at %u frames %llu, ended by a failed read %llu",
			(unsigned long long)bpf->walks, (unsigned long long)bpf->frames,
			(unsigned long long)bpf->no_thread, PREC_PY_MAX_FRAMES,
			(unsigned long long)bpf->truncated, (unsigned long long)bpf->read_failed);
}
