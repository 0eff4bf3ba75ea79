#!/usr/bin/env bash
# Builds graphc (configuring build/ if needed) and runs the whole test
# suite with ctest: unit tests, golden numerics, lit tests, the real-model
# suite, the Python package's and torch.compile backend's pytest suites. Then the
# hardening tests (tests/hardening: hostile inputs, concurrency) once more
# under AddressSanitizer + UBSan and under ThreadSanitizer, each in a build
# of just that binary (the ci-asan and ci-tsan presets).
#
#   tools/test.sh                  # everything
#   tools/test.sh --no-sanitizers  # the main suite only
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python package and its tests build against tools/venv.sh's Python.
[[ -f build/build.ninja ]] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPython_EXECUTABLE="$(tools/venv.sh)/bin/python"
cmake --build build
ctest --test-dir build --output-on-failure -j2

if [[ "${1:-}" != "--no-sanitizers" ]]; then
  for preset in ci-asan ci-tsan; do
    echo "== the hardening tests under $preset"
    [[ -f build-$preset/build.ninja ]] || cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset"
    ctest --preset "$preset"
  done
fi
