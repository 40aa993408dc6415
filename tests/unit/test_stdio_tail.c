// SPDX-License-Identifier: GPL-2.0
/*
 * stdio_tail: a child writes a file through a fully buffered FILE (as V8
 * writes its jitdump); the bytes it has not flushed are read from its
 * memory, after the ones it flushed; a file it has no stream for, a
 * stream with nothing pending and a process that is gone give nothing.
 * Not as root (make unit) the libc cannot be opened: nothing either.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "jit/stdio_tail.h"

static char tmpdir[] = "/tmp/precord-test-stdio-tail-XXXXXX";

/* A child with path open through a FILE with a 1 MiB buffer: flushed
 * bytes, then pending ones, then it waits to be killed.  Its pid, once
 * it is ready; 0 on failure. */
static pid_t writer(const char *path, size_t flushed, size_t pending, int fill)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready))
		return 0;
	pid = fork();
	if (pid == 0) {
		static char buf[1 << 20];
		FILE *f = fopen(path, "w");
		char *bytes = malloc(flushed + pending + 1);

		if (!f || !bytes || setvbuf(f, buf, _IOFBF, sizeof(buf)))
			_exit(1);
		for (size_t i = 0; i < flushed + pending; i++)
			bytes[i] = (char)(fill + i * 7);
		if (fwrite(bytes, 1, flushed, f) != flushed || fflush(f) ||
		    fwrite(bytes + flushed, 1, pending, f) != pending)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return 0;
	}
	close(ready[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(pending_bytes_after_the_flushed)
{
	struct stdio_tail *t = stdio_tail__new();
	struct pbuf out = { 0 };
	char path[256];
	__u64 at = 0;
	pid_t pid;
	int fd, err;

	snprintf(path, sizeof(path), "%s/dump", tmpdir);
	pid = writer(path, 5000, 3000, 3);
	CHECK(pid > 0 && t);
	if (pid <= 0 || !t)
		return;
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	err = stdio_tail__peek(t, (__u32)pid, fd, &out, &at);
	CHECK_EQ(err, 0);
	if (geteuid() != 0) {	/* /proc/PID/map_files is root's: nothing */
		CHECK_EQ(out.len, 0);
		reap(pid);
		close(fd);
		pbuf_free(&out);
		stdio_tail__free(t);
		return;
	}
	CHECK_EQ(at, 5000);
	CHECK_EQ(out.len, 3000);
	for (size_t i = 0; i < out.len && i < 3000; i++)
		if (out.data[i] != (__u8)(3 + (5000 + i) * 7)) {
			CHECK(!"pending byte differs");
			break;
		}
	/* again: the libc is cached, the same answer */
	err = stdio_tail__peek(t, (__u32)pid, fd, &out, &at);
	CHECK_EQ(err, 0);
	CHECK_EQ(out.len, 3000);
	reap(pid);
	/* gone */
	CHECK(stdio_tail__peek(t, (__u32)pid, fd, &out, &at) != 0 || out.len == 0);
	CHECK_EQ(out.len, 0);
	close(fd);
	pbuf_free(&out);
	stdio_tail__free(t);
}

TEST(nothing_to_read)
{
	struct stdio_tail *t = stdio_tail__new();
	struct pbuf out = { 0 };
	char path[256], other[256];
	__u64 at = 0;
	pid_t pid;
	int fd;

	snprintf(path, sizeof(path), "%s/flushed", tmpdir);
	snprintf(other, sizeof(other), "%s/other", tmpdir);
	pid = writer(path, 100, 0, 5);
	CHECK(pid > 0 && t);
	if (pid <= 0 || !t)
		return;
	/* all flushed: nothing pending */
	fd = open(path, O_RDONLY);
	CHECK_EQ(stdio_tail__peek(t, (__u32)pid, fd, &out, &at), 0);
	CHECK_EQ(out.len, 0);
	close(fd);
	/* a file the process does not have open */
	fd = open(other, O_RDWR | O_CREAT, 0600);
	CHECK_EQ(stdio_tail__peek(t, (__u32)pid, fd, &out, &at), 0);
	CHECK_EQ(out.len, 0);
	close(fd);
	reap(pid);
	pbuf_free(&out);
	stdio_tail__free(t);
}

int main(void)
{
	return HARNESS_WITH_TMPDIR(tmpdir, {
		RUN(pending_bytes_after_the_flushed);
		RUN(nothing_to_read);
	});
}
