#!/usr/bin/env bash
# Builds one libFuzzer target (tests/fuzz/build-fuzzer.sh: clang-19,
# libFuzzer, ASan, UBSan) and runs it on its seed corpus:
#
#   parser  every `// -----` chunk of every project .graph file
#   onnx    every model of ONNX's backend test data (libonnx-testdata)
#           under 16 KiB, and the project's torch exports
#   npy     the golden .npy files (numpy wrote them)
#   package packages build/bin/graphc exports of examples/ and tests/deploy
#           (whole, and their graph.json and weights: make_package_seeds.py)
#
#   tests/fuzz/run-fuzzer.sh parser|onnx|npy|package [SECONDS]     # default 600
#
# Crashes land in build-fuzz/NAME-crashes/; the log ends with libFuzzer's
# execution count ("Done N runs in S second(s)").
set -euo pipefail
cd "$(dirname "$0")/../.."
name=${1:?usage: run-fuzzer.sh parser|onnx|npy|package [SECONDS]}
seconds=${2:-600}
corpus=build-fuzz/$name-corpus
tests/fuzz/build-fuzzer.sh "graphc_${name}_fuzzer"
mkdir -p "$corpus" "build-fuzz/$name-crashes"
case "$name" in
  parser)
    max_len=4096
    find tests examples -name '*.graph' -print0 | while IFS= read -r -d '' f; do
      awk -v out="$corpus/$(echo "$f" | tr '/' '_')" '
        /^[ \t]*\/\/ -----[ \t]*$/ { n++; next }
        { print > (out "." n) }' "$f"
    done ;;
  onnx)
    max_len=16384
    find /usr/share/libonnx-testdata/data tests/onnx -name model.onnx -size -16k -print0 | while IFS= read -r -d '' f; do
      cp "$f" "$corpus/$(echo "$f" | tr '/' '_')"
    done ;;
  npy)
    max_len=4096
    find tests -name '*.npy' -size -4k -print0 | while IFS= read -r -d '' f; do
      cp "$f" "$corpus/$(echo "$f" | tr '/' '_')"
    done ;;
  package)
    max_len=65536
    seeds="$(mktemp -d)"
    for model in examples/mlp.graph examples/residual.graph tests/deploy/affine.graph; do
      build/bin/graphc export "$model" -o "$seeds/$(basename "$model" .graph).gcpkg"
    done
    python3 tests/fuzz/make_package_seeds.py "$corpus" "$seeds"/*.gcpkg
    rm -rf "$seeds" ;;
  *) echo "run-fuzzer.sh: unknown fuzzer '$name' (parser, onnx, npy or package)" >&2; exit 2 ;;
esac
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"build-fuzz/tests/fuzz/graphc_${name}_fuzzer" "$corpus" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
  -rss_limit_mb=4096 -artifact_prefix="build-fuzz/$name-crashes/" -print_final_stats=1
