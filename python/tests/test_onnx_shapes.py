"""ONNX models whose shapes are computed at run time, and ops the zoo's
exports use: a Llama decode step with a KV cache of symbolic length,
exported by both of torch's exporters, compiles once and matches PyTorch
at every cache length (the cache's length plus one is a size, the
positions a range from it, the shape's elements read as data), with an
attention mask too; slices
with negative steps and ScatterElements match onnxruntime."""

import numpy as np
import pytest
import torch

import graphc

onnx = pytest.importorskip("onnx")
helper = onnx.helper
TensorProto = onnx.TensorProto


class DecodeStep(torch.nn.Module):
    """One token through a tiny Llama with a KV cache of two layers passed as
    tensors (what Optimum's decoder-with-past exports take): returns the
    logits and the grown cache."""

    def __init__(self):
        super().__init__()
        from transformers import LlamaConfig, LlamaForCausalLM

        self.config = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                  num_key_value_heads=2, vocab_size=1000, max_position_embeddings=256)
        torch.manual_seed(0)
        self.model = LlamaForCausalLM(self.config).eval()

    def forward(self, input_ids, past_k0, past_v0, past_k1, past_v1):
        from transformers import DynamicCache

        cache = DynamicCache(config=self.config)
        for layer, (k, v) in enumerate([(past_k0, past_v0), (past_k1, past_v1)]):
            cache.update(k, v, layer)
        past = past_k0.shape[2]
        positions = torch.arange(past, past + input_ids.shape[1]).unsqueeze(0)
        out = self.model(input_ids=input_ids, past_key_values=cache, position_ids=positions, use_cache=True)
        grown = out.past_key_values
        return (out.logits, grown.layers[0].keys, grown.layers[0].values, grown.layers[1].keys,
                grown.layers[1].values)


NAMES = ["input_ids", "past_k0", "past_v0", "past_k1", "past_v1"]


def cache(length, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 2, length, 16, generator=g) for _ in range(4)]


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_a_decode_step_with_a_symbolic_cache_length_matches_pytorch(exporter, tmp_path):
    pytest.importorskip("transformers")
    step = DecodeStep()
    ids = torch.tensor([[5]])
    path = str(tmp_path / "decode.onnx")
    with torch.no_grad():
        if exporter == "torchscript":
            torch.onnx.export(step, (ids, *cache(7, 0)), path, dynamo=False, opset_version=17, input_names=NAMES,
                              dynamic_axes={n: {2: "past"} for n in NAMES[1:]})
        else:
            past = torch.export.Dim("past", min=1, max=200)
            torch.onnx.export(step, (ids, *cache(7, 0)), dynamo=True, input_names=NAMES,
                              dynamic_shapes=(None, *[{2: past}] * 4)).save(path)
    exe = graphc.compile(path)  # one compile for every length
    (_, _, shape), = [i for i in exe.optimized.inputs if i[0] == "past_k0"]
    assert isinstance(shape[2], str)  # the cache's length stays a symbol
    for length in (7, 1, 3, 40):
        past = cache(length, length)
        with torch.no_grad():
            expected = step(torch.tensor([[11]]), *past)
        got = exe.run(np.array([[11]], dtype=np.int64), *[p.numpy() for p in past])
        assert got[1].shape == (1, 2, length + 1, 16)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=1e-5)


class MaskedDecodeStep(DecodeStep):
    """The decode step with an attention mask over past + 1 positions
    (Optimum's decoder-with-past inputs): the mask's expansion multiplies a
    [1, 1, 1, 1] constant by the cache's length, a size computed as a
    tensor."""

    def forward(self, input_ids, attention_mask, past_k0, past_v0, past_k1, past_v1):
        from transformers import DynamicCache

        cache = DynamicCache(config=self.config)
        for layer, (k, v) in enumerate([(past_k0, past_v0), (past_k1, past_v1)]):
            cache.update(k, v, layer)
        past = past_k0.shape[2]
        positions = torch.arange(past, past + input_ids.shape[1]).unsqueeze(0)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache,
                         position_ids=positions, use_cache=True)
        return out.logits, out.past_key_values.layers[0].keys


def test_a_masked_decode_step_matches_pytorch(tmp_path):
    pytest.importorskip("transformers")
    step = MaskedDecodeStep()
    names = ["input_ids", "attention_mask"] + NAMES[1:]
    path = str(tmp_path / "masked.onnx")
    with torch.no_grad():
        torch.onnx.export(step, (torch.tensor([[5]]), torch.ones(1, 8, dtype=torch.int64), *cache(7, 0)), path,
                          dynamo=False, opset_version=17, input_names=names,
                          dynamic_axes={**{n: {2: "past"} for n in NAMES[1:]}, "attention_mask": {1: "total"}})
    exe = graphc.compile(path)
    for length in (7, 3, 40):
        past = cache(length, length)
        mask = torch.ones(1, length + 1, dtype=torch.int64)
        mask[0, 0] = 0  # a padded first position
        with torch.no_grad():
            expected = step(torch.tensor([[11]]), mask, *past)
        got = exe.run(np.array([[11]], dtype=np.int64), mask.numpy(), *[p.numpy() for p in past])
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=1e-5)


