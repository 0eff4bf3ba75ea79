"""Start-up, memory and accuracy of graphc on the real-model suite, beside
onnxruntime in the same run: the table of docs/models.md.

    $(tools/venv.sh)/bin/python tests/models/measure.py [--graphc build/bin/graphc] [--only NAME,...]
                                                               [--markdown docs/models.md]

For every export (tests/models/<model>/<variant>) and its first data set:

  - graphc run on the reference device and on cpu with the data set's
    inputs, outputs compared with PyTorch's (max |error|, and whether every
    element is within rtol 1e-3 / atol 1e-4);
  - time to first result: the wall time of `graphc run --device cpu`, a
    whole process, with an empty compiled-code cache (cold), then again
    with the cache the first run left (warm); its peak RSS;
  - onnxruntime (CPU provider, 2 intra-op threads): session creation plus
    the first run, timed inside Python after `import onnxruntime`, and the
    peak RSS of that process (Python and onnxruntime included);
  - the weight bytes (the model's initializers), for the RSS budget
    3 x weights + 150 MB.

Wall times and RSS come from /usr/bin/time -f '%e %M' for graphc. Runs
alternate between graphc and onnxruntime, model by model, so host noise
falls on both. With --markdown the generated section of the file is
rewritten (between <!-- models:begin --> and <!-- models:end -->).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RTOL, ATOL = 1e-3, 1e-4

ORT_SCRIPT = r"""
import json, resource, sys, time
import numpy as np, onnx, onnx.numpy_helper, onnxruntime as ort
path, inputs = sys.argv[1], sys.argv[2:]
feeds = {}
for arg in inputs:
    name, p = arg.split("=", 1)
    t = onnx.TensorProto()
    t.ParseFromString(open(p, "rb").read())
    feeds[name] = onnx.numpy_helper.to_array(t)
start = time.perf_counter()
options = ort.SessionOptions()
options.intra_op_num_threads = 2
session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
session.run(None, feeds)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, onnx.numpy_helper.to_array(t)


