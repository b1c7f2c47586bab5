#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: GoogleTest (in shards) and
# lit through ctest; then ONNX's backend node tests through build/gxc on cpu and sim, in the
# Python venv of scripts/python-env.sh (tests/onnx/run_node_tests.py, which docs/onnx.md must
# agree with); then the same suite in a build without CUDA, which must run every test the first
# one ran except those that need NVRTC or the CUDA toolkit, and list those as skipped
# (tests/compare_cuda_builds.py); then the unit tests again under AddressSanitizer (leaks
# included: a failed run must free everything) and the threaded runtime's tests under
# ThreadSanitizer (sim streams are threads, and so is the redraw of the progress line); then the
# parsers' libFuzzer targets for a bounded time. The Python module's tests run in ctest with the
# others (tests/python), and pip installs the package into a fresh venv once the build without
# CUDA has passed. The builds after the first share its kernel cache (tests/CMakeLists.txt), so
# each generated kernel is compiled for the host once.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every gxc the tests run verifies the IR after each pass (passes/pass_manager.h), the ONNX
# node tests' and the fuzzers' too.
export GXC_VERIFY_EACH_PASS=1
# The venvs first: the build's configure step finds in them the Pythons of the onnx_networks
# and train_fixtures tests.
scripts/install-deps.sh
scripts/python-env.sh
scripts/torch-env.sh
scripts/build.sh
jobs=$(nproc)
(cd build && ctest --output-on-failure -j "$jobs" --output-junit ctest.xml)

echo "== ONNX backend node tests on cpu and sim (docs/onnx.md is generated from this run)"
onnx_min_pass=785 # tests that must pass on each platform (onnx 1.23.2)
.venv/bin/python tests/onnx/run_node_tests.py --gxc build/gxc --tests build/onnx-node-tests \
  --results build/onnx-node-tests.json --min-pass "$onnx_min_pass"
.venv/bin/python tests/onnx/write_onnx_doc.py build/onnx-node-tests.json --check docs/onnx.md
.venv/bin/python tests/onnx/runner_selftest.py build/onnx-node-tests

echo "== the suite in a build without CUDA"
kernel_cache="$PWD/build/kernel-cache"
cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGXC_WITH_CUDA=OFF \
  -DGXC_TEST_KERNEL_CACHE="$kernel_cache" > /dev/null
cmake --build build-nocuda -j "$jobs" --target gxc gxc-opt gxc_unit_tests gxc_fuzz_replays \
  write_tensorboard_sample $(cmake --build build-nocuda --target help | grep -o gxc_python_package)
# train_fixtures checks the PyTorch reference's own files and runs no gxc: the first pass ran it.
(cd build-nocuda && ctest --output-on-failure -j "$jobs" --output-junit ctest.xml \
  -E '^train_fixtures$')
python3 tests/compare_cuda_builds.py --not-rerun train_fixtures build build-nocuda

echo "== the Python package, as pip installs it into a fresh venv"
# `pip install .` (pyproject.toml) builds the module in build-python-package with the flags of
# build/, so ccache has nearly all of it; pip fetches the build requirements and NumPy.
package_venv=$(mktemp -d)
python3 -m venv "$package_venv"
CMAKE_GENERATOR="Unix Makefiles" "$package_venv/bin/python" -m pip install --quiet \
  --disable-pip-version-check .
model="$PWD/models/mlp.yaml"
version=$(build/gxc --version)
# Outside the repository, as a user would run it.
(cd "$package_venv" && GXC_CACHE_DIR="$kernel_cache" "$package_venv/bin/python" - "$model" \
  "$version" <<'END'
import sys
import gxc
assert f"gxc {gxc.__version__}" == sys.argv[2], (gxc.__version__, sys.argv[2])
out = gxc.compile(sys.argv[1], devices="cpu")()
print(f"gxc {gxc.__version__} from {gxc.__file__}: mlp.yaml gives fc3 {out['fc3'].shape}")
END
)
rm -rf "$package_venv"

echo "== unit tests under AddressSanitizer"
# Without CUDA, as the ThreadSanitizer build below: no GPU runs the cuda platform's code here,
# and its sources would only lengthen the build. Every library is instrumented, the tests' own
# sources are not (GXC_SANITIZE_ONLY, CMakeLists.txt: ccache has them from the build without
# CUDA); LeakSanitizer follows every allocation either way.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGXC_SANITIZE=address \
  -DGXC_SANITIZE_ONLY="ir;tensor;target;frontend;passes;codegen;runtime;tools" \
  -DGXC_WITH_CUDA=OFF -DGXC_TEST_KERNEL_CACHE="$kernel_cache" > /dev/null
