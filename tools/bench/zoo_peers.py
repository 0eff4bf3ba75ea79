"""graphc against onnxruntime on models nobody tuned for, each runtime in a
process of its own.

For each model of the zoo (tools/zoo/catalogue.py: torchvision at 224×224,
weights=None, statistics moved off identity) and each batch size, the model
is exported once with torch.onnx.export(dynamo=True) into a cache
(~/.cache/graphc/zoo-peers), then timed in rounds: each round starts one
fresh process per runtime, in turn,

  - graphc       `graphc bench MODEL.onnx` (GRAPHC_NUM_THREADS),
  - onnxruntime  an InferenceSession (CPU provider, all graph optimisations,
                 intra-op threads as many), in `python zoo_peers.py --time-ort`,
  - OpenVINO     the CPU plugin (PyPI's openvino) in f32 and in bf16 (its
                 default on a CPU with AVX512-BF16), as many inference
                 threads, one stream, in `python zoo_peers.py --time-ov`,

and each process reports the median of --iters runs after a warm-up. A
runtime's time is its least median over the rounds (host noise only ever
adds), so interleaved rounds put the same noise on both. Outputs are
checked by the zoo sweep (tools/zoo/sweep.py), not here. Then graphc's
profile of each model (`graphc bench --profile`): its GEMM steps' time
and GFLOP/s against the FMA peak the same threads reach
(graphc-cpu-bench's BM_FmaPeak), and its slowest steps.

    $(tools/venv.sh)/bin/python tools/bench/zoo_peers.py BUILD_DIR
        [--models regnet_y_400mf,resnet50 | --suite] [--torch] [--batches 1,8] [--rounds 3] [--threads 2]
        [--markdown docs/performance.md]

--torch adds torch eager and torch.compile (Inductor) on the module the
export came from, each in a process of its own (Inductor's compile in the
warm-up).

--suite times the real-model suite's architectures at realistic sizes
instead (suite_realistic.py: ViT, U-Net, a diffusion block, BERT,
DistilBERT, GPT-2, Llama, T5, Whisper), with their inputs saved beside
each export so that every runtime reads the same token ids. With
--markdown, the section between <!-- zoo-peers:begin --> and
<!-- zoo-peers:end --> of that file (suite-peers with --suite) is
rewritten with the table.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time
from datetime import date

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.expanduser("~/.cache/graphc/zoo-peers")
SUITE_MODELS = ["suite/vit", "suite/unet", "suite/diffusion_block", "suite/bert", "suite/distilbert", "suite/gpt2",
                "suite/llama", "suite/t5_encoder", "suite/whisper_encoder"]

# The vision architectures the performance issue timed, plus the suite's
# own at 224×224.
DEFAULT_MODELS = ["regnet_y_400mf", "mnasnet0_5", "googlenet", "squeezenet1_0", "resnet50", "densenet121",
                  "shufflenet_v2_x1_0", "swin_t", "resnet18", "mobilenet_v3_small", "resnext50_32x4d",
                  "efficientnet_b0", "convnext_tiny"]


def build_model(name, batch):
    """The PyTorch module `name` ("suite/NAME": suite_realistic.py, else a
    torchvision model of the zoo's catalogue) in eval mode and its inputs
    at `batch` as {name: tensor}."""
    if name.startswith("suite/"):
        import suite_realistic
        return suite_realistic.build(name[len("suite/"):], batch)
    sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))
    import catalogue
    model, inputs = catalogue.torchvision_entries(224)[f"tv/{name}"]()
    model.eval()
    return model, {k: v.repeat(batch, *[1] * (v.dim() - 1)) for k, v in inputs.items()}


def export(name, batch):
    """The model's ONNX file for this batch size (made once). A suite model
    ("suite/NAME", suite_realistic.py) also gets its inputs saved beside it
    (inputs_dir), which every runtime then reads: token ids must be ids."""
    suite = name.startswith("suite/")
    path = os.path.join(CACHE, f"{name.replace('/', '-')}-b{batch}.onnx")
    if not os.path.exists(path):
        import numpy as np
        import torch
        model, inputs = build_model(name, batch)
        os.makedirs(CACHE, exist_ok=True)
        with torch.no_grad():
            program = torch.onnx.export(model, (), kwargs=inputs, dynamo=True, verbose=False)
        if suite:
            os.makedirs(inputs_dir(path), exist_ok=True)
            for k, v in inputs.items():
                np.save(os.path.join(inputs_dir(path), f"{k}.npy"), v.numpy())
        program.save(path + ".tmp")
        os.replace(path + ".tmp", path)
    return path


def inputs_dir(path):
    return path + ".inputs"


def saved_inputs(path, names):
    """The inputs saved beside a model ({name: array} for those of `names`
    the export kept), or None: random ones."""
    if not os.path.isdir(inputs_dir(path)):
        return None
    import numpy as np
    return {n: np.load(os.path.join(inputs_dir(path), f"{n}.npy")) for n in names}


def graphc_inputs(path):
    """`graphc bench` arguments for the model's inputs."""
    args = []
    for k, n in enumerate(input_names(path)):
        saved = os.path.join(inputs_dir(path), f"{n}.npy")
        args += ["--input", f"{n}={saved}" if os.path.exists(saved) else f"{n}=rand:{k + 1}"]
    return args


def time_graphc(build, path, iters, threads):
    command = [os.path.join(build, "bin", "graphc"), "bench", path, "--iters", str(iters)] + graphc_inputs(path)
    env = dict(os.environ, GRAPHC_NUM_THREADS=str(threads))
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    m = re.search(r"median ([0-9.]+) ms", out.stdout + out.stderr)
    if not m:
        raise RuntimeError(f"graphc bench failed on {path}: {(out.stdout + out.stderr)[-400:]}")
    return float(m.group(1))


def gemm_flops(build, path):
    """Each GEMM step's FLOPs (2 · k · ∏outer, from `--emit=kernels`; a
    pool's window points count as k) and its geometry, by kernel name."""
    text = subprocess.run([os.path.join(build, "bin", "graphc"), "compile", path, "--emit=kernels"],
                          capture_output=True, text=True, timeout=1800).stdout
    flops = {}
    for block in ("\n" + text).split("\nkernel ")[1:]:
        name = block.split()[0]
        g = re.search(r"\n\s+gemm acc\[.*?\] = (?:.*?sum i\d+ in \[0, (\d+)\)|\w+_pool\(\w+\) over (\d+) points)"
                      r"(.*)\n\s+for (.*?):", block)
        if not g:
            continue
        points = 1
        for size in re.findall(r"in \[0, (\d+)\)", g.group(4)):
            points *= int(size)
        flops[name] = (2 * int(g.group(1) or g.group(2)) * points, g.group(3).strip())
    return flops


def profile(build, path, threads):
    """Where graphc's time goes on one model: GEMM steps (convolutions,
    matmuls, pools) with their GFLOP/s, and the rest."""
    flops = gemm_flops(build, path)
    command = [os.path.join(build, "bin", "graphc"), "bench", path, "--iters", "20", "--profile"] + graphc_inputs(path)
    out = subprocess.run(command, env=dict(os.environ, GRAPHC_NUM_THREADS=str(threads)), capture_output=True,
                         text=True, timeout=1800).stdout
    steps = []
    for line in out.splitlines():
        m = re.match(r"\s+([0-9.]+)\s+[0-9.]+%\s+\d+\s+(\w+) (\S+)", line)
        if m:
            steps.append((float(m.group(1)), m.group(2), m.group(3)))
    gemm_ms = sum(ms for ms, _, name in steps if name in flops)
    gemm_flops_total = sum(flops[name][0] for _, _, name in steps if name in flops)
    return {"total_ms": sum(ms for ms, _, _ in steps), "gemm_ms": gemm_ms,
            "gemm_gflops": gemm_flops_total / max(gemm_ms, 1e-9) / 1e6,
            "top": [(ms, name, f"{flops[name][0] / ms / 1e6:.0f} GFLOP/s" if name in flops else kind)
                    for ms, kind, name in sorted(steps, reverse=True)[:3]]}


def fma_peak(build):
    """GFLOP/s of FMAs alone on the pool's threads (graphc-cpu-bench)."""
    out = subprocess.run([os.path.join(build, "bin", "graphc-cpu-bench"), "--benchmark_filter=BM_FmaPeak",
                          "--benchmark_repetitions=3"], capture_output=True, text=True, timeout=600).stdout
    rates = [float(x) for x in re.findall(r"GFLOP=([0-9.]+)/s", out)]
    return max(rates) if rates else math.nan


def input_names(path):
    import onnx
    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def time_ort(path, iters, threads):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--time-ort", path, "--iters", str(iters),
                          "--threads", str(threads)], capture_output=True, text=True, timeout=1800)
    m = re.search(r"median ([0-9.]+) ms", out.stdout)
    if not m:
        raise RuntimeError(f"onnxruntime failed on {path}: {out.stderr[-400:]}")
    return float(m.group(1))


