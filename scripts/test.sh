#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: GoogleTest and lit through
# ctest; then the unit tests again under AddressSanitizer (leaks included: a failed run must
# free everything) and the runtime's tests under ThreadSanitizer (sim streams are threads).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
jobs=$(nproc)
(cd build && ctest --output-on-failure -j "$jobs")

echo "== unit tests under AddressSanitizer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGXC_SANITIZE=address > /dev/null
cmake --build build-asan -j "$jobs" --target gxc_unit_tests
build-asan/tests/gxc_unit_tests --gtest_brief=1

echo "== runtime tests under ThreadSanitizer"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGXC_SANITIZE=thread > /dev/null
cmake --build build-tsan -j "$jobs" --target gxc_unit_tests
TSAN_OPTIONS=halt_on_error=1 build-tsan/tests/gxc_unit_tests --gtest_brief=1 \
  --gtest_filter='Sim*:*PlatformEquivalence*:*ExecutedPlan*'
