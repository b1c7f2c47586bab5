#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (GoogleTest and lit, via ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)"
