// SPDX-License-Identifier: GPL-2.0
/*
 * Go function tables (user/elf/gopclntab.c, gosyms.c, symfile.c):
 *  - the real table of a stripped go1.19 binary (build/workloads/hogo,
 *    tests/workloads/go/hogo.go, built by the Makefile with Debian's go):
 *    every function read, in order, inside .text, main.hoGoAlpha and
 *    main.hoGoBeta among them; the symbol file made from it read back by
 *    precord's ELF symbol reader gives the same functions at the same
 *    file offsets as the reader of the binary's own .gopclntab; the id;
 *  - tables made here in the 1.16, 1.18 and 1.20 layouts (8- and 4-byte
 *    pointers, either byte order) read back exactly;
 *  - hostile variants of the real table and of the made ones: truncated
 *    at every length class, bogus counts, offsets past the end, wrapped
 *    and unordered ranges, names without their NUL, a textStart that
 *    wraps: an error or a skipped function, never a read outside.
 * GOPCLNTAB_SEEDS=DIR writes the made tables into DIR (the fuzz seeds of
 * tests/fuzz/corpus/gopclntab/).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/gopclntab.h"
#include "elf/gosyms.h"
#include "elf/symfile.h"
#include "report/symtab.h"
#include "util/buf.h"
#include "util/log.h"
#include "harness.h"

static char hogo[PATH_MAX];

/* ---- tables made here ---------------------------------------------------- */

struct mfunc {
	const char *name;
	uint64_t start, end;
};

static const struct mfunc made_funcs[] = {
	{ "runtime.text", 0x401000, 0x401020 },
	{ "main.hoGoAlpha", 0x401020, 0x4010a0 },
	{ "main.hoGoBeta", 0x4010a0, 0x401120 },
	{ "main.main", 0x401120, 0x401200 },
	{ "type..eq.[2]interface {}", 0x401200, 0x401230 },
};
#define NR_MADE (sizeof(made_funcs) / sizeof(made_funcs[0]))

struct layout {
	int version;		/* 116, 118, 120 */
	unsigned int ptr;	/* 4 or 8 */
	bool be;
	const char *seed;	/* its file name in the corpus */
};

static const struct layout layouts[] = {
	{ 116, 8, false, "go116-le64" }, { 118, 8, false, "go118-le64" },
	{ 120, 8, false, "go120-le64" }, { 118, 4, false, "go118-le32" },
	{ 120, 8, true, "go120-be64" },  { 116, 4, true, "go116-be32" },
};

