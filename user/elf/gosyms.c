// SPDX-License-Identifier: GPL-2.0
/*
 * Stripped Go binaries (elf/gosyms.h): the sections are found by name,
 * each admitted by elf/sections.h before a byte of it is read, and read
 * with pread (or from the image), never through libelf's whole-section
 * reads.
 */
#include "elf/gosyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf/headers.h"
#include "util/io.h"
#include "util/le.h"
#include "util/log.h"
#include "util/printable.h"
#include "util/sha256.h"

#define GO_NOTE_MAX	512		/* a Go build id is ~83 bytes */
#define GO_NOTE_TYPE	4
#define ID_TAG		"precord-go-build-id-v1"

struct go_scn {
	GElf_Shdr pcln, text, note;
	bool has_pcln, has_text, has_note, has_symtab;
};

/* The sections a Go binary's names need, by name (.shstrtab admitted). */
static int scan(Elf *elf, struct elf_reads *rd, struct go_scn *s)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(s, 0, sizeof(*s));
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	if (elf_reads__admit_index(rd, elf, shstrndx, ELF_READ_MAX_OTHER))
		return -EFBIG;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			s->has_symtab = true;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".gopclntab") && sh.sh_type == SHT_PROGBITS && !s->has_pcln) {
			s->pcln = sh;
			s->has_pcln = true;
		} else if (!strcmp(name, ".text") && sh.sh_type == SHT_PROGBITS && !s->has_text) {
			s->text = sh;
			s->has_text = true;
		} else if (!strcmp(name, ".note.go.buildid") && sh.sh_type == SHT_NOTE) {
			s->note = sh;
			s->has_note = true;
		}
	}
	return s->has_pcln && s->has_text && !s->has_symtab ? 0 : -ENOENT;
}

/* len bytes of rd's file at off (admitted before). */
static int read_at(const struct elf_reads *rd, void *buf, size_t len, uint64_t off)
{
	if (off > rd->size || len > rd->size - off)
		return -EBADMSG;
	if (rd->fd < 0) {
		memcpy(buf, rd->image + off, len);
		return 0;
	}
	return pread_full(rd->fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

/* The whole section sh into a malloc'd buffer. */
static int read_section(struct elf_reads *rd, const GElf_Shdr *sh, uint64_t cap, uint8_t **out)
{
	int err = elf_reads__admit(rd, sh, cap);

	*out = NULL;
	if (err)
		return err;
	if ((sh->sh_flags & SHF_COMPRESSED) || !sh->sh_size)
		return -EBADMSG;
	*out = malloc(sh->sh_size);
	if (!*out)
		return -ENOMEM;
	err = read_at(rd, *out, sh->sh_size, sh->sh_offset);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

int gosyms__load(struct gosyms *g, Elf *elf, struct elf_reads *rd, const char *file)
{
	char shown[PRINTABLE_MAX];
	struct go_scn s;
	GElf_Ehdr eh;
	int err;

	memset(g, 0, sizeof(*g));
	err = scan(elf, rd, &s);
	if (err)
		return err;
	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	err = read_section(rd, &s.pcln, ELF_READ_MAX_SYMS, &g->bytes);
	if (err == -EFBIG)
		pr_warn("%s: Go function names not read: %s", printable(shown, sizeof(shown), file),
			rd->why);
	if (err)
		return err;
	g->text_addr = s.text.sh_addr;
	g->text_off = s.text.sh_offset;
	g->text_size = s.text.sh_size;
	g->machine = eh.e_machine;
	err = gopclntab__open(&g->tab, g->bytes, s.pcln.sh_size, s.text.sh_addr);
	if (err) {
		pr_warn("%s: Go function names not read: its .gopclntab is not of a known layout",
			printable(shown, sizeof(shown), file));
		gosyms__free(g);
	}
	return err;
}

void gosyms__free(struct gosyms *g)
{
	free(g->bytes);
	memset(g, 0, sizeof(*g));
}

int gosyms__func(const struct gosyms *g, uint64_t i, struct gopclntab_func *f, uint64_t *off)
{
	int err = gopclntab__func(&g->tab, i, f);

	if (err)
		return err;
	if (f->start < g->text_addr || f->end - g->text_addr > g->text_size)
		return -EBADMSG;
	*off = f->start - g->text_addr + g->text_off;
	return 0;
}

int gosyms__each(const struct gosyms *g, const char *file,
		 int (*fn)(void *ctx, uint64_t off, const struct gopclntab_func *f), void *ctx)
{
	struct gopclntab_func f;
	uint64_t off, bad = 0, name_bytes = 0;
	char shown[PRINTABLE_MAX];
	int err = 0;

	for (uint64_t i = 0; i < g->tab.nfunc && !err; i++) {
		/* a real table holds each name once: names pointed at again
		 * and again (4 KiB by 2^22 functions) are not copied past
		 * the table's own size */
		if (gosyms__func(g, i, &f, &off) || f.name_len > g->tab.size - name_bytes) {
			bad++;
			continue;
		}
		name_bytes += f.name_len;
		err = fn(ctx, off, &f);
	}
	if (bad || g->tab.over)
		pr_warn("%s: %llu of the %llu functions of its .gopclntab not read (%llu bogus entries, %llu past the limit of %u)",
			printable(shown, sizeof(shown), file),
			(unsigned long long)(bad + g->tab.over),
			(unsigned long long)(g->tab.nfunc + g->tab.over), (unsigned long long)bad,
			(unsigned long long)g->tab.over, GOPCLNTAB_MAX_FUNCS);
	return err;
}

/* The Go build id's descriptor: *len bytes (0: none). */
static int go_note(struct elf_reads *rd, const struct go_scn *s, bool be, uint8_t *desc,
		   size_t *len)
{
	uint8_t buf[GO_NOTE_MAX];
	size_t size = s->note.sh_size;
	uint32_t namesz, descsz, type;

	*len = 0;
	if (!s->has_note || size < 16 || size > sizeof(buf))
		return 0;
	if (elf_reads__admit(rd, &s->note, GO_NOTE_MAX) || read_at(rd, buf, size, s->note.sh_offset))
		return -EIO;
	namesz = le32_load(buf), descsz = le32_load(buf + 4), type = le32_load(buf + 8);
	if (be)
		namesz = __builtin_bswap32(namesz), descsz = __builtin_bswap32(descsz),
		type = __builtin_bswap32(type);
	/* owner "Go\0" padded to 4, then the id */
	if (type != GO_NOTE_TYPE || namesz != 3 || memcmp(buf + 12, "Go", 3) ||
	    descsz > size - 16)
		return 0;
	memcpy(desc, buf + 16, descsz);
	*len = descsz;
	return 0;
}

/* fd's ELF, its headers checked first, and what may be read of it. */
static Elf *open_fd(int fd, struct elf_reads *rd)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE || elf_headers_check_fd(fd))
		return NULL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_reads__init_fd(rd, elf, fd)) {
		elf_end(elf);
		elf = NULL;
	}
	return elf;
}

