#!/usr/bin/env bash
# The installed package, as a user gets it: `cmake --install` the build
# into a fresh prefix, build examples/embed against it with
# find_package(graphc) alone (no path into the source or build tree), and
# run it on cpu and on the reference interpreter. The example checks its
# own results against the reference and exits 1 on a mismatch; this also
# checks that the recompile was logged with its reason.
#
#   run-embed.sh BUILD_DIR SOURCE_DIR WORK_DIR [CXX_FLAGS [LINK_FLAGS]]
#
# CXX_FLAGS and LINK_FLAGS are the graphc build's own (a sanitizer build's
# library needs its runtime in the program that loads it).
set -euo pipefail
build=$1 src=$2 work=$3 cxxflags=${4:-} linkflags=${5:-}
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$src/examples/embed" -B "$work/embed" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$linkflags" > "$work/configure.log"
cmake --build "$work/embed" > "$work/build.log"
if grep -q -- "-I$src\|-I$build" "$work/embed/build.ninja"; then
  echo "the example's build reaches into the graphc tree" >&2
  exit 1
fi
"$work/embed/embed" cpu | tee "$work/cpu.txt"
"$work/embed/embed" reference > "$work/reference.txt"
grep -q "log: recompiling mlp: input 0 dim 0: 32 != 64" "$work/cpu.txt"
grep -q "^all results match the reference$" "$work/cpu.txt"
grep -q "^all results match the reference$" "$work/reference.txt"
