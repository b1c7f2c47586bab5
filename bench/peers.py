#!/usr/bin/env python3
"""gxc on the host against its peers, PyTorch and ONNX Runtime, on the same weights and inputs;
the machine's f32 GEMM peak and gxc's share of it; gxc's compile time, start-up time and memory.

Usage: bench/peers.py [--gxc build/gxc] [--iterations 30] [--rounds 3] [--quick] [--no-header]
                      [--only SECTION ...] [--skip SECTION ...]   (sections: peers, gemm, compile)
Run it with any python3: it creates .venv-bench/ in the repository root (bench/bench_venv.py:
PyTorch, ONNX Runtime, ... from PyPI) when the venv is missing or its pins changed, and runs
itself again with the venv's python. Prints Markdown tables for
bench/RESULTS.md, after a header that says what was measured: commit, date, machine, load.

peers: for each model (bench/models/mlp_wide_gelu.yaml, bench/models/transformer_block_512.yaml,
bench/models/mlp_batch.yaml, models/resnet_cifar.yaml, models/gpt_decoder.yaml), at two sizes
each, the equivalent torch.nn.Module is built from a fixed seed (the networks' from
tests/fixtures/torch_networks.py, the others below), its state_dict written as safetensors and
the module exported by torch.onnx.export, at that size; gxc loads the weights by their
state_dict names (`--weights`). All three run the same inputs, drawn from a fixed seed. Once per
case each side's output is checked against PyTorch's (within 1e-3 relative, and 1e-3 of the
largest magnitude): the script stops if they differ, since the times must be of the same
computation. Then, for 1 and 2 threads, R interleaved rounds, each timing in turn:
- gxc: `gxc run MODEL --devices cpu --weights W --input NAME=FILE.npy --iterations N --report
  FILE` under OMP_NUM_THREADS=t and OPENBLAS_NUM_THREADS=t (its f32 GEMMs and convolutions are
  oneDNN's on OpenMP, its f64 GEMMs OpenBLAS, its generated kernels OpenMP); one warm-up and N
  timed runs, the report's p50;
- PyTorch: float32, eval(), under torch.inference_mode(), torch.set_num_threads(t); three
  warm-up calls, the median of N timed calls;
- ONNX Runtime: CPUExecutionProvider, default graph optimizations, intra_op_num_threads=t,
  inter_op_num_threads=1; three warm-up calls, the median of N timed calls.
Each figure is the median of the R rounds' medians. After the table, each case's floor: its
matrix-product and convolution FLOP (torch.utils.flop_counter) at the measured FMA peak (below),
the least time an f32 implementation can take, beside 0.8x PyTorch's time.

gemm: torch.mm and NumPy's matmul (its bundled OpenBLAS, in a child process under
OPENBLAS_NUM_THREADS=t) of two f32 n x n matrices, n = 2048 and 4096, 1 and 2 threads; each
the median of max(3, N/3) calls after one warm-up, at 2 n^3 FLOP per call. The measured peak at
t threads is the best of them. The FMA peak, the arithmetic bound of any f32 GEMM, is measured
by bench/fma_peak_bench (built beside gxc): the clock by a chain of dependent adds, the rate by
independent chains of FMAs on the widest vectors the CPU has, on t threads at once; a virtual
machine reports neither its boost clock nor its FMA units per core. gxc's GEMM throughput is the wide MLP's GEMM FLOP at batch 256,
2 x 256 x (1024 x 4096 + 4096 x 4096 + 4096 x 1024), over gxc's time per iteration (the peers
figure, or measured as there when peers is skipped).

compile (gxc alone, its own default threads): the wall time of `gxc compile CHAIN --sim-gpus 4
--placement auto --emit ir -o /dev/null` on chains of 100,000 and 10,000 layers, linear [64 ->
64] and relu in turn (`bench/gen_chain.py N FILE linear`), the median of 3 runs; of `gxc run models/mlp.yaml --devices cpu`, process
start to exit, with the kernel cache warm (one run first), the median of 10; and the peak
resident set of `gxc compile models/very_big_module.yaml --sim-gpus 2 -o /dev/null`, in MB
(10^6 bytes), by GNU time (/usr/bin/time, its %M). Beside them, without a target, the same of
`gxc --version`: the floor under every command, loading gxc and its libraries.

--quick, for trying the script: N = 3, R = 1, one compile of each chain, three start-ups.
"""

