#!/usr/bin/env python3
"""The cpu backend's benchmark table (P1-P6 of docs/performance.md), in one
run: graphc's in-process timings (graphc-cpu-bench, Google Benchmark,
median of 5 repetitions), PyTorch eager and torch.compile (Inductor's CPU
backend) and NumPy on the same sizes and thread count, the memory-bandwidth
floor (bytes moved / measured copy bandwidth) and graphc's compile time.

Run it through tools/bench/run_cpu_bench.sh, which installs torch from PyPI
into a virtual environment outside the source tree:

    tools/bench/run_cpu_bench.sh [BUILD_DIR]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = int(os.environ.get("GRAPHC_NUM_THREADS", os.cpu_count()))
torch.set_num_threads(THREADS)


def graphc_timings():
    out = subprocess.run(
        [os.path.join(BUILD, "bin", "graphc-cpu-bench"), "--benchmark_format=json",
         "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
        check=True, capture_output=True, text=True).stdout
    results = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].replace("/real_time", "")
        results[name] = b
    return results


def median_ms(fn, repeat=15):
    fn()
    fn()
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)


def eager_and_compiled(fn, *args):
    compiled = torch.compile(fn)
    with torch.no_grad():
        return median_ms(lambda: fn(*args)), median_ms(lambda: compiled(*args))


def peers():
    g = torch.Generator().manual_seed(0)
    r = {}
    n = 16 * 1024 * 1024
    x, a, b = (torch.randn(n, generator=g) for _ in range(3))
    r["P1"] = eager_and_compiled(lambda x, a, b: F.gelu(x * a + b), x, a, b)
    x, w, bias = torch.randn(4096, 1024, generator=g), torch.randn(1024, 1024, generator=g), torch.randn(1024, generator=g)
    r["P2"] = eager_and_compiled(lambda x, w, b: torch.relu(F.linear(x, w, b)), x, w, bias)
    x, w, bias = torch.randn(8192, 1024, generator=g), torch.randn(1024, generator=g), torch.randn(1024, generator=g)
    r["P3 softmax"] = eager_and_compiled(lambda x: torch.softmax(x, -1), x)
    r["P3 layer_norm"] = eager_and_compiled(lambda x, w, b: F.layer_norm(x, (1024,), w, b), x, w, bias)
    p, s, grad = torch.randn(n, generator=g), torch.rand(n, generator=g), torch.randn(n, generator=g)

    def adagrad_inplace():  # torch.optim.Adagrad's update, in place
        s.addcmul_(grad, grad)
        p.addcdiv_(grad, s.sqrt().add_(1e-10), value=-0.01)

    def adagrad(p, s, grad):
        s2 = s + grad * grad
        return p - 0.01 * grad / (s2.sqrt() + 1e-10), s2

    compiled = torch.compile(adagrad)
    r["P4"] = (median_ms(adagrad_inplace), median_ms(lambda: compiled(p, s, grad)))
    for batch, size in [(10000, 8), (2000, 32), (100, 128)]:
        m = torch.randn(batch, size, size, generator=g)
        m = (m + m.transpose(-1, -2)) / 2
        mn = m.numpy()
        r[f"P5 {batch}x{size}"] = (median_ms(lambda: torch.linalg.eigh(m), 5), median_ms(lambda: np.linalg.eigh(mn), 5))
    return r


# P6's graphs: the random pointwise graph at three sizes, and the chain and
# the balanced tree of hard edges 3 (a compile quadratic in size took 79 s
# and 267 s on them at 100,000 nodes).
COMPILE_GRAPHS = [("random", 1000), ("random", 10000), ("random", 30000), ("random", 100000), ("chain", 100000),
                  ("tree", 100000)]


def compile_times():
    out = {}
    for shape, nodes in COMPILE_GRAPHS:
        with tempfile.NamedTemporaryFile("w", suffix=".graph", delete=False) as f:
            f.write(subprocess.run([sys.executable, os.path.join(HERE, "random_pointwise_graph.py"), str(nodes),
                                    "--shape", shape], check=True, capture_output=True, text=True).stdout)
        # `graphc run` (compile stops after the passes): the whole process,
        # with an empty kernel cache so that every kernel is compiled.
        with tempfile.TemporaryDirectory() as cache:
            t = time.perf_counter()
            err = subprocess.run([os.path.join(BUILD, "bin", "graphc"), "run", f.name, "--device", "cpu",
                                  "--dim", "N=4096", "--time-passes"], check=True, capture_output=True, text=True,
                                 env=dict(os.environ, GRAPHC_CACHE_DIR=cache)).stderr
            wall = (time.perf_counter() - t) * 1e3
        os.unlink(f.name)
        passes = kernels = None
        count = 0
        for line in err.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "total":
                total = float(parts[2])
            if "backend cpu (kernels in parallel)" in line:
                kernels = float(parts[-2])
            count += len(parts) >= 2 and parts[1] == "kernel"
        passes = total - kernels if kernels is not None else None
        out[f"{shape} {nodes}"] = (passes, kernels, count, wall)
    return out


def main():
    gc = graphc_timings()
    peer = peers()
    copy = gc["BM_CopyBandwidth"]["bytes_per_second"]

    def ms(name):
        return gc[name]["real_time"]

    def floor(name):
        return gc[name]["bytes_moved"] / copy * 1e3

    print(f"# cpu backend, {THREADS} threads, {torch.__version__=}, copy bandwidth {copy / 1e9:.1f} GB/s\n")
    print("| benchmark | graphc ms | floor ms | graphc/floor | torch eager ms | eager/graphc | torch.compile ms | compile/graphc |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [("P1 gelu(x*a+b) 16M f32", "BM_P1_Gelu", "P1"),
            ("P3 softmax 8192x1024", "BM_P3_Softmax", "P3 softmax"),
            ("P3 layer_norm 8192x1024", "BM_P3_LayerNorm", "P3 layer_norm"),
            ("P4 Adagrad 16M (torch: in place)", "BM_P4_Adagrad", "P4")]
    for label, bench, key in rows:
        t, f = ms(bench), floor(bench)
        e, c = peer[key]
        print(f"| {label} | {t:.2f} | {f:.2f} | {t / f:.2f} | {e:.2f} | {e / t:.2f} | {c:.2f} | {c / t:.2f} |")
    t, bare = ms("BM_P2_LinearRelu"), ms("BM_P2_BareSgemm")
    e, c = peer["P2"]
    print(f"\n| P2 relu(linear) 4096x1024x1024 f32 | graphc ms | bare sgemm ms | graphc/sgemm | torch eager ms | "
          f"eager/graphc | torch.compile ms | compile/graphc |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| | {t:.2f} | {bare:.2f} | {t / bare:.3f} | {e:.2f} | {e / t:.2f} | {c:.2f} | {c / t:.2f} |")
    print("\n| P5 eigh f32 | graphc ms | torch.linalg.eigh ms | torch/graphc | numpy ms | numpy/graphc |")
    print("|---|---|---|---|---|---|")
    for batch, size in [(10000, 8), (2000, 32), (100, 128)]:
        t = ms(f"BM_P5_Eigh/{batch}/{size}")
        e, npy = peer[f"P5 {batch}x{size}"]
        print(f"| {batch}x{size}x{size} | {t:.2f} | {e:.2f} | {e / t:.2f} | {npy:.2f} | {npy / t:.2f} |")
    print("\n| eigh solver, 2000 matrices | " + " | ".join(f"n={n}" for n in (4, 8, 12, 16, 24, 32)) + " |")
    print("|---|" + "---|" * 6)
    for solver in ("Jacobi", "Lapack"):
        print(f"| {solver} ms | " + " | ".join(f"{ms(f'BM_Eigh{solver}/{n}'):.2f}" for n in (4, 8, 12, 16, 24, 32)) + " |")
    print("\n| P6 compile, pointwise graph | passes ms | kernels | kernels (LLVM O3 + JIT, parallel) ms "
          "| graphc run wall ms |")
    print("|---|---|---|---|---|")
    for name, (passes, kernels, count, wall) in compile_times().items():
        print(f"| {name} nodes | {passes:.1f} | {count} | {kernels:.1f} | {wall:.0f} |")


if __name__ == "__main__":
    main()
