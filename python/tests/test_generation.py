"""LLM generation through torch.compile(backend="graphc"): Hugging Face
``generate`` with a static cache on small Llama, Qwen2 and Gemma configs
gives eager's greedy tokens; the prefill and the decode step are one graphc
partition each, nothing left to PyTorch; the decode step writes the new
key/value rows into the cache in place (a scatter_nd straight into the
cache input, declared ``updates``), and the cache tensors keep their
memory from token to token."""

import re

import pytest
import torch

import graphc.dynamo

transformers = pytest.importorskip("transformers")

COMMON = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=256)
ARCHITECTURES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", {"head_dim": 16}),
}
NEW_TOKENS = 64


def build(name):
    config, model, extra = ARCHITECTURES[name]
    torch.manual_seed(0)
    return getattr(transformers, model)(getattr(transformers, config)(**COMMON, **extra)).eval()


def generate(model, ids):
    return model.generate(ids, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False,
                          cache_implementation="static")


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_greedy_tokens_equal_eager_with_the_cache_written_in_place(name):
    model = build(name)
    ids = torch.randint(0, COMMON["vocab_size"], (1, 8), generator=torch.Generator().manual_seed(1))
    graphc.dynamo.reset()
    torch._dynamo.reset()
    with torch.no_grad():
        want = generate(model, ids)
        model.forward = torch.compile(model.forward, backend="graphc")
        got = generate(model, ids)
    assert torch.equal(got, want), (got, want)
    records = graphc.dynamo.compile_records()
    assert len(records) == 2  # the prefill and the decode step
    for record in records:
        assert record.partitions == 1 and not record.eager_ops and not record.failed_partitions, record
    decode = records[1].graphs[0]
    signature = decode[:decode.index("{")]
    results = signature[signature.index("-> (") + 4:signature.rindex(")")]
    # Each layer's keys and values: f32[batch, kv heads, length, head dim] (HF's layers may count tokens in an i64[] too).
    written = re.findall(r"f32\[1, 2, \d+, 16\] updates (%v\d+)", results)
    assert len(written) == 2 * COMMON["num_hidden_layers"], signature
    for cache in written:
        assert f"scatter_nd({cache}," in decode


def test_the_cache_keeps_its_memory_across_tokens():
    model = build("llama")
    ids = torch.randint(0, COMMON["vocab_size"], (1, 6), generator=torch.Generator().manual_seed(2))
    cache = transformers.StaticCache(config=model.config, max_cache_len=32)
    model.forward = torch.compile(model.forward, backend="graphc")
    graphc.dynamo.reset()
    torch._dynamo.reset()
    with torch.no_grad():
        model(ids, past_key_values=cache, cache_position=torch.arange(6), use_cache=True)
        keys = [layer.keys for layer in cache.layers]
        pointers = [k.data_ptr() for k in keys]
        token = ids[:, -1:]
        for position in range(6, 12):
            before = [k.clone() for k in keys]
            out = model(token, past_key_values=cache, cache_position=torch.tensor([position]), use_cache=True)
            token = out.logits[:, -1:].argmax(-1)
            for k, b in zip(keys, before):
                changed = (k != b).any(dim=-1).any(dim=1)[0].nonzero().flatten().tolist()
                assert changed == [position]  # the new row only
    assert [layer.keys.data_ptr() for layer in cache.layers] == pointers


def test_two_compiles_serve_every_prompt_length():
    """With dynamic=True, one prefill graph (symbolic prompt length; the
    last position's logits a slice from -1 of it) and one decode graph
    serve prompts of any length, whole in graphc, with eager's tokens."""
    model = build("llama")
    compiled = torch.compile(model.forward, backend="graphc", dynamic=True)
    graphc.dynamo.reset()
    torch._dynamo.reset()
    for length in (8, 12, 5):
        ids = torch.randint(0, COMMON["vocab_size"], (1, length), generator=torch.Generator().manual_seed(length))
        with torch.no_grad():
            model.forward = type(model).forward.__get__(model)
            want = generate(model, ids)
            model.forward = compiled
            got = generate(model, ids)
        assert torch.equal(got, want), length
    records = graphc.dynamo.compile_records()
    assert len(records) == 2, [r.graphs[0][:200] for r in records]
    for record in records:
        assert record.partitions == 1 and not record.eager_ops and not record.failed_partitions, record