import argparse
import datetime
import json
import logging
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SECTIONS = ("peers", "gemm", "compile")
THREADS = (1, 2)
SEED = 20261127
GEMM_SIZES = (2048, 4096)
WIDE_MLP_BATCH = 256
WIDE_MLP_GEMM_FLOP = 2 * WIDE_MLP_BATCH * (1024 * 4096 + 4096 * 4096 + 4096 * 1024)
TOLERANCE = 1e-3


if __name__ == "__main__":
    from bench_venv import ensure_venv  # this folder

    ensure_venv()  # before the imports below, which come from the venv

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from peer_timing import median_ms, ort_session  # noqa: E402  (this folder)
from safetensors.torch import save_file  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import torch_networks  # noqa: E402  (after the path that holds it)

logging.getLogger("torch.onnx").setLevel(logging.ERROR)  # the exporter's progress notes


# ---- gxc ------------------------------------------------------------------------------------


def run(command, threads=None, capture=False):
    """Runs a gxc command (with `threads` for its BLAS and OpenMP); a failure stops the benchmark
    with gxc's own message. Returns its stdout when captured."""
    env = dict(os.environ)
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    done = subprocess.run(command, env=env, text=True, stderr=subprocess.PIPE,
                          stdout=subprocess.PIPE if capture else subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}\nfailed (exit {done.returncode}):\n{done.stderr.strip()}")
    return done.stdout


def gxc_run_command(gxc, case, folder):
    command = [gxc, "run", str(case["model"]), "--devices", "cpu", "--weights",
               str(folder / "weights.safetensors")]
    for name in case["inputs"]:
        command += ["--input", f"{name}={folder / name}.npy"]
    return command


def gxc_ms(gxc, case, folder, threads, iterations):
    report = folder / "report.json"
    run(gxc_run_command(gxc, case, folder) + ["--iterations", str(iterations),
                                              "--report", str(report)], threads)
    return json.loads(report.read_text())["iteration_ms"]["p50"]


def gxc_output(gxc, case, folder):
    outputs = folder / "outputs"
    run(gxc_run_command(gxc, case, folder) + ["--output", str(outputs)])
    (path,) = outputs.glob("*.npy")  # every model here has one output
    return np.load(path)


# ---- the peers ------------------------------------------------------------------------------


def single_output(outputs):
    """The one output of a module, which returns a tensor or a dict of one."""
    if isinstance(outputs, dict):
        (outputs,) = outputs.values()
    return outputs


def torch_ms(module, inputs, threads, iterations):
    torch.set_num_threads(threads)
    tensors = list(inputs.values())
    with torch.inference_mode():
        return median_ms(lambda: module(*tensors), iterations)


def ort_ms(session, feed, iterations):
    return median_ms(lambda: session.run(None, feed), iterations)


def check_close(side, actual, expected, case):
    """Stops the benchmark when a side's output is not PyTorch's."""
    scale = float(np.abs(expected).max())
    if actual.shape != expected.shape or not np.allclose(
            actual, expected, rtol=TOLERANCE, atol=TOLERANCE * scale):
        error = float(np.abs(actual - expected).max()) if actual.shape == expected.shape else None
        sys.exit(f"{case['model'].name} ({case['size']}): {side}'s output differs from "
                 f"PyTorch's: shape {actual.shape} against {expected.shape}, largest difference "
                 f"{error} where the largest magnitude is {scale:g}")


# ---- the models -----------------------------------------------------------------------------


class Mlp(nn.Module):
    """Linear layers fc1, fc2, ... of the given widths, each but the last followed by its
    activation: the wide MLP (bench/models/mlp_wide_gelu.yaml) and the regression MLP
    (models/mlp.yaml, bench/models/mlp_batch.yaml at any batch)."""

    def __init__(self, widths, activations):
        super().__init__()
        self.activations = activations
        for i, (width_in, width_out) in enumerate(zip(widths, widths[1:])):
            setattr(self, f"fc{i + 1}", nn.Linear(width_in, width_out))

    def forward(self, x):
        for i, activation in enumerate(self.activations):
            x = activation(getattr(self, f"fc{i + 1}")(x))
        return getattr(self, f"fc{len(self.activations) + 1}")(x)


