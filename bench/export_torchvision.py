#!/usr/bin/env python3
"""Exports torchvision's classification networks to ONNX for bench/torchvision_vs_ort.py, with
random weights (a fixed seed; nothing is downloaded), each beside its state_dict so that PyTorch
runs the same weights.

  NET.onnx  input "image" f32[batch, 3, 224, 224], batch a dynamic axis; output "logits"
  NET.pt    the module's state_dict (torch.save), loaded by the benchmark's PyTorch

Runs with Debian's python3 (python3-torch 1.13, python3-torchvision 0.14), as
tests/onnx/export_networks.py does: its TorchScript-based exporter writes opset 17, as users'
exports of these networks commonly are.

usage: export_torchvision.py OUT_DIR NET ...   (NET: a torchvision.models builder's name)
"""
import argparse
import os

import torch
import torchvision


def build(name):
    """The network in eval mode, its weights drawn from a fixed seed. GoogLeNet and Inception-v3
    are built without their auxiliary classifiers, which eval mode does not run."""
    torch.manual_seed(0)
    extra = {"aux_logits": False, "init_weights": True} if name in ("googlenet",
                                                                      "inception_v3") else {}
    return getattr(torchvision.models, name)(weights=None, **extra).eval()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("networks", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.networks:
        module = build(name)
        torch.save(module.state_dict(), os.path.join(args.out_dir, f"{name}.pt"))
        torch.onnx.export(module, torch.zeros(1, 3, 224, 224),
                          os.path.join(args.out_dir, f"{name}.onnx"), input_names=["image"],
                          output_names=["logits"], dynamic_axes={"image": {0: "batch"}},
                          opset_version=17, do_constant_folding=True)


if __name__ == "__main__":
    main()
