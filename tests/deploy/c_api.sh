#!/usr/bin/env bash
# deploy.c_api: export affine.graph, run the package through the C API.
set -euo pipefail
graphc="$1" runner="$2" model="$3"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
"$graphc" export "$model" -o "$dir/affine.gcpkg"
"$runner" "$dir/affine.gcpkg"
