#!/usr/bin/env bash
# Builds a libFuzzer target with clang-19 (libFuzzer + ASan + UBSan) into
# build-fuzz/; the run-*-fuzzer.sh scripts call it.
#
#   tests/fuzz/build-fuzzer.sh TARGET      (graphc_parser_fuzzer, graphc_onnx_fuzzer)
set -euo pipefail
cd "$(dirname "$0")/../.."
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1"
cmake -S . -B build-fuzz -G Ninja -DGRAPHC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
ninja -C build-fuzz "$1"
