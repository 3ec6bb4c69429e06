# Thin wrapper: every target first runs the idempotent set-up
# (scripts/setup-env.sh), then CMake does the build.
#   make test    build, then ctest (C) and pytest (Python)
#   make bench   build, then `build/opcost run`: the default suite on the
#                best device present (the CPU without a GPU); BENCH_ARGS
#                adds options, e.g. make bench BENCH_ARGS=--quick
#   make evidence    compiler evidence into results/evidence/
#   make nightly     this build against the last accepted commit's, paired
#                    (opcost ab; exit 1 regression, 3 unsure)
#   make plots       gnuplot figures of the newest results CSV
#   make -s python   print the environment's interpreter (import rowops works)
SHELL := /bin/bash
MAKEFLAGS += --no-print-directory
BUILD ?= build
JOBS ?= $(shell nproc)
PYTEST_ARGS ?=
BENCH_ARGS ?=
# make bench's time budget in seconds (opcost run --time-budget): the
# build and the run fit 10 minutes on the slowest host class (README); 0:
# the full run
BENCH_BUDGET ?= 360
# libFuzzer seconds per parser in make test (make fuzz: FUZZ_SECONDS=600)
FUZZ_SECONDS ?= 10
FUZZ_ARGS ?=

.PHONY: all setup configure build test test-c test-python sanitize fuzz bench evidence nightly plots python format clean

all: build

setup:
	@scripts/setup-env.sh > /dev/null

# The interpreter's path, resolved once per make invocation.
PY = $(shell scripts/setup-env.sh)

configure: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_PREFIX_PATH="$$($(PY) -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" \
	  -DPython3_EXECUTABLE=$(PY) > $(BUILD).configure.log 2>&1 || \
	  { cat $(BUILD).configure.log; exit 1; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The build, then side by side on every core: ctest's tests (the slowest
# first), pytest, and the sanitizer build with its tests and the parser
# fuzzers (make sanitize); their outputs in that order, pytest's summary
# last. Nothing there asserts a time.
test: build
	@$(MAKE) sanitize > $(BUILD)-sanitize.log 2>&1 & san=$$!; \
	  ROWOPS_LIBRARY=$(CURDIR)/$(BUILD)/librowops_torch.so \
	  $(PY) -m pytest tests/python -q $(PYTEST_ARGS) \
	  > $(BUILD)/pytest.log 2>&1 & py=$$!; \
	  trap 'kill $$san $$py 2>/dev/null' INT TERM; \
	  (cd $(BUILD) && ctest -j $(JOBS) --output-on-failure); c=$$?; \
	  wait $$san; s=$$?; wait $$py; p=$$?; \
	  echo "== make sanitize (exit $$s)"; cat $(BUILD)-sanitize.log; \
	  echo "== pytest (exit $$p)"; cat $(BUILD)/pytest.log; \
	  [ $$c -eq 0 ] && [ $$s -eq 0 ] && [ $$p -eq 0 ]

# The torch-free C core (kernels, eligibility, parsers, statistics, CSV,
# scheduler simulation, ceiling) rebuilt under ASan + UBSan, its C tests run.
sanitize:
	@cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=Debug \
	  -DROWOPS_WITH_TORCH=OFF -DROWOPS_WITH_CUDA=OFF -DOPCOST_SANITIZE=ON \
	  > $(BUILD)-sanitize.configure.log 2>&1 || \
	  { cat $(BUILD)-sanitize.configure.log; exit 1; }
	@cmake --build $(BUILD)-sanitize -j $(JOBS) > /dev/null
	@cd $(BUILD)-sanitize && ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest -j $(JOBS) --output-on-failure \
	  -E clang_format
	@fuzz/run.sh $(FUZZ_SECONDS) $(CURDIR)/$(BUILD)-fuzz

# As long as asked: the kernels' differential fuzzer and both parsers'
# libFuzzer targets, FUZZ_SECONDS each (e.g. make fuzz FUZZ_SECONDS=3600).
fuzz: build
	@$(BUILD)/fuzz_kernels --seconds $(FUZZ_SECONDS) $(FUZZ_ARGS)
	@fuzz/run.sh $(FUZZ_SECONDS) $(CURDIR)/$(BUILD)-fuzz

bench: build
	@$(BUILD)/opcost run --time-budget $(BENCH_BUDGET) $(BENCH_ARGS)

# What the compiler does with the op (graphs, output code, export, the
# opaque/decomposed boundary) into results/evidence/.
evidence: build
	@ROWOPS_LIBRARY=$(CURDIR)/$(BUILD)/librowops_torch.so \
	  $(PY) scripts/evidence.py --opcost $(BUILD)/opcost

# This build against the last accepted commit's, paired in the same rounds
# (opcost ab), into results/history/; exits 1 on a regression, 3 when
# unsure (cron/CI gate). BENCH_ARGS reaches the run.
nightly: build
	@BENCH_ARGS="$(BENCH_ARGS)" scripts/nightly.sh $(BUILD)

# Figures of the newest results CSV into results/plots/<run_id>/.
plots: build
	@$(BUILD)/opcost plot "$$(ls -t results/*.csv | grep -v '\.samples\.csv$$' | head -1)"

python:
	@scripts/setup-env.sh

format:
	@clang-format -i kernels/*.[ch] kernels/cuda/*.cu kernels/cuda/*.cuh \
	  ops/*.cpp ops/*.h bench/*/*.[ch] bench/*/*.cpp tests/c/*.[ch] \
	  tests/c/*.cpp

clean:
	rm -rf $(BUILD) $(BUILD).configure.log
