"""graphc's attention kernels against the unfused graph and onnxruntime, at
realistic size, each runtime in a process of its own.

Models: Hugging Face BERT (torch's SDPA), BART (SDPA, encoder and decoder)
and BLOOM (ALiBi added to the scores), random init, hidden 256, 4 heads of
64, FFN 1024, 4 layers (BART 2 + 2), batch 2, sequence 128, exported once
with torch.onnx.export(dynamo=True) into ~/.cache/graphc/attention-peers.
Then timed in rounds, each round one fresh process per runtime, in turn:

  - graphc          `graphc bench` (the default pipeline: attention kernels),
  - graphc unfused  the same pipeline without fuse-attention (scores,
                    softmax and values as three kernels),
  - onnxruntime     an InferenceSession (CPU provider, all graph
                    optimisations, --threads intra-op threads);

a runtime's time is its least median over the rounds. Then, from one
profile of each (`graphc bench --profile`; onnxruntime's session profile),
the time per inference of the attention ops alone: graphc's attention
kernels, the unfused graph's scores + softmax + values kernels, and
onnxruntime's nodes from the scores' MatMul/FusedMatMul through the
Softmax to the values' MatMul.

    $(tools/venv.sh)/bin/python tools/bench/attention_peers.py BUILD_DIR
        [--models bert,bart,bloom] [--rounds 3] [--iters 100] [--threads 2]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

from zoo_peers import print_median_ms  # (this folder: the script's own)

CACHE = os.path.expanduser("~/.cache/graphc/attention-peers")
BATCH, SEQUENCE, VOCAB = 2, 128, 1000
UNFUSED = "verify,infer-types,canonicalize,fold-batch-norm,cond-fold,cond-to-select,decompose,split-reduction,cse,dce,fuse"


def build_model(name):
    import transformers as T
    if name == "bert":
        return T.BertModel(T.BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                        intermediate_size=1024, vocab_size=VOCAB, max_position_embeddings=512))
    if name == "bart":
        return T.BartModel(T.BartConfig(d_model=256, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                        decoder_attention_heads=4, encoder_ffn_dim=1024, decoder_ffn_dim=1024,
                                        vocab_size=VOCAB, max_position_embeddings=512))
    if name == "bloom":
        return T.BloomModel(T.BloomConfig(hidden_size=256, n_layer=4, n_head=4, vocab_size=VOCAB))
    raise ValueError(f"unknown model {name}")


def export(name):
    """The model's ONNX file (made once): inputs input_ids, attention_mask."""
    path = os.path.join(CACHE, f"{name}-b{BATCH}-s{SEQUENCE}.onnx")
    if os.path.exists(path):
        return path
    import torch
    torch.manual_seed(0)
    model = build_model(name).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.randint(0, VOCAB, (BATCH, SEQUENCE))
    mask = torch.ones(BATCH, SEQUENCE, dtype=torch.int64)
    os.makedirs(CACHE, exist_ok=True)
    with torch.no_grad():
        program = torch.onnx.export(LastHiddenState(model), (ids, mask), input_names=["input_ids", "attention_mask"],
                                    dynamo=True, verbose=False)
    program.save(path + ".tmp")
    os.replace(path + ".tmp", path)
    return path


def graphc_command(build, path, iters, passes=None, profile=False):
    command = [os.path.join(build, "bin", "graphc"), "bench", path, "--iters", str(iters),
               "--input", "input_ids=rand:1", "--input", "attention_mask=rand:2"]
    if passes:
        command += ["--passes", passes]
    if profile:
        command += ["--profile"]
    return command


