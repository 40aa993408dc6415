// SPDX-License-Identifier: GPL-2.0
#include "record/events.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "util/log.h"

int sys_perf_event_open(struct perf_event_attr *attr, int pid, int cpu, int group,
			unsigned long flags)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

static int read_online(char *buf, size_t n)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)n, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Expand "0,2-3" into a 0/1 array of max entries. */
static int expand_list(const char *list, char *set, int max)
{
	const char *p = list;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -EINVAL;
			p = end;
		}
		if (b >= max)
			return -ERANGE;
		for (long i = a; i <= b; i++)
			set[i] = 1;
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}

int cpu_set_list__parse(struct cpu_set_list *cl, const char *list)
{
	char online[4096];
	int max = libbpf_num_possible_cpus(), err, i;
	char *on, *want;

	memset(cl, 0, sizeof(*cl));
	if (max <= 0)
		return max ? max : -EINVAL;
	err = read_online(online, sizeof(online));
	if (err)
		return err;
	on = calloc((size_t)max, 2);
	if (!on)
		return -ENOMEM;
	want = on + max;
	err = expand_list(online, on, max);
	if (!err && list)
		err = expand_list(list, want, max);
	else if (!err)
		memcpy(want, on, (size_t)max);
	cl->cpus = calloc((size_t)max, sizeof(int));
	if (!err && !cl->cpus)
		err = -ENOMEM;
	for (i = 0; !err && i < max; i++) {
		if (want[i] && !on[i]) {
			pr_err("CPU %d in -C %s is not online", i, list);
			err = -ENODEV;
		} else if (want[i]) {
			cl->cpus[cl->nr++] = i;
		}
	}
	free(on);
	if (!err && !cl->nr)
		err = -ENODEV;
	cl->max_cpu = max;
	if (err)
		cpu_set_list__free(cl);
	return err;
}

void cpu_set_list__free(struct cpu_set_list *cl)
{
	free(cl->cpus);
	cl->cpus = NULL;
	cl->nr = 0;
}

int sample_events__open(struct sample_events *se, const struct perf_event_attr *attr,
			const struct cpu_set_list *cl, struct bpf_program *prog)
{
	int i, err = 0;

	memset(se, 0, sizeof(*se));
	se->attr = *attr;
	se->fds = calloc((size_t)cl->nr, sizeof(int));
	se->links = calloc((size_t)cl->nr, sizeof(*se->links));
	se->ids = calloc((size_t)cl->nr, sizeof(__u64));
	if (!se->fds || !se->links || !se->ids)
		return -ENOMEM;
	for (i = 0; i < cl->nr; i++) {
		struct perf_event_attr a = *attr;
		int fd;

		/*
		 * The program takes the stacks (bpf_get_stack) and, in dwarf
		 * mode, the user registers and stack itself.  With these
		 * fields on the event, the kernel (6.10 on) prepares them for
		 * every overflow before the program runs, samples of tasks
		 * that are no target included: the kernel would unwind for
		 * nothing, and dwarf mode measured 1.3-1.6 points more
		 * workload slowdown than perf's at 999 Hz with REGS_USER and
		 * STACK_USER left on (within noise of perf's without).  The
		 * program also reads the cgroup id (--all-cgroups).
		 */
		a.sample_type &= ~(__u64)(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
					  PERF_SAMPLE_STACK_USER | PERF_SAMPLE_CGROUP);
		a.sample_regs_user = 0;
		a.sample_stack_user = 0;
		fd = sys_perf_event_open(&a, -1, cl->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = -errno;
			break;
		}
		se->fds[se->nr++] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &se->ids[i])) {
			err = -errno;
			break;
		}
		se->links[i] = bpf_program__attach_perf_event(prog, fd);
		if (!se->links[i]) {
			err = -errno;
			pr_err("cannot attach the sampling program to CPU %d: %s",
			       cl->cpus[i], strerror(errno));
			break;
		}
	}
	return err;
}

void sample_events__stop(struct sample_events *se)
{
	int i;

	for (i = 0; i < se->nr; i++) {
		/* libbpf's perf link disables the event and closes its fd */
		if (se->links && se->links[i])
			bpf_link__destroy(se->links[i]);
		else
			close(se->fds[i]);
	}
	se->nr = 0;
}

