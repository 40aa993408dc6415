// SPDX-License-Identifier: GPL-2.0
/*
 * --trace [BINARY:]GLOB: find the binary, read its .symtab/.dynsym with
 * libelf, match function symbols with fnmatch(3) and compute the file
 * offsets the uprobes are placed at.  Binaries come from the profiled
 * side (a target's /proc/PID/maps, files it can write): every ELF field
 * is bounds-checked by libelf or here.
 */
#include "trace/symbols.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/headers.h"
#include "elf/sections.h"
#include "util/log.h"
#include "util/printable.h"

static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

const char *trace_spec_split(const char *spec, char *bin_buf, size_t bin_size,
			     const char **bin)
{
	const char *colon = strchr(spec, ':');
	size_t n;

	*bin = NULL;
	if (!colon)
		return spec;
	n = (size_t)(colon - spec);
	if (n && n < bin_size) {
		memcpy(bin_buf, spec, n);
		bin_buf[n] = '\0';
		*bin = bin_buf;
	} else if (n) {
		*bin = "";	/* too long: reported as not found */
	}
	return colon + 1;
}

void trace_event_name(const char *sym, char *out, size_t size)
{
	size_t i;

	if (!size)
		return;
	for (i = 0; sym[i] && i + 1 < size; i++)
		out[i] = isalnum((unsigned char)sym[i]) || sym[i] == '_' ? sym[i] : '_';
	out[i] = '\0';
}

int trace_maps_parse_line(const char *line, __u64 *start, __u64 *end, __u64 *pgoff,
			  const char **path)
{
	unsigned long long s, e, off, ino;
	char perms[8];
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu%n", &s, &e, perms, &off, &ino,
		   &n) != 5 || n <= 0)
		return -EINVAL;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	*start = s;
	*end = e;
	*pgoff = off;
	*path = *line && *line != '\n' ? line : NULL;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* "libc" matches "libc.so.6" and "libc-2.31.so"; "libc.so.6" itself. */
static bool lib_name_matches(const char *file, const char *name, bool exact)
{
	size_t n = strlen(name);

	if (!strcmp(file, name))
		return true;
	return !exact && !strncmp(file, name, n) && (file[n] == '.' || file[n] == '-');
}

static int find_in_maps(int pid, const char *name, bool exact, char *out, size_t size)
{
	char path[64], line[PATH_MAX + 128];
	int found = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (found && fgets(line, sizeof(line), f)) {
		__u64 start, end, pgoff;
		const char *p;
		size_t n;

		if (trace_maps_parse_line(line, &start, &end, &pgoff, &p) || !p || *p != '/')
			continue;
		n = strcspn(p, "\n");
		if (n >= sizeof(line))
			continue;
		((char *)p)[n] = '\0';
		if (!lib_name_matches(base_name(p), name, exact))
			continue;
		found = 0;
		snprintf(out, size, "/proc/%d/root%s", pid, p);
	}
	fclose(f);
	return found;
}

static int find_in_dirs(const char *name, bool exact, char *out, size_t size)
{
	size_t i;

	for (i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++) {
		struct dirent *de;
		DIR *d = opendir(lib_dirs[i]);
		int found = 0;

		if (!d)
			continue;
		while (!found && (de = readdir(d))) {
			if (lib_name_matches(de->d_name, name, exact)) {
				snprintf(out, size, "%s/%s", lib_dirs[i], de->d_name);
				found = 1;
			}
		}
		closedir(d);
		if (found)
			return 0;
	}
	return -ENOENT;
}

/* Drop a "/proc/PID/root" prefix when the target shares our root. */
static void simplify_root(char *path, int pid)
{
	char root[64];
	struct stat a, b;
	size_t n;

	n = (size_t)snprintf(root, sizeof(root), "/proc/%d/root", pid);
	if (strncmp(path, root, n) || stat(root, &a) || stat("/", &b))
		return;
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		memmove(path, path + n, strlen(path + n) + 1);
}

