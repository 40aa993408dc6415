/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hostile ELF files for --call-graph ehframe's unwind tables, written into
 * memory: an x86-64 shared object with one executable PT_LOAD (of any
 * claimed p_memsz), a PT_NOTE build-id, and an .eh_frame of one CIE and
 * nr_fdes FDEs, each with rows rows (DW_CFA_advance_loc 1 and a CFA offset
 * of 16 or 8 in turn: no two neighbours merge).  Used by the workload
 * tests/workloads/hostile_unwind.c and the unit tests
 * tests/unit/test_table_store.c and test_cfi_table.c.
 *
 *   - claim: nr_fdes 1, rows 2, memsz 1 GiB, range_to_memsz: 3 rows (the
 *     FDE's two and the NONE row at its end) over 1 GiB of pc;
 *   - rows: many FDEs of few rows: a large table, cheap to build;
 *   - expensive: FDEs of ~1100 rows each, whose programs libdw runs from
 *     their start for every row (rows x program bytes just under
 *     CFI_SCAN_FDE_WORK): cfi_table.c's most expensive kind of file;
 *   - huge: CFI_SCAN_MAX_ENTRIES FDEs of pad DW_CFA_nops each, in reverse
 *     address order (reverse): a .eh_frame at the 64 MiB cap that must
 *     be read, checked and sorted before the first row.
 */
#ifndef HOSTILE_UNWIND_ELF_H
#define HOSTILE_UNWIND_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct hu_elf {
	uint64_t memsz;		/* the PT_LOAD's p_memsz (at least the file's size) */
	unsigned nr_fdes;	/* FDEs, one after the other from HU_TEXT */
	unsigned rows;		/* rows of each FDE (>= 1) */
	int range_to_memsz;	/* the last FDE's range runs to memsz */
	int remember;		/* DW_CFA_remember_state + restore_state a row:
				 * libdw allocates and frees for each */
	unsigned pad;		/* DW_CFA_nops after each FDE's program */
	int reverse;		/* FDE i covers the code of FDE nr_fdes - 1 - i */
	uint32_t id;		/* in the build-id: one per file */
};

#define HU_TEXT		0x1000	/* file offset = vaddr of the first FDE's code */

struct hu_buf {
	unsigned char *p;
	size_t len, cap;
	int over;
};

