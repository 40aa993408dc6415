// SPDX-License-Identifier: GPL-2.0
/*
 * The symbol file of a stripped Go binary, written to an anonymous memory
 * file and added to the build-id cache as a copy of it (the cache's
 * checks, budget and conflict rules apply as to any copy).
 */
#include "perfdata/go_symfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/gosyms.h"
#include "elf/symfile.h"
#include "perfdata/buildid_cache.h"
#include "util/array.h"

struct collect {
	struct symfile_sym *v;
	size_t nr, cap;
};

static int collect_one(void *ctx, uint64_t off, const struct gopclntab_func *f)
{
	struct collect *c = ctx;

	(void)off;
	if (ARRAY_GROW(c->v, c->cap, c->nr + 1))
		return -ENOMEM;
	c->v[c->nr++] = (struct symfile_sym){ f->start, f->end - f->start, f->name, f->name_len };
	return 0;
}

/* The symbol file of g into a new memory file: its fd or -errno. */
static int make_file(const struct gosyms *g, const char *name, const __u8 *id, int size)
{
	struct collect c = { 0 };
	int err = gosyms__each(g, name, collect_one, &c);
	int mfd = err ? -1 : memfd_create("precord-go-syms", MFD_CLOEXEC);

	if (!err && mfd < 0)
		err = -errno;
	if (!err)
		err = c.nr ? symfile__write(mfd, c.v, c.nr, g->text_addr - g->text_off, id, size,
					    g->machine) : -ENOENT;
	free(c.v);
	if (err && mfd >= 0)
		close(mfd);
	return err ? err : mfd;
}

int go_symfile__cache(const char *cache_dir, const char *name, const __u8 *id, int size,
		      int fd, unsigned int flags)
{
	struct gosyms g;
	int err = gosyms__load_fd(&g, fd, name), mfd;

	if (err)
		return err == -EFBIG || err == -ENOMEM ? err : -ENOENT;
	mfd = make_file(&g, name, id, size);
	gosyms__free(&g);
	if (mfd < 0)
		return mfd;
	err = buildid_cache__add_fd(cache_dir, name, id, size, mfd, flags);
	close(mfd);
	return err;
}
