#!/usr/bin/env python3
"""Checks gxc's outputs on real exported networks against ONNX Runtime's, on the same inputs.

For each network of export_networks.py (ResNet-18, MobileNetV2, a GPT-2-style decoder, a
BERT-style encoder), with inputs from a fixed seed:
  1. ONNX Runtime (CPU execution provider, all graph optimizations off) gives the reference.
  2. `gxc run NET.onnx --input NAME=FILE.npy... --output DIR` on the host (--devices cpu) and on
     2 virtual GPUs (--sim-gpus 2) with --placement auto and --placement data-parallel; each
     output must match ONNX Runtime's within 1e-4 relative (below).
  3. `gxc import NET.onnx -o DIR/model.yaml` with the batch left dynamic (no --dim for it; the
     text models' sequence is fixed, FIXED_AT_IMPORT), then `gxc run DIR/model.yaml` on the
     host at batch sizes 3 and 5, neither a size the import evaluates the graph with: its
     outputs must match ONNX Runtime's at that batch within 1e-4 relative.
  4. The text models imported at batch 2, with a loss layer (GPT-2: cross_entropy of the
     logits; BERT: a mse_loss of the pooled output plus the mean of the hidden states) and a
     `train:` section, trained by `gxc train` on the host for two SGD steps: every op of the
     network has a gradient rule, and the losses are finite. (ResNet-18 and MobileNetV2 train
     against PyTorch, step for step, in check_network_training.py.)

Relative error of an output: max|gxc - reference| / max|reference|, over the whole tensor.
An elementwise |a-b| <= rtol*|b| fails on values near zero (logits cross zero, and a sum of
products that cancels keeps only float32 rounding noise), while an absolute tolerance ignores the
scale of a network's outputs; the error relative to the tensor's largest magnitude is the bound
float32 summation actually obeys (its rounding error grows with the magnitude of the terms, not
of the result). Shapes and dtypes must be equal, and no value may be NaN unless the reference's is.

The models are exported first when missing, by export_networks.py under a Python with torch and
torchvision (--torch-python, default python3 from Debian's packages). This script itself needs
numpy and onnxruntime (tests/onnx/requirements-nets.txt).

usage: check_networks.py --gxc BUILD/gxc --work DIR [--networks a,b] [--torch-python PY]
exit status: 0 all match, 1 a mismatch or a gxc failure (each listed with the command that
reproduces it), 77 onnxruntime or torch is missing (the test is skipped, saying why).
"""
import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
SKIP = 77
TOLERANCE_VS_ORT = 1e-4
# The batch sizes the imported model runs at: neither is a size gxc import evaluates with.
IMPORT_BATCHES = (3, 5)
# Axes the import fixes (--dim): the text models' positions are torch.arange(sequence), a Range,
# whose size a model file cannot write symbolically (gxc import refuses it, naming the node).
FIXED_AT_IMPORT = {"gpt2_tiny": {"sequence": 12}, "bert_tiny": {"sequence": 12}}

try:
    import numpy as np
    import onnxruntime
except ImportError as missing:
    print(f"check_networks: skipped: {missing} (pip install -r {HERE}/requirements-nets.txt)")
    sys.exit(SKIP)


def vision_inputs(rng, batch=2):
    return {"image": rng.standard_normal((batch, 3, 64, 64)).astype(np.float32)}


def gpt2_inputs(rng, batch=4):
    # A sequence length other than the export's (8), so the dynamic axes are exercised.
    return {"input_ids": rng.integers(0, 100, (batch, 12)).astype(np.int64)}


def bert_inputs(rng, batch=4):
    mask = np.ones((batch, 12), np.int64)
    mask[1, 7:] = 0  # padded sequences: the additive mask must hide these keys
    mask[batch - 1, 3:] = 0
    return {"input_ids": rng.integers(0, 100, (batch, 12)).astype(np.int64),
            "attention_mask": mask}


NETWORKS = {"resnet18": vision_inputs, "mobilenet_v2": vision_inputs, "gpt2_tiny": gpt2_inputs,
            "bert_tiny": bert_inputs}
PLATFORMS = {"cpu": ["--devices", "cpu"],
             "sim2-auto": ["--sim-gpus", "2", "--placement", "auto"],
             "sim2-data-parallel": ["--sim-gpus", "2", "--placement", "data-parallel"]}


