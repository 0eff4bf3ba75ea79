#!/usr/bin/env bash
# deploy.runtime_dependencies: the runtime library links no compiler, and no
# CUDA library (cuda packages run in its module, libgraphc-runtime-cuda.so).
set -euo pipefail
lib="$1"
needed="$(ldd "$lib")"
echo "$needed"
if grep -Ei 'libLLVM|libclang|protobuf|libonnx|nvrtc|libcu|libnv' <<<"$needed"; then
  echo "FAILED: $lib needs a compiler or CUDA library" >&2
  exit 1
fi
symbols="$(nm -DC --defined-only "$lib")"
# It must hold the runtime (so that the checks below look at the right file) ...
for want in graphc_load graphc_run 'graphc::deploy::loadPackage' 'graphc::codegen::cpu::makeExecutable'; do
  grep -qF "$want" <<<"$symbols" || { echo "FAILED: $lib lacks $want" >&2; exit 1; }
done
# ... and nothing of the parser, the passes, the ONNX importer or LLVM.
if grep -E 'graphc::frontend::|graphc::passes::|graphc::onnx::|llvm::' <<<"$symbols" | head -5 | grep .; then
  echo "FAILED: $lib holds compiler code" >&2
  exit 1
fi
echo "ok: $(wc -l <<<"$symbols") exported symbols, no compiler"
