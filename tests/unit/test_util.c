// SPDX-License-Identifier: GPL-2.0
/* util/: whole reads and writes, little-endian loads, LEB128. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "util/array.h"
#include "util/io.h"
#include "util/le.h"
#include "util/leb128.h"

static char dir[] = "/tmp/precord-test-util.XXXXXX";

static int tmp_file(void)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	return fd;
}

TEST(io_write_then_read_back)
{
	char out[10000], in[12000];
	int fd = tmp_file();

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i * 7);
	CHECK_EQ(write_full(fd, out, 6000), 0);
	CHECK_EQ(pwrite_full(fd, out + 6000, 4000, 6000), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6000);		/* pwrite leaves it */
	CHECK_EQ(pread_full(fd, in, sizeof(in), 0), 10000);	/* short: EOF */
	CHECK(!memcmp(in, out, sizeof(out)));
	CHECK_EQ(pread_full(fd, in, 100, 9950), 50);
	CHECK_EQ(pread_full(fd, in, 100, 10000), 0);		/* at EOF */
	CHECK_EQ(pread_full(fd, in, 100, 20000), 0);		/* past it */
	CHECK_EQ(lseek(fd, 1000, SEEK_SET), 1000);
	CHECK_EQ(read_full(fd, in, 500), 500);
	CHECK(!memcmp(in, out + 1000, 500));
	CHECK_EQ(read_full(fd, in, sizeof(in)), 8500);
	CHECK_EQ(read_full(fd, in, sizeof(in)), 0);
	CHECK_EQ(read_full(fd, in, 0), 0);
	CHECK_EQ(write_full(fd, out, 0), 0);
	close(fd);
}

TEST(io_errors_are_negative_errno)
{
	char b[8] = { 0 };
	int fd = tmp_file();

	CHECK_EQ(pread_full(fd, b, sizeof(b), -1), -EINVAL);
	CHECK_EQ(pwrite_full(fd, b, sizeof(b), -8), -EINVAL);
	close(fd);
	CHECK_EQ(read_full(fd, b, sizeof(b)), -EBADF);
	CHECK_EQ(pread_full(fd, b, sizeof(b), 0), -EBADF);
	CHECK_EQ(write_full(fd, b, sizeof(b)), -EBADF);
	CHECK_EQ(pwrite_full(fd, b, sizeof(b), 0), -EBADF);
}

/* A pipe delivers the writer's pieces one read at a time: read_full
 * gathers them up to the count, then stops at EOF. */
TEST(io_read_full_gathers_short_reads)
{
	char in[64];
	int p[2];
	pid_t pid;

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (int i = 0; i < 3; i++) {
			if (write_full(p[1], "abcdefghij", 10))
				_exit(1);
			usleep(20000);
		}
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(read_full(p[0], in, 25), 25);
	CHECK(!memcmp(in, "abcdefghijabcdefghijabcde", 25));
	CHECK_EQ(read_full(p[0], in, sizeof(in)), 5);	/* the rest, then EOF */
	CHECK(!memcmp(in, "fghij", 5));
	close(p[0]);
	CHECK(waitpid(pid, NULL, 0) == pid);
}

/* A pipe with no reader: EPIPE, not a loop (SIGPIPE ignored here). */
TEST(io_write_full_reports_a_closed_pipe)
{
	int p[2];

	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	CHECK_EQ(write_full(p[1], "x", 1), -EPIPE);
	signal(SIGPIPE, SIG_DFL);
	close(p[1]);
}

/* Issue 18, finding 14: a replacement is created new (never through a
 * planted symlink), with the umask's mode, and renamed over the name. */
TEST(io_replacement_ignores_planted_names)
{
	char path[64], victim[64], tmp[128];
	struct stat st;
	mode_t old = umask(027);
	int fd;

	snprintf(path, sizeof(path), "%s/out", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "secret", 6) == 6);
	close(fd);
	CHECK_EQ(symlink(victim, path), 0);
	fd = create_replacement(path, tmp, sizeof(tmp));
	CHECK(fd >= 0);
	CHECK(!strncmp(tmp, path, strlen(path)) && strstr(tmp, ".tmp"));
	CHECK(fd >= 0 && write(fd, "new", 3) == 3);
	CHECK(!fstat(fd, &st) && (st.st_mode & 0777) == 0640);
	close(fd);
	CHECK_EQ(commit_replacement(tmp, path, 0), 0);
	CHECK(!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_size == 3);
	CHECK(!stat(victim, &st) && st.st_size == 6 && (st.st_mode & 0777) == 0600);
	/* a failure leaves the old file and no temporary */
	fd = create_replacement(path, tmp, sizeof(tmp));
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(commit_replacement(tmp, path, -EIO), -EIO);
	CHECK(lstat(tmp, &st) && errno == ENOENT);
	CHECK(!stat(path, &st) && st.st_size == 3);
	CHECK_EQ(create_replacement(path, tmp, 8), -ENAMETOOLONG);
	unlink(path);
	unlink(victim);
	umask(old);
}

struct keyed {
	uint64_t pad;
	uint32_t pid;
};