def relative_error(actual, expected):
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return float("inf"), f"{actual.dtype}{list(actual.shape)} != {expected.dtype}{list(expected.shape)}"
    if not np.array_equal(np.isnan(actual), np.isnan(expected)):
        return float("inf"), "NaN where the reference has none (or the reverse)"
    a, b = actual.astype(np.float64), expected.astype(np.float64)
    finite = ~np.isnan(b)
    scale = np.max(np.abs(b[finite]), initial=0.0)
    difference = np.max(np.abs(a[finite] - b[finite]), initial=0.0)
    error = difference / scale if scale > 0 else (0.0 if difference == 0 else float("inf"))
    return error, f"max|diff| {difference:.3g}, max|ref| {scale:.3g}"


class Checker:
    def __init__(self, gxc, work):
        self.gxc, self.work = gxc, work
        self.failures = []

    def run(self, command, label):
        started = time.monotonic()
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        seconds = time.monotonic() - started
        if result.returncode != 0:
            tail = "\n    ".join(result.stdout.strip().splitlines()[-6:])
            self.fail(label, f"exit {result.returncode} ({seconds:.1f} s)\n    {tail}", command)
            return False
        return True

    def fail(self, label, why, command):
        line = f"FAIL {label}: {why}\n    reproduce: {shlex.join(command)}"
        print(line, flush=True)
        self.failures.append(line)

    def compare(self, label, folder, reference, tolerance, command):
        worst = 0.0
        for name, expected in reference.items():
            path = folder / f"{name}.npy"
            if not path.exists():
                self.fail(label, f"no output {path.name}", command)
                return
            error, detail = relative_error(np.load(path), expected)
            if error > tolerance:
                self.fail(label, f"{name}: relative error {error:.3g} > {tolerance:g} ({detail})",
                          command)
                return
            worst = max(worst, error)
        print(f"ok   {label}: max relative error {worst:.3g}", flush=True)


def gxc_run(gxc, model, input_files, out, options):
    command = [str(gxc), "run", str(model)] + options + ["--output", str(out)]
    for name, path in input_files.items():
        command += ["--input", f"{name}={path}"]
    return command


def check_network(checker, models, name):
    model = models / f"{name}.onnx"
    work = checker.work / name
    work.mkdir(parents=True, exist_ok=True)
    inputs = NETWORKS[name](np.random.default_rng(20261124))
    input_files = {}
    for input_name, value in inputs.items():
        input_files[input_name] = work / f"input-{input_name}.npy"
        np.save(input_files[input_name], value)

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    reference = dict(zip(names, session.run(names, inputs)))

    for platform, flags in PLATFORMS.items():
        out = work / platform
        command = gxc_run(checker.gxc, model, input_files, out, flags)
        label = f"{name} {platform}"
        if checker.run(command, label):
            checker.compare(label, out, reference, TOLERANCE_VS_ORT, command)

    # gxc import keeps the dynamic axes symbolic: the model it writes must run at sizes other
    # than those the import evaluated the graph with (2 and 3, and 41 and 43: the first and the
    # second axis at each of its two bindings), here two batch sizes of neither, each against
    # ONNX Runtime at that size.
    imported = work / "imported" / "model.yaml"
    imported.parent.mkdir(exist_ok=True)
    command = [str(checker.gxc), "import", str(model), "-o", str(imported)]
    for axis, size in FIXED_AT_IMPORT.get(name, {}).items():
        command += ["--dim", f"{axis}={size}"]
    if not checker.run(command, f"{name} import"):
        return
    for batch in IMPORT_BATCHES:
        resized = NETWORKS[name](np.random.default_rng(batch), batch)
        files = {}
        for input_name, value in resized.items():
            files[input_name] = work / f"input-{input_name}-batch{batch}.npy"
            np.save(files[input_name], value)
        expected = dict(zip(names, session.run(names, resized)))
        out = work / f"imported-cpu-batch{batch}"
        command = gxc_run(checker.gxc, imported, files, out, PLATFORMS["cpu"])
        label = f"{name} import-then-run cpu, batch {batch}"
        if checker.run(command, label):
            checker.compare(label, out, expected, TOLERANCE_VS_ORT, command)
    check_training(checker, model, work, name)


