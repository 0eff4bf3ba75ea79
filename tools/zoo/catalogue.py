"""The zoo: models graphc was never tuned for, chosen automatically.

- every classification and segmentation constructor in torchvision
  (``torchvision.models.list_models``), ``weights=None``, batch 1 at the
  model's own input size (224×224; 299×299 for Inception v3), or a smaller
  one where the sweep is capped (--image);
- every architecture of transformers' model-type registry that has a
  causal-LM, sequence-classification or image-classification head: a tiny
  config built from the config class's defaults with small widths and two
  layers (or, where those widths do not fit together and eager fails, the
  default widths with two layers, up to 300M parameters), the base model
  and the head model each one entry.

Each entry builds with seed 0, in eval mode, its statistics and zero
parameters moved away from identity (make_models.make_nontrivial: a
BatchNorm that is an identity hides a wrong fold). An entry is a name and a
function returning (module, example kwargs).
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any, Callable, Dict, List, Tuple

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))

Entry = Callable[[], Tuple[torch.nn.Module, Dict[str, torch.Tensor]]]

# --- torchvision -----------------------------------------------------------------------

IMAGE_SIZES = {"inception_v3": 299}


def torchvision_entries(image: int = 224) -> Dict[str, Entry]:
    import torchvision.models as models

    entries: Dict[str, Entry] = {}
    for module, kind in ((models, "classification"), (models.segmentation, "segmentation")):
        for name in models.list_models(module=module):
            def build(name=name, kind=kind) -> Tuple[torch.nn.Module, Dict[str, torch.Tensor]]:
                kwargs: Dict[str, Any] = {"weights": None}
                if kind == "segmentation":
                    kwargs["weights_backbone"] = None
                if name == "inception_v3" or name == "googlenet":
                    kwargs["aux_logits"] = False
                    kwargs["init_weights"] = True
                model = models.get_model(name, **kwargs)
                size = IMAGE_SIZES.get(name, image)
                g = torch.Generator().manual_seed(1)
                first = next(iter(inspect.signature(model.forward).parameters))  # x, or a segmenter's input
                return model, {first: torch.randn(1, 3, size, size, generator=g)}

            entries[f"tv/{name}"] = build
    return entries


# --- Hugging Face transformers -----------------------------------------------------------

# Small sizes for whichever of these a config has (the names vary by family).
SMALL = {
    "hidden_size": 64, "d_model": 64, "n_embd": 64, "embed_dim": 64, "dim": 64, "hidden_dim": 128,
    "num_hidden_layers": 2, "num_layers": 2, "n_layer": 2, "n_layers": 2, "encoder_layers": 2, "decoder_layers": 2,
    "num_decoder_layers": 2, "num_encoder_layers": 2,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "encoder_attention_heads": 4, "decoder_attention_heads": 4,
    "num_heads": 4, "num_key_value_heads": 2, "num_kv_heads": 2, "multi_query_group_num": 2,
    "intermediate_size": 128, "d_ff": 128, "ffn_dim": 128, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
    "n_inner": 128, "d_kv": 16, "head_dim": 16, "kv_channels": 16, "attention_head_size": 16,
    "qk_rope_head_dim": 16, "qk_nope_head_dim": 16, "qk_head_dim": 32, "v_head_dim": 16, "kv_lora_rank": 32,
    "q_lora_rank": 32, "n_group": 1, "topk_group": 1,
    "vocab_size": 1000, "max_position_embeddings": 256, "n_positions": 256, "max_seq_len": 256,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "moe_intermediate_size": 64,
    "num_experts_per_tok": 2, "expert_intermediate_size": 64, "shared_expert_intermediate_size": 64,
    "image_size": 64, "patch_size": 8, "num_channels": 3,
    "use_cache": False, "num_labels": 3, "tie_word_embeddings": True,
}
TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id",
             "decoder_start_token_id", "mask_token_id", "unk_token_id")
SEQUENCE = 16
BATCH = 2


def read(config: Any, attr: str) -> Any:
    """The config's attribute, or None where reading it raises (a per-layer
    attribute some configs refuse to read whole)."""
    try:
        return getattr(config, attr, None)
    except Exception:
        return None


def write(config: Any, attr: str, value: Any) -> None:
    """Sets the attribute where the config lets it be set (some are
    read-only properties derived from others)."""
    try:
        setattr(config, attr, value)
    except Exception:
        pass


def sub_configs(config: Any) -> List[Any]:
    """The configs a composite config holds (a text, vision or audio
    config), which keep their own widths and depths."""
    from transformers import PretrainedConfig

    return [v for v in vars(config).values() if isinstance(v, PretrainedConfig)]


def small_config(model_type: str) -> Any:
    from transformers import CONFIG_MAPPING

    return shrink(CONFIG_MAPPING[model_type]())


def shrink(config: Any) -> Any:
    """`config` and the configs it holds at SMALL's sizes."""
    for sub in sub_configs(config):
        shrink(sub)
    # Sizes derived from the hidden size (a pooler's, a projection's) follow it.
    hidden = {name: read(config, name) for name in ("hidden_size", "d_model", "n_embd")
              if isinstance(read(config, name), int)}
    for attr in list(vars(config)):
        value = read(config, attr)
        if isinstance(value, int) and not isinstance(value, bool) and attr not in SMALL and any(
                key in attr for key in ("hidden_size", "_dim", "embedding_size")) and value in hidden.values():
            write(config, attr, SMALL["hidden_size"])
    for attr, value in SMALL.items():
        current = read(config, attr)
        if current is None or isinstance(current, bool) != isinstance(value, bool):
            continue
        if isinstance(current, (int, float, bool)):
            write(config, attr, value)
    for attr in ("depths", "hidden_sizes", "num_heads", "embed_dims", "layers_per_block"):
        current = read(config, attr)
        if isinstance(current, (list, tuple)) and current and all(isinstance(v, int) for v in current):
            if attr == "depths" or attr == "layers_per_block":
                write(config, attr, [1] * len(current))
            elif attr == "num_heads":
                write(config, attr, [min(v, 2) for v in current])
            else:
                write(config, attr, [16 * (2 ** k) for k in range(len(current))])
    vocab = read(config, "vocab_size")
    if isinstance(vocab, int):
        for attr in TOKEN_IDS:
            v = read(config, attr)
            if isinstance(v, int) and v >= vocab:
                write(config, attr, vocab - 1)
    return config


