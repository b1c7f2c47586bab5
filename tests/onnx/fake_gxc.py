#!/usr/bin/env python3
"""A stand-in for `gxc run model.onnx --input NAME=FILE.npy ... --output DIR` that computes the
outputs with ONNX's own reference evaluator, so runner_selftest.py can check the runner's
reading, comparing and classifying against known answers. FAKE_GXC_MODE picks a behaviour:
  right        the reference outputs (every test the evaluator runs must pass)
  perturb      floats off by 1e-2 (every float comparison must fail)
  dtype        float32 outputs written as float64 (must fail on the dtype)
  unsupported  exit 1 with gxc's refusal of an op
  crash        killed by SIGSEGV
  hang         sleeps past any timeout
"""
import os
import signal
import sys
import time

import numpy as np
from onnx.reference import ReferenceEvaluator


def main():
    args = sys.argv[1:]
    mode = os.environ.get("FAKE_GXC_MODE", "right")
    model = args[1]
    feeds = {}
    out_dir = None
    for i, a in enumerate(args):
        if a == "--input":
            name, path = args[i + 1].split("=", 1)
            feeds[name] = np.load(path)
        elif a == "--output":
            out_dir = args[i + 1]
    if mode == "unsupported":
        sys.exit(f"gxc: error: {model}: unsupported ONNX op: Abs (node 0 \"\", opset 13)")
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(3600)
    evaluator = ReferenceEvaluator(model)
    results = evaluator.run(None, feeds)
    os.makedirs(out_dir, exist_ok=True)
    for name, value in zip(evaluator.output_names, results):
        value = np.asarray(value)
        if mode == "perturb" and value.dtype.kind == "f":
            value = value + value.dtype.type(1e-2)
        if mode == "dtype" and value.dtype == np.float32:
            value = value.astype(np.float64)
        np.save(os.path.join(out_dir, name + ".npy"), value)


if __name__ == "__main__":
    main()