int gosyms__load_fd(struct gosyms *g, int fd, const char *file)
{
	struct elf_reads rd;
	Elf *elf = open_fd(fd, &rd);
	int err = elf ? gosyms__load(g, elf, &rd, file) : -ENOEXEC;

	if (elf)
		elf_end(elf);
	return err;
}

static int go_id(int fd, __u8 id[BUILD_ID_SIZE])
{
	uint8_t desc[GO_NOTE_MAX], delta_le[8], digest[SHA256_DIGEST_BYTES], *pcln = NULL;
	struct elf_reads rd;
	struct go_scn s;
	struct sha256 h;
	size_t len = 0;
	Elf *elf = open_fd(fd, &rd);
	int err;

	if (!elf)
		return -ENOEXEC;
	err = scan(elf, &rd, &s);
	if (!err)
		err = go_note(&rd, &s, rd.be, desc, &len);
	if (!err && !len)
		err = read_section(&rd, &s.pcln, ELF_READ_MAX_SYMS, &pcln);
	elf_end(elf);
	if (err)
		return err;
	le64_store(delta_le, s.text.sh_addr - s.text.sh_offset);
	sha256__init(&h);
	sha256__update(&h, ID_TAG, sizeof(ID_TAG));
	sha256__update(&h, delta_le, sizeof(delta_le));
	if (len)
		sha256__update(&h, desc, len);
	else
		sha256__update(&h, pcln, s.pcln.sh_size);
	sha256__final(&h, digest);
	free(pcln);
	memcpy(id, digest, BUILD_ID_SIZE);
	return BUILD_ID_SIZE;
}

int elf_build_id_or_go_fd(int fd, __u8 id[BUILD_ID_SIZE])
{
	int n = elf_build_id_fd(fd, id);

	return n == -ENOENT && go_id(fd, id) == BUILD_ID_SIZE ? BUILD_ID_SIZE : n;
}
