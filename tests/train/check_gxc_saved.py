#!/usr/bin/env python3
"""What `gxc train --save` writes loads into the PyTorch module (ctest: train_saved_in_pytorch).

For every case of tests/fixtures/train/, gxc trains the case's model.yaml on its train.npz (in
the file's order, as the case's train: section says) and saves the params; then
tests/fixtures/make_train_fixtures.py --check-saved loads that file into the equivalent PyTorch
module with load_state_dict(strict=True) (safetensors.torch.load_file) and checks that it
computes, on the case's first batch, what the module trained by PyTorch computes.

Usage: check_gxc_saved.py --gxc build/gxc --work DIR. Run with the Python of
scripts/torch-env.sh (Debian's torch, pip's safetensors). Exit status: 0 every case passes,
1 a failure (each one listed), 77 torch or safetensors missing (skipped).
"""
import argparse
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE.parent / "fixtures" / "make_train_fixtures.py"
FIXTURES = HERE.parent / "fixtures" / "train"

try:
    import safetensors.torch  # noqa: F401
    import torch  # noqa: F401
except ImportError as missing:
    print(f"skipped: {missing} (make the venv with scripts/torch-env.sh)")
    sys.exit(77)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gxc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    failures = []
    for case in sorted(path for path in FIXTURES.iterdir() if path.is_dir()):
        saved = work / f"{case.name}.safetensors"
        saved.unlink(missing_ok=True)
        epochs = json.loads((case / "expected.json").read_text())["epochs"]
        train = subprocess.run([args.gxc, "train", str(case / "model.yaml"), "--data",
                                str(case / "train.npz"), "--devices", "cpu", "--epochs",
                                str(epochs), "--save", str(saved)],
                               capture_output=True, text=True)
        if train.returncode != 0:
            failures.append(f"{case.name}: gxc train exited {train.returncode}: "
                            f"{train.stderr.strip()}")
            continue
        check = subprocess.run([sys.executable, str(SCRIPT), "--check-saved", case.name,
                                str(saved)], capture_output=True, text=True)
        line = (check.stdout + check.stderr).strip()
        print(f"{case.name}: {line}")
        if check.returncode != 0:
            failures.append(f"{case.name}: {line}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