TEST(ptrs_lower_bound)
{
	struct keyed r[5] = { { 0, 3 }, { 0, 7 }, { 0, 7 }, { 0, 10 }, { 0, UINT32_MAX } };
	void *p[5] = { &r[0], &r[1], &r[2], &r[3], &r[4] };
	size_t off = offsetof(struct keyed, pid);

	CHECK_EQ(ptrs_lower_bound_u32(p, 5, off, 0), 0);
	CHECK_EQ(ptrs_lower_bound_u32(p, 5, off, 3), 0);
	CHECK_EQ(ptrs_lower_bound_u32(p, 5, off, 4), 1);
	CHECK_EQ(ptrs_lower_bound_u32(p, 5, off, 7), 1);	/* the first of equals */
	CHECK_EQ(ptrs_lower_bound_u32(p, 5, off, 8), 3);
	CHECK_EQ(ptrs_lower_bound_u32(p, 5, off, UINT32_MAX), 4);
	CHECK_EQ(ptrs_lower_bound_u32(p, 4, off, UINT32_MAX), 4);
	CHECK_EQ(ptrs_lower_bound_u32(p, 0, off, 5), 0);
	CHECK_EQ(ptrs_lower_bound_u32(NULL, 0, off, 5), 0);
}

TEST(le_loads_unaligned)
{
	const uint8_t b[11] = { 0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a };

	CHECK_EQ(le16_load(b + 1), 0x0201);
	CHECK_EQ(le32_load(b + 1), 0x04030201);
	CHECK(le64_load(b + 1) == 0x0807060504030201ULL);
	CHECK(le64_load(b + 3) == 0x0a09080706050403ULL);
	CHECK_EQ(le16_load(b), 0x01ff);
}

TEST(le_stores_unaligned)
{
	uint8_t b[11] = { 0 };

	le64_store(b + 1, 0x0807060504030201ULL);
	CHECK(!memcmp(b, "\0\1\2\3\4\5\6\7\x08\0", 10));
	le32_store(b + 3, 0xa0b0c0d0);
	CHECK(!memcmp(b + 3, "\xd0\xc0\xb0\xa0\x07", 5));
	le16_store(b + 9, 0xbeef);
	CHECK_EQ(le16_load(b + 9), 0xbeef);
	CHECK_EQ(b[9], 0xef);
}

static const uint64_t u_vals[] = {
	0, 1, 0x7f, 0x80, 0xff, 0x3fff, 0x4000, 624485, 0xffffffffULL,
	1ULL << 35, (1ULL << 56) - 1, 1ULL << 56, (1ULL << 63) - 1, 1ULL << 63, UINT64_MAX,
};
static const int64_t s_vals[] = {
	0, 1, -1, 63, 64, -64, -65, 0x7f, -0x80, -123456, 8191, -8192,
	INT32_MAX, INT32_MIN, (1LL << 55) - 1, -(1LL << 55), INT64_MAX, INT64_MIN,
};

/* The number of bytes of the shortest encoding of v (signed or not). */
static size_t leb_len_u(uint64_t v)
{
	size_t n = 1;

	while (v >>= 7)
		n++;
	return n;
}

