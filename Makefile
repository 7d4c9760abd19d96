# make demo:  setup + the main job on digits (train, ONNX, infer, re-train, transfer-learn)
# make setup: Debian packages, .venv with the PyPI packages, the build, and a
#             development install of singa into .venv (idempotent, fast when done)
# make test:  setup + C++ tests (ctest) + Python tests (pytest)
# make bench: setup + benchmarks against the peers; writes bench/RESULTS.md
# make docs:  setup + regenerate docs/ops.md from the op registry
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
APT_PKGS := build-essential libgtest-dev libbenchmark-dev libprotobuf-dev protobuf-compiler zlib1g-dev \
            libopenmpi-dev openmpi-bin clang-format pkg-config libjpeg62-turbo-dev libpng-dev \
            libtiff-dev libwebp-dev libopenjp2-7-dev
SITE = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

.PHONY: setup apt venv build demo test test-cpp test-python bench docs format clean

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

build: venv
	@test -f $(BUILD)/build.ninja || PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B $(BUILD) -G Ninja \
	  -DPython_EXECUTABLE=$(abspath $(PY))
	@PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(BUILD)
	@install -m 755 $(BUILD)/singa $(VENV)/bin/singa
	@echo "$(abspath python)" > $(SITE)/singa-dev.pth

demo: build
	$(PY) examples/python/demo.py --out out

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j2

test-python: build
	$(PY) -m pytest tests/python tests/conformance -q -p no:cacheprovider

test: test-cpp test-python

bench: build
	$(PY) bench/run.py

docs: build
	$(PY) tools/gen_op_table.py

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) python/singa/*.so*
