#!/usr/bin/env bash
# Every benchmark of bench/RESULTS.md, one after the other, in one invocation, with what was
# measured: the commit (and whether the tree had changes), the date, the machine and its load.
# Usage: bench/run_all.sh [BUILD_DIR]   (default build-rel: a Release build without the
# per-pass verifier, as RESULTS.md configures it; needs python3 with numpy and torch)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-rel}
cmake --build "$build" -j2 --target gxc yaml_load_bench host_rates_bench batch_transfers_bench \
  data_parallel_bench pipeline_bench > /dev/null
echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!bench/RESULTS.md' || echo ' (with changes)')"
echo "date $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
section() { echo; echo "== $*"; }
section host_rates_bench 7;       "$build/bench/host_rates_bench" 7
section run_host_bench.sh 10;     bench/run_host_bench.sh 10 "$build"
section batch_transfers_bench;    "$build/bench/batch_transfers_bench" 200
section data_parallel_bench;      "$build/bench/data_parallel_bench" 4096
section pipeline_bench;           "$build/bench/pipeline_bench" 4096
section compile_time_bench.py;    python3 bench/compile_time_bench.py "$build"
section networks_vs_pytorch.py 20; python3 bench/networks_vs_pytorch.py "$build" 20
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
