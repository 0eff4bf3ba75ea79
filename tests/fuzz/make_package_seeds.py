#!/usr/bin/env python3
"""Seeds for graphc_package_fuzzer (tests/fuzz/PackageFuzzer.cpp) from
packages `graphc export` wrote: each package whole (mode byte 0), its
weights and graph.json (mode 1), its weights alone (mode 2).

    make_package_seeds.py CORPUS_DIR PACKAGE.gcpkg...
"""
import os
import struct
import sys
import zipfile

corpus = sys.argv[1]
os.makedirs(corpus, exist_ok=True)
for path in sys.argv[2:]:
    stem = os.path.basename(path).replace(".gcpkg", "")
    with open(path, "rb") as f:
        whole = f.read()
    with zipfile.ZipFile(path) as z:
        weights = z.read("weights.safetensors")
        graph = z.read("graph.json")
    seeds = {
        "package": b"\x00" + whole,
        "graph": b"\x01" + struct.pack("<I", len(weights)) + weights + graph,
        "weights": b"\x02" + weights,
    }
    for kind, data in seeds.items():
        with open(os.path.join(corpus, f"{stem}.{kind}"), "wb") as f:
            f.write(data)
