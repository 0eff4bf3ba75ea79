"""The real-model suite's architectures at realistic sizes, for the peer
benchmark (zoo_peers.py, model names "suite/NAME").

tests/models/make_models.py builds the suite at tiny widths (8-64, 32×32
images, sequences of 16), where per-step overhead weighs as much as
arithmetic; these are the same constructors at the sizes people run:
224×224 images, hidden 256 with sequences of 128, four layers. The CNNs
the suite has at 224×224 in torchvision's own sizes (ResNet-18,
MobileNetV3-small, EfficientNet-B0, ConvNeXt-T) are rows of the zoo
table already, so they are not repeated here. Weights are random, made
non-trivial and the head normalised as make_models.py does; nothing is
downloaded.
"""
import os
import sys

import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
import make_models  # noqa: E402  (the suite's modules and its weight preparation)

SEQUENCE = 128
VOCAB = 1000


def text_inputs(batch):
    """Token ids and an attention mask, the first sequence padded."""
    g = torch.Generator().manual_seed(100 + batch)
    ids = torch.randint(0, VOCAB, (batch, SEQUENCE), generator=g)
    mask = torch.ones(batch, SEQUENCE, dtype=torch.int64)
    mask[0, SEQUENCE * 3 // 4:] = 0
    return ids, mask


def text(build):
    return build, text_inputs, ["input_ids", "attention_mask"]


def hf(config_class, model_class, **config):
    return lambda: make_models.hf(config_class, model_class, **config)


def whisper():
    import transformers

    cfg = transformers.WhisperConfig(vocab_size=VOCAB, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                     decoder_start_token_id=1, d_model=256, encoder_layers=4,
                                     encoder_attention_heads=4, decoder_layers=1, decoder_attention_heads=4,
                                     encoder_ffn_dim=1024, decoder_ffn_dim=1024, num_mel_bins=80,
                                     max_source_positions=SEQUENCE, max_target_positions=SEQUENCE)
    cfg._attn_implementation = "eager"
    return make_models.AudioHidden(transformers.WhisperModel(cfg).get_encoder())


def image(batch):
    return (torch.randn(batch, 3, 224, 224),)


MODELS = {
    "vit": (lambda: torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=4, num_heads=4,
                                                         hidden_dim=256, mlp_dim=1024, num_classes=1000),
            image, ["x"]),
    "unet": (lambda: make_models.UNet(c=16), image, ["x"]),
    "diffusion_block": (lambda: make_models.DiffusionBlock(c=128, groups=32, tdim=256),
                        lambda b: (torch.randn(b, 128, 32, 32), torch.randn(b, 256)), ["x", "t"]),
    "bert": text(hf("BertConfig", "BertModel", vocab_size=VOCAB, hidden_size=256, num_hidden_layers=4,
                    num_attention_heads=4, intermediate_size=1024, max_position_embeddings=512)),
    "distilbert": text(hf("DistilBertConfig", "DistilBertModel", vocab_size=VOCAB, dim=256, n_layers=4, n_heads=4,
                          hidden_dim=1024, max_position_embeddings=512)),
    "gpt2": text(hf("GPT2Config", "GPT2Model", vocab_size=VOCAB, n_positions=512, n_embd=256, n_layer=4, n_head=4,
                    use_cache=False)),
    "llama": text(hf("LlamaConfig", "LlamaModel", vocab_size=VOCAB, hidden_size=256, intermediate_size=1024,
                     num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                     max_position_embeddings=512, use_cache=False)),
    "t5_encoder": text(hf("T5Config", "T5EncoderModel", vocab_size=VOCAB, d_model=256, d_kv=64, d_ff=1024,
                          num_layers=4, num_heads=4)),
    "whisper_encoder": (whisper, lambda b: (torch.randn(b, 80, 2 * SEQUENCE),), ["input_features"]),
}


def build(name, batch):
    """Model `name` in eval mode, prepared as make_models.py prepares the
    suite's, and its inputs at `batch` as a {name: tensor} dict."""
    make, make_inputs, names = MODELS[name]
    torch.manual_seed(0)
    with torch.no_grad():
        model = make().eval()
        make_models.make_nontrivial(model)
        make_models.normalise_head(model, make_inputs(2))
    torch.manual_seed(1000 + batch)
    return model, dict(zip(names, make_inputs(batch)))
