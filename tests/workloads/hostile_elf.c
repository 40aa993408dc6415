// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile target for precord running as root (tests/bats/hostile_elf.bats
 * runs it as nobody).  Modes, each for a time:
 *
 *   swap LIB SECRET OTHER DIR SECS
 *	copies LIB to DIR/h-N.so, dlopens it, runs its lib_spin for 40 ms
 *	(so it has samples), dlcloses it and, before precord reads the
 *	side-band, puts in its place a symlink to SECRET (a root-only ELF),
 *	a FIFO, or a copy of OTHER (another ELF), in turn.  Counts the FIFOs
 *	someone opened for reading; prints "fifo-opened N rounds R".
 *   bigelf DIR SECS
 *	maps DIR/big.so: a 4 KB sparse ELF claiming 4M sections (in section
 *	0, the extended count) over 256 MB of holes; then spins.
 *   many LIB DIR N SECS
 *	maps N copies of LIB (DIR/m-I.so, executable), keeps them mapped and
 *	spins.
 *   sparse LIB DIR SECS
 *	copies LIB (libhot.so) to DIR/sparse.so with its .eh_frame and
 *	.symtab headers claiming 1.5 GiB each past its end, in holes (the
 *	file is 1.5 GiB long, its bytes on disk LIB's), dlopens it (the
 *	loader reads program headers only) and spins in its lib_spin.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin_for(double secs)
{
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

/* Open for writing succeeds on a FIFO only while someone reads it. */
static int fifo_has_reader(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int swap(char **argv)
{
	const char *lib = argv[2], *secret = argv[3], *other = argv[4], *dir = argv[5];
	double end = now() + atof(argv[6]);
	int rounds = 0, opened = 0;
	char path[4096];

	while (now() < end) {
		void (*fn)(unsigned long);
		void *h;
		double t;
		int seen = 0;

		snprintf(path, sizeof(path), "%s/h-%d.so", dir, rounds);
		if (copy_file(lib, path))
			return perror(path), 1;
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		fn = h ? (void (*)(unsigned long))dlsym(h, "lib_spin") : NULL;
		if (!fn)
			return fprintf(stderr, "dlopen %s: %s\n", path, dlerror()), 1;
		for (t = now() + 0.04; now() < t;)
			fn(100000);
		dlclose(h);
		unlink(path);
		switch (rounds % 3) {
		case 0:
			if (symlink(secret, path))
				return perror("symlink"), 1;
			break;
		case 1:
			if (mkfifo(path, 0666))
				return perror("mkfifo"), 1;
			break;
		default:
			if (copy_file(other, path))
				return perror(other), 1;
		}
		/* precord drains the side-band about every 100 ms */
		for (t = now() + 0.3; now() < t; usleep(2000))
			if (rounds % 3 == 1 && !seen && fifo_has_reader(path))
				seen = 1;
		opened += seen;
		rounds++;
	}
	printf("fifo-opened %d rounds %d\n", opened, rounds);
	return 0;
}

static int bigelf(char **argv)
{
	const unsigned int nsec = 4u << 20;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_shoff = 4096, .e_ehsize = sizeof(Elf64_Ehdr),
		.e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 0,	/* count in section 0 */
	};
	Elf64_Shdr sh0 = { .sh_size = nsec };
	char path[4096];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/big.so", argv[2]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    pwrite(fd, &sh0, sizeof(sh0), 4096) != sizeof(sh0) ||
	    ftruncate(fd, 4096 + (off_t)nsec * (off_t)sizeof(Elf64_Shdr)))
		return perror(path), 1;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	spin_for(atof(argv[3]));
	return 0;
}

/* path's section `name` claims size bytes at off. */
static int claim(unsigned char *p, size_t len, const char *name, Elf64_Off off, Elf64_Xword size)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Shdr *sh = (Elf64_Shdr *)(p + eh->e_shoff);
	const char *names;

	if (len < sizeof(*eh) || eh->e_shoff + (Elf64_Off)eh->e_shnum * sizeof(*sh) > len ||
	    eh->e_shstrndx >= eh->e_shnum)
		return -1;
	names = (const char *)p + sh[eh->e_shstrndx].sh_offset;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (!strcmp(names + sh[i].sh_name, name)) {
			sh[i].sh_offset = off;
			sh[i].sh_size = size;
			return 0;
		}
	}
	return -1;
}

static int sparse(char **argv)
{
	const Elf64_Xword size = 3ull << 29;		/* 1.5 GiB */
	static unsigned char buf[16 << 20];
	char path[4096];
	void (*spin)(unsigned long), *h;
	double end = now() + atof(argv[4]);
	int in = open(argv[2], O_RDONLY), out;
	ssize_t len = in < 0 ? -1 : read(in, buf, sizeof(buf));
	Elf64_Off off = ((Elf64_Off)len + 4095) & ~4095ull;

	if (len <= 0 || claim(buf, (size_t)len, ".eh_frame", off, size) ||
	    claim(buf, (size_t)len, ".symtab", off, size))
		return fprintf(stderr, "%s: not a 64-bit ELF with .eh_frame and .symtab\n", argv[2]), 1;
	close(in);
	snprintf(path, sizeof(path), "%s/sparse.so", argv[3]);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0 || write(out, buf, (size_t)len) != len || ftruncate(out, (off_t)(off + size)))
		return perror(path), 1;
	close(out);
	h = dlopen(path, RTLD_NOW);
	spin = h ? (void (*)(unsigned long))dlsym(h, "lib_spin") : NULL;
	if (!spin)
		return fprintf(stderr, "%s: %s\n", path, dlerror()), 1;
	printf("sparse-mapped %s\n", path);
	fflush(stdout);
	while (now() < end)
		spin(1000000);
	return 0;
}

static int many(char **argv)
{
	const char *lib = argv[2], *dir = argv[3];
	int n = atoi(argv[4]);
	char path[4096];

	for (int i = 0; i < n; i++) {
		void *p;
		int fd;

		snprintf(path, sizeof(path), "%s/m-%d.so", dir, i);
		if (copy_file(lib, path))
			return perror(path), 1;
		fd = open(path, O_RDONLY);
		p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return perror(path), 1;
		close(fd);
	}
	spin_for(atof(argv[5]));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "swap") && argc > 6)
		return swap(argv);
	if (!strcmp(mode, "bigelf") && argc > 3)
		return bigelf(argv);
	if (!strcmp(mode, "many") && argc > 5)
		return many(argv);
	if (!strcmp(mode, "sparse") && argc > 4)
		return sparse(argv);
	fprintf(stderr, "usage: hostile_elf swap LIB SECRET OTHER DIR SECS | bigelf DIR SECS | "
		"many LIB DIR N SECS | sparse LIB DIR SECS\n");
	return 2;
}
