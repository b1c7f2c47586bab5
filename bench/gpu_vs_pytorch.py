#!/usr/bin/env python3
"""Inference time per iteration on GPU 0: gxc's cuda platform against the same torch.nn.Module
in PyTorch on the same GPU, in one invocation (scripts/gpu-check.sh runs it).

Usage: bench/gpu_vs_pytorch.py BUILD_DIR [ITERATIONS]   (default 50)
Needs python3 with torch built for CUDA, and BUILD_DIR/gxc built with CUDA.

gxc: `gxc run MODEL --devices 0 --iterations N` (one warm-up, N timed runs; its report's p50
and min, and the time GPU 0 was busy in the last run). A gxc run takes its inputs from the host and gives its outputs back to the host, so
each of its iterations includes those copies: PyTorch is timed the same way (inputs moved with
.to("cuda"), outputs with .cpu(), which waits for the GPU), and also with its inputs already on
the GPU and only a synchronize at the end, the time the model itself takes. Both compute f32
GEMMs in full f32 (no TF32: PyTorch's default for matmuls, and gxc's without GXC_ALLOW_TF32).
"""

import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch import nn

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import torch_networks  # noqa: E402  (after the path that holds it)


class MlpWide(nn.Module):
    """bench/models/mlp_wide.yaml: 1024 -> 4096 -> 4096 -> 1024, relu between."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1024, 4096)
        self.fc2 = nn.Linear(4096, 4096)
        self.fc3 = nn.Linear(4096, 1024)

    def forward(self, x):
        return {"fc3": self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))}


def mlp_wide_inputs(generator):
    return {"x": torch.randn(4096, 1024, generator=generator)}


class Sdpa(nn.Module):
    """bench/models/sdpa.yaml: causal attention alone (F.scaled_dot_product_attention)."""

    def forward(self, q, k, v):
        return {"attn": torch_networks.attention(q, k, v, is_causal=True)}


def sdpa_inputs(generator):
    return {name: torch.randn(8, 8, 1024, 64, generator=generator) for name in "qkv"}


class Elementwise(nn.Module):
    """bench/models/elementwise.yaml: sum(gelu(w * s + 1)) over a 256 MiB param."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8192, 8192))

    def forward(self, s):
        return {"total": F.gelu(self.w * s + 1.0).sum()}


def elementwise_inputs(generator):
    return {"s": torch.randn(1, generator=generator)}


def gemm_rate(flop):
    return lambda ms: f"GEMMs {flop / (ms * 1e-3) / 1e12:.1f} TFLOP/s"


def read_rate(bytes_read):
    return lambda ms: f"reads w at {bytes_read / (ms * 1e-3) / 1e9:.0f} GB/s"


MLP_WIDE_FLOP = 2 * 4096 * (1024 * 4096 + 4096 * 4096 + 4096 * 1024)
BENCH = ROOT / "bench" / "models"

# (label, model file, its dims, the module, its inputs at those dims, what gxc's rate is of)
CASES = [
    ("mlp_wide", BENCH / "mlp_wide.yaml", {}, MlpWide, mlp_wide_inputs, gemm_rate(MLP_WIDE_FLOP)),
    ("sdpa", BENCH / "sdpa.yaml", {}, Sdpa, sdpa_inputs, None),
    ("elementwise", BENCH / "elementwise.yaml", {}, Elementwise, elementwise_inputs,
     read_rate(8192 * 8192 * 4)),
    ("gpt_decoder", ROOT / "models" / "gpt_decoder.yaml", {"batch": 64, "seq": 16},
     torch_networks.GptDecoder, lambda g: torch_networks.gpt_decoder_inputs(g, 64, 16), None),
    ("vit_tiny", ROOT / "models" / "vit_tiny.yaml", {"batch": 64}, torch_networks.VitTiny,
     lambda g: torch_networks.vit_tiny_inputs(g, 64), None),
    ("resnet_cifar", ROOT / "models" / "resnet_cifar.yaml", {"batch": 64},
     torch_networks.ResNetCifar, lambda g: torch_networks.resnet_cifar_inputs(g, 64), None),
    ("lenet", ROOT / "models" / "lenet.yaml", {"batch": 256}, torch_networks.LeNet,
     lambda g: torch_networks.lenet_inputs(g, 256), None),
]


