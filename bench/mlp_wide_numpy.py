"""The peer for bench/models/mlp_wide.yaml: the same MLP in NumPy, timed the same way
(one warm-up, then N runs; median and min in ms per iteration)."""
import statistics
import sys
import time

import numpy as np

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 20
rng = np.random.default_rng(0)
x = rng.standard_normal((4096, 1024), dtype=np.float32)
layers = []
for fan_in, fan_out in [(1024, 4096), (4096, 4096), (4096, 1024)]:
    bound = 1 / np.sqrt(fan_in)
    layers.append((rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                   rng.uniform(-bound, bound, fan_out).astype(np.float32)))


def forward(h):
    for i, (w, b) in enumerate(layers):
        h = h @ w.T + b
        if i + 1 < len(layers):
            h = np.maximum(h, 0)
    return h


forward(x)
times = []
for _ in range(iterations):
    start = time.perf_counter()
    forward(x)
    times.append((time.perf_counter() - start) * 1000)
print(f"numpy {np.__version__}: p50 {statistics.median(times):.1f} ms, min {min(times):.1f} ms")
