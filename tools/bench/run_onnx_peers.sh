#!/usr/bin/env bash
# graphc's cpu backend against onnxruntime on the ONNX models (docs/onnx.md,
# section "peers"). PyPI's onnxruntime, onnx and NumPy go into a virtual
# environment outside the source tree, made on first use.
#
#   tools/bench/run_onnx_peers.sh [BUILD_DIR] [--suites node,...] [--no-docs]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
shift || true
venv="${GRAPHC_ONNX_VENV:-$HOME/.cache/graphc-bench/onnx-venv}"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet onnxruntime onnx numpy
fi
ninja -C "$build" graphc >/dev/null
exec "$venv/bin/python" "$here/onnx_peers.py" "$build" "$@"
