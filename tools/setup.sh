#!/usr/bin/env bash
# Installs graphc's build and test dependencies (Debian bookworm, as root),
# configures and builds into build/, and runs examples/mlp.graph.
#
#   tools/setup.sh            # install, build, run the example
#   tools/setup.sh --no-run   # install and build only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config python3   # build; python3 runs lit
  libfmt-dev libcli11-dev                    # formatting, command line
  libgtest-dev libgmock-dev                  # unit tests
  llvm-19-dev llvm-19-tools                  # LLVM 19: the CPU backend's JIT; FileCheck and lit
  libopenblas-dev liblapacke-dev             # BLAS/LAPACK (GEMM, eigh)
  libbenchmark-dev                           # tools/bench (graphc-cpu-bench)
  clang-19 libclang-rt-19-dev                # the libFuzzer targets (tests/fuzz)
  clang-format-19                            # tools/check-format.sh (.ci/run)
  graphviz                                   # renders `graphc compile --emit=dot` in a test
  libonnx-dev libprotobuf-dev                # the ONNX importer (frontend/onnx)
  libonnx-testdata                           # ONNX's backend test data: the conformance ctest
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build

if [[ "${1:-}" != "--no-run" ]]; then
  build/bin/graphc run examples/mlp.graph --dim B=2 --print-outputs \
    --input x=rand:1 --input w1=rand:2 --input b1=rand:3 --input w2=rand:4 --input b2=rand:5
fi
