#!/usr/bin/env bash
# graphc's cpu backend against onnxruntime, torch eager and torch.compile on
# the real-model suite (docs/performance.md, "Real models"). The peers come
# from the suite's virtual environment (tools/venv.sh: PyPI's torch,
# torchvision, transformers, onnxruntime), made on first use outside the
# source tree.
#
#   tools/bench/run_model_peers.sh [BUILD_DIR] [--only NAME,...] [--batches 1,2,8] [--markdown docs/performance.md]
#
# These are the suite's tiny models, in this process: an overhead
# measurement. The suite at realistic sizes (224×224 images, hidden 256,
# sequences of 128), every runtime in a process of its own beside
# OpenVINO, is
#
#   tools/bench/run_model_peers.sh [BUILD_DIR] --realistic [--batches 1,8] [--markdown docs/performance.md]
#
# which runs zoo_peers.py --suite (suite_realistic.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
shift || true
venv="$("$here/../venv.sh")"
ninja -C "$build" graphc >/dev/null
if [ "${1:-}" = "--realistic" ]; then
  shift
  exec "$venv/bin/python" "$here/zoo_peers.py" "$build" --suite "$@"
fi
exec "$venv/bin/python" "$here/model_peers.py" "$build" "$@"
