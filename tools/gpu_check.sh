#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, CUDA 13 and PyTorch but no
# package manager, runs what tools/build_gpu_bundle.sh built on a CPU
# machine (carried over as build-gpu/bin and build-gpu/lib):
#
#   1. the cuda tests (graphc_cuda_tests: NVRTC compiles, and the GPU tests
#      against the reference: golden cases, project graphs, random graphs,
#      eigh, cond in replayed graphs, cuBLASLt; exported cuda packages run
#      through lib/graphc/libgraphc-runtime-cuda.so bit for bit as the
#      in-process compile), summarised;
#   2. the benchmarks (graphc-cuda-bench), plus torch.linalg.eigh on the same
#      sizes from the machine's PyTorch, printed as one table with the
#      targets of issue 5.
#
# Usage: tools/gpu_check.sh [--tests-only|--bench-only]. Exit 1 if a test
# fails or something the binaries need is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
bin=build-gpu/bin
[[ -x $bin/graphc_cuda_tests && -x $bin/graphc-cuda-bench ]] || { echo "gpu_check: no $bin (run tools/build_gpu_bundle.sh on the CPU machine and carry build-gpu/bin, build-gpu/lib)"; exit 1; }

# CUDA 13's libraries: the toolkit's, else PyTorch's nvidia-* wheels.
libs=$PWD/build-gpu/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && libs=$libs:$d
done
python=$(command -v python3 || command -v python || true)
if [[ -n $python ]]; then
  wheel_libs=$("$python" - <<'EOF' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
print(":".join(sorted({d for r in roots for d in glob.glob(os.path.join(r, "nvidia", "*", "lib"))})))
EOF
)
  [[ -n $wheel_libs ]] && libs=$libs:$wheel_libs
fi
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
missing=$(ldd $bin/graphc_cuda_tests $bin/graphc-cuda-bench build-gpu/lib/graphc/libgraphc-runtime-cuda.so | grep "not found" | sort -u)
if [[ -n $missing ]]; then
  echo "gpu_check: missing libraries:"; echo "$missing"; exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/# gpu: /'
export GRAPHC_CACHE_DIR=$(mktemp -d)
status=0

if [[ $mode != --bench-only ]]; then
  log=$(mktemp)
  $bin/graphc_cuda_tests --gtest_brief=1 > "$log" 2>&1; status=$?
  passed=$(grep -Eo '\[  PASSED  \] [0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
  skipped=$(grep -Eo '\[  SKIPPED \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' || echo 0)
  failed=$(grep -Eo '[0-9]+ FAILED TEST' "$log" | grep -Eo '^[0-9]+' || echo 0)
  echo "## cuda tests: $passed passed, $failed failed, $skipped skipped (exit $status)"
  grep -E '^\[  (FAILED|SKIPPED) \] [A-Z]' "$log" | head -40
  [[ $status -ne 0 ]] && tail -60 "$log"
fi

if [[ $mode != --tests-only ]]; then
  bench=$(mktemp)
  if ! $bin/graphc-cuda-bench > "$bench"; then status=1; fi
  torch=$(mktemp)
  [[ -n $python ]] && "$python" - > "$torch" 2>/dev/null <<'EOF'
import torch
for b, n in [(10000, 8), (2000, 32), (500, 100)]:
    a = torch.randn(b, n, n, device="cuda")
    a = a + a.transpose(-1, -2)
    torch.linalg.eigh(a); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(5): torch.linalg.eigh(a)
    e.record(); torch.cuda.synchronize()
    print(f"eigh {b}x{n}x{n} f32\t{s.elapsed_time(e) / 5:.4f}\ttorch {torch.__version__}")
EOF
  echo
  echo "| case | graphc ms | measure | ratio | target |"
  echo "|---|---|---|---|---|"
  while IFS=$'\t' read -r name ms metric ratio; do
    [[ $name == \#* ]] && { echo "$name"; continue; }
    target=""
    case $name in
      pointwise*) target="≥ 0.80 of copy" ;;
      softmax*|layer_norm*) target="≥ 0.70 of copy" ;;
      *bf16\ generated) target="≥ 0.60 of cuBLASLt" ;;
      *replay) target="≥ 3× faster" ;;
      eigh*)
        t=$(grep -F "$name" "$torch" | cut -f2)
        [[ -n $t ]] && ratio=$(awk -v g="$ms" -v t="$t" 'BEGIN {printf "%.2f× torch (%.3f ms)", t / g, t}')
        target="not slower than torch" ;;
    esac
    echo "| $name | $ms | $metric | $ratio | $target |"
  done < "$bench"
fi
rm -rf "$GRAPHC_CACHE_DIR"
exit $status