static inline void hu_put(struct hu_buf *b, const void *v, size_t n)
{
	if (b->over || n > b->cap - b->len) {
		b->over = 1;
		return;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static inline void hu_u8(struct hu_buf *b, uint8_t v) { hu_put(b, &v, 1); }
static inline void hu_u32(struct hu_buf *b, uint32_t v) { hu_put(b, &v, 4); }

/* Bytes of an FDE's program of rows rows. */
static inline size_t hu_prog_len(unsigned rows, int remember)
{
	return (size_t)(rows ? rows - 1 : 0) * (remember ? 5 : 3);
}

/*
 * The file into buf (cap bytes): its size, or 0 when it does not fit.
 * Code addresses: FDE i covers [HU_TEXT + i * rows, + rows), one byte a
 * row (the last one's up to memsz with range_to_memsz); with reverse,
 * FDE i covers FDE nr_fdes - 1 - i's code.
 */
static inline size_t hu_elf_write(unsigned char *buf, size_t cap, const struct hu_elf *o)
{
	static const char shstr[] = "\0.text\0.note.gnu.build-id\0.eh_frame\0.shstrtab";
	struct hu_buf b = { buf, 0, cap, 0 };
	size_t code = (size_t)o->nr_fdes * o->rows, eh_off, eh_len, str_off, sh_off, note_off;
	size_t prog = hu_prog_len(o->rows, o->remember), body = 4 + 4 + 4 + 1 + prog + o->pad;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf64_Shdr sh[5];
	uint64_t memsz;

	if (cap < HU_TEXT || !o->rows)
		return 0;
	memset(buf, 0, HU_TEXT);
	note_off = sizeof(eh) + sizeof(ph);
	/* the code: int3s */
	b.len = HU_TEXT;
	for (size_t i = 0; i < code && !b.over; i++)
		hu_u8(&b, 0xcc);
	while (b.len & 7)
		hu_u8(&b, 0xcc);
	eh_off = b.len;
	/* CIE: version 1, "zR", code align 1, data align -8, RA 16, pcrel
	 * sdata4 FDE pointers; CFA = rsp + 8, RA at CFA - 8 */
	hu_u32(&b, 20);
	hu_u32(&b, 0);
	{
		static const uint8_t cie[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
					       0x0c, 7, 8, 0x90, 1, 0, 0 };
		hu_put(&b, cie, sizeof(cie));
	}
	for (unsigned f = 0; f < o->nr_fdes && !b.over; f++) {
		size_t at = b.len, len = (body + 3) & ~(size_t)3;
		unsigned at_code = o->reverse ? o->nr_fdes - 1 - f : f;
		uint64_t start = HU_TEXT + (uint64_t)at_code * o->rows, range = o->rows;

		if (o->range_to_memsz && at_code + 1 == o->nr_fdes && o->memsz > start)
			range = o->memsz - start;
		hu_u32(&b, (uint32_t)len);
		hu_u32(&b, (uint32_t)(at + 4 - eh_off));	/* back to the CIE */
		hu_u32(&b, (uint32_t)(int32_t)(start - (at + 8)));	/* pcrel */
		hu_u32(&b, (uint32_t)range);
		hu_u8(&b, 0);					/* no augmentation data */
		for (unsigned r = 1; r < o->rows; r++) {
			hu_u8(&b, 0x41);			/* advance_loc 1 */
			hu_u8(&b, 0x0e);			/* def_cfa_offset */
			hu_u8(&b, r & 1 ? 16 : 8);
			if (o->remember) {
				hu_u8(&b, 0x0a);		/* remember_state */
				hu_u8(&b, 0x0b);		/* restore_state */
			}
		}
		for (size_t k = body - o->pad; k < len && !b.over; k++)
			hu_u8(&b, 0);				/* DW_CFA_nop */
	}
	hu_u32(&b, 0);						/* terminator */
	eh_len = b.len - eh_off;
	str_off = b.len;
	hu_put(&b, shstr, sizeof(shstr));
	while (b.len & 7)
		hu_u8(&b, 0);
	sh_off = b.len;
	b.len += sizeof(sh);
	if (b.over || b.len > cap)
		return 0;
	memsz = o->memsz > b.len ? o->memsz : b.len;

	eh = (Elf64_Ehdr){ .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			   .e_phoff = sizeof(eh), .e_shoff = sh_off, .e_ehsize = sizeof(eh),
			   .e_phentsize = sizeof(ph[0]), .e_phnum = 2,
			   .e_shentsize = sizeof(sh[0]), .e_shnum = 5, .e_shstrndx = 4 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(buf, &eh, sizeof(eh));
	memset(ph, 0, sizeof(ph));
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			      .p_vaddr = 0, .p_paddr = 0, .p_filesz = b.len, .p_memsz = memsz,
			      .p_align = 4096 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = note_off,
			      .p_vaddr = note_off, .p_filesz = 36, .p_memsz = 36, .p_align = 4 };
	memcpy(buf + sizeof(eh), ph, sizeof(ph));
	{	/* namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU", the id */
		uint32_t n[3] = { 4, 20, 3 };
		unsigned char id[20] = { 0x68, 0x75, 0x6e, 0x77 };	/* "hunw" */

		memcpy(id + 4, &o->id, 4);
		memcpy(id + 8, &o->memsz, 8);
		memcpy(id + 16, &o->rows, 4);
		memcpy(buf + note_off, n, sizeof(n));
		memcpy(buf + note_off + 12, "GNU", 4);
		memcpy(buf + note_off + 16, id, 20);
	}
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = HU_TEXT,
			      .sh_offset = HU_TEXT, .sh_size = code, .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC,
			      .sh_addr = note_off, .sh_offset = note_off, .sh_size = 36,
			      .sh_addralign = 4 };
	sh[3] = (Elf64_Shdr){ .sh_name = 26, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = eh_off, .sh_offset = eh_off, .sh_size = eh_len,
			      .sh_addralign = 8 };
	sh[4] = (Elf64_Shdr){ .sh_name = 36, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	memcpy(buf + sh_off, sh, sizeof(sh));
	return b.len;
}

#endif
