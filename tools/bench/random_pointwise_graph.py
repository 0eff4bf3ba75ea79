#!/usr/bin/env python3
"""Writes a pointwise .graph of N nodes, the compile-time input of benchmark
P6, in one of three shapes:

  random  each node applies a unary or binary op to values among the 20
          defined before it, so the graph is deep and the fuser sees many
          candidates (the default);
  chain   one long chain of pointwise ops on one input;
  tree    N/2 scaled copies of the input summed pairwise (a balanced
          tree): many duplicate-looking leaves for cse, a wide graph.

    tools/bench/random_pointwise_graph.py 10000 > /tmp/pw10000.graph
    tools/bench/random_pointwise_graph.py 100000 --shape tree > /tmp/tree.graph
    build/bin/graphc compile /tmp/pw10000.graph --time-passes > /dev/null
"""
import argparse
import random


def random_graph(n: int) -> list:
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
    return lines


def chain_graph(n: int) -> list:
    ops = ["mul(%{}, 1.0001)", "add(%{}, 0.5)", "tanh(%{})", "sub(%{}, 0.25)"]
    lines = ["graph @g(%v0: f32[N]) -> (f32[N]) {"]
    for i in range(1, n + 1):
        lines.append(f"  %v{i} = " + ops[i % len(ops)].format(f"v{i - 1}"))
    lines.append(f"  return %v{n}")
    return lines


def tree_graph(n: int) -> list:
    leaves = n // 2
    lines = ["graph @g(%x: f32[N]) -> (f32[N]) {"]
    lines += [f"  %b{i} = mul(%x, {i % 97}.5)" for i in range(leaves)]
    level, j = [f"%b{i}" for i in range(leaves)], 0
    while len(level) > 1:
        nxt = []
        for a in range(0, len(level) - 1, 2):
            lines.append(f"  %s{j} = add({level[a]}, {level[a + 1]})")
            nxt.append(f"%s{j}")
            j += 1
        level = nxt + ([level[-1]] if len(level) % 2 else [])
    lines.append(f"  return {level[0]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("nodes", type=int, nargs="?", default=1000)
    parser.add_argument("--shape", choices=["random", "chain", "tree"], default="random")
    args = parser.parse_args()
    make = {"random": random_graph, "chain": chain_graph, "tree": tree_graph}[args.shape]
    print("\n".join(make(args.nodes) + ["}"]))


if __name__ == "__main__":
    main()
