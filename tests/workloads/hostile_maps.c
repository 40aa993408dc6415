// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile target for precord running as root (tests/bats/hostile_maps.bats
 * runs it as nobody): many executable file mappings that cannot merge.
 *
 *   hostile_maps FILE N CHURN SECS [PACE]
 *	maps the first page of FILE (readable, executable, private) N times,
 *	one page each, every other page of a fixed address range (the pages
 *	between stay unmapped, so no two mappings merge: each mmap is one
 *	MMAP2 record and one mapping for precord).  Then CHURN times: unmaps
 *	the oldest mapping and maps the page again at the next free address
 *	of the range (munmap has no record: precord never learns that the
 *	old one went, so the mappings it knows of grow to N + CHURN while
 *	the process holds N, under the kernel's vm.max_map_count).  Prints
 *	"pid P mapped N churned C in T s", then sleeps for SECS seconds.
 *	PACE: churn at most PACE mappings per millisecond (sleeps between),
 *	for a rate a reader on a loaded machine keeps up with.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Far above where the loader and mmap put things (x86-64, aarch64 with
 * 47/48-bit user addresses): 64 TiB. */
#define BASE	0x400000000000ul

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int map_at(int fd, unsigned long addr, size_t page)
{
	void *p = mmap((void *)addr, page, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);

	if (p == MAP_FAILED || p != (void *)addr) {
		fprintf(stderr, "mmap at %#lx: %s\n", addr, p == MAP_FAILED ? strerror(errno) :
			"another address");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	long n, churn, pace = 0;
	double secs, t0;
	long i, c = 0;
	int fd;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s FILE N CHURN SECS [PACE]\n", argv[0]);
		return 2;
	}
	n = atol(argv[2]);
	churn = atol(argv[3]);
	secs = atof(argv[4]);
	if (argc == 6)
		pace = atol(argv[5]);
	if (n < 1 || churn < 0 || n + churn > 100000000 / 2) {
		fprintf(stderr, "N must be > 0, N + CHURN < 50M\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	t0 = now();
	for (i = 0; i < n; i++)
		if (map_at(fd, BASE + (unsigned long)i * 2 * page, page))
			return 1;
	for (c = 0; c < churn; c++, i++) {
		if (munmap((void *)(BASE + (unsigned long)(i - n) * 2 * page), page)) {
			perror("munmap");
			return 1;
		}
		if (map_at(fd, BASE + (unsigned long)i * 2 * page, page))
			return 1;
		if (pace > 0 && c % pace == pace - 1)
			usleep(1000);
	}
	printf("pid %d mapped %ld churned %ld in %.2f s\n", (int)getpid(), n, c, now() - t0);
	fflush(stdout);
	/* mapped, not busy: it need not run */
	nanosleep(&(struct timespec){ (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) },
		  NULL);
	return 0;
}
