# latsim build.  `make` builds ./latsim; `make test` runs the Criterion suite;
SHELL := /bin/bash
# `make bench` prints the speed table (beside a baseline build); `make deps` installs Debian packages.
# Variants: make SANITIZE=address,undefined   make DEBUG=1
CC      ?= cc
PKGS    := gsl sqlite3 inih criterion jansson
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)
CSTD    := -std=c17 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
# HAVE_INLINE: GSL's own inline versions of gsl_rng_uniform and friends (the same code, no call).
CSTD    += -DHAVE_INLINE
WARN    := -Wall -Wextra -Wpedantic
OPT     := -O2 -g
# Release builds are link-time optimised: the engine's small per-event calls
# (evq_now, station_*, the sink) cross files, and inlining them across files
# took about 7 % of the instructions of `make bench` (docs/development.md).
LTO     := -flto=auto
VARIANT := release
ifdef DEBUG
# LATSIM_DEBUG: whole-structure sanity checks (llm.c) at every step of every run.
OPT     := -O0 -g3 -DLATSIM_DEBUG
LTO     :=
VARIANT := debug
endif
ifdef SANITIZE
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SANITIZE) -fno-sanitize-recover=undefined
LTO     :=
VARIANT := san
endif
# make FUZZ=1: the AFL++-instrumented build (afl-cc) behind `make fuzz`.
ifdef FUZZ
CC      := afl-cc
VARIANT := fuzz
endif
# make CUDA=1: the CUDA microbenchmarks (calib/cgpu.cu, cuBLAS) in `latsim calib gpu`.
# NVCC, CUDA_PATH and CUDA_ARCH (default 90: H100/H200, plus PTX) may be overridden.
ifdef CUDA
VARIANT := $(VARIANT)-cuda
CUDA_PATH ?= /usr/local/cuda
NVCC      ?= $(CUDA_PATH)/bin/nvcc
CUDA_ARCH ?= 90
endif
BUILD   := build/$(VARIANT)
CFLAGS  += $(CSTD) $(WARN) $(OPT) $(LTO) -Isim -Icalib -Icli -DLATSIM_VERSION='"$(VERSION)"' \
           $(shell pkg-config --cflags gsl sqlite3 inih jansson openblas 2>/dev/null) \
           -DOPENBLAS_LIBDIR='"$(shell pkg-config --variable=libdir openblas 2>/dev/null)"'
# OpenBLAS is not linked: calib/ccpu.c loads it (dlopen) when `calib cpu` runs,
# so that its thread pool does not start with every simulation.
LDLIBS  += $(shell pkg-config --libs gsl sqlite3 inih jansson 2>/dev/null) -lcsv -lm -ldl
ifdef SANITIZE
LDFLAGS += -fsanitize=$(SANITIZE)
endif
ifneq ($(LTO),)
LDFLAGS += $(OPT) $(LTO)
endif

