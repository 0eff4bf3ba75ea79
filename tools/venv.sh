#!/usr/bin/env bash
# Makes (on first use) and prints the path of the Python virtual
# environment graphc's Python side uses, outside the source tree under
# ~/.cache/graphc: PyPI's torch, torchvision, transformers, onnx, onnxscript
# (the dynamo exporter), onnxruntime and OpenVINO, which generate the
# real-model suite and run the peer benchmarks; nanobind and scikit-build-core, which build
# the Python package (python/); pytest, which runs its tests.
# tools/setup.sh makes it and points CMake's Python at it.
#
#   tools/venv.sh        # prints the venv's folder, creating it if needed
set -euo pipefail
venv=${GRAPHC_MODELS_VENV:-$HOME/.cache/graphc/venv-models}
stamp="$venv/.graphc-requirements"
requirements="torch==2.15.0 torchvision transformers==5.25.0 onnx onnxscript onnxruntime==1.32.0 openvino==2026.4.1 numpy nanobind==3.1.0 scikit-build-core==1.1.2 pytest"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$requirements" ]]; then
  echo "venv.sh: making $venv ($requirements)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet $requirements >&2
  echo "$requirements" > "$stamp"
fi
echo "$venv"
