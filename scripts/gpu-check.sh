#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, one command: builds gxc with CUDA (scripts/build.sh), runs
# every unit test that needs a GPU or NVRTC (GoogleTest, in parallel shards), the lit tests of
# real GPUs where lit and FileCheck are installed, every model of models/ on GPU 0 against the
# host (tests/gpu/models_on_gpu.py), every model under compute-sanitizer's memcheck, racecheck,
# synccheck and initcheck where it is installed, and the GPU benchmark against PyTorch
# (bench/gpu_vs_pytorch.py, where python3 has torch; with Nsight Compute, the GEMM kernels
# cuBLAS runs for gxc and for PyTorch side by side), and writes all of it to
# bench/RESULTS-gpu.md with the GPU, its driver and the commit. Refuses, exit 2, on a machine
# without a GPU, and in a git tree with uncommitted changes (the report would name a commit
# its figures are not of); exits 1 when a test fails (the results file is written either way).
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

# The report names one commit: refused when the files differ from it (uncommitted or untracked
# changes), since its figures would then be of code no commit holds.
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  if [ -n "$(git status --porcelain 2> /dev/null)" ]; then
    echo "gpu-check: the git tree has uncommitted changes ('git status' lists them): the report" \
      "names a commit, so commit or stash them first" >&2
    exit 2
  fi
elif [ -z "${GXC_COMMIT:-}" ]; then
  echo "gpu-check: this copy of gxc is no git tree, so the report could not name its commit:" \
    "set GXC_COMMIT to the commit it is a clean copy of" >&2
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
# GXC_COMMIT names the commit of a build made elsewhere (--build), whose copy may have no .git.
commit=${GXC_COMMIT:-$(git rev-parse --short HEAD)}
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
    PYTHONWARNINGS=ignore "$lit" -sv "$build/tests/lit" --filter 'cuda|gpu|ptx' 2>&1 | tail -15 \
      || status=1
    echo '```'; echo; } >> "$work/results.md"
else
  printf '## lit tests of real GPUs\n\nNot run: lit and FileCheck are not installed here.\n\n' \
    >> "$work/results.md"
fi

echo "== every model on GPU 0 against the host" >&2
{ echo "## Every model of models/ on GPU 0 against the host"; echo
  python3 tests/gpu/models_on_gpu.py "$build/gxc" "$work/models" || status=1
  echo; } >> "$work/results.md"

echo "== every model under compute-sanitizer" >&2
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null || true)
if [ -n "$sanitizer" ]; then
  mkdir -p "$work/sanitizer"
  for model in models/*.yaml; do
    case $model in *very_big_module*) continue ;; esac  # the 8 GB weights; _small has 2 GPUs
    for tool in memcheck racecheck synccheck initcheck; do echo "$model $tool"; done
  done | xargs -P "$shards" -L 1 bash -c '
    out="$0/$(basename "$3" .yaml).$4"
    if "$1" --tool "$4" --error-exitcode 9 "$2" run "$3" --devices 0 > "$out.log" 2>&1; then
      echo "$3 $4: $(grep -E "(ERROR|RACECHECK) SUMMARY" "$out.log" | head -1 | sed "s/^=* *//")"
    else
      echo "$3 $4: FAILED (exit $?): $(grep -E "^=========  *[A-Z]" "$out.log" | head -1)"
    fi' "$work/sanitizer" "$sanitizer" "$build/gxc" | sort > "$work/sanitizer.txt" || true
  { echo "## Every model under compute-sanitizer"; echo; echo '```'
    cat "$work/sanitizer.txt"
    echo '```'; echo; } >> "$work/results.md"
  grep -q FAILED "$work/sanitizer.txt" && status=1
else
  printf '## Every model under compute-sanitizer\n\nNot run: compute-sanitizer is not installed.\n\n' \
    >> "$work/results.md"
fi

echo "== benchmarks against PyTorch" >&2
if python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2> /dev/null; then
  { echo "## Inference against PyTorch on GPU 0"; echo
    python3 bench/gpu_vs_pytorch.py "$build" || status=1
    echo; } >> "$work/results.md"
else
  printf '## Inference against PyTorch on GPU 0\n\nNot run: python3 has no torch with CUDA.\n\n' \
    >> "$work/results.md"
fi

echo "== the GEMM kernels of the wide MLP, gxc's and PyTorch's (Nsight Compute)" >&2
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2> /dev/null || true)
if [ -n "$ncu" ] && python3 -c 'import torch' 2> /dev/null; then
  kernels() {  # each kernel's name (its first 70 characters) and duration, as ncu prints them
    "$ncu" --clock-control none --metrics gpu__time_duration.sum "$@" 2>&1 \
      | awk '/^  [^ ]/ { name = substr($0, 3, 70) } /gpu__time_duration.sum/ { print "  " name ": " $3 " " $2 }'
  }
  { echo "## The wide MLP's kernels, gxc's and PyTorch's (Nsight Compute, one run each)"; echo
    echo '```'; echo "gxc run bench/models/mlp_wide.yaml --devices 0:"
    kernels "$build/gxc" run bench/models/mlp_wide.yaml --devices 0
    echo "PyTorch, the same module (bench/gpu_vs_pytorch.py's MlpWide) on a GPU-resident input:"
    kernels python3 -c 'import sys, torch; sys.path.insert(0, "bench"); import gpu_vs_pytorch as g
torch.backends.cuda.matmul.allow_tf32 = False
with torch.inference_mode(): g.MlpWide().cuda()(torch.randn(4096, 1024, device="cuda"))
torch.cuda.synchronize()' | grep -v -e distribution_ -e normal_
    echo '```'; echo; } >> "$work/results.md"
fi

cp "$work/results.md" "$results"
cat "$results"
exit "$status"
