#!/usr/bin/env python3
"""Runs every benchmark of bench/ in one invocation and writes bench/RESULTS.md: the latest
tables only, each with the command that made it, under one header that says the commit, the
date, the machine, its load and the peers' versions. History lives in git (`git log -p
bench/RESULTS.md`).

Usage: bench/write_results.py [--build build-rel] [--output bench/RESULTS.md] [--quick]
                              [--only SECTION ...]
Run it with any python3: it runs itself in .venv-bench/ (bench/bench_venv.py: PyTorch,
torchvision, ONNX Runtime and NumPy from PyPI), the Python every section's peer needs. BUILD is
configured as Release when it has no cache yet (`cmake -S . -B BUILD -DCMAKE_BUILD_TYPE=Release`),
and gxc and the benchmark programs are built in it first. The benchmarks run without
GXC_VERIFY_EACH_PASS (the per-pass verifier off, as users run gxc).

The tree must be clean (a figure belongs to a commit): with changes to tracked files the script
stops, unless --quick, whose figures are only for trying the script and are written to
--output with "(with changes)" in the header. --only runs some sections and prints them
instead of writing a file: a results file always holds every section of one run.
A section whose benchmark fails stops the script before anything is written; a benchmark that
ran and reports a missed target (shared-machine's exit status 1) is a result, kept as such.
"""

import argparse
import datetime
import os
import pathlib
import subprocess
import sys
import textwrap
import time

if __name__ == "__main__":
    from bench_venv import ensure_venv  # this folder

    ensure_venv()  # the sections run with this venv's python

from results_sections import SECTIONS  # noqa: E402  (this folder)

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROGRAMS = ["gxc", "gxc-engine", "host_rates_bench", "batch_transfers_bench",
            "data_parallel_bench", "pipeline_bench", "yaml_load_bench", "fma_peak_bench",
            "executable_call_bench", "gxc_python_package"]


def git(*arguments):
    return subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def tree_changed():
    return subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0


def cpu_model():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "an unknown processor"


def load_average():
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


def peer_versions():
    import numpy
    import onnxruntime
    import torch
    import torchvision
    return (f"PyTorch {torch.__version__}, torchvision {torchvision.__version__}, ONNX Runtime "
            f"{onnxruntime.__version__}, NumPy {numpy.__version__} (all from PyPI, "
            "bench/requirements-peers*.txt)")


def build(folder):
    # The Python module's build needs nanobind, from the venv scripts/torch-env.sh makes.
    subprocess.run([str(ROOT / "scripts" / "torch-env.sh")], check=True)
    if not (folder / "CMakeCache.txt").exists():
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(folder),
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, stdout=subprocess.DEVNULL)
    print(f"== building gxc and the benchmarks in {folder}", file=sys.stderr, flush=True)
    subprocess.run(["cmake", "--build", str(folder), "-j", str(os.cpu_count()), "--target",
                    *PROGRAMS], check=True, stdout=subprocess.DEVNULL)


def run_section(section, args):
    """The section's Markdown: its title, what it measures, its command and its output."""
    command = section.command(args)
    shown = " ".join(command).replace(sys.executable, "python3").replace(str(ROOT) + "/", "")
    print(f"== {section.title}: {shown}", file=sys.stderr, flush=True)
    environment = dict(os.environ, PATH=f"{pathlib.Path(sys.executable).parent}:"
                       f"{os.environ['PATH']}")
    environment.pop("GXC_VERIFY_EACH_PASS", None)
    start = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, text=True)
    if result.returncode not in section.statuses:
        sys.exit(f"write_results: {section.title}: `{shown}` exited with status "
                 f"{result.returncode}; nothing written")
    minutes = (time.monotonic() - start) / 60
    output = result.stdout.strip()
    body = output if section.markdown else f"```\n{output}\n```"
    outcome = section.statuses[result.returncode]
    what = textwrap.fill(section.what, width=100)
    return (f"## {section.title}\n\n{what}\n\n```sh\n{shown}\n```\n\n{body}\n\n"
            f"{outcome + ' ' if outcome else ''}(The section took {minutes:.1f} min.)\n")


def header(args, changed):
    commit = git("rev-parse", "HEAD")
    return f"""# Benchmark results

The latest figures of every benchmark in `bench/`, all from one run of
`bench/write_results.py{' --quick' if args.quick else ''}` (which wrote this file):

- commit `{commit}`{' (with changes: figures for trying the script only)' if changed else ''}
- {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC
- {os.cpu_count()} cores, {cpu_model()}; load average {load_average()} before the run
- {peer_versions()}
- gxc: a Release build (`{args.build.name}`), the per-pass verifier off

**Simulated figures** (the sections that say so) are the `sim` platform's cost model of virtual
H100s (`target/cost_model.h`, `target/cost_table.cpp`), not measurements of a GPU, and the same
on any host. Every other figure is a wall time of this machine, shared with other work: compare
figures within a table, whose sides ran interleaved, not across runs. gxc on a real GPU is
`bench/RESULTS-gpu.md`; what the figures mean, and the decisions they led to, `docs/performance.md`.
Earlier runs: `git log -p bench/RESULTS.md`.
"""


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build-rel",
                        help="the Release build folder (default build-rel; made if missing)")
    parser.add_argument("--output", default=str(ROOT / "bench" / "RESULTS.md"))
    parser.add_argument("--quick", action="store_true",
                        help="every benchmark at its least size and count: for trying the script")
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SECTIONS],
                        help="run these sections and print them; write nothing")
    args = parser.parse_args()
    args.build = (ROOT / args.build).resolve()
    return args


def main():
    args = parse_arguments()
    changed = tree_changed()
    if changed and not args.quick and not args.only:
        sys.exit("write_results: the tree has changes; figures must belong to a commit: commit "
                 "or stash them (or --quick to try the script)")
    build(args.build)
    sections = [s for s in SECTIONS if not args.only or s.name in args.only]
    text = "" if args.only else header(args, changed)
    for section in sections:
        text += "\n" + run_section(section, args)
    if args.only:
        print(text)
        return
    text += f"\nLoad average {load_average()} after the run.\n"
    pathlib.Path(args.output).write_text(text)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