cmake --build build-asan -j "$jobs" --target gxc_unit_tests
# intercept_tls_get_addr=0: GCC 12's sanitizer runtime takes a dynamic TLS block that malloc
# happens to place at one offset in a page for glibc 2.19's layout, reads a bogus range from the
# words before it, and LeakSanitizer's tracer faults scanning that range at exit ("Tracer caught
# signal 11", every test passed). The host kernels gxc dlopens have thread_local blockIdx and
# gridDim, so any change to what the suite allocates can make it hit. Leaks are still checked:
# only that interceptor's bookkeeping of dynamic TLS is off.
# The emulated GPU launches run each CUDA thread as a ucontext fiber on stacks of their own,
# which the sanitizers' runtimes do not follow without fiber annotations (AddressSanitizer
# "doesn't fully support makecontext/swapcontext"): those tests run in the plain build only.
# The unit test shards through ctest, two at a time as in the first build; GoogleTest reads the
# filter from GTEST_FILTER.
(cd build-asan && ASAN_OPTIONS=intercept_tls_get_addr=0 \
  GTEST_FILTER='-*EmulatedLaunch*:*emulated*:*Emulated*' \
  ctest --output-on-failure -j "$jobs" -R '^unit_tests_')

echo "== the threaded runtime's tests under ThreadSanitizer"
# gxc_thread_tests: the unit tests of sim streams, the executed plan and the progress line
# (tests/CMakeLists.txt), without the rest of the suite's sources. Without CUDA, as above.
# Only the code that runs threads, and the kernels' host builds they load, are instrumented
# (GXC_SANITIZE_ONLY, CMakeLists.txt): the frontend and the passes run before any thread starts,
# and ccache has them from the build without CUDA.
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGXC_SANITIZE=thread \
  -DGXC_SANITIZE_ONLY="ir;codegen;runtime;tests" -DGXC_WITH_CUDA=OFF \
  -DGXC_TEST_KERNEL_CACHE="$kernel_cache" > /dev/null
cmake --build build-tsan -j "$jobs" --target gxc_thread_tests
TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" build-tsan/tests/gxc_thread_tests \
  --gtest_brief=1 \
  --gtest_filter='Sim*:*PlatformEquivalence*:*ExecutedPlan*:TerminalProgressThread*-*emulated*:*Emulated*'

echo "== fuzzing the parsers for a bounded time (libFuzzer, clang-14)"
# Each fuzz target runs over a copy of its seed corpus (libFuzzer adds the inputs it finds to
# the corpus folder: the repository's stays as it is); a crash, leak, timeout or excessive
# allocation leaves an artifact and fails the run.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DGXC_FUZZ=ON -DGXC_WITH_CUDA=OFF > /dev/null
fuzz_work=$(mktemp -d)
# target:seconds:seed folder[:regression folder, inputs that once failed]
for fuzz in onnx_reader:30:tests/fixtures/onnx npy_reader:20:tests/fixtures/io \
  npz_reader:20:tests/fixtures/npz safetensors_reader:20:tests/fixtures/io \
  yaml_model:20:models:fuzz/regressions/yaml_model \
  yaml_pieces:20:models:fuzz/regressions/yaml_pieces; do
  IFS=: read -r target seconds seeds regressions <<< "$fuzz"
  cmake --build build-fuzz -j "$jobs" --target "gxc_fuzz_$target"
  mkdir -p "$fuzz_work/$target/corpus" "$fuzz_work/$target/artifacts"
  find "$seeds" ${regressions:+"$regressions"} -maxdepth 1 -type f \
    -exec cp {} "$fuzz_work/$target/corpus/" \;
  if ! "build-fuzz/fuzz/gxc_fuzz_$target" -max_total_time="$seconds" -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$fuzz_work/$target/artifacts/" \
    "$fuzz_work/$target/corpus"; then
    echo "gxc_fuzz_$target failed: the input is in $fuzz_work/$target/artifacts" >&2
    exit 1
  fi
done
rm -rf "$fuzz_work"
