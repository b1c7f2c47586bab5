"""The cost of calling a compiled model from Python: a small MLP (models/mlp.yaml, 13 -> 16 ->
32 -> 1 at batch 64) called through the gxc module, against the same run inside C++
(executable_call_bench, the floor) and against the same MLP in PyTorch eager (`torch.no_grad`),
all on the host with the same threads.

Each way runs in a process of its own (PyTorch and gxc each bring an OpenMP runtime, whose
waiting threads would spin against the other's), in rounds that interleave them, so that a
change of load on a shared machine falls on all alike; each figure is the median over the
rounds of each round's median microseconds per call. The checks (issue: the Python module):
gxc from Python at most 10 microseconds more per call than in C++, and at most PyTorch eager's
time. Exit status 1 when one fails.

    python3 bench/python_call_overhead.py --build build-rel [--rounds 5] [--calls 2000]
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
MODEL = ROOT / "models" / "mlp.yaml"
# As the gxc module and the gxc command set it (python/gxc/__init__.py): the C++ floor and the
# module's process wait alike.
ENVIRONMENT = dict(os.environ, GOMP_SPINCOUNT=os.environ.get("GOMP_SPINCOUNT", "10000"))


def median_micros(call, calls):
    from peer_timing import median_ms
    return median_ms(call, calls) * 1e3


def time_gxc(calls, framework):
    import numpy as np

    import gxc
    exe = gxc.compile(str(MODEL), devices="cpu")
    x = np.random.default_rng(0).standard_normal((64, 13)).astype(np.float32)
    if framework == "torch":
        import torch
        x = torch.from_numpy(x)
    return median_micros(lambda: exe(x=x), calls)


def time_torch(calls):
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(13, 16), torch.nn.ReLU(), torch.nn.Linear(16, 32),
                                torch.nn.ReLU(), torch.nn.Linear(32, 1)).eval()
    x = torch.randn(64, 13)
    with torch.no_grad():
        return median_micros(lambda: model(x), calls)


def measure_in_process(way, calls):
    if way == "torch-eager":
        return time_torch(calls)
    return time_gxc(calls, "torch" if way == "gxc-python-torch" else "numpy")


def measure(way, args):
    """One round of one way, in a process of its own: median microseconds per call."""
    if way == "gxc-cpp":
        command = [str(args.build / "bench" / "executable_call_bench"), str(MODEL), "x",
                   str(args.calls)]
    else:
        command = [sys.executable, __file__, "--measure", way, "--calls", str(args.calls)]
    environment = dict(ENVIRONMENT, PYTHONPATH=str(args.build / "python"))
    done = subprocess.run(command, env=environment, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"python_call_overhead: {way} failed:\n{done.stderr}")
    return float(done.stdout.strip().splitlines()[-1])


WAYS = [("gxc-cpp", "gxc, Executable::run in C++ (the floor)"),
        ("gxc-python", "gxc from Python, NumPy in and out"),
        ("gxc-python-torch", "gxc from Python, torch in and out"),
        ("torch-eager", "PyTorch eager, `torch.no_grad()`")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, default=ROOT / "build-rel")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(measure_in_process(args.measure, args.calls))
        return 0
    from bench_venv import ensure_venv
    ensure_venv()
    args.build = args.build.resolve()
    rounds = {way: [] for way, _ in WAYS}
    for _ in range(args.rounds):
        for way, _ in WAYS:
            rounds[way].append(measure(way, args))
    median = {way: statistics.median(times) for way, times in rounds.items()}
    import torch
    print(f"models/mlp.yaml at batch 64 on the host, {torch.get_num_threads()} threads; "
          f"median over {args.rounds} interleaved rounds of each round's median of "
          f"{args.calls} calls.\n")
    print("| way | µs per call | vs C++ |")
    print("| --- | ---: | ---: |")
    for way, label in WAYS:
        print(f"| {label} | {median[way]:.1f} | +{median[way] - median['gxc-cpp']:.1f} |")
    checks = [
        ("gxc from Python at most 10 µs more than in C++",
         median["gxc-python"] - median["gxc-cpp"] <= 10.0),
        ("gxc from Python at most PyTorch eager's time",
         median["gxc-python"] <= median["torch-eager"]),
    ]
    print()
    for what, held in checks:
        print(f"- {what}: {'yes' if held else '**no**'}")
    print(json.dumps({"median_us": median}), file=sys.stderr)
    return 0 if all(held for _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
