"""The sections of bench/RESULTS.md, in order: for each benchmark, what it measures (a paragraph;
its script or source says how, in full), the command bench/write_results.py runs, and whether
its output is Markdown already or a fixed-width table to show as it is.

A command is made from write_results.py's arguments: args.build, the build folder, and
args.quick, the benchmark at its least size and count.
"""

import dataclasses
import sys
from typing import Callable


@dataclasses.dataclass
class Section:
    name: str  # for --only
    title: str
    what: str
    command: Callable  # args -> argv
    markdown: bool = True
    # The exit statuses that are results, each with what it says ("" for none).
    statuses: dict = dataclasses.field(default_factory=lambda: {0: ""})


def rel(args, *parts):
    return str(args.build.joinpath(*parts))


def pick(args, full, quick):
    return quick if args.quick else full


SECTIONS = [
    Section(
        "host-rates", "host rates: the sim cost table's host row",
        "The rates behind the host figures of the sim cost table, through gxc's own code: a "
        "staging memcpy, gxc's generated `relu`, OpenBLAS's GEMM and the dispatch of unfused "
        "one-element ops; each the least of the runs, by wall time and, in brackets, by CPU "
        "time, beside the figure the table uses.",
        lambda a: [rel(a, "bench", "host_rates_bench"), pick(a, "7", "1")], markdown=False),
    Section(
        "mlp-numpy", "host: a wide MLP on the cpu platform against NumPy",
        "`bench/models/mlp_wide.yaml` (4096x1024 -> 4096 -> 4096 -> 1024, f32, 206 GFLOP) by "
        "`gxc run --devices cpu --iterations N` (one warm-up, N timed runs), then the same MLP "
        "in NumPy (`bench/mlp_wide_numpy.py`), timed the same way.",
        lambda a: ["bench/run_host_bench.sh", pick(a, "10", "1"), str(a.build)],
        markdown=False),
    Section(
        "batch-transfers", "batch-transfers: 200 small tensors crossing devices (simulated)",
        "Three generated models compiled without and with the `batch-transfers` pass and run on "
        "`sim` with 2 virtual H100s (`uploads`: 200 host inputs to cuda:0; `params`: cuda:0 to "
        "cuda:1; `outputs`: cuda:0 to the host); the bench checks that both give the same "
        "outputs and that its replay of the clock equals the sim's. Simulated milliseconds.",
        lambda a: [rel(a, "bench", "batch_transfers_bench"), pick(a, "200", "8")],
        markdown=False),
    Section(
        "data-parallel", "data-parallel: a wide MLP on 1, 2 and 4 virtual H100s (simulated)",
        "`bench/models/mlp_wide.yaml` compiled with `--placement data-parallel` for 1, 2 and 4 "
        "GPUs and timed by the sim's clock, replayed over the compiled schedule (checked "
        "against real sim runs of a small MLP); the second model ends in `mse_loss`. Simulated "
        "milliseconds.",
        lambda a: [rel(a, "bench", "data_parallel_bench"), pick(a, "4096", "64")],
        markdown=False),
    Section(
        "pipeline", "pipeline: two large GEMMs on 2 virtual H100s (simulated)",
        "`h = x @ W1`, `y = h @ W2` (x 4096x1024, W1 1024x16384, W2 16384x1024) compiled with "
        "`--placement pipeline --microbatches M` on 2 GPUs against one GPU, timed by the "
        "replayed sim clock; `bound` is GPipe's 2M / (M + 1). Simulated milliseconds.",
        lambda a: [rel(a, "bench", "pipeline_bench"), pick(a, "4096", "64")], markdown=False),
    Section(
        "compile-time", "placement time: generated chains of 1,000 to 100,000 layers",
        "A chain of `tanh`/`relu` layers on f32[64,64] (`bench/gen_chain.py`) compiled through "
        "the default pipeline on 2 virtual GPUs under each placement: wall seconds, in brackets "
        "CPU seconds, and the passes' total from `--time-passes` (median of 3 runs); beside "
        "them yaml-cpp's own load of the same file, the floor under any command that reads it.",
        lambda a: [sys.executable, "bench/compile_time_bench.py", str(a.build),
                   *pick(a, [], ["1000"])]),
    Section(
        "networks-pytorch", "networks against PyTorch: the models of models/ on the host",
        "gpt_decoder, vit_tiny, resnet_cifar and lenet by `gxc run --devices cpu --iterations "
        "N` (its report's p50 and min) against the same `torch.nn.Module` "
        "(`tests/fixtures/torch_networks.py`, the one the fixtures check gxc against) in eager "
        "PyTorch, float32, under `torch.inference_mode()`, both on every core.",
        lambda a: [sys.executable, "bench/networks_vs_pytorch.py", str(a.build),
                   pick(a, "20", "2")]),
    Section(
        "onnx-ort", "ONNX networks against ONNX Runtime: ResNet-18, MobileNetV2, GPT-2, BERT",
        "The networks `tests/onnx/export_networks.py` exports (torch 1.13, opset 17, random "
        "weights), by `gxc run NET.onnx --devices cpu` against an ONNX Runtime session (CPU "
        "provider, default graph optimizations) with as many threads; the median over the runs "
        "of each side's p50, and the least min.",
        lambda a: [sys.executable, "bench/onnx_networks_vs_ort.py", str(a.build),
                   pick(a, "30", "2"), pick(a, "3", "1")]),
    Section(
        "torchvision", "torchvision's networks at 224x224 against ONNX Runtime and PyTorch",
        "ResNet-50, MobileNetV3-Large, DenseNet-121, EfficientNetV2-S, GoogLeNet and "
        "Inception-v3 with random weights, exported by `bench/export_torchvision.py`: gxc and "
        "ONNX Runtime on the same export, PyTorch eager on the same weights, interleaved, at "
        "batch 1 and 8 on 1 and 2 threads; outputs checked against PyTorch's first. The targets "
        "are gxc at most 1.0x ONNX Runtime's time and 0.8x PyTorch's.",
        lambda a: [sys.executable, "bench/torchvision_vs_ort.py", "--gxc", rel(a, "gxc"),
                   *pick(a, [], ["--quick"])]),
    Section(
        "train-pytorch", "training: time per step against PyTorch on the host",
        "The fixtures' training models: gxc's compiled step (forward, backward, update) as "
        "`gxc train --log` times it against `zero_grad`, forward, `backward` and `step` of the "
        "same module and `torch.optim` optimizer on the same batches; the median of the last "
        "100 of 110 steps, and of the interleaved rounds.",
        lambda a: [sys.executable, "bench/train_step_vs_pytorch.py", "--gxc", rel(a, "gxc"),
                   "--rounds", pick(a, "3", "1")]),
    Section(
        "train-sim", "training on 1, 2 and 4 virtual H100s: data-parallel and pipeline "
        "(simulated)",
        "The second step's simulated time (`gxc train --steps 2 --report`) of each model, on one "
        "GPU and split data-parallel (DDP's layout, 25 MB buckets, and with one bucket: the "
        "step without overlap) or as a pipeline; in brackets the speed-up over one GPU.",
        lambda a: [sys.executable, "bench/train_sim_scaling.py", "--gxc", rel(a, "gxc")]),
    Section(
        "peers", "gxc against PyTorch and ONNX Runtime on the host; GEMM peak; compile, start-up",
        "Five models at two sizes each on the same weights and inputs in gxc, eager PyTorch and "
        "ONNX Runtime, at 1 and 2 threads, interleaved, outputs checked first; each case's "
        "floor at the measured FMA peak; the machine's f32 GEMM rate; gxc's compile time, "
        "start-up and memory (`bench/peers.py` says how each is taken).",
        lambda a: [sys.executable, "bench/peers.py", "--gxc", rel(a, "gxc"), "--no-header",
                   *pick(a, [], ["--quick"])]),
    Section(
        "shared-machine", "a shared machine: gxc and ONNX Runtime beside a busy process",
        "A small network (GPT-2-style, a fraction of a millisecond) and a large one (ResNet-18, "
        "tens of milliseconds), each timed quiet and then while a competing process spins on "
        "one core, gxc with the defaults a user gets, over repeated runs. The check: gxc's "
        "worst and median slowdowns at most 1.5x ONNX Runtime's.",
        lambda a: [sys.executable, "bench/shared_machine_bench.py", "--gxc", rel(a, "gxc"),
                   "--runs", pick(a, "20", "2")],
        statuses={0: "The check passed.", 1: "**The check failed** (exit status 1)."}),
    Section(
        "python-call", "calling a compiled model from Python",
        "`models/mlp.yaml` (13 -> 16 -> 32 -> 1, batch 64) on the host, called through the gxc "
        "Python module, against the same `Executable::run` inside C++ "
        "(`bench/executable_call_bench.cpp`) and the same MLP in PyTorch eager, each in a process "
        "of its own, in interleaved rounds. The checks: from Python at most 10 µs more per call "
        "than in C++, and at most PyTorch eager's time.",
        lambda a: [sys.executable, "bench/python_call_overhead.py", "--build", str(a.build),
                   "--rounds", pick(a, "5", "1"), "--calls", pick(a, "2000", "100")],
        statuses={0: "The checks passed.", 1: "**A check failed** (exit status 1)."}),
]
