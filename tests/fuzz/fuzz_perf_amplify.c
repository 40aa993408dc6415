// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the symbolizer's process table against amplification
 * (issue 18, finding 5: a 1 MB file of FORKs and MMAPs needed 1.27 GB).
 * The input is the data section of a perf.data file: records, each parsed
 * by the reader (perf_reader__parse, with the attr of a file written once
 * by precord's writer: cpu-clock, precord's sample_type, sample_id_all)
 * and fed to a new symbolizer, every sample resolved.  Records are taken
 * in input order (fuzz_perf_reader covers the header, the features and
 * the time ordering; this one skips the file I/O to run fast).  What the
 * process table holds (symbolizer__stats) must stay within a bound
 * proportional to the input: 64 bytes per input byte and per level of a
 * balanced tree (a FORK shares, a change copies one path), plus 4 KiB.
 *
 * Seeds (tests/fuzz/corpus/perf_amplify), written by
 * `build/tests/test_symbolizer --write-corpus tests/fuzz/corpus/perf_amplify`:
 * a process with mappings, then forks (and exits) with a mapping in each
 * child.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfdata/record.h"
#include "perfdata/writer.h"
#include "precord/perf_file.h"
#include "report/perf_reader.h"
#include "report/symbolizer.h"
#include "util/buf.h"
#include "util/log.h"

static struct perf_reader *reader;
static struct sym_cache *cache;

/* A perf.data without records: its attr parses the input's records. */
static struct perf_reader *template_reader(void)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_type = PREC_SAMPLE_BASE_BITS, .sample_id_all = 1,
				     .sample_period = 1000 };
	__u64 ids[1] = { 7 };
	struct perfdata_sample_id sid = { .pid = 1, .tid = 1, .time = 1, .id = 7 };
	struct perfdata_env env = { 0 };
	struct pbuf comm = { 0 };
	int fd = memfd_create("template.data", 0);
	struct perfdata_writer *w = fd < 0 ? NULL : perfdata_writer__new(dup(fd));
	char path[64];
	struct perf_reader *r = NULL;

	/* one record queued: finishing an empty queue is UB in perfdata/queue.c
	 * (a null pointer plus 0, clang's UBSan) */
	if (w && perfdata_writer__add_evsel(w, &a, "cpu-clock", ids, 1) >= 0 &&
	    !perfdata_writer__begin(w) &&
	    !perfdata_encode_comm(&comm, PREC_SAMPLE_BASE_BITS, 1, 1, "template", false, &sid) &&
	    !perfdata_writer__queue(w, 1, comm.data, comm.len) && !perfdata_writer__finish(w, &env)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		r = perf_reader__open(path);
	}
	perfdata_writer__free(w);
	pbuf_free(&comm);
	if (fd >= 0)
		close(fd);
	return r;
}

static unsigned int log2_ceil(size_t n)
{
	unsigned int l = 1;

	while (n > 1) {
		n >>= 1;
		l++;
	}
	return l;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static __u64 rec[65536 / 8];
	struct sym_frame frames[16];
	const struct symbolizer_stats *st;
	struct symbolizer *s;
	size_t off = 0;

	log_verbosity = -1;
	if (!reader)
		reader = template_reader();
	if (!cache)
		cache = sym_cache__new("/nonexistent/precord-fuzz-cache");
	if (!reader || !cache)
		abort();
	s = symbolizer__new(cache, reader);
	if (!s)
		return 0;
	while (size - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		struct perf_event_view ev;
		const char *why;

		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > size - off)
			break;		/* the reader ends the data there too */
		memcpy(rec, data + off, h.size);
		off += h.size;
		if (perf_reader__parse(reader, (const void *)rec, &ev, &why))
			continue;
		if (ev.type == PERF_RECORD_SAMPLE)
			symbolizer__frames(s, &ev, frames, 16);
		else if (symbolizer__event(s, &ev) == -E2BIG)
			break;
	}
	st = symbolizer__stats(s);
	if (st->bytes > 4096 + 64ull * size * log2_ceil(size))
		abort();	/* amplified */
	symbolizer__free(s);
	return 0;
}
