#!/usr/bin/env python3
"""Exports four real network shapes to ONNX with torch.onnx.export, random weights, no downloads:

  resnet18.onnx      torchvision ResNet-18, input "image" [batch, 3, 64, 64], output "logits"
  mobilenet_v2.onnx  torchvision MobileNetV2, same input and output names
  gpt2_tiny.onnx     a GPT-2-style decoder: token + position embeddings, causal self-attention,
                     tanh-GELU MLP, pre-LayerNorm blocks, tied LM head; input "input_ids"
                     [batch, sequence] int64, output "logits" [batch, sequence, vocab]
  bert_tiny.onnx     a BERT-style encoder: word + position + token-type embeddings, LayerNorm,
                     post-LayerNorm blocks with an additive mask made from "attention_mask"
                     [batch, sequence] int64, erf-GELU MLP, a tanh pooler on the first token;
                     outputs "last_hidden_state" and "pooler_output"

Batch (and sequence for the text models) are dynamic axes, so the graphs compute their shapes
inside (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Range, Expand, Where): those are what
an ONNX importer must evaluate. Sizes are small (hidden 64, 2 layers, vocab 100) so the text
models are a few hundred KB; ResNet-18 keeps its ~45 MB of weights.

Runs with Debian's python3 (python3-torch 1.13, python3-torchvision 0.14); it needs no onnx
package. Exporting is deterministic for a given torch version (fixed seeds).

usage: export_networks.py OUT_DIR [--opset N]   (default opset 17, the newest torch 1.13 writes)
"""
import argparse
import math
import os

import torch
import torch.nn as nn
import torchvision

VOCAB = 100
HIDDEN = 64
HEADS = 4
LAYERS = 2
MAX_POSITIONS = 64


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        # GPT-2 keeps a lower-triangular buffer and slices it to the sequence length.
        causal = torch.tril(torch.ones(MAX_POSITIONS, MAX_POSITIONS, dtype=torch.bool))
        self.register_buffer("causal", causal.view(1, 1, MAX_POSITIONS, MAX_POSITIONS))

    def forward(self, x):
        batch, seq, _ = x.shape
        q, k, v = self.qkv(x).split(HIDDEN, dim=2)
        head = HIDDEN // HEADS
        q = q.view(batch, seq, HEADS, head).transpose(1, 2)
        k = k.view(batch, seq, HEADS, head).transpose(1, 2)
        v = v.view(batch, seq, HEADS, head).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head))
        mask = self.causal[:, :, :seq, :seq]
        scores = scores.masked_fill(~mask, float("-inf"))
        attended = torch.softmax(scores, dim=-1) @ v
        return self.proj(attended.transpose(1, 2).reshape(batch, seq, HIDDEN))


class DecoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(HIDDEN)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, 4 * HIDDEN), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * HIDDEN, HIDDEN))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGpt2(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, HIDDEN)
        self.positions = nn.Embedding(MAX_POSITIONS, HIDDEN)
        self.blocks = nn.ModuleList([DecoderBlock() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.lm_head.weight = self.tokens.weight  # tied, as in GPT-2

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.tokens(input_ids) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class EncoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.ln_attn = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, 4 * HIDDEN), nn.GELU(),
                                 nn.Linear(4 * HIDDEN, HIDDEN))
        self.ln_mlp = nn.LayerNorm(HIDDEN, eps=1e-12)

    def heads(self, x):
        batch, seq, _ = x.shape
        return x.view(batch, seq, HEADS, HIDDEN // HEADS).permute(0, 2, 1, 3)

    def forward(self, x, additive_mask):
        q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS)
        probs = torch.softmax(scores + additive_mask, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        context = context.view(context.size(0), context.size(1), HIDDEN)
        x = self.ln_attn(x + self.attn_out(context))
        return self.ln_mlp(x + self.mlp(x))


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(VOCAB, HIDDEN)
        self.positions = nn.Embedding(MAX_POSITIONS, HIDDEN)
        self.token_types = nn.Embedding(2, HIDDEN)
        self.ln_embed = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.blocks = nn.ModuleList([EncoderBlock() for _ in range(LAYERS)])
        self.pooler = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        positions = torch.arange(seq, dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        token_types = torch.zeros_like(input_ids)
        x = self.words(input_ids) + self.positions(positions) + self.token_types(token_types)
        x = self.ln_embed(x)
        # BERT's extended mask: 0 where attended, a large negative where padded.
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for block in self.blocks:
            x = block(x, additive_mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def randomize_batch_norm_statistics(model):
    # Fresh BatchNorm layers have mean 0 and variance 1, which would make folding them a no-op.
    generator = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            count = module.num_features
            module.running_mean.copy_(0.1 * torch.randn(count, generator=generator))
            module.running_var.copy_(0.5 + torch.rand(count, generator=generator))
            module.weight.data.copy_(0.5 + torch.rand(count, generator=generator))
            module.bias.data.copy_(0.1 * torch.randn(count, generator=generator))


def randomize_layer_norms(model):
    # Fresh LayerNorms are all ones and zeros: a swapped scale and bias would go unnoticed, and
    # the exporter would merge the equal initializers into one.
    generator = torch.Generator().manual_seed(2)
    for module in model.modules():
        if isinstance(module, nn.LayerNorm):
            count = module.normalized_shape[0]
            module.weight.data.copy_(0.5 + torch.rand(count, generator=generator))
            module.bias.data.copy_(0.1 * torch.randn(count, generator=generator))
    return model


def export(model, args, path, input_names, output_names, dynamic_axes, opset):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes, opset_version=opset,
                          do_constant_folding=True)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--opset", type=int, default=17)
    options = parser.parse_args()
    os.makedirs(options.out_dir, exist_ok=True)
    out = lambda name: os.path.join(options.out_dir, name)

    image = torch.randn(2, 3, 64, 64)
    image_axes = {"image": {0: "batch"}, "logits": {0: "batch"}}
    for name, build in (("resnet18", torchvision.models.resnet18),
                        ("mobilenet_v2", torchvision.models.mobilenet_v2)):
        torch.manual_seed(0)
        model = build(weights=None)
        randomize_batch_norm_statistics(model)
        export(model, (image,), out(name + ".onnx"), ["image"], ["logits"], image_axes,
               options.opset)

    ids = torch.randint(0, VOCAB, (2, 8))
    torch.manual_seed(0)
    export(randomize_layer_norms(TinyGpt2()), (ids,), out("gpt2_tiny.onnx"), ["input_ids"], ["logits"],
           {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}},
           options.opset)

    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0
    torch.manual_seed(0)
    text_axes = {0: "batch", 1: "sequence"}
    export(randomize_layer_norms(TinyBert()), (ids, mask), out("bert_tiny.onnx"), ["input_ids", "attention_mask"],
           ["last_hidden_state", "pooler_output"],
           {"input_ids": text_axes, "attention_mask": text_axes, "last_hidden_state": text_axes,
            "pooler_output": {0: "batch"}}, options.opset)


if __name__ == "__main__":
    main()
