#!/usr/bin/env bash
# Installs graphc's build and test dependencies (Debian bookworm, as root)
# and the Python environment (tools/venv.sh: PyPI's torch, nanobind,
# pytest, ...), configures and builds into build/ — the C++ library, the
# graphc command and the Python package (build/python) — and runs
# examples/mlp.graph.
#
#   tools/setup.sh            # install, build, run the example
#   tools/setup.sh --no-run   # install and build only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config python3   # build; python3 runs lit
  python3-dev python3-venv                   # the Python package's extension; tools/venv.sh
  libfmt-dev libcli11-dev                    # formatting, command line
  libgtest-dev libgmock-dev                  # unit tests
  libgomp1                                   # GNU OpenMP: the pool on an OpenMP team (tests/hardening)
  llvm-19-dev llvm-19-tools                  # LLVM 19: the CPU backend's JIT; FileCheck and lit
  libopenblas-dev liblapacke-dev             # BLAS/LAPACK (GEMM, eigh)
  libbenchmark-dev                           # tools/bench (graphc-cpu-bench)
  clang-19 libclang-rt-19-dev                # the libFuzzer targets (tests/fuzz)
  clang-format-19                            # tools/check-format.sh (.ci/run)
  graphviz                                   # renders `graphc compile --emit=dot` in a test
  libonnx-dev libprotobuf-dev                # the ONNX importer (frontend/onnx)
  nlohmann-json3-dev libzip-dev libxxhash-dev zlib1g-dev  # exported packages (deploy/): JSON, zip, checksums
  binutils                                   # ld: links an exported package's kernels
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

# The Python package is built against the environment's Python, which has
# nanobind (and torch and pytest for its tests).
venv="$(tools/venv.sh)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$venv/bin/python"
cmake --build build

if [[ "${1:-}" != "--no-run" ]]; then
  build/bin/graphc run examples/mlp.graph --dim B=2 --print-outputs \
    --input x=rand:1 --input w1=rand:2 --input b1=rand:3 --input w2=rand:4 --input b2=rand:5
fi
