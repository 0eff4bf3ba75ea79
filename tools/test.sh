#!/usr/bin/env bash
# Builds graphc (configuring build/ if needed) and runs the whole test
# suite with ctest: unit tests, golden numerics, lit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f build/build.ninja ]] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
ctest --test-dir build --output-on-failure -j2