SIM_SRC  := $(wildcard sim/*/*.c calib/*.c)
ifdef CUDA
SIM_SRC  := $(filter-out calib/cgpu_none.c,$(SIM_SRC))
CUDA_OBJ := $(BUILD)/calib/cgpu.o
LDLIBS   += -L$(CUDA_PATH)/lib64 -Wl,-rpath,$(CUDA_PATH)/lib64 -lcublas -lcudart -lstdc++
endif
SIM_OBJ  := $(SIM_SRC:%.c=$(BUILD)/%.o) $(CUDA_OBJ)
TEST_SRC := $(wildcard tests/*.c) tests/fuzz/targets.c
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all deps run test bench clean latsim fuzz fuzz-replay check-layers
all: latsim

# Each object depends on the headers it includes (-MMD: the compiler writes
# build/.../X.d beside X.o), not on every header of the tree.
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

$(BUILD)/calib/cgpu.o: calib/cgpu.cu calib/cbench.h sim/core/catalog.h
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -Isim -Icalib -Xcompiler -Wall \
	  -gencode arch=compute_$(CUDA_ARCH),code=sm_$(CUDA_ARCH) \
	  -gencode arch=compute_$(CUDA_ARCH),code=compute_$(CUDA_ARCH) -c $< -o $@

# The files that print the version are rebuilt whenever `git describe` changes
# (a commit, a dirty tree): the stamp is rewritten only then.
VERSION_STAMP := $(BUILD)/version.stamp
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(VERSION_STAMP) 2>/dev/null)" = "$(VERSION)" ] || echo "$(VERSION)" > $(VERSION_STAMP); })
$(BUILD)/cli/calib.o $(BUILD)/cli/cliutil.o $(BUILD)/cli/latsim.o $(BUILD)/cli/run.o: $(VERSION_STAMP)

$(BUILD)/liblatsim.a: $(SIM_OBJ)
	ar rcs $@ $^

CLI_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/*.c))

$(BUILD)/latsim: $(CLI_OBJ) $(BUILD)/liblatsim.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# ./latsim is the release build; a variant (DEBUG, SANITIZE, CUDA, FUZZ) stays in
# its own build/ folder and `make test` of a variant tests that binary (LATSIM_BIN).
ifeq ($(VARIANT),release)
latsim: $(BUILD)/latsim
	cp $< $@
else
latsim: $(BUILD)/latsim
endif

$(BUILD)/test_latsim: $(TEST_OBJ) $(BUILD)/liblatsim.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) $(shell pkg-config --libs criterion) -o $@

# Missing Debian packages are installed when we are root; otherwise the command is printed.
DEB_PKGS := build-essential pkg-config libgsl-dev libsqlite3-dev libcsv-dev libcriterion-dev \
            libinih-dev libjansson-dev gnuplot-nox libxml2-utils libopenblas-dev
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps: all present"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else echo "deps: missing:$$missing"; echo "run: sudo apt-get install -y$$missing"; exit 1; fi

run: deps
	$(MAKE) latsim
	./latsim run scenarios/default.ini

# Tests run from the repository root (they read scenarios/ and tests/data/).
# Criterion 2.4 reports leaks without failing: the log is grepped for LeakSanitizer.
# LATSIM_CHECK=1 turns on the sanity checks (as DEBUG builds do) in every run the tests make.
# The whole suite is bounded by `timeout` rather than per-test .timeout values: Criterion
# 2.4's parallel runner leaks its watchdog records for those (a LeakSanitizer report
# inside libcriterion, no latsim frame), which would fail the sanitizer build.
TEST_TIMEOUT ?= 1500
test: deps
	$(MAKE) $(BUILD)/test_latsim latsim
	@rm -f tests/test.log
	LATSIM_BIN=$(BUILD)/latsim LATSIM_CHECK=1 timeout $(TEST_TIMEOUT) $(BUILD)/test_latsim -j2 2>&1 | tee tests/test.log; \
	  rc=$${PIPESTATUS[0]}; \
	  if grep -q 'ERROR: LeakSanitizer' tests/test.log; then echo "leaks found"; exit 1; fi; \
	  [ $$rc = 0 ] || exit $$rc; \
	  LATSIM_BIN=$(BUILD)/latsim tests/golden/run.sh --check && tests/check-layers.sh

# make check-layers: the include rules between the source folders (docs/architecture.md):
# one line per offending include or cycle, exit 1.
check-layers:
	tests/check-layers.sh

# make bench [BASE=COMMIT] [REPEAT=N] [CASE=TEXT]: this checkout beside a baseline
# build (default 3fb2c66, built once into build/base-COMMIT/), medians of N (5)
# alternated whole-process runs per case (tests/bench-base.sh); `./latsim bench`
# is the current binary's own table.
BASE   ?= 3fb2c66
REPEAT ?= 5
bench: latsim
	tests/bench-base.sh --base $(BASE) --repeat $(REPEAT) $(CASE)

# Fuzzing (tests/fuzz/, docs/testing.md "Fuzzing").  The driver runs one target over files:
# scenario (parser + a 100-request run), csv and jsonl (trace readers).
$(BUILD)/fuzz_main: $(BUILD)/tests/fuzz/main.o $(BUILD)/tests/fuzz/targets.o $(BUILD)/liblatsim.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# make fuzz [FUZZ_SECONDS=N]: AFL++ (Debian package afl++) on each target in turn
# for N seconds (default 120), from the corpus and dictionary in tests/fuzz/;
# findings go to build/fuzz/out-TARGET/default/{crashes,hangs}.
FUZZ_SECONDS ?= 120
FUZZ_TARGETS := scenario csv jsonl
fuzz:
	@command -v afl-fuzz >/dev/null || { echo "fuzz: afl-fuzz not found (apt-get install afl++)"; exit 1; }
	$(MAKE) FUZZ=1 build/fuzz/fuzz_main
	for t in $(FUZZ_TARGETS); do \
	  AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
	  afl-fuzz -V $(FUZZ_SECONDS) -t 5000 -m none -i tests/fuzz/$$t -o build/fuzz/out-$$t \
	    -x tests/fuzz/latsim.dict -- build/fuzz/fuzz_main $$t @@ || exit 1; \
	done
	@for t in $(FUZZ_TARGETS); do echo "$$t: $$(ls build/fuzz/out-$$t/default/crashes 2>/dev/null | grep -vc README) crashes," \
	  "$$(ls build/fuzz/out-$$t/default/hangs 2>/dev/null | wc -l) hangs"; done

# make fuzz-replay: every corpus file (and any AFL++ finding) through the
# sanitizer build of the driver; fails on a crash, sanitizer report or leak.
fuzz-replay:
	$(MAKE) SANITIZE=address,undefined build/san/fuzz_main
	for t in $(FUZZ_TARGETS); do \
	  files=$$(ls tests/fuzz/$$t/* build/fuzz/out-$$t/default/crashes/id* build/fuzz/out-$$t/default/hangs/id* 2>/dev/null); \
	  for f in $$files; do timeout 60 build/san/fuzz_main $$t "$$f" || { echo "fuzz-replay: $$t $$f failed"; exit 1; }; done; \
	done; echo "fuzz-replay: corpus clean"

clean:
	rm -rf build latsim tests/test.log
