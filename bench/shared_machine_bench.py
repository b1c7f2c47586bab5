#!/usr/bin/env python3
"""gxc and ONNX Runtime on a machine where another process holds a core: each side's time per
iteration with the machine to itself and beside a competing busy process, over many runs, and
whether any gxc run slowed down by more than 1.5x ONNX Runtime's slowdown.

Usage: bench/shared_machine_bench.py [--gxc build/gxc] [--runs 20] [--iterations 30]
                                     [--threads N]
Needs a Python with numpy and onnxruntime (tests/onnx/requirements-nets.txt, the .venv of
scripts/python-env.sh) and a built gxc; the networks are exported into BUILD/onnx-networks by
tests/onnx/export_networks.py (Debian's python3 with torch and torchvision) when missing.

Two networks of tests/onnx/export_networks.py: a small one, the GPT-2-style decoder at batch 4,
sequence 16 (a fraction of a millisecond an iteration), and a large one, ResNet-18 at batch 8,
3x64x64 (tens of milliseconds). Each run, for each network, times in turn:
- quiet: `gxc run NET.onnx --devices cpu --iterations N --report FILE` (one warm-up, N timed
  iterations, the report's p50), then ONNX Runtime on the same model and inputs, timed as
  bench/onnx_networks_vs_ort.py times it (a session on the CPU execution provider,
  intra_op_num_threads = T, one inter-op thread; three warm-up calls, the median of N calls);
- loaded: the same two, while a competing process spins on one core (a busy loop in a child
  Python process, started before and stopped after each side's timing).
T is --threads, or else the cores the process may run on (its CPU affinity): gxc then runs with
no setting at all, the defaults a user gets; with --threads, OMP_NUM_THREADS=T.

A side's slowdown in a run is its loaded time over the median of its quiet times over all runs.
The check, on both sides' runs in the same conditions: gxc's worst slowdown is at most 1.5x ONNX
Runtime's worst, and its median slowdown at most 1.5x ONNX Runtime's median. (A single run of
either side can be twice as slow as its median when another process on the machine wakes, so
each side's worst run is held against the other's worst, not against a median.) The script
prints the table and exits 1 if the check fails. A benchmark, not a test: it needs a machine
whose load is this script's own.
"""

import argparse
import json
import multiprocessing
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime

from onnx_networks_vs_ort import time_ort  # the same timing of ONNX Runtime (this folder)

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIMIT = 1.5  # gxc's slowdown under load, as a multiple of ONNX Runtime's

# (network, its sizes as printed, its inputs)
NETWORKS = [
    ("gpt2_tiny", "batch 4, sequence 16",
     {"input_ids": np.random.default_rng(0).integers(0, 100, (4, 16)).astype(np.int64)}),
    ("resnet18", "batch 8, 3x64x64",
     {"image": np.random.default_rng(0).standard_normal((8, 3, 64, 64)).astype(np.float32)}),
]


def spin_forever():
    while True:
        pass


class CompetingProcess:
    """A process that keeps one core busy while the block runs."""

    def __enter__(self):
        self.process = multiprocessing.Process(target=spin_forever, daemon=True)
        self.process.start()
        time.sleep(0.2)  # let the scheduler settle it on a core
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.join()


def time_gxc(gxc, model, input_files, iterations, threads):
    with tempfile.TemporaryDirectory() as folder:
        report = pathlib.Path(folder) / "report.json"
        command = [gxc, "run", str(model), "--devices", "cpu", "--iterations", str(iterations),
                   "--report", str(report)]
        for name, path in input_files.items():
            command += ["--input", f"{name}={path}"]
        env = dict(os.environ)
        if threads is not None:
            env["OMP_NUM_THREADS"] = str(threads)
        result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env)
        if result.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{result.stderr.strip()}")
        return json.loads(report.read_text())["iteration_ms"]["p50"]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gxc", default=str(ROOT / "build" / "gxc"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--threads", type=int)
    return parser.parse_args()


def main():
    args = parse_arguments()
    gxc = str(pathlib.Path(args.gxc).resolve())
    models = pathlib.Path(gxc).parent / "onnx-networks"
    if not all((models / f"{name}.onnx").exists() for name, _, _ in NETWORKS):
        subprocess.run(["/usr/bin/python3", str(ROOT / "tests/onnx/export_networks.py"),
                        str(models)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    threads = args.threads or len(os.sched_getaffinity(0))
    print(f"{args.runs} runs of {args.iterations} timed iterations, {threads} threads"
          f"{'' if args.threads else ' (gxc by its default)'}; "
          f"ONNX Runtime {onnxruntime.__version__}; load average "
          f"{os.getloadavg()[0]:.2f} at the start", flush=True)
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        for name, sizes, inputs in NETWORKS:
            model = models / f"{name}.onnx"
            files = {}
            for input_name, value in inputs.items():
                files[input_name] = pathlib.Path(folder) / f"{name}-{input_name}.npy"
                np.save(files[input_name], value)
            times = {side: {"quiet": [], "loaded": []} for side in ("gxc", "ort")}
            for run in range(args.runs):
                for load in ("quiet", "loaded"):
                    for side in ("gxc", "ort"):
                        measure = (lambda: time_gxc(gxc, model, files, args.iterations,
                                                    args.threads)) if side == "gxc" else (
                            lambda: time_ort(model, inputs, args.iterations, threads)[0])
                        if load == "loaded":
                            with CompetingProcess():
                                times[side][load].append(measure())
                        else:
                            times[side][load].append(measure())
                print(f"  {name} run {run + 1}: gxc {times['gxc']['quiet'][-1]:.3f} / "
                      f"{times['gxc']['loaded'][-1]:.3f} ms, ONNX Runtime "
                      f"{times['ort']['quiet'][-1]:.3f} / {times['ort']['loaded'][-1]:.3f} ms "
                      f"(quiet / loaded)", file=sys.stderr, flush=True)
            quiet = {side: statistics.median(times[side]["quiet"]) for side in times}
            slowdowns = {side: [t / quiet[side] for t in times[side]["loaded"]]
                         for side in times}
            worst = {side: max(slowdowns[side]) for side in slowdowns}
            typical = {side: statistics.median(slowdowns[side]) for side in slowdowns}
            print(f"\n| {name} ({sizes}) | quiet p50 | loaded p50 | loaded max | "
                  f"slowdown median | slowdown max |")
            print("| --- | ---: | ---: | ---: | ---: | ---: |")
            for side, label in (("gxc", "gxc"), ("ort", "ONNX Runtime")):
                loaded = times[side]["loaded"]
                print(f"| {label} | {quiet[side]:.3f} ms | {statistics.median(loaded):.3f} ms "
                      f"| {max(loaded):.3f} ms | {typical[side]:.2f}x | {worst[side]:.2f}x |")
            holds = (worst["gxc"] <= LIMIT * worst["ort"] and
                     typical["gxc"] <= LIMIT * typical["ort"])
            print(f"\ngxc's slowdown {typical['gxc']:.2f}x (median), {worst['gxc']:.2f}x (worst); "
                  f"{LIMIT}x ONNX Runtime's: {LIMIT * typical['ort']:.2f}x, "
                  f"{LIMIT * worst['ort']:.2f}x: {'holds' if holds else 'FAILS'}", flush=True)
            failed = failed or not holds
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
