"""Writes a model of N layers in a chain, for compile-time benchmarks.

Usage: gen_chain.py N OUT.yaml [KIND]

KIND `elementwise` (the default): tanh and relu in turn on f32[64, 64]. KIND `linear`: a
linear layer [64 -> 64] (a weight and a bias each) and a relu in turn.
"""
import sys

n, path = int(sys.argv[1]), sys.argv[2]
kind = sys.argv[3] if len(sys.argv) > 3 else "elementwise"
if kind not in ("elementwise", "linear"):
    sys.exit(f"gen_chain.py: unknown kind {kind!r} (elementwise or linear)")
lines = ["gxc: 1", "name: chain", "inputs:", "  x: {shape: [64, 64]}", "layers:"]
previous = "x"
for i in range(n):
    if i % 2:
        layer = "op: relu"
    elif kind == "linear":
        layer = "op: linear, in_features: 64, out_features: 64"
    else:
        layer = "op: tanh"
    lines.append(f"  - {{name: l{i}, {layer}, inputs: [{previous}]}}")
    previous = f"l{i}"
lines.append(f"outputs: [{previous}]")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
