"""The graphc package: compile from text, files and ONNX; run on NumPy
arrays and torch tensors without copies; capture/replay; located errors."""

import os

import numpy as np
import pytest
import torch

import graphc

RELU = """graph @relu(%x: f32[B, 4]) -> (f32[B, 4]) {
  %y = relu(%x)
  return %y
}
"""

AFFINE = """graph @affine(%x: f32[B, 4], %w: f32[4, 4], %b: f32[4]) -> (f32[B, 4]) {
  %y = linear(%x, %w, %b)
  return %y
}
"""


def test_compile_text_and_run_numpy():
    exe = graphc.compile(RELU)
    x = np.array([[-1, 2, -3, 4]], dtype=np.float32)
    y = exe(x)
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert exe.input_names == ["x"]
    assert exe.device == "cpu"


def test_compile_file_and_onnx(examples, tmp_path):
    exe = graphc.compile(os.path.join(examples, "mlp.graph"))
    assert exe.input_names == ["x", "w1", "b1", "w2", "b2"]
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "relu.onnx"
    onnx.save(model, str(path))
    x = np.array([[-1, 0, 2]], dtype=np.float32)
    np.testing.assert_array_equal(graphc.compile(path)(x), [[0, 0, 2]])
    np.testing.assert_array_equal(graphc.compile(model)(x), [[0, 0, 2]])  # a ModelProto


def test_torch_in_torch_out_and_reference_device():
    w = torch.randn(4, 4)
    b = torch.randn(4)
    x = torch.randn(3, 4)
    for device in ("cpu", "reference"):
        y = graphc.compile(AFFINE, device=device)(x, w, b)
        assert isinstance(y, torch.Tensor)
        torch.testing.assert_close(y, torch.nn.functional.linear(x, w, b), rtol=1e-5, atol=1e-5)


def test_keyword_inputs_and_several_outputs():
    exe = graphc.compile("""graph @two(%a: f32[2], %b: f32[2]) -> (f32[2], f32[2]) {
  %s = add(%a, %b)
  %d = sub(%a, %b)
  return %s, %d
}
""")
    a, b = np.array([1, 2], np.float32), np.array([3, 5], np.float32)
    s, d = exe(b=b, a=a)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(d, a - b)
    assert [list(v) for v in exe.run(a, b)] == [list(a + b), list(a - b)]


def test_outputs_own_graphc_buffers_without_copies():
    exe = graphc.compile(RELU)
    y = exe(np.ones((2, 4), np.float32))
    # The array is a view of graphc's output buffer (kept alive by it), not
    # a NumPy copy of it.
    assert not y.flags.owndata and y.base is not None and y.flags.writeable
    t = exe(torch.ones(2, 4))
    assert torch.from_dlpack(t).data_ptr() == t.data_ptr()


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_capture_replay_reads_and_writes_callers_memory(framework):
    exe = graphc.compile(RELU)
    if framework == "numpy":
        x, y = np.array([[-1, 2, -3, 4]], np.float32), np.zeros((1, 4), np.float32)
        pointers = (x.ctypes.data, y.ctypes.data)
        address = lambda a: a.ctypes.data  # noqa: E731
    else:
        x, y = torch.tensor([[-1.0, 2, -3, 4]]), torch.zeros(1, 4)
        pointers = (x.data_ptr(), y.data_ptr())
        address = lambda a: a.data_ptr()  # noqa: E731
    exe.capture([x], [y])
    exe.replay()
    assert list(map(float, y[0])) == [0, 2, 0, 4]
    x[0, 0] = 7  # changed in place: the next replay reads it there
    exe.replay()
    assert (address(x), address(y)) == pointers
    assert list(map(float, y[0])) == [7, 2, 0, 4]


def test_replay_before_capture_is_an_error():
    with pytest.raises(ValueError, match="capture"):
        graphc.compile(RELU).replay()


EXP = "graph @g(%x: f32[N]) -> (f32[N]) {\n  %y = exp(%x)\n  return %y\n}\n"


