#!/usr/bin/env python3
"""Checks `gxc train NET.onnx` against PyTorch training the module the ONNX file was exported
from: the same initial weights, data, batches and optimizer, step for step.

For each network (a small MLP and CNN, torchvision's ResNet-18 and MobileNetV2 on 32x32 images
with 10 classes):
  1. The module, in eval mode, is exported with torch.onnx.export keeping its BatchNorm layers
     (TrainingMode.PRESERVE: an eval-mode export would fold them into the convolutions, leaving
     nothing to train as model.train() does), the batch a dynamic axis.
  2. PyTorch trains it: model.train() (batch statistics, running statistics updated),
     F.cross_entropy of its logits and the labels, torch.optim's SGD (lr 1e-3) or AdamW (lr
     1e-3, weight decay 0.01), one epoch: STEPS steps of BATCH samples in the data's order.
  3. gxc trains the ONNX file with the loss and optimizer given on its command line:
       gxc train NET.onnx --data DATA.npz --loss cross_entropy --target labels
         --optimizer sgd|adamw --lr LR --batch-size BATCH --epochs 1 --no-shuffle --val DATA.npz
     on the host and on 2 virtual GPUs data-parallel (--sim-gpus 2 --placement data-parallel).
  4. With --val, the training set again after the epoch: the loss and the accuracy of the
     module in eval mode (running statistics), logged as val_loss and val_accuracy.
  5. Every step's loss, the validation's loss and accuracy (relative, at least 1 in the
     denominator), and every tensor of the module's final state_dict (params and BatchNorm's
     running statistics; relative to the tensor's largest magnitude, the bound float32 summation
     obeys, see check_networks.py) as gxc saved it, within 1e-4 of PyTorch's run in float64 (the
     same module in double), or within FLOAT32_MARGIN times PyTorch's own float32 run's distance
     from it where that is larger (BatchNorm over a few values amplifies float32 rounding).
     BatchNorm's num_batches_tracked is not among them: the ONNX file has no such tensor. The
     module trains without its Dropout, which an eval-mode export leaves out.

With SGD, the small networks also train with --autocast bf16, against torch.autocast("cpu",
dtype=torch.bfloat16): each step's loss within half a unit of bf16 (AUTOCAST_TOLERANCE), and
not the f32 run's.

Runs with Debian's python3 and its torch and torchvision, plus safetensors (the venv of
scripts/torch-env.sh). Exit status: 0 all match, 1 a mismatch or a gxc failure (listed with the
command that reproduces it), 77 torch, torchvision or safetensors is missing (the test is
skipped, saying why).

usage: check_network_training.py --gxc BUILD/gxc --work DIR [--networks a,b]
"""
import argparse
import copy
import json
import pathlib
import shlex
import subprocess
import sys