void sample_events__close(struct sample_events *se)
{
	sample_events__stop(se);
	free(se->fds);
	free(se->links);
	free(se->ids);
	memset(se, 0, sizeof(*se));
}

/* Map r->fd's ring: pages of data after the metadata page. */
static int ring_map(struct sb_ring *r, unsigned int pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)(pages + 1) * (size_t)psz;

	r->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->data_size = (size_t)pages * (size_t)psz;
	r->tmp = malloc(65536);
	return r->tmp ? 0 : -ENOMEM;
}

int sideband__open(struct sideband *sb, const struct perf_event_attr *attr,
		   const struct cpu_set_list *cl, unsigned int pages)
{
	int i, err;

	memset(sb, 0, sizeof(*sb));
	sb->attr = *attr;
	sb->own_fds = true;
	sb->rings = calloc((size_t)cl->nr, sizeof(*sb->rings));
	if (!sb->rings)
		return -ENOMEM;
	for (i = 0; i < cl->nr; i++) {
		struct perf_event_attr a = *attr;
		struct sb_ring *r = &sb->rings[i];

		r->fd = sys_perf_event_open(&a, -1, cl->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (r->fd < 0)
			return -errno;
		sb->nr++;
		if (ioctl(r->fd, PERF_EVENT_IOC_ID, &r->id))
			return -errno;
		err = ring_map(r, pages);
		if (err)
			return err;
	}
	return 0;
}

int sideband__map(struct sideband *sb, const struct sample_events *se, unsigned int pages)
{
	int i, err;

	memset(sb, 0, sizeof(*sb));
	sb->attr = se->attr;
	sb->rings = calloc((size_t)se->nr, sizeof(*sb->rings));
	if (!sb->rings)
		return -ENOMEM;
	for (i = 0; i < se->nr; i++) {
		struct sb_ring *r = &sb->rings[i];

		r->fd = se->fds[i];
		r->id = se->ids[i];
		sb->nr++;
		err = ring_map(r, pages);
		if (err)
			return err;
	}
	return 0;
}

int sideband__enable(struct sideband *sb)
{
	for (int i = 0; i < sb->nr; i++)
		if (ioctl(sb->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	return 0;
}

static int ring_drain(struct sb_ring *r, sb_record_fn fn, void *ctx)
{
	struct perf_event_mmap_page *mp = r->base;
	__u8 *data = (__u8 *)r->base + mp->data_offset;
	__u64 head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = mp->data_tail;
	int n = 0, err = 0;

	while (tail < head) {
		size_t off = (size_t)(tail % r->data_size);
		struct perf_event_header h;
		const struct perf_event_header *rec;

		if (off + sizeof(h) <= r->data_size) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			size_t first = r->data_size - off;

			memcpy(&h, data + off, first);
			memcpy((__u8 *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || tail + h.size > head) {
			pr_warn("corrupt side-band record (size %u); skipping the rest of this ring",
				h.size);
			tail = head;
			break;
		}
		if (off + h.size <= r->data_size) {
			rec = (const void *)(data + off);
		} else {
			size_t first = r->data_size - off;

			memcpy(r->tmp, data + off, first);
			memcpy(r->tmp + first, data, h.size - first);
			rec = (const void *)r->tmp;
		}
		err = fn(ctx, rec);
		tail += h.size;
		n++;
		if (err)
			break;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return err ? err : n;
}

int sideband__drain(struct sideband *sb, sb_record_fn fn, void *ctx)
{
	int total = 0;

	for (int i = 0; i < sb->nr; i++) {
		int n = ring_drain(&sb->rings[i], fn, ctx);

		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

void sideband__close(struct sideband *sb)
{
	long psz = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < sb->nr; i++) {
		struct sb_ring *r = &sb->rings[i];

		if (r->base)
			munmap(r->base, r->data_size + (size_t)psz);
		free(r->tmp);
		if (sb->own_fds && r->fd >= 0)
			close(r->fd);
	}
	free(sb->rings);
	memset(sb, 0, sizeof(*sb));
}
