#!/usr/bin/env python3
"""Runs a command and checks its exit status: expect-exit.py STATUS CMD ARGS..."""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
if got != want:
    print(f"expected exit status {want}, got {got}: {' '.join(sys.argv[2:])}", file=sys.stderr)
    sys.exit(1)