SKIP = 77
TOLERANCE = 1e-4
BATCH = 8
# PyTorch's own float32 run is off the exact answer (its float64 run) by rounding that BatchNorm
# over a few values amplifies: ResNet-18's late layers normalize 8 numbers per channel, and its
# float32 and float64 runs end 1e-4 apart in some BatchNorm biases, MobileNetV2's gradients 22%
# apart in a few tensors. How far a run lands depends on where its roundings fall, not only on
# how many there are: AdamW moves every weight by about lr whatever the size of its gradient, so
# a gradient that is rounding noise (a conv's before a BatchNorm) moves its weight a full step
# either way, and a float32 run that rounds otherwise than PyTorch's (gxc's, on another machine's
# vector width) ends as far from it as one whose start differs by one rounding. Measured on an
# AVX-512 machine: ResNet-18's third AdamW loss 0.02 apart between gxc on the host and on two
# virtual GPUs, and PyTorch's own float32 run 0.004 apart from itself started one unit in the
# last place away. So gxc's float32 run is held to the float64 one within TOLERANCE, or within
# FLOAT32_MARGIN times the larger of PyTorch's own float32 distance from it and the distance
# between PyTorch's float32 run and the same run started one unit in the last place away
# (perturbed_start): how far the training itself carries a rounding.
FLOAT32_MARGIN = 4.0
STEPS = 3
IMAGE = (3, 32, 32)
CLASSES = 10
# SGD's lr is 1e-3, not 0.01: at 0.01 ResNet-18's third step magnifies the float32 rounding of
# the first two (5e-5 in gxc's params as in any float32 run but PyTorch's own) fifty-fold in
# conv1's weights. Measured: PyTorch's third step from gxc's params after two equals gxc's third
# step within 7e-6, so the step is right and the trajectory is what is sensitive.
OPTIMIZERS = {"sgd": {"lr": 1e-3}, "adamw": {"lr": 1e-3}}
# Mixed precision (--autocast bf16) is checked on the small networks with SGD: gxc's losses
# against torch.autocast(dtype=torch.bfloat16)'s within AUTOCAST_TOLERANCE relative, half a
# unit of bf16 (2^-9): the two round differently (gxc keeps the activations between a matmul
# and the next op in f32 where torch keeps them in bf16, and its bf16 matmuls round where
# torch's do not), so they agree to bf16's precision, not float32's. Measured: up to 1.9e-4.
AUTOCAST_NETWORKS = {"mlp", "small_cnn"}
AUTOCAST_TOLERANCE = 2.0**-9
PLATFORMS = {"cpu": ["--devices", "cpu"],
             "sim2dp": ["--sim-gpus", "2", "--placement", "data-parallel"]}

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    import torchvision
    from safetensors.numpy import load_file
    from torch import nn
except ImportError as missing:
    print(f"check_network_training: skipped: {missing.name} is not installed (Debian's "
          "python3-torch and python3-torchvision, and scripts/torch-env.sh for safetensors)")
    sys.exit(SKIP)


def small_cnn():
    # No bias before a BatchNorm, as torchvision's networks: its gradient is zero but for
    # rounding (the normalization takes the mean away), which Adam scales up to lr-sized steps
    # that no two implementations agree on.
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, CLASSES))


NETWORKS = {
    "mlp": lambda: nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(IMAGE)), 16), nn.ReLU(),
                                 nn.Linear(16, CLASSES)),
    "small_cnn": small_cnn,
    "resnet18": lambda: torchvision.models.resnet18(num_classes=CLASSES),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(num_classes=CLASSES),
}


def export(module, path):
    module.eval()
    torch.onnx.export(module, (torch.zeros(2, *IMAGE),), str(path), input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}},
                      opset_version=17, training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)


def make_optimizer(name, params):
    settings = OPTIMIZERS[name]
    if name == "sgd":
        return torch.optim.SGD(params, lr=settings["lr"])
    return torch.optim.AdamW(params, lr=settings["lr"], weight_decay=0.01)


