#!/usr/bin/env python3
"""Writes a random pointwise .graph of N nodes (the compile-time input of
benchmark P6). Each node applies a unary or binary op to values among the 20
defined before it, so the graph is deep and the fuser sees many candidates.

    tools/bench/random_pointwise_graph.py 10000 > /tmp/pw10000.graph
    build/bin/graphc opt /tmp/pw10000.graph --time-passes > /dev/null
"""
import random
import sys


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = random.Random(n)
    unary = ["relu", "neg", "exp", "tanh", "abs", "sigmoid"]
    binary = ["add", "mul", "sub", "maximum"]
    values = ["%x", "%y"]
    lines = ["graph @g(%x: f32[64, 64], %y: f32[64, 64]) -> (f32[64, 64]) {"]
    for i in range(n):
        if rng.random() < 0.5:
            lines.append(f"  %v{i} = {rng.choice(unary)}({rng.choice(values[-20:])})")
        else:
            a, b = rng.choice(values[-20:]), rng.choice(values[-20:])
            lines.append(f"  %v{i} = {rng.choice(binary)}({a}, {b})")
        values.append(f"%v{i}")
    lines.append(f"  return %v{n - 1}")
    lines.append("}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
