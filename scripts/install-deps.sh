#!/usr/bin/env bash
# Installs the Debian packages gxc builds with, only those that are missing (idempotent).
set -euo pipefail

# graphviz: `dot`, which draws what `gxc compile --emit dot` writes (the README's picture).
# python3-torch, python3-torchvision: tests/onnx/export_networks.py exports the test networks.
# python3-venv: the ONNX conformance runner's environment (scripts/python-env.sh).
# python3-dev: Python's headers, which the Python module (python/) is compiled against.
# clang-14 and libclang-rt-14-dev (libFuzzer, AddressSanitizer): the parsers' fuzz targets;
# libomp-14-dev: clang's OpenMP, which that build's CMake asks for (runtime/, tests/).
# libzip-dev: .npz archives (zip files of .npy arrays), the training data of `gxc train`.
# libboost-dev (header-only Boost.CRC): the CRC-32C of TensorBoard's event records.
# ocl-icd-opencl-dev: Debian's oneDNN is built with its OpenCL GPU runtime, and its CMake
# config requires OpenCL (a recommendation of libdnnl-dev, which --no-install-recommends skips).
# protobuf-compiler: protoc, which compiles gxc's subset of TensorBoard's event schema.
# libopenblas-openmp-dev: OpenBLAS on OpenMP's threads, the pool oneDNN and the generated host
# kernels use too (CMakeLists.txt says why one pool).
# libjemalloc-dev, pkgconf: jemalloc, the allocator of gxc and gxc-opt (tools/CMakeLists.txt).
# time: /usr/bin/time, the peak memory figures of bench/peers.py.
# ccache: a source compiled before with the same flags is not compiled again (CMakeLists.txt).
packages=(cmake g++ make ccache python3 libyaml-cpp-dev libgtest-dev libcli11-dev libfmt-dev
          nlohmann-json3-dev libzip-dev libopenblas-openmp-dev libdnnl-dev libjemalloc-dev pkgconf
          ocl-icd-opencl-dev libonnx-dev libprotobuf-dev protobuf-compiler libboost-dev llvm-14-tools graphviz
          python3-torch python3-torchvision python3-venv python3-dev clang-14 libclang-rt-14-dev libomp-14-dev time)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
