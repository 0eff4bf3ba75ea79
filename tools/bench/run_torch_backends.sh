#!/usr/bin/env bash
# torch.compile(backend="graphc") against Inductor and eager on the suite's
# PyTorch modules: first-call (cold compile) and steady-state times
# (docs/performance.md and docs/python.md, "torch.compile backends"). Uses
# the Python package built into BUILD_DIR/python and tools/venv.sh's
# virtual environment.
#
#   tools/bench/run_torch_backends.sh [BUILD_DIR] [--only mlp,resnet18] [--rounds 5] [--markdown FILE]...
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
shift || true
venv="$("$here/../venv.sh")"
ninja -C "$build" _graphc graphc_python_sources >/dev/null
exec "$venv/bin/python" "$here/torch_backends.py" "$build" "$@"
