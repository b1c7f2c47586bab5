#!/usr/bin/env python3
"""Simulated training-step time on 1, 2 and 4 virtual GPUs: gxc train's data-parallel and
pipeline placements against one GPU, on the sim platform's clock (its cost model of an H100
and NVLink; the host computes the numbers, so the host's load does not change these times).

For each case of tests/fixtures/train/ below, and bench/models/mlp_wide_train.yaml (GEMM-bound,
on 512 random rows this script writes), and each placement, `gxc train --sim-gpus K
--placement P --steps 2 --report R` runs two steps; R's `total_ms` is the second step's
simulated time, start to end (forward, backward, the gradients' exchange, the update).
Data-parallel splits each batch over the K GPUs, sums the gradients on the first GPU as the
backward finishes them, sends them to the others in 25 MB buckets while the backward goes on,
and runs the update on every GPU (DDP's layout); its "one bucket" runs (`--bucket-mb`
above every gradient together) send them only after the whole backward: the same step without
the overlap. Pipeline cuts the layers into K stages and the batch into K micro-batches.

  .venv-torch/bin/python bench/train_sim_scaling.py --gxc build/gxc   (any Python with NumPy)
Prints a Markdown table; bench/write_results.py puts the latest in bench/RESULTS.md.
"""
import argparse
import json
import pathlib
import subprocess
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = {"regression MLP, batch 128": "mlp_adam",
         "digits LeNet, batch 128": "digits_lenet_sgd",
         "digits LeNet with batch_norm, batch 128": "digits_bn_sgd",
         "GPT-style decoder, batch 8": "gpt_adamw",
         "wide MLP 1024-4096-4096-1024, batch 256": "mlp_wide_train"}
# (title, GPUs, placement, extra options)
ONE_BUCKET = ["--bucket-mb", "100000"]
RUNS = [("1 GPU", 1, "manual", []), ("2 GPUs data-parallel", 2, "data-parallel", []),
        ("2 GPUs data-parallel, one bucket", 2, "data-parallel", ONE_BUCKET),
        ("4 GPUs data-parallel", 4, "data-parallel", []),
        ("4 GPUs data-parallel, one bucket", 4, "data-parallel", ONE_BUCKET),
        ("2 GPUs pipeline", 2, "pipeline", []), ("4 GPUs pipeline", 4, "pipeline", [])]


def model_and_data(case, work):
    if case != "mlp_wide_train":
        directory = ROOT / "tests" / "fixtures" / "train" / case
        return directory / "model.yaml", directory / "train.npz"
    data = pathlib.Path(work) / "wide.npz"
    rng = np.random.default_rng(0)
    np.savez(data, x=rng.standard_normal((512, 1024), dtype=np.float32),
             y=rng.standard_normal((512, 1024), dtype=np.float32))
    return ROOT / "bench" / "models" / "mlp_wide_train.yaml", data


def step_ms(gxc, case, gpus, placement, extra):
    with tempfile.TemporaryDirectory() as work:
        model, data = model_and_data(case, work)
        report = pathlib.Path(work) / "report.json"
        subprocess.run([gxc, "train", str(model), "--data",
                        str(data), "--sim-gpus", str(gpus), "--placement",
                        placement, "--steps", "2", "--report", str(report), *extra],
                       check=True, capture_output=True)
        return json.loads(report.read_text())["total_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gxc", default=str(ROOT / "build" / "gxc"))
    args = parser.parse_args()
    print("| model | " + " | ".join(run[0] for run in RUNS) + " |")
    print("| --- |" + " --- |" * len(RUNS))
    for title, case in CASES.items():
        times = [step_ms(args.gxc, case, gpus, placement, extra)
                 for _, gpus, placement, extra in RUNS]
        cells = [f"{t * 1e3:.0f} us ({times[0] / t:.2f}x)" for t in times]
        print(f"| {title} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
