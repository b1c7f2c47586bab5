#!/usr/bin/env python3
"""torchvision's classification networks at 224x224 on the host: `gxc run NET.onnx --devices cpu`
against ONNX Runtime on the same export and against PyTorch eager on the same weights,
interleaved in one invocation, at batch 1 and 8, on 1 and 2 threads.

Usage: bench/torchvision_vs_ort.py [--gxc build-rel/gxc] [--iterations 5] [--rounds 2]
                                   [--networks NET ...] [--quick]
Run it with any python3: it runs itself in .venv-bench/ (bench/bench_venv.py: PyTorch,
torchvision and ONNX Runtime from PyPI). The networks are exported by bench/export_torchvision.py
with Debian's python3 (torch 1.13, opset 17; random weights from a fixed seed) into
BUILD/torchvision-networks when missing, each beside its state_dict.

Once per network and batch, the three outputs are compared (within 1e-3 of the largest
magnitude of PyTorch's logits): the script stops if they differ, since the times must be of the
same computation. Then R rounds, each timing in turn, for every network, batch and thread count:
- gxc: `gxc run NET.onnx --devices cpu --input image=X.npy --iterations N --report FILE` under
  OMP_NUM_THREADS=t (one warm-up, N timed runs; the report's p50);
- ONNX Runtime: CPUExecutionProvider, default graph optimizations, intra_op_num_threads=t, one
  inter-op thread; three warm-up calls, the median of N calls;
- PyTorch: torchvision's module with the export's state_dict, float32, eval(), under
  torch.inference_mode(), torch.set_num_threads(t); three warm-up calls, the median of N calls.
Each figure is the median over the rounds. The targets (issue: gxc at most 1.0x ONNX Runtime and
0.8x PyTorch) are marked per row. A benchmark, not a test: it needs a quiet machine.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

if __name__ == "__main__":
    from bench_venv import ensure_venv  # this folder

    ensure_venv()  # before the imports below, which come from the venv

import numpy as np  # noqa: E402
import onnxruntime  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

from peer_timing import median_ms, ort_session  # noqa: E402  (this folder)

ROOT = pathlib.Path(__file__).resolve().parent.parent
NETWORKS = ("resnet50", "mobilenet_v3_large", "densenet121", "efficientnet_v2_s", "googlenet",
            "inception_v3")
BATCHES = (1, 8)
THREADS = (1, 2)
TOLERANCE = 1e-3
ORT_TARGET, TORCH_TARGET = 1.0, 0.8


def torch_module(folder, name):
    extra = {"aux_logits": False, "init_weights": False} if name in ("googlenet",
                                                                       "inception_v3") else {}
    module = getattr(torchvision.models, name)(weights=None, **extra).eval()
    module.load_state_dict(torch.load(folder / f"{name}.pt", weights_only=True))
    return module


def gxc_command(gxc, model, image, *extra):
    return [gxc, "run", str(model), "--devices", "cpu", "--input", f"image={image}", *extra]


def gxc_ms(gxc, model, image, threads, iterations, folder):
    report = folder / "report.json"
    environment = dict(os.environ, OMP_NUM_THREADS=str(threads),
                       OPENBLAS_NUM_THREADS=str(threads))
    subprocess.run(gxc_command(gxc, model, image, "--iterations", str(iterations), "--report",
                               str(report)), check=True, env=environment,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(report.read_text())["iteration_ms"]["p50"]


def gxc_logits(gxc, model, image, folder):
    output = folder / "out"
    result = subprocess.run(gxc_command(gxc, model, image, "--output", str(output)),
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"gxc failed on {model.name}: {result.stderr.strip()}")
    return np.load(output / "logits.npy")


def check_same(name, batch, expected, **actual):
    scale = max(float(np.abs(expected).max()), 1e-30)
    for side, values in actual.items():
        error = float(np.abs(values - expected).max()) / scale
        if not error <= TOLERANCE:
            sys.exit(f"{name} at batch {batch}: {side}'s logits differ from PyTorch's by "
                     f"{error:.2e} of their largest magnitude (more than {TOLERANCE}); not "
                     "timing it")


def export(folder, networks):
    missing = [n for n in networks if not (folder / f"{n}.onnx").exists()
               or not (folder / f"{n}.pt").exists()]
    if missing:
        print(f"== exporting {', '.join(missing)} into {folder}", file=sys.stderr, flush=True)
        subprocess.run(["/usr/bin/python3", str(ROOT / "bench" / "export_torchvision.py"),
                        str(folder), *missing], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gxc", default=str(ROOT / "build-rel" / "gxc"),
                        help="the gxc binary (default: build-rel/gxc, a Release build)")
    parser.add_argument("--iterations", type=int, default=5, help="timed calls per figure")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds")
    parser.add_argument("--networks", nargs="+", choices=NETWORKS, default=NETWORKS)
    parser.add_argument("--quick", action="store_true",
                        help="N = 2, R = 1: for trying the script, not for figures")
    args = parser.parse_args()
    args.gxc = str(pathlib.Path(args.gxc).resolve())
    if not os.access(args.gxc, os.X_OK):
        parser.error(f"no gxc at {args.gxc} (build it, or pass --gxc)")
    if args.quick:
        args.iterations, args.rounds = 2, 1
    return args


def main():
    args = parse_arguments()
    models = pathlib.Path(args.gxc).parent / "torchvision-networks"
    export(models, args.networks)
    print(f"PyTorch {torch.__version__}, torchvision {torchvision.__version__}, ONNX Runtime "
          f"{onnxruntime.__version__}; {args.rounds} rounds of {args.iterations} timed calls")
    times = {}  # (network, batch, threads, side) -> [ms per round]
    with tempfile.TemporaryDirectory() as scratch:
        folder = pathlib.Path(scratch)
        modules = {name: torch_module(models, name) for name in args.networks}
        images = {}
        for batch in BATCHES:
            image = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224))
            images[batch] = image.astype(np.float32)
            np.save(folder / f"image{batch}.npy", images[batch])
        for name in args.networks:
            model = models / f"{name}.onnx"
            for batch in BATCHES:
                with torch.inference_mode():
                    expected = modules[name](torch.from_numpy(images[batch])).numpy()
                ort = ort_session(model, 2).run(None, {"image": images[batch]})[0]
                check_same(name, batch, expected, ort=ort,
                           gxc=gxc_logits(args.gxc, model, folder / f"image{batch}.npy", folder))
        sessions = {(n, t): ort_session(models / f"{n}.onnx", t) for n in args.networks
                    for t in THREADS}
        for round_index in range(args.rounds):
            for name in args.networks:
                for batch in BATCHES:
                    for threads in THREADS:
                        key = (name, batch, threads)
                        print(f"== round {round_index + 1}: {name}, batch {batch}, {threads} "
                              "threads", file=sys.stderr, flush=True)
                        times.setdefault(key + ("gxc",), []).append(
                            gxc_ms(args.gxc, models / f"{name}.onnx", folder /
                                   f"image{batch}.npy", threads, args.iterations, folder))
                        session, feed = sessions[(name, threads)], {"image": images[batch]}
                        times.setdefault(key + ("ort",), []).append(
                            median_ms(lambda: session.run(None, feed), args.iterations))
                        torch.set_num_threads(threads)
                        tensor = torch.from_numpy(images[batch])
                        with torch.inference_mode():
                            times.setdefault(key + ("torch",), []).append(median_ms(
                                lambda: modules[name](tensor), args.iterations))
    print_table(args.networks, times)


def print_table(networks, times):
    print("| network | batch | threads | gxc | ONNX Runtime | PyTorch | gxc / ORT | gxc / PyTorch "
          "| targets |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    met = 0
    for name in networks:
        for batch in BATCHES:
            for threads in THREADS:
                gxc, ort, eager = (statistics.median(times[(name, batch, threads, side)])
                                   for side in ("gxc", "ort", "torch"))
                both = gxc / ort <= ORT_TARGET and gxc / eager <= TORCH_TARGET
                met += both
                print(f"| {name} | {batch} | {threads} | {gxc:.2f} ms | {ort:.2f} ms | "
                      f"{eager:.2f} ms | {gxc / ort:.2f}x | {gxc / eager:.2f}x | "
                      f"{'met' if both else 'missed'} |")
    rows = len(networks) * len(BATCHES) * len(THREADS)
    print(f"\nBoth targets (at most {ORT_TARGET}x ONNX Runtime and {TORCH_TARGET}x PyTorch) met "
          f"on {met} of {rows} rows.")


if __name__ == "__main__":
    main()
