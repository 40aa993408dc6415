// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile JIT runtime for tests/bats/hostile_jit.bats: run as nobody
 * while precord records it as root, it writes JIT files meant to hurt the
 * recorder, then burns CPU for SECS seconds (time, not a count).
 *
 *   hostile_jit dump DIR N SECS   DIR/<escapes>/jit-PID.dump, sparse: N
 *                                 JIT_CODE_LOAD records of ~64 MiB of code
 *                                 each (a few KB on disk), then a bad
 *                                 record; the dump mapped 20 times.  The
 *                                 sub-directory's name carries a newline,
 *                                 a forged "[ precord: ...]" line and
 *                                 terminal escapes.
 *   hostile_jit map SECS          /tmp/perf-PID.map, a 4 TiB sparse file
 *                                 (zeros: one endless line), and anonymous
 *                                 code so the recorder looks for the map
 *   hostile_jit lines N SECS      /tmp/perf-PID.map with N functions
 *   hostile_jit anon SECS         anonymous code only; prints the PID (the
 *                                 test plants a map for it)
 * The anonymous code is mapped after one second (and SECS more burnt).
 * The perf maps are removed at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REC_SIZE	((64u << 20) - 4096)	/* under precord's 64 MiB limit */
#define EVIL_DIR	"evil\x1b[31m\n[ precord: all good, nothing to see ]\x1b[0m"

static volatile unsigned long sink;
static char map_path[64];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void burn(double secs)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);

	while (now_ns() < end)
		for (unsigned long i = 0; i < 100000; i++)
			sink += i ^ (i >> 3);
}

static void cleanup(void)
{
	if (map_path[0])
		unlink(map_path);
}

static void on_term(int sig)
{
	(void)sig;
	cleanup();
	_exit(0);
}

static int put(int fd, const void *p, size_t n, off_t off)
{
	if (pwrite(fd, p, n, off) != (ssize_t)n) {
		perror("pwrite");
		return -1;
	}
	return 0;
}

struct jd_prefix { uint32_t id, total_size; uint64_t timestamp; };
struct jd_load { uint32_t pid, tid; uint64_t vma, code_addr, code_size, code_index; };

static int write_dump(const char *dir, unsigned int n, char *path, size_t len)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} hdr = { 0x4A695444, 1, 40, 62, 0, (uint32_t)getpid(), now_ns(), 0 };
	char sub[4096];
	off_t off = sizeof(hdr);
	int fd;

	snprintf(sub, sizeof(sub), "%s/%s", dir, EVIL_DIR);
	if (mkdir(sub, 0755) && errno != EEXIST)
		return perror("mkdir"), -1;
	snprintf(path, len, "%s/jit-%d.dump", sub, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || put(fd, &hdr, sizeof(hdr), 0))
		return perror(path), -1;
	for (unsigned int k = 0; k < n; k++) {
		char name[32];
		size_t nl = (size_t)snprintf(name, sizeof(name), "sparse_%u", k) + 1;
		struct jd_prefix p = { 0, REC_SIZE, now_ns() };
		struct jd_load l = {
			(uint32_t)getpid(), (uint32_t)getpid(), 0, 0x7e0000000000ULL + (uint64_t)k * REC_SIZE,
			REC_SIZE - sizeof(p) - sizeof(l) - nl, k,
		};

		l.vma = l.code_addr;
		if (put(fd, &p, sizeof(p), off) || put(fd, &l, sizeof(l), off + (off_t)sizeof(p)) ||
		    put(fd, name, nl, off + (off_t)(sizeof(p) + sizeof(l))))
			return -1;
		off += REC_SIZE;	/* the code: a hole */
	}
	{	/* a bad record: a load shorter than its fixed fields */
		struct jd_prefix p = { 0, sizeof(p) + 8, now_ns() };
		uint64_t junk = 0;

		if (put(fd, &p, sizeof(p), off) || put(fd, &junk, sizeof(junk), off + (off_t)sizeof(p)))
			return -1;
	}
	return fd;
}

/* Anonymous code, after a second: precord -p notices the mappings made
 * while it records (not those it finds at the start). */
static int anon_code(void)
{
	void *p;

	burn(1.0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return perror("mmap"), -1;
	((volatile char *)p)[0] = (char)0xc3;
	return 0;
}

static int open_map(void)
{
	int fd;

	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	atexit(cleanup);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	fd = open(map_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		perror(map_path);
	return fd;
}

static int cmd_dump(int argc, char **argv)
{
	char path[8192];
	int fd;

	if (argc != 5)
		return 2;
	fd = write_dump(argv[2], (unsigned int)atoi(argv[3]), path, sizeof(path));
	if (fd < 0)
		return 1;
	/* the marker: a runtime maps its dump; this one does it 20 times */
	for (int i = 0; i < 20; i++)
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			return perror("mmap"), 1;
	burn(atof(argv[4]));
	return 0;
}

static int cmd_map(int argc, char **argv)
{
	int fd;

	if (argc != 3)
		return 2;
	fd = open_map();
	if (fd < 0 || ftruncate(fd, (off_t)4 << 40))
		return perror("ftruncate"), 1;
	if (anon_code())
		return 1;
	burn(atof(argv[2]));
	return 0;
}

static int cmd_lines(int argc, char **argv)
{
	unsigned long n;
	FILE *f;
	int fd;

	if (argc != 4)
		return 2;
	n = strtoul(argv[2], NULL, 0);
	fd = open_map();
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f || anon_code())
		return 1;
	for (unsigned long i = 0; i < n; i++)
		fprintf(f, "%lx 10 f%lu\n", 0x10000000UL + i * 16, i);
	if (fclose(f))
		return perror("fclose"), 1;
	burn(atof(argv[3]));
	return 0;
}

static int cmd_anon(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	printf("%d\n", getpid());
	fflush(stdout);
	if (anon_code())
		return 1;
	burn(atof(argv[2]));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "dump"))
		return cmd_dump(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "map"))
		return cmd_map(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "lines"))
		return cmd_lines(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "anon"))
		return cmd_anon(argc, argv);
	fprintf(stderr, "usage: hostile_jit dump DIR N SECS | map SECS | lines N SECS | anon SECS\n");
	return 2;
}
