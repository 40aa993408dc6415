# precord — perf record on eBPF.   make | make test | make demo | make install
#
# Build layout: build/ (or build-san/ with SAN=1) holds vmlinux.h, the BPF
# objects and skeletons, user objects, libprecord.a (everything but main)
# and the precord binary.  Header dependencies are tracked with -MMD -MP.

VERSION   := 0.1.0
SAN       ?= 0
ifeq ($(SAN),1)
BUILD     ?= build-san
else
BUILD     ?= build
endif
OBJ       := $(BUILD)/obj
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
GO        ?= $(shell command -v go 2>/dev/null)
PREFIX    ?= /usr/local
DESTDIR   ?=
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
PKGS      := libbpf libelf libdw zlib libprotobuf-c libcurl libdebuginfod

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -lelf -ldw -lz -lprotobuf-c -lcurl -ldebuginfod)

CFLAGS    ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -MMD -MP -D_GNU_SOURCE \
             -DPRECORD_VERSION='"$(VERSION)"' -Iinclude -Iuser -I$(BUILD) $(PKG_CFLAGS)
LDLIBS    += $(PKG_LIBS) -lpthread
ifeq ($(SAN),1)
override CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=address,undefined
endif
# UAPI headers for BPF objects that do without vmlinux.h (asm/ is per arch)
MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(BUILD) -Wall -Werror \
	      -I/usr/include/$(MULTIARCH)

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(shell find user -name '*.c' ! -path user/main.c | sort)
USER_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(USER_SRCS))
# pprof's profile.proto (Debian's golang-github-google-pprof-dev), compiled
# by protoc-c at build time into $(BUILD)/gen (never committed).
PPROF_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
PROTO_GEN := $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h
USER_OBJS += $(OBJ)/$(BUILD)/gen/profile.pb-c.o
LIB       := $(BUILD)/libprecord.a
BIN       := $(BUILD)/precord
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
REPLAYS   := $(patsubst tests/fuzz/fuzz_%.c,$(BUILD)/fuzz/replay_%,$(FUZZ_SRCS))
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tests/workloads/*.c))

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all deps test unit unit-build bats demo bench fuzz install clean check-kconfig workloads
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BIN) workloads

deps:
	$(Q)bash scripts/deps.sh

$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

# bpftool gen object links the object and drops its DWARF (BTF stays):
# a smaller skeleton, embedded in precord, loads faster.
$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MT $@ -c $< -o $(@:.bpf.o=.tmp.bpf.o)
	$(Q)$(BPFTOOL) gen object $@ $(@:.bpf.o=.tmp.bpf.o)

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(OBJ)/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(PROTO_GEN) &: $(PPROF_PROTO)
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(BUILD)/gen
	$(Q)protoc-c --proto_path=$(dir $<) --c_out=$(BUILD)/gen $<

$(OBJ)/user/report/pprof.o: $(BUILD)/gen/profile.pb-c.h

$(LIB): $(USER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(OBJ)/user/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/fuzz/replay_%: $(OBJ)/tests/fuzz/fuzz_%.o $(OBJ)/tests/fuzz/replay_main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The unwind-table fixture (tests/unit/test_cfi_table.c): hand-written
# CFI, as .eh_frame and as .debug_frame only; small pages keep the files
# (fuzz seeds too) near 2 KB.
CFI_FIXTURES := $(BUILD)/fixtures/cfi_fixture.so $(BUILD)/fixtures/cfi_fixture_debug.so \
		$(BUILD)/fixtures/cfi_fixture_link.so

$(BUILD)/fixtures/cfi_fixture.so: tests/unit/fixtures/cfi_fixture.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc -shared -nostdlib -Wl,--build-id -Wl,-z,max-page-size=64 -Wl,-z,noseparate-code $< -o $@

$(BUILD)/fixtures/cfi_fixture_debug.so: tests/unit/fixtures/cfi_fixture.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc -DDEBUG_FRAME -shared -nostdlib -Wl,--build-id -Wl,-z,max-page-size=64 -Wl,-z,noseparate-code $< -o $@

# with a .gnu_debuglink naming cfi_fixture_debug.so (tests/unit/test_debuginfo.c)
$(BUILD)/fixtures/cfi_fixture_link.so: $(BUILD)/fixtures/cfi_fixture.so $(BUILD)/fixtures/cfi_fixture_debug.so
	$(call msg,OBJCOPY,$@)
	$(Q)cd $(@D) && objcopy --add-gnu-debuglink=cfi_fixture_debug.so cfi_fixture.so $(@F)

$(BUILD)/tests/test_debuginfo: | $(CFI_FIXTURES)
$(BUILD)/tests/test_cfi_table: | $(CFI_FIXTURES)
$(BUILD)/tests/test_table_store: | $(CFI_FIXTURES)
$(BUILD)/tests/test_gopclntab: | $(if $(GO),$(BUILD)/workloads/hogo)
$(BUILD)/tests/test_sparse_elf: | $(CFI_FIXTURES)
$(BUILD)/tests/test_elf_sections: | $(CFI_FIXTURES)

# Test workloads: clang keeps frame setup in small leaf functions (gcc 12
# does not, which loses the leaf's caller in frame-pointer stacks).
$(BUILD)/workloads/%: tests/workloads/%.c
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline -pthread -Wall -Werror $< -o $@ -ldl

# Looks like CPython to precord: its symbols must be in .dynsym.
$(BUILD)/workloads/hostile_py: tests/workloads/hostile_py.c
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -fno-omit-frame-pointer -rdynamic -pthread -Wall -Werror $< -o $@

$(BUILD)/workloads/lib%.so: tests/workloads/lib/lib%.c
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -fPIC -shared -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-Wall -Werror $< -o $@

# --call-graph dwarf's workload and its library: no frame pointers, as
# most packaged code (gcc -O2); every call kept (no sibling calls).
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wall -Werror

$(BUILD)/workloads/libnofp.so: tests/workloads/nofp/libnofp.c
	$(call msg,GCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(NOFP_CFLAGS) -fPIC -shared $< -o $@

$(BUILD)/workloads/nofp: tests/workloads/nofp/nofp.c $(BUILD)/workloads/libnofp.so
	$(call msg,GCC,$@)
	$(Q)gcc $(NOFP_CFLAGS) $< -o $@ -L$(BUILD)/workloads -lnofp -Wl,-rpath,'$$ORIGIN'

# --call-graph ehframe's: C++ throwing in its hot path, a signal handler
# burning CPU; no frame pointers either.
$(BUILD)/workloads/nofp-exc: tests/workloads/nofp/exc.cpp
	$(call msg,G++,$@)
	$(Q)mkdir -p $(@D)
	$(Q)g++ $(NOFP_CFLAGS) $< -o $@

$(BUILD)/workloads/nofp-signal: tests/workloads/nofp/sighandler.c
	$(call msg,GCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(NOFP_CFLAGS) $< -o $@

# The Go workload (tests/bats/go.bats): stripped as Go services ship
# (-s -w), built with Debian's go from the standard library only: its
# cache and GOPATH in $(BUILD)/go, no module lookups, no network.
$(BUILD)/workloads/hogo: tests/workloads/go/hogo.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D) $(BUILD)/go
	$(Q)cd $(<D) && GOCACHE=$(abspath $(BUILD))/go/cache GOPATH=$(abspath $(BUILD))/go/path \
		GO111MODULE=off GOPROXY=off GOTOOLCHAIN=local GOFLAGS= \
		$(GO) build -ldflags='-s -w' -o $(abspath $@) $(<F)

workloads: $(if $(GO),$(BUILD)/workloads/hogo) $(WORKLOADS) $(patsubst tests/workloads/lib/%.c,$(BUILD)/workloads/%.so,$(wildcard tests/workloads/lib/*.c)) $(BUILD)/workloads/nofp \
	   $(BUILD)/workloads/nofp-exc $(BUILD)/workloads/nofp-signal

unit-build: $(UNIT_BINS) $(REPLAYS) $(CFI_FIXTURES)

# `make unit`: build and run the unit tests and the fuzz corpora replays of
# $(BUILD) (SAN=1: under ASan/UBSan), without root or installing anything.
unit: unit-build
	$(Q)bash scripts/run-tests.sh --unit $(BUILD)

# `make test`: install what is missing, build, then every test (unit tests
# plain and under ASan/UBSan, fuzz corpora replayed, bats end to end).
# The last line is "N passed, N failed, N skipped".
# `make test BATS="tests/bats/x.bats ..."`: build (the unit programs too:
# jit.bats runs test_mlpd), then those end-to-end files only (the same
# closing line).
test: deps
ifdef BATS
	$(Q)$(MAKE) --no-print-directory all unit-build
	$(Q)bash scripts/run-tests.sh --bats $(BATS)
else
	$(Q)$(MAKE) --no-print-directory all unit-build
	$(Q)$(MAKE) --no-print-directory SAN=1 unit-build
	$(Q)bash scripts/run-tests.sh
endif

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash scripts/bench/run.sh

fuzz: deps
	$(Q)bash scripts/fuzz.sh

check-kconfig: $(BIN)
	$(Q)$(BIN) check

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/precord
	install -m 0644 man/precord.1 $(DESTDIR)$(PREFIX)/share/man/man1/precord.1

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
