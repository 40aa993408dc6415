#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""perf.data layout: the structural half of tests/tools/perf-check, and
the maker of broken copies for its tests (tests/bats/checker.bats).

  perfdata.py layout FILE
      Reads the file's own structure, independently of perf: file header,
      attrs, the record framing of the data section and the feature table.
      Prints "features: NAME,NAME,..." (the bits set), then one
      "PROBLEM layout: ..." line per fault, or "ok layout (...)".  Exit 1
      on a fault.  It looks for the faults perf 6.1 swallows without a word
      (docs/testing.md lists them): a feature section of size 0, which
      perf reads from the next section's bytes; a feature or data section
      past the end of the file; attr sizes perf rejects or misreads; record
      sizes that break the sample_id_all trailer; types perf does not know.

  perfdata.py break KIND IN OUT [ARG]
      Writes a copy of IN with one fault; KIND is one of
        truncate        cut the file in the middle of the data section
        attr-size       attr.size of the first attr = ARG (default 136:
                        perf 6.1 says "unsupported ABI")
        unknown-record  the type of the first SAMPLE record = ARG (default
                        30, a kernel record type perf 6.1 does not know)
        drop-feature    remove feature ARG (a name, e.g. BUILD_ID) cleanly:
                        its bit and its table entry; the file stays valid
        empty-feature   feature ARG keeps its bit but its size becomes 0
        data-size-0     data.size = 0, what a killed perf record leaves
        cgroup-path     the path of the first PERF_RECORD_CGROUP loses its
                        terminating NUL (filled with 'A' up to the trailer)
        sample-bit      every attr's sample_type gets bit ARG (default 21,
                        PERF_SAMPLE_CGROUP), which the samples do not carry

Native endian only (precord writes native-endian files).
"""
import struct
import sys

HEADER_SIZE = 104
MAGIC = b"PERFILE2"
# perf 6.1's feature ids (util/header.h), bit N of adds_features
FEATURES = ["RESERVED", "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION",
            "ARCH", "NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC",
            "CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC",
            "AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID",
            "DIR_FORMAT", "BPF_PROG_INFO", "BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS",
            "CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS"]
EMPTY_OK = {"BRANCH_STACK", "STAT"}		# the only features whose payload is empty
KNOWN_TYPES = set(range(1, 22)) | set(range(64, 83))
RECORD_SAMPLE, RECORD_CGROUP, RECORD_AUXTRACE, RECORD_COMPRESSED = 9, 19, 71, 81
SAMPLE_CGROUP = 1 << 21
# sample_type bits with a field in the sample_id_all trailer: TID TIME ID
# STREAM_ID CPU IDENTIFIER
ID_ALL_BITS = (1 << 1) | (1 << 2) | (1 << 6) | (1 << 9) | (1 << 7) | (1 << 16)


class Layout:
    """The parsed skeleton of a perf.data file."""

    def __init__(self, data):
        self.data = data
        self.problems = []
        if len(data) < HEADER_SIZE:
            raise ValueError(f"{len(data)} bytes, shorter than the {HEADER_SIZE}-byte file header")
        (magic, self.hsize, self.attr_size, self.attrs_off, self.attrs_size,
         self.data_off, self.data_size) = struct.unpack_from("=8sQQQQQQ", data, 0)
        if magic != MAGIC:
            raise ValueError(f"magic {magic!r} is not {MAGIC!r} (native little-endian)")
        words = struct.unpack_from("=4Q", data, 72)
        self.bits = [b for b in range(256) if words[b // 64] >> (b % 64) & 1]
        self.table_off = self.data_off + self.data_size

    def problem(self, text):
        self.problems.append(text)

    def within(self, off, size):
        return off + size <= len(self.data)

    def attrs(self):
        """(offset, attr.size) of each attr entry, walked as perf walks them."""
        out = []
        if self.attr_size == 0:
            return out
        off, end = self.attrs_off, self.attrs_off + self.attrs_size
        while off + 8 <= end and self.within(off, 8):
            size = struct.unpack_from("=I", self.data, off + 4)[0] or 64
            out.append((off, size))
            off += size + 16
        return out

    def trailer_size(self):
        """Bytes of the sample_id_all trailer, as the first attr says."""
        at = self.attrs()
        if not at or not self.within(at[0][0] + 48, 0):
            return 0
        sample_type, _, flags = struct.unpack_from("=QQQ", self.data, at[0][0] + 24)
        if not flags >> 18 & 1:
            return 0
        return 8 * bin(sample_type & ID_ALL_BITS).count("1")

    def cgroup_path(self, off, size):
        """(start, end) of a CGROUP record's path field, before the trailer."""
        return off + 16, off + size - self.trailer_size()

    def features(self):
        """[(bit, name, offset, size)] from the table after the data."""
        out = []
        for i, bit in enumerate(self.bits):
            at = self.table_off + 16 * i
            if not self.within(at, 16):
                break
            off, size = struct.unpack_from("=QQ", self.data, at)
            name = FEATURES[bit] if bit < len(FEATURES) else f"bit{bit}"
            out.append((bit, name, off, size, at))
        return out

    def records(self):
        """Walk the data section: yields (offset, type, misc, size)."""
        off, end = self.data_off, min(self.data_off + self.data_size, len(self.data))
        while off + 8 <= end:
            rtype, misc, size = struct.unpack_from("=IHH", self.data, off)
            yield off, rtype, misc, size
            if size < 8:
                return
            if rtype == RECORD_AUXTRACE and off + 16 <= end:
                size += struct.unpack_from("=Q", self.data, off + 8)[0]
            off += size


