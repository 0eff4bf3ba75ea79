#!/usr/bin/env bash
# Builds, on this (CPU) machine, what tools/gpu_check.sh runs on a GPU
# machine that has CUDA 13 and PyTorch but no package manager and no LLVM:
#
#   build-gpu/bin/graphc_cuda_tests    the cuda tests (GoogleTest linked in)
#   build-gpu/bin/graphc-cuda-bench    the cuda benchmarks
#   build-gpu/lib/graphc/libgraphc-runtime-cuda.so
#                                      the runtime's cuda module, which the
#                                      tests' cuda packages load
#   build-gpu/lib/                     the non-CUDA shared libraries they need
#                                      (OpenBLAS/LAPACK(E), gfortran, fmt,
#                                      libzip, xxhash)
#
# Release, without LLVM. The C and C++ runtimes (glibc, libstdc++ ≥ GCC 12)
# and the CUDA libraries (NVRTC, cuSOLVER, cuBLASLt) come from the GPU
# machine; the script prints the newest glibc symbol version the binaries ask for.
# Carry: build-gpu/bin and build-gpu/lib (the script prints their size).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRAPHC_WITH_LLVM=OFF -DGRAPHC_WITH_ONNX=OFF -DCMAKE_EXE_LINKER_FLAGS= > /dev/null
rm -rf build-gpu/lib
cmake --build build-gpu --target graphc_cuda_tests graphc-cuda-bench graphc-runtime-cuda
module=build-gpu/lib/graphc/libgraphc-runtime-cuda.so
strip build-gpu/bin/graphc_cuda_tests build-gpu/bin/graphc-cuda-bench
strip --strip-unneeded "$module"
mkdir -p build-gpu/lib
# Every dependency outside the C library and CUDA's own, copied under its soname.
for bin in build-gpu/bin/graphc_cuda_tests build-gpu/bin/graphc-cuda-bench "$module"; do
  ldd "$bin" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r soname path; do
  case "$soname" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libstdc++*|libgcc_s*) continue ;;
    libcu*|libnv*) continue ;;  # the GPU machine's CUDA 13
  esac
  cp -L "$path" "build-gpu/lib/$soname"
done
du -sh build-gpu/bin build-gpu/lib
echo "needs: $(objdump -T build-gpu/bin/* build-gpu/lib/*.so* "$module" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)," \
  "$(objdump -T build-gpu/bin/* | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)"
echo "carry: build-gpu/bin build-gpu/lib; run: tools/gpu_check.sh"
