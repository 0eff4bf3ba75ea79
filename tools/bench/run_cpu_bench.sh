#!/usr/bin/env bash
# Runs the cpu backend's benchmarks against PyTorch (docs/performance.md).
# PyPI's torch (eager and torch.compile) and NumPy go into a virtual
# environment outside the source tree, made on first use.
#
#   tools/bench/run_cpu_bench.sh [BUILD_DIR]     (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
venv="${GRAPHC_BENCH_VENV:-$HOME/.cache/graphc-bench/venv}"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import torch, numpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "torch==2.12.0" numpy
fi
ninja -C "$build" graphc graphc-cpu-bench >/dev/null
exec "$venv/bin/python" "$here/cpu_bench.py" "$build"
