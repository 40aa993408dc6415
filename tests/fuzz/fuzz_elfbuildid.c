// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the ELF build-id reader (user/elf/buildid.c) and the
 * header checks made before libelf sees a file (user/elf/headers.c): the
 * input as an image in memory and as a file (one memfd, rewritten for
 * every input: no temporary directory).  An id is 1..20 bytes, and the
 * same bytes give the same answer from memory and from a file.
 *
 * Seed corpus (tests/fuzz/corpus/elfbuildid): tiny real ELFs from
 *	int _start(void) { for (;;) ; }
 * built with `cc -Os -nostdlib -static -s -Wl,-z,max-page-size=64`
 * (-Wl,--build-id=sha1, =md5, =none; -m32; -shared -fPIC), and hostile
 * variants of the sha1 one: 4M sections in section 0's extended count,
 * PN_XNUM segments, a note with a huge namesz or descsz, a truncated
 * note and header, section and program header tables past the end, a
 * wrong entry size, big-endian and 32-bit headers over the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/headers.h"
#include "util/log.h"

static int memfd = -1;

static void check_id(int n)
{
	if (n == 0 || n > BUILD_ID_SIZE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u8 id[BUILD_ID_SIZE], id2[BUILD_ID_SIZE];
	int a, b;

	log_verbosity = -1;
	elf_headers_check_mem(data, size);
	a = elf_build_id_mem(data, size, id);
	check_id(a);
	if (memfd < 0)
		memfd = memfd_create("elf", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, 0) ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size)
		return 0;
	b = elf_build_id_fd(memfd, id2);
	check_id(b);
	/* the same bytes give the same answer from memory and from a file */
	if (a != b || (a > 0 && memcmp(id, id2, (size_t)a)))
		abort();
	return 0;
}
