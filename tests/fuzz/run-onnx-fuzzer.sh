#!/usr/bin/env bash
# Builds the ONNX importer fuzzer (tests/fuzz/build-fuzzer.sh: clang-19,
# libFuzzer, ASan, UBSan) and runs it on a seed corpus of every model of
# ONNX's backend test data (libonnx-testdata) under 16 KiB, and the
# project's torch exports.
#
#   tests/fuzz/run-onnx-fuzzer.sh [SECONDS]     # default 600
#
# Crashes land in build-fuzz/onnx-crashes/; the log ends with libFuzzer's
# execution count ("Done N runs in S second(s)").
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
tests/fuzz/build-fuzzer.sh graphc_onnx_fuzzer
corpus=build-fuzz/onnx-corpus
mkdir -p "$corpus" build-fuzz/onnx-crashes
find /usr/share/libonnx-testdata/data tests/onnx -name model.onnx -size -16k -print0 | while IFS= read -r -d '' f; do
  cp "$f" "$corpus/$(echo "$f" | tr '/' '_')"
done
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-fuzz/tests/fuzz/graphc_onnx_fuzzer "$corpus" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -rss_limit_mb=4096 -artifact_prefix=build-fuzz/onnx-crashes/ -print_final_stats=1