# What the fallback config changes: depth, vocabulary and experts only, the
# widths left at the config's defaults (for families whose widths are tied
# together in ways the small config's renaming does not know).
SHALLOW = {key: SMALL[key] for key in (
    "num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
    "num_decoder_layers", "num_encoder_layers", "vocab_size", "num_experts", "num_local_experts",
    "n_routed_experts", "num_experts_per_tok", "use_cache", "num_labels")}
# The fallback's limit: a model larger than this is left out rather than
# built at its default widths.
SHALLOW_MAX_PARAMS = 300_000_000


def shallow_config(model_type: str) -> Any:
    """The config's defaults with two layers (one block per stage), a
    vocabulary of 1000 and 4 experts: the fallback when the small config
    does not run in eager."""
    from transformers import CONFIG_MAPPING

    return shallow(CONFIG_MAPPING[model_type]())


def shallow(config: Any) -> Any:
    """`config` and the configs it holds with SHALLOW's depths."""
    for sub in sub_configs(config):
        shallow(sub)
    for attr, value in SHALLOW.items():
        current = read(config, attr)
        if current is not None and isinstance(current, bool) == isinstance(value, bool) and isinstance(
                current, (int, bool)):
            write(config, attr, value)
    for attr in ("depths", "layers_per_block"):
        current = read(config, attr)
        if isinstance(current, (list, tuple)) and current and all(isinstance(v, int) for v in current):
            write(config, attr, [1] * len(current))
    vocab = read(config, "vocab_size")
    if isinstance(vocab, int):
        for attr in TOKEN_IDS:
            v = read(config, attr)
            if isinstance(v, int) and v >= vocab:
                write(config, attr, vocab - 1)
    return config


