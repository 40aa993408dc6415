// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile target for --call-graph ehframe's unwind tables
 * (tests/bats/hostile_unwind.bats runs it as nobody while precord runs as
 * root).  Writes N ELF files into DIR (tests/workloads/hostile_unwind_elf.h),
 * maps each executable (mmap PROT_EXEC: the loader is not needed), prints
 * "mapped N", keeps them mapped and sleeps SECS.
 *
 *   claim DIR N SECS    4.5 KB files whose PT_LOAD claims 1 GiB of code,
 *                       with 3 rows of CFI each; then N claiming 16 MiB
 *                       and 2N claiming 64 KiB (page indexes of 1 MiB, 16
 *                       KiB and 64 bytes at 7b34e51: they fill the rows
 *                       map to its last bytes)
 *   rows DIR N SECS     N files of 16,000 cheap rows each (125 KiB
 *                       tables), then N of 800 and 2N of 40: the same
 *   costly DIR N SECS   files of 30 FDEs of 900 rows whose programs libdw
 *                       runs from their start for each row (~135 KB each,
 *                       the most expensive FDEs cfi_scan lets through)
 *   maps DIR N SECS     one file (100 FDEs) mapped N times, a page each:
 *                       N mappings of one build-id
 *   huge DIR N SECS     N files of a 64 MiB .eh_frame: 262,143 FDEs
 *                       (CFI_SCAN_MAX_ENTRIES less the CIE) of 256 bytes,
 *                       in reverse address order: the most a build must
 *                       read, check, sort and hand libdw before its first
 *                       row
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hostile_unwind_elf.h"

static int maps(const char *dir, int n, unsigned secs)
{
	static const struct hu_elf o = { .nr_fdes = 100, .rows = 4, .id = 77 };
	size_t cap = 1u << 20, len;
	unsigned char *buf = malloc(cap);
	char path[4096];
	int fd;

	len = buf ? hu_elf_write(buf, cap, &o) : 0;
	snprintf(path, sizeof(path), "%s/maps.so", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !len || write(fd, buf, len) != (ssize_t)len) {
		perror(path);
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	printf("mapped %d\n", n);
	fflush(stdout);
	sleep(secs);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct hu_elf o = { 0 };
	int huge = argc == 5 && !strcmp(argv[1], "huge");
	size_t cap = huge ? 72u << 20 : 4u << 20, len;
	unsigned char *buf = malloc(cap);
	int n;

	if (argc != 5 || !buf) {
		fprintf(stderr, "usage: hostile_unwind claim|rows|costly|maps|huge DIR N SECS\n");
		return 2;
	}
	if (!strcmp(argv[1], "claim"))
		o = (struct hu_elf){ .memsz = 1ull << 30, .nr_fdes = 1, .rows = 2, .range_to_memsz = 1 };
	else if (!strcmp(argv[1], "rows"))
		o = (struct hu_elf){ .nr_fdes = 2000, .rows = 8 };
	else if (!strcmp(argv[1], "costly"))
		o = (struct hu_elf){ .nr_fdes = 30, .rows = 900, .remember = 1 };
	else if (huge)
		o = (struct hu_elf){ .nr_fdes = (256u << 10) - 1, .rows = 1, .pad = 239, .reverse = 1 };
	else if (!strcmp(argv[1], "maps"))
		return maps(argv[2], atoi(argv[3]), (unsigned)atoi(argv[4]));
	else
		return 2;
	n = atoi(argv[3]);
	for (int i = 0; i < (strcmp(argv[1], "costly") && !huge ? 4 * n : n); i++) {
		char path[4096];
		int fd;
		void *m;

		/* the size classes: n large, n middle, 2n small */
		if (!strcmp(argv[1], "claim"))
			o.memsz = i < n ? 1ull << 30 : i < 2 * n ? 16ull << 20 : 64ull << 10;
		else if (!strcmp(argv[1], "rows"))
			o.nr_fdes = i < n ? 2000 : i < 2 * n ? 100 : 5;
		o.id = (uint32_t)getpid() << 12 ^ (uint32_t)i;
		len = hu_elf_write(buf, cap, &o);
		snprintf(path, sizeof(path), "%s/%s-%d.so", argv[2], argv[1], i);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || !len || write(fd, buf, len) != (ssize_t)len) {
			perror(path);
			return 1;
		}
		m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		close(fd);
	}
	printf("mapped %d\n", n);	/* the large ones: the others follow */
	fflush(stdout);
	sleep((unsigned)atoi(argv[4]));
	free(buf);
	return 0;
}