# Step 4: per network, the inputs the loss adds, its layers, and the training data's extra
# arrays (the network's own inputs come from NETWORKS at batch 2).
LOSSES = {
    "gpt2_tiny": ("  targets: {shape: [2, 12], dtype: i64}\n",
                  "  - {name: logit_rows, op: reshape, inputs: [logits], shape: [24, 100]}\n"
                  "  - {name: target_rows, op: reshape, inputs: [targets], shape: [24]}\n"
                  "  - {name: loss, op: cross_entropy, inputs: [logit_rows, target_rows]}\n",
                  lambda rng: {"targets": rng.integers(0, 100, (2, 12)).astype(np.int64)}),
    "bert_tiny": ("  target: {shape: [2, 64], dtype: f32}\n",
                  "  - {name: pooled_loss, op: mse_loss, inputs: [pooler_output, target]}\n"
                  "  - {name: hidden_mean, op: mean, inputs: [last_hidden_state]}\n"
                  "  - {name: loss, op: add, inputs: [pooled_loss, hidden_mean]}\n",
                  lambda rng: {"target": rng.standard_normal((2, 64)).astype(np.float32)}),
}


def check_training(checker, model, work, name):
    if name not in LOSSES:
        return
    folder = work / "train"
    folder.mkdir(exist_ok=True)
    imported = folder / "model.yaml"
    command = [str(checker.gxc), "import", str(model), "-o", str(imported), "--dim", "batch=2"]
    for axis, size in FIXED_AT_IMPORT.get(name, {}).items():
        command += ["--dim", f"{axis}={size}"]
    if not checker.run(command, f"{name} import for training"):
        return
    inputs, layers, extra = LOSSES[name]
    text = imported.read_text()
    outputs = text.index("\noutputs: [")
    text = text[:outputs + 1] + layers + text[outputs + 1:].replace("]\n", ", loss]\n", 1)
    text = text.replace("\nparams:\n", "\n" + inputs + "params:\n", 1)
    text += ("train:\n  loss: loss\n  optimizer: {sgd: {lr: 0.001, momentum: 0.9}}\n"
             "  batch_size: 2\n  epochs: 1\n  shuffle: false\n")
    model_file = folder / "model-with-loss.yaml"
    model_file.write_text(text)
    rng = np.random.default_rng(20261202)
    data = {**NETWORKS[name](rng, 2), **extra(rng)}
    np.savez(folder / "data.npz", **{k: np.concatenate([v, v]) for k, v in data.items()})
    log = folder / "log.jsonl"
    command = [str(checker.gxc), "train", str(model_file), "--data", str(folder / "data.npz"),
               "--devices", "cpu", "--log", str(log)]
    label = f"{name} train 2 steps cpu"
    if not checker.run(command, label):
        return
    losses = [json.loads(line)["loss"] for line in log.read_text().splitlines()]
    if len(losses) != 2 or not all(np.isfinite(losses)):
        checker.fail(label, f"losses {losses}: want 2 finite ones", command)
        return
    print(f"ok   {label}: losses {losses[0]:.4g}, {losses[1]:.4g}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gxc", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--networks", default=",".join(NETWORKS))
    parser.add_argument("--torch-python", default="/usr/bin/python3")
    arguments = parser.parse_args()
    chosen = arguments.networks.split(",")
    unknown = [n for n in chosen if n not in NETWORKS]
    if unknown:
        parser.error(f"unknown networks {unknown}; known: {', '.join(NETWORKS)}")

    models = arguments.work / "models"
    if not all((models / f"{n}.onnx").exists() for n in chosen):
        probe = subprocess.run([arguments.torch_python, "-c", "import torch, torchvision"],
                               capture_output=True)
        if probe.returncode != 0:
            print(f"check_networks: skipped: {arguments.torch_python} has no torch and "
                  "torchvision to export the networks (scripts/install-deps.sh installs them)")
            return SKIP
        subprocess.run([arguments.torch_python, str(HERE / "export_networks.py"), str(models)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    checker = Checker(arguments.gxc.resolve(), arguments.work.resolve())
    print(f"onnxruntime {onnxruntime.__version__}, numpy {np.__version__}; relative error = "
          f"max|gxc - ref| / max|ref|, bound {TOLERANCE_VS_ORT:g}")
    for name in chosen:
        started = time.monotonic()
        check_network(checker, models.resolve(), name)
        print(f"     {name}: {time.monotonic() - started:.1f} s", flush=True)
    if checker.failures:
        print(f"{len(checker.failures)} failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