def test_capture_refuses_read_only_outputs(tmp_path):
    """An immutable buffer or a read-only mapping as an output is refused;
    replay() would write into it (and crash on the mapping)."""
    exe = graphc.compile(EXP)
    x = np.zeros(4, np.float32)
    frozen = b"\0" * 16
    with pytest.raises(ValueError, match="output 0 is read-only"):
        exe.capture([x], [np.frombuffer(frozen, dtype=np.float32)])
    assert frozen == b"\0" * 16
    path = tmp_path / "ro.npy"
    np.save(path, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="output 0 is read-only"):
        exe.capture([x], [np.load(path, mmap_mode="r")])
    flagged = np.zeros(4, np.float32)
    flagged.flags.writeable = False
    with pytest.raises(ValueError, match="output 0 is read-only"):
        exe.capture([x], [flagged])
    readonly_input = np.ones(4, np.float32)
    readonly_input.flags.writeable = False
    y = np.zeros(4, np.float32)
    exe.capture([readonly_input], [y])  # inputs are only read
    exe.replay()
    np.testing.assert_allclose(y, np.exp(1.0), rtol=1e-6)


@pytest.mark.parametrize("how", ["resize_", "set_", "data", "shape"])
@pytest.mark.parametrize("which", ["input", "output"])
def test_replay_refuses_arrays_moved_since_capture(how, which):
    """A captured tensor resized or re-pointed after capture() no longer
    holds the memory the executable would read or write: replay() says so
    instead of touching freed memory."""
    exe = graphc.compile(EXP)
    x, y = torch.zeros(1 << 20), torch.zeros(1 << 20)
    exe.capture([x], [y])
    exe.replay()
    t = x if which == "input" else y
    if how == "resize_":
        t.resize_(1 << 22)
    elif how == "set_":
        t.set_(torch.zeros(1 << 20))
    elif how == "data":
        t.data = torch.zeros(1 << 20)
    else:
        t.resize_(1 << 10)  # smaller: same memory, another shape
    with pytest.raises(ValueError, match=f"captured {which} 0 no longer holds the memory"):
        exe.replay()
    x, y = torch.rand(1 << 20), torch.zeros(1 << 20)
    exe.capture([x], [y])  # captured again, it runs
    exe.replay()
    assert torch.allclose(y, torch.exp(x))


# About a second of work (2^31 cosines and sines) in one run, which
# cancellation stops after a fraction of it.
SLOW = """graph @g(%x: f32[262144, 1], %y: f32[1, 8192]) -> (f32[262144]) {
  %a = add(%x, %y)
  %c = cos(%a)
  %s = sin(%c)
  %r = sum(%s) {dims = [1]}
  return %r
}
"""
SLOW_INPUTS = "np.ones((262144, 1), np.float32), np.ones((1, 8192), np.float32)"
# The same work summed whole: one output, whose 2^31 elements the
# split-reduction pass cuts into rows.
SLOW_WHOLE = SLOW.replace("f32[262144])", "f32[])").replace("%r = sum(%s) {dims = [1]}", "%r = sum(%s)")


