#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, one command: builds gxc with CUDA (scripts/build.sh), runs
# every unit test that needs a GPU or NVRTC (GoogleTest, in parallel shards), the lit tests of
# real GPUs where lit and FileCheck are installed, every model of models/ on GPU 0 against the
# host (tests/gpu/models_on_gpu.py) and the GPU benchmark against PyTorch
# (bench/gpu_vs_pytorch.py, where python3 has torch), and writes all of it to
# bench/RESULTS-gpu.md with the GPU, its driver and the commit. Refuses, exit 2, on a machine
# without a GPU; exits 1 when a test fails (the results file is written either way).
#
# Usage: scripts/gpu-check.sh [--build DIR] [--results FILE] [--work DIR]
#   --build DIR     a CUDA build of gxc already made in DIR (at the path it was built in): used
#                   as it is, nothing is built or installed
#   --results FILE  where the report goes (default bench/RESULTS-gpu.md)
#   --work DIR      keep the tests' logs and outputs there (default: a temporary folder, removed)
set -euo pipefail
cd "$(dirname "$0")/.."

build="" results=bench/RESULTS-gpu.md work=""
while (($#)); do
  case "$1" in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --results) results=${2:?--results needs a file}; shift 2 ;;
    --work) work=${2:?--work needs a folder}; shift 2 ;;
    *) echo "gpu-check: unknown option '$1' (usage: scripts/gpu-check.sh [--build DIR] [--results FILE] [--work DIR])" >&2
       exit 2 ;;
  esac
done

if ! command -v nvidia-smi > /dev/null || ! gpus=$(nvidia-smi -L 2> /dev/null) \
  || [ -z "$gpus" ]; then
  echo "gpu-check: no NVIDIA GPU on this machine (nvidia-smi finds none): this script runs the" \
    "GPU tests where there is one; scripts/test.sh runs everything else" >&2
  exit 2
fi

if [ -z "$build" ]; then
  scripts/build.sh
  build=build
fi
build=$(cd "$build" && pwd)
if ! "$build/gxc" devices 2> /dev/null | grep -q '^0 '; then
  echo "gpu-check: $build/gxc was built without the CUDA toolkit or finds no GPU" \
    "('$build/gxc devices' says why): build with CUDA (scripts/build.sh on a machine with it)" >&2
  exit 2
fi
export GXC_CACHE_DIR="$build/kernel-cache"

if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
status=0
commit=$(git rev-parse --short HEAD 2> /dev/null || echo "${GXC_COMMIT:-unknown}")
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
{
  echo "# gxc on a real GPU"
  echo
  echo "Written by \`scripts/gpu-check.sh\` at commit $commit, $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "- GPUs: $(echo "$gpus" | sed 's/ (UUID.*)//' | paste -sd ';' -)"
  echo "- driver $driver; $(nvidia-smi --query-gpu=memory.total --format=csv,noheader | head -1) each"
  echo "- host: $(nproc) cores, $(uname -sr)"
  echo
} > "$work/results.md"

echo "== unit tests that need a GPU or NVRTC" >&2
# Their suites, by name: the cuda platform's (Cuda*, Cudnn*), the GPU enumeration, NVRTC and
# the attention kernel's PTX; each test skips, saying why, where the machine lacks what it needs.
filter=$("$build/tests/gxc_unit_tests" --gtest_list_tests \
  | awk '/^[^ ]/ { suite = $1 } /^  / && suite ~ /(Cuda|Cudnn|Gpu|Nvrtc|AttentionKernel)/ { printf "%s%s%s", sep, suite, $1; sep = ":" }')
shards=$(($(nproc) < 8 ? $(nproc) : 8))
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$build/tests/gxc_unit_tests" \
    --gtest_filter="$filter" --gtest_output="json:$work/unit-$i.json" > "$work/unit-$i.log" 2>&1 &
done
wait || true
{
  echo "## Unit tests that need a GPU or NVRTC"
  echo
  echo '```'
  python3 tests/gpu/summarize_gtest.py "$work"/unit-*.json || status=1
  echo '```'
  echo
} >> "$work/results.md"

echo "== lit tests of real GPUs" >&2
lit=$(command -v lit || true)
if [ -n "$lit" ] && command -v FileCheck > /dev/null; then
  { echo "## lit tests of real GPUs"; echo; echo '```'
    "$lit" -sv "$build/tests/lit" --filter 'cuda|gpu|ptx' 2>&1 | tail -15 || status=1
    echo '```'; echo; } >> "$work/results.md"
else
  printf '## lit tests of real GPUs\n\nNot run: lit and FileCheck are not installed here.\n\n' \
    >> "$work/results.md"
fi

echo "== every model on GPU 0 against the host" >&2
{ echo "## Every model of models/ on GPU 0 against the host"; echo
  python3 tests/gpu/models_on_gpu.py "$build/gxc" "$work/models" || status=1
  echo; } >> "$work/results.md"

echo "== benchmarks against PyTorch" >&2
if python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2> /dev/null; then
  { echo "## Inference against PyTorch on GPU 0"; echo
    python3 bench/gpu_vs_pytorch.py "$build" || status=1
    echo; } >> "$work/results.md"
else
  printf '## Inference against PyTorch on GPU 0\n\nNot run: python3 has no torch with CUDA.\n\n' \
    >> "$work/results.md"
fi

cp "$work/results.md" "$results"
cat "$results"
exit "$status"