def time_gxc(build, model, dims, iterations):
    with tempfile.TemporaryDirectory() as folder:
        report = pathlib.Path(folder) / "report.json"
        command = [str(build / "gxc"), "run", str(model), "--devices", "0", "--iterations",
                   str(iterations), "--report", str(report)]
        for name, size in dims.items():
            command += ["--dim", f"{name}={size}"]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:
            return None, done.stderr.strip().splitlines()[-1:] or ["exit %d" % done.returncode]
        summary = json.loads(report.read_text())
    timing = summary["iteration_ms"]
    busy = next(d["time_ms"] for d in summary["devices"] if d["device"] == "cuda:0")
    return (timing["p50"], timing["min"], busy), None


def time_torch(make_module, make_inputs, iterations):
    generator = torch.Generator().manual_seed(0)
    module = make_module().eval().cuda()
    host_inputs = list(make_inputs(generator).values())
    device_inputs = [x.cuda() for x in host_inputs]
    with_copies, on_device = [], []
    with torch.inference_mode():
        for _ in range(5):  # warm-up: cuBLAS and cuDNN pick their kernels on the first calls
            module(*device_inputs)
        torch.cuda.synchronize()
        for _ in range(iterations):
            start = time.perf_counter()
            outputs = module(*[x.to("cuda") for x in host_inputs])
            [y.cpu() for y in (outputs.values() if isinstance(outputs, dict) else [outputs])]
            with_copies.append((time.perf_counter() - start) * 1e3)
        for _ in range(iterations):
            start = time.perf_counter()
            module(*device_inputs)
            torch.cuda.synchronize()
            on_device.append((time.perf_counter() - start) * 1e3)
    return statistics.median(with_copies), statistics.median(on_device)


def main():
    build = pathlib.Path(sys.argv[1]).resolve()
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"GPU 0: {torch.cuda.get_device_name(0)}; PyTorch {torch.__version__}; "
          f"{iterations} timed iterations each, p50")
    print("| network | sizes | gxc p50 | gxc min | GPU busy in gxc's last run "
          "| PyTorch p50, host in/out | gxc / PyTorch | PyTorch p50, on the GPU "
          "| gxc's rate over its GPU busy time |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, model, dims, make_module, make_inputs, rate in CASES:
        sizes = ", ".join(f"{name} {size}" for name, size in dims.items()) or "as in the file"
        gxc, failure = time_gxc(build, model, dims, iterations)
        torch_copies, torch_device = time_torch(make_module, make_inputs, iterations)
        if gxc is None:
            print(f"| {label} | {sizes} | failed: {failure[0]} | | | {torch_copies:.3f} ms | "
                  f"| {torch_device:.3f} ms | |", flush=True)
            continue
        rate = rate(gxc[2]) if rate else ""
        print(f"| {label} | {sizes} | {gxc[0]:.3f} ms | {gxc[1]:.3f} ms | {gxc[2]:.3f} ms "
              f"| {torch_copies:.3f} ms "
              f"| {gxc[0] / torch_copies:.2f}x | {torch_device:.3f} ms | {rate} |", flush=True)
    copy_bytes = 2 * 4096 * 4096 * 4  # 64 MiB read and 64 MiB written
    x = torch.randn(4096, 4096, device="cuda")
    y = torch.empty_like(x)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(20):
        start.record()
        y.copy_(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    print(f"\nThe device's copy bandwidth, for the rates above: {copy_bytes / statistics.median(times) / 1e6:.0f} "
          "GB/s (a 64 MiB device-to-device copy by PyTorch, bytes read plus written, p50 of 20)")


if __name__ == "__main__":
    main()
