/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf events of a recording: the event the options name, the CPUs,
 * the sampling events (or, when nothing samples, dummy events) with their
 * side-band rings, the attr the file says they have, and the side-band
 * read in time order.
 */
#ifndef PRECORD_RECORD_EVENT_SET_H
#define PRECORD_RECORD_EVENT_SET_H

#include <linux/perf_event.h>
#include <linux/types.h>

#include "opts.h"
#include "record/events.h"

struct event_set;
struct bpf_program;
struct perfdata_writer;

/* The event to sample (o->event, cpu-clock by default) and the CPUs (-C,
 * else every online one): says what is wrong, NULL + errno. */
struct event_set *event_set__new(const struct prec_opts *o);
void event_set__free(struct event_set *es);		/* NULL-safe */

/* Open the sampling events, prog run on their overflow, and map their
 * rings; when nothing samples, dummy events for the side-band.  Says why
 * it failed. */
int event_set__open(struct event_set *es, struct bpf_program *prog);
/* The events' attr, with extra_bits in its sample_type, as the file's
 * first event.  0 or -errno. */
int event_set__add_evsel(struct event_set *es, struct perfdata_writer *w, __u64 extra_bits);
/* The layout of the samples as the file's attr says (0: no samples). */
__u64 event_set__sample_type(const struct event_set *es);
/* The layout of every record's trailer (the side-band's sample_type). */
__u64 event_set__id_type(const struct event_set *es);
/* The sampling event's id per CPU number (0: none there), nr entries. */
const __u64 *event_set__cpu_ids(const struct event_set *es, int *nr);
/* The id LOST_SAMPLES records carry: the first sampling event's, or 0. */
__u64 event_set__lost_id(const struct event_set *es);

/*
 * Every side-band record available, to fn in time order: the rings are
 * per CPU, and a FORK on one CPU with the child's exec MMAP2s on another
 * would otherwise arrive child first.  0 or fn's -errno.
 */
/* The side-band rings and their descriptors (i < nr), for poll: each is
 * readable once a wakeup's worth is in its ring. */
int event_set__sideband_nr(const struct event_set *es);
int event_set__sideband_fd(const struct event_set *es, int i);
int event_set__drain_sideband(struct event_set *es, sb_record_fn fn, void *ctx);
/* Stop sampling (which ends the side-band); what the rings hold stays
 * readable until event_set__free. */
void event_set__stop(struct event_set *es);

#endif
