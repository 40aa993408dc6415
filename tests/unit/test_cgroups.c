// SPDX-License-Identifier: GPL-2.0
/* The cgroup2 mount from mountinfo, -G names, and the synthesized
 * PERF_RECORD_CGROUP records (on this machine's hierarchy, when mounted). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "perfdata/record.h"
#include "record/cgroups.h"

/* systemd's hybrid layout: v1 controllers, cgroup2 at .../unified. */
static const char hybrid[] =
	"24 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n";

static const char pure_v2[] =
	"22 1 0:21 / /proc rw - proc proc rw\n"
	"30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(mount_hybrid_and_pure_v2)
{
	struct cgroup_mount *m = cgroup_mount__parse(hybrid);

	CHECK(m != NULL);
	if (m) {
		CHECK_STR(cgroup_mount__dir(m), "/sys/fs/cgroup/unified");
		CHECK_STR(cgroup_mount__root(m), "/");
	}
	cgroup_mount__free(m);
	m = cgroup_mount__parse(pure_v2);
	CHECK(m != NULL);
	if (m)
		CHECK_STR(cgroup_mount__dir(m), "/sys/fs/cgroup");
	cgroup_mount__free(m);
}

TEST(mount_none_and_junk)
{
	errno = 0;
	CHECK(cgroup_mount__parse("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n") == NULL);
	CHECK_EQ(errno, ENOENT);
	CHECK(cgroup_mount__parse("") == NULL);
	CHECK(cgroup_mount__parse("- cgroup2\n\n-\n 1 2 3 - cgroup2 x y\n") == NULL);
	/* a mount point named like the separator, and a type that only
	 * starts with cgroup2 */
	CHECK(cgroup_mount__parse("1 2 0:1 / /a - b rw - cgroup2x c rw\n") == NULL);
}

/* A subtree mount (a container's) is taken only when no mount shows the
 * whole hierarchy; escaped characters are decoded. */
TEST(mount_prefers_the_whole_hierarchy)
{
	const char two[] =
		"50 1 0:38 /sys.slice/c1 /cg\\040sub rw - cgroup2 cgroup2 rw\n"
		"51 1 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
	const char one[] = "50 1 0:38 /sys.slice/c1 /cg\\040sub rw - cgroup2 cgroup2 rw";
	struct cgroup_mount *m = cgroup_mount__parse(two);

	CHECK(m != NULL);
	if (m)
		CHECK_STR(cgroup_mount__dir(m), "/sys/fs/cgroup/unified");
	cgroup_mount__free(m);
	m = cgroup_mount__parse(one);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(cgroup_mount__dir(m), "/cg sub");
		CHECK_STR(cgroup_mount__root(m), "/sys.slice/c1");
	}
	cgroup_mount__free(m);
}

TEST(resolve_names)
{
	struct cgroup_mount *m = cgroup_mount__parse(hybrid);
	char p[PATH_MAX];
	char longname[PATH_MAX + 10];

	if (!m) {
		CHECK(m != NULL);
		return;
	}
	CHECK_EQ(cgroup_mount__resolve(m, "a/b", p, sizeof(p)), 0);
	CHECK_STR(p, "/sys/fs/cgroup/unified/a/b");
	CHECK_EQ(cgroup_mount__resolve(m, "/a/b/", p, sizeof(p)), 0);	/* as perf's -G */
	CHECK_STR(p, "/sys/fs/cgroup/unified/a/b");
	CHECK_EQ(cgroup_mount__resolve(m, "/sys/fs/cgroup/unified/a", p, sizeof(p)), 0);
	CHECK_STR(p, "/sys/fs/cgroup/unified/a");
	CHECK_EQ(cgroup_mount__resolve(m, "/sys/fs/cgroup/unified", p, sizeof(p)), 0);
	CHECK_STR(p, "/sys/fs/cgroup/unified");
	CHECK_EQ(cgroup_mount__resolve(m, "/", p, sizeof(p)), 0);
	CHECK_STR(p, "/sys/fs/cgroup/unified");
	/* not under the mount: relative to it */
	CHECK_EQ(cgroup_mount__resolve(m, "/sys/fs/cgroup/unifiedx", p, sizeof(p)), 0);
	CHECK_STR(p, "/sys/fs/cgroup/unified/sys/fs/cgroup/unifiedx");
	CHECK_EQ(cgroup_mount__resolve(m, "a/../../etc", p, sizeof(p)), -EINVAL);
	CHECK_EQ(cgroup_mount__resolve(m, "..", p, sizeof(p)), -EINVAL);
	CHECK_EQ(cgroup_mount__resolve(m, "./a", p, sizeof(p)), -EINVAL);
	CHECK_EQ(cgroup_mount__resolve(m, "a..b/.c", p, sizeof(p)), 0);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	CHECK_EQ(cgroup_mount__resolve(m, longname, p, sizeof(p)), -ENAMETOOLONG);
	cgroup_mount__free(m);
}

/* This machine's hierarchy, read only: the root first with the id of its
 * directory, paths that start with "/", every record well formed. */
TEST(synthesize_this_machine)
{
	struct cgroup_mount *m = cgroup_mount__find();
	struct pbuf b = { 0 };
	__u64 root_id = 0, nr = 0;
	size_t off = 0;
	int fd;

	if (!m) {
		printf("# no cgroup2 mount here: synthesis not tried\n");
		return;
	}
	fd = open(cgroup_mount__dir(m), O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK_EQ(cgroup_id(fd, &root_id), 0);
	close(fd);
	CHECK_EQ(cgroup_mount__synthesize(m, &b, PERF_SAMPLE_TID | PERF_SAMPLE_TIME), 0);
	while (off + 8 <= b.len) {
		const struct perf_event_header *h = (const void *)(b.data + off);
		const char *path = (const char *)(h + 1) + 8;
		__u64 id;

		CHECK_EQ(h->type, PERF_RECORD_CGROUP);
		CHECK(h->size % 8 == 0 && h->size >= 8 + 8 + 8 + 16 && off + h->size <= b.len);
		if (h->size < 40 || off + h->size > b.len)
			break;
		memcpy(&id, h + 1, 8);
		CHECK(memchr(path, 0, h->size - 16 - 16) != NULL);
		CHECK(path[0] == '/');
		if (!nr) {
			CHECK_STR(path, cgroup_mount__root(m));
			CHECK_EQ(id, root_id);
		}
		nr++;
		off += h->size;
	}
	CHECK(nr >= 1);
	CHECK_EQ(off, b.len);
	printf("# %llu cgroups under %s\n", (unsigned long long)nr, cgroup_mount__dir(m));
	pbuf_free(&b);
	cgroup_mount__free(m);
}

int main(void)
{
	RUN(mount_hybrid_and_pure_v2);
	RUN(mount_none_and_junk);
	RUN(mount_prefers_the_whole_hierarchy);
	RUN(resolve_names);
	RUN(synthesize_this_machine);
	return HARNESS_DONE();
}
