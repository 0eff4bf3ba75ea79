"""Results that update inputs in place (``-> (f32[4] updates %w)``): a run
writes the new value into the caller's array or tensor and returns that
very object; read-only inputs are refused; capture/replay update the bound
arrays on every replay; the reference device agrees with the cpu one."""

import numpy as np
import pytest
import torch

import graphc

SGD = """graph @sgd(%w: f32[B, 3], %m: f32[B, 3], %g: f32[B, 3]) -> (f32[B, 3] updates %w, f32[B, 3] updates %m, f32[]) {
  %mm = mul(%m, 0.9)
  %m2 = add(%mm, %g)
  %step = mul(%m2, 0.1)
  %w2 = sub(%w, %step)
  %n = sum(%w2)
  return %w2, %m2, %n
}
"""


def sgd_numpy(w, m, g):
    m = m * np.float32(0.9) + g
    w = w - np.float32(0.1) * m
    return w, m


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_run_updates_numpy_arrays_in_place(device):
    exe = graphc.compile(SGD, device=device)
    rng = np.random.default_rng(0)
    w, m, g = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3))
    want_w, want_m = w.copy(), m.copy()
    for _ in range(3):
        w_out, m_out, n = exe(w, m, g)
        want_w, want_m = sgd_numpy(want_w, want_m, g)
        assert w_out is w and m_out is m
        np.testing.assert_allclose(w, want_w, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(m, want_m, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(n, want_w.sum(), rtol=1e-5)


def test_run_updates_torch_tensors_in_place():
    exe = graphc.compile(SGD)
    w, m, g = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    ptr = w.data_ptr()
    want_w, want_m = sgd_numpy(w.numpy().copy(), m.numpy().copy(), g.numpy())
    w_out, m_out, _ = exe(w, m, g)
    assert w_out is w and m_out is m and w.data_ptr() == ptr
    torch.testing.assert_close(w, torch.from_numpy(want_w))
    torch.testing.assert_close(m, torch.from_numpy(want_m))


def test_a_read_only_updated_input_is_refused():
    exe = graphc.compile(SGD)
    w, m, g = (np.ones((2, 3), np.float32) for _ in range(3))
    w.flags.writeable = False
    with pytest.raises(ValueError, match=r"input 0 \('w'\) is read-only"):
        exe(w, m, g)
    g.flags.writeable = False  # an input no result updates may be read-only
    w.flags.writeable = True
    exe(w, m, g)


def test_an_updated_input_shared_with_another_is_refused():
    exe = graphc.compile(SGD)
    w, m = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    with pytest.raises(graphc.Error, match="is updated in place by result 0 and shares memory with input 2"):
        exe(w, m, w)


def test_capture_replay_updates_the_bound_arrays():
    exe = graphc.compile(SGD)
    rng = np.random.default_rng(1)
    w, m, g = (rng.standard_normal((3, 3)).astype(np.float32) for _ in range(3))
    n = np.zeros((), np.float32)
    want_w, want_m = w.copy(), m.copy()
    exe.capture([w, m, g], [w, m, n])
    for _ in range(2):
        exe.replay()
        want_w, want_m = sgd_numpy(want_w, want_m, g)
        np.testing.assert_allclose(w, want_w, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(m, want_m, rtol=1e-6, atol=1e-6)
    with pytest.raises(graphc.Error, match="output 0 updates input 0"):
        exe.capture([w, m, g], [w.copy(), m, n])


def test_updates_declared_at_compile():
    text = """graph @acc(%total: f32[3], %x: f32[3]) -> (f32[3]) {
  %t = add(%total, %x)
  return %t
}
"""
    graph = graphc.parse(text)
    assert graph.input_updates == {}
    updated = graph.with_input_updates({0: "total"})
    assert updated.input_updates == {0: "total"}
    assert "f32[3] updates %total" in updated.text()
    total, x = np.zeros(3, np.float32), np.arange(3, dtype=np.float32)
    exe = graphc.compile(text, updates={0: "total"})
    for _ in range(4):
        exe(total, x)
    np.testing.assert_array_equal(total, 4 * x)
    with pytest.raises(graphc.CompileError, match="the types must match"):
        graphc.compile("""graph @g(%w: f32[3], %x: f32[3]) -> (f32[]) {
  %s = sum(%x)
  return %s
}
""", updates={0: "w"})


# --- torch.compile: inputs the model mutates are written in place by graphc --------------

import graphc.dynamo  # noqa: E402


def compiled_record(fn, *args):
    graphc.dynamo.reset()
    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(fn, backend="graphc", dynamic=False, options={"check": True})(*args)
    return out, graphc.dynamo.logs.RECORDS[-1]


def matches_eager(cls, make_input, calls=3, **compile_options):
    """A fresh `cls` compiled with graphc against an eager copy of it over
    `calls` calls: equal outputs and buffers, each buffer in the memory it
    had; returns the compiled model and the last compile's record."""
    model, eager = cls(), cls()
    eager.load_state_dict(model.state_dict())
    pointers = [b.data_ptr() for b in model.buffers()]
    compiled = torch.compile(model, backend="graphc", **compile_options)
    graphc.dynamo.reset()
    torch._dynamo.reset()
    with torch.no_grad():
        for i in range(calls):
            args = make_input(i)
            torch.testing.assert_close(compiled(*args), eager(*args))
            for b, e in zip(model.buffers(), eager.buffers()):
                torch.testing.assert_close(b, e)
    assert [b.data_ptr() for b in model.buffers()] == pointers
    return model, graphc.dynamo.logs.RECORDS[-1]


class RunningSum(torch.nn.Module):
    """A buffer updated in place on every call, as BatchNorm's statistics."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4))
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        self.total.add_(x.sum(0))
        return self.linear(x) * self.total


def test_a_mutated_buffer_is_a_result_that_updates_it():
    model, record = matches_eager(RunningSum, lambda i: (torch.randn(2, 4),), options={"check": True})
    assert record.partitions == 1 and record.eager_ops == []
    assert "f32[4] updates %" in record.graphs[0]


class StaticCache(torch.nn.Module):
    """A decode step over a static KV cache (HF StaticCache's index_copy_)."""

    def __init__(self, length=64):
        super().__init__()
        self.register_buffer("keys", torch.zeros(1, 4, length, 16))

    def forward(self, k, position, q):
        self.keys.index_copy_(2, position, k)
        return torch.softmax(q @ self.keys.transpose(-1, -2), -1)


def test_a_static_cache_write_is_a_store_into_the_callers_buffer():
    model, eager = StaticCache(), StaticCache()
    ptr = model.keys.data_ptr()
    compiled = torch.compile(model, backend="graphc", dynamic=False, options={"check": True})
    graphc.dynamo.reset()
    torch._dynamo.reset()
    with torch.no_grad():
        for step in range(4):
            k, q = torch.randn(1, 4, 1, 16), torch.randn(1, 4, 1, 16)
            before = model.keys.clone()
            position = torch.tensor([step * 7])
            torch.testing.assert_close(compiled(k, position, q), eager(k, position, q))
            torch.testing.assert_close(model.keys, eager.keys)
            changed = (model.keys != before).any(dim=-1).any(dim=1)[0].nonzero().flatten().tolist()
            assert changed in ([], [step * 7])  # only the new position
    assert model.keys.data_ptr() == ptr
    record = graphc.dynamo.logs.RECORDS[-1]
    assert record.partitions == 1 and record.eager_ops == []
    text = record.graphs[0]
    # The scatter reads the cache input itself (no permuted copy), so the
    # plan stores the new row into the caller's buffer.
    cache = text[text.index("(%") + 1:text.index(":")]
    assert f"scatter_nd({cache}," in text, text


def test_a_copy_into_a_strided_input_stays_in_pytorch():
    def add_one(x):
        x.add_(1.0)
        return x.sum()

    x = torch.randn(4, 4).t()  # not contiguous: graphc would read a copy
    expected = x.clone() + 1
    out, record = compiled_record(add_one, x)
    torch.testing.assert_close(x, expected)
    torch.testing.assert_close(out, expected.sum())
    assert any("not contiguous" in reason for _, reason in record.eager_ops), record.eager_ops


class ReadByPyTorchAfterThePartition(torch.nn.Module):
    """PyTorch reads the buffer (cdist, which graphc leaves to it) with a
    value graphc computes: that read runs after graphc's partition, so the
    partition must not write the buffer in place."""

    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.randn(5, 3))

    def forward(self, x):
        a = x * 2
        d = torch.cdist(a, self.b)
        self.b.add_(x[:5])
        return d


def test_an_input_pytorch_reads_after_the_partition_is_not_written_in_it():
    matches_eager(ReadByPyTorchAfterThePartition, lambda i: (torch.randn(5, 3),), calls=2)


class ReadByPyTorchBesideThePartition(torch.nn.Module):
    """PyTorch reads the buffer (cdist) independently of graphc's partition,
    which also writes it: the read must still see the value before the
    write, wherever fusing put the partition's call."""

    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.randn(5, 3))

    def forward(self, x):
        a = torch.tanh(x) * 2
        d = torch.cdist(x, self.b)
        self.b.add_(x)
        return a, d


def test_an_input_pytorch_reads_beside_the_partition_is_read_before_the_write():
    _, record = matches_eager(ReadByPyTorchBesideThePartition, lambda i: (torch.randn(5, 3),), calls=2)
    assert any("updates %" in g for g in record.graphs), record.graphs


def test_fusing_order_is_mended_so_reads_come_before_the_write():
    """order_reads_before_input_writes on a fused graph whose call writing
    %b sits before an independent reader of %b: the reader moves first."""
    from graphc.dynamo.partition import order_reads_before_input_writes

    aten = torch.ops.aten
    inner = torch.fx.Graph()
    b, x = inner.placeholder("b"), inner.placeholder("x")
    y = inner.call_function(aten.add.Tensor, (x, 1.0))
    inner.call_function(aten.copy_.default, (b, y))
    inner.output((inner.call_function(aten.mul.Tensor, (x, 2.0)),))
    outer = torch.fx.Graph()
    ob, ox = outer.placeholder("b"), outer.placeholder("x")
    call = outer.call_module("fused_0", (ob, ox))
    read = outer.call_function(aten.sum.default, (ob,))
    outer.output((call, read))
    root = torch.nn.Module()
    root.fused_0 = torch.fx.GraphModule(torch.nn.Module(), inner)
    gm = torch.fx.GraphModule(root, outer)
    order_reads_before_input_writes(gm)
    names = [n.name for n in gm.graph.nodes]
    assert names.index(read.name) < names.index(call.name), names
    assert names[-1] == "output"
