"""torch.compile(backend="graphc") keeps eager's mutation and aliasing
semantics: every view op × every in-place op, on a fresh tensor, a graph
input and a module buffer, gives eager's outputs and leaves the mutated
tensors as eager leaves them (AOTAutograd functionalises the whole graph
before graphc partitions it), whole in graphc; outputs alias each other
and the inputs as eager's do; the check mode finds a wrong partition and
names it. The reproducers of the Swin wrong result (a mask built through
slice writes) and of the lost view writes are here as regressions."""

import os

import numpy as np
import pytest
import torch
import torch.nn as nn

import graphc
import graphc.dynamo

RTOL, ATOL = 1e-3, 1e-4

# Views of a [4, 6] tensor, each a function of it.
VIEWS = {
    "slice": lambda t: t[1:3, 2:5],
    "step_slice": lambda t: t[::2, 1::2],
    "select": lambda t: t[2],
    "narrow": lambda t: t.narrow(1, 1, 3),
    "diagonal": lambda t: t.diagonal(),
    "offset_diagonal": lambda t: t.diagonal(1),
    "view": lambda t: t.view(2, 12),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "transpose": lambda t: t.t(),
    "permute": lambda t: t.permute(1, 0),
    "column": lambda t: t[:, 3],
    "negative_index": lambda t: t[-1, -2:],
}

# In-place ops on a view v (of any shape), each a function of it.
INPLACE = {
    "add_": lambda v: v.add_(1.5),
    "mul_": lambda v: v.mul_(-2.0),
    "copy_": lambda v: v.copy_(torch.full_like(v, 7.0)),
    "fill_": lambda v: v.fill_(3.0),
    "zero_": lambda v: v.zero_(),
    "clamp_": lambda v: v.clamp_(min=0.25),
    "setitem": lambda v: v.__setitem__(..., 4.0),
    "index_put_": lambda v: v.__setitem__((torch.tensor([0]),), -1.0),
}


def compile_and_compare(fn, make_args, whole=True):
    """fn on fresh arguments in eager and compiled: the outputs and the
    arguments afterwards equal; returns the compile records."""
    graphc.dynamo.reset()
    torch._dynamo.reset()
    eager_args, graphc_args = make_args(), make_args()
    with torch.no_grad():
        expected = fn(*eager_args)
        got = torch.compile(fn, backend="graphc", options={"check": True})(*graphc_args)
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    for e, g in zip(eager_args, graphc_args):
        if isinstance(e, torch.Tensor):
            torch.testing.assert_close(g, e, rtol=RTOL, atol=ATOL)
    records = graphc.dynamo.compile_records()
    if whole:
        assert records and all(not r.eager_ops and not r.failed_partitions for r in records), records
    return records


@pytest.mark.parametrize("op", sorted(INPLACE))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_a_write_through_a_view_of_a_fresh_tensor_reaches_its_base(view, op):
    def fn(x):
        m = x * 2.0 + 1.0
        INPLACE[op](VIEWS[view](m))
        return m + x, m.sum(0)

    compile_and_compare(fn, lambda: (torch.arange(24.0).reshape(4, 6) / 7.0,))


@pytest.mark.parametrize("op", sorted(INPLACE))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_a_write_through_a_view_of_an_input_reaches_the_caller(view, op):
    def fn(x, y):
        INPLACE[op](VIEWS[view](x))
        return x * y

    compile_and_compare(fn, lambda: (torch.arange(24.0).reshape(4, 6) / 5.0, torch.full((4, 6), 0.5)))


class Buffered(nn.Module):
    """A module whose buffer is written through a view on each call (an LLM's
    KV cache, a running statistic)."""

    def __init__(self, view, op):
        super().__init__()
        self.view, self.op = view, op
        self.register_buffer("state", torch.arange(24.0).reshape(4, 6) / 3.0)
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        INPLACE[self.op](VIEWS[self.view](self.state))
        return self.fc(x + self.state)


