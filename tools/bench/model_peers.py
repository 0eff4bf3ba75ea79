"""graphc's cpu backend against its peers on the real-model suite, in one run.

For every model of tests/models (the PyTorch modules of make_models.py,
built with the same seeds, and their ONNX export with a dynamic batch) and
batch sizes 1, 2 and 8, the steady-state latency of one inference on

  - graphc cpu             `graphc bench` on the export (GRAPHC_NUM_THREADS),
  - onnxruntime, 2 threads  and 1 thread (CPU provider, all graph optimisations),
  - torch eager             the module under torch.no_grad(),
  - torch.compile           Inductor's CPU backend (default mode, a static
                            compile per batch size),

each the median of repeated calls after a warm-up. Peers are timed in
rounds: each round times every peer once, in turn, so that host noise
falls on all of them alike; a peer's time is the median over the rounds.
Every peer's output is checked against eager's (rtol 1e-3, atol 1e-4).

Then instructions per inference (valgrind's callgrind: stable on a shared
machine where times are not; `perf stat` has no counters on this virtual
machine) for graphc and onnxruntime on two models: the difference between
processes that run 1 + N and 1 + 2N inferences, divided by N, on one
thread each. Under valgrind the CPU reports no AVX-512, so both run their
AVX2 kernels.

  $(tools/venv.sh)/bin/python tools/bench/model_peers.py BUILD_DIR
      [--only resnet18,bert] [--batches 1,2,8] [--rounds 5] [--markdown docs/performance.md]

With --markdown, the section between <!-- model-peers:begin --> and
<!-- model-peers:end --> of that file is rewritten with the tables.
Run it through tools/bench/run_model_peers.sh, which makes the virtual
environment (PyPI's torch, torchvision, transformers, onnxruntime).
"""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
import make_models  # noqa: E402  (the suite's modules and inputs)

THREADS = 2
RTOL, ATOL = 1e-3, 1e-4


build_module = make_models.build_module  # the module as make_models.py builds it before exporting


def export_path(name):
    for variant in ("ts-dynamic", "dynamo-dynamic"):
        path = os.path.join(ROOT, "tests", "models", name, variant, "model.onnx")
        if os.path.exists(path):
            return path, variant
    return None, None


def median_ms(fn, calls):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def calls_for(ms):
    """Calls per round: about 50 ms of work, at least 10."""
    return max(10, min(2000, int(50 / max(ms, 1e-3))))


class GraphcPeer:
    def __init__(self, graphc, model_path, feeds, workdir):
        self.graphc, self.model = graphc, model_path
        self.args = []
        for name, value in feeds.items():
            path = os.path.join(workdir, f"{name}.npy")
            np.save(path, value)
            self.args += ["--input", f"{name}={path}"]
        self.env = dict(os.environ, GRAPHC_NUM_THREADS=str(THREADS))

    def time(self, calls):
        out = subprocess.run([self.graphc, "bench", self.model, "--iters", str(calls)] + self.args,
                             capture_output=True, text=True, env=self.env)
        match = re.search(r"median ([0-9.]+) ms", out.stdout)
        if not match:
            raise RuntimeError(f"graphc bench failed: {out.stderr.strip()[:400]}")
        return float(match.group(1))

    def outputs(self, workdir):
        out_dir = os.path.join(workdir, "graphc-out")
        shutil.rmtree(out_dir, ignore_errors=True)
        subprocess.run([self.graphc, "run", self.model, "--save-outputs", out_dir] + self.args, check=True,
                       capture_output=True, env=self.env)
        files = sorted(f for f in os.listdir(out_dir) if f.endswith(".npy"))
        return np.load(os.path.join(out_dir, files[0]))


def ort_session(path, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def close(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= ATOL + RTOL * np.abs(b)))


