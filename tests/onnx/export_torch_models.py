#!/usr/bin/python3
"""Exports the models of tests/onnx/torch-export with Debian's python3-torch.

Each model is a folder in the layout of ONNX's backend test data, so that
graphc-onnx-conformance runs it like any other test:

  torch-export/NAME/model.onnx                  torch.onnx.export, opset 17
  torch-export/NAME/test_data_set_K/input_0.pb  an input (batch sizes differ per set)
  torch-export/NAME/test_data_set_K/output_0.pb what PyTorch computes for it

The batch dim is exported as dynamic ("batch"), so graphc imports it as a
symbolic size and one compiled graph serves every set. Needs python3-torch
and python3-onnx (Debian); neither is needed to build or test graphc.

  /usr/bin/python3 tests/onnx/export_torch_models.py
"""
import os
import shutil

import numpy as np
import onnx
import onnx.numpy_helper
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "torch-export")


class Mlp(torch.nn.Module):
    """Linear → ReLU → Linear → softmax: two GEMMs with epilogues."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


class AttentionBlock(torch.nn.Module):
    """A pre-norm transformer block: multi-head self-attention and a GELU MLP,
    each with a residual. Its reshapes to heads take the batch from x.shape,
    which the exporter writes as Shape → Gather → Concat → Reshape."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        split = lambda z: z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        attention = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        y = (attention @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Embedding(torch.nn.Module):
    """Token and position embeddings (Gather), summed and layer-normed."""

    def __init__(self, vocab=50, positions=8, d=16):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, d)
        self.positions = torch.nn.Parameter(torch.randn(positions, d))
        self.ln = torch.nn.LayerNorm(d)

    def forward(self, ids):
        return self.ln(self.tokens(ids) + self.positions)


def save(name, module, make_input, batches):
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    module.eval()
    example = make_input(batches[0])
    torch.onnx.export(module, (example,), os.path.join(folder, "model.onnx"), opset_version=17,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    for k, batch in enumerate(batches):
        data = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(data)
        x = make_input(batch)
        with torch.no_grad():
            y = module(x)
        for kind, tensor in [("input", x), ("output", y)]:
            proto = onnx.numpy_helper.from_array(tensor.numpy(), "x" if kind == "input" else "y")
            with open(os.path.join(data, f"{kind}_0.pb"), "wb") as f:
                f.write(proto.SerializeToString())


def main():
    torch.manual_seed(2026)
    shutil.rmtree(OUT, ignore_errors=True)
    save("mlp", Mlp(), lambda b: torch.randn(b, 16), [3, 64])
    save("attention_block", AttentionBlock(), lambda b: torch.randn(b, 8, 32), [2, 5])
    save("embedding", Embedding(), lambda b: torch.randint(0, 50, (b, 8)), [1, 6])
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
