"""Builds graphc's real-model suite: the architectures users export from
PyTorch, at tiny widths with random but fixed weights, each exported by
both of torch.onnx's exporters, with a static and a dynamic batch.

    $(tools/venv.sh)/bin/python tests/models/make_models.py [--only NAME,...]

Nothing is downloaded: every model comes from a torchvision constructor,
a transformers config, or a module written here from torch.nn layers.
Random init hides bugs, so BatchNorm statistics, affine parameters and
layer scales are drawn away from their identity values, parameters left
at zero (torchvision's ViT head) are drawn at random, and the last layer
is rescaled so that the outputs have a spread near 1.

Each model lands in the layout of ONNX's backend test data, which
graphc-onnx-conformance runs (tests/models/CMakeLists.txt):

    tests/models/<model>/<variant>/model.onnx
    tests/models/<model>/<variant>/test_data_set_K/input_N.pb    inputs
    tests/models/<model>/<variant>/test_data_set_K/output_N.pb   what PyTorch computes

Variants: ts-static and ts-dynamic (the TorchScript exporter, opset 17),
dynamo-static and dynamo-dynamic (the dynamo exporter, torch 2.15's
default, opset 20). A dynamic variant has two data sets, batch 2 and 3.
One more, resnet18/dynamo-external, is what a plain
torch.onnx.export(m, args, "model.onnx") writes: its weights in
model.onnx.data beside the model.

The output of each run is deterministic (fixed seeds, one thread).
"""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torchvision
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)


# --- models written here from torch.nn layers -------------------------------------


class NarrowResNet18(nn.Module):
    """torchvision's ResNet-18 (BasicBlock, [2, 2, 2, 2]) at widths 8-64."""

    def __init__(self, widths=(8, 16, 32, 64), classes=10):
        super().__init__()
        block = torchvision.models.resnet.BasicBlock
        self.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, inplanes = [], widths[0]
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            down = None
            if stride != 1 or inplanes != w:
                down = nn.Sequential(nn.Conv2d(inplanes, w, 1, stride, bias=False), nn.BatchNorm2d(w))
            layers.append(nn.Sequential(block(inplanes, w, stride, down), block(w, w)))
            inplanes = w
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


class UNet(nn.Module):
    """A two-level U-Net: conv blocks, max pooling down, a transposed
    convolution and a nearest-neighbour upsample (Resize) up, skip concats."""

    def __init__(self, c=8):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.ReLU())

        self.down1, self.down2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = block(4 * c, 2 * c)
        self.up1 = nn.Upsample(scale_factor=2, mode="nearest")
        self.reduce1 = nn.Conv2d(2 * c, c, 1)
        self.dec1 = block(2 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        m = self.mid(self.pool(d2))
        u2 = self.dec2(torch.cat([self.up2(m), d2], 1))
        u1 = self.dec1(torch.cat([self.reduce1(self.up1(u2)), d1], 1))
        return self.head(u1)


class DiffusionBlock(nn.Module):
    """A diffusion U-Net's middle: a residual block with GroupNorm, SiLU and a
    time embedding, then GroupNorm and self-attention over the pixels."""

    def __init__(self, c=16, groups=4, tdim=8):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(groups, c), nn.Conv2d(c, c, 3, padding=1)
        self.time = nn.Linear(tdim, c)
        self.norm2, self.conv2 = nn.GroupNorm(groups, c), nn.Conv2d(c, c, 3, padding=1)
        self.norm3 = nn.GroupNorm(groups, c)
        self.attn = nn.MultiheadAttention(c, 2, batch_first=True)

    def forward(self, x, t):
        h = self.conv1(nn.functional.silu(self.norm1(x)))
        h = h + self.time(nn.functional.silu(t))[:, :, None, None]
        h = x + self.conv2(nn.functional.silu(self.norm2(h)))
        n, c, hh, ww = h.shape
        seq = self.norm3(h).flatten(2).transpose(1, 2)
        a, _ = self.attn(seq, seq, seq, need_weights=False)
        return h + a.transpose(1, 2).reshape(n, c, hh, ww)


class TextHidden(nn.Module):
    """A transformers text model's last hidden state, as one tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class AudioHidden(nn.Module):
    """An audio encoder's last hidden state."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_features):
        return self.model(input_features).last_hidden_state


# --- the suite --------------------------------------------------------------------


def cnn(build, size=32):
    return build, lambda b: (torch.randn(b, 3, size, size),), ["x"]


def text(build):
    def inputs(b):
        g = torch.Generator().manual_seed(100 + b)
        ids = torch.randint(0, 100, (b, 16), generator=g)
        mask = torch.ones(b, 16, dtype=torch.int64)
        mask[0, 12:] = 0  # padding in the first sequence exercises the mask
        return ids, mask

    return build, inputs, ["input_ids", "attention_mask"]


def hf(config_class, model_class, **config):
    import transformers

    cfg = getattr(transformers, config_class)(**config)
    cfg._attn_implementation = "eager"
    return TextHidden(getattr(transformers, model_class)(cfg))


def whisper():
    import transformers

    cfg = transformers.WhisperConfig(vocab_size=100, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                     decoder_start_token_id=1, d_model=32, encoder_layers=2, encoder_attention_heads=2,
                                     decoder_layers=1, decoder_attention_heads=2, encoder_ffn_dim=64,
                                     decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16,
                                     max_target_positions=16)
    cfg._attn_implementation = "eager"
    return AudioHidden(transformers.WhisperModel(cfg).get_encoder())


def convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)],
                    stochastic_depth_prob=0.0, num_classes=10)