static int resolve_binary(const char *bin, int pid, const char *main_exe,
			  char *out, size_t size)
{
	int err = -ENOENT;

	if (!bin) {
		if (!main_exe) {
			pr_err("trace: no target executable to search; give BINARY:PATTERN");
			return -EINVAL;
		}
		snprintf(out, size, "%s", main_exe);
		return 0;
	}
	if (strchr(bin, '/')) {
		snprintf(out, size, "%s", bin);
		return 0;
	}
	if (main_exe && !strcmp(base_name(main_exe), bin)) {
		snprintf(out, size, "%s", main_exe);
		return 0;
	}
	if (pid > 0) {
		err = find_in_maps(pid, bin, true, out, size);
		if (err)
			err = find_in_maps(pid, bin, false, out, size);
		if (!err)
			simplify_root(out, pid);
	}
	if (err)
		err = find_in_dirs(bin, true, out, size);
	if (err)
		err = find_in_dirs(bin, false, out, size);
	if (err) {
		if (pid > 0)
			pr_err("trace: no binary '%s' mapped by process %d or in the library directories",
			       bin, pid);
		else
			pr_err("trace: no binary '%s' (not the target's executable, not in the library directories)",
			       bin);
	}
	return err;
}

/* ---- ELF ---- */

struct scan {
	Elf *elf;
	struct elf_reads rd;		/* what libelf may read of the file */
	const char *path;
	const char *glob;
	GElf_Phdr *phdrs;
	size_t nr_phdrs;
	size_t nr_symtab, nr_dynsym;	/* defined function symbols seen */
	size_t hits;			/* symbols that matched, aliases too */
	bool have_symtab;
};

/* A libelf call failed on sc's file: what is skipped, and libelf's reason. */
static void scan_elf_warn(const struct scan *sc, const char *call, const char *skipped)
{
	pr_warn("trace: %s: %s skipped: libelf's %s failed: %s",
		sc->path, skipped, call, elf_errmsg(-1));
}

static int sym_file_offset(struct scan *sc, const GElf_Sym *sym, __u64 *off)
{
	__u64 a = sym->st_value;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t i;

	for (i = 0; i < sc->nr_phdrs; i++) {
		const GElf_Phdr *p = &sc->phdrs[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && a >= p->p_vaddr &&
		    a - p->p_vaddr < p->p_filesz) {
			*off = a - p->p_vaddr + p->p_offset;
			return 0;
		}
	}
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return -ENOENT;
	scn = elf_getscn(sc->elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh)) {
		pr_debug("trace: %s: section %u of a symbol: libelf's %s failed: %s", sc->path,
			 sym->st_shndx, scn ? "gelf_getshdr" : "elf_getscn", elf_errmsg(-1));
		return -ENOENT;
	}
	if (sh.sh_type == SHT_NOBITS || a < sh.sh_addr || a - sh.sh_addr >= sh.sh_size)
		return -ENOENT;
	*off = a - sh.sh_addr + sh.sh_offset;
	return 0;
}

static struct trace_func *find_func(struct trace_syms *s, __u32 binary, __u64 addr)
{
	size_t i;

	for (i = 0; i < s->nr_funcs; i++)
		if (s->funcs[i].binary == binary && s->funcs[i].addr == addr)
			return &s->funcs[i];
	return NULL;
}

