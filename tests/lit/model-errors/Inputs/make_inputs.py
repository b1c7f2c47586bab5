"""Writes the safetensors fixtures of tests/lit/model-errors (run from anywhere; needs numpy
and safetensors). Models name them by a path relative to the model file, so they must exist
before the tests run and are committed; they are small and deterministic.

  fc-weight-4x2.safetensors    fc.weight as f32[4, 2]: the model's linear expects [4, 3]
  truncated.safetensors        a valid fc.weight f32[4, 3] file cut 8 bytes short
  unexpected-name.safetensors  fc.weight f32[4, 3] and fc.wieght, which no param is named
  fc-weight-only.safetensors   fc.weight f32[4, 3] without fc.bias
  module-prefixed.safetensors  fc.weight and fc.bias saved as DistributedDataParallel names
                               them, module.fc.weight and module.fc.bias
"""
import os

import numpy as np
from safetensors.numpy import save, save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def weight(rows, cols):
    return np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) / 10


def main():
    save_file({"fc.weight": weight(4, 2)}, os.path.join(HERE, "fc-weight-4x2.safetensors"))
    whole = save({"fc.weight": weight(4, 3)})
    with open(os.path.join(HERE, "truncated.safetensors"), "wb") as f:
        f.write(whole[:-8])
    save_file({"fc.weight": weight(4, 3), "fc.wieght": weight(4, 3)},
              os.path.join(HERE, "unexpected-name.safetensors"))
    save_file({"fc.weight": weight(4, 3)}, os.path.join(HERE, "fc-weight-only.safetensors"))
    save_file({"module.fc.weight": weight(4, 3), "module.fc.bias": weight(1, 4)[0]},
              os.path.join(HERE, "module-prefixed.safetensors"))


if __name__ == "__main__":
    main()