def efficientnet_b0():
    from torchvision.models import efficientnet
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    return efficientnet.EfficientNet(setting, 0.2, last_channel=last, num_classes=10)


MODELS = {
    "resnet18": cnn(NarrowResNet18),
    "mobilenet_v3_small": cnn(lambda: torchvision.models.mobilenet_v3_small(weights=None, width_mult=0.25,
                                                                            num_classes=10)),
    "efficientnet_b0": cnn(efficientnet_b0),
    "convnext": cnn(convnext),
    "vit": cnn(lambda: torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                                            hidden_dim=32, mlp_dim=64, num_classes=10)),
    "unet": cnn(UNet),
    "diffusion_block": (DiffusionBlock, lambda b: (torch.randn(b, 16, 8, 8), torch.randn(b, 8)), ["x", "t"]),
    "bert": text(lambda: hf("BertConfig", "BertModel", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                            num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)),
    "distilbert": text(lambda: hf("DistilBertConfig", "DistilBertModel", vocab_size=100, dim=32, n_layers=2,
                                  n_heads=2, hidden_dim=64, max_position_embeddings=64)),
    "gpt2": text(lambda: hf("GPT2Config", "GPT2Model", vocab_size=100, n_positions=64, n_embd=32, n_layer=2,
                            n_head=2, use_cache=False)),
    "llama": text(lambda: hf("LlamaConfig", "LlamaModel", vocab_size=100, hidden_size=32, intermediate_size=64,
                             num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                             max_position_embeddings=64, use_cache=False)),
    "t5_encoder": text(lambda: hf("T5Config", "T5EncoderModel", vocab_size=100, d_model=32, d_kv=16, d_ff=64,
                                  num_layers=2, num_heads=2)),
    "whisper_encoder": (whisper, lambda b: (torch.randn(b, 16, 32),), ["input_features"]),
}