def measure(name, batch, graphc, rounds, workdir):
    model, make_inputs, names = build_module(name)
    path, _ = export_path(name)
    torch.manual_seed(1000 + batch)
    inputs = make_inputs(batch)
    feeds = {n: t.numpy() for n, t in zip(names, inputs)}
    with torch.no_grad():
        expected = model(*inputs).numpy()
    peers = {}
    g = GraphcPeer(graphc, path, feeds, workdir)
    peers["graphc"] = g.time
    sessions = {t: ort_session(path, t) for t in (2, 1)}
    for t, s in sessions.items():
        peers[f"ort{t}"] = (lambda s: lambda calls: median_ms(lambda: s.run(None, feeds), calls))(s)
    torch.set_num_threads(THREADS)

    def eager():
        with torch.no_grad():
            return model(*inputs)

    peers["eager"] = lambda calls: median_ms(eager, calls)
    compiled = torch.compile(model)
    start = time.perf_counter()
    with torch.no_grad():
        compiled_out = compiled(*inputs).numpy()
    compile_seconds = time.perf_counter() - start

    def run_compiled():
        with torch.no_grad():
            return compiled(*inputs)

    peers["compile"] = lambda calls: median_ms(run_compiled, calls)
    # Correctness, against eager.
    agree = {"graphc": close(g.outputs(workdir), expected), "compile": close(compiled_out, expected)}
    for t, s in sessions.items():
        agree[f"ort{t}"] = close(s.run(None, feeds)[0], expected)
    # Warm-up and the calls per round from a first estimate.
    calls = {}
    for peer, fn in peers.items():
        calls[peer] = calls_for(fn(10))
    times = {peer: [] for peer in peers}
    for _ in range(rounds):
        for peer, fn in peers.items():
            times[peer].append(fn(calls[peer]))
    result = {peer: statistics.median(ts) for peer, ts in times.items()}
    result["agree"] = agree
    result["compile_seconds"] = compile_seconds
    return result


