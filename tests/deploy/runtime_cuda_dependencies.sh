#!/usr/bin/env bash
# deploy.runtime_cuda_dependencies: the runtime's cuda module
# (libgraphc-runtime-cuda.so) links no compiler — no NVRTC, no LLVM — and not
# the CUDA driver (cudart loads it when a device is first asked for, so the
# module loads on a machine without one and says so); it exports its entry
# point and holds the cuda Executable.
set -euo pipefail
lib="$1"
needed="$(ldd "$lib")"
echo "$needed"
if grep -Ei 'libLLVM|libclang|protobuf|libonnx|nvrtc|libcuda\.so' <<<"$needed"; then
  echo "FAILED: $lib needs a compiler library or the CUDA driver" >&2
  exit 1
fi
if nm -D --undefined-only "$lib" | grep -E 'nvrtc|LLVM' | head -5 | grep .; then
  echo "FAILED: $lib calls a compiler" >&2
  exit 1
fi
exported="$(nm -D --defined-only "$lib")"
grep -q ' T graphc_runtime_cuda_plugin$' <<<"$exported" ||
  { echo "FAILED: $lib does not export graphc_runtime_cuda_plugin" >&2; exit 1; }
# Its code, hidden (--exclude-libs), is still there: the symbol table names it.
symbols="$(nm -C "$lib")"
grep -qF 'graphc::codegen::cuda::makeExecutable' <<<"$symbols" ||
  { echo "FAILED: $lib lacks the cuda Executable" >&2; exit 1; }
if grep -E 'graphc::frontend::|graphc::passes::|graphc::onnx::|llvm::|compileModule' <<<"$symbols" | head -5 | grep .; then
  echo "FAILED: $lib holds compiler code" >&2
  exit 1
fi
echo "ok: no compiler, no driver"