def print_median_ms(call, iters, warmups=3):
    """Warms `call` up, times `iters` calls and prints their median as
    the parent process reads it ("median X ms")."""
    for _ in range(warmups):
        call()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    print(f"median {times[len(times) // 2]:.4f} ms")


def ort_process(path, iters, threads):
    """The onnxruntime side, in this process: load, warm up, time."""
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    feed = saved_inputs(path, [i.name for i in session.get_inputs()]) or {
        i.name: rng.standard_normal([d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
        for i in session.get_inputs()}
    print_median_ms(lambda: session.run(None, feed), iters)


def time_openvino(path, iters, threads, precision):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--time-ov", path, "--precision", precision,
                          "--iters", str(iters), "--threads", str(threads)], capture_output=True, text=True,
                         timeout=1800)
    m = re.search(r"median ([0-9.]+) ms", out.stdout)
    if not m:
        raise RuntimeError(f"OpenVINO ({precision}) failed on {path}: {out.stderr[-400:]}")
    return float(m.group(1))


def openvino_process(path, iters, threads, precision):
    """The OpenVINO side, in this process: compile for the CPU plugin
    (latency hint: one stream, `threads` inference threads, the given
    precision), warm up, time synchronous inferences."""
    import numpy as np
    import openvino as ov
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU", {
        "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": precision})
    request = compiled.create_infer_request()
    rng = np.random.default_rng(1)
    feed = saved_inputs(path, [i.any_name for i in compiled.inputs]) or {
        i.any_name: rng.standard_normal(list(i.shape)).astype(np.float32) for i in compiled.inputs}
    print_median_ms(lambda: request.infer(feed), iters)


