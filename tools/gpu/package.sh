#!/usr/bin/env bash
# Packs what tools/gpu/check.sh runs on a GPU machine into .gpu/pkg.tar.xz
# (git-ignored; it travels to the machine as a carried path): the C++ tests,
# the digits example, libsinga and every library they load that a bare
# system lacks, and the digits data. The GPU machine has the CUDA driver and
# the cuBLAS and cuDNN wheels, but not this machine's Debian packages nor oneDNN.
#
#   make setup CUDA=1 && tools/gpu/package.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
grep -q 'SINGA_CUDA=1' "$BUILD/build.ninja" ||
  { echo "package.sh: $BUILD is not a CUDA build (make setup CUDA=1)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$BUILD/singa_tests" "$BUILD/example_train_digits" "$stage/bin/"
cp python/singa/libsinga.so "$stage/lib/"
# What the dynamic loader resolves here, less the C and C++ runtimes and the
# compression libraries (the GPU machine's are as new, and its Python loads
# them too) and cuBLAS and cuDNN (their wheels are there).
for f in "$stage"/bin/* "$stage/lib/libsinga.so"; do ldd "$f"; done |
  awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|libdl|librt|libz|liblzma|libzstd|libcublas|libcublasLt|libcudnn)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
.venv/bin/python -c "import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), 'data', 'digits.csv.gz'))" |
  xargs -I{} cp {} "$stage/"
mkdir -p .gpu
tar -C "$stage" -cJf .gpu/pkg.tar.xz .
ls -la .gpu/pkg.tar.xz