# sample_type bits in perf's sample order (include/uapi/linux/perf_event.h),
# with the bytes of a fixed field; None: a variable field, sized below.
SAMPLE_FIELDS = [(16, 8), (0, 8), (1, 8), (2, 8), (3, 8), (6, 8), (9, 8), (7, 8), (8, 8),
                 (4, None), (5, None), (10, None), (11, None), (12, None), (13, None),
                 (14, 8), (15, 8), (17, 8), (18, None), (19, 8), (21, 8), (22, 8), (23, 8),
                 (20, None)]


def sample_size(data, off, size, st, attr):
    """The bytes a SAMPLE at off must have by its attr's sample_type
    (evsel__parse_sample's walk), or None where this reader does not follow
    (READ, BRANCH_STACK, REGS_INTR, AUX)."""
    at = off + 8
    end = off + size
    for bit, n in SAMPLE_FIELDS:
        if not st >> bit & 1:
            continue
        if n is not None:
            at += n
        elif bit == 5:				# CALLCHAIN: u64 nr, nr u64s
            if at + 8 > end:
                return at + 8 - off
            at += 8 + 8 * struct.unpack_from("=Q", data, at)[0]
        elif bit == 10:				# RAW: u32 size, size bytes
            if at + 4 > end:
                return at + 4 - off
            at += 4 + struct.unpack_from("=I", data, at)[0]
        elif bit == 12:				# REGS_USER: u64 abi, regs if abi
            if at + 8 > end:
                return at + 8 - off
            abi = struct.unpack_from("=Q", data, at)[0]
            regs = struct.unpack_from("=Q", data, attr + 80)[0]
            at += 8 + (8 * bin(regs).count("1") if abi else 0)
        elif bit == 13:				# STACK_USER: u64 size, data, dyn_size
            if at + 8 > end:
                return at + 8 - off
            n = struct.unpack_from("=Q", data, at)[0]
            at += 8 + (n + 8 if n else 0)
        else:
            return None
    return at - off