def instructions(command, env=None):
    """Instructions the whole process executes, counted by callgrind."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + command,
                         capture_output=True, text=True, env=env)
    match = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or not match:
        raise RuntimeError(f"callgrind failed: {out.stderr.strip()[-400:]}")
    return int(match.group(1))


ORT_LOOP = r"""
import sys, numpy as np, onnxruntime as ort
path, n = sys.argv[1], int(sys.argv[2])
feeds = {a.split("=", 1)[0]: np.load(a.split("=", 1)[1]) for a in sys.argv[3:]}
o = ort.SessionOptions(); o.intra_op_num_threads = 1; o.inter_op_num_threads = 1
s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
for _ in range(1 + n): s.run(None, feeds)
"""


def instructions_per_inference(name, graphc, workdir, n=50):
    model, make_inputs, names = build_module(name)
    path, _ = export_path(name)
    torch.manual_seed(1002)
    feeds = {k: t.numpy() for k, t in zip(names, make_inputs(2))}
    args = []
    for k, v in feeds.items():
        p = os.path.join(workdir, f"{k}.npy")
        np.save(p, v)
        args.append(f"{k}={p}")
    # One thread each: a waiting thread's polling would be counted too. A
    # first run fills graphc's compiled-kernel cache for valgrind's CPU.
    env = dict(os.environ, GRAPHC_NUM_THREADS="1")
    instructions([graphc, "bench", path, "--iters", "1"] + [x for a in args for x in ("--input", a)], env)
    g = [instructions([graphc, "bench", path, "--iters", str(count)] + [x for a in args for x in ("--input", a)], env)
         for count in (n, 2 * n)]
    script = os.path.join(workdir, "ort_loop.py")
    with open(script, "w") as f:
        f.write(ORT_LOOP)
    o = [instructions([sys.executable, script, path, str(count)] + args) for count in (n, 2 * n)]
    return (g[1] - g[0]) / n, (o[1] - o[0]) / n


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--only", default="")
    parser.add_argument("--batches", default="1,2,8")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--markdown", default="")
    parser.add_argument("--no-instructions", action="store_true")
    args = parser.parse_args()
    graphc = os.path.abspath(os.path.join(args.build, "bin", "graphc"))
    only = [n for n in args.only.split(",") if n]
    batches = [int(b) for b in args.batches.split(",")]
    models = [m for m in make_models.MODELS if (not only or m in only) and export_path(m)[0]]
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for name in models:
            for batch in batches:
                r = measure(name, batch, graphc, args.rounds, workdir)
                rows.append((name, batch, r))
                bad = [p for p, ok in r["agree"].items() if not ok]
                print(f"{name:20s} b={batch}: graphc {r['graphc']:.4f}  ort2 {r['ort2']:.4f}  ort1 {r['ort1']:.4f}  "
                      f"eager {r['eager']:.4f}  compile {r['compile']:.4f} ms  graphc/ort2 "
                      f"{r['graphc'] / r['ort2']:.2f}" + (f"  DISAGREE: {','.join(bad)}" if bad else ""), flush=True)
        counts = []
        if not args.no_instructions:
            for name in ("resnet18", "bert"):
                if name in models:
                    g, o = instructions_per_inference(name, graphc, workdir)
                    counts.append((name, g, o))
                    print(f"{name}: instructions per inference graphc {g:,.0f}  onnxruntime {o:,.0f}", flush=True)
    text = render(rows, counts, batches)
    print(text)
    if args.markdown:
        write_section(args.markdown, "model-peers", text)


def write_section(path, name, text):
    """Rewrites the part of `path` between <!-- NAME:begin --> and
    <!-- NAME:end --> with `text` (appending the markers if missing)."""
    with open(path) as f:
        doc = f.read()
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in doc:
        doc = doc.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    doc = doc[:doc.index(begin) + len(begin)] + "\n" + text + doc[doc.index(end):]
    with open(path, "w") as f:
        f.write(doc)


def render(rows, counts, batches):
    out = [f"Measured {time.strftime('%Y-%m-%d')} by `tools/bench/run_model_peers.sh build --markdown "
           "docs/performance.md` (2 threads for graphc, onnxruntime-2, torch; torch "
           f"{torch.__version__}, onnxruntime {ort.__version__}). Milliseconds per inference, medians; "
           "**ratio** columns are graphc's time over the peer's (below 1: graphc is faster).", "",
           "| model | batch | graphc | onnxruntime 2t | onnxruntime 1t | torch eager | torch.compile | "
           "graphc / ort 2t | graphc / ort 1t | graphc / compile |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, batch, r in rows:
        bad = [p for p, ok in r["agree"].items() if not ok]
        note = f" (differs: {', '.join(bad)})" if bad else ""
        out.append(f"| {name}{note} | {batch} | {r['graphc']:.4f} | {r['ort2']:.4f} | {r['ort1']:.4f} | "
                   f"{r['eager']:.4f} | {r['compile']:.4f} | {r['graphc'] / r['ort2']:.2f} | "
                   f"{r['graphc'] / r['ort1']:.2f} | {r['graphc'] / r['compile']:.2f} |")
    out += ["", "| batch | geomean graphc / ort 2t | geomean graphc / ort 1t | geomean graphc / torch.compile | "
            "models slower than ort 2t |", "|---:|---:|---:|---:|---|"]
    for batch in batches:
        rs = [(n, r) for n, b, r in rows if b == batch]
        slower = [n for n, r in rs if r["graphc"] > r["ort2"]]
        out.append(f"| {batch} | {geomean([r['graphc'] / r['ort2'] for _, r in rs]):.2f} | "
                   f"{geomean([r['graphc'] / r['ort1'] for _, r in rs]):.2f} | "
                   f"{geomean([r['graphc'] / r['compile'] for _, r in rs]):.2f} | {', '.join(slower) or 'none'} |")
    if counts:
        out += ["", "Instructions per inference (callgrind, batch 2, one thread each, AVX2 kernels under valgrind):",
                "", "| model | graphc | onnxruntime | graphc / onnxruntime |", "|---|---:|---:|---:|"]
        for name, g, o in counts:
            out.append(f"| {name} | {g:,.0f} | {o:,.0f} | {g / o:.2f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
