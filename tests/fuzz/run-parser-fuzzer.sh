#!/usr/bin/env bash
# Builds the parser fuzzer (tests/fuzz/build-fuzzer.sh: clang-19, libFuzzer,
# ASan, UBSan) and runs it on a seed corpus made from every .graph file of
# the project.
#
#   tests/fuzz/run-parser-fuzzer.sh [SECONDS]     # default 600
#
# Crashes land in build-fuzz/crashes/; the log ends with libFuzzer's
# execution count ("Done N runs in S second(s)").
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
tests/fuzz/build-fuzzer.sh graphc_parser_fuzzer
corpus=build-fuzz/corpus
mkdir -p "$corpus" build-fuzz/crashes
# Seeds: each `// -----` chunk of every .graph file is one input.
find tests examples -name '*.graph' -print0 | while IFS= read -r -d '' f; do
  awk -v out="$corpus/$(echo "$f" | tr '/' '_')" '
    /^[ \t]*\/\/ -----[ \t]*$/ { n++; next }
    { print > (out "." n) }' "$f"
done
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-fuzz/tests/fuzz/graphc_parser_fuzzer "$corpus" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=4096 -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1
