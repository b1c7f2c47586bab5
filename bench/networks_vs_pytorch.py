#!/usr/bin/env python3
"""Inference time per iteration of the real networks of models/ on the host: gxc's cpu platform
against the same torch.nn.Module in PyTorch, in one invocation, with the same threads.

Usage: bench/networks_vs_pytorch.py [BUILD_DIR] [ITERATIONS]   (default build-rel, 20)
Needs python3 with torch (PyTorch from PyPI) and a built BUILD_DIR/gxc.

For each network and size: `gxc run MODEL --devices cpu --iterations N --dim ...` (one warm-up,
N timed runs, the p50 and min its report gives), then the module of
tests/fixtures/torch_networks.py (the one the fixtures check gxc against), float32, eval mode
under torch.inference_mode(), three warm-up calls and N timed calls. Both use every core: OpenBLAS and
PyTorch default to one thread per core; torch.set_num_threads pins it to os.cpu_count() so
that both sides say the same. Inputs are random: time does not depend on the values.
"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import torch_networks  # noqa: E402  (after the path that holds it)

# (model, its dims, the module, its inputs at those dims)
CASES = [
    ("gpt_decoder", {"batch": 16, "seq": 16}, torch_networks.GptDecoder,
     lambda g: torch_networks.gpt_decoder_inputs(g, 16, 16)),
    ("vit_tiny", {"batch": 32}, torch_networks.VitTiny,
     lambda g: torch_networks.vit_tiny_inputs(g, 32)),
    ("resnet_cifar", {"batch": 32}, torch_networks.ResNetCifar,
     lambda g: torch_networks.resnet_cifar_inputs(g, 32)),
    ("lenet", {"batch": 64}, torch_networks.LeNet, lambda g: torch_networks.lenet_inputs(g, 64)),
]


def time_gxc(build, model, dims, iterations):
    with tempfile.TemporaryDirectory() as folder:
        report = pathlib.Path(folder) / "report.json"
        command = [str(build / "gxc"), "run", str(ROOT / "models" / f"{model}.yaml"), "--devices",
                   "cpu", "--iterations", str(iterations), "--report", str(report)]
        for name, size in dims.items():
            command += ["--dim", f"{name}={size}"]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        timing = json.loads(report.read_text())["iteration_ms"]
    return timing["p50"], timing["min"]


def time_torch(make_module, make_inputs, iterations):
    generator = torch.Generator().manual_seed(0)
    module = make_module().eval()
    inputs = list(make_inputs(generator).values())
    times = []
    with torch.inference_mode():
        for _ in range(3):  # warm-up: oneDNN builds its kernels on the first calls
            module(*inputs)
        for _ in range(iterations):
            start = time.perf_counter()
            module(*inputs)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build-rel").resolve()
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    threads = os.cpu_count()
    torch.set_num_threads(threads)
    print(f"PyTorch {torch.__version__}, {threads} threads; {iterations} timed iterations each")
    print("| network | sizes | gxc p50 | gxc min | PyTorch p50 | PyTorch min | gxc / PyTorch (p50) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for model, dims, make_module, make_inputs in CASES:
        gxc_p50, gxc_min = time_gxc(build, model, dims, iterations)
        torch_p50, torch_min = time_torch(make_module, make_inputs, iterations)
        sizes = ", ".join(f"{name} {size}" for name, size in dims.items())
        print(f"| {model} | {sizes} | {gxc_p50:.2f} ms | {gxc_min:.2f} ms | {torch_p50:.2f} ms "
              f"| {torch_min:.2f} ms | {gxc_p50 / torch_p50:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
