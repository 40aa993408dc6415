// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol tables: built from a list of (start, end, name) and sorted once.
 * The rules are perf's (symbol.c, symbol-elf.c): functions only, a symbol
 * without a size ends where the next one starts, and of several symbols at
 * one address the one perf would pick is kept.
 */
#include "report/symtab.h"

#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gosyms.h"
#include "elf/headers.h"
#include "elf/sections.h"
#include "jit/perfmap.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/io.h"
#include "util/log.h"
#include "util/printable.h"

struct raw_sym {
	__u64 start, end;
	size_t name, module;		/* offsets in names; module 0 = none */
	int rank;			/* higher wins a tie at one address */
};

struct symtab {
	struct sym *syms;
	size_t nr;
	char *names;
	size_t names_len;
	__u64 text;
};

struct builder {
	struct raw_sym *v;
	size_t nr, cap;
	struct pbuf names;
};

static int builder_add(struct builder *b, __u64 start, __u64 end, const char *name, size_t len,
		       const char *module, size_t mlen, int rank)
{
	struct raw_sym s = { .start = start, .end = end, .rank = rank };

	if (!b->names.len && pbuf_put_u8(&b->names, 0))	/* offset 0 = no module */
		return -ENOMEM;
	if (ARRAY_GROW(b->v, b->cap, b->nr + 1))
		return -ENOMEM;
	s.name = b->names.len;
	pbuf_put(&b->names, name, len);
	pbuf_put_u8(&b->names, 0);
	if (mlen) {
		s.module = b->names.len;
		pbuf_put_u8(&b->names, '[');
		pbuf_put(&b->names, module, mlen);
		pbuf_put(&b->names, "]", 2);
	}
	if (b->names.err)
		return -ENOMEM;
	b->v[b->nr++] = s;
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return y->rank - x->rank;	/* best first */
}

/* Sort, keep the best of each address, close sizeless symbols. */
static struct symtab *builder_finish(struct builder *b)
{
	struct symtab *t = calloc(1, sizeof(*t));
	size_t n = 0;

	if (!t)
		goto fail;
	if (!b->nr) {
		free(t);
		free(b->v);
		pbuf_free(&b->names);
		errno = ENOENT;
		return NULL;
	}
	qsort(b->v, b->nr, sizeof(*b->v), cmp_raw);
	t->syms = calloc(b->nr, sizeof(*t->syms));
	if (!t->syms)
		goto fail;
	for (size_t i = 0; i < b->nr; i++) {
		if (n && t->syms[n - 1].start == b->v[i].start)
			continue;
		t->syms[n++] = (struct sym){ b->v[i].start, b->v[i].end,
					     (const char *)(uintptr_t)b->v[i].name,
					     (const char *)(uintptr_t)b->v[i].module };
	}
	for (size_t i = 0; i < n; i++) {
		struct sym *s = &t->syms[i];

		if (s->end <= s->start)
			s->end = i + 1 < n ? t->syms[i + 1].start : s->start + 4096;
		s->name = (const char *)b->names.data + (uintptr_t)s->name;
		s->module = (uintptr_t)s->module ? (const char *)b->names.data + (uintptr_t)s->module : NULL;
	}
	t->nr = n;
	t->names = (char *)b->names.data;
	t->names_len = b->names.len;
	free(b->v);
	return t;
fail:
	if (t)
		free(t->syms);
	free(t);
	free(b->v);
	pbuf_free(&b->names);
	errno = ENOMEM;
	return NULL;
}

/* ---- ELF ---------------------------------------------------------------- */

/* perf's choice among symbols at one address: sized, not weak, global,
 * fewer leading underscores, shorter name. */
static int elf_rank(const GElf_Sym *s, const char *name)
{
	int r = 0, us = 0;

	while (name[us] == '_' && us < 3)
		us++;
	r += s->st_size ? 1 << 20 : 0;
	r += GELF_ST_BIND(s->st_info) != STB_WEAK ? 1 << 19 : 0;
	r += GELF_ST_BIND(s->st_info) == STB_GLOBAL ? 1 << 18 : 0;
	r += (3 - us) << 16;
	r += 0xffff - (int)(strlen(name) > 0xffff ? 0xffff : strlen(name));
	return r;
}

