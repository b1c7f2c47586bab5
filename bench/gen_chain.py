"""Writes a model of N elementwise layers in a chain, for placement-time benchmarks.

Usage: gen_chain.py N OUT.yaml
"""
import sys

n, path = int(sys.argv[1]), sys.argv[2]
lines = ["gxc: 1", "name: chain", "inputs:", "  x: {shape: [64, 64]}", "layers:"]
previous = "x"
for i in range(n):
    op = "relu" if i % 2 else "tanh"
    lines.append(f"  - {{name: l{i}, op: {op}, inputs: [{previous}]}}")
    previous = f"l{i}"
lines.append(f"outputs: [{previous}]")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
