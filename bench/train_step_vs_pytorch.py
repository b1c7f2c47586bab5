#!/usr/bin/env python3
"""Time per training step: gxc train against PyTorch, same model, data, batch and threads.

For each model (the tutorial's regression MLP with Adam, the digits classifiers (an MLP and a
LeNet) with SGD and momentum, and the GPT-style decoder with AdamW, from tests/fixtures/train/)
and each thread count, in interleaved rounds:
- gxc: `gxc train MODEL --data DATA --devices cpu --steps N --log LOG`; a step's time is its
  batch's rows over the `samples_per_second` the log gives (the compiled step's run: forward,
  backward and update; not the data's slicing), median over the steps after the first 10;
- PyTorch: the same module and optimizer (tests/fixtures/make_train_fixtures.py's), timed
  around zero_grad, forward, backward and step on the same batches, median likewise.
Threads: OMP_NUM_THREADS and OPENBLAS_NUM_THREADS for gxc, torch.set_num_threads for PyTorch.

Run with a Python that has torch: the peer the performance issue names is PyPI's current
release, which bench/peers.py installs into .venv-bench/ (scripts/torch-env.sh's .venv-torch has
Debian's 1.13, which the fixtures use):
  .venv-bench/bin/python bench/train_step_vs_pytorch.py --gxc build/gxc [--rounds 3]
Prints a Markdown table; bench/write_results.py puts the latest in bench/RESULTS.md.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import make_train_fixtures as fixtures  # noqa: E402

STEPS = 110
WARMUP = 10
CASES = {"regression MLP 13-16-32-1, Adam": "mlp_adam",
         "digits MLP 64-32-10, SGD momentum": "digits_sgd",
         "digits LeNet (conv, avg pool), SGD momentum": "digits_lenet_sgd",
         "GPT-style decoder (4 blocks, width 32), AdamW": "gpt_adamw"}


def gxc_step_ms(gxc, case, threads):
    directory = ROOT / "tests" / "fixtures" / "train" / case
    with tempfile.TemporaryDirectory() as work:
        log = pathlib.Path(work) / "log.jsonl"
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
        subprocess.run([gxc, "train", str(directory / "model.yaml"), "--data",
                        str(directory / "train.npz"), "--devices", "cpu", "--epochs", "1000",
                        "--steps", str(STEPS), "--log", str(log)],
                       check=True, env=env, capture_output=True)
        steps = [json.loads(line) for line in log.read_text().splitlines()]
    batch = json.loads((directory / "expected.json").read_text())["batch_size"]
    times = [batch / step["samples_per_second"] * 1e3 for step in steps[WARMUP:]
             if step["samples_per_second"] > 0]
    return statistics.median(times)


def torch_step_ms(case, threads):
    torch.set_num_threads(threads)
    directory = ROOT / "tests" / "fixtures" / "train" / case
    spec = json.loads((directory / "expected.json").read_text())
    spec_case = fixtures.CASES[case]
    model = fixtures.initial_module(spec_case.module_class)
    optimizer = fixtures.make_optimizer(spec_case, model)
    data = np.load(directory / "train.npz")
    names = spec["inputs"]
    batch = spec["batch_size"]
    samples = len(data[names[0]])
    tensors = [torch.from_numpy(data[name]) for name in names]
    times = []
    for step in range(STEPS):
        begin = (step * batch) % samples
        end = min(begin + batch, samples)
        inputs = [tensor[begin:end] for tensor in tensors]
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = model(*inputs)["loss"]
        loss.backward()
        optimizer.step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[WARMUP:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gxc", default=str(ROOT / "build" / "gxc"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"PyTorch {torch.__version__}, {os.cpu_count()} cores; median of {args.rounds} rounds, "
          f"each the median of {STEPS - WARMUP} steps")
    print("| model | threads | gxc ms/step | PyTorch ms/step | gxc / PyTorch |")
    print("| --- | --- | --- | --- | --- |")
    for title, case in CASES.items():
        for threads in (1, 2):
            ours, theirs = [], []
            for _ in range(args.rounds):
                ours.append(gxc_step_ms(args.gxc, case, threads))
                theirs.append(torch_step_ms(case, threads))
            g, t = statistics.median(ours), statistics.median(theirs)
            print(f"| {title} | {threads} | {g:.3f} | {t:.3f} | {g / t:.2f} |")


if __name__ == "__main__":
    main()