def test_a_run_is_cancelled_through_its_token_from_another_thread():
    import threading
    import time

    exe = graphc.compile(SLOW)
    x, y = eval(SLOW_INPUTS)
    start = time.perf_counter()
    expected = exe(x, y)
    once = time.perf_counter() - start
    token = graphc.CancelToken()
    assert not token.cancelled
    token.cancel()
    with pytest.raises(graphc.Cancelled):
        exe(x, y, cancel=token)
    assert token.cancelled
    # Set while the run is going, the token stops it early.
    token = graphc.CancelToken()
    threading.Timer(once / 5, token.cancel).start()
    start = time.perf_counter()
    with pytest.raises(graphc.Cancelled):
        exe(x, y, cancel=token)
    assert time.perf_counter() - start < once * 0.6, (time.perf_counter() - start, once)
    out = np.zeros(262144, np.float32)
    exe.capture([x, y], [out])
    with pytest.raises(graphc.Cancelled):
        exe.replay(cancel=token)
    exe.replay()  # without the token it runs
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("graph", [SLOW, SLOW_WHOLE], ids=["rows", "whole"])
def test_ctrl_c_stops_a_run_on_the_main_thread(graph):
    """SIGINT during a long run raises KeyboardInterrupt within a piece of
    bounded work, not when the run would have finished."""
    import signal
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import os, signal, threading, time
        import numpy as np, graphc
        exe = graphc.compile({graph!r})
        x, y = {SLOW_INPUTS}
        start = time.perf_counter(); exe(x, y); once = time.perf_counter() - start
        threading.Timer(once / 5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        start = time.perf_counter()
        try:
            exe(x, y)
            print("not interrupted", time.perf_counter() - start, once)
        except KeyboardInterrupt:
            print("interrupted", time.perf_counter() - start, once)
        exe(x, y)  # the next run is not cancelled
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("interrupted"), done.stdout + done.stderr
    after, once = map(float, done.stdout.split()[1:3])
    assert after < once * 0.6, (after, once)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# A 20,000-node pointwise chain: a compile that spends about a second in
# the passes, long enough to be stopped part-way.
LONG_COMPILE = "graph @g(%v0: f32[N]) -> (f32[N]) {\n" + "".join(
    f"  %v{i} = {('tanh(%v{})', 'mul(%v{}, 1.0001)', 'add(%v{}, 0.5)')[i % 3].format(i - 1)}\n"
    for i in range(1, 20001)) + "  return %v20000\n}\n"


def test_a_compile_is_cancelled_through_its_token_from_another_thread():
    import threading
    import time

    token = graphc.CancelToken()
    token.cancel()
    with pytest.raises(graphc.Cancelled, match="the compile was cancelled"):
        graphc.compile(RELU, cancel=token)
    start = time.perf_counter()
    exe = graphc.compile(LONG_COMPILE)
    once = time.perf_counter() - start
    np.testing.assert_allclose(exe(np.zeros(3, np.float32))[0], exe(np.zeros(3, np.float32))[0])
    # Set while the compile is going, the token stops it between passes.
    token = graphc.CancelToken()
    threading.Timer(once / 5, token.cancel).start()
    start = time.perf_counter()
    with pytest.raises(graphc.Cancelled, match="the compile was cancelled"):
        graphc.compile(LONG_COMPILE, cancel=token)
    assert time.perf_counter() - start < once * 0.8, (time.perf_counter() - start, once)


def test_ctrl_c_stops_a_compile_on_the_main_thread():
    import signal
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import os, signal, threading, time
        import graphc
        text = {LONG_COMPILE!r}
        start = time.perf_counter(); graphc.compile(text); once = time.perf_counter() - start
        threading.Timer(once / 5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        start = time.perf_counter()
        try:
            graphc.compile(text)
            print("not interrupted", time.perf_counter() - start, once)
        except KeyboardInterrupt:
            print("interrupted", time.perf_counter() - start, once)
        graphc.compile("graph @f(%x: f32[4]) -> (f32[4]) {{\\n  %y = relu(%x)\\n  return %y\\n}}\\n")
    """)
    # The script (a megabyte with the graph) goes through stdin, past the
    # limit on an argument's length.
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("interrupted"), done.stdout + done.stderr
    after, once = map(float, done.stdout.split()[1:3])
    assert after < once * 0.8, (after, once)


def test_compile_error_carries_file_line_column(tmp_path):
    with pytest.raises(graphc.CompileError) as e:
        graphc.compile("graph @f(%x: f32[4]) -> (f32[4]) {\n  %y = foo(%x)\n  return %y\n}\n")
    assert (e.value.file, e.value.line, e.value.column) == ("<string>", 2, 8)
    assert "unknown op 'foo'" in str(e.value)
    path = tmp_path / "bad.graph"
    path.write_text("graph @f(%x: f32[4]) -> (f32[4]) {\n  return %z\n}\n")
    with pytest.raises(graphc.CompileError) as e:
        graphc.compile(path)
    d = e.value.diagnostics[0]
    assert d.file == str(path) and d.line == 2 and d.severity == "error"
    assert str(e.value).startswith(f"{path}:2:")


def test_bad_inputs_are_clear_errors():
    exe = graphc.compile(RELU)
    with pytest.raises(graphc.Error, match="input %x"):
        exe(np.ones((2, 4), np.float64))
    with pytest.raises(ValueError, match="not C-contiguous"):
        exe(np.ones((4, 2), np.float32).T)
    with pytest.raises(TypeError, match="not an array"):
        exe("x")
    with pytest.raises(TypeError, match="takes 1 inputs, 2 were given"):
        exe(np.ones((1, 4), np.float32), np.ones((1, 4), np.float32))
    with pytest.raises(TypeError, match="no input named 'q'"):
        exe(q=np.ones((1, 4), np.float32))
    with pytest.raises(TypeError, match="dtype graphc does not have"):
        exe(np.ones((1, 4), np.complex64))
    with pytest.raises(ValueError, match="unknown device"):
        graphc.compile(RELU, device="tpu")


def test_refused_arrays_say_why():
    exe = graphc.compile(RELU)
    # Another byte order than the machine's: named, with the fix.
    with pytest.raises(ValueError, match=r"big-endian \(>f4\).*astype\('<f4'\)"):
        exe(np.ones((1, 4), ">f4"))

    class Locked:  # a producer whose __dlpack__ fails
        def __dlpack__(self, *args, **kwargs):
            raise RuntimeError("buffer is locked by another stream")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="its __dlpack__ raised") as e:
        exe(Locked())
    assert isinstance(e.value.__cause__, RuntimeError) and "locked" in str(e.value.__cause__)


def test_model_proto_with_external_data_not_loaded_says_so(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper
    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 64])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 64])
    model = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w]))
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="model.onnx.data",
              size_threshold=0)
    proto = onnx.load(str(path), load_external_data=False)
    with pytest.raises(ValueError, match="external data.*'w'.*pass the model's path"):
        graphc.compile(proto)
    # The path works, and so does the proto with its data loaded.
    want = np.ones((2, 64), np.float32) @ numpy_helper.to_array(w)
    for source in (path, onnx.load(str(path))):
        np.testing.assert_allclose(graphc.compile(source)(np.ones((2, 64), np.float32)), want, rtol=1e-5)


def test_constants_freeze_inputs():
    w, b = np.eye(4, dtype=np.float32) * 2, np.arange(4, dtype=np.float32)
    exe = graphc.compile(AFFINE, constants={"w": w, "b": b})
    assert exe.input_names == ["x"]
    w[:] = 0  # copied at compile time: the caller's array stays theirs
    np.testing.assert_array_equal(exe(np.ones((2, 4), np.float32)), np.ones((2, 4)) * 2 + b)
    with pytest.raises(graphc.Error, match="no parameter %q"):
        graphc.compile(AFFINE, constants={"q": w})
    with pytest.raises(graphc.Error, match="the constant given for it is f32\\[2\\]"):
        graphc.compile(AFFINE, constants={"b": np.ones(2, np.float32)})


def test_dynamic_dims_unpin_a_static_size():
    static = RELU.replace("B, 4", "2, 4")
    with pytest.raises(graphc.Error):
        graphc.compile(static)(np.ones((3, 4), np.float32))
    exe = graphc.compile(static, dynamic={"x": {0: "N"}})
    for n in (1, 3, 7):
        assert exe(np.ones((n, 4), np.float32)).shape == (n, 4)
    assert exe.optimized.inputs == [("x", "float32", ("N", 4))]
    with pytest.raises(graphc.Error, match="no dim 5"):
        graphc.compile(static, dynamic={"x": {5: "N"}})


def test_ir_prints_as_graph_text_that_parses_back(examples):
    g = graphc.load(os.path.join(examples, "mlp.graph"))
    text = g.text()
    assert text.startswith("graph @mlp(")
    assert graphc.parse(text).text() == text
    assert g.inputs[0] == ("x", "float32", ("B", 16))
    exe = graphc.compile(g)
    assert "fused" in exe.optimized.text() and exe.describe()
    assert any(name.startswith("pass ") for name, _, _ in exe.report())


def test_debug_dump_dir(tmp_path):
    exe = graphc.compile(RELU, dump_dir=tmp_path)
    assert exe.dump_dir.startswith(str(tmp_path))
    assert os.path.exists(os.path.join(exe.dump_dir, "00_captured.graph"))


def test_version():
    assert graphc.__version__ == "0.1.0"
