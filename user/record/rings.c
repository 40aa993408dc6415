// SPDX-License-Identifier: GPL-2.0
#include "record/rings.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "record/bpf_sampler.h"
#include "record/event_set.h"
#include "record/sample_converter.h"
#include "record/tracing.h"
#include "unwind/unwinder.h"

struct rings {
	struct rings_config cfg;
	struct pollfd *pfd;	/* the BPF epoll, tracing, then the side-band rings */
	int nr_pfd;
};

struct rings *rings__new(const struct rings_config *cfg)
{
	struct rings *r = calloc(1, sizeof(*r));

	if (r)
		r->cfg = *cfg;
	return r;
}

void rings__free(struct rings *r)
{
	if (r)
		free(r->pfd);
	free(r);
}

/* What wakes the loop: samples (BPF), traced calls, and side-band rings
 * filling up (a burst of mappings between two rounds lost records). */
static int poll_set(struct rings *r)
{
	int nsb = event_set__sideband_nr(r->cfg.ev);

	if (r->pfd)
		return 0;
	r->pfd = calloc((size_t)nsb + 2, sizeof(*r->pfd));
	if (!r->pfd)
		return -ENOMEM;
	r->pfd[0] = (struct pollfd){ .fd = bpf_sampler__epoll_fd(r->cfg.bpf), .events = POLLIN };
	r->pfd[1] = (struct pollfd){ .fd = tracing__fd(r->cfg.trace), .events = POLLIN };
	for (int i = 0; i < nsb; i++)
		r->pfd[2 + i] = (struct pollfd){ .fd = event_set__sideband_fd(r->cfg.ev, i),
						 .events = POLLIN };
	r->nr_pfd = nsb + 2;
	return 0;
}

int rings__wait(struct rings *r, int timeout_ms)
{
	int err = poll_set(r);

	if (err)
		return err;
	/* a negative fd (no tracing) is skipped by poll */
	if (poll(r->pfd, (nfds_t)r->nr_pfd, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/*
 * A side-band record to the converter, and the BPF ring emptied into
 * memory after it: with -a on a loaded machine, the mappings of new
 * processes (their files opened, their build-ids read) kept the loop away
 * from the ring for up to 0.6 s, as long as dwarf samples take to fill
 * it.  Their samples are still converted after the side-band, as before.
 */
static int sideband_record(void *ctx, const struct perf_event_header *h)
{
	struct rings *r = ctx;
	int err = sample_converter__sideband_record(r->cfg.conv, h);

	return err < 0 ? err : bpf_sampler__pump(r->cfg.bpf);
}

int rings__drain(struct rings *r, struct perfdata_writer *w)
{
	int err = event_set__drain_sideband(r->cfg.ev, sideband_record, r);

	if (err >= 0)
		unwinder__flush(r->cfg.unwind);
	if (err >= 0)
		err = bpf_sampler__consume(r->cfg.bpf);
	if (err >= 0)
		err = tracing__consume(r->cfg.trace, w);
	return err < 0 ? err : 0;
}

int rings__report_drops(struct rings *r, __u64 time)
{
	return sample_converter__report_lost(r->cfg.conv, bpf_sampler__drops(r->cfg.bpf) +
					     tracing__lost(r->cfg.trace), time);
}