def timed(cmd, env):
    """(returncode, wall seconds, peak RSS MB, stderr) of one process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as times:
        p = subprocess.run(["/usr/bin/time", "-o", times.name, "-f", "%e %M"] + cmd, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall, rss = times.read().split()[-2:]
    return p.returncode, float(wall), int(rss) / 1024, p.stderr


def graphc_run(graphc, model_path, feeds, device, cache_dir, save_dir):
    env = dict(os.environ, GRAPHC_CACHE_DIR=cache_dir)
    cmd = [graphc, "run", model_path, "--device", device, "--save-outputs", save_dir]
    for name, path in feeds:
        cmd += ["--input", f"{name}={path}"]
    return timed(cmd, env)


def compare(save_dir, expected):
    """(max |error|, within tolerance) over every output."""
    worst, ok = 0.0, True
    for k, want in enumerate(expected):
        path = os.path.join(save_dir, f"output{k}.npy")
        if not os.path.exists(path):
            return float("nan"), False
        got = np.load(path).astype(np.float64)
        want = want.astype(np.float64)
        if got.shape != want.shape:
            return float("nan"), False
        err = np.abs(got - want)
        if err.size:
            worst = max(worst, float(err.max()))
        ok = ok and bool(np.all(err <= ATOL + RTOL * np.abs(want)))
    return worst, ok


def weight_bytes(model_path):
    m = onnx.load(model_path, load_external_data=True)
    return sum(onnx.numpy_helper.to_array(t).nbytes for t in m.graph.initializer)


def measure(graphc, model, variant):
    folder = os.path.join(HERE, model, variant)
    model_path = os.path.join(folder, "model.onnx")
    data = os.path.join(folder, "test_data_set_0")
    inputs = sorted(f for f in os.listdir(data) if f.startswith("input_"))
    outputs = sorted(f for f in os.listdir(data) if f.startswith("output_"))
    # The data sets' tensors are unnamed (as in ONNX's backend test data):
    # input_N is the model's N-th input that is not an initializer.
    graph = onnx.load(model_path, load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in initializers]
    feeds = [(names[k], os.path.join(data, f)) for k, f in enumerate(inputs)]
    expected = [read_pb(os.path.join(data, f))[1] for f in outputs]
    row = {"model": model, "exporter": "dynamo" if variant.startswith("dynamo") else "TorchScript",
           "batch": "dynamic" if "dynamic" in variant else "static",
           "external": variant.endswith("external"), "weights_mb": weight_bytes(model_path) / 2**20}
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        for device in ("reference", "cpu"):
            save = os.path.join(tmp, device)
            rc, wall, rss, err = graphc_run(graphc, model_path, feeds, device, cache, save)
            if device == "cpu":
                row["cold_s"], row["rss_mb"] = wall, rss
            worst, ok = compare(save, expected) if rc == 0 else (float("nan"), False)
            row[device] = {"ok": ok and rc == 0, "max_error": worst, "error": err.strip()[-300:] if rc else ""}
        rc, wall, rss, _ = graphc_run(graphc, model_path, feeds, "cpu", cache, os.path.join(tmp, "warm"))
        row["warm_s"] = wall
        row["rss_mb"] = max(row["rss_mb"], rss)
        ort = subprocess.run([sys.executable, "-c", ORT_SCRIPT, model_path] + [f"{n}={p}" for n, p in feeds],
                             capture_output=True, text=True)
        row["ort"] = json.loads(ort.stdout) if ort.returncode == 0 else {"seconds": float("nan"), "rss_mb": float("nan")}
    return row


def markdown(rows):
    lines = [
        "| model | exporter | batch | reference | cpu | max error | graphc first run | graphc second run |"
        " graphc peak RSS | onnxruntime session + first run | onnxruntime peak RSS | weights |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        batch = r["batch"] + (", external data" if r["external"] else "")
        err = max(r["reference"]["max_error"], r["cpu"]["max_error"])
        lines.append(
            f"| {r['model']} | {r['exporter']} | {batch} | {'pass' if r['reference']['ok'] else 'FAIL'} |"
            f" {'pass' if r['cpu']['ok'] else 'FAIL'} | {err:.1e} | {r['cold_s']:.2f} s | {r['warm_s']:.2f} s |"
            f" {r['rss_mb']:.0f} MB | {r['ort']['seconds']:.3f} s | {r['ort']['rss_mb']:.0f} MB |"
            f" {r['weights_mb']:.2f} MB |")
    return "\n".join(lines) + "\n"


def rewrite_section(path, text):
    with open(path) as f:
        doc = f.read()
    begin, end = "<!-- models:begin -->\n", "<!-- models:end -->"
    if begin not in doc or end not in doc:
        sys.exit(f"measure.py: {path} has no {begin.strip()} ... {end} section")
    head, rest = doc.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(head + begin + text + end + tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphc", default=os.path.join(ROOT, "build", "bin", "graphc"))
    parser.add_argument("--only", default="")
    parser.add_argument("--markdown", default="")
    args = parser.parse_args()
    models = sorted(d for d in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, d)) and not d.startswith("_"))
    if args.only:
        models = [m for m in models if m in args.only.split(",")]
    rows = []
    for model in models:
        variants = sorted(v for v in os.listdir(os.path.join(HERE, model))
                          if os.path.exists(os.path.join(HERE, model, v, "model.onnx")))
        for variant in variants:
            r = measure(args.graphc, model, variant)
            rows.append(r)
            print(f"{model}/{variant}: ref {r['reference']['ok']} cpu {r['cpu']['ok']} "
                  f"err {max(r['reference']['max_error'], r['cpu']['max_error']):.1e} "
                  f"graphc {r['cold_s']:.2f}/{r['warm_s']:.2f} s {r['rss_mb']:.0f} MB, "
                  f"ort {r['ort']['seconds']:.3f} s {r['ort']['rss_mb']:.0f} MB", flush=True)
            for device in ("reference", "cpu"):
                if r[device]["error"]:
                    print(f"  {device}: {r[device]['error']}", flush=True)
    table = markdown(rows)
    if args.markdown:
        rewrite_section(args.markdown, table)
    else:
        sys.stdout.write(table)
    failed = [r for r in rows if not (r["reference"]["ok"] and r["cpu"]["ok"])]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
