// SPDX-License-Identifier: GPL-2.0
/*
 * --trace function lookup: spec parsing, event names, /proc/PID/maps
 * lines, and ELF symbol resolution on this test binary (file offsets are
 * checked against the code in memory), libc (by name, through our own
 * maps and the library directories), a file that is not ELF, an ELF with
 * no symbols, too many matches.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>

#include "harness.h"
#include "trace/symbols.h"
#include "trace/xray.h"

TEST(spec_split)
{
	char buf[64];
	const char *bin, *glob;

	glob = trace_spec_split("tracee:*er", buf, sizeof(buf), &bin);
	CHECK_STR(bin, "tracee");
	CHECK_STR(glob, "*er");
	glob = trace_spec_split("inner", buf, sizeof(buf), &bin);
	CHECK(bin == NULL);
	CHECK_STR(glob, "inner");
	glob = trace_spec_split(":inner", buf, sizeof(buf), &bin);
	CHECK(bin == NULL);
	CHECK_STR(glob, "inner");
	glob = trace_spec_split("/usr/lib/x.so:a:b", buf, sizeof(buf), &bin);
	CHECK_STR(bin, "/usr/lib/x.so");
	CHECK_STR(glob, "a:b");
	glob = trace_spec_split("0123456789:f", buf, 8, &bin);	/* too long */
	CHECK_STR(bin, "");
	CHECK_STR(glob, "f");
}

TEST(event_names)
{
	char out[32];

	trace_event_name("foo.isra.0", out, sizeof(out));
	CHECK_STR(out, "foo_isra_0");
	trace_event_name("_ZN2ns3fooEv", out, sizeof(out));
	CHECK_STR(out, "_ZN2ns3fooEv");
	trace_event_name("a@@GLIBC_2.2.5", out, 6);
	CHECK_STR(out, "a__GL");
}

TEST(maps_lines)
{
	__u64 s, e, off;
	const char *path;

	CHECK_EQ(trace_maps_parse_line("55d0c1a2b000-55d0c1a2c000 r-xp 00001000 fe:01 1234   "
				       "/usr/bin/my prog\n", &s, &e, &off, &path), 0);
	CHECK_EQ(s, 0x55d0c1a2b000ULL);
	CHECK_EQ(e, 0x55d0c1a2c000ULL);
	CHECK_EQ(off, 0x1000);
	CHECK_STR(path, "/usr/bin/my prog\n");
	CHECK_EQ(trace_maps_parse_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 \n", &s, &e,
				       &off, &path), 0);
	CHECK(path == NULL);
	CHECK_EQ(trace_maps_parse_line("garbage", &s, &e, &off, &path), -EINVAL);
	CHECK_EQ(trace_maps_parse_line("", &s, &e, &off, &path), -EINVAL);
}

static const struct trace_func *find(const struct trace_syms *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nr_funcs; i++)
		if (!strcmp(s->funcs[i].name, name))
			return &s->funcs[i];
	return NULL;
}

/* The bytes at the uprobe's file offset are the function's code. */
static void check_offset(const struct trace_syms *s, const char *name, const void *code)
{
	const struct trace_func *f = find(s, name);
	unsigned char want[16], got[16];
	int fd;

	CHECK(f != NULL);
	if (!f)
		return;
	memcpy(want, code, sizeof(want));
	fd = open(s->binaries[f->binary].path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, got, sizeof(got), (off_t)f->file_off), (long)sizeof(got));
	CHECK(!memcmp(want, got, sizeof(got)));
	close(fd);
}