def model_inputs(model: torch.nn.Module, config: Any) -> Dict[str, torch.Tensor]:
    """Example inputs for the model's forward, from its main input's name."""
    g = torch.Generator().manual_seed(1)
    main = getattr(model, "main_input_name", "input_ids")
    params = inspect.signature(model.forward).parameters
    if main == "input_ids":
        vocab = int(getattr(config, "vocab_size", 1000) or 1000)
        inputs = {"input_ids": torch.randint(3, vocab, (BATCH, SEQUENCE), generator=g)}
        if "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False):
            inputs["decoder_input_ids"] = torch.randint(3, vocab, (BATCH, SEQUENCE // 2), generator=g)
        return inputs
    if main == "pixel_values":
        channels = int(getattr(config, "num_channels", 3) or 3)
        size = getattr(config, "image_size", 64)
        size = size if isinstance(size, int) else 64
        return {"pixel_values": torch.randn(BATCH, channels, size, size, generator=g)}
    raise ValueError(f"no example inputs for a model whose main input is {main!r}")


def hf_architectures() -> List[Tuple[str, str]]:
    """(model type, head) for every architecture with a causal-LM, sequence
    classification or image classification head, sorted by type."""
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES,
                                                        MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES,
                                                        MODEL_MAPPING_NAMES)

    chosen = []
    for model_type in sorted(set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | set(MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES)
                             | set(MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES)):
        if model_type not in MODEL_MAPPING_NAMES:
            continue
        head = ("causal_lm" if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
                else "seq_cls" if model_type in MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES else "image_cls")
        chosen.append((model_type, head))
    return chosen


class TooLarge(ValueError):
    pass


def check_size(cls: Any, config: Any, which: str) -> None:
    """Raises TooLarge for a model of more than SHALLOW_MAX_PARAMS
    parameters, counted on the meta device before anything is allocated (a
    model too large for the machine would be killed for memory)."""
    with torch.device("meta"):
        size = sum(p.numel() for p in cls.from_config(config).parameters())
    if size > SHALLOW_MAX_PARAMS:
        raise TooLarge(f"{which} make {size / 1e6:.0f}M parameters, more than the sweep's "
                       f"{SHALLOW_MAX_PARAMS / 1e6:.0f}M")


def hf_entries() -> Dict[str, Entry]:
    from transformers import (AutoModel, AutoModelForCausalLM, AutoModelForImageClassification,
                              AutoModelForSequenceClassification)

    classes = {"base": AutoModel, "causal_lm": AutoModelForCausalLM, "seq_cls": AutoModelForSequenceClassification,
               "image_cls": AutoModelForImageClassification}
    entries: Dict[str, Entry] = {}
    for model_type, head in hf_architectures():
        for which in ("base", head):
            def build(model_type=model_type, which=which) -> Tuple[torch.nn.Module, Dict[str, torch.Tensor]]:
                cls = classes[which]
                config = small_config(model_type)
                try:
                    check_size(cls, config, "the small config")
                    model = cls.from_config(config, attn_implementation="eager")
                    inputs = model_inputs(model, config)
                    with torch.no_grad():
                        model.eval()(**inputs)
                    model.zoo_config = "small"
                    return model, inputs
                except Exception as small_failed:
                    config = shallow_config(model_type)
                    try:
                        check_size(cls, config, "the default widths")
                    except TooLarge as e:
                        raise small_failed from e
                    torch.manual_seed(0)
                    model = cls.from_config(config, attn_implementation="eager")
                    model.zoo_config = "default widths"
                    return model, model_inputs(model, config)

            entries[f"hf/{model_type}/{which}"] = build
    return entries


def catalogue(image: int = 224) -> Dict[str, Entry]:
    return {**torchvision_entries(image), **hf_entries()}


def build(entry: Entry) -> Tuple[torch.nn.Module, Dict[str, torch.Tensor]]:
    """An entry's model, seeded, in eval mode, made non-trivial."""
    from make_models import make_nontrivial

    torch.manual_seed(0)
    with torch.no_grad():
        model, inputs = entry()
        model = model.eval()
        make_nontrivial(model)
    return model, inputs


# The CI subset: a few of each kind, chosen for what they exercise (the
# Swin mask's slice writes, depthwise and grouped convolutions, squeeze
# and excitation, a segmentation head's resize, GQA with RoPE, relative
# attention), small enough to run in a few minutes on 2 cores.
CI_SUBSET = [
    "tv/swin_t", "tv/mobilenet_v3_small", "tv/regnet_y_400mf", "tv/shufflenet_v2_x0_5",
    "tv/lraspp_mobilenet_v3_large",
    "hf/llama/causal_lm", "hf/deberta-v2/seq_cls", "hf/segformer/image_cls", "hf/qwen2/causal_lm",
    "hf/bert/base",
]
