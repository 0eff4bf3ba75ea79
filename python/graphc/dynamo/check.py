"""The backend's check mode (``options={"check": True}`` or
``GRAPHC_CHECK=1``): each call of a graphc partition also runs the
partition's FX graph in eager PyTorch on the same arguments, and a result
that differs beyond its dtype's tolerance raises ``graphc.CheckError``.
The graphs are functional (AOTAutograd functionalised them before they
were partitioned), so running one twice changes nothing; a mutated input
is one of the values compared, as the graph returns its new value.

A float output beyond tolerance is then judged as Dynamo's accuracy check
(``torch._dynamo.utils.same`` with ``fp64_ref``) judges one: against the
partition run in float64, graphc's result may be at most twice as far as
eager's (root-mean-square and largest error both): a model whose own f32
rounding error exceeds the tolerance (HF CPM-Ant's logits, 3.6e-4 from
float64 in eager) is not a wrong result of graphc's.

The error names the partition and a folder holding what reproduces it: the
partition's ``.graph`` text, its FX graph, its inputs and both results as
``.npy`` files (the partition's debug dump folder when there is one).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import torch

from graphc.errors import CheckError

# (rtol, atol) per dtype: rtol 1e-3, atol 1e-4 in f32, as the zoo sweep and
# the tests compare; wider for the 16-bit floats, exact for integers.
TOLERANCES = {
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
    torch.float32: (1e-3, 1e-4),
    torch.float64: (1e-7, 1e-7),
}


def difference(expected: Any, got: Any) -> Optional[str]:
    """None when `got` matches `expected` within the dtype's tolerance, else
    what differs."""
    if not isinstance(expected, torch.Tensor):
        return None if expected == got else f"{got!r} where eager gives {expected!r}"
    if not isinstance(got, torch.Tensor):
        return f"a {type(got).__name__} where eager gives a tensor"
    if got.dtype != expected.dtype or tuple(got.shape) != tuple(expected.shape):
        return f"{got.dtype}{list(got.shape)} where eager gives {expected.dtype}{list(expected.shape)}"
    if expected.dtype not in TOLERANCES:
        if torch.equal(got, expected):
            return None
        wrong = (got != expected).nonzero()[0].tolist()
        return f"{int((got != expected).sum())} element(s) differ, first at {wrong}"
    rtol, atol = TOLERANCES[expected.dtype]
    close = torch.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return None
    error = (got.double() - expected.double()).abs().nan_to_num(nan=float("inf"))
    worst = np.unravel_index(int(error.argmax()), tuple(error.shape)) if error.dim() else ()
    return (f"{int((~close).sum())} of {close.numel()} element(s) differ beyond rtol {rtol}, atol {atol}; "
            f"the largest error {float(error.max()):.3g} at {list(map(int, worst))} "
            f"(graphc {float(got[worst]):.6g}, eager {float(expected[worst]):.6g})")


# How much farther from float64 than eager's graphc's result may be (Dynamo's
# multiplier), and the slack added for results eager computes exactly.
FP64_MULTIPLIER = 2.0


def in_float64(reference: torch.fx.GraphModule, args: Sequence[Any]) -> Optional[List[Any]]:
    """The partition's outputs computed in float64 (float inputs widened);
    None when the graph does not run so."""
    wide = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
    try:
        with torch.no_grad():
            out = reference(*wide)
    except Exception:
        return None
    return list(out) if isinstance(out, (tuple, list)) else [out]


def as_close_as_eager(expected: torch.Tensor, got: torch.Tensor, exact: Any) -> bool:
    """Whether `got` is no more than FP64_MULTIPLIER times as far from the
    float64 result as eager's `expected` is, in root-mean-square and in
    largest error."""
    if not isinstance(exact, torch.Tensor) or tuple(exact.shape) != tuple(expected.shape):
        return False
    exact = exact.double()
    finite = torch.isfinite(exact) & torch.isfinite(expected.double())
    if not bool(torch.equal(torch.isfinite(got.double()), torch.isfinite(expected.double()))):
        return False
    ours, theirs = (got.double() - exact)[finite].abs(), (expected.double() - exact)[finite].abs()
    if ours.numel() == 0:
        return True
    atol = TOLERANCES[expected.dtype][1]
    rms = lambda e: float(e.pow(2).mean().sqrt())  # noqa: E731
    return (rms(ours) <= FP64_MULTIPLIER * rms(theirs) + atol / 10
            and float(ours.max()) <= FP64_MULTIPLIER * float(theirs.max()) + atol / 10)


def as_numpy(t: Any) -> Any:
    if not isinstance(t, torch.Tensor):
        return np.asarray(t)
    t = t.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).contiguous().numpy()


def write_reproducer(folder: Optional[str], name: str, text: str, fx_code: str, args: Sequence[Any],
                     expected: Sequence[Any], got: Sequence[Any]) -> str:
    """The folder (made when None) with the partition's graph, FX code,
    inputs and both results; returns its path."""
    folder = folder or tempfile.mkdtemp(prefix=f"graphc-check-{name}-")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "partition.graph"), "w") as f:
        f.write(text)
    with open(os.path.join(folder, "fx_partition.py"), "w") as f:
        f.write(fx_code)
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    for kind, values in (("input", tensors), ("eager", expected), ("graphc", got)):
        for k, v in enumerate(values):
            np.save(os.path.join(folder, f"{kind}{k}.npy"), as_numpy(v))
    return folder


def compare(name: str, reference: torch.fx.GraphModule, text: str, dump_dir: Optional[str], args: Sequence[Any],
            got: List[Any], written: Sequence[Tuple[int, torch.Tensor]] = ()) -> None:
    """Runs `reference` (the partition's FX graph) on `args` and raises
    CheckError when an output of graphc's (`got`) differs, or an input
    graphc wrote in place (`written`: its position in `args`, and graphc's
    value) is not what eager's copy_ leaves in that argument."""
    with torch.no_grad():
        expected = reference(*args)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    outputs = len(expected)
    expected += [args[i] for i, _ in written]
    got = list(got) + [t for _, t in written]
    problems: List[Tuple[int, str]] = []
    for k, (e, g) in enumerate(zip(expected, got)):
        problem = difference(e, g)
        if problem is not None:
            problems.append((k, problem))
    if problems and all(k < outputs and isinstance(expected[k], torch.Tensor) and expected[k].dtype in TOLERANCES
                        for k, _ in problems):
        exact = in_float64(reference, args)
        if exact is not None:
            problems = [(k, p) for k, p in problems if not as_close_as_eager(expected[k], got[k], exact[k])]
    if not problems:
        return
    folder = write_reproducer(dump_dir, name, text, reference.code, args, expected, got)
    lines = "\n".join(f"  output {k}: {p}" if k < outputs else f"  input {written[k - outputs][0]} written in "
                       f"place: {p}" for k, p in problems)
    raise CheckError(f"graphc check: partition {name} differs from eager PyTorch:\n{lines}\n"
                     f"its graph, inputs and both results are in {folder}", partition=name, folder=folder)
