"""Writes the inputs of tests/lit/cli/batch-norm.test (run from anywhere with numpy, torch and
safetensors): the state_dict of a trained-looking nn.BatchNorm2d(3, eps=1e-3), saved as
PyTorch users save one, an input, and the module's output in eval() followed by relu. Small
and deterministic; committed, since the model names the weights by a relative path.

  batch-norm.safetensors  bn.weight, bn.bias, bn.running_mean, bn.running_var,
                          bn.num_batches_tracked (i64, 0-d)
  batch-norm-x.npy        x f32[2, 3, 4, 4]
  batch-norm-y.npy        relu(bn(x)) in eval()
"""
import os

import numpy as np
import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    torch.manual_seed(7)
    bn = torch.nn.BatchNorm2d(3, eps=1e-3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([0.5, 1.5, -1.0]))
        bn.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
        bn.running_mean.copy_(torch.tensor([1.0, -0.5, 0.25]))
        bn.running_var.copy_(torch.tensor([0.5, 2.0, 0.01]))
        bn.num_batches_tracked.fill_(7)
    bn.eval()
    x = torch.randn(2, 3, 4, 4)
    y = torch.relu(bn(x)).detach()
    save_file({"bn." + k: v.contiguous() for k, v in bn.state_dict().items()},
              os.path.join(HERE, "batch-norm.safetensors"))
    np.save(os.path.join(HERE, "batch-norm-x.npy"), x.numpy())
    np.save(os.path.join(HERE, "batch-norm-y.npy"), y.numpy())


if __name__ == "__main__":
    main()
