// SPDX-License-Identifier: GPL-2.0
/* util/: whole reads and writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <sys/wait.h>

#include "harness.h"
#include "util/io.h"

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

int main(void)
{
	return HARNESS_WITH_TMPDIR(dir, {
		RUN(io_write_then_read_back);
		RUN(io_errors_are_negative_errno);
		RUN(io_read_full_gathers_short_reads);
		RUN(io_write_full_reports_a_closed_pipe);
	});
}