static int add_func(struct trace_syms *s, __u32 binary, const char *name,
		    const GElf_Sym *sym, __u64 off, bool *added)
{
	struct trace_func *f = find_func(s, binary, sym->st_value);

	*added = false;
	if (f) {
		/* an alias: prefer a global name over a local or weak one */
		if (!f->event && GELF_ST_BIND(sym->st_info) == STB_GLOBAL &&
		    strcmp(f->name, name)) {
			char *n = strdup(name);

			if (!n)
				return -ENOMEM;
			free(f->name);
			f->name = n;
		}
		return 0;
	}
	if (s->nr_funcs == s->funcs_cap) {
		size_t cap = s->funcs_cap ? 2 * s->funcs_cap : 16;
		struct trace_func *nf = realloc(s->funcs, cap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		s->funcs = nf;
		s->funcs_cap = cap;
	}
	f = &s->funcs[s->nr_funcs];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	f->binary = binary;
	f->addr = sym->st_value;
	f->size = sym->st_size;
	f->file_off = off;
	f->id = (__u32)s->nr_funcs + 1;
	s->nr_funcs++;
	*added = true;
	return 0;
}

static int scan_symbols(struct scan *sc, struct trace_syms *s, __u32 binary,
			Elf_Scn *scn, const GElf_Shdr *sh, size_t *matched)
{
	char shown[PRINTABLE_MAX];
	Elf_Data *data;
	size_t i, n;

	if (elf_reads__admit(&sc->rd, sh, ELF_READ_MAX_SYMS) ||
	    elf_reads__admit_index(&sc->rd, sc->elf, sh->sh_link, ELF_READ_MAX_SYMS)) {
		pr_warn("trace: %s: a symbol table skipped: %s",
			printable(shown, sizeof(shown), sc->path), sc->rd.why);
		return 0;
	}
	data = elf_getdata(scn, NULL);
	if (!data) {
		scan_elf_warn(sc, "elf_getdata", "a symbol table");
		return 0;
	}
	if (!sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		__u64 off;
		bool added;
		int err;

		if (!gelf_getsym(data, (int)i, &sym)) {
			/* past the data libelf has */
			scan_elf_warn(sc, "gelf_getsym", "the end of a symbol table");
			break;
		}
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		if (sh->sh_type == SHT_SYMTAB)
			sc->nr_symtab++;
		else
			sc->nr_dynsym++;
		name = elf_strptr(sc->elf, sh->sh_link, sym.st_name);
		if (!name || !*name || fnmatch(sc->glob, name, 0))
			continue;
		sc->hits++;
		if (sym_file_offset(sc, &sym, &off)) {
			pr_warn("trace: %s: cannot place symbol %s (0x%llx) in the file, skipped",
				sc->path, name, (unsigned long long)sym.st_value);
			continue;
		}
		err = add_func(s, binary, name, &sym, off, &added);
		if (err)
			return err;
		if (added && ++*matched > TRACE_MAX_FUNCS)
			return -E2BIG;
	}
	return 0;
}

static int scan_elf(struct scan *sc, struct trace_syms *s, __u32 binary, size_t *matched)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t i;
	int err = 0;

	if (!gelf_getehdr(sc->elf, &eh)) {
		pr_err("trace: '%s' is not an ELF executable or shared library (libelf: %s)",
		       sc->path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		pr_err("trace: '%s' is not an ELF executable or shared library", sc->path);
		return -ENOEXEC;
	}
	if (elf_getphdrnum(sc->elf, &sc->nr_phdrs)) {
		pr_debug("trace: %s: no program headers: libelf's elf_getphdrnum failed: %s",
			 sc->path, elf_errmsg(-1));
		sc->nr_phdrs = 0;
	}
	if (sc->nr_phdrs > 4096)
		sc->nr_phdrs = 4096;
	sc->phdrs = calloc(sc->nr_phdrs ? sc->nr_phdrs : 1, sizeof(*sc->phdrs));
	if (!sc->phdrs)
		return -ENOMEM;
	for (i = 0; i < sc->nr_phdrs; i++) {
		if (!gelf_getphdr(sc->elf, (int)i, &sc->phdrs[i])) {
			pr_debug("trace: %s: program header %zu skipped: libelf's gelf_getphdr failed: %s",
				 sc->path, i, elf_errmsg(-1));
			memset(&sc->phdrs[i], 0, sizeof(sc->phdrs[i]));
		}
	}
	while (!err && (scn = elf_nextscn(sc->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			scan_elf_warn(sc, "gelf_getshdr", "a section");
			continue;
		}
		if (sh.sh_type == SHT_SYMTAB)
			sc->have_symtab = true;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			err = scan_symbols(sc, s, binary, scn, &sh, matched);
	}
	free(sc->phdrs);
	sc->phdrs = NULL;
	return err;
}

/* Index of path's binary in s (added if new), or -errno. */
static int add_binary(struct trace_syms *s, const char *path, const struct stat *st)
{
	struct trace_binary *nb;
	size_t i;

	for (i = 0; i < s->nr_binaries; i++)
		if (s->binaries[i].dev == st->st_dev && s->binaries[i].ino == st->st_ino)
			return (int)i;
	nb = realloc(s->binaries, (s->nr_binaries + 1) * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	s->binaries = nb;
	nb = &s->binaries[s->nr_binaries];
	nb->path = strdup(path);
	if (!nb->path)
		return -ENOMEM;
	nb->dev = st->st_dev;
	nb->ino = st->st_ino;
	return (int)s->nr_binaries++;
}

static int open_elf(const char *path, int *fd_out, Elf **elf_out, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	Elf *elf;
	int bad;

	if (fd < 0) {
		int err = -errno;

		pr_err("trace: cannot open '%s': %s", path, strerror(errno));
		return err;
	}
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		pr_err("trace: '%s' is not a regular file", path);
		close(fd);
		return -ENOEXEC;
	}
	elf_version(EV_CURRENT);
	/* counts checked before libelf allocates from them (elf/headers.h) */
	bad = elf_headers_check_fd(fd);
	elf = bad ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (bad || elf)
			pr_err("trace: '%s' is not an ELF file", path);
		else
			pr_err("trace: '%s' is not an ELF file (libelf: %s)", path, elf_errmsg(-1));
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	*fd_out = fd;
	*elf_out = elf;
	return 0;
}

static void name_events(struct trace_syms *s, size_t from)
{
	size_t i, j;

	for (i = from; i < s->nr_funcs; i++) {
		struct trace_func *f = &s->funcs[i];
		size_t n = strlen(f->name) + 16;
		int dup = 0;

		f->event = malloc(n);
		if (!f->event)
			continue;	/* trace_session checks */
		trace_event_name(f->name, f->event, n);
		/* same name twice (two binaries, or '.' vs '_'): add _1, _2 … */
		for (j = 0; j < i; j++)
			if (s->funcs[j].event && !strcmp(s->funcs[j].event, f->event))
				dup++;
		if (dup) {
			size_t len = strlen(f->event);

			snprintf(f->event + len, n - len, "_%d", dup);
		}
	}
}

int trace_syms_add_spec(struct trace_syms *s, const char *spec, int pid,
			const char *main_exe)
{
	struct scan sc = { 0 };
	char bin_buf[PATH_MAX], path[PATH_MAX + 32];
	const char *bin, *glob;
	size_t matched = 0, before = s->nr_funcs, i;
	struct stat st;
	int fd = -1, err, idx;
	Elf *elf = NULL;

	glob = trace_spec_split(spec, bin_buf, sizeof(bin_buf), &bin);
	if (!*glob) {
		pr_err("trace: '%s': empty function pattern", spec);
		return -EINVAL;
	}
	err = resolve_binary(bin, pid, main_exe, path, sizeof(path));
	if (err)
		return err;
	err = open_elf(path, &fd, &elf, &st);
	if (err)
		return err;
	idx = add_binary(s, path, &st);
	if (idx < 0) {
		err = idx;
		goto out;
	}
	sc.elf = elf;
	err = elf_reads__init_fd(&sc.rd, elf, fd);
	if (err)
		goto out;
	sc.path = path;
	sc.glob = glob;
	err = scan_elf(&sc, s, (__u32)idx, &matched);
	if (err == -E2BIG) {
		pr_err("trace: '%s' matches more than %d functions in %s; give a narrower pattern",
		       glob, TRACE_MAX_FUNCS, path);
	} else if (!err && !sc.nr_symtab && !sc.nr_dynsym) {
		pr_err("trace: %s has no function symbols (stripped?): searched .symtab and .dynsym for '%s'",
		       path, glob);
		err = -ENOEXEC;
	} else if (!err && !sc.hits) {
		pr_err("trace: no function matches '%s' in %s (searched %zu in .symtab%s, %zu in .dynsym)",
		       glob, path, sc.nr_symtab, sc.have_symtab ? "" : " (none: stripped)",
		       sc.nr_dynsym);
		err = -ENOENT;
	} else if (!err && s->nr_funcs > TRACE_MAX_FUNCS) {
		pr_err("trace: the --trace patterns match %zu functions in all (more than %d); give narrower patterns",
		       s->nr_funcs, TRACE_MAX_FUNCS);
		err = -E2BIG;
	}
	if (err) {			/* drop this spec's functions */
		for (i = before; i < s->nr_funcs; i++)
			free(s->funcs[i].name);
		s->nr_funcs = before;
	} else {
		name_events(s, before);
		pr_debug("trace: '%s': %zu functions in %s", spec, s->nr_funcs - before, path);
	}
out:
	elf_end(elf);
	close(fd);
	return err;
}

void trace_syms_free(struct trace_syms *s)
{
	size_t i;

	for (i = 0; i < s->nr_funcs; i++) {
		free(s->funcs[i].name);
		free(s->funcs[i].event);
	}
	for (i = 0; i < s->nr_binaries; i++)
		free(s->binaries[i].path);
	free(s->funcs);
	free(s->binaries);
	memset(s, 0, sizeof(*s));
}
