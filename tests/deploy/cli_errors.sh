#!/usr/bin/env bash
# deploy.cli_errors: graphc export's refusals — each a one-line error and
# the documented exit status (1 diagnosed, 2 usage) — and `graphc run` of
# a damaged package.
set -uo pipefail
graphc="$1" model="$2" cuda="${3:-}"  # cuda: "cuda" when the build has the cuda backend
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
failed=0
expect() {  # STATUS TEXT COMMAND...
  local status="$1" text="$2"
  shift 2
  local out
  out="$("$@" 2>&1)"
  local got=$?
  if [[ $got != "$status" || "$out" != *"$text"* ]]; then
    echo "FAILED: $* -> $got: $out (wanted $status and '$text')"
    failed=1
  else
    echo "ok: $* -> $got: $(head -1 <<<"$out")"
  fi
}
expect 2 "export needs -o" "$graphc" export "$model" -o ""
expect 2 "--weights" "$graphc" export "$model" -o "$dir/a.gcpkg" --weights int3
expect 2 "--dim B: 'x' is not a non-negative integer" "$graphc" export "$model" -o "$dir/a.gcpkg" --dim B=x
expect 2 "--dim expects NAME=VALUE, got 'B'" "$graphc" export "$model" -o "$dir/a.gcpkg" --dim B
expect 1 "has no symbolic size Q" "$graphc" export "$model" -o "$dir/a.gcpkg" --dim Q=2
expect 1 "cannot write the package" "$graphc" export "$model" -o "$dir/no/such/folder/a.gcpkg"
if [[ $cuda == cuda ]]; then
  expect 0 "" "$graphc" export "$model" -o "$dir/c.gcpkg" --device cuda --arch sm_90 --weights mxfp8
  if [[ -n $(nvidia-smi -L 2>/dev/null) ]]; then
    expect 0 "" "$graphc" run "$dir/c.gcpkg" --dim B=2 --input x=rand:1
  else  # without a GPU the package loads only to say so
    expect 1 "c.gcpkg: no CUDA device:" "$graphc" run "$dir/c.gcpkg" --dim B=2 --input x=rand:1
  fi
else
  expect 1 "built without the cuda backend" "$graphc" export "$model" -o "$dir/a.gcpkg" --device cuda
fi
expect 0 "" "$graphc" export "$model" -o "$dir/a.gcpkg" --weights bf16
expect 0 "" "$graphc" export "$model" -o "$dir/a.gcpkg" --dim B=?
expect 2 "do not apply to it" "$graphc" run "$dir/a.gcpkg" --device reference --dim B=2 --input x=rand:1
head -c 3000 "$dir/a.gcpkg" >"$dir/cut.gcpkg"
expect 1 "cut.gcpkg: not a graphc package" "$graphc" run "$dir/cut.gcpkg" --dim B=2 --input x=rand:1
exit $failed