static int load_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const GElf_Shdr *shdrs,
			size_t nr_shdrs, struct builder *b)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t each = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), n;

	if (!d || !each)
		return -ENOEXEC;
	n = d->d_size / each;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		const GElf_Shdr *in;
		int type;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= nr_shdrs)
			continue;
		in = &shdrs[s.st_shndx];
		if (in->sh_type == SHT_NOBITS || s.st_value < in->sh_addr)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		{
			__u64 off = s.st_value - in->sh_addr + in->sh_offset;

			if (builder_add(b, off, off + s.st_size, name, strlen(name), NULL, 0,
					elf_rank(&s, name)))
				return -ENOMEM;
		}
	}
	return 0;
}

static GElf_Shdr *read_shdrs(Elf *elf, size_t *nr)
{
	GElf_Shdr *shdrs;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrnum(elf, nr) ||
	    *nr > ELF_MAX_SECTIONS) {
		errno = ENOEXEC;
		return NULL;
	}
	shdrs = calloc(*nr ? *nr : 1, sizeof(*shdrs));
	if (!shdrs)
		return NULL;
	for (size_t i = 0; i < *nr; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);

		if (!scn || !gelf_getshdr(scn, &shdrs[i]))
			memset(&shdrs[i], 0, sizeof(shdrs[i]));
	}
	return shdrs;
}

static size_t find_section(const GElf_Shdr *shdrs, size_t nr, __u32 type)
{
	for (size_t i = 0; i < nr; i++)
		if (shdrs[i].sh_type == type)
			return i;
	return 0;
}

/* A debug file keeps the sections of its stripped file, same index and
 * address, and adds its .debug_* ones after them. */
static bool same_layout(const GElf_Shdr *lay, size_t nr_lay, const GElf_Shdr *dbg, size_t nr)
{
	if (!nr_lay || nr_lay > nr)
		return false;
	for (size_t i = 0; i < nr_lay; i++)
		if ((lay[i].sh_flags & SHF_ALLOC) &&
		    (lay[i].sh_addr != dbg[i].sh_addr || lay[i].sh_size != dbg[i].sh_size))
			return false;
	return true;
}

/*
 * The symbol table sh and its string table (sh_link) may be read
 * (elf/sections.h): else one warning naming the file and -EFBIG.
 */
static int syms_admit(struct elf_reads *rd, Elf *elf, const GElf_Shdr *sh, const char *name,
		      const char *which)
{
	char shown[PRINTABLE_MAX];

	if (!elf_reads__admit(rd, sh, ELF_READ_MAX_SYMS) &&
	    !elf_reads__admit_index(rd, elf, sh->sh_link, ELF_READ_MAX_SYMS))
		return 0;
	pr_warn("%s%s: symbols not read: %s", printable(shown, sizeof(shown), name), which,
		rd->why);
	return -EFBIG;
}

static int go_add(void *ctx, uint64_t off, const struct gopclntab_func *f)
{
	return builder_add(ctx, off, off + (f->end - f->start), f->name, f->name_len, NULL, 0, 0);
}

/* A stripped Go binary's functions, from its .gopclntab (elf/gosyms.h):
 * 0, or -ENOENT (not one), -EBADMSG (a table of no known layout),
 * -EFBIG (over the limits; both said in one warning), -ENOMEM. */
static int load_go(Elf *elf, struct elf_reads *rd, const char *name, struct builder *b)
{
	struct gosyms g;
	int err = gosyms__load(&g, elf, rd, name);

	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	err = gosyms__each(&g, name, go_add, b);
	gosyms__free(&g);
	return err;
}

/*
 * Functions of syms (its .symtab, else .dynsym; only .symtab when layout
 * is another file) placed at file offsets of layout, whose section
 * headers a separate debug file shares by index.  rd: what may be read of
 * syms's file.
 */
static struct symtab *load_elf(Elf *syms, struct elf_reads *rd, Elf *layout, const char *name)
{
	struct builder b = { 0 };
	GElf_Shdr *sh_syms, *sh_lay = NULL;
	size_t nr = 0, nr_lay = 0, i;
	int err = -ENOEXEC;