def WideMlp():
    return Mlp((1024, 4096, 4096, 1024), (F.relu, F.gelu))


def RegressionMlp():
    return Mlp((13, 16, 32, 1), (F.relu, F.relu))


class TransformerBlock(nn.Module):
    """models/transformer_block.yaml's pre-norm block (bench/models/transformer_block_512.yaml
    at width 512 and 8 heads): separate q, k and v projections, an MLP 4x wider, exact gelu."""

    def __init__(self, width=512, heads=8):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.attn_out = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x):
        batch, tokens, width = x.shape
        a = self.ln1(x)
        q, k, v = (projection(a).reshape(batch, tokens, self.heads, -1).transpose(1, 2)
                   for projection in (self.q, self.k, self.v))
        context = F.scaled_dot_product_attention(q, k, v)
        x = x + self.attn_out(context.transpose(1, 2).reshape(batch, tokens, width))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def normal_input(*shape):
    return lambda generator: {"x": torch.randn(*shape, generator=generator)}


BENCH_MODELS, MODELS = ROOT / "bench" / "models", ROOT / "models"
WIDE_MLP = (BENCH_MODELS / "mlp_wide_gelu.yaml", f"batch {WIDE_MLP_BATCH}", WideMlp,
            normal_input(WIDE_MLP_BATCH, 1024))
# (model file, the size as printed, its torch module, its inputs from a generator)
CASES = [
    WIDE_MLP,
    (BENCH_MODELS / "mlp_wide_gelu.yaml", "batch 64", WideMlp, normal_input(64, 1024)),
    (BENCH_MODELS / "transformer_block_512.yaml", "batch 8, seq 128", TransformerBlock,
     normal_input(8, 128, 512)),
    (BENCH_MODELS / "transformer_block_512.yaml", "batch 2, seq 128", TransformerBlock,
     normal_input(2, 128, 512)),
    (BENCH_MODELS / "mlp_batch.yaml", "batch 64", RegressionMlp, normal_input(64, 13)),
    (BENCH_MODELS / "mlp_batch.yaml", "batch 4096", RegressionMlp, normal_input(4096, 13)),
    (MODELS / "resnet_cifar.yaml", "batch 8", torch_networks.ResNetCifar,
     lambda g: torch_networks.resnet_cifar_inputs(g, 8)),
    (MODELS / "resnet_cifar.yaml", "batch 32", torch_networks.ResNetCifar,
     lambda g: torch_networks.resnet_cifar_inputs(g, 32)),
    (MODELS / "gpt_decoder.yaml", "batch 4, seq 16", torch_networks.GptDecoder,
     lambda g: torch_networks.gpt_decoder_inputs(g, 4, 16)),
    (MODELS / "gpt_decoder.yaml", "batch 16, seq 16", torch_networks.GptDecoder,
     lambda g: torch_networks.gpt_decoder_inputs(g, 16, 16)),
]


def build_case(spec):
    """The case's module, its weights from SEED, and its inputs, drawn from SEED."""
    model, size, make_module, make_inputs = spec
    torch.manual_seed(SEED)
    return {"model": model, "size": size, "module": make_module().eval(),
            "inputs": make_inputs(torch.Generator().manual_seed(SEED))}


def prepare(gxc, case, folder):
    """Writes the case's weights, inputs and ONNX model into folder; checks gxc's and ONNX
    Runtime's outputs against PyTorch's. Returns ONNX Runtime's feed."""
    module, inputs = case["module"], case["inputs"]
    state = {name: tensor.contiguous() for name, tensor in module.state_dict().items()}
    save_file(state, str(folder / "weights.safetensors"))
    for name, tensor in inputs.items():
        np.save(folder / f"{name}.npy", tensor.numpy())
    with torch.inference_mode():
        expected = single_output(module(*inputs.values())).numpy()
    torch.onnx.export(module, tuple(inputs.values()), str(folder / "model.onnx"),
                      input_names=list(inputs), verbose=False)
    feed = {name: tensor.numpy() for name, tensor in inputs.items()}
    check_close("gxc", gxc_output(gxc, case, folder), expected, case)
    check_close("ONNX Runtime", ort_session(folder / "model.onnx", 1).run(None, feed)[0],
                expected, case)
    return feed


