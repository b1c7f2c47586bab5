#!/usr/bin/env bash
# Host benchmark: gxc run on the cpu platform against NumPy on the same MLP, in one run.
# Usage: bench/run_host_bench.sh [ITERATIONS]   (needs a built build/gxc and python3 numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-20}
build/gxc run bench/models/mlp_wide.yaml --devices cpu --iterations "$iterations" \
  --report /tmp/gxc-bench-report.json > /dev/null 2> /tmp/gxc-bench-stderr
grep iterations /tmp/gxc-bench-stderr | sed 's/^ */gxc: /'
python3 bench/mlp_wide_numpy.py "$iterations"