	sh_syms = read_shdrs(syms, &nr);
	if (!sh_syms) {
		pr_debug("%s: not a readable ELF file: %s", name, elf_errmsg(-1));
		return NULL;
	}
	if (layout != syms) {
		sh_lay = read_shdrs(layout, &nr_lay);
		if (!sh_lay || !same_layout(sh_lay, nr_lay, sh_syms, nr)) {
			free(sh_syms);
			free(sh_lay);
			errno = ENOEXEC;
			return NULL;
		}
	}
	i = find_section(sh_syms, nr, SHT_SYMTAB);
	if (!i && layout == syms) {
		err = load_go(syms, rd, name, &b);
		i = err == -ENOENT || err == -EBADMSG ? find_section(sh_syms, nr, SHT_DYNSYM) : 0;
	}
	if (i && sh_syms[i].sh_link < nr &&
	    syms_admit(rd, syms, &sh_syms[i], name, layout != syms ? " (its debug file)" : "")) {
		err = -EFBIG;
	} else if (i && sh_syms[i].sh_link < nr) {
		err = load_symbols(syms, elf_getscn(syms, i), &sh_syms[i], sh_lay ? sh_lay : sh_syms,
				   sh_lay ? nr_lay : nr, &b);
		if (err)
			pr_debug("%s: symbols of section %zu unreadable: %s", name, i, elf_errmsg(-1));
	}
	free(sh_syms);
	free(sh_lay);
	if (err == -ENOMEM || err == -EFBIG) {
		free(b.v);
		pbuf_free(&b.names);
		errno = -err;
		return NULL;
	}
	return builder_finish(&b);
}

static Elf *elf_open_checked(int fd, const char *name)
{
	int err = elf_headers_check_fd(fd);

	if (err) {
		pr_debug("%s: ELF headers refused: %s", name, strerror(-err));
		return NULL;
	}
	/* ELF_C_READ, not _MMAP: a file truncated while we read it gives an
	 * error, not a SIGBUS. */
	return elf_begin(fd, ELF_C_READ, NULL);
}

struct symtab *symtab__load_elf_debug(int fd, int debug_fd, const char *name)
{
	struct symtab *t = NULL;
	struct elf_reads rd;
	Elf *elf, *dbg = NULL;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOEXEC;
		return NULL;
	}
	elf = elf_open_checked(fd, name);
	if (debug_fd >= 0 && elf && (dbg = elf_open_checked(debug_fd, name)) &&
	    !elf_reads__init_fd(&rd, dbg, debug_fd))
		t = load_elf(dbg, &rd, elf, name);
	if (!t && elf) {
		err = elf_reads__init_fd(&rd, elf, fd);
		t = err ? NULL : load_elf(elf, &rd, elf, name);
		if (err)
			errno = -err;
	}
	err = t ? 0 : errno ? errno : ENOEXEC;
	if (dbg)
		elf_end(dbg);
	if (elf)
		elf_end(elf);
	errno = err;
	return t;
}

struct symtab *symtab__load_elf(int fd, const char *name)
{
	return symtab__load_elf_debug(fd, -1, name);
}

struct symtab *symtab__load_elf_mem(const void *image, size_t len, const char *name)
{
	struct elf_reads rd;
	struct symtab *t;
	char *copy;
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE || elf_headers_check_mem(image, len)) {
		errno = ENOEXEC;
		return NULL;
	}
	copy = malloc(len);	/* libelf wants a writable image */
	if (!copy)
		return NULL;
	memcpy(copy, image, len);
	elf = elf_memory(copy, len);
	if (elf_reads__init_mem(&rd, elf, copy, len)) {
		t = NULL;
		errno = ENOEXEC;
	} else {
		t = load_elf(elf, &rd, elf, name);
	}
	err = errno;
	if (elf)
		elf_end(elf);
	free(copy);
	errno = err;
	return t;
}

/* ---- text formats -------------------------------------------------------- */

