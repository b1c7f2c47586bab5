"""How the benchmarks time a peer in their own process: a call's median time after warm-up, and an
ONNX Runtime session as users make one (the CPU execution provider, its default graph
optimizations, T intra-op threads and one inter-op thread). bench/peers.py and
bench/torchvision_vs_ort.py share them, so that their figures are taken alike.
"""

import statistics
import time

import onnxruntime

WARMUP_CALLS = 3


def median_ms(call, iterations):
    """The median wall time of `iterations` calls of `call`, in ms, after WARMUP_CALLS calls."""
    for _ in range(WARMUP_CALLS):
        call()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def ort_session(path, threads):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
