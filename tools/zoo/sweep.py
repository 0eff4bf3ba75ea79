"""The zoo sweep: every model of tools/zoo/catalogue.py through
torch.compile(backend="graphc") with the check mode and through ONNX,
against eager PyTorch, each in a process of its own; a table of the
results.

    $(tools/venv.sh)/bin/python tools/zoo/sweep.py --markdown docs/zoo.md      # everything (hours)
    $(tools/venv.sh)/bin/python tools/zoo/sweep.py --subset ci --require-whole --no-timing  # CI's subset
    $(tools/venv.sh)/bin/python tools/zoo/sweep.py --only tv/swin_t,hf/llama/causal_lm

Results are kept per model under --results (default
~/.cache/graphc/zoo/) and reused unless --force, so a long sweep resumes
where it stopped and the table is rebuilt from what is there. Exit
status 1 when any model gives a wrong result silently (a mismatch), or,
with --require-whole, when a model of the sweep is not whole in graphc.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from datetime import date
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import catalogue  # noqa: E402

BEGIN, END = "<!-- zoo:begin -->", "<!-- zoo:end -->"


def result_path(results: str, name: str) -> str:
    return os.path.join(results, name.replace("/", "__") + ".json")


def run(group: List[str], args: argparse.Namespace, results: str) -> List[Dict[str, Any]]:
    """Runs the models of `group` (kept results reused unless --force) in
    one process; returns their results."""
    kept: Dict[str, Dict[str, Any]] = {}
    for name in group:
        if os.path.exists(result_path(results, name)) and not args.force:
            with open(result_path(results, name)) as f:
                r = json.load(f)
            onnx_done = r.get("onnx") in (None, "match", "export failed") or r.get("ort") != "match"
            finished = r.get("whole") and onnx_done or r.get("status") == "eager failed"
            if finished or not args.retry:
                kept[name] = r
    todo = [n for n in group if n not in kept]
    if todo:
        command = [sys.executable, os.path.join(HERE, "run_one.py"), *todo, "--image", str(args.image)]
        command += ["--no-onnx"] if args.no_onnx else []
        command += ["--no-timing"] if args.no_timing else []
        env = dict(os.environ, GRAPHC_ZOO_THREADS=str(max(1, 2 // args.jobs)))
        timeout = args.timeout * len(todo)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
            stdout, failure = done.stdout, f"exit status {done.returncode}: " + \
                (done.stderr.strip().splitlines() or [""])[-1][:300]
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            failure = f"over {args.timeout} s"
        for line in stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                kept[r["name"]] = r
        for name in todo:
            r = kept.setdefault(name, {"name": name, "status": "timeout" if "over" in failure else "crashed",
                                       "error": failure})
            os.makedirs(results, exist_ok=True)
            with open(result_path(results, name), "w") as f:
                json.dump(r, f, indent=1)
    return [kept[n] for n in group]


def groups_of(names: List[str]) -> List[List[str]]:
    """One process per torchvision model; one per transformers architecture
    (its base and head models share the imports)."""
    groups: Dict[str, List[str]] = {}
    for n in names:
        key = "/".join(n.split("/")[:2]) if n.startswith("hf/") else n
        groups.setdefault(key, []).append(n)
    return list(groups.values())


def cell_ops(r: Dict[str, Any]) -> str:
    if r.get("whole"):
        return "whole"
    parts = []
    if r.get("eager_ops"):
        ops = ", ".join(f"`{op.replace('aten.', '')}`" for op in sorted(r.get("ops_left", {}))[:4])
        parts.append(f"{r['eager_ops']} op(s) left: {ops}")
    if r.get("failed_partitions"):
        parts.append(f"{len(r['failed_partitions'])} failed partition(s)")
    if r.get("graph_breaks"):
        parts.append(f"{sum(r['graph_breaks'].values())} Dynamo graph break(s)")
    return "; ".join(parts) or "—"


def row(r: Dict[str, Any]) -> str:
    status = r.get("status", "?")
    match = {"match": f"yes ({r.get('max_abs_error', 0):.1e})", "MISMATCH": "**NO**"}.get(status, status)
    speed = f"{r['graphc_ms'] / r['eager_ms']:.2f}" if r.get("eager_ms") and r.get("graphc_ms") else ""
    compile_s = f"{r['compile_s']:.1f}" if "compile_s" in r else ""
    onnx = r.get("onnx", "")
    if onnx and r.get("ort") and r["ort"] != "match":
        onnx += f" (ort: {r['ort']})"
    return (f"| {r['name']} | {r.get('params_m', 0):.1f} | {match} | {cell_ops(r) if status == 'match' else r.get('error', '')[:120]} "
            f"| {compile_s} | {speed} | {onnx} |")


def summary(results: List[Dict[str, Any]]) -> List[str]:
    ran = [r for r in results if r.get("status") not in ("eager failed",)]
    lines = []
    for source, label in (("tv/", "torchvision"), ("hf/", "Hugging Face")):
        mine = [r for r in ran if r["name"].startswith(source)]
        if not mine:
            continue
        whole = sum(1 for r in mine if r.get("whole"))
        mismatches = [r["name"] for r in mine if r.get("status") == "MISMATCH" or r.get("onnx") == "MISMATCH"]
        archs = sorted({r["name"].split("/")[1] for r in mine})
        whole_archs = sorted({r["name"].split("/")[1] for r in mine if r.get("whole")}
                             - {r["name"].split("/")[1] for r in mine if not r.get("whole")})
        line = (f"- {label}: {len(mine)} models run in eager ({len(archs)} architectures); "
                f"whole in graphc {whole}/{len(mine)} ({100 * whole / len(mine):.0f}%)")
        if source == "hf/":
            line += f", architectures whole (base and head) {len(whole_archs)}/{len(archs)} " \
                    f"({100 * len(whole_archs) / max(1, len(archs)):.0f}%)"
        line += f"; wrong results: {len(mismatches)}" + (f" ({', '.join(mismatches)})" if mismatches else "")
        ort_ok = [r for r in mine if r.get("ort") == "match"]
        if ort_ok:
            graphc_ok = sum(1 for r in ort_ok if r.get("onnx") == "match")
            line += f"; ONNX exports onnxruntime runs: {len(ort_ok)}, of which graphc runs {graphc_ok} " \
                    f"({100 * graphc_ok / len(ort_ok):.0f}%)"
        lines.append(line)
    skipped = [r for r in results if r.get("status") == "eager failed"]
    if skipped:
        lines.append(f"- not counted: {len(skipped)} entries whose tiny config does not run in eager PyTorch")
    return lines


def markdown(results: List[Dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [f"Measured {date.today().isoformat()} by `tools/zoo/sweep.py{' --image ' + str(args.image) if args.image != 224 else ''}"
             f" --markdown docs/zoo.md` (2 threads; torch.compile with the check mode; match: every output within "
             f"rtol 1e-3, atol 1e-4 of eager's, and the largest error; speed: graphc's steady-state time / eager's, "
             f"interleaved rounds; ONNX: the dynamo exporter's model through graphc).", ""]
    lines += summary(results) + [""]
    lines += ["| model | params (M) | match | whole in graphc, or what is left | compile (s) | graphc / eager | ONNX |",
              "|---|---:|---|---|---:|---:|---|"]
    lines += [row(r) for r in results if r.get("status") != "eager failed"]
    skipped = [r for r in results if r.get("status") == "eager failed"]
    if skipped:
        lines += ["", "<details><summary>Entries whose tiny config does not run in eager PyTorch (not counted)</summary>",
                  "", "| model | error |", "|---|---|"]
        lines += [f"| {r['name']} | {r.get('error', '')[:160].replace('|', '/')} |" for r in skipped]
        lines += ["", "</details>"]
    return "\n".join(lines)


def write_markdown(path: str, text: str) -> None:
    with open(path) as f:
        page = f.read()
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} section")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as f:
        f.write(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subset", choices=["all", "ci", "torchvision", "hf"], default="all")
    parser.add_argument("--only", default="", help="comma-separated names (tv/NAME, hf/TYPE/base|HEAD)")
    parser.add_argument("--image", type=int, default=224, help="torchvision's input size")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per model")
    parser.add_argument("--results", default=os.path.expanduser("~/.cache/graphc/zoo"))
    parser.add_argument("--force", action="store_true", help="run models whose results are kept")
    parser.add_argument("--retry", action="store_true",
                        help="run again the kept models that are not whole in graphc or whose ONNX did not match")
    parser.add_argument("--no-onnx", action="store_true")
    parser.add_argument("--no-timing", action="store_true", help="skip the steady-state timing (CI)")
    parser.add_argument("--markdown", default="", help="rewrite the zoo section of this page")
    parser.add_argument("--require-whole", action="store_true", help="fail unless every model is whole in graphc")
    args = parser.parse_args()

    names = list(catalogue.catalogue(args.image))
    if args.only:
        names = [n for n in args.only.split(",") if n]
    elif args.subset == "ci":
        names = catalogue.CI_SUBSET
    elif args.subset in ("torchvision", "hf"):
        names = [n for n in names if n.startswith("tv/" if args.subset == "torchvision" else "hf/")]
    results_dir = os.path.join(args.results, f"image{args.image}")
    results: Dict[str, Dict[str, Any]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run, group, args, results_dir) for group in groups_of(names)]
        for future in concurrent.futures.as_completed(futures):
            for r in future.result():
                results[r["name"]] = r
                print(f"{r['name']}: {r.get('status')} "
                      f"{cell_ops(r) if r.get('status') == 'match' else r.get('error', '')[:200]}"
                      f"{' | onnx: ' + r['onnx'] if r.get('onnx') else ''}", flush=True)
    ordered = [results[n] for n in names]
    print("\n".join(summary(ordered)))
    if args.markdown:
        write_markdown(args.markdown, markdown(ordered, args))
    wrong = [r["name"] for r in ordered if r.get("status") == "MISMATCH" or r.get("onnx") == "MISMATCH"]
    if wrong:
        print(f"zoo: wrong results: {', '.join(wrong)}", file=sys.stderr)
        sys.exit(1)
    if args.require_whole:
        partial = [r["name"] for r in ordered if not r.get("whole")]
        if partial:
            print(f"zoo: not whole in graphc: {', '.join(partial)}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