@pytest.mark.parametrize("op", ["add_", "copy_", "setitem"])
@pytest.mark.parametrize("view", ["slice", "select", "diagonal", "view"])
def test_a_module_buffer_written_through_a_view_stays_eagers(view, op):
    torch.manual_seed(0)
    eager, compiled_model = Buffered(view, op).eval(), Buffered(view, op).eval()
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model, backend="graphc", options={"check": True})
    x = torch.randn(4, 6)
    with torch.no_grad():
        for _ in range(3):  # the buffer is a graph input, never a frozen constant: each call sees the last write
            torch.testing.assert_close(compiled(x), eager(x), rtol=RTOL, atol=ATOL)
            torch.testing.assert_close(compiled_model.state, eager.state, rtol=RTOL, atol=ATOL)
    records = graphc.dynamo.compile_records()
    assert all(not r.eager_ops and not r.failed_partitions for r in records), records


def swin_attention_mask(x):
    """torchvision's shifted-window attention mask, as it builds it: a
    fresh tensor written slice by slice (the Swin wrong result)."""
    mask = x.new_zeros((14, 14))
    count = 0
    for h in ((0, -7), (-7, -3), (-3, None)):
        for w in ((0, -7), (-7, -3), (-3, None)):
            mask[h[0]:h[1], w[0]:w[1]] = count
            count += 1
    mask = mask.view(2, 7, 2, 7).permute(0, 2, 1, 3).reshape(4, 49)
    mask = mask.unsqueeze(1) - mask.unsqueeze(2)
    return x + mask.masked_fill(mask != 0, -100.0)


def test_the_swin_attention_mask_is_eagers():
    compile_and_compare(swin_attention_mask, lambda: (torch.randn(2, 4, 49, 49, generator=torch.Generator().manual_seed(0)),))


def test_outputs_alias_each_other_and_the_inputs_as_in_eager():
    def fn(x):
        y = torch.relu(x)
        return y, y.view(2, 2), x[1:], x * 2

    x = torch.randn(4)
    with torch.no_grad():
        y, view, tail, double = torch.compile(fn, backend="graphc")(x)
    assert view.data_ptr() == y.data_ptr() and tail.data_ptr() == x.data_ptr() + 4
    y.zero_()
    x.fill_(9.0)
    assert view.abs().sum() == 0 and torch.equal(tail, torch.full((3,), 9.0))
    assert not torch.equal(double, x * 2)  # a computed output is its own tensor
    (record,) = graphc.dynamo.compile_records()
    assert record.partitions == 1 and not record.eager_ops


