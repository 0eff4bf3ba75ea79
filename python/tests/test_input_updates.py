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
