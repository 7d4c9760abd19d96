# make demo:  setup + the main job on digits (train, ONNX, infer, re-train, transfer-learn)
# make setup: Debian packages, .venv with the PyPI packages, the build, and a
#             development install of singa into .venv (idempotent, fast when done);
#             with CUDA=1 also the CUDA device (nvcc from the CUDA toolkit, cuBLAS
#             and cuDNN from PyPI), which builds and tests without a GPU too
# make test:  setup + C++ tests (ctest) + Python tests (pytest)
# make bench: setup + benchmarks against the peers; writes bench/RESULTS.md
# make docs:  setup + regenerate docs/ops.md from the op registry
# make test-asan: the checking build (clang, AddressSanitizer and
#             UndefinedBehaviorSanitizer, in build-asan) runs ctest, the
#             Python tests of ASAN_PYTESTS and every fuzz corpus input
# make fuzz:  each libFuzzer target (tests/fuzz) for FUZZ_SECONDS
# make test-wheel: builds the wheel as pip does (a fresh environment with the
#             declared build requirements; MPI and the image codecs off),
#             installs it into a fresh environment and tests it there: a model
#             run outside the tree, no -march=native, the Python tests of MPI
#             and images, a C++ program on find_package(singa)
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
APT_PKGS := build-essential libgtest-dev libbenchmark-dev libprotobuf-dev protobuf-compiler zlib1g-dev \
            libopenmpi-dev openmpi-bin clang-format pkg-config libjpeg62-turbo-dev libpng-dev \
            libtiff-dev libwebp-dev libopenjp2-7-dev libcli11-dev
SITE = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

.PHONY: setup apt venv build demo test test-cpp test-python bench docs format clean \
        asan-build test-asan fuzz fuzz-replay test-wheel

setup: build

apt:
	@if ! dpkg -s $(APT_PKGS) >/dev/null 2>&1; then \
	  echo "Installing Debian packages: $(APT_PKGS)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS); \
	fi

$(VENV)/.deps: requirements.txt | apt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	@touch $@

venv: $(VENV)/.deps

CUDA ?=
CUDA_PIP_PKGS := nvidia-cublas nvidia-cudnn-cu13
$(VENV)/.cuda-deps: | $(VENV)/.deps
	$(PY) -m pip install -q $(CUDA_PIP_PKGS)
	@touch $@

build: venv $(if $(CUDA),$(VENV)/.cuda-deps)
	@if [ ! -f $(BUILD)/build.ninja ] || { [ -n "$(CUDA)" ] && \
	    ! grep -q '^SINGA_CUDA:STRING=ON' $(BUILD)/CMakeCache.txt; }; then \
	  PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B $(BUILD) -G Ninja \
	    -DPython_EXECUTABLE=$(abspath $(PY)) $(if $(CUDA),-DSINGA_CUDA=ON); fi
	@PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(BUILD)
	@install -m 755 $(BUILD)/singa $(VENV)/bin/singa
	@echo "$(abspath python)" > $(SITE)/singa-dev.pth

demo: build
	$(PY) examples/python/demo.py --out out

# The tests time convolution layouts themselves: no layout picks are read
# from or written to the user's cache (src/kernels/cpu/tuning_cache.h).
test-cpp test-python test-asan: export SINGA_CACHE_DIR :=

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j2

test-python: build
	$(PY) -m pytest tests/python tests/conformance -q -p no:cacheprovider

test: test-cpp test-python

bench: build
	$(PY) bench/run.py

docs: build
	$(PY) tools/gen_op_table.py

# ---- the checking build: sanitizers and fuzzers ---------------------------
ASAN_BUILD := build-asan
CLANG := clang++-14
CLANG_PKGS := clang-14 libclang-rt-14-dev libomp-14-dev
FUZZERS := model states npy
FUZZ_SECONDS ?= 600
# Python is not instrumented: it preloads the sanitizer runtime and imports
# the package of the checking build; its own allocations are not checked
# for leaks.
ASAN_PY_ENV = LD_PRELOAD=$$($(CLANG) -print-file-name=libclang_rt.asan-x86_64.so) \
              ASAN_OPTIONS=detect_leaks=0:alloc_dealloc_mismatch=0 SINGA_POISON_MEMORY=1 \
              PYTHONPATH=$(abspath $(ASAN_BUILD))/pkg
# The Python tests that run under the sanitizers: hostile input, the
# importer, and the op table for a sample of ops. Not the one that measures
# the process's resident memory: the sanitizer's shadow memory and
# quarantine count there.
ASAN_PYTESTS := tests/python/test_hostile.py tests/python/test_sonnx.py \
                --deselect tests/python/test_sonnx.py::test_prepare_holds_the_weights_about_once
ASAN_OPS := conv or gemm or matmul or gather or slice or reshape or concat or pad or resize \
            or loop or scan or split or softmax or pool or topk or einsum or cast

# Unoptimized: clang compiles the op files' dtype instantiations about four
# times faster at -O0 than at -O1 (20 rather than 33 minutes for the build on
# a 2-core host), more than the tests lose by running slower.
asan-build: venv
	@if ! dpkg -s $(CLANG_PKGS) >/dev/null 2>&1; then \
	  echo "Installing Debian packages: $(CLANG_PKGS)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CLANG_PKGS); \
	fi
	@test -f $(ASAN_BUILD)/build.ninja || PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . \
	  -B $(ASAN_BUILD) -G Ninja -DPython_EXECUTABLE=$(abspath $(PY)) -DCMAKE_CXX_COMPILER=$(CLANG) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -gline-tables-only" \
	  -DSINGA_SANITIZE=address,undefined -DSINGA_FUZZ=ON
	@PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(ASAN_BUILD)

test-asan: asan-build
	cd $(ASAN_BUILD) && SINGA_POISON_MEMORY=1 ctest --output-on-failure -j2
	$(ASAN_PY_ENV) $(PY) -m pytest $(ASAN_PYTESTS) -q -p no:cacheprovider --capture=sys
	$(ASAN_PY_ENV) $(PY) -m pytest tests/python/test_ops.py -k "$(ASAN_OPS)" -q -p no:cacheprovider \
	  --capture=sys
	$(MAKE) fuzz-replay

# Every input of the corpora and every reproducer ever found, once each.
fuzz-replay: asan-build
	@for f in $(FUZZERS); do \
	  $(ASAN_BUILD)/fuzz_$$f -runs=0 tests/fuzz/corpus/$$f tests/fuzz/regressions/$$f || exit 1; \
	done

# New corpus inputs go to out/fuzz/TARGET and findings to out/fuzz/TARGET-*;
# a finding, once fixed, belongs in tests/fuzz/regressions/TARGET.
fuzz: asan-build
	@for f in $(FUZZERS); do \
	  mkdir -p out/fuzz/$$f; \
	  $(ASAN_BUILD)/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 \
	    -dict=tests/fuzz/$$f.dict -artifact_prefix=out/fuzz/$$f- \
	    out/fuzz/$$f tests/fuzz/corpus/$$f tests/fuzz/regressions/$$f || exit 1; \
	done

test-wheel: venv
	PATH=$(abspath $(VENV))/bin:$$PATH SINGA_TEST_WHEEL=1 $(PY) -m pytest tests/python/test_packaging.py \
	  -q -p no:cacheprovider

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) python/singa/*.so*