static size_t leb_len_s(int64_t v)
{
	size_t n = 1;

	while (v >= 64 || v < -64) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Encode v (is_signed: the int64_t of its bits) in the fewest bytes,
 * then read and skip it back. */
static void leb128_round_trip(uint64_t v, bool is_signed)
{
	struct pbuf b = { 0 };
	const uint8_t *p, *end;
	uint64_t u = 0;
	int64_t s = 0;

	CHECK_EQ(is_signed ? leb128_put_s(&b, (int64_t)v) : leb128_put_u(&b, v), 0);
	CHECK_EQ(b.len, is_signed ? leb_len_s((int64_t)v) : leb_len_u(v));
	p = b.data;
	end = b.data + b.len;
	CHECK_EQ(is_signed ? leb128_read_s(&p, end, &s) : leb128_read_u(&p, end, &u), 0);
	CHECK(is_signed ? s == (int64_t)v : u == v);
	CHECK(p == end);
	p = b.data;
	CHECK_EQ(leb128_skip(&p, end), 0);
	CHECK(p == end);
	pbuf_free(&b);
}

TEST(leb128_round_trips)
{
	struct pbuf b = { 0 };

	for (size_t i = 0; i < sizeof(u_vals) / sizeof(u_vals[0]); i++)
		leb128_round_trip(u_vals[i], false);
	for (size_t i = 0; i < sizeof(s_vals) / sizeof(s_vals[0]); i++)
		leb128_round_trip((uint64_t)s_vals[i], true);
	/* DWARF's own examples */
	pbuf_reset(&b);
	leb128_put_u(&b, 624485);
	CHECK_EQ(b.len, 3);
	CHECK(!memcmp(b.data, "\xe5\x8e\x26", 3));
	pbuf_reset(&b);
	leb128_put_s(&b, -123456);
	CHECK_EQ(b.len, 3);
	CHECK(!memcmp(b.data, "\xc0\xbb\x78", 3));
	pbuf_free(&b);
}

TEST(leb128_longest_encodings)
{
	const uint8_t umax[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	const uint8_t smin[10] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f };
	const uint8_t smax[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00 };
	struct pbuf b = { 0 };
	const uint8_t *p;
	uint64_t u;
	int64_t s;

	leb128_put_u(&b, UINT64_MAX);
	CHECK_EQ(b.len, 10);
	CHECK(!memcmp(b.data, umax, 10));
	pbuf_reset(&b);
	leb128_put_s(&b, INT64_MIN);
	CHECK(b.len == 10 && !memcmp(b.data, smin, 10));
	pbuf_reset(&b);
	leb128_put_s(&b, INT64_MAX);
	CHECK(b.len == 10 && !memcmp(b.data, smax, 10));
	p = umax;
	CHECK_EQ(leb128_read_u(&p, umax + 10, &u), 0);
	CHECK(u == UINT64_MAX);
	p = smin;
	CHECK_EQ(leb128_read_s(&p, smin + 10, &s), 0);
	CHECK(s == INT64_MIN);
	p = smax;
	CHECK_EQ(leb128_read_s(&p, smax + 10, &s), 0);
	CHECK(s == INT64_MAX);
	/* padded with 0x80 up to 10 bytes: still the value */
	const uint8_t pad[10] = { 0x85, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };

	p = pad;
	CHECK_EQ(leb128_read_u(&p, pad + 10, &u), 0);
	CHECK_EQ(u, 5);
	p = pad;
	CHECK_EQ(leb128_read_s(&p, pad + 10, &s), 0);
	CHECK_EQ(s, 5);
	pbuf_free(&b);
}

/* Every proper prefix of a value is truncated: -ENODATA, never a read
 * past the end (ASan watches the copy on the heap). */
TEST(leb128_truncated)
{
	struct pbuf b = { 0 };

	leb128_put_u(&b, UINT64_MAX);
	for (size_t n = 0; n < b.len; n++) {
		uint8_t *cut = malloc(n ? n : 1);
		const uint8_t *p = cut;
		uint64_t u = 42;
		int64_t s = 42;

		memcpy(cut, b.data, n);
		CHECK_EQ(leb128_read_u(&p, cut + n, &u), -ENODATA);
		CHECK(p == cut + n);
		CHECK_EQ(u, 42);
		p = cut;
		CHECK_EQ(leb128_read_s(&p, cut + n, &s), -ENODATA);
		CHECK_EQ(s, 42);
		p = cut;
		CHECK_EQ(leb128_skip(&p, cut + n), -ENODATA);
		CHECK(p == cut + n);
		free(cut);
	}
	pbuf_free(&b);
}

/* The 10th byte decides: bits past 64 are an overflow, a continuation
 * past it is too long; skip takes any length. */
TEST(leb128_overlong_and_overflow)
{
	uint8_t v[12];
	const uint8_t *p;
	uint64_t u;
	int64_t s;

	memset(v, 0x80, sizeof(v));
	v[11] = 0x00;			/* 0, padded to 12 bytes */
	p = v;
	CHECK_EQ(leb128_read_u(&p, v + 12, &u), -E2BIG);
	CHECK(p == v + 10);
	p = v;
	CHECK_EQ(leb128_read_s(&p, v + 12, &s), -E2BIG);
	p = v;
	CHECK_EQ(leb128_skip(&p, v + 12), 0);
	CHECK(p == v + 12);

	v[9] = 0x02;			/* bit 64 */
	p = v;
	CHECK_EQ(leb128_read_u(&p, v + 12, &u), -ERANGE);
	v[9] = 0x81;			/* bit 63, then more */
	p = v;
	CHECK_EQ(leb128_read_u(&p, v + 12, &u), -E2BIG);
	v[9] = 0x01;			/* signed: bit 63 set, bits above clear */
	p = v;
	CHECK_EQ(leb128_read_s(&p, v + 12, &s), -ERANGE);
	v[9] = 0x40;
	p = v;
	CHECK_EQ(leb128_read_s(&p, v + 12, &s), -ERANGE);
	v[9] = 0xff;			/* a sign, then more */
	p = v;
	CHECK_EQ(leb128_read_s(&p, v + 12, &s), -E2BIG);
	v[9] = 0x7f;			/* -2^63 */
	p = v;
	CHECK_EQ(leb128_read_s(&p, v + 12, &s), 0);
	CHECK(s == INT64_MIN);
}

int main(void)
{
	return HARNESS_WITH_TMPDIR(dir, {
		RUN(io_write_then_read_back);
		RUN(io_errors_are_negative_errno);
		RUN(io_read_full_gathers_short_reads);
		RUN(io_write_full_reports_a_closed_pipe);
		RUN(io_replacement_ignores_planted_names);
		RUN(ptrs_lower_bound);
		RUN(le_loads_unaligned);
		RUN(le_stores_unaligned);
		RUN(leb128_round_trips);
		RUN(leb128_longest_encodings);
		RUN(leb128_truncated);
		RUN(leb128_overlong_and_overflow);
	});
}
