#!/usr/bin/env python3
"""onnxruntime's load to first result on the real-model suite, the peer of
graphc-export-bench's (docs/export.md): InferenceSession creation from the
model file plus one run on test_data_set_0, in a process that has already
imported onnxruntime and loaded one model (so neither import nor first-use
costs count, as in graphc's measurement); min and median of 7, 2 threads.

    ort_load.py [--models tests/models] [--markdown docs/export.md]

With --markdown, the table replaces the text between <!-- ort-load:begin -->
and <!-- ort-load:end --> in the file.
"""
import argparse
import glob
import os
import statistics
import time

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort

MODELS = ["bert", "convnext", "diffusion_block", "distilbert", "efficientnet_b0", "gpt2", "llama",
          "mobilenet_v3_small", "resnet18", "t5_encoder", "unet", "vit", "whisper_encoder"]


def inputs_of(folder, session):
    feeds = {}
    names = [i.name for i in session.get_inputs()]
    for k, path in enumerate(sorted(glob.glob(os.path.join(folder, "test_data_set_0", "input_*.pb")))):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        feeds[t.name or names[k]] = onnx.numpy_helper.to_array(t)
    return feeds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "../../tests/models"))
    parser.add_argument("--markdown")
    args = parser.parse_args()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    rows = ["| model | onnxruntime load → first result min / median (ms) |", "|---|---:|"]
    for model in MODELS:
        folder = os.path.join(args.models, model, "dynamo-dynamic")
        path = os.path.join(folder, "model.onnx")
        warm = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        feeds = inputs_of(folder, warm)
        times = []
        for _ in range(7):
            start = time.perf_counter()
            session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            session.run(None, feeds)
            times.append(time.perf_counter() - start)
        rows.append(f"| {model} | {min(times) * 1e3:.2f} / {statistics.median(times) * 1e3:.2f} |")
    table = "\n".join(rows) + "\n"
    print(table, end="")
    if args.markdown:
        with open(args.markdown) as f:
            doc = f.read()
        begin, end = "<!-- ort-load:begin -->\n", "<!-- ort-load:end -->"
        a, b = doc.index(begin), doc.index(end)
        with open(args.markdown, "w") as f:
            f.write(doc[:a + len(begin)] + table + doc[b:])


if __name__ == "__main__":
    main()
