// SPDX-License-Identifier: GPL-2.0
/*
 * The symbol-file writer of elf/symfile.h: libelf lays the file out once
 * (ELF_C_NULL), .text then gets its address from the offset libelf gave
 * it, and the file is written.
 */
#include "elf/symfile.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "util/buf.h"
#include "util/log.h"

#define NT_GNU_BUILD_ID_TYPE	3
/* section names, NUL-separated, and their offsets in it */
static const char shstr[] = "\0.note.gnu.build-id\0.text\0.symtab\0.strtab\0.shstrtab";
enum { SH_NOTE = 1, SH_TEXT = 20, SH_SYMTAB = 26, SH_STRTAB = 34, SH_SHSTRTAB = 42 };

static int fail(const char *call)
{
	pr_debug("symbol file: libelf's %s failed: %s", call, elf_errmsg(-1));
	return -EIO;
}

static Elf_Scn *add(Elf *e, unsigned int name, Elf64_Word type, Elf64_Xword flags,
		    Elf64_Xword align, Elf64_Xword entsize, const void *buf, size_t size)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d = scn ? elf_newdata(scn) : NULL;
	GElf_Shdr sh;

	if (!d || !gelf_getshdr(scn, &sh))
		return NULL;
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	sh.sh_entsize = entsize;
	if (!gelf_update_shdr(scn, &sh))
		return NULL;
	d->d_buf = (void *)buf;
	d->d_size = size;
	d->d_type = ELF_T_BYTE;
	d->d_align = align;
	d->d_version = EV_CURRENT;
	return scn;
}

/* The symbol and string tables' bytes (host order: the file's). */
static int tables(const struct symfile_sym *syms, size_t n, struct pbuf *sym, struct pbuf *str)
{
	Elf64_Sym s = { 0 };

	pbuf_put(sym, &s, sizeof(s));		/* symbol 0 */
	pbuf_put_u8(str, 0);
	for (size_t i = 0; i < n && !sym->err && !str->err; i++) {
		if (str->len > UINT32_MAX - syms[i].name_len - 1)
			return -ENOMEM;
		s.st_name = (Elf64_Word)str->len;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s.st_shndx = 2;			/* .text */
		s.st_value = syms[i].addr;
		s.st_size = syms[i].size;
		pbuf_put(sym, &s, sizeof(s));
		pbuf_put(str, syms[i].name, syms[i].name_len);
		pbuf_put_u8(str, 0);
	}
	return sym->err || str->err ? -ENOMEM : 0;
}

static int write_elf(Elf *e, const struct pbuf *note, const struct pbuf *sym,
		     const struct pbuf *str, uint64_t delta, uint16_t machine)
{
	Elf_Scn *text, *symtab, *strtab, *shs;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	if (!gelf_newehdr(e, ELFCLASS64) || !gelf_getehdr(e, &eh))
		return fail("gelf_newehdr");
	eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? ELFDATA2MSB : ELFDATA2LSB;
	eh.e_type = ET_EXEC;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	if (!add(e, SH_NOTE, SHT_NOTE, SHF_ALLOC, 4, 0, note->data, note->len) ||
	    !(text = add(e, SH_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, 0, NULL, 0)) ||
	    !(symtab = add(e, SH_SYMTAB, SHT_SYMTAB, 0, 8, sizeof(Elf64_Sym), sym->data, sym->len)) ||
	    !(strtab = add(e, SH_STRTAB, SHT_STRTAB, 0, 1, 0, str->data, str->len)) ||
	    !(shs = add(e, SH_SHSTRTAB, SHT_STRTAB, 0, 1, 0, shstr, sizeof(shstr))))
		return fail("elf_newscn");
	eh.e_shstrndx = (Elf64_Half)elf_ndxscn(shs);
	if (!gelf_update_ehdr(e, &eh) || !gelf_getshdr(symtab, &sh))
		return fail("gelf_update_ehdr");
	sh.sh_link = (Elf64_Word)elf_ndxscn(strtab);
	sh.sh_info = 1;				/* the first global symbol */
	if (!gelf_update_shdr(symtab, &sh))
		return fail("gelf_update_shdr");
	if (elf_update(e, ELF_C_NULL) < 0 || !gelf_getshdr(text, &sh))
		return fail("elf_update (layout)");
	if (sh.sh_offset + delta < delta)
		return -EINVAL;
	sh.sh_addr = sh.sh_offset + delta;
	if (!gelf_update_shdr(text, &sh))
		return fail("gelf_update_shdr");
	if (elf_update(e, ELF_C_WRITE) < 0)
		return errno == ENOSPC || errno == EDQUOT ? -errno : fail("elf_update (write)");
	return 0;
}

int symfile__write(int fd, const struct symfile_sym *syms, size_t n, uint64_t delta,
		   const __u8 *id, int id_size, uint16_t machine)
{
	struct pbuf note = { 0 }, sym = { 0 }, str = { 0 };
	Elf *e;
	int err;

	if (id_size < 1 || id_size > 20)
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail("elf_version");
	pbuf_put_u32(&note, 4);			/* namesz */
	pbuf_put_u32(&note, (uint32_t)id_size);	/* descsz */
	pbuf_put_u32(&note, NT_GNU_BUILD_ID_TYPE);
	pbuf_put(&note, "GNU", 4);
	pbuf_put(&note, id, (size_t)id_size);
	pbuf_align(&note, 4);
	err = note.err ? -ENOMEM : tables(syms, n, &sym, &str);
	e = err ? NULL : elf_begin(fd, ELF_C_WRITE, NULL);
	if (!err)
		err = e ? write_elf(e, &note, &sym, &str, delta, machine) : fail("elf_begin");
	if (e)
		elf_end(e);
	pbuf_free(&note);
	pbuf_free(&sym);
	pbuf_free(&str);
	return err;
}