/* The whole file (at most SYMTAB_MAX_TEXT bytes), NUL-terminated. */
static char *slurp(int fd, size_t *len)
{
	struct pbuf b = { 0 };

	for (;;) {
		ssize_t n;

		if (pbuf_reserve(&b, 65536 + 1))
			break;
		n = read_full(fd, b.data + b.len, 65536);
		if (n <= 0)
			break;
		b.len += (size_t)n;
		if (b.len > SYMTAB_MAX_TEXT || n < 65536)
			break;
	}
	if (b.err || !b.data) {
		pbuf_free(&b);
		errno = ENOMEM;
		return NULL;
	}
	b.data[b.len] = 0;
	*len = b.len;
	return (char *)b.data;
}

/* One kallsyms line: "ADDR TYPE NAME[\t[MODULE]]". */
static int kallsyms_line(struct builder *b, const char *p, const char *end, __u64 *text,
			 bool *nonzero)
{
	char *after;
	unsigned long long addr = strtoull(p, &after, 16);
	const char *name, *ne, *mod = NULL, *me = NULL;
	char type;

	if (after == p || after + 3 > end || after[0] != ' ' || after[2] != ' ')
		return 0;
	type = after[1];
	name = after + 3;
	for (ne = name; ne < end && *ne != '\t' && *ne != ' '; ne++)
		;
	if (ne == name)
		return 0;
	if (ne + 2 < end && *ne == '\t' && ne[1] == '[') {
		mod = ne + 2;
		me = memchr(mod, ']', (size_t)(end - mod));
	}
	if (addr)
		*nonzero = true;
	if (ne - name == 5 && !memcmp(name, "_text", 5))
		*text = addr;
	type = (char)toupper((unsigned char)type);
	if (type != 'T' && type != 'W')
		return 0;
	return builder_add(b, addr, addr, name, (size_t)(ne - name), mod,
			   me ? (size_t)(me - mod) : 0, isupper((unsigned char)after[1]) ? 1 : 0);
}

struct symtab *symtab__load_kallsyms(int fd, const char *name)
{
	struct builder b = { 0 };
	bool nonzero = false;
	size_t len;
	__u64 text = 0;
	char *s = slurp(fd, &len), *p;
	struct symtab *t;

	if (!s)
		return NULL;
	for (p = s; p < s + len;) {
		char *nl = memchr(p, '\n', (size_t)(s + len - p));
		char *end = nl ? nl : s + len;

		if (kallsyms_line(&b, p, end, &text, &nonzero)) {
			free(s);
			free(b.v);
			pbuf_free(&b.names);
			errno = ENOMEM;
			return NULL;
		}
		p = end + 1;
	}
	free(s);
	if (b.nr && !nonzero) {
		pr_debug("%s: every address is 0 (kptr_restrict)", name);
		free(b.v);
		pbuf_free(&b.names);
		errno = EPERM;
		return NULL;
	}
	t = builder_finish(&b);
	if (t)
		t->text = text;
	return t;
}

struct symtab *symtab__load_perfmap(int fd, const char *name)
{
	struct builder b = { 0 };
	size_t len, bad = 0;
	char *s = slurp(fd, &len), *p;

	if (!s)
		return NULL;
	for (p = s; p < s + len;) {
		char *nl = memchr(p, '\n', (size_t)(s + len - p));
		char *end = nl ? nl : s + len;
		struct perfmap_entry e;

		if ((size_t)(end - p) > PERFMAP_MAX_LINE ||
		    perfmap_parse_line(p, (size_t)(end - p), &e, NULL) ||
		    e.start + e.size < e.start || !e.size)
			bad++;
		else if (builder_add(&b, e.start, e.start + e.size, e.name, e.name_len, NULL, 0, 0))
			break;
		p = end + 1;
	}
	free(s);
	if (bad)
		pr_debug("%s: %zu bad lines skipped", name, bad);
	return builder_finish(&b);
}

void symtab__free(struct symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->names);
	free(t);
}

const struct sym *symtab__find(const struct symtab *t, __u64 addr)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {		/* first symbol starting past addr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= t->syms[lo - 1].end)
		return NULL;
	return &t->syms[lo - 1];
}

__u64 symtab__text(const struct symtab *t)
{
	return t->text;
}

size_t symtab__nr(const struct symtab *t)
{
	return t->nr;
}

size_t symtab__bytes(const struct symtab *t)
{
	return t->nr * sizeof(*t->syms) + t->names_len;
}