def train_in_torch(module, optimizer_name, images, labels, autocast=False):
    module.train()
    dtype = next(module.parameters()).dtype
    images = torch.from_numpy(images).to(dtype)
    optimizer = make_optimizer(optimizer_name, module.parameters())
    losses = []
    for step in range(STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(module(images[rows]), torch.from_numpy(labels[rows]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    # The validation after the epoch (the training set itself): the forward in eval mode.
    module.eval()
    with torch.no_grad():
        logits = module(images)
        target = torch.from_numpy(labels)
        validation = {"val_loss": F.cross_entropy(logits, target).item(),
                      "val_accuracy": (logits.argmax(1) == target).double().mean().item()}
    # copies: the module trains on in place when the next run loads its initial weights
    return losses, validation, {k: v.detach().double().numpy().copy()
                                for k, v in module.state_dict().items()}


def perturbed_start(initial):
    """`initial` with every float moved one unit in the last place, up or down at random."""
    generator = torch.Generator().manual_seed(1)
    moved = {}
    for name, value in initial.items():
        if not value.is_floating_point():
            moved[name] = value.clone()
            continue
        up = torch.rand(value.shape, generator=generator) < 0.5
        toward = torch.where(up, torch.tensor(float("inf")), torch.tensor(float("-inf")))
        moved[name] = torch.nextafter(value, toward.to(value.dtype))
    return moved


def reference_runs(module, initial, optimizer_name, images, labels):
    """PyTorch's float32 run, its float64 run (the same module in double) and its float32 run
    from perturbed_start(initial), all from `initial`: each of losses, validation and state as
    triples (float32, float64, perturbed float32)."""
    module.load_state_dict(perturbed_start(initial))
    moved = train_in_torch(module, optimizer_name, images, labels)
    module.load_state_dict(initial)
    f32 = train_in_torch(module, optimizer_name, images, labels)
    exact = copy.deepcopy(module).double()
    exact.load_state_dict(initial)
    f64 = train_in_torch(exact, optimizer_name, images, labels)
    return {"losses": list(zip(f32[0], f64[0], moved[0])),
            "validation": {k: (f32[1][k], f64[1][k], moved[1][k]) for k in f32[1]},
            "state": {k: (f32[2][k], f64[2][k], moved[2][k]) for k in f32[2]}}


def relative_error(ours, theirs):
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    return float(np.max(np.abs(ours - theirs)) / max(1e-3, float(np.max(np.abs(theirs)))))


def off(ours, runs, error):
    """Why `ours` is too far from the float64 value of `runs` (float32, float64, perturbed
    float32), or None."""
    single, exact, moved = runs
    spread = max(error(single, exact), error(moved, single))
    allowed = max(TOLERANCE, FLOAT32_MARGIN * spread)
    if error(ours, exact) <= allowed:
        return None
    return (f"{error(ours, exact):.3g} off PyTorch's float64 run (allowed {allowed:.3g}; its "
            f"float32 run: {error(single, exact):.3g}, from one ulp away: "
            f"{error(moved, single):.3g})")


def scalar_error(ours, theirs):
    return abs(ours - theirs) / max(1.0, abs(theirs))


def compare(reference, log_path, saved_path):
    problems = []
    records = [json.loads(line) for line in log_path.read_text().splitlines()]
    logged = [record["loss"] for record in records if "loss" in record]
    validated = [record for record in records if "val_loss" in record]
    if len(validated) != 1:
        problems.append(f"{len(validated)} validations logged, expected 1")
    for key, runs in reference["validation"].items():
        ours = validated[-1].get(key) if validated else None
        why = "not logged" if ours is None else off(ours, runs, scalar_error)
        if why:
            problems.append(f"{key} {ours}: {why}")
    if len(logged) != len(reference["losses"]):
        return [f"{len(logged)} steps logged, PyTorch took {len(reference['losses'])}"]
    for step, (ours, runs) in enumerate(zip(logged, reference["losses"]), 1):
        why = off(ours, runs, scalar_error)
        if why:
            problems.append(f"step {step}: loss {ours:.7g}, {why}")
    saved = load_file(str(saved_path))
    for name, runs in reference["state"].items():
        if name.endswith(".num_batches_tracked"):
            continue  # not in the ONNX file: torch's BatchNormalization export drops the count
        if name not in saved:
            problems.append(f"{name}: not saved")
            continue
        ours = saved[name]
        if ours.shape != runs[1].shape:
            problems.append(f"{name}: shape {list(ours.shape)}, PyTorch {list(runs[1].shape)}")
            continue
        why = off(ours, runs, relative_error)
        if why:
            problems.append(f"{name}: {why}")
    return problems


def gxc_train(gxc, onnx_path, data_path, optimizer_name, out, extra):
    out.mkdir(exist_ok=True)
    return [gxc, "train", str(onnx_path), "--data", str(data_path), "--loss", "cross_entropy",
            "--target", "labels", "--optimizer", optimizer_name, "--lr",
            str(OPTIMIZERS[optimizer_name]["lr"]), "--batch-size", str(BATCH), "--epochs", "1",
            "--no-shuffle", "--log", str(out / "log.jsonl"), *extra]


def run_gxc(command):
    """Why the command failed, or [] when it exited 0."""
    run = subprocess.run(command, capture_output=True, text=True)
    return [f"exit {run.returncode}: {run.stderr.strip()[-2000:]}"] if run.returncode else []


def compare_autocast(f32_losses, bf16_losses, log_path):
    """gxc's bf16 losses against torch.autocast's, within AUTOCAST_TOLERANCE; and not the f32
    losses, which would mean nothing was cast."""
    logged = [json.loads(line)["loss"] for line in log_path.read_text().splitlines()]
    if len(logged) != len(bf16_losses):
        return [f"{len(logged)} steps logged, PyTorch took {len(bf16_losses)}"]
    problems = []
    for step, (ours, theirs) in enumerate(zip(logged, bf16_losses), 1):
        if abs(ours - theirs) > AUTOCAST_TOLERANCE * abs(theirs):
            problems.append(f"step {step}: loss {ours:.7g}, torch.autocast's {theirs:.7g}")
    if max(abs(a - b) for a, b in zip(logged, f32_losses)) < 1e-6:
        problems.append("the losses are the f32 run's: nothing ran in bf16")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gxc", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--networks", default=",".join(NETWORKS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = np.random.default_rng(0)
    images = data.standard_normal((BATCH * STEPS, *IMAGE)).astype(np.float32)
    labels = data.integers(0, CLASSES, BATCH * STEPS).astype(np.int64)
    data_path = work / "train.npz"
    np.savez(data_path, image=images, labels=labels)
    failures = 0

    def report(what, problems, command, detail):
        nonlocal failures
        if problems:
            failures += 1
            print(f"FAIL {what}: " + "; ".join(problems[:8]))
            print("  " + shlex.join(command))
        else:
            print(f"ok {what}: {detail}")

    for network in args.networks.split(","):
        torch.manual_seed(0)
        module = NETWORKS[network]()
        # An eval-mode export has no Dropout (MobileNetV2's classifier has one): the module
        # trains without it too, so that both sides compute the same function.
        for layer in module.modules():
            if isinstance(layer, nn.Dropout):
                layer.p = 0.0
        onnx_path = work / f"{network}.onnx"
        export(module, onnx_path)
        initial = {k: v.clone() for k, v in module.state_dict().items()}
        for optimizer_name, settings in OPTIMIZERS.items():
            reference = reference_runs(module, initial, optimizer_name, images, labels)
            losses = [single for single, _, _ in reference["losses"]]
            validation = {k: single for k, (single, _, _) in reference["validation"].items()}
            if optimizer_name == "sgd" and network in AUTOCAST_NETWORKS:
                module.load_state_dict(initial)
                autocast_losses = train_in_torch(module, optimizer_name, images, labels,
                                                 autocast=True)[0]
            for platform, platform_args in PLATFORMS.items():
                out = work / f"{network}-{optimizer_name}-{platform}"
                command = gxc_train(args.gxc, onnx_path, data_path, optimizer_name, out,
                                    [*platform_args, "--val", str(data_path), "--save",
                                     str(out / "trained.safetensors")])
                problems = run_gxc(command) or compare(reference, out / "log.jsonl",
                                                      out / "trained.safetensors")
                report(f"{network} {optimizer_name} on {platform}", problems, command,
                       f"losses {', '.join(f'{x:.5f}' for x in losses)}; validation "
                       f"{validation['val_loss']:.5f}, accuracy {validation['val_accuracy']:.3f}")
                if optimizer_name != "sgd" or network not in AUTOCAST_NETWORKS:
                    continue
                out = work / f"{network}-{optimizer_name}-{platform}-autocast"
                command = gxc_train(args.gxc, onnx_path, data_path, optimizer_name, out,
                                    [*platform_args, "--autocast", "bf16"])
                problems = run_gxc(command) or compare_autocast(losses, autocast_losses,
                                                                out / "log.jsonl")
                report(f"{network} {optimizer_name} on {platform}, autocast bf16", problems,
                       command, f"losses {', '.join(f'{x:.5f}' for x in autocast_losses)}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