def matmul_flop(case):
    """FLOP of one forward pass in matrix products and convolutions, as PyTorch counts them
    (torch.utils.flop_counter: 2 m n k per product)."""
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        case["module"](*case["inputs"].values())
    return counter.get_total_flops()


def floor_table(rows, fma):
    """The least time any f32 implementation can take per case: its matmul FLOP at the machine's
    measured FMA rate, against 0.8x PyTorch's time, the issue's target."""
    print("\nThe arithmetic floor: each case's matrix-product and convolution FLOP (PyTorch's "
          "FlopCounterMode) at the measured f32 FMA peak (fma_peak_bench, below), the least time "
          "any f32 implementation can take; 0.8x PyTorch is the target; gxc's rate is those FLOP "
          "over gxc's whole time:\n")
    print("| model | size | threads | GFLOP | floor ms | 0.8x PyTorch ms | gxc ms | "
          "gxc GFLOP/s | of FMA peak |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for model, size, threads, flop, ours, theirs in rows:
        peak = fma[threads][1]
        print(f"| {model} | {size} | {threads} | {flop / 1e9:.3f} | {flop / peak / 1e6:.3f} | "
              f"{0.8 * theirs:.3f} | {ours:.3f} | {flop / ours / 1e6:.1f} | "
              f"{flop / ours / 1e6 / peak:.0%} |", flush=True)


def peers(args):
    """The peers table; returns gxc's ms per iteration of the wide MLP at batch 256 by threads."""
    print(f"\n### gxc against PyTorch and ONNX Runtime: median of {args.rounds} interleaved "
          f"rounds, each the median of {args.iterations} timed iterations\n")
    print("| model | size | threads | gxc ms | PyTorch ms | ORT ms | gxc / PyTorch | gxc / ORT |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |", flush=True)
    wide_mlp_ms, floor_rows = {}, []
    for spec in CASES:
        case = build_case(spec)
        flop = matmul_flop(case)
        with tempfile.TemporaryDirectory() as scratch:
            folder = pathlib.Path(scratch)
            feed = prepare(args.gxc, case, folder)
            for threads in THREADS:
                session = ort_session(folder / "model.onnx", threads)
                rounds = [(gxc_ms(args.gxc, case, folder, threads, args.iterations),
                           torch_ms(case["module"], case["inputs"], threads, args.iterations),
                           ort_ms(session, feed, args.iterations)) for _ in range(args.rounds)]
                ours, theirs, ort = (statistics.median(r[i] for r in rounds) for i in range(3))
                print(f"| {case['model'].stem} | {case['size']} | {threads} | {ours:.3f} | "
                      f"{theirs:.3f} | {ort:.3f} | {ours / theirs:.2f}x | {ours / ort:.2f}x |",
                      flush=True)
                floor_rows.append((case["model"].stem, case["size"], threads, flop, ours, theirs))
                if spec is WIDE_MLP:
                    wide_mlp_ms[threads] = ours
    floor_table(floor_rows, fma_peak(args))
    return wide_mlp_ms


# ---- the GEMM peak --------------------------------------------------------------------------

NUMPY_GEMM = """
import statistics, sys, time
import numpy as np
n, calls = int(sys.argv[1]), int(sys.argv[2])
a, b = np.random.default_rng(0).standard_normal((2, n, n), dtype=np.float32)
a @ b
times = []
for _ in range(calls):
    start = time.perf_counter()
    a @ b
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def torch_gemm_seconds(n, threads, calls):
    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(SEED)
    a, b = torch.randn(2, n, n, generator=generator)
    torch.mm(a, b)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_gemm_seconds(n, threads, calls):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    done = subprocess.run([sys.executable, "-c", NUMPY_GEMM, str(n), str(calls)], env=env,
                          check=True, capture_output=True, text=True)
    return float(done.stdout)


def cpu_info():
    """The processor's model name, from /proc/cpuinfo, for the header."""
    text = pathlib.Path("/proc/cpuinfo").read_text()
    return re.search(r"^model name\s*:\s*(.*)$", text, re.M).group(1).strip()


FMA_PEAK = {}


def fma_peak(args):
    """{threads: (GHz, GFLOP/s, FLOP per cycle per core)}: the clock and the f32 FMA rate measured
    by bench/fma_peak_bench from gxc's build folder, on each of THREADS; measured once a run."""
    if not FMA_PEAK:
        bench = pathlib.Path(args.gxc).parent / "bench" / "fma_peak_bench"
        if not os.access(bench, os.X_OK):
            sys.exit(f"no {bench}: build it (cmake --build {bench.parent.parent})")
        output = run([str(bench), "5", *map(str, THREADS)], capture=True)
        print(f"\n`{bench.name} 5 {' '.join(map(str, THREADS))}`:\n\n```\n{output.strip()}\n```",
              flush=True)
        for line in output.splitlines():
            fields = line.split(",")
            if fields[0].isdigit():
                FMA_PEAK[int(fields[0])] = tuple(float(field) for field in fields[1:])
    return FMA_PEAK


def gemm(args, wide_mlp_ms):
    calls = max(3, args.iterations // 3)
    print(f"\n### f32 GEMM peak: n x n by n x n, 2 n^3 FLOP, the median of {calls} calls\n")
    print("| library | n | threads | GFLOP/s |")
    print("| --- | ---: | ---: | ---: |", flush=True)
    peak = {}
    for threads in THREADS:
        for library, seconds in (("PyTorch torch.mm", torch_gemm_seconds),
                                 (f"NumPy {np.__version__} matmul", numpy_gemm_seconds)):
            for n in GEMM_SIZES:
                rate = 2 * n ** 3 / seconds(n, threads, calls) / 1e9
                print(f"| {library} | {n} | {threads} | {rate:.1f} |", flush=True)
                peak[threads] = max(peak.get(threads, 0.0), rate)
    fma = fma_peak(args)
    print()
    for threads in THREADS:
        print(f"- measured peak, threads {threads}: {peak[threads]:.1f} GFLOP/s (the best above)")
    for threads in THREADS:
        ghz, rate, per_cycle = fma[threads]
        print(f"- FMA peak, threads {threads}: {rate:.1f} GFLOP/s (fma_peak_bench: {ghz:.2f} GHz "
              f"measured x {per_cycle:.1f} FLOP per cycle per core; the arithmetic bound of any "
              f"f32 GEMM)")
    print(f"\ngxc's GEMMs on mlp_wide_gelu at batch {WIDE_MLP_BATCH} "
          f"({WIDE_MLP_GEMM_FLOP / 1e9:.2f} GFLOP per iteration):\n")
    print("| threads | gxc ms | GEMM GFLOP/s | of measured peak | of FMA peak |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    wide_mlp_ms = wide_mlp_ms or wide_mlp_gxc_ms(args)
    for threads in THREADS:
        ms = wide_mlp_ms[threads]
        rate = WIDE_MLP_GEMM_FLOP / ms / 1e6
        print(f"| {threads} | {ms:.2f} | {rate:.1f} | {rate / peak[threads]:.0%} | "
              f"{rate / fma[threads][1]:.0%} |", flush=True)


def wide_mlp_gxc_ms(args):
    """gxc's time per iteration of the wide MLP at batch 256 by threads, as peers measures it."""
    case = build_case(WIDE_MLP)
    with tempfile.TemporaryDirectory() as scratch:
        folder = pathlib.Path(scratch)
        prepare(args.gxc, case, folder)
        return {threads: statistics.median(
            gxc_ms(args.gxc, case, folder, threads, args.iterations) for _ in range(args.rounds))
            for threads in THREADS}


# ---- compile time, start-up, memory ---------------------------------------------------------


def wall_seconds(command):
    """The wall time of one gxc command, process start to exit."""
    start = time.perf_counter()
    run(command)
    return time.perf_counter() - start


def peak_rss_mb(command):
    """The peak resident set of one gxc command, in MB (10^6 bytes), by GNU time: a child of
    this script would count the pages of the script it was forked from."""
    with tempfile.TemporaryDirectory() as scratch:
        measured = pathlib.Path(scratch) / "rss"
        run(["/usr/bin/time", "-f", "%M", "-o", str(measured), *command])
        return int(measured.read_text().split()[-1]) * 1024 / 1e6  # %M is in KiB


def compile_section(args):
    print("\n### gxc compile time, start-up and memory\n")
    print("| what | measured | target | met |")
    print("| --- | ---: | ---: | --- |", flush=True)

    def row(what, value, unit, decimals, target=None):
        met = "" if target is None else "yes" if value < target else "no"
        goal = "" if target is None else f"< {target} {unit}"
        print(f"| {what} | {value:.{decimals}f} {unit} | {goal} | {met} |", flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        for layers, target in ((100_000, 3), (10_000, 0.3)):
            chain = pathlib.Path(scratch) / f"chain{layers}.yaml"
            subprocess.run([sys.executable, str(ROOT / "bench" / "gen_chain.py"), str(layers),
                            str(chain), "linear"], check=True)
            command = [args.gxc, "compile", str(chain), "--sim-gpus", "4", "--placement", "auto",
                       "--emit", "ir", "-o", os.devnull]
            seconds = statistics.median(wall_seconds(command) for _ in range(args.compile_runs))
            row(f"{layers:,}-layer chain (linear, relu): `gxc compile --sim-gpus 4 --placement auto --emit ir`, "
                f"wall, median of {args.compile_runs}", seconds, "s", 2, target)
    command = [args.gxc, "run", str(ROOT / "models" / "mlp.yaml"), "--devices", "cpu"]
    run(command)  # fills the kernel cache
    ms = 1e3 * statistics.median(wall_seconds(command) for _ in range(args.startup_runs))
    row(f"`gxc run models/mlp.yaml --devices cpu`, warm kernel cache, process start to exit, "
        f"median of {args.startup_runs}", ms, "ms", 1, 30)
    ms = 1e3 * statistics.median(wall_seconds([args.gxc, "--version"])
                                 for _ in range(args.startup_runs))
    row(f"`gxc --version` (the floor: loading gxc and its libraries), median of "
        f"{args.startup_runs}", ms, "ms", 1)
    rss = peak_rss_mb([args.gxc, "compile", str(ROOT / "models" / "very_big_module.yaml"),
                       "--sim-gpus", "2", "-o", os.devnull])
    row("peak RSS of `gxc compile models/very_big_module.yaml --sim-gpus 2`", rss, "MB", 1, 100)
    row("peak RSS of `gxc --version` (the floor)", peak_rss_mb([args.gxc, "--version"]), "MB", 1)


# ---- main -----------------------------------------------------------------------------------


def load_average():
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


def header(args):
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    changed = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
    version = run([args.gxc, "--version"], capture=True).strip()
    print(f"commit {commit}{' (with changes)' if changed else ''}")
    print(f"gxc {args.gxc}: {version}")
    print(f"date {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(f"machine {os.cpu_count()} cores, {cpu_info()}")
    print(f"PyTorch {torch.__version__}, ONNX Runtime {onnxruntime.__version__}, "
          f"ONNX {onnx.__version__}, NumPy {np.__version__}")
    print(f"load average before: {load_average()}", flush=True)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gxc", default=str(ROOT / "build" / "gxc"),
                        help="the gxc binary (default: build/gxc, the README's build)")
    parser.add_argument("--iterations", type=int, default=30, help="timed iterations per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per case")
    parser.add_argument("--quick", action="store_true",
                        help="N = 3, R = 1, fewer compile and start-up runs: for trying it out")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS,
                        help="run these sections only")
    parser.add_argument("--skip", nargs="+", choices=SECTIONS, default=(),
                        help="leave these sections out")
    parser.add_argument("--no-header", action="store_true",
                        help="print the tables only, without the header and the load after "
                        "(bench/write_results.py writes its own)")
    args = parser.parse_args()
    args.gxc = str(pathlib.Path(args.gxc).resolve())
    if not os.access(args.gxc, os.X_OK):
        parser.error(f"no gxc at {args.gxc} (build it, or pass --gxc)")
    args.compile_runs, args.startup_runs = 3, 10
    if args.quick:
        args.iterations, args.rounds, args.compile_runs, args.startup_runs = 3, 1, 1, 3
    args.sections = [s for s in SECTIONS if s in args.only and s not in args.skip]
    return args


def main():
    args = parse_arguments()
    if not args.no_header:
        header(args)
    wide_mlp_ms = peers(args) if "peers" in args.sections else {}
    if "gemm" in args.sections:
        gemm(args, wide_mlp_ms)
    if "compile" in args.sections:
        compile_section(args)
    if not args.no_header:
        print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
