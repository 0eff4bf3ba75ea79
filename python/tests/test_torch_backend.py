"""torch.compile(model, backend="graphc"): results match eager (rtol 1e-3,
atol 1e-4) with the partitions graphc compiled asserted; dynamic sizes
compile once; unsupported ops stay in PyTorch and say so; debug dumps; the
compile cache. (Training graphs: test_training.py.)"""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

import graphc.dynamo

RTOL, ATOL = 1e-3, 1e-4


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Attention(nn.Module):
    """A pre-norm self-attention block: layer norm, QKV projections,
    scaled dot-product attention with a mask, output projection, residual,
    a GELU MLP."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(self.norm2(x))


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: torch.relu(self.fc(x)), lambda x: torch.sigmoid(x) * 2.0, (x,))


def run_both(model, *args, **compile_kwargs):
    torch.manual_seed(0)
    with torch.no_grad():
        expected = model(*args)
        got = torch.compile(model, backend="graphc", **compile_kwargs)(*args)
    return got, expected


def graphc_records():
    return graphc.dynamo.compile_records()


def assert_one_partition():
    records = graphc_records()
    assert len(records) == 1, records
    assert records[0].partitions == 1 and not records[0].eager_ops and not records[0].failed_partitions, records[0]


def test_mlp_is_one_partition():
    got, expected = run_both(MLP().eval(), torch.randn(4, 16))
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    assert_one_partition()
    assert graphc_records()[0].graphc_ops >= 3


def test_attention_block_is_one_partition():
    mask = torch.zeros(2, 10)
    mask[1, 7:] = float("-inf")
    got, expected = run_both(Attention().eval(), torch.randn(2, 10, 32), mask)
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    assert_one_partition()


class Sdpa(nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v, mask):
        if self.causal:
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_is_one_attention_kernel(tmp_path, monkeypatch, causal):
    # torch's SDPA decomposes to bmm's and its safe softmax (rows of -inf
    # only give zeros, as eager's do): one attention kernel on the cpu.
    monkeypatch.setenv("GRAPHC_DEBUG_DIR", str(tmp_path))
    q, k, v = torch.randn(2, 4, 40, 16), torch.randn(2, 4, 40, 16), torch.randn(2, 4, 40, 16)
    mask = torch.zeros(2, 1, 40, 40)
    mask[1, :, 3, :] = float("-inf")  # a row with every key masked
    mask[0, :, :, 30:] = float("-inf")
    got, expected = run_both(Sdpa(causal).eval(), q, k, v, mask)
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    assert_one_partition()
    (dump,) = os.listdir(tmp_path)
    (fused,) = [f for f in os.listdir(tmp_path / dump) if f.endswith("_after_fuse-attention.graph")]
    text = (tmp_path / dump / fused).read_text()
    assert text.count('kind = "attention"') == 1, text


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_torch_cond_becomes_a_graphc_cond(sign):
    x = torch.rand(3, 8) * sign
    got, expected = run_both(Branchy().eval(), x)
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    assert_one_partition()
    (text,) = graphc_records()[0].graphs
    assert " = cond(" in text and "then(" in text and "else(" in text


def suite_models():
    import make_models

    return list(make_models.MODELS)


@pytest.mark.parametrize("name", suite_models())
def test_suite_model_matches_eager_in_one_partition(name):
    import make_models

    model, make_inputs, _ = make_models.build_module(name)
    args = make_inputs(2)
    got, expected = run_both(model, *args)
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    # A whole model, transformer layer stacks included, is one partition.
    assert_one_partition()


def test_dynamic_batch_compiles_once():
    model = MLP().eval()
    compiled = torch.compile(model, backend="graphc")
    with torch.no_grad():
        for batch in (2, 5, 9):
            x = torch.randn(batch, 16)
            torch._dynamo.mark_dynamic(x, 0)
            torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)
    (record,) = graphc_records()
    assert "%v3: f32[s" in record.graphs[0]  # the batch is a symbol, not the first call's 2


def test_dynamic_true_on_a_transformer_does_not_recompile():
    import make_models

    build, make_inputs, _ = make_models.MODELS["bert"]
    torch.manual_seed(0)
    model = build().eval()
    compiled = torch.compile(model, backend="graphc", dynamic=True)
    compiles = []
    with torch.no_grad():
        for batch in (2, 3, 5):  # (Dynamo specialises a size of 1)
            args = make_inputs(batch)
            torch.testing.assert_close(compiled(*args), model(*args), rtol=RTOL, atol=ATOL)
            compiles.append(len(graphc.dynamo.compile_records()))
    assert compiles[0] == compiles[1] == compiles[2] == 1
    # One graph, one partition, nothing left to PyTorch: a static slice of
    # a symbolic dim (the pooler's hidden_states[:, 0]), the position ids'
    # slice to the symbolic length, a size only a SymInt holds (an arange
    # over the batch). The embeddings' float attributes Dynamo first lifts
    # to inputs are specialised (see the next test).
    (record,) = graphc.dynamo.compile_records()
    assert record.partitions == 1 and not record.failed_partitions and not record.eager_ops, record


def test_one_graph_called_with_other_weights_refreezes():
    """Frozen weights are checked on each call: a second model instance
    reaches the same compiled code with its own weights."""
    first, second = MLP().eval(), MLP().eval()
    x = torch.randn(3, 16)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(first, backend="graphc")(x), first(x), rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(torch.compile(second, backend="graphc")(x), second(x), rtol=RTOL, atol=ATOL)
        first.fc1.bias.add_(1.0)  # changed in place: its version moves on
        torch.testing.assert_close(torch.compile(first, backend="graphc")(x), first(x), rtol=RTOL, atol=ATOL)


WRITES_BEHIND_TORCHS_BACK = {
    "copy_ under no_grad": lambda lin: lin.weight.copy_(lin.weight * 2),
    ".data.mul_": lambda lin: lin.weight.data.mul_(2),
    ".data = another tensor": lambda lin: setattr(lin.weight, "data", torch.randn(8, 8)),
    "a NumPy view": lambda lin: lin.weight.detach().numpy().__setitem__(slice(None), 0.5),
    ".data of a bias": lambda lin: lin.bias.data.add_(1.0),
}


@pytest.mark.parametrize("how", sorted(WRITES_BEHIND_TORCHS_BACK))
def test_frozen_weights_written_behind_torchs_back_are_seen(how):
    """A weight updated through .data or a NumPy view keeps its identity
    and version; the frozen executable must not keep computing with the
    old values."""
    lin = nn.Linear(8, 8).eval()
    compiled = torch.compile(lin, backend="graphc")
    x = torch.randn(2, 8)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), lin(x), rtol=RTOL, atol=ATOL)
        WRITES_BEHIND_TORCHS_BACK[how](lin)
        torch.testing.assert_close(compiled(x), lin(x), rtol=RTOL, atol=ATOL)
        WRITES_BEHIND_TORCHS_BACK[how](lin)  # and again, past the cache of the first rewrite
        torch.testing.assert_close(compiled(x), lin(x), rtol=RTOL, atol=ATOL)


def test_weights_rewritten_on_every_call_end_up_passed_as_inputs(capfd, monkeypatch):
    """A loop that writes the weights through .data each step (an
    old-style optimizer) is frozen again a few times, then gets the
    executable that takes the weights as inputs, and stays correct."""
    monkeypatch.setenv("GRAPHC_LOGS", "recompiles")
    lin = nn.Linear(8, 8).eval()
    compiled = torch.compile(lin, backend="graphc")
    x = torch.randn(2, 8)
    with torch.no_grad():
        for step in range(12):
            lin.weight.data.add_(0.25)
            torch.testing.assert_close(compiled(x), lin(x), rtol=RTOL, atol=ATOL)
    err = capfd.readouterr().err
    assert err.count("written in place without a version bump") == 8
    assert "passed on every call from now on" in err


class WithUnsupported(nn.Module):
    def forward(self, x):
        y = torch.relu(x) * 2
        z = torch.fft.rfft(y).abs()  # no graphc op: stays in PyTorch
        return torch.tanh(z) + 1


def test_graph_breaks_are_logged_and_run_in_pytorch(capfd, monkeypatch):
    monkeypatch.setenv("GRAPHC_LOGS", "graph_breaks")
    got, expected = run_both(WithUnsupported().eval(), torch.randn(4, 8))
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    record = graphc_records()[0]
    assert record.partitions == 2
    assert any("fft" in op for op, _ in record.eager_ops)
    err = capfd.readouterr().err
    assert "runs in PyTorch" in err and "fft" in err


def test_debug_dir_holds_the_fx_graphs_and_every_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHC_DEBUG_DIR", str(tmp_path))
    run_both(MLP().eval(), torch.randn(4, 16))
    (dump,) = os.listdir(tmp_path)
    files = set(os.listdir(tmp_path / dump))
    assert {"fx_graph.py", "aten_graph.py", "fx_partition.py", "00_captured.graph", "timing.txt"} <= files
    assert any(f.endswith("_after_fuse.graph") for f in files) and "kernels" in files
    assert "aten.addmm" in (tmp_path / dump / "aten_graph.py").read_text()


def test_a_second_compile_of_the_same_graph_hits_the_cache():
    model, x = MLP().eval(), torch.randn(4, 16)
    run_both(model, x)
    torch._dynamo.reset()
    run_both(model, x)
    records = graphc_records()
    assert [r.cache_hits for r in records] == [0, 1]


def test_freezing_off_passes_weights_each_call():
    model, x = MLP().eval(), torch.randn(4, 16)
    compiled = torch.compile(model, backend="graphc", options={"freezing": False})
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)
        model.fc2.bias.add_(1.0)  # seen: the weights are inputs, not constants
        torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)


def test_unknown_option_is_an_error():
    with pytest.raises(Exception, match="unknown option"):
        run_both(MLP().eval(), torch.randn(2, 16), options={"fast": True})


def test_backend_name_comes_from_the_entry_point():
    """A fresh process that never imports graphc finds backend="graphc"
    through the torch_dynamo_backends entry point."""
    code = ("import torch\n"
            "m = torch.nn.Linear(4, 2).eval()\n"
            "x = torch.randn(3, 4)\n"
            "with torch.no_grad():\n"
            "    assert torch.allclose(torch.compile(m, backend='graphc')(x), m(x), atol=1e-5)\n"
            "import sys; assert 'graphc.dynamo' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())


class PoolWithIndices(nn.Module):
    def forward(self, x):
        y, indices = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
        return torch.relu(y) + 1, indices


def test_an_output_graphc_does_not_compute_leaves_its_op_to_pytorch():
    x = torch.randn(1, 2, 4, 4)
    with torch.no_grad():
        (y, i), (ey, ei) = torch.compile(PoolWithIndices(), backend="graphc")(x), PoolWithIndices()(x)
    torch.testing.assert_close(y, ey)
    assert torch.equal(i, ei)
    (record,) = graphc_records()
    assert record.partitions == 1 and not record.failed_partitions
    assert any("max_pool2d_with_indices" in op for op, _ in record.eager_ops)


def test_a_module_float_is_a_constant_dynamo_guards():
    """With dynamic shapes Dynamo first lifts a transformers LayerNorm's eps
    to a 0-dim tensor input; AOTAutograd has it trace again with the value
    specialised, so graphc compiles it in and Dynamo's guard sends a call
    with another value to a new compile, whose result is eager's."""
    import make_models

    model, make_inputs, _ = make_models.build_module("bert")
    compiled = torch.compile(model, backend="graphc", dynamic=True)
    args = make_inputs(2)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*args), model(*args), rtol=RTOL, atol=ATOL)
        before = model(*args)
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.eps = 0.5
        after = model(*args)
        assert not torch.allclose(before, after, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(compiled(*args), after, rtol=RTOL, atol=ATOL)
    assert len(graphc_records()) == 2
    assert all(r.partitions == 1 and not r.eager_ops for r in graphc_records())


THREADS_SCRIPT = r"""
import hashlib, sys, torch, torch.nn as nn
import graphc.dynamo
from graphc.dynamo import backend
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256), nn.LayerNorm(256)).eval()
x = torch.randn(64, 256)
with torch.no_grad():
    want = model(x)
    got = torch.compile(model, backend="graphc")(x)
torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-4)
print(backend._shared_threads)
print(hashlib.sha256(got.numpy().tobytes()).hexdigest())
"""


def test_runs_on_pytorchs_openmp_team_to_the_same_bits():
    """The backend moves graphc's loops onto PyTorch's libgomp team (unless
    GRAPHC_OWN_THREADS=1); the results are bit for bit those of graphc's
    own threads. Fresh processes: the choice is made once per process."""
    runs = {}
    for own in ("0", "1"):
        env = dict(os.environ, GRAPHC_OWN_THREADS=own, GRAPHC_NUM_THREADS="2")
        out = subprocess.run([sys.executable, "-c", THREADS_SCRIPT], env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        runs[own] = out.stdout.rstrip("\n").split("\n")[-2:]
    assert "libgomp" in runs["0"][0], runs["0"]
    assert runs["1"][0] == "", runs["1"]
    assert runs["0"][1] == runs["1"][1], "the team's results differ from graphc's own threads'"
