#!/usr/bin/env python3
"""Every model of models/ on GPU 0 against the same model on the host (scripts/gpu-check.sh).

Usage: tests/gpu/models_on_gpu.py GXC WORK_DIR   (exit 0 when every model matches, else 1)
Needs python3 with NumPy.

Each model runs with `--devices cpu` and with `--devices 0`, from the same seed (so the same
weights and inputs), every output written as .npy. Float outputs must agree normwise,
max|gpu - cpu| <= 1e-4 * max|cpu|: the GPU sums in other orders (cuBLAS, cuDNN, block
reductions) than the host, in full f32. Integer and bool outputs must be equal.
very_big_module.yaml (two 8 GB weights, for `gxc compile`) is left out, and so is a model that
places layers on more GPUs than the machine has.
"""

import pathlib
import re
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SKIPPED = {"very_big_module.yaml"}
TOLERANCE = 1e-4


def run(gxc, model, devices, folder):
    done = subprocess.run([gxc, "run", str(model), "--devices", devices, "--output", str(folder)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return done.returncode, done.stderr.strip()


def compare(cpu_folder, gpu_folder):
    worst, problems = 0.0, []
    for expected_file in sorted(cpu_folder.glob("*.npy")):
        expected = np.load(expected_file)
        got_file = gpu_folder / expected_file.name
        if not got_file.exists():
            problems.append(f"{expected_file.stem}: not written on the GPU")
            continue
        got = np.load(got_file)
        if got.shape != expected.shape or got.dtype != expected.dtype:
            problems.append(f"{expected_file.stem}: {got.dtype}{list(got.shape)} on the GPU, "
                            f"{expected.dtype}{list(expected.shape)} on the host")
        elif np.issubdtype(expected.dtype, np.floating):
            scale = float(np.max(np.abs(expected.astype(np.float64)))) if expected.size else 0.0
            error = float(np.max(np.abs(got.astype(np.float64) - expected))) if got.size else 0.0
            if not np.isfinite(got).all() and np.isfinite(expected).all():
                problems.append(f"{expected_file.stem}: non-finite values on the GPU")
            relative = error / scale if scale > 0 else error
            worst = max(worst, relative)
            if relative > TOLERANCE:
                problems.append(f"{expected_file.stem}: normwise error {relative:.2e}")
        elif not np.array_equal(got, expected):
            problems.append(f"{expected_file.stem}: {int(np.sum(got != expected))} elements differ")
    return worst, problems


def gpus_found(gxc):
    listing = subprocess.run([gxc, "devices"], capture_output=True, text=True).stdout
    return sum(1 for line in listing.splitlines() if re.match(r"^\d+ ", line))


def main():
    gxc, work = sys.argv[1], pathlib.Path(sys.argv[2])
    gpus = gpus_found(gxc)
    failed = 0
    print("| model | result | worst normwise error |")
    print("| --- | --- | ---: |")
    for model in sorted((ROOT / "models").glob("*.yaml")):
        if model.name in SKIPPED:
            continue
        needed = 1 + max((int(n) for n in re.findall(r"cuda:(\d+)", model.read_text())), default=0)
        if needed > gpus:
            print(f"| {model.stem} | not run: places layers on {needed} GPUs, this machine has "
                  f"{gpus} | |")
            continue
        cpu_folder, gpu_folder = work / model.stem / "cpu", work / model.stem / "gpu"
        status, message = run(gxc, model, "cpu", cpu_folder)
        if status != 0:
            print(f"| {model.stem} | host run failed: {message.splitlines()[-1]} | |")
            failed += 1
            continue
        status, message = run(gxc, model, "0", gpu_folder)
        if status != 0:
            print(f"| {model.stem} | GPU run failed (exit {status}): "
                  f"{message.splitlines()[-1] if message else ''} | |")
            failed += 1
            continue
        worst, problems = compare(cpu_folder, gpu_folder)
        print(f"| {model.stem} | {'; '.join(problems) if problems else 'matches'} "
              f"| {worst:.1e} |", flush=True)
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
