"""torch.compile(backend="graphc") against backend="inductor" and eager on
the real-model suite's PyTorch modules (and a two-layer MLP), in one run:

  first call   the time of the first call of the compiled module (Dynamo's
               tracing, the backend's compile, one run), each in a fresh
               process with empty caches (TORCHINDUCTOR_CACHE_DIR,
               GRAPHC_CACHE_DIR), after the process has imported torch and
               run the module once in eager: a cold compile.
  steady state the median latency of a call once compiled, graphc, Inductor
               and eager timed in interleaved rounds in one process (each
               round times each in turn, so host noise falls on all alike).

Batch 2, 2 threads (torch.set_num_threads, GRAPHC_NUM_THREADS), inference
(torch.no_grad, eval). Every compiled output is checked against eager's
(rtol 1e-3, atol 1e-4).

  tools/bench/run_torch_backends.sh [BUILD_DIR] [--only mlp,resnet18] [--rounds 5]
      [--markdown docs/performance.md --markdown docs/python.md]

With --markdown, the section between <!-- torch-backends:begin --> and
<!-- torch-backends:end --> of each file is rewritten with the table.
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model_peers import build_module, calls_for, close, geomean, median_ms, write_section  # noqa: E402

import make_models  # noqa: E402  (on sys.path through model_peers)

THREADS = 2
BATCH = 2


class MLP(torch.nn.Module):
    """The two-layer MLP of the issue's Inductor timing."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(256, 512)
        self.fc2 = torch.nn.Linear(512, 256)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def module(name):
    if name == "mlp":
        torch.manual_seed(0)
        return MLP().eval(), (lambda b: (torch.randn(b, 256),))
    model, make_inputs, _ = build_module(name)
    return model, make_inputs


def compiled(model, backend):
    if backend == "graphc":
        import graphc.dynamo  # noqa: F401  (registers the backend)
    return torch.compile(model, backend=backend)


def prepared(name):
    """In the child: 2 threads, the module, its batch-2 inputs and eager's output."""
    torch.set_num_threads(THREADS)
    model, make_inputs = module(name)
    args = make_inputs(BATCH)
    with torch.no_grad():
        return model, args, model(*args)


def child_first(name, backend):
    model, args, expected = prepared(name)
    with torch.no_grad():
        fn = compiled(model, backend)
        start = time.perf_counter()
        got = fn(*args)
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "agrees": close(got.numpy(), expected.numpy())}


def child_steady(name, rounds):
    model, args, expected = prepared(name)
    with torch.no_grad():
        variants = {"eager": model, "graphc": compiled(copy.deepcopy(model), "graphc"),
                    "inductor": compiled(copy.deepcopy(model), "inductor")}
        agrees = {}
        for key, fn in variants.items():
            for _ in range(3):
                got = fn(*args)
            agrees[key] = close(got.numpy(), expected.numpy())
        calls = calls_for(median_ms(lambda: model(*args), 20))
        times = {key: [] for key in variants}
        for _ in range(rounds):
            for key, fn in variants.items():
                times[key].append(median_ms(lambda: fn(*args), calls))
    return {"ms": {k: statistics.median(v) for k, v in times.items()}, "agrees": agrees}


def run_child(build, args, env_extra):
    env = dict(os.environ, GRAPHC_NUM_THREADS=str(THREADS), OMP_NUM_THREADS=str(THREADS),
               PYTHONPATH=os.path.join(os.path.abspath(build), "python"), **env_extra)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"] + args, capture_output=True,
                         text=True, env=env)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return json.loads(lines[-1])


def render(rows):
    out = [f"Measured {time.strftime('%Y-%m-%d')} by `tools/bench/run_torch_backends.sh build --markdown "
           f"docs/performance.md --markdown docs/python.md` (batch {BATCH}, {THREADS} threads, torch "
           f"{torch.__version__}, inference). First call: seconds, a fresh process with empty caches; steady "
           "state: milliseconds per call, medians of interleaved rounds.", "",
           "| model | first call graphc (s) | first call Inductor (s) | Inductor / graphc | steady graphc (ms) | "
           "steady Inductor (ms) | steady eager (ms) | graphc / Inductor | graphc / eager |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, first, steady in rows:
        bad = [k for k, ok in steady["agrees"].items() if not ok]
        bad += [f"{k} first call" for k, r in first.items() if not r["agrees"]]
        note = f" (differs: {', '.join(bad)})" if bad else ""
        g, i = first["graphc"]["seconds"], first["inductor"]["seconds"]
        ms = steady["ms"]
        out.append(f"| {name}{note} | {g:.2f} | {i:.2f} | {i / g:.1f}x | {ms['graphc']:.4f} | {ms['inductor']:.4f} | "
                   f"{ms['eager']:.4f} | {ms['graphc'] / ms['inductor']:.2f} | {ms['graphc'] / ms['eager']:.2f} |")
    firsts = [f["inductor"]["seconds"] / f["graphc"]["seconds"] for _, f, _ in rows]
    steadies = [s["ms"]["graphc"] / s["ms"]["inductor"] for _, _, s in rows]
    out += ["", f"Geometric means: first call Inductor / graphc **{geomean(firsts):.1f}x** (min {min(firsts):.1f}x); "
            f"steady state graphc / Inductor **{geomean(steadies):.2f}** (max {max(steadies):.2f})."]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--child", nargs="*")
    parser.add_argument("--only", default="")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--markdown", action="append", default=[])
    args = parser.parse_args()
    if args.child:
        kind, name = args.child[0], args.child[1]
        result = child_first(name, args.child[2]) if kind == "first" else child_steady(name, args.rounds)
        print(json.dumps(result))
        return
    only = [n for n in args.only.split(",") if n]
    names = [n for n in ["mlp"] + list(make_models.MODELS) if not only or n in only]
    rows = []
    for name in names:
        first = {}
        for backend in ("graphc", "inductor"):
            with tempfile.TemporaryDirectory() as caches:
                first[backend] = run_child(args.build, ["first", name, backend],
                                           {"TORCHINDUCTOR_CACHE_DIR": os.path.join(caches, "inductor"),
                                            "GRAPHC_CACHE_DIR": os.path.join(caches, "graphc"),
                                            "TRITON_CACHE_DIR": os.path.join(caches, "triton")})
        steady = run_child(args.build, ["steady", name, "--rounds", str(args.rounds)], {})
        rows.append((name, first, steady))
        ms = steady["ms"]
        print(f"{name:20s} first graphc {first['graphc']['seconds']:.2f} s inductor {first['inductor']['seconds']:.2f} s"
              f"  steady graphc {ms['graphc']:.4f} inductor {ms['inductor']:.4f} eager {ms['eager']:.4f} ms",
              flush=True)
    text = render(rows)
    print(text)
    for path in args.markdown:
        write_section(path, "torch-backends", text)


if __name__ == "__main__":
    main()
