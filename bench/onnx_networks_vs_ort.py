#!/usr/bin/env python3
"""Inference time per iteration of the exported ONNX networks on the host: `gxc run NET.onnx
--devices cpu` against ONNX Runtime on the same model and inputs, in one invocation, with the
same threads.

Usage: bench/onnx_networks_vs_ort.py [BUILD_DIR] [ITERATIONS] [RUNS]   (default build-rel, 20, 3)
Needs a Python with numpy and onnxruntime (tests/onnx/requirements-nets.txt) and a built
BUILD_DIR/gxc; the networks are exported into BUILD_DIR/onnx-networks by
tests/onnx/export_networks.py (Debian's python3 with torch and torchvision) when missing.

Each run times both sides back to back, network by network: `gxc run NET.onnx --devices cpu
--iterations N --report FILE` (one warm-up, N timed runs; its p50 and min), then an ONNX
Runtime session (CPU execution provider, its default graph optimizations, as users run it),
three warm-up calls and N timed calls. gxc's host platform uses every core (OpenBLAS and
oneDNN default to one thread per core), so ONNX Runtime gets intra_op_num_threads =
os.cpu_count() and one inter-op thread. RUNS such runs; the table gives the median over the
runs of each side's p50, and the least min. Inputs are random: time does not depend on them.
"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime

ROOT = pathlib.Path(__file__).resolve().parent.parent


def image_inputs(batch):
    rng = np.random.default_rng(0)
    return {"image": rng.standard_normal((batch, 3, 64, 64)).astype(np.float32)}


def text_inputs(batch, sequence, with_mask):
    rng = np.random.default_rng(0)
    inputs = {"input_ids": rng.integers(0, 100, (batch, sequence)).astype(np.int64)}
    if with_mask:
        inputs["attention_mask"] = np.ones((batch, sequence), np.int64)
    return inputs


# (network, its sizes as printed, its inputs)
CASES = [
    ("resnet18", "batch 8, 3x64x64", image_inputs(8)),
    ("mobilenet_v2", "batch 8, 3x64x64", image_inputs(8)),
    ("gpt2_tiny", "batch 8, sequence 32", text_inputs(8, 32, False)),
    ("bert_tiny", "batch 8, sequence 32", text_inputs(8, 32, True)),
]


class GxcFailed(Exception):
    pass


def time_gxc(build, model, input_files, iterations):
    with tempfile.TemporaryDirectory() as folder:
        report = pathlib.Path(folder) / "report.json"
        command = [str(build / "gxc"), "run", str(model), "--devices", "cpu", "--iterations",
                   str(iterations), "--report", str(report)]
        for name, path in input_files.items():
            command += ["--input", f"{name}={path}"]
        result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        if result.returncode != 0:  # a refused network gets its row with gxc's reason
            raise GxcFailed(result.stderr.strip().splitlines()[-1])
        timing = json.loads(report.read_text())["iteration_ms"]
    return timing["p50"], timing["min"]


def time_ort(model, inputs, iterations, threads):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(model), options,
                                           providers=["CPUExecutionProvider"])
    for _ in range(3):
        session.run(None, inputs)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build-rel").resolve()
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    models = build / "onnx-networks"
    if not all((models / f"{name}.onnx").exists() for name, _, _ in CASES):
        subprocess.run(["/usr/bin/python3", str(ROOT / "tests/onnx/export_networks.py"),
                        str(models)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    threads = os.cpu_count()
    print(f"ONNX Runtime {onnxruntime.__version__}, {threads} threads; {runs} runs of "
          f"{iterations} timed iterations each")
    samples = {name: {"gxc": [], "ort": []} for name, _, _ in CASES}
    with tempfile.TemporaryDirectory() as folder:
        input_files = {}
        for name, _, inputs in CASES:
            input_files[name] = {}
            for input_name, value in inputs.items():
                path = pathlib.Path(folder) / f"{name}-{input_name}.npy"
                np.save(path, value)
                input_files[name][input_name] = path
        for _ in range(runs):
            for name, _, inputs in CASES:
                model = models / f"{name}.onnx"
                try:
                    samples[name]["gxc"].append(
                        time_gxc(build, model, input_files[name], iterations))
                except GxcFailed as failure:
                    samples[name]["gxc failed"] = str(failure)
                samples[name]["ort"].append(time_ort(model, inputs, iterations, threads))
    print("| network | sizes | gxc p50 | gxc min | ORT p50 | ORT min | gxc / ORT (p50) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, sizes, _ in CASES:
        ort_p50 = statistics.median(p50 for p50, _ in samples[name]["ort"])
        ort_min = min(low for _, low in samples[name]["ort"])
        if "gxc failed" in samples[name]:
            print(f"| {name} | {sizes} | failed | | {ort_p50:.2f} ms | {ort_min:.2f} ms | |")
            print(f"  {name}: {samples[name]['gxc failed']}", file=sys.stderr)
            continue
        gxc_p50 = statistics.median(p50 for p50, _ in samples[name]["gxc"])
        gxc_min = min(low for _, low in samples[name]["gxc"])
        print(f"| {name} | {sizes} | {gxc_p50:.2f} ms | {gxc_min:.2f} ms | {ort_p50:.2f} ms "
              f"| {ort_min:.2f} ms | {gxc_p50 / ort_p50:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
