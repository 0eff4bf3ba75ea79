"""graphc's cpu backend against onnxruntime, model by model, in one run.

For the models exported from PyTorch (tests/onnx/torch-export) and every
model of ONNX's backend test data: run each on onnxruntime (CPU execution
provider) and on graphc (`graphc run`, then `graphc bench` for time), check
both against the test's expected outputs (rtol 1e-3, atol 1e-7, as ONNX's
backend runner), and time both (median of repeated calls in process, after
a warm-up). Prints a line per model and rewrites the `peers` section of
docs/onnx.md. Run it through tools/bench/run_onnx_peers.sh, which makes the
virtual environment (onnxruntime, onnx and NumPy from PyPI).

  python onnx_peers.py BUILD_DIR [--suites node,...] [--no-docs]
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = "/usr/share/libonnx-testdata/data"
RTOL, ATOL = 1e-3, 1e-7


def read_set(test_dir, model):
    """Inputs by name and expected outputs of test_data_set_0."""
    data = os.path.join(test_dir, "test_data_set_0")
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    inputs, paths, outputs = {}, {}, []
    k = 0
    while os.path.exists(os.path.join(data, f"input_{k}.pb")):
        path = os.path.join(data, f"input_{k}.pb")
        tensor = onnx.load_tensor(path)
        name = tensor.name or (names[k] if k < len(names) else f"input_{k}")
        inputs[name] = onnx.numpy_helper.to_array(tensor)
        paths[name] = path
        k += 1
    k = 0
    declared = [o.type.tensor_type.elem_type for o in model.graph.output]
    while os.path.exists(os.path.join(data, f"output_{k}.pb")):
        out = onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"output_{k}.pb")))
        # ONNX 1.12's test data store bfloat16 results as their uint16 bits.
        if k < len(declared) and declared[k] == onnx.TensorProto.BFLOAT16 and out.dtype == np.uint16:
            out = (out.astype(np.uint32) << 16).view(np.float32)
        outputs.append(out)
        k += 1
    return inputs, paths, outputs


def comparable(a):
    """bf16 as f32: graphc writes it as 2-byte void (.npy has no bf16)."""
    a = np.asarray(a)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if str(a.dtype) == "bfloat16":
        return a.astype(np.float32)
    return a


def matches(got, want):
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        g, w = comparable(g), comparable(w)
        if g.shape != w.shape:
            return False
        if w.dtype.kind in "fc":
            if not np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=RTOL, atol=ATOL, equal_nan=True):
                return False
        elif not np.array_equal(g, w):
            return False
    return True


def timed(call, budget=0.3, most=300):
    """Median seconds of `call`, after one warm-up, over up to `most` calls or `budget` seconds."""
    call()
    times = []
    start = time.perf_counter()
    while len(times) < most and (time.perf_counter() - start < budget or len(times) < 5):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def run_ort(path, inputs):
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feed = {i.name: inputs[i.name] for i in session.get_inputs() if i.name in inputs}
    outputs = session.run(None, feed)
    seconds, _ = timed(lambda: session.run(None, feed))
    return outputs, seconds


def run_graphc(graphc, path, paths, iters_hint):
    args = [a for name, p in paths.items() for a in ("--input", f"{name}={p}")]
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([graphc, "run", path, *args, "--save-outputs", out], capture_output=True, text=True)
        if r.returncode != 0:
            return None, None, r.stderr.strip().splitlines()[0] if r.stderr.strip() else f"exit {r.returncode}"
        outputs = []
        k = 0
        while os.path.exists(os.path.join(out, f"output{k}.npy")):
            outputs.append(np.load(os.path.join(out, f"output{k}.npy")))
            k += 1
    r = subprocess.run([graphc, "bench", path, *args, "--iters", str(iters_hint)], capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) ms", r.stdout)
    return outputs, float(m.group(1)) / 1e3 if m else None, None


def models(suites):
    export = os.path.join(ROOT, "tests", "onnx", "torch-export")
    for name in sorted(os.listdir(export)):
        yield "torch-export", os.path.join(export, name)
    for suite in suites:
        folder = os.path.join(DATA, suite)
        for name in sorted(os.listdir(folder)):
            if os.path.exists(os.path.join(folder, name, "model.onnx")):
                yield suite, os.path.join(folder, name)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--suites", default="node,pytorch-converted,pytorch-operator,simple")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    graphc = os.path.join(args.build, "bin", "graphc")
    rows = []
    print(f"{'model':<58} {'graphc':>8} {'ort':>8} {'graphc ms':>10} {'ort ms':>10} {'ratio':>7}")
    for suite, test_dir in models(args.suites.split(",")):
        path = os.path.join(test_dir, "model.onnx")
        row = {"suite": suite, "name": os.path.basename(test_dir)}
        try:
            inputs, paths, expected = read_set(test_dir, onnx.load(path))
        except Exception:  # sequences and optionals, which are not TensorProtos
            print(f"{suite + '/' + row['name']:<58} (test data are not tensors: skipped)")
            continue
        try:
            got, row["ort_s"] = run_ort(path, inputs)
            row["ort_ok"] = matches(got, expected)
        except Exception as e:  # onnxruntime rejects some test models (training ops, ...)
            row["ort_error"] = str(e).splitlines()[0][:80]
        got, seconds, error = run_graphc(graphc, path, paths, 200)
        if error:
            row["graphc_error"] = error
        else:
            row["graphc_s"] = seconds
            row["graphc_ok"] = matches(got, expected)
        rows.append(row)
        fmt = lambda ok, err: "error" if err else ("ok" if ok else "DIFFERS")
        ratio = row["graphc_s"] / row["ort_s"] if row.get("graphc_s") and row.get("ort_s") else None
        print(f"{suite + '/' + row['name']:<58} {fmt(row.get('graphc_ok'), row.get('graphc_error')):>8} "
              f"{fmt(row.get('ort_ok'), row.get('ort_error')):>8} "
              f"{row['graphc_s'] * 1e3 if row.get('graphc_s') else float('nan'):>10.4f} "
              f"{row['ort_s'] * 1e3 if row.get('ort_s') else float('nan'):>10.4f} "
              f"{ratio if ratio else float('nan'):>7.2f}", flush=True)
    section = report(rows, args.suites.split(","))
    print(section)
    if not args.no_docs:
        write_section(os.path.join(ROOT, "docs", "onnx.md"), "peers", section)


def report(rows, suites):
    ort_version = onnxruntime.__version__
    lines = [f"### graphc against onnxruntime {ort_version}",
             "",
             "Produced by `tools/bench/run_onnx_peers.sh` (graphc's cpu backend and onnxruntime's CPU execution "
             "provider, both on every core; time is the median of repeated calls in process after a warm-up; "
             "\"ratio\" is graphc's time over onnxruntime's, below 1 when graphc is faster). Accuracy is "
             "against each test's expected outputs at ONNX's tolerance.",
             "",
             "| model | graphc | onnxruntime | graphc ms | onnxruntime ms | ratio |",
             "|---|---|---|---:|---:|---:|"]
    cell = lambda ok, err: "error" if err else ("matches" if ok else "**differs**")
    for r in rows:
        if r["suite"] != "torch-export":
            continue
        ratio = r["graphc_s"] / r["ort_s"] if r.get("graphc_s") and r.get("ort_s") else None
        lines.append(f"| {r['name']} | {cell(r.get('graphc_ok'), r.get('graphc_error'))} | "
                     f"{cell(r.get('ort_ok'), r.get('ort_error'))} | {r.get('graphc_s', 0) * 1e3:.4f} | "
                     f"{r.get('ort_s', 0) * 1e3:.4f} | {ratio:.2f} |" if ratio else
                     f"| {r['name']} | {cell(r.get('graphc_ok'), r.get('graphc_error'))} | "
                     f"{cell(r.get('ort_ok'), r.get('ort_error'))} | | | |")
    lines += ["", "The conformance models, per suite (models both ran). Most are tiny (tens of elements): "
              "their times measure each runtime's per-call overhead more than its kernels.", "",
              "| suite | both ran | graphc matches | onnxruntime matches | ratio, geometric mean | ratio, median | graphc faster |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for suite in suites:
        both = [r for r in rows if r["suite"] == suite and r.get("graphc_s") and r.get("ort_s")]
        ratios = [r["graphc_s"] / r["ort_s"] for r in both]
        lines.append(f"| {suite} | {len(both)} | {sum(bool(r.get('graphc_ok')) for r in both)} | "
                     f"{sum(bool(r.get('ort_ok')) for r in both)} | {geomean(ratios):.2f} | "
                     f"{statistics.median(ratios) if ratios else float('nan'):.2f} | "
                     f"{sum(x < 1 for x in ratios)} |")
    slow = sorted((r for r in rows if r["suite"] != "torch-export" and r.get("graphc_s") and r.get("ort_s")),
                  key=lambda r: r["graphc_s"] / r["ort_s"], reverse=True)[:8]
    lines += ["", "Where graphc is slowest against onnxruntime:", "",
              "| model | graphc ms | onnxruntime ms | ratio |", "|---|---:|---:|---:|"]
    for r in slow:
        lines.append(f"| {r['suite']}/{r['name']} | {r['graphc_s'] * 1e3:.4f} | {r['ort_s'] * 1e3:.4f} | "
                     f"{r['graphc_s'] / r['ort_s']:.2f} |")
    differs = [f"{r['suite']}/{r['name']}" for r in rows if r.get("graphc_s") and not r.get("graphc_ok")]
    lines += ["", f"graphc outputs that differ from the expected ones: {', '.join(differs) if differs else 'none'}."]
    return "\n".join(lines) + "\n"


def write_section(path, name, body):
    with open(path) as f:
        text = f.read()
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    section = f"{begin}\n{body}{end}"
    if begin in text and end in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text += "\n" + section + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote the {name} section of {path}")


if __name__ == "__main__":
    sys.exit(main())