def check_samples(lay):
    """Every SAMPLE has the size its attr's sample_type gives it: a field
    the samples lack (or an extra one) perf 6.1 reads silently from the
    next record (its CGROUP and several others have no bounds check)."""
    attrs = [(off, struct.unpack_from("=Q", lay.data, off + 24)[0]) for off, size in lay.attrs()
             if lay.within(off, size + 16)]
    if not attrs:
        return
    by_id = {}
    for off, st in attrs:
        size = struct.unpack_from("=I", lay.data, off + 4)[0] or 64
        ids_off, ids_size = struct.unpack_from("=QQ", lay.data, off + size)
        if ids_size % 8 == 0 and lay.within(ids_off, ids_size):
            for i in range(ids_size // 8):
                by_id[struct.unpack_from("=Q", lay.data, ids_off + 8 * i)[0]] = (off, st)
    bad = 0
    end = lay.data_off + lay.data_size
    for off, rtype, misc, size in lay.records():
        if size < 8 or off + size > end:
            return				# the framing check says why
        if rtype != RECORD_SAMPLE:
            continue
        attr, st = attrs[0]
        if len(attrs) > 1 and st >> 16 & 1 and size >= 16:	# IDENTIFIER first
            attr, st = by_id.get(struct.unpack_from("=Q", lay.data, off + 8)[0], attrs[0])
        want = sample_size(lay.data, off, size, st, attr)
        if want is not None and want != size:
            lay.problem(f"record at {off} (SAMPLE, size {size}): sample_type 0x{st:x} makes it {want} bytes")
            bad += 1
            if bad >= 3:
                return


def check(path):
    data = open(path, "rb").read()
    try:
        lay = Layout(data)
    except ValueError as e:
        print(f"PROBLEM layout: {e}")
        return 1
    if lay.hsize != HEADER_SIZE:
        lay.problem(f"header size {lay.hsize}, perf writes {HEADER_SIZE}")
    if lay.attr_size == 0:
        lay.problem("attr_size 0: perf cannot read the attrs")
    elif lay.attrs_size % lay.attr_size:
        lay.problem(f"attrs section of {lay.attrs_size} bytes is not a multiple of attr_size {lay.attr_size}")
    if not lay.within(lay.attrs_off, lay.attrs_size):
        lay.problem(f"attrs section [{lay.attrs_off}, +{lay.attrs_size}) is past the end of the file ({len(data)})")
    for off, size in lay.attrs():
        if size > 128 or size < 64 or size % 8:
            lay.problem(f"attr at {off}: attr.size {size}; perf 6.1 reads 64..128 in steps of 8")
            break
        if size + 16 != lay.attr_size:
            lay.problem(f"attr at {off}: attr.size {size} + 16 != the header's attr_size {lay.attr_size}")
        if not lay.within(off, size + 16):
            lay.problem(f"attr at {off}: past the end of the file")
            break
        sample_type, read_format, flags = struct.unpack_from("=QQQ", data, off + 24)
        if sample_type >> 25:
            lay.problem(f"attr at {off}: sample_type 0x{sample_type:x} has bits perf 6.1 does not know")
        if read_format >> 5:
            lay.problem(f"attr at {off}: read_format 0x{read_format:x} has bits perf 6.1 does not know")
        if flags >> 38:
            lay.problem(f"attr at {off}: reserved flag bits set (0x{flags:x})")
        ids_off, ids_size = struct.unpack_from("=QQ", data, off + size)
        if ids_size % 8 or not lay.within(ids_off, ids_size):
            lay.problem(f"attr at {off}: ids [{ids_off}, +{ids_size}) not u64s inside the file")
    if lay.data_size == 0:
        lay.problem("data.size is 0: perf 6.1 cannot read the events (a recording that was never finished)")
    if not lay.within(lay.data_off, lay.data_size):
        lay.problem(f"data section [{lay.data_off}, +{lay.data_size}) is past the end of the file ({len(data)} bytes)")
    nrec = 0
    end = lay.data_off + lay.data_size
    for off, rtype, misc, size in lay.records():
        nrec += 1
        if size < 8:
            lay.problem(f"record at {off}: size {size}, smaller than its header")
            break
        if rtype not in KNOWN_TYPES:
            lay.problem(f"record at {off}: type {rtype}, unknown to perf 6.1")
        elif size % 8 and rtype != RECORD_COMPRESSED:
            lay.problem(f"record at {off} (type {rtype}): size {size} is not a multiple of 8")
        if off + size > end:
            lay.problem(f"record at {off} (type {rtype}, size {size}) runs past the data section")
        elif rtype == RECORD_CGROUP:
            # u64 id, then the path: perf prints it with %s and keys
            # perf report --sort cgroup on it, so it must end inside
            start, stop = lay.cgroup_path(off, size)
            if stop <= start or 0 not in data[start:stop]:
                lay.problem(f"record at {off} (CGROUP, size {size}): the path has no NUL before the record's end")
        if len(lay.problems) > 5:
            break
    if lay.within(lay.data_off, lay.data_size) and len(lay.problems) <= 5:
        check_samples(lay)
    if lay.data_size and lay.within(lay.data_off, lay.data_size):
        feats = lay.features()
        if len(feats) < len(lay.bits):
            lay.problem(f"feature table at {lay.table_off} for {len(lay.bits)} features is past the end of the file")
        for bit, name, off, size, at in feats:
            if bit >= len(FEATURES):
                lay.problem(f"feature bit {bit} set: perf 6.1 knows bits 1..{len(FEATURES) - 1}")
            elif bit == 0:
                lay.problem("feature bit 0 (reserved) set")
            if size == 0 and name not in EMPTY_OK:
                lay.problem(f"feature {name}: size 0 (perf reads the next section's bytes in its place)")
            if not lay.within(off, size):
                lay.problem(f"feature {name}: [{off}, +{size}) is past the end of the file ({len(data)} bytes)")
    print("features: " + ",".join(FEATURES[b] if b < len(FEATURES) else f"bit{b}" for b in lay.bits))
    for p in lay.problems:
        print(f"PROBLEM layout: {p}")
    if not lay.problems:
        print(f"ok      layout ({len(lay.attrs())} attrs, {nrec} records, {len(lay.bits)} features)")
    return 1 if lay.problems else 0


def feature_index(lay, name):
    for i, (bit, fname, off, size, at) in enumerate(lay.features()):
        if fname == name:
            return i, bit, at
    raise SystemExit(f"perfdata.py: the file has no feature {name}")


def brk(kind, src, dst, arg):
    buf = bytearray(open(src, "rb").read())
    lay = Layout(bytes(buf))
    if kind == "truncate":
        buf = buf[:lay.data_off + lay.data_size // 2]
    elif kind == "attr-size":
        off = lay.attrs()[0][0]
        struct.pack_into("=I", buf, off + 4, int(arg or 136))
    elif kind == "unknown-record":
        off = next((o for o, t, m, s in lay.records() if t == RECORD_SAMPLE), None)
        if off is None:
            raise SystemExit("perfdata.py: no SAMPLE record to retype")
        struct.pack_into("=I", buf, off, int(arg or 30))
    elif kind == "drop-feature":
        i, bit, at = feature_index(lay, arg)
        # the later entries move up one place; payload offsets are absolute,
        # so the payloads stay where they are and 16 bytes of slack remain
        end = lay.table_off + 16 * len(lay.bits)
        buf[at:end] = buf[at + 16:end] + bytes(16)
        word = struct.unpack_from("=Q", buf, 72 + 8 * (bit // 64))[0] & ~(1 << (bit % 64))
        struct.pack_into("=Q", buf, 72 + 8 * (bit // 64), word)
    elif kind == "empty-feature":
        i, bit, at = feature_index(lay, arg)
        struct.pack_into("=Q", buf, at + 8, 0)
    elif kind == "data-size-0":
        struct.pack_into("=Q", buf, 48, 0)
    elif kind == "cgroup-path":
        rec = next(((o, s) for o, t, m, s in lay.records() if t == RECORD_CGROUP), None)
        if rec is None:
            raise SystemExit("perfdata.py: no CGROUP record to break")
        start, stop = lay.cgroup_path(*rec)
        buf[start:stop] = b"A" * (stop - start)
    elif kind == "sample-bit":
        for off, size in lay.attrs():
            st = struct.unpack_from("=Q", buf, off + 24)[0] | 1 << int(arg or 21)
            struct.pack_into("=Q", buf, off + 24, st)
    else:
        raise SystemExit(f"perfdata.py: unknown kind {kind}")
    open(dst, "wb").write(buf)


def main(argv):
    if len(argv) == 3 and argv[1] == "layout":
        return check(argv[2])
    if len(argv) in (5, 6) and argv[1] == "break":
        brk(argv[2], argv[3], argv[4], argv[5] if len(argv) == 6 else None)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