def time_torch(name, batch, iters, threads, mode):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--time-torch", name, "--batch", str(batch),
                          "--mode", mode, "--iters", str(iters), "--threads", str(threads)], capture_output=True,
                         text=True, timeout=3600)
    m = re.search(r"median ([0-9.]+) ms", out.stdout)
    if not m:
        raise RuntimeError(f"torch ({mode}) failed on {name} b{batch}: {out.stderr[-400:]}")
    return float(m.group(1))


def torch_process(name, batch, iters, threads, mode):
    """The PyTorch side, in this process: the module the export came from,
    on the inputs the other runtimes read, under torch.no_grad(); eager, or
    torch.compile's default (Inductor) with its compile in the warm-up."""
    import torch
    torch.set_num_threads(threads)
    path = export(name, batch)
    model, inputs = build_model(name, batch)
    saved = saved_inputs(path, list(inputs))
    inputs = {k: torch.from_numpy(v) for k, v in saved.items()} if saved else inputs
    run = torch.compile(model) if mode == "inductor" else model

    def call():
        with torch.no_grad():
            run(**inputs)

    print_median_ms(call, iters)


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def markdown(rows, profiles, peak, args):
    begin, end = f"<!-- {args.section}:begin -->", f"<!-- {args.section}:end -->"
    suite = args.models == ",".join(SUITE_MODELS)
    lines = [begin, "",
             f"Measured {date.today()} by `tools/bench/zoo_peers.py build {'--suite ' if suite else ''}"
             f"{'--torch ' if args.torch else ''}--batches "
             f"{args.batches} --rounds {args.rounds} --threads {args.threads}`: each runtime in a process of its own, "
             f"rounds interleaved, the least median of {args.iters} runs kept (fewer at batch 8); "
             + ("the real-model suite's architectures at realistic sizes (tools/bench/suite_realistic.py: 224×224 "
                "images, hidden 256, sequences of 128, random weights). " if suite else
                "torchvision at 224×224, weights=None. ") +
             "**ratio**: graphc's time over onnxruntime's (below 1: graphc is faster); **/ OV**: over OpenVINO's "
             "in f32; OpenVINO bf16 is its default precision on this CPU (AVX512-BF16), for reference."
             + (" torch eager and torch.compile (Inductor, its compile in the warm-up) run the module the export "
                "came from, each in its own process; **/ Inductor**: graphc's time over Inductor's." if args.torch
                else ""), "",
             "| model | batch | graphc ms | onnxruntime ms | OpenVINO f32 ms | OpenVINO bf16 ms | ratio | / OV |"
             + (" torch eager ms | Inductor ms | / Inductor |" if args.torch else ""),
             "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if args.torch else "")]
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {r['graphc']:.2f} | {r['ort']:.2f} | {r['ov_f32']:.2f} "
                     f"| {r['ov_bf16']:.2f} | **{r['ratio']:.2f}** | {r['graphc'] / r['ov_f32']:.2f} |"
                     + (f" {r['eager']:.2f} | {r['inductor']:.2f} | {r['graphc'] / r['inductor']:.2f} |"
                        if args.torch else ""))
    for batch in sorted({r["batch"] for r in rows}):
        at = [r for r in rows if r["batch"] == batch]
        lines.append(f"| geomean | {batch} | | | | | **{geomean([r['ratio'] for r in at]):.2f}** "
                     f"| {geomean([r['graphc'] / r['ov_f32'] for r in at]):.2f} |"
                     + (f" | | {geomean([r['graphc'] / r['inductor'] for r in at]):.2f} |" if args.torch else ""))
    if profiles:
        lines += ["", f"graphc's profile at batch {min(int(b) for b in args.batches.split(','))} "
                  f"(`graphc bench --profile`, one run of 20): the GEMM steps' (convolutions, matmuls, pools) "
                  f"share and GFLOP/s against the FMA peak of the same threads, "
                  f"{peak:.0f} GFLOP/s (`graphc-cpu-bench --benchmark_filter=BM_FmaPeak`), and the three "
                  "slowest steps.", "",
                  "| model | steps ms | GEMM steps ms | GEMM GFLOP/s | of peak | slowest steps |",
                  "|---|---:|---:|---:|---:|---|"]
        for name, p in profiles.items():
            top = "; ".join(f"{n} {ms:.2f} ms ({what})" for ms, n, what in p["top"])
            lines.append(f"| {name} | {p['total_ms']:.2f} | {p['gemm_ms']:.2f} | {p['gemm_gflops']:.0f} | "
                         f"{100 * p['gemm_gflops'] / peak:.0f}% | {top} |")
    lines += ["", end]
    with open(args.markdown) as f:
        text = f.read()
    if begin in text:
        text = text[:text.index(begin)] + "\n".join(lines) + text[text.index(end) + len(end):]
    else:
        text += "\n" + "\n".join(lines) + "\n"
    with open(args.markdown, "w") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--suite", action="store_true",
                        help="the real-model suite at realistic sizes (suite_realistic.py) instead of the zoo")
    parser.add_argument("--markdown", default="")
    parser.add_argument("--section", default="", help="the marked section --markdown rewrites "
                        "(zoo-peers, or suite-peers with --suite)")
    parser.add_argument("--no-profile", action="store_true", help="skip graphc's per-step profile")
    parser.add_argument("--time-ort", default="", help=argparse.SUPPRESS)
    parser.add_argument("--time-ov", default="", help=argparse.SUPPRESS)
    parser.add_argument("--precision", default="f32", help=argparse.SUPPRESS)
    parser.add_argument("--torch", action="store_true",
                        help="also time torch eager and torch.compile (Inductor), each in its own process")
    parser.add_argument("--time-torch", default="", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="eager", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_torch:
        torch_process(args.time_torch, args.batch, args.iters, args.threads, args.mode)
        return
    if args.time_ort:
        ort_process(args.time_ort, args.iters, args.threads)
        return
    if args.time_ov:
        openvino_process(args.time_ov, args.iters, args.threads, args.precision)
        return
    if args.suite:
        args.models = ",".join(SUITE_MODELS)
    args.section = args.section or ("suite-peers" if args.suite else "zoo-peers")
    rows = []
    for name in args.models.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            path = export(name, batch)
            iters = max(5, args.iters // batch)
            best = {"graphc": math.inf, "ort": math.inf, "ov_f32": math.inf, "ov_bf16": math.inf}
            if args.torch:
                best |= {"eager": math.inf, "inductor": math.inf}
            for _ in range(args.rounds):
                if args.torch:
                    for mode in ("eager", "inductor"):
                        best[mode] = min(best[mode], time_torch(name, batch, iters, args.threads, mode))
                best["graphc"] = min(best["graphc"], time_graphc(args.build, path, iters, args.threads))
                best["ort"] = min(best["ort"], time_ort(path, iters, args.threads))
                for precision in ("f32", "bf16"):
                    key = f"ov_{precision}"
                    best[key] = min(best[key], time_openvino(path, iters, args.threads, precision))
            row = {"model": name, "batch": batch, **best, "ratio": best["graphc"] / best["ort"]}
            rows.append(row)
            print(f"{name:22s} b{batch}  graphc {row['graphc']:8.2f} ms  onnxruntime {row['ort']:8.2f} ms  "
                  f"OpenVINO f32 {row['ov_f32']:8.2f} ms  bf16 {row['ov_bf16']:8.2f} ms  ratio {row['ratio']:.2f}  "
                  f"/ OV f32 {row['graphc'] / row['ov_f32']:.2f}"
                  + (f"  eager {row['eager']:8.2f} ms  Inductor {row['inductor']:8.2f} ms" if args.torch else ""),
                  flush=True)
    for batch in sorted({r["batch"] for r in rows}):
        at = [r for r in rows if r["batch"] == batch]
        print(f"geomean b{batch}: {geomean([r['ratio'] for r in at]):.2f} against onnxruntime, "
              f"{geomean([r['graphc'] / r['ov_f32'] for r in at]):.2f} against OpenVINO f32")
    profiles, peak = {}, math.nan
    if not args.no_profile:
        peak = fma_peak(args.build)
        print(f"FMA peak: {peak:.0f} GFLOP/s")
        batch = min(int(b) for b in args.batches.split(","))
        for name in args.models.split(","):
            profiles[name] = p = profile(args.build, export(name, batch), args.threads)
            print(f"{name:22s} steps {p['total_ms']:.2f} ms, GEMM {p['gemm_ms']:.2f} ms at {p['gemm_gflops']:.0f} "
                  f"GFLOP/s ({100 * p['gemm_gflops'] / peak:.0f}% of peak); slowest: {p['top']}", flush=True)
    if args.markdown:
        markdown(rows, profiles, peak, args)


if __name__ == "__main__":
    main()