TEST(resolve_self)
{
	struct trace_syms s = { 0 };
	char exe[PATH_MAX], spec[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base;
	size_t i, before;

	CHECK(n > 0);
	exe[n > 0 ? n : 0] = '\0';
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	/* path given */
	snprintf(spec, sizeof(spec), "%s:xray_put_*", exe);
	CHECK_EQ(trace_syms_add_spec(&s, spec, 0, NULL), 0);
	CHECK(s.nr_funcs >= 10);
	check_offset(&s, "xray_put_function", (const void *)xray_put_function);
	check_offset(&s, "xray_put_new_cpu", (const void *)xray_put_new_cpu);
	for (i = 0; i < s.nr_funcs; i++) {
		CHECK_EQ(s.funcs[i].id, i + 1);
		CHECK(s.funcs[i].event != NULL);
		CHECK_EQ(s.funcs[i].binary, 0);
	}
	CHECK_STR(find(&s, "xray_put_md")->event, "xray_put_md");
	/* the executable's basename, and no BINARY: main_exe; the same
	 * functions again are not added twice */
	before = s.nr_funcs;
	snprintf(spec, sizeof(spec), "%s:xray_put_md", base);
	CHECK_EQ(trace_syms_add_spec(&s, spec, 0, exe), 0);
	CHECK_EQ(trace_syms_add_spec(&s, "xray_put_md", 0, "/proc/self/exe"), 0);
	CHECK_EQ(s.nr_funcs, before);
	CHECK_EQ(s.nr_binaries, 1);
	/* a new one is */
	CHECK_EQ(trace_syms_add_spec(&s, "xray_enc_function", 0, exe), 0);
	CHECK_EQ(s.nr_funcs, before + 1);
	check_offset(&s, "xray_enc_function", (const void *)xray_enc_function);
	/* nothing matches; no target executable */
	CHECK_EQ(trace_syms_add_spec(&s, "no_such_function_xyz*", 0, exe), -ENOENT);
	CHECK_EQ(trace_syms_add_spec(&s, "inner", 0, NULL), -EINVAL);
	CHECK_EQ(trace_syms_add_spec(&s, "tracee:", 0, exe), -EINVAL);
	CHECK_EQ(s.nr_funcs, before + 1);
	trace_syms_free(&s);
	CHECK_EQ(s.nr_funcs, 0);
}

TEST(resolve_libc)
{
	struct trace_syms s = { 0 };
	const struct trace_func *f;

	/* through our own maps, by full and by short name */
	CHECK_EQ(trace_syms_add_spec(&s, "libc.so.6:malloc", (int)getpid(), NULL), 0);
	CHECK_EQ(trace_syms_add_spec(&s, "libc:free", (int)getpid(), NULL), 0);
	f = find(&s, "malloc");
	CHECK(f != NULL);
	CHECK(f && strstr(s.binaries[f->binary].path, "libc") != NULL);
	CHECK(f && strncmp(s.binaries[f->binary].path, "/proc/", 6) != 0);	/* same root */
	{
		/* libc's own free (under ASan, plain `free` is the interceptor) */
		void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

		CHECK(h != NULL);
		if (h) {
			check_offset(&s, "free", dlsym(h, "free"));
			dlclose(h);
		}
	}
	CHECK_EQ(s.nr_binaries, 1);
	/* through the library directories */
	CHECK_EQ(trace_syms_add_spec(&s, "libc.so.6:calloc", 0, NULL), 0);
	CHECK_EQ(s.nr_binaries, 1);
	/* far too many matches */
	CHECK_EQ(trace_syms_add_spec(&s, "libc.so.6:*", 0, NULL), -E2BIG);
	CHECK_EQ(s.nr_funcs, 3);
	/* no such library */
	CHECK_EQ(trace_syms_add_spec(&s, "libnosuch_xyz.so:f", (int)getpid(), NULL), -ENOENT);
	trace_syms_free(&s);
}

static int make_file(char *dir_tmpl, const char *name, const void *p, size_t n,
		     char *path, size_t size)
{
	int fd;

	snprintf(path, size, "%s/%s", dir_tmpl, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

TEST(resolve_bad_files)
{
	char dir[] = "/tmp/test_xray_syms.XXXXXX", path[PATH_MAX], spec[PATH_MAX + 8];
	struct trace_syms s = { 0 };
	Elf64_Ehdr eh = { 0 };

	CHECK(mkdtemp(dir) != NULL);
	/* not ELF */
	CHECK_EQ(make_file(dir, "text", "#!/bin/sh\necho hi\n", 18, path, sizeof(path)), 0);
	snprintf(spec, sizeof(spec), "%s:*", path);
	CHECK_EQ(trace_syms_add_spec(&s, spec, 0, NULL), -ENOEXEC);
	unlink(path);
	/* an ELF header and nothing else: no symbols */
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	CHECK_EQ(make_file(dir, "empty.so", &eh, sizeof(eh), path, sizeof(path)), 0);
	snprintf(spec, sizeof(spec), "%s:*", path);
	CHECK_EQ(trace_syms_add_spec(&s, spec, 0, NULL), -ENOEXEC);
	/* section headers pointing past the end of the file */
	eh.e_shoff = 1 << 20;
	eh.e_shnum = 50;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	unlink(path);
	CHECK_EQ(make_file(dir, "empty.so", &eh, sizeof(eh), path, sizeof(path)), 0);
	CHECK(trace_syms_add_spec(&s, spec, 0, NULL) < 0);
	unlink(path);
	/* a relocatable object is not something uprobes go in */
	eh.e_type = ET_REL;
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	CHECK_EQ(make_file(dir, "x.o", &eh, sizeof(eh), path, sizeof(path)), 0);
	snprintf(spec, sizeof(spec), "%s:*", path);
	CHECK_EQ(trace_syms_add_spec(&s, spec, 0, NULL), -ENOEXEC);
	unlink(path);
	/* a directory, a missing file */
	snprintf(spec, sizeof(spec), "%s:*", dir);
	CHECK_EQ(trace_syms_add_spec(&s, spec, 0, NULL), -ENOEXEC);
	snprintf(spec, sizeof(spec), "%s/missing:*", dir);
	CHECK_EQ(trace_syms_add_spec(&s, spec, 0, NULL), -ENOENT);
	CHECK_EQ(s.nr_funcs, 0);
	trace_syms_free(&s);
	rmdir(dir);
}

int main(void)
{
	RUN(spec_split);
	RUN(event_names);
	RUN(maps_lines);
	RUN(resolve_self);
	RUN(resolve_libc);
	RUN(resolve_bad_files);
	return HARNESS_DONE();
}
