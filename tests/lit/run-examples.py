#!/usr/bin/env python3
"""Runs `graphc run FILE --device reference` on every .graph file of a folder.

  run-examples.py GRAPHC DIR    -> prints "ran N examples", exits 1 on a failure
"""
import pathlib
import subprocess
import sys

graphc, folder = sys.argv[1], pathlib.Path(sys.argv[2])
files = sorted(folder.glob("*.graph"))
for f in files:
    r = subprocess.run([graphc, "run", str(f), "--device", "reference"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{f}: exit {r.returncode}\n{r.stderr}")
print(f"ran {len(files)} examples")
