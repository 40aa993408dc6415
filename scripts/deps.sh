#!/usr/bin/env bash
# Install what precord needs to build, test and demo, from Debian's packages.
# Idempotent: packages already present are not touched, and apt is not even
# consulted when nothing is missing.
set -eu

pkgs="make gcc clang llvm pkg-config libbpf-dev libelf-dev zlib1g-dev bpftool
      bats linux-perf binutils procps util-linux python3
      libdw-dev libcurl4-openssl-dev libprotobuf-c-dev protobuf-c-compiler
      golang-github-google-pprof-dev libdebuginfod-dev"
# Used by the JIT, tracing and benchmark tests (hotspot: its perfparser is
# a second reader that tests/tools/perf-check consults).
extra="nodejs mono-runtime mono-mcs mono-utils libmono-profiler llvm hyperfine bpftrace hotspot
       g++ clickhouse-server clickhouse-client golang-go chromium libxml2-utils curl
       debuginfod libc6-dbg"

want="$pkgs"
[ "${PRECORD_DEPS_MINIMAL:-0}" = 1 ] || want="$want $extra"

missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
        missing="$missing $p"
    fi
done
# node may come from outside Debian's package (it is on PATH already).
if command -v node >/dev/null 2>&1; then missing=$(echo "$missing" | sed 's/ nodejs//'); fi
[ -z "${missing// /}" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "deps.sh: missing packages:$missing; run as root (sudo make deps) to install them" >&2
    exit 1
fi
echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
