#!/usr/bin/env python3
"""Reads the TensorBoard event file that tests/train/write_tensorboard_sample wrote into DIR
with TensorBoard's own reader (the `tensorboard` package of tests/train/requirements.txt) and
checks every record exactly: the file's name, the version record first, then each scalar's
tag, step, wall time and value (float32, as TensorBoard stores scalars), in order.

TensorBoard's reader checks both CRC-32Cs of every record and stops at the first bad one, and
decodes each record with TensorBoard's own Event schema: a wrong CRC, framing or field number
in gxc's writer shows here as a missing or wrong event.

Usage: check_tensorboard.py DIR [--write-with WRITER]
  --write-with WRITER: empty DIR, run `WRITER DIR` first (what ctest does).
Exits 0 when all holds, 1 with the differences otherwise, 77 (ctest: skipped) when this Python
has no tensorboard package.
"""
import argparse
import os
import pathlib
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

SKIP = 77
EPOCHS = 3
STEPS_PER_EPOCH = 4
FIRST_WALL_TIME = 1700000000.0


def float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def wall_time(step):
    return FIRST_WALL_TIME + 0.25 * step


def expected_scalars():
    """(tag, step, wall_time, value) in the order the sample writer writes them."""
    scalars = []
    step = 0
    for epoch in range(EPOCHS):
        for _ in range(STEPS_PER_EPOCH):
            scalars.append(("loss", step, wall_time(step), 2.0 / (step + 3)))
            scalars.append(("lr", step, wall_time(step), 0.01 / (epoch + 1)))
            scalars.append(("samples_per_second", step, wall_time(step), 1000.0 + 37.1 * step))
            step += 1
        scalars.append(("val_loss", step - 1, wall_time(step - 1) + 0.125, 1.0 / (epoch + 7)))
    scalars.append(("large_step", 1 << 40, wall_time(step), -0.5))
    return [(tag, s, t, float32(v)) for tag, s, t, v in scalars]


def check_records(path, problems, started):
    """Every record through TensorBoard's record reader and its Event schema."""
    from tensorboard.backend.event_processing import event_file_loader

    events = list(event_file_loader.LegacyEventFileLoader(str(path)).Load())
    if not events:
        problems.append("TensorBoard's reader found no event (a bad CRC or framing stops it)")
        return
    first = events[0]
    if first.WhichOneof("what") != "file_version" or first.file_version != "brain.Event:2":
        problems.append(f"first event: {first!r}, not file_version brain.Event:2")
    earliest = started - 1 if started is not None else 1.5e9
    if not earliest <= first.wall_time <= time.time() + 1:
        problems.append(f"first event's wall_time {first.wall_time} is not the writing time")
    seconds = int(path.name.split(".")[3])
    if seconds != int(first.wall_time):
        problems.append(f"file name's seconds {seconds} differ from the first event's "
                        f"wall_time {first.wall_time}")
    expected = expected_scalars()
    scalars = events[1:]
    if len(scalars) != len(expected):
        problems.append(f"{len(scalars)} scalar events, expected {len(expected)} (a bad CRC "
                        f"stops TensorBoard's reader at that record)")
    for index, (event, (tag, step, wall, value)) in enumerate(zip(scalars, expected)):
        where = f"scalar event {index} ({tag} at step {step})"
        if event.WhichOneof("what") != "summary" or len(event.summary.value) != 1:
            problems.append(f"{where}: not a summary of one value: {event!r}")
            continue
        got = event.summary.value[0]
        if got.WhichOneof("value") != "simple_value":
            problems.append(f"{where}: its value is not a simple_value: {got!r}")
        if (got.tag, event.step, event.wall_time, got.simple_value) != (tag, step, wall, value):
            problems.append(f"{where}: got tag {got.tag!r}, step {event.step}, wall_time "
                            f"{event.wall_time!r}, value {got.simple_value!r}; expected "
                            f"{tag!r}, {step}, {wall!r}, {value!r}")


def check_accumulator(directory, problems):
    """The scalars as TensorBoard's scalar dashboard gets them: by tag, from the folder."""
    from tensorboard.backend.event_processing import event_accumulator

    accumulator = event_accumulator.EventAccumulator(str(directory))
    accumulator.Reload()
    expected = expected_scalars()
    tags = sorted({tag for tag, *_ in expected})
    got_tags = sorted(accumulator.Tags()[event_accumulator.SCALARS])
    if got_tags != tags:
        problems.append(f"EventAccumulator's scalar tags: {got_tags}, expected {tags}")
        return
    for tag in tags:
        got = [(e.step, e.wall_time, e.value) for e in accumulator.Scalars(tag)]
        want = [(step, wall, value) for t, step, wall, value in expected if t == tag]
        if got != want:
            problems.append(f"EventAccumulator's {tag}: {got}, expected {want}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--write-with", metavar="WRITER")
    args = parser.parse_args()
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        print(f"check_tensorboard: skipped: {sys.executable} has no tensorboard package "
              f"(scripts/python-env.sh installs it into .venv)")
        return SKIP

    started = time.time() if args.write_with else None
    if args.write_with:
        shutil.rmtree(args.dir, ignore_errors=True)
        subprocess.run([args.write_with, str(args.dir)], check=True)
    pattern = re.compile(r"events\.out\.tfevents\.\d{10}\." + re.escape(socket.gethostname()))
    files = sorted(p for p in args.dir.iterdir())
    problems = []
    if len(files) != 1 or not pattern.fullmatch(files[0].name):
        names = [p.name for p in files]
        problems.append(f"{args.dir} holds {names}, expected one events.out.tfevents."
                        f"SECONDS.{socket.gethostname()}")
    else:
        check_records(files[0], problems, started)
        check_accumulator(args.dir, problems)
    for problem in problems:
        print(f"check_tensorboard: {problem}")
    if problems:
        return 1
    print(f"check_tensorboard: {len(expected_scalars())} scalars read back exactly by "
          f"TensorBoard {tensorboard.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
