#!/usr/bin/env bash
# graphc's cpu backend against onnxruntime, torch eager and torch.compile on
# the real-model suite (docs/performance.md, "Real models"). The peers come
# from the suite's virtual environment (tools/venv.sh: PyPI's torch,
# torchvision, transformers, onnxruntime), made on first use outside the
# source tree.
#
#   tools/bench/run_model_peers.sh [BUILD_DIR] [--only NAME,...] [--batches 1,2,8] [--markdown docs/performance.md]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
shift || true
venv="$("$here/../venv.sh")"
ninja -C "$build" graphc >/dev/null
exec "$venv/bin/python" "$here/model_peers.py" "$build" "$@"