def slice_model(starts, ends, steps, axes=(1,)):
    g = helper.make_graph(
        [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])], "slice",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("s", TensorProto.INT64, [len(starts)], starts),
         helper.make_tensor("e", TensorProto.INT64, [len(ends)], ends),
         helper.make_tensor("a", TensorProto.INT64, [len(axes)], list(axes)),
         helper.make_tensor("st", TensorProto.INT64, [len(steps)], steps)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("starts, ends, steps", [
    ([-1], [-(2**62)], [-1]),  # the whole dim reversed
    ([4], [0], [-2]),
    ([10], [-7], [-1]),  # bounds clamped as NumPy clamps them
    ([2], [5], [-1]),  # nothing
    ([5, 2], [0, -(2**62)], [-2, -1]),
])
def test_a_slice_with_a_negative_step_matches_onnxruntime(starts, ends, steps):
    ort = pytest.importorskip("onnxruntime")
    model = slice_model(starts, ends, steps, axes=(1, 0)[:len(starts)] if len(starts) > 1 else (1,))
    x = np.random.RandomState(0).randn(3, 6).astype(np.float32)
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    (got,) = graphc.compile(model).run(x)
    assert got.shape == expected.shape and np.array_equal(got, expected)


@pytest.mark.parametrize("axis, reduction", [(0, "none"), (1, "none"), (-1, "add"), (0, "mul"), (1, "max"),
                                             (1, "min")])
def test_scatter_elements_matches_onnxruntime(axis, reduction):
    """ScatterElements (torch.scatter's export, select_scatter's too), with
    negative indices and each reduction."""
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.RandomState(1)
    data = rng.randn(3, 5).astype(np.float32)
    indices = np.array([[0, -1, 2], [1, 0, -3]], dtype=np.int64) if axis != 0 else \
        np.array([[0, 2, 1], [-1, 1, 0]], dtype=np.int64)
    if reduction == "none":  # distinct destinations: with none, a repeat's order is unspecified
        indices = np.array([[0, 1, 2], [4, 3, 0]], dtype=np.int64) if axis != 0 else \
            np.array([[0, 2, 1], [1, 0, 2]], dtype=np.int64)
    updates = rng.randn(2, 3).astype(np.float32)
    attrs = {"axis": axis} | ({"reduction": reduction} if reduction != "none" else {})
    g = helper.make_graph(
        [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], **attrs)], "scatter",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3]),
         helper.make_tensor_value_info("u", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"x": data, "i": indices, "u": updates})[0]
    (got,) = graphc.compile(model).run(data, indices, updates)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("equation, shapes", [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention scores
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("bcl,bcs->bls", [(2, 4, 3), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),  # implicit output, ellipsis
    ("bnhp,bnh->bnhp", [(2, 3, 4, 5), (2, 3, 4)]),  # no contraction: a broadcast product
    ("ij,kj->", [(3, 4), (5, 4)]),  # everything summed
    ("i,j->ij", [(3,), (4,)]),  # outer product
    ("blhn,bshn->bhls", [(1, 4, 2, 3), (1, 5, 2, 3)]),  # Mamba-2's C·B
    ("abc->ca", [(2, 3, 4)]),  # one operand: a sum and a transpose
    ("ij->", [(3, 4)]),
])
def test_einsum_matches_numpy(equation, shapes):
    rng = np.random.RandomState(2)
    xs = [rng.randn(*s).astype(np.float32) for s in shapes]
    names = [f"x{k}" for k in range(len(xs))]
    g = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation)], "einsum",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(x.shape)) for n, x in zip(names, xs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    (got,) = graphc.compile(model).run(*xs)
    expected = np.einsum(equation, *[x.astype(np.float64) for x in xs])
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("equation, shapes, why", [
    ("ii->i", [(3, 3)], "repeated in one operand"),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "more than two operands"),
    ("ij,ij->ij", [(3, 1), (3, 4)], "sizes of a label differ"),
])
def test_einsum_graphc_does_not_take_is_named(equation, shapes, why):
    names = [f"x{k}" for k in range(len(shapes))]
    g = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation)], "einsum",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(graphc.CompileError, match=why):
        graphc.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
