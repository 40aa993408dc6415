/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal unit-test harness.  A test file defines TEST(name) functions and a
 * main that runs them with RUN(name); each CHECK failure prints file:line
 * and marks the test failed.  Output is TAP-like: "ok N - name" /
 * "not ok N - name", and main returns non-zero when anything failed.
 */
#ifndef PRECORD_TEST_HARNESS_H
#define PRECORD_TEST_HARNESS_H

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int harness_failed_checks;
static int harness_tests, harness_failed_tests;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",	\
				__FILE__, __LINE__, #cond);		\
			harness_failed_checks++;			\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b) {						\
			fprintf(stderr, "  %s:%d: %s == %s: %lld != %lld\n", \
				__FILE__, __LINE__, #a, #b, _a, _b);	\
			harness_failed_checks++;			\
		}							\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *_a = (a), *_b = (b);			\
		if (!_a || !_b || strcmp(_a, _b)) {			\
			fprintf(stderr, "  %s:%d: %s == %s: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, #a, #b,		\
				_a ? _a : "(null)", _b ? _b : "(null)");	\
			harness_failed_checks++;			\
		}							\
	} while (0)

#define TEST(name) static void test_##name(void)

#define RUN(name)							\
	do {								\
		int _before = harness_failed_checks;			\
		test_##name();						\
		harness_tests++;					\
		if (harness_failed_checks != _before) {			\
			harness_failed_tests++;				\
			printf("not ok %d - %s\n", harness_tests, #name); \
		} else {						\
			printf("ok %d - %s\n", harness_tests, #name);	\
		}							\
	} while (0)

/* out = the fixture name built beside the test programs: argv0's
 * directory/../fixtures/name (the Makefile's $(BUILD)/fixtures). */
static inline void harness_fixture(const char *argv0, const char *name, char *out, size_t size)
{
	const char *slash = strrchr(argv0, '/');
	int dir = slash ? (int)(slash - argv0) : 1;

	snprintf(out, size, "%.*s/../fixtures/%s", dir, slash ? argv0 : ".", name);
}

/* The whole file at path, malloc'd (its size in *len); NULL on failure. */
static inline unsigned char *harness_slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *p = NULL;
	int fd = open(path, O_RDONLY);

	if (fd >= 0 && !fstat(fd, &st) && (p = malloc((size_t)st.st_size ? (size_t)st.st_size : 1)) &&
	    read(fd, p, (size_t)st.st_size) == st.st_size) {
		*len = (size_t)st.st_size;
		close(fd);
		return p;
	}
	free(p);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* A field of /proc/self/status in KB ("VmRSS:", "VmHWM:"), -1 unknown. */
static inline long harness_status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			kb = strtol(line + strlen(field) + 1, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* Reset the peak RSS (VmHWM) to the current RSS. */
static inline void harness_hwm_reset(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "5", 1) != 1)
			perror("clear_refs");
		close(fd);
	}
}

/* Tests that need files make one temporary directory (mkdtemp template
 * in dir) and remove it, whatever is in it, when they are done. */
static int harness_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(path);
}

static inline int harness_rmtree(const char *dir)
{
	return nftw(dir, harness_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Run the tests with a temporary directory: returns main's exit status. */
#define HARNESS_WITH_TMPDIR(dir, body)					\
	({								\
		int _rc;						\
		if (!mkdtemp(dir)) {					\
			perror("mkdtemp");				\
			_rc = 1;					\
		} else {						\
			body;						\
			_rc = HARNESS_DONE();				\
			if (harness_rmtree(dir))			\
				_rc = 1;				\
		}							\
		_rc;							\
	})

#define HARNESS_DONE()							\
	(printf("1..%d\n", harness_tests), harness_failed_tests ? 1 : 0)

#endif
