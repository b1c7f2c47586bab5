"""Compile time of generated chains (bench/gen_chain.py) under each placement, for RESULTS.md.

Usage: compile_time_bench.py BUILD_DIR [N ...]   (default N: 1000 10000 100000)

For every N it writes the chain, then takes the median of 3 runs of
  BUILD_DIR/gxc compile chain.yaml --sim-gpus 2 --placement P -o /dev/null --time-passes
for P in auto, data-parallel and pipeline: the command's wall time, its CPU time (user + sys:
the command is single-threaded, so on an idle machine the two agree, and on a shared one the
CPU time is the steadier) and the passes' total from --time-passes; and yaml-cpp's own load
of the same file (BUILD_DIR/bench/yaml_load_bench), the floor under the command, also wall
and CPU. Prints one Markdown table row per N, each cell "wall (cpu) / passes".
"""
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PLACEMENTS = ["auto", "data-parallel", "pipeline"]
RUNS = 3


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compile_once(gxc, model, placement):
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [gxc, "compile", model, "--sim-gpus", "2", "--placement", placement, "-o", os.devnull,
         "--time-passes"], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    cpu = children_cpu() - cpu
    passes = float(re.search(r"([\d.]+)\s+total", done.stderr).group(1)) / 1000
    return wall, cpu, passes


def yaml_load(build, model):
    done = subprocess.run([os.path.join(build, "bench", "yaml_load_bench"), model, str(RUNS)],
                          capture_output=True, text=True, check=True)
    found = re.search(r"median ([\d.]+) s .*cpu ([\d.]+) s", done.stdout)
    return f"{float(found.group(1)):.2f} ({float(found.group(2)):.2f})"


def main():
    build = sys.argv[1]
    sizes = [int(n) for n in sys.argv[2:]] or [1000, 10000, 100000]
    gxc = os.path.join(build, "gxc")
    bench = os.path.dirname(os.path.abspath(__file__))
    print("| layers | yaml-cpp load | " +
          " | ".join(f"{p}: wall (cpu) / passes" for p in PLACEMENTS) + " |")
    print("| -----: | ----: | " + " | ".join("----:" for _ in PLACEMENTS) + " |")
    with tempfile.TemporaryDirectory() as scratch:
        for n in sizes:
            model = os.path.join(scratch, f"chain{n}.yaml")
            subprocess.run([sys.executable, os.path.join(bench, "gen_chain.py"), str(n), model],
                           check=True)
            cells = []
            for placement in PLACEMENTS:
                runs = [compile_once(gxc, model, placement) for _ in range(RUNS)]
                wall, cpu, passes = (statistics.median(r[i] for r in runs) for i in range(3))
                cells.append(f"{wall:.2f} ({cpu:.2f}) / {passes:.2f}")
            print(f"| {n:,} | {yaml_load(build, model)} | " + " | ".join(cells) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