static void put_word(struct pbuf *b, uint64_t off, unsigned int width, bool be, uint64_t v)
{
	for (unsigned int i = 0; i < width; i++)
		b->data[off + (be ? width - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

/* A table of the layout l holding the n functions fs (n <= 64, their
 * ranges contiguous) and text start text. */
static void build_table(const struct layout *l, const struct mfunc *fs, size_t n, uint64_t text,
			struct pbuf *b)
{
	unsigned int ps = l->ptr, tw = l->version >= 118 ? 4 : ps;
	unsigned int nw = l->version >= 118 ? 8 : 7;
	uint64_t hdr = 8 + nw * ps, names, pcln, funcs;
	uint64_t nameoff[64], off;
	uint32_t magic = l->version == 116 ? GOPCLNTAB_MAGIC_116 :
			 l->version == 118 ? GOPCLNTAB_MAGIC_118 : GOPCLNTAB_MAGIC_120;

	pbuf_reset(b);
	pbuf_put_zero(b, hdr);
	names = b->len;
	for (size_t i = 0; i < n; i++) {
		nameoff[i] = b->len - names;
		pbuf_put(b, fs[i].name, strlen(fs[i].name) + 1);
	}
	pbuf_align(b, 8);
	pcln = b->len;
	pbuf_put_zero(b, (2 * n + 1) * tw);
	funcs = b->len;
	pbuf_put_zero(b, n * (ps + 8 * 4));	/* entry, nameOff and 7 more u32 */
	put_word(b, 0, 4, l->be, magic);
	b->data[6] = 1;
	b->data[7] = (uint8_t)ps;
	put_word(b, 8, ps, l->be, n);
	put_word(b, 8 + ps, ps, l->be, 0);		/* nfiles */
	off = 8 + 2 * ps;
	if (l->version >= 118) {
		put_word(b, off, ps, l->be, text);
		off += ps;
	}
	put_word(b, off, ps, l->be, names);
	for (int k = 1; k <= 3; k++)			/* cu, filetab, pctab: empty */
		put_word(b, off + k * ps, ps, l->be, pcln);
	put_word(b, off + 4 * ps, ps, l->be, pcln);
	for (size_t i = 0; i < n; i++) {
		uint64_t pc = fs[i].start - (l->version >= 118 ? text : 0);
		uint64_t f = funcs + i * (ps + 8 * 4);

		put_word(b, pcln + 2 * i * tw, tw, l->be, pc);
		put_word(b, pcln + (2 * i + 1) * tw, tw, l->be, f - pcln);
		put_word(b, f, tw, l->be, pc);
		put_word(b, f + tw, 4, l->be, nameoff[i]);
	}
	put_word(b, pcln + 2 * n * tw, tw, l->be, fs[n - 1].end - (l->version >= 118 ? text : 0));
}

static void make_table(const struct layout *l, struct pbuf *b)
{
	build_table(l, made_funcs, NR_MADE, 0x401000, b);
}

/* GOPCLNTAB_SEEDS: the seed file name of the data */
static void write_seed(const char *name, const void *data, size_t len)
{
	const char *seeds = getenv("GOPCLNTAB_SEEDS");
	char path[PATH_MAX];
	FILE *out;

	if (!seeds)
		return;
	snprintf(path, sizeof(path), "%s/%s", seeds, name);
	out = fopen(path, "wb");
	CHECK(out && fwrite(data, 1, len, out) == len);
	if (out)
		fclose(out);
}

/* Every function of the table at data: in bounds, or refused.  The
 * number read. */
static uint64_t read_all(const void *data, size_t size, uint64_t hint)
{
	struct gopclntab t;
	struct gopclntab_func f;
	uint64_t n = 0;

	if (gopclntab__open(&t, data, size, hint))
		return 0;
	for (uint64_t i = 0; i < t.nfunc; i++) {
		if (gopclntab__func(&t, i, &f))
			continue;
		CHECK((const uint8_t *)f.name >= (const uint8_t *)data);
		CHECK((const uint8_t *)f.name + f.name_len < (const uint8_t *)data + size);
		CHECK(f.name_len >= 1 && f.name_len <= GOPCLNTAB_NAME_MAX);
		CHECK(f.name[f.name_len] == '\0');
		CHECK(!memchr(f.name, 0, f.name_len));
		CHECK(f.start < f.end);
		n++;
	}
	return n;
}

TEST(made_layouts)
{
	struct pbuf b = { 0 };

	for (size_t k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++) {
		struct gopclntab t;
		struct gopclntab_func f;

		make_table(&layouts[k], &b);
		CHECK(!b.err);
		CHECK_EQ(gopclntab__open(&t, b.data, b.len, 0), 0);
		CHECK_EQ(t.version, layouts[k].version);
		CHECK_EQ(t.be, layouts[k].be);
		CHECK_EQ(t.nfunc, NR_MADE);
		for (size_t i = 0; i < NR_MADE && t.nfunc == NR_MADE; i++) {
			CHECK_EQ(gopclntab__func(&t, i, &f), 0);
			CHECK_EQ(f.start, made_funcs[i].start);
			CHECK_EQ(f.end, made_funcs[i].end);
			CHECK_EQ(f.name_len, strlen(made_funcs[i].name));
			CHECK(!memcmp(f.name, made_funcs[i].name, f.name_len));
		}
		CHECK_EQ(gopclntab__func(&t, NR_MADE, &f), -EBADMSG);
		write_seed(layouts[k].seed, b.data, b.len);
	}
	pbuf_free(&b);
}

/* The made 1.18 table with one word changed. */
static uint64_t made_with(unsigned int ver, uint64_t off, unsigned int width, uint64_t v,
			  struct pbuf *b)
{
	const struct layout l = { ver, 8, false, NULL };

	make_table(&l, b);
	put_word(b, off, width, false, v);
	return read_all(b->data, b->len, 0);
}

TEST(made_hostile)
{
	struct pbuf b = { 0 };
	struct gopclntab t;
	struct gopclntab_func f;
	uint64_t pcln;

	/* header words: 8 + 8 * 8 bytes; pclnOffset is word 7 */
	make_table(&(struct layout){ 118, 8, false, NULL }, &b);
	pcln = b.data[8 + 7 * 8] | (uint64_t)b.data[8 + 7 * 8 + 1] << 8;
	/* every truncation: refused or in bounds (read_all checks) */
	for (size_t len = 0; len <= b.len; len++)
		read_all(b.data, len, 0);
	CHECK_EQ(gopclntab__open(&t, b.data, pcln + 4 * 11 - 1, 0), -EBADMSG);
	/* counts */
	CHECK_EQ(made_with(118, 8, 8, 0, &b), 0);
	CHECK_EQ(made_with(118, 8, 8, UINT64_MAX, &b), 0);
	CHECK_EQ(made_with(118, 8, 8, 1ull << 61, &b), 0);
	CHECK_EQ(made_with(118, 8, 8, 2, &b), 2);	/* fewer: fine */
	/* the name table and the functab past the end */
	CHECK_EQ(made_with(118, 8 + 3 * 8, 8, 1ull << 40, &b), 0);
	CHECK_EQ(made_with(118, 8 + 7 * 8, 8, UINT64_MAX - 3, &b), 0);
	/* funcoff of function 1 past the end, and wrapping */
	CHECK_EQ(made_with(118, pcln + 3 * 4, 4, 0xffffffff, &b), NR_MADE - 1);
	/* a wrapped range: function 2 starts before function 1 */
	CHECK_EQ(made_with(118, pcln + 2 * 2 * 4, 4, 0x10, &b), NR_MADE - 2);
	/* an empty range: function 1 starts where function 2 does */
	CHECK_EQ(made_with(118, pcln + 2 * 1 * 4, 4, 0xa0, &b), NR_MADE - 1);
	/* textStart so high that the pcs wrap */
	CHECK_EQ(made_with(118, 8 + 2 * 8, 8, UINT64_MAX - 0x40, &b), 1);
	/* unknown magic, bad pads, quantum, pointer size */
	CHECK_EQ(made_with(118, 0, 4, 0xfffffffb, &b), 0);
	CHECK_EQ(made_with(118, 4, 1, 1, &b), 0);
	CHECK_EQ(made_with(118, 6, 1, 3, &b), 0);
	CHECK_EQ(made_with(118, 7, 1, 2, &b), 0);
	/* a name whose NUL is the table's last byte missing: the last
	 * function's _func points its nameOff at the table's final bytes */
	make_table(&(struct layout){ 116, 8, false, NULL }, &b);
	b.data[b.len - 1] = 'x';
	CHECK_EQ(gopclntab__open(&t, b.data, b.len, 0), 0);
	{
		uint64_t fo = b.len - 1 - (8 + 7 * 8);	/* from the name table */
		uint64_t f4 = b.len - (8 + 8 * 4);	/* the last _func */

		put_word(&b, f4 + 8, 4, false, fo);
		CHECK_EQ(gopclntab__func(&t, NR_MADE - 1, &f), -EBADMSG);
		/* a negative nameOff */
		put_word(&b, f4 + 8, 4, false, 0x80000000u);
		CHECK_EQ(gopclntab__func(&t, NR_MADE - 1, &f), -EBADMSG);
	}
	/* a name over the limit */
	{
		struct pbuf big = { 0 };

		make_table(&(struct layout){ 116, 8, false, NULL }, &b);
		pbuf_put(&big, b.data, b.len);
		pbuf_put_zero(&big, 8);
		for (int i = 0; i < GOPCLNTAB_NAME_MAX + 1; i++)
			pbuf_put_u8(&big, 'n');
		pbuf_put_u8(&big, 0);
		/* the last _func's nameOff (1.16, 8-byte pointers: 40-byte
		 * _funcs, the name table at 64) to the long name */
		put_word(&big, b.len - (8 + 8 * 4) + 8, 4, false, b.len + 8 - (8 + 7 * 8));
		CHECK_EQ(gopclntab__open(&t, big.data, big.len, 0), 0);
		CHECK_EQ(gopclntab__func(&t, NR_MADE - 1, &f), -EBADMSG);
		pbuf_free(&big);
	}
	/* the made table gets the caller's text start when its own is 0 */
	made_with(118, 8 + 2 * 8, 8, 0, &b);
	CHECK_EQ(gopclntab__open(&t, b.data, b.len, 0x401000), 0);
	CHECK_EQ(gopclntab__func(&t, 1, &f), 0);
	CHECK_EQ(f.start, 0x401020);
	pbuf_free(&b);
}

static int count_one(void *ctx, uint64_t off, const struct gopclntab_func *f)
{
	(void)off;
	*(uint64_t *)ctx += f->name_len;
	return 0;
}

/* 64 functions all pointing at one 1000-byte name: the names copied out
 * stop at the table's size, the rest counted. */
TEST(names_bounded)
{
	static char names[64][8];
	static char longname[1001];
	struct mfunc fs[64];
	struct pbuf b = { 0 };
	struct gosyms g = { 0 };
	uint64_t pcln, name_bytes = 0, funcs, longoff;

	for (int i = 0; i < 64; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		fs[i] = (struct mfunc){ names[i], 0x401000 + 16 * (uint64_t)i,
					0x401010 + 16 * (uint64_t)i };
	}
	build_table(&(struct layout){ 118, 8, false, NULL }, fs, 64, 0x401000, &b);
	pcln = b.data[8 + 7 * 8] | (uint64_t)b.data[8 + 7 * 8 + 1] << 8;
	funcs = pcln + (2 * 64 + 1) * 4;
	longoff = b.len - (8 + 8 * 8);		/* from the name table at 72 */
	memset(longname, 'L', 1000);
	pbuf_put(&b, longname, 1001);
	for (int i = 0; i < 64; i++)		/* 1.18: 4-byte entry, then nameOff */
		put_word(&b, funcs + (uint64_t)i * (8 + 8 * 4) + 4, 4, false, longoff);
	CHECK_EQ(gopclntab__open(&g.tab, b.data, b.len, 0), 0);
	g.text_addr = 0x401000;
	g.text_off = 0x1000;
	g.text_size = 0x10000;
	CHECK_EQ(read_all(b.data, b.len, 0), 64);	/* each one is fine */
	CHECK_EQ(gosyms__each(&g, "names_bounded", count_one, &name_bytes), 0);
	CHECK(name_bytes <= b.len);
	CHECK_EQ(name_bytes, (b.len / 1000) * 1000);
	pbuf_free(&b);
}

/* ---- the real table ------------------------------------------------------- */

struct real {
	int fd;
	Elf *elf;
	struct elf_reads rd;
	struct gosyms g;
};

static int real_open(struct real *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = open(hogo, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		fprintf(stderr, "  %s: %s (the Go workload: make all with golang-go installed)\n",
			hogo, strerror(errno));
		return -1;
	}
	r->elf = elf_begin(r->fd, ELF_C_READ, NULL);
	if (!r->elf || elf_reads__init_fd(&r->rd, r->elf, r->fd) ||
	    gosyms__load(&r->g, r->elf, &r->rd, hogo))
		return -1;
	return 0;
}

static void real_close(struct real *r)
{
	gosyms__free(&r->g);
	if (r->elf)
		elf_end(r->elf);
	if (r->fd >= 0)
		close(r->fd);
}

/*
 * The seed "go119-hogo-cut": 24 functions of the real table, the 21
 * before main.hoGoAlpha and main.hoGoAlpha on (their names and pcs), laid out again in the same
 * layout (1.18, 8-byte pointers) in a table of a few KiB: the fuzzer
 * runs ~100 times faster on it than on a whole 256 KiB section.
 */
static void real_cut(const struct real *r)
{
	static char names[24][GOPCLNTAB_NAME_MAX + 1];
	struct mfunc fs[24];
	struct gopclntab_func f;
	struct pbuf b = { 0 };
	uint64_t i, first = UINT64_MAX, n = 0, off;

	for (i = 0; i < r->g.tab.nfunc && first == UINT64_MAX; i++)
		if (!gosyms__func(&r->g, i, &f, &off) && f.name_len == 14 &&
		    !memcmp(f.name, "main.hoGoAlpha", 14))
			first = i;
	CHECK(first != UINT64_MAX && first >= 21);
	for (i = first - 21; first != UINT64_MAX && i < r->g.tab.nfunc && n < 24; i++) {
		if (gosyms__func(&r->g, i, &f, &off))
			break;
		memcpy(names[n], f.name, f.name_len);
		names[n][f.name_len] = 0;
		fs[n] = (struct mfunc){ names[n], f.start, f.end };
		n++;
	}
	CHECK_EQ(n, 24);
	build_table(&(struct layout){ 118, 8, false, NULL }, fs, n, r->g.tab.text_start, &b);
	CHECK_EQ(read_all(b.data, b.len, 0), n);
	write_seed("go119-hogo-cut", b.data, b.len);
	pbuf_free(&b);
}

TEST(real_table)
{
	struct real r;
	struct gopclntab_func f;
	uint64_t off, prev_end = 0, n = 0, alpha = 0, beta = 0;

	CHECK_EQ(real_open(&r), 0);
	CHECK_EQ(r.g.tab.version, 118);		/* go1.19 */
	CHECK(r.g.tab.nfunc > 1000);
	CHECK_EQ(r.g.tab.text_start, r.g.text_addr);
	for (uint64_t i = 0; i < r.g.tab.nfunc; i++) {
		if (gosyms__func(&r.g, i, &f, &off))
			continue;
		n++;
		CHECK(f.start >= prev_end);
		CHECK(off == f.start - r.g.text_addr + r.g.text_off);
		prev_end = f.end;
		if (f.name_len == 14 && !memcmp(f.name, "main.hoGoAlpha", 14))
			alpha = f.end - f.start;
		if (f.name_len == 13 && !memcmp(f.name, "main.hoGoBeta", 13))
			beta = f.end - f.start;
	}
	CHECK_EQ(n, r.g.tab.nfunc);		/* a real table: nothing skipped */
	real_cut(&r);
	CHECK(alpha > 0 && alpha == beta);	/* identical bodies */
	CHECK(prev_end <= r.g.text_addr + r.g.text_size);
	real_close(&r);
}

/* Truncations and byte flips of the real table: in bounds. */
TEST(real_hostile)
{
	struct real r;
	uint8_t *copy;
	size_t size;

	CHECK_EQ(real_open(&r), 0);
	size = r.g.tab.size;
	copy = malloc(size);
	CHECK(copy != NULL);
	if (!copy || !size) {
		real_close(&r);
		return;
	}
	for (size_t len = 0; len < size; len += len < 256 ? 1 : len / 7)
		read_all(r.g.bytes, len, r.g.text_addr);
	srand(21);
	for (int k = 0; k < 200; k++) {
		memcpy(copy, r.g.bytes, size);
		for (int j = 0; j < 16; j++)
			copy[(size_t)rand() % (k < 100 ? (size < 4096 ? size : 4096) : size)] ^=
				(uint8_t)(1 + rand() % 255);
		read_all(copy, size, r.g.text_addr);
	}
	free(copy);
	real_close(&r);
}

struct cmp {
	const struct symtab *t;
	uint64_t n, bad;
};

static int cmp_one(void *ctx, uint64_t off, const struct gopclntab_func *f)
{
	struct cmp *c = ctx;
	const struct sym *s = symtab__find(c->t, off);

	c->n++;
	if (!s || s->start != off || s->end != off + (f->end - f->start) ||
	    strlen(s->name) != f->name_len || memcmp(s->name, f->name, f->name_len))
		c->bad++;
	return 0;
}

/* The symbol file read back by precord's ELF reader, and the binary's own
 * .gopclntab read by it: the same functions at the same file offsets. */
TEST(symfile_round_trip)
{
	struct real r;
	struct symfile_sym *v;
	struct gopclntab_func f;
	struct symtab *from_file, *from_bin;
	uint64_t off, n = 0;
	__u8 id[BUILD_ID_SIZE], id2[BUILD_ID_SIZE], back[BUILD_ID_SIZE];
	int mfd;

	CHECK_EQ(real_open(&r), 0);
	v = calloc(r.g.tab.nfunc + 1, sizeof(*v));
	CHECK(v != NULL);
	for (uint64_t i = 0; v && i < r.g.tab.nfunc; i++)
		if (!gosyms__func(&r.g, i, &f, &off))
			v[n++] = (struct symfile_sym){ f.start, f.end - f.start, f.name, f.name_len };
	CHECK_EQ(elf_build_id_or_go_fd(r.fd, id), BUILD_ID_SIZE);
	CHECK_EQ(elf_build_id_or_go_fd(r.fd, id2), BUILD_ID_SIZE);
	CHECK(!memcmp(id, id2, sizeof(id)));
	CHECK_EQ(elf_build_id_fd(r.fd, id2), -ENOENT);	/* no GNU note: ours */
	mfd = memfd_create("symfile", MFD_CLOEXEC);
	CHECK(mfd >= 0);
	CHECK_EQ(symfile__write(mfd, v, n, r.g.text_addr - r.g.text_off, id, BUILD_ID_SIZE,
				r.g.machine), 0);
	CHECK_EQ(elf_build_id_fd(mfd, back), BUILD_ID_SIZE);
	CHECK(!memcmp(id, back, sizeof(id)));
	from_file = symtab__load_elf(mfd, "symfile");
	from_bin = symtab__load_elf(r.fd, hogo);
	CHECK(from_file && from_bin);
	if (from_file && from_bin) {
		struct cmp a = { from_file, 0, 0 }, b = { from_bin, 0, 0 };

		CHECK_EQ(symtab__nr(from_file), n);
		CHECK_EQ(symtab__nr(from_bin), n);
		gosyms__each(&r.g, hogo, cmp_one, &a);
		gosyms__each(&r.g, hogo, cmp_one, &b);
		CHECK_EQ(a.bad, 0);
		CHECK_EQ(b.bad, 0);
		CHECK_EQ(a.n, n);
	}
	symtab__free(from_file);
	symtab__free(from_bin);
	if (mfd >= 0)
		close(mfd);
	/* .text past the end of the address space */
	mfd = memfd_create("x", MFD_CLOEXEC);
	CHECK_EQ(symfile__write(mfd, v, n, UINT64_MAX - 8, id, BUILD_ID_SIZE, r.g.machine),
		 -EINVAL);
	if (mfd >= 0)
		close(mfd);
	free(v);
	real_close(&r);
}

int main(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');

	(void)argc;
	log_verbosity = getenv("GOPCLNTAB_TEST_VERBOSE") ? 2 : -1;
	elf_version(EV_CURRENT);
	snprintf(hogo, sizeof(hogo), "%.*s/../workloads/hogo",
		 slash ? (int)(slash - argv[0]) : 1, slash ? argv[0] : ".");
	RUN(made_layouts);
	RUN(made_hostile);
	RUN(names_bounded);
	RUN(real_table);
	RUN(real_hostile);
	RUN(symfile_round_trip);
	return HARNESS_DONE();
}
