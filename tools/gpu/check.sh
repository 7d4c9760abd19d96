#!/usr/bin/env bash
# The GPU check, run on a machine with an NVIDIA GPU from the repository
# root, after tools/gpu/package.sh packed .gpu/pkg.tar.xz on the build
# machine. One command, logs in $OUT (default gpu-out/):
#   summary.txt  GPU, driver, and one line per step with its result
#   cuda.log     the CUDA tests (tests/cpp/cuda_test.cc)
#   cpp.log      every C++ test; each op-table row also runs on the GPU
#   digits.log   the digits CNN trained on the GPU, graph and eager mode
#   python.log   the extension built for this machine's Python, and the
#                Python GPU tests (tests/python/test_cuda.py)
#   bench.md     bench/gpu.py: singa against torch on the same GPU (its log:
#                bench.log)
# Needs: the CUDA driver, python3 with numpy, nanobind and the nvidia-cublas
# and nvidia-cudnn-cu13 wheels; cmake and a C++ compiler for the Python part.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
G=${SINGA_GPU_DIR:-/tmp/singa-gpu}
rm -rf "$G" && mkdir -p "$G"
summary="$OUT/summary.txt"
step() { echo "$*" | tee -a "$summary"; }
# SINGA_GPU_SECONDS bounds the whole check (a lease's time): each step's
# timeout is its own or what is left, whichever is less.
end=$(($(date +%s) + ${SINGA_GPU_SECONDS:-86400}))
limit() { local left=$((end - $(date +%s) - 5)); echo $((left < $1 ? (left > 1 ? left : 1) : $1)); }

python3 -c "import tarfile; tarfile.open('.gpu/pkg.tar.xz').extractall('$G')" ||
  { step "unpack: failed (run tools/gpu/package.sh first)"; exit 1; }
# cuBLAS and cuDNN from the Python environment's nvidia-cublas and
# nvidia-cudnn-cu13 wheels.
wheel_lib() {
  python3 -c "import glob, os, site; print(next((os.path.dirname(p) for d in site.getsitepackages() for p in glob.glob(d + '/nvidia/**/$1', recursive=True)), ''))"
}
NV=$(wheel_lib libcublas.so.13)
DNN=$(wheel_lib libcudnn.so.9)
export LD_LIBRARY_PATH="$G/lib:$NV:$DNN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
step "date: $(date -u +%Y-%m-%dT%H:%MZ)"
step "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"
step "cublas: ${NV:-not found}; cudnn: ${DNN:-not found}; python: $(python3 --version 2>&1)"
missing=$(ldd "$G/bin/singa_tests" "$G/lib/libsinga.so" | grep 'not found' | sort -u)
[ -n "$missing" ] && step "libraries missing: $missing"

# The CUDA tests first; then all other C++ tests in 8 shards (MPI's are left
# out: Open MPI's plugins are not packed) beside the Python extension's build
# and the Python tests; then the benchmark alone on the GPU, and the digits
# CNN: the steps that matter most come back first when the time runs out.
timeout $(limit 240) "$G/bin/singa_tests" --gtest_filter='Cuda*' > "$OUT/cuda.log" 2>&1
step "cuda tests: rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/cuda.log" | tr '\n' ' ')"
shards=8
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout $(limit 300) "$G/bin/singa_tests" \
    --gtest_filter='-Communicator*:Cuda*' > "$G/shard$i.log" 2>&1 &
done
# The extension for this machine's Python, then the Python GPU tests.
{
  cmake -S tools/gpu/ext -B "$G/ext" -DSINGA_LIB="$G/lib/libsinga.so" -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$(command -v python3)" && cmake --build "$G/ext" -j 16
} > "$OUT/python.log" 2>&1
if [ -f "$G"/ext/_singa*.so ]; then
  mkdir -p "$G/pkg/singa"
  cp python/singa/*.py "$G/pkg/singa/"
  cp "$G"/ext/_singa*.so "$G/lib/libsinga.so" "$G/pkg/singa/"
  export PYTHONPATH="$G/pkg"
  timeout $(limit 240) python3 -m pytest -q -p no:cacheprovider tests/python/test_cuda.py >> "$OUT/python.log" 2>&1
  rc=$?
  step "python gpu tests: rc=$rc $(tail -1 "$OUT/python.log")"
  if [ $rc -ge 128 ] && command -v cuda-gdb > /dev/null; then  # a crash: where
    timeout $(limit 240) cuda-gdb -batch -ex run -ex bt --args python3 -m pytest -q -x -p no:cacheprovider \
      tests/python/test_cuda.py >> "$OUT/python.log" 2>&1
  fi
else
  step "python gpu tests: not run, the extension did not build (python.log)"
fi
wait  # the C++ shards
cat "$G"/shard*.log > "$OUT/cpp.log"
passed=$(grep -h -E '^\[  PASSED  \]' "$G"/shard*.log | awk '{s += $4} END {print s + 0}')
failed=$(grep -h -E '^\[  FAILED  \] [A-Za-z]' "$OUT/cpp.log" | sort -u)
step "cpp tests: $passed passed; failed: ${failed:-none}"
# The benchmark, alone on the GPU.
if [ -f "$G"/ext/_singa*.so ]; then
  b=$(limit 300)  # the bench skips the cases left after its --budget
  # shellcheck disable=SC2086  # SINGA_GPU_BENCH_ARGS: more options (--profile, say)
  timeout "$b" python3 bench/gpu.py --budget $((b > 40 ? b - 30 : 10)) --out "$OUT/bench.md" \
    ${SINGA_GPU_BENCH_ARGS:-} > "$OUT/bench.log" 2>&1
  step "gpu bench: rc=$? $(tail -3 "$OUT/bench.log" | tr '\n' ' ')"
fi
data="$G/digits.csv.gz"
: > "$OUT/digits.log"
for mode in "" --eager; do
  timeout $(limit 240) "$G/bin/example_train_digits" --data "$data" --device cuda $mode \
    --plot "$G/digits$mode.png" --min-accuracy 0.97 >> "$OUT/digits.log" 2>&1
  step "digits cnn on the gpu ${mode:-graph}: rc=$? $(grep 'mode on' "$OUT/digits.log" | tail -1)"
done