def run(command, threads):
    out = subprocess.run(command, env=dict(os.environ, GRAPHC_NUM_THREADS=str(threads)), capture_output=True,
                         text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {(out.stdout + out.stderr)[-600:]}")
    return out.stdout + out.stderr


def median_ms(text):
    return float(re.search(r"median ([0-9.]+) ms", text).group(1))


def ort_session(path, threads, profile=False):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile:
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
        options.optimized_model_filepath = options.profile_file_prefix + ".optimized.onnx"
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"]), options


def ort_feed():
    import numpy as np
    rng = np.random.default_rng(1)
    return {"input_ids": rng.integers(0, VOCAB, (BATCH, SEQUENCE)).astype(np.int64),
            "attention_mask": np.ones((BATCH, SEQUENCE), np.int64)}


def ort_process(path, iters, threads):
    """The onnxruntime side, in this process: load, warm up, time."""
    session, _ = ort_session(path, threads)
    feed = ort_feed()
    print_median_ms(lambda: session.run(None, feed), iters)


def ort_attention_ms(path, threads, runs=50):
    """onnxruntime's time per inference in its attention nodes: each
    Softmax, the chain that makes its input back to the scores'
    MatMul/FusedMatMul, and the values' MatMul after it (through the safe
    softmax's IsNaN/Where)."""
    import onnx
    session, options = ort_session(path, threads, profile=True)
    feed = ort_feed()
    for _ in range(runs):
        session.run(None, feed)
    events = json.load(open(session.end_profiling()))
    graph = onnx.load(options.optimized_model_filepath, load_external_data=False).graph
    producer = {o: n for n in graph.node for o in n.output}
    consumers = collections.defaultdict(list)
    for n in graph.node:
        for i in n.input:
            consumers[i].append(n)
    attention = set()
    for softmax in (n for n in graph.node if n.op_type == "Softmax"):
        attention.add(softmax.name)
        node = producer.get(softmax.input[0])
        while node is not None and node.op_type in ("Add", "Mul", "Div", "Where", "Reshape"):
            attention.add(node.name)
            node = producer.get(node.input[0])
        if node is not None and node.op_type in ("MatMul", "FusedMatMul"):
            attention.add(node.name)
        frontier = [softmax.output[0]]
        while frontier:
            for c in consumers[frontier.pop()]:
                if c.op_type in ("IsNaN", "Where"):
                    attention.add(c.name)
                    frontier.append(c.output[0])
                elif c.op_type in ("MatMul", "FusedMatMul"):
                    attention.add(c.name)
    total = sum(e["dur"] for e in events
                if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")
                and e["name"][:-len("_kernel_time")] in attention)
    return total / runs / 1000


def graphc_attention_ms(build, path, threads, unfused):
    """graphc's time per inference in its attention kernels, or in the
    unfused graph's scores, softmax and values kernels."""
    names = set()
    if unfused:  # each softmax kernel, the kernel that makes its input and the one that reads it
        text = run([os.path.join(build, "bin", "graphc"), "compile", path, "--emit=graph", "--passes", UNFUSED],
                   threads)
        kernels = [(m.group(1), m.group(2).split(", "), m.group(3))
                   for m in re.finditer(r"^  (%\S+) = fused\(([^)]*)\) \{kind = \"\w+\", name = \"(\w+)\"\}", text,
                                        re.M)]
        made_by = {result: name for result, _, name in kernels}
        for result, operands, name in kernels:
            if "_amax_sub_exp" in "_" + name:
                names.add(name)
                names.update(made_by[o] for o in operands if o in made_by)
                names.update(n for _, ops, n in kernels if result in ops)
    out = run(graphc_command(build, path, 50, UNFUSED if unfused else None, profile=True), threads)
    total = 0.0
    for line in out.splitlines():
        m = re.match(r"\s+([0-9.]+)\s+[0-9.]+%\s+\d+\s+(\w+) (\S+)", line)
        if m and (m.group(2) == "attention" if not unfused else m.group(3) in names):
            total += float(m.group(1))
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--models", default="bert,bart,bloom")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--time-ort")
    args = parser.parse_args()
    if args.time_ort:
        ort_process(args.time_ort, args.iters, args.threads)
        return
    rows = []
    for name in args.models.split(","):
        path = export(name)
        best = collections.defaultdict(lambda: float("inf"))
        for _ in range(args.rounds):
            best["graphc"] = min(best["graphc"], median_ms(run(graphc_command(args.build, path, args.iters),
                                                               args.threads)))
            best["unfused"] = min(best["unfused"], median_ms(run(graphc_command(args.build, path, args.iters,
                                                                                UNFUSED), args.threads)))
            best["ort"] = min(best["ort"], median_ms(run([sys.executable, os.path.abspath(__file__), "--time-ort",
                                                          path, "--iters", str(args.iters), "--threads",
                                                          str(args.threads)], args.threads)))
        rows.append((name, best, graphc_attention_ms(args.build, path, args.threads, False),
                     graphc_attention_ms(args.build, path, args.threads, True),
                     ort_attention_ms(path, args.threads)))
    print(f"batch {BATCH}, sequence {SEQUENCE}, hidden 256, 4 heads; {args.threads} threads; least median of "
          f"{args.rounds} interleaved rounds, each runtime in its own process\n")
    print("| model | graphc ms | unfused ms | onnxruntime ms | graphc / unfused | graphc / onnxruntime "
          "| attention: graphc ms | unfused ms | onnxruntime ms | fused speed-up | graphc / onnxruntime |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, best, fused, unfused, ort in rows:
        print(f"| {name} | {best['graphc']:.2f} | {best['unfused']:.2f} | {best['ort']:.2f} "
              f"| {best['graphc'] / best['unfused']:.2f} | {best['graphc'] / best['ort']:.2f} "
              f"| {fused:.3f} | {unfused:.3f} | {ort:.3f} | {unfused / fused:.2f} | {fused / ort:.2f} |")


if __name__ == "__main__":
    main()
