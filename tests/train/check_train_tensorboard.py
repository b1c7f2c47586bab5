#!/usr/bin/env python3
"""`gxc train --tensorboard DIR` writes what TensorBoard reads (ctest: train_tensorboard).

Trains tests/fixtures/train/mlp_adam on the host for 2 epochs with --val, --tensorboard and
--log, then reads DIR with TensorBoard's own EventAccumulator (the `tensorboard` package of
tests/train/requirements.txt): the scalars loss, lr and samples_per_second must be there for
steps 1..N, and val_loss at each epoch's last step, their values those of the JSON log (as
float32, how TensorBoard stores scalars).

Usage: check_train_tensorboard.py --gxc build/gxc --work DIR. Exits 0 when all holds, 1 with
the differences otherwise, 77 (skipped) when this Python has no tensorboard package.
"""
import argparse
import json
import pathlib
import shutil
import struct
import subprocess
import sys

CASE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "train" / "mlp_adam"


def float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gxc", required=True)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    args = parser.parse_args()
    try:
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError:
        print(f"skipped: {sys.executable} has no tensorboard package "
              f"(scripts/python-env.sh installs it into .venv)")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    events = args.work / "events"
    log = args.work / "log.jsonl"
    args.work.mkdir(parents=True)
    subprocess.run([args.gxc, "train", str(CASE / "model.yaml"), "--data",
                    str(CASE / "train.npz"), "--devices", "cpu", "--epochs", "2",
                    "--val", str(CASE / "train.npz"), "--tensorboard", str(events), "--log",
                    str(log)], check=True)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    steps = [record for record in records if "loss" in record]
    validations = [record for record in records if "val_loss" in record]
    accumulator = event_accumulator.EventAccumulator(str(events))
    accumulator.Reload()
    problems = []
    tags = sorted(accumulator.Tags()[event_accumulator.SCALARS])
    expected_tags = ["loss", "lr", "samples_per_second", "val_loss"]
    if tags != expected_tags:
        problems.append(f"scalar tags {tags}, expected {', '.join(expected_tags)}")
    if len(validations) != 2:
        problems.append(f"{len(validations)} val_loss lines in the log, expected 2 (one per epoch)")
    for tag in expected_tags:
        if tag not in tags:
            continue
        got = [(event.step, event.value) for event in accumulator.Scalars(tag)]
        records = validations if tag == "val_loss" else steps
        want = [(record["step"], float32(record[tag])) for record in records]
        if got != want:
            problems.append(f"{tag}: {got[:3]}..., expected {want[:3]}... ({len(want)} steps)")
    for problem in problems:
        print(f"check_train_tensorboard: {problem}")
    if not problems:
        print(f"check_train_tensorboard: {len(steps)} steps of loss, lr and samples_per_second, "
              f"{len(validations)} epochs of val_loss read back by TensorBoard")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
