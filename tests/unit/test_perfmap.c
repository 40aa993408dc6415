// SPDX-License-Identifier: GPL-2.0
/* perf map reader: line syntax, junk, incremental reads, no final newline. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jit/perfmap.h"
#include "util/log.h"

static char tmpdir[] = "/tmp/precord-test-perfmap-XXXXXX";

static int parse(const char *line, struct perfmap_entry *e)
{
	return perfmap_parse_line(line, strlen(line), e, NULL);
}

static bool name_is(const struct perfmap_entry *e, const char *want)
{
	return e->name_len == strlen(want) && !memcmp(e->name, want, e->name_len);
}

TEST(parse_good)
{
	struct perfmap_entry e;

	CHECK_EQ(parse("7f00aa 1c0 LazyCompile:~foo bar.js:1", &e), 0);
	CHECK_EQ(e.start, 0x7f00aa);
	CHECK_EQ(e.size, 0x1c0);
	CHECK(name_is(&e, "LazyCompile:~foo bar.js:1"));
	CHECK_EQ(parse("0x7F00AA 0X10 java.lang.String::hashCode", &e), 0);
	CHECK_EQ(e.start, 0x7f00aa);
	CHECK_EQ(e.size, 0x10);
	CHECK(name_is(&e, "java.lang.String::hashCode"));
	CHECK_EQ(parse("  10\t20 name  with  spaces \r", &e), 0);
	CHECK_EQ(e.start, 0x10);
	CHECK_EQ(e.size, 0x20);
	CHECK(name_is(&e, "name  with  spaces "));
	CHECK_EQ(parse("ffffffffffff0000 ffff x", &e), 0);
	CHECK_EQ(e.start, 0xffffffffffff0000ULL);
	CHECK_EQ(parse("0 0 zero", &e), 0);	/* legal; the merger skips size 0 */
	CHECK(name_is(&e, "zero"));
}

TEST(parse_junk)
{
	struct perfmap_entry e;
	const char *why = NULL;

	CHECK_EQ(parse("", &e), -EINVAL);
	CHECK_EQ(parse("hello world", &e), -EINVAL);
	CHECK_EQ(parse("1000", &e), -EINVAL);
	CHECK_EQ(parse("1000 ", &e), -EINVAL);
	CHECK_EQ(parse("1000 20", &e), -EINVAL);		/* no name */
	CHECK_EQ(parse("1000 20 ", &e), -EINVAL);
	CHECK_EQ(parse("1000g 20 x", &e), -EINVAL);
	CHECK_EQ(parse("0x 20 x", &e), -EINVAL);
	CHECK_EQ(parse("1000 zz x", &e), -EINVAL);
	CHECK_EQ(parse("10000000000000000 1 x", &e), -EINVAL);	/* 17 digits */
	CHECK_EQ(parse("ffffffffffffffff 2 wrap", &e), -EINVAL);
	CHECK_EQ(perfmap_parse_line("10 2 a\0b", 8, &e, &why), -EINVAL);
	CHECK(why && strstr(why, "NUL"));
}

struct got {
	int n;
	__u64 last_line;
	char names[16][64];
	__u64 starts[16];
};

static int collect(void *ctx, const struct perfmap_entry *e, __u64 line_no)
{
	struct got *g = ctx;

	if (g->n < 16) {
		snprintf(g->names[g->n], 64, "%.*s", (int)e->name_len, e->name);
		g->starts[g->n] = e->start;
	}
	g->n++;
	g->last_line = line_no;
	return 0;
}

static void append(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
	close(fd);
}

TEST(reader_incremental_and_final_line)
{
	char path[256];
	struct perfmap_reader *r;
	struct got g = { 0 };

	snprintf(path, sizeof(path), "%s/perf-1.map", tmpdir);
	append(path, "1000 10 first\njunk line\n2000 20 sec");
	r = perfmap_reader__new(path, -1);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(perfmap_reader__read(r, false, &JIT_BUDGET_NONE, collect, &g), 1);
	CHECK_EQ(perfmap_reader__bad(r), 1);
	/* the runtime finishes the line and writes more */
	append(path, "ond name\n\n3000 30 third");
	CHECK_EQ(perfmap_reader__read(r, false, &JIT_BUDGET_NONE, collect, &g), 1);
	CHECK_STR(g.names[1], "second name");
	CHECK_EQ(g.last_line, 3);
	/* at the end, a last line without '\n' counts */
	CHECK_EQ(perfmap_reader__read(r, true, &JIT_BUDGET_NONE, collect, &g), 1);
	CHECK_STR(g.names[2], "third");
	CHECK_EQ(g.starts[2], 0x3000);
	CHECK_EQ(g.last_line, 5);
	CHECK_EQ(perfmap_reader__read(r, true, &JIT_BUDGET_NONE, collect, &g), 0);
	perfmap_reader__free(r);
}

