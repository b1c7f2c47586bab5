#!/usr/bin/env python3
"""Tests the PyTorch reference of `gxc train` on its own files (ctest: train_fixtures).

tests/fixtures/make_train_fixtures.py --check-saved CASE FILE is what decides whether a file
that `gxc train --save` wrote loads into PyTorch and computes what PyTorch's training ended
with. This checks that it accepts what it should and refuses what it should, using the
committed fixtures: every case's final.safetensors passes and its init.safetensors does not;
a file with a name missing, a name too many, another dtype, or weights moved by 1e-3 is
refused, and weights moved by 1e-6 pass. It also checks that each case's files agree with one
another and with models/: model.yaml is what the model of models/ makes now; the steps of
expected.json cover the data in batches of batch_size, epoch by epoch; train.npz holds the
model's inputs; the frozen params are the same in init and final, and the others have changed.

Run with the Python of scripts/torch-env.sh (Debian's torch, pip's safetensors). Exit status:
0 all pass, 1 a failure (each one listed), 77 torch, numpy or safetensors missing (skipped).
"""
import json
import pathlib
import subprocess
import sys
import tempfile

SKIP = 77
HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE.parent / "fixtures" / "make_train_fixtures.py"
FIXTURES = HERE.parent / "fixtures" / "train"

try:
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
except ImportError as missing:
    print(f"skipped: {missing} (make the venv with scripts/torch-env.sh)")
    sys.exit(SKIP)

sys.path.insert(0, str(SCRIPT.parent))
from make_train_fixtures import CASES, case_model_yaml  # noqa: E402 (after the skip check)

failures = []


def check_saved(case, path, want_status, want_text):
    result = subprocess.run([sys.executable, str(SCRIPT), "--check-saved", case, str(path)],
                            capture_output=True, text=True)
    said = (result.stdout + result.stderr).strip()
    if result.returncode != want_status or want_text not in said or "\n" in said:
        failures.append(f"--check-saved {case} {path.name}: status {result.returncode}, wanted "
                        f"{want_status} and one line with '{want_text}'; it said: {said}")


def check_files(name, case):
    folder = FIXTURES / name
    if (folder / "model.yaml").read_text() != case_model_yaml(name, case):
        failures.append(f"{name}: model.yaml is not what {case.model} makes now: write the "
                        "fixtures again")
    expected = json.loads((folder / "expected.json").read_text())
    with np.load(folder / "train.npz") as data:
        arrays = {key: data[key] for key in data.files}
    if list(arrays) != list(case.module_class.inputs):
        failures.append(f"{name}: train.npz holds {list(arrays)}, the model's inputs are "
                        f"{list(case.module_class.inputs)}")
    samples = len(next(iter(arrays.values())))
    rows = [0] * expected["epochs"]
    for number, step in enumerate(expected["steps"], 1):
        rows[step["epoch"] - 1] += step["rows"]
        if step["step"] != number or not np.isfinite(step["loss"]):
            failures.append(f"{name}: step {number} reads {step}")
    micro = expected.get("accumulate", 1)
    batches = expected["epochs"] * expected["steps_per_epoch"]
    if expected["samples"] != samples or (micro == 1 and rows != [samples] * expected["epochs"]):
        failures.append(f"{name}: the steps cover {rows} samples per epoch, the data has {samples}")
    # With accumulation a step takes K batches, which may straddle epochs (its epoch is its last
    # batch's): every sample of every epoch once, but not epoch by epoch (K dividing the batches).
    if micro > 1 and batches % micro == 0 and sum(rows) != samples * expected["epochs"]:
        failures.append(f"{name}: the steps cover {sum(rows)} samples, {expected['epochs']} "
                        f"epochs of the data {samples * expected['epochs']}")
    if len(expected["steps"]) != batches // micro or any(
            step.get("micro_batches", 1) != micro for step in expected["steps"]):
        failures.append(f"{name}: {len(expected['steps'])} steps, not epochs x steps_per_epoch"
                        + (f" / {micro} (accumulate)" if micro > 1 else ""))
    initial, final = load_file(folder / "init.safetensors"), load_file(folder / "final.safetensors")
    if initial.keys() != final.keys():
        failures.append(f"{name}: init has {sorted(initial)}, final has {sorted(final)}")
    for key in initial.keys() & final.keys():
        if torch.equal(initial[key], final[key]) != (key in expected["frozen"]):
            failures.append(f"{name}: '{key}' is {'un' * (key not in expected['frozen'])}changed"
                            f" by training, frozen: {expected['frozen']}")


def check_refusals(work):
    final = load_file(FIXTURES / "digits_sgd" / "final.safetensors")

    def variant(file_name, tensors):
        path = work / file_name
        save_file(tensors, str(path))
        return path

    missing = {k: v for k, v in final.items() if k != "class_weight"}
    check_saved("digits_sgd", variant("missing.safetensors", missing), 1,
                'Missing key(s) in state_dict: "class_weight"')
    extra = {**final, "fc3.bias": final["fc2.bias"].clone()}
    check_saved("digits_sgd", variant("extra.safetensors", extra), 1,
                'Unexpected key(s) in state_dict: "fc3.bias"')
    as_f64 = {k: v.double() for k, v in final.items()}
    check_saved("digits_sgd", variant("f64.safetensors", as_f64), 1, "is torch.float64")
    moved = {k: v * (1 + 1e-3) if k == "fc2.weight" else v for k, v in final.items()}
    check_saved("digits_sgd", variant("moved.safetensors", moved), 1, "differs from PyTorch's")
    close = {k: v * (1 + 1e-6) if k == "fc2.weight" else v for k, v in final.items()}
    check_saved("digits_sgd", variant("close.safetensors", close), 0, "matches")
    (work / "garbage.safetensors").write_bytes(b"not a safetensors file")
    check_saved("digits_sgd", work / "garbage.safetensors", 1, "cannot read it as safetensors")


def main():
    for name, case in CASES.items():
        check_files(name, case)
        check_saved(name, FIXTURES / name / "final.safetensors", 0, "matches")
        check_saved(name, FIXTURES / name / "init.safetensors", 1, "differs from PyTorch's")
    with tempfile.TemporaryDirectory() as work:
        check_refusals(pathlib.Path(work))
    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{len(failures)} failures; {len(CASES)} cases")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
