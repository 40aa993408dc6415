// SPDX-License-Identifier: GPL-2.0
#include "elf/debugfile.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <string.h>

#include "elf/buildid.h"
#include "elf/headers.h"
#include "elf/sections.h"
#include "util/log.h"

/* .gnu_debuglink: a name, NUL, padding to 4, a CRC32.  Real names are
 * short ("libc.so.6.debug"); more than this is refused unread. */
#define DEBUGLINK_MAX	4096u

/* libelf on fd, its headers checked first; NULL with *err set. */
static Elf *open_checked(int fd, int *err)
{
	Elf *elf;

	*err = elf_headers_check_fd(fd);
	if (*err)
		return NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		*err = -ENOEXEC;
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);	/* not _MMAP: no SIGBUS */
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		pr_debug("debug file check: %s", elf_errmsg(-1));
		if (elf)
			elf_end(elf);
		*err = -ENOEXEC;
		return NULL;
	}
	return elf;
}

/* The first section of type (name NULL) or called name: its index, 0 none. */
static size_t find_scn(Elf *elf, __u32 type, const char *name, GElf_Shdr *sh,
		       struct elf_reads *rd)
{
	size_t shstrndx, nr, i;

	if (elf_getshdrnum(elf, &nr) || nr > ELF_MAX_SECTIONS)
		return 0;
	if (name && (elf_getshdrstrndx(elf, &shstrndx) ||
		     elf_reads__admit_index(rd, elf, shstrndx, ELF_READ_MAX_OTHER)))
		return 0;
	for (i = 1; i < nr; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		const char *n;

		if (!scn || !gelf_getshdr(scn, sh) || sh->sh_type != type)
			continue;
		if (!name)
			return i;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return i;
	}
	return 0;
}

int elf_has_own_names_fd(int fd)
{
	struct elf_reads rd;
	GElf_Shdr sh;
	int err;
	Elf *elf = open_checked(fd, &err);

	if (!elf)
		return err;
	err = elf_reads__init_fd(&rd, elf, fd);
	if (!err)
		err = find_scn(elf, SHT_SYMTAB, NULL, &sh, &rd) ||
		      find_scn(elf, SHT_PROGBITS, ".gopclntab", &sh, &rd) ? 1 : 0;
	elf_end(elf);
	return err;
}

static bool plain_name(const char *s, size_t len)
{
	if (!len || (len == 1 && s[0] == '.') || (len == 2 && !memcmp(s, "..", 2)))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] == 0x7f || s[i] == '/')
			return false;
	return true;
}

int elf_debuglink_fd(int fd, char *name, size_t size, __u32 *crc)
{
	struct elf_reads rd;
	GElf_Shdr sh;
	Elf_Data *data;
	size_t len, ndx;
	int err;
	Elf *elf = open_checked(fd, &err);

	if (!elf)
		return err;
	err = elf_reads__init_fd(&rd, elf, fd);
	if (err)
		goto out;
	ndx = find_scn(elf, SHT_PROGBITS, ".gnu_debuglink", &sh, &rd);
	err = -ENOENT;
	if (!ndx)
		goto out;
	err = -EFBIG;
	if (sh.sh_size > DEBUGLINK_MAX || elf_reads__admit(&rd, &sh, DEBUGLINK_MAX))
		goto out;
	err = -ENOEXEC;
	data = elf_getdata(elf_getscn(elf, ndx), NULL);
	if (!data || !data->d_buf || data->d_size < 6)
		goto out;
	len = strnlen(data->d_buf, data->d_size);
	if (len >= data->d_size || !plain_name(data->d_buf, len) || len >= size)
		goto out;
	memcpy(name, data->d_buf, len + 1);
	len = (len + 4) & ~(size_t)3;	/* the CRC, 4-aligned after the NUL */
	if (len + 4 > data->d_size)
		goto out;
	memcpy(crc, (const char *)data->d_buf + len, 4);
	err = 0;
out:
	elf_end(elf);
	return err;
}

int elf_debug_file_check(int fd, const __u8 *id, int size)
{
	__u8 got[BUILD_ID_SIZE];
	struct elf_reads rd;
	GElf_Shdr sh;
	int n, err;
	Elf *elf;

	if (size < 1 || size > BUILD_ID_SIZE)
		return -EINVAL;
	n = elf_build_id_fd(fd, got);	/* checks the headers first */
	if (n == -ENOENT || (n > 0 && (n != size || memcmp(got, id, (size_t)size))))
		return -ESTALE;
	if (n < 0)
		return n == -E2BIG ? -ENOEXEC : n;
	elf = open_checked(fd, &err);
	if (!elf)
		return err;
	err = elf_reads__init_fd(&rd, elf, fd);
	if (!err)
		err = find_scn(elf, SHT_SYMTAB, NULL, &sh, &rd) ? 0 : -ENOENT;
	if (!err && (elf_reads__admit(&rd, &sh, ELF_READ_MAX_SYMS) ||
		     elf_reads__admit_index(&rd, elf, sh.sh_link, ELF_READ_MAX_SYMS))) {
		pr_debug("debug file refused: %s", rd.why);
		err = -EFBIG;
	}
	elf_end(elf);
	return err;
}