def test_a_view_an_output_and_an_op_both_read_stays_one_partition():
    def fn(x, w):
        h = (x @ w).view(2, 3, 4)
        return h, torch.tanh(h) + 1

    x, w = torch.randn(6, 5), torch.randn(5, 4)
    with torch.no_grad():
        h, t = torch.compile(fn, backend="graphc")(x, w)
    torch.testing.assert_close(h, (x @ w).view(2, 3, 4), rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(t, torch.tanh(h) + 1, rtol=RTOL, atol=ATOL)
    (record,) = graphc.dynamo.compile_records()
    assert record.partitions == 1 and not record.eager_ops


def test_an_input_mutation_and_an_intermediate_view_write_in_one_graph():
    def fn(x, cache):
        cache[:, 1:3] = x  # a KV-cache write into a caller's tensor
        y = cache.clone()
        y[0] += 10.0
        return y.sum(1), cache[:, 2]

    compile_and_compare(fn, lambda: (torch.ones(3, 2), torch.zeros(3, 5)))


def test_the_check_mode_names_a_partition_that_differs(monkeypatch, tmp_path):
    """A partition whose graphc result is made wrong on purpose: the check
    mode raises CheckError naming it and a folder that reproduces it."""
    import graphc.dynamo.partition as partition

    real_call = partition.PartitionProgram.call

    def off_by_a_little(self, exe, tensors):
        return [o + 0.01 for o in real_call(self, exe, tensors)]

    monkeypatch.setattr(partition.PartitionProgram, "call", off_by_a_little)
    monkeypatch.setenv("GRAPHC_CHECK", "1")
    x = torch.randn(3, 4)
    with torch.no_grad(), pytest.raises(graphc.CheckError) as caught:
        torch.compile(lambda t: torch.sigmoid(t) * 3, backend="graphc")(x)
    error = caught.value
    assert error.partition.startswith("g") and error.partition in str(error)
    assert "differs from eager PyTorch" in str(error) and "output 0" in str(error)
    files = set(os.listdir(error.folder))
    assert {"partition.graph", "fx_partition.py", "input0.npy", "eager0.npy", "graphc0.npy"} <= files
    assert np.abs(np.load(os.path.join(error.folder, "graphc0.npy")) -
                  np.load(os.path.join(error.folder, "eager0.npy"))).max() == pytest.approx(0.01, abs=1e-6)


def test_the_check_mode_judges_a_difference_against_float64():
    """(x + 1e8) - 1e8 in f32 rounds x to a multiple of 8: eager is itself
    up to 4 from the exact x. A result as close to float64 as eager's (here
    exact) is not a wrong result; one twice as far as eager's is."""
    from graphc.dynamo import check

    reference = torch.fx.symbolic_trace(lambda x: (x + 1e8) - 1e8)
    x = torch.rand(64) * 4
    eager = reference(x)
    assert (eager - x).abs().max() > 1.0  # beyond any f32 tolerance
    check.compare("g0", reference, "", None, [x], [x.clone()])  # exact: accepted
    worst = float((eager.double() - x.double()).abs().max())
    with pytest.raises(graphc.CheckError, match="output 0"):
        check.compare("g0", reference, "", None, [x], [eager + 2.5 * worst])


def test_the_check_mode_passes_what_matches(monkeypatch):
    monkeypatch.setenv("GRAPHC_CHECK", "1")
    x = torch.randn(3, 4)
    with torch.no_grad():
        got = torch.compile(lambda t: torch.sigmoid(t) * 3, backend="graphc")(x)
    torch.testing.assert_close(got, torch.sigmoid(x) * 3, rtol=RTOL, atol=ATOL)


def overlapping_chunks(x, w):
    """Longformer's _chunk: windows that overlap by half, made by as_strided
    from the strides the tensor has in eager — here a transposed view, so
    graphc must not hand PyTorch a dense copy of it in their place."""
    q = (x @ w).transpose(0, 1)  # [2, 8, 16], strides (16, 32, 1) in eager
    size = (q.shape[0], 3, 4, q.shape[2])
    stride = (q.stride(0), 2 * q.stride(1), q.stride(1), q.stride(2))
    return torch.tanh(q.as_strided(size, stride)) * 2


def test_as_strided_left_to_pytorch_reads_eagers_storage():
    def make_args():
        g = torch.Generator().manual_seed(0)
        return torch.randn(8, 2, 16, generator=g), torch.randn(16, 16, generator=g)

    records = compile_and_compare(overlapping_chunks, make_args, whole=False)
    ops = {op for r in records for op, _ in r.eager_ops}
    assert ops == {"aten.as_strided.default", "aten.permute.default"}, ops  # the transpose too
    assert any(r.partitions for r in records)  # the matmul and the tanh still run in graphc


def test_a_returned_view_replayed_on_a_base_eager_lays_out_otherwise():
    """Longformer's scores: an op on a permuted tensor is laid out permuted
    in eager, and the graph returns a `view` of it permuted back, which only
    that layout allows. PyTorch replays returned views, so it computes that
    base too: on graphc's dense buffer the view would be refused."""
    def fn(x):
        a = x.permute(0, 2, 1, 3) + 1  # strides follow the permuted input
        return a.permute(0, 2, 1, 3).view(-1, x.shape[-1]), torch.tanh(x).sum()

    records = compile_and_compare(fn, lambda: (torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(0)),),
                                  whole=False)
    assert any(r.partitions for r in records)
