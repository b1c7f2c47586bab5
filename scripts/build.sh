#!/usr/bin/env bash
# Installs what is missing, then configures and builds gxc in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# CMake's output is kept out of the way, except gxc's own summary lines ("gxc: cuda platform
# and NVRTC: ON"); all of it is shown when configuring fails.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
sed -n 's/^-- \(gxc: .*\)$/\1/p' "$log"
cmake --build build -j "$(nproc)"
