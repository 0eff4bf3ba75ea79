#!/usr/bin/env bash
# Makes (on first use) and prints the path of the virtual environment the
# real-model suite is generated in: PyPI's torch, torchvision,
# transformers, onnx, onnxscript (the dynamo exporter) and onnxruntime,
# outside the source tree under ~/.cache/graphc. Nothing of graphc's build
# or tests needs it: the suite it makes is committed (tests/models/README.md).
#
#   tests/models/venv.sh        # prints the venv's folder, creating it if needed
set -euo pipefail
venv=${GRAPHC_MODELS_VENV:-$HOME/.cache/graphc/venv-models}
stamp="$venv/.graphc-requirements"
requirements="torch==2.15.0 torchvision transformers==5.25.0 onnx onnxscript onnxruntime==1.32.0 numpy"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$requirements" ]]; then
  echo "venv.sh: making $venv ($requirements)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet $requirements >&2
  echo "$requirements" > "$stamp"
fi
echo "$venv"