TEST(reader_long_lines_and_many)
{
	char path[256];
	struct perfmap_reader *r;
	struct got g = { 0 };
	char *big = malloc(PERFMAP_MAX_LINE * 3 + 64);
	int fd;

	snprintf(path, sizeof(path), "%s/perf-2.map", tmpdir);
	memset(big, 'a', PERFMAP_MAX_LINE * 3);
	big[PERFMAP_MAX_LINE * 3] = '\0';
	append(path, "1 1 before\n");
	append(path, big);			/* one over-long junk line */
	append(path, "\n2 1 after\n");
	for (int i = 0; i < 20000; i++) {
		char line[64];

		snprintf(line, sizeof(line), "%x 4 fn_%d\n", 0x100000 + i * 4, i);
		append(path, line);
	}
	fd = open(path, O_RDONLY);
	r = perfmap_reader__new("shown-name", fd);
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(perfmap_reader__read(r, true, &JIT_BUDGET_NONE, collect, &g), 20002);
		CHECK_STR(g.names[0], "before");
		CHECK_STR(g.names[1], "after");
		CHECK_EQ(perfmap_reader__bad(r), 1);
		CHECK_EQ(g.last_line, 20003);
		CHECK_STR(perfmap_reader__path(r), "shown-name");
	}
	perfmap_reader__free(r);
	free(big);
}

static bool always_stop(void *ctx)
{
	(void)ctx;
	return true;
}

/* Whole lines within the byte budget, resumed where it ended; an endless
 * line (a sparse file of zeros) costs only the budget; stop and deadline
 * end a read before it starts. */
TEST(reader_budget)
{
	char path[256];
	struct perfmap_reader *r;
	struct jit_budget b;
	struct got g = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/perf-3.map", tmpdir);
	append(path, "1000 10 one\n2000 20 two\n3000 30 three\n");
	r = perfmap_reader__new(path, -1);
	CHECK(r != NULL);
	if (!r)
		return;
	b = (struct jit_budget){ .bytes = 14 };		/* "1000 10 one\n" + 2 */
	CHECK_EQ(perfmap_reader__read(r, true, &b, collect, &g), 1);
	CHECK(b.cut);
	CHECK_EQ(perfmap_reader__offset(r), 12);
	b = (struct jit_budget){ .bytes = ~0ULL, .stop = always_stop };
	CHECK_EQ(perfmap_reader__read(r, true, &b, collect, &g), 0);
	CHECK(b.cut);
	b = (struct jit_budget){ .bytes = ~0ULL, .deadline_ns = 1 };
	CHECK_EQ(perfmap_reader__read(r, true, &b, collect, &g), 0);
	b = (struct jit_budget){ .bytes = ~0ULL };
	CHECK_EQ(perfmap_reader__read(r, true, &b, collect, &g), 2);
	CHECK(!b.cut);
	CHECK_STR(g.names[2], "three");
	perfmap_reader__free(r);

	/* 1 GiB of zeros, a hole: the budget's 3 MiB are read, no more */
	snprintf(path, sizeof(path), "%s/perf-4.map", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && !ftruncate(fd, 1 << 30));
	r = perfmap_reader__new(path, fd);
	CHECK(r != NULL);
	if (!r)
		return;
	b = (struct jit_budget){ .bytes = 3u << 20 };
	CHECK_EQ(perfmap_reader__read(r, true, &b, collect, &g), 0);
	CHECK(b.cut);
	CHECK_EQ(b.bytes, 0);
	CHECK_EQ(perfmap_reader__offset(r), 3u << 20);
	CHECK_EQ(perfmap_reader__bad(r), 1);		/* "line too long", once */
	perfmap_reader__free(r);
}

TEST(reader_refuses_non_files)
{
	CHECK(perfmap_reader__new(tmpdir, -1) == NULL);
	CHECK(perfmap_reader__new("/nonexistent/perf-1.map", -1) == NULL);
}

TEST(hostile_bytes)
{
	unsigned int seed = 7;
	char buf[256];

	for (int round = 0; round < 20000; round++) {
		struct perfmap_entry e;
		size_t len = round % sizeof(buf);

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245 + 12345;
			buf[i] = "0123456789abcdefxX \t\r\n\0z"[(seed >> 16) % 25];
		}
		if (!perfmap_parse_line(buf, len, &e, NULL)) {
			CHECK(e.name >= buf && e.name + e.name_len <= buf + len);
			CHECK(e.name_len > 0);
		}
	}
}

int main(void)
{
	log_verbosity = -1;
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(parse_good);
		RUN(parse_junk);
		RUN(reader_incremental_and_final_line);
		RUN(reader_long_lines_and_many);
		RUN(reader_budget);
		RUN(reader_refuses_non_files);
		RUN(hostile_bytes);
	});
}