def make_nontrivial(model):
    """Statistics and affine parameters away from identity: a BatchNorm that
    is an identity, or a layer scale of 1e-6, hides a wrong fold."""
    g = torch.Generator().manual_seed(7)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.2)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
        if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm)) and m.weight is not None:
            m.weight.copy_(1 + 0.3 * torch.randn(m.weight.shape, generator=g))
            m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=g))
    for name, p in model.named_parameters():
        if "layer_scale" in name:
            p.copy_(0.5 + 0.2 * torch.randn(p.shape, generator=g))
        elif not p.any():  # a zero-initialised head (torchvision's ViT) or bias
            fan_in = p[0].numel() if p.dim() > 1 else 1
            p.copy_(torch.randn(p.shape, generator=g) * (fan_in**-0.5 if p.dim() > 1 else 0.1))


def normalise_head(model, args):
    """Rescales the last Linear or convolution (a classifier head, a U-Net's
    output conv) so that the outputs have a standard deviation near 1."""
    layers = [m for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv1d, nn.Conv2d))]
    if not layers:
        return
    std = float(model(*args).std())
    assert std > 0, "the outputs are constant: a head is still zero"
    if not 0.5 < std < 2:
        layers[-1].weight.mul_(1 / std)
        if layers[-1].bias is not None:
            layers[-1].bias.mul_(1 / std)


def save_tensor(t, path):
    onnx.save_tensor(onnx.numpy_helper.from_array(np.ascontiguousarray(t.detach().numpy())), path)


def export(model, args, names, out_dir, variant, batches):
    os.makedirs(out_dir)
    path = os.path.join(out_dir, "model.onnx")
    dynamic = variant.endswith("dynamic")
    if variant.startswith("ts"):
        axes = {n: {0: "batch"} for n in names} | {"output": {0: "batch"}} if dynamic else None
        torch.onnx.export(model, args, path, dynamo=False, opset_version=17, input_names=names,
                          output_names=["output"], dynamic_axes=axes)
    else:
        batch = torch.export.Dim("batch", min=1, max=64)
        shapes = tuple({0: batch} for _ in names) if dynamic else None
        program = torch.onnx.export(model, args, dynamo=True, input_names=names, output_names=["output"],
                                    dynamic_shapes=shapes)
        program.save(path, external_data=variant == "dynamo-external")
    for k, (inputs, expected) in enumerate(batches):
        data = os.path.join(out_dir, f"test_data_set_{k}")
        os.makedirs(data)
        for i, t in enumerate(inputs):
            save_tensor(t, os.path.join(data, f"input_{i}.pb"))
        save_tensor(expected, os.path.join(data, f"output_0.pb"))


def build_module(name):
    """Model `name` as the suite exports it: built with seed 0, in eval mode,
    its statistics made non-trivial and its head normalised. Returns the
    module, its inputs' maker (batch -> tuple) and the inputs' names."""
    build, make_inputs, names = MODELS[name]
    torch.manual_seed(0)
    with torch.no_grad():
        model = build().eval()
        make_nontrivial(model)
        normalise_head(model, make_inputs(2))
    return model, make_inputs, names


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="", help="comma-separated model names")
    only = [n for n in parser.parse_args().only.split(",") if n]
    failures = []
    for name in MODELS:
        if only and name not in only:
            continue
        model, make_inputs, names = build_module(name)
        with torch.no_grad():
            torch.manual_seed(1)
            batches = []
            for b in (2, 3):
                inputs = make_inputs(b)
                batches.append((inputs, model(*inputs)))
        variants = ["ts-static", "ts-dynamic", "dynamo-static", "dynamo-dynamic"]
        if name == "resnet18":
            variants.append("dynamo-external")
        for variant in variants:
            out_dir = os.path.join(HERE, name, variant)
            shutil.rmtree(out_dir, ignore_errors=True)
            dynamic = variant.endswith("dynamic")
            try:
                export(model, batches[0][0], names, out_dir, variant, batches if dynamic else batches[:1])
                print(f"{name}/{variant}: ok", flush=True)
            except Exception as e:  # an exporter failure is reported, not hidden
                shutil.rmtree(out_dir, ignore_errors=True)
                print(f"{name}/{variant}: export failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
                failures.append(f"{name}/{variant}")


    if failures:
        sys.exit(f"export failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
