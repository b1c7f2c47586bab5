#!/usr/bin/env bash
# Host benchmark: gxc run on the cpu platform against NumPy on the same MLP, in one run.
# Usage: bench/run_host_bench.sh [ITERATIONS] [BUILD_DIR]   (default 20, build; needs a built
# BUILD_DIR/gxc and python3 numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-20}
build=${2:-build}
stderr=$(mktemp)
trap 'rm -f "$stderr"' EXIT
"$build/gxc" run bench/models/mlp_wide.yaml --devices cpu --iterations "$iterations" \
  > /dev/null 2> "$stderr"
grep iterations "$stderr" | sed 's/^ */gxc: /'
python3 bench/mlp_wide_numpy.py "$iterations"
