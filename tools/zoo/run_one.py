"""Zoo models through graphc, against eager PyTorch; prints one JSON
object a line per model (tools/zoo/sweep.py runs this in a process of its
own per model, or per architecture for transformers' base and head).

    python tools/zoo/run_one.py NAME [NAME...] [--image N] [--no-onnx] [--no-timing]

1. eager: the model on its example inputs, in torch.no_grad().
2. torch.compile(backend="graphc", options={"check": True}): the first
   call (its seconds are the compile time), every output against eager's
   (rtol 1e-3, atol 1e-4, f32), the compile records: partitions, ops left
   to PyTorch and why, failed partitions, Dynamo's graph breaks. A check
   failure (a partition that differs from eager) is a mismatch. Results
   beyond the tolerance are judged against the model run in float64, as
   the check mode judges a partition's: no farther from it than twice
   eager's error is a match (marked judged_against_float64).
3. steady state: graphc (without the check) and eager in interleaved
   rounds, the least median of each kept.
4. ONNX: torch.onnx.export(dynamo=True); onnxruntime runs it (the ONNX
   peer: an export it cannot run is not held against graphc); graphc
   compiles and runs it; both against eager.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from typing import Any, Dict, List

import torch
import torch.utils._pytree as pytree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalogue  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4


def tensors_of(outputs: Any) -> List[torch.Tensor]:
    """The tensors of a model's outputs (a tensor, a tuple, a ModelOutput)."""
    if hasattr(outputs, "to_tuple"):
        outputs = outputs.to_tuple()
    return [t for t in pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor)]


def max_error(got: List[Any], expected: List[torch.Tensor]) -> Dict[str, Any]:
    """Whether `got` matches `expected` (rtol 1e-3, atol 1e-4), and the
    largest absolute error."""
    if len(got) != len(expected):
        return {"match": False, "error": f"{len(got)} outputs where eager gives {len(expected)}"}
    worst, match = 0.0, True
    for g, e in zip(got, expected):
        g = torch.as_tensor(g)
        if tuple(g.shape) != tuple(e.shape):
            return {"match": False, "error": f"shape {tuple(g.shape)} where eager gives {tuple(e.shape)}"}
        if e.is_floating_point():
            diff = (g.double() - e.double()).abs()
            worst = max(worst, float(diff.max()) if diff.numel() else 0.0)
            match = match and bool(torch.isclose(g.to(e.dtype), e, rtol=RTOL, atol=ATOL, equal_nan=True).all())
        else:
            match = match and bool(torch.equal(g.to(e.dtype), e))
    return {"match": match, "max_abs_error": worst}


def closer_than_eager_to_float64(model: torch.nn.Module, inputs: Dict[str, torch.Tensor], got: List[Any],
                                 expected: List[torch.Tensor]) -> bool:
    """For results beyond tolerance: whether graphc's are as close to the
    model run in float64 as eager's are (the check mode's rule, after
    Dynamo's fp64_ref): a model whose own f32 rounding exceeds the
    tolerance is not a wrong result of graphc's."""
    import copy

    from graphc.dynamo.check import as_close_as_eager

    try:
        wide = copy.deepcopy(model).double()
        with torch.no_grad():
            exact = tensors_of(wide(**{k: v.double() if v.is_floating_point() else v for k, v in inputs.items()}))
    except Exception:
        return False
    if len(exact) != len(expected):
        return False
    return all(not e.is_floating_point() and torch.equal(torch.as_tensor(g), e)
               or e.is_floating_point() and as_close_as_eager(e, torch.as_tensor(g).to(e.dtype), x)
               for g, e, x in zip(got, expected, exact))


def short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:300] if text else type(e).__name__


def median_ms(fn: Any, iterations: int) -> float:
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return 1e3 * times[len(times) // 2]


def run_compiled(model: torch.nn.Module, inputs: Dict[str, torch.Tensor], expected: List[torch.Tensor],
                 result: Dict[str, Any]) -> None:
    import graphc
    import graphc.dynamo

    torch._dynamo.reset()
    graphc.dynamo.reset()
    torch._dynamo.utils.counters.clear()
    compiled = torch.compile(model, backend="graphc", options={"check": True})
    start = time.perf_counter()
    try:
        with torch.no_grad():
            got = tensors_of(compiled(**inputs))
        result["compile_s"] = time.perf_counter() - start
        result.update(max_error(got, expected))
        if not result["match"] and "error" not in result and closer_than_eager_to_float64(model, inputs, got, expected):
            result["match"] = True
            result["judged_against_float64"] = True
        result["status"] = "match" if result["match"] else "MISMATCH"
    except graphc.CheckError as e:
        result["status"] = "MISMATCH"
        result["match"] = False
        result["error"] = str(e).splitlines()[0] + " " + " ".join(str(e).splitlines()[1:2])
    except Exception as e:
        result["status"] = "error"
        result["error"] = short(e)
    records = graphc.dynamo.compile_records()
    left: Dict[str, str] = {}
    for r in records:
        for op, why in r.eager_ops:
            left.setdefault(op, why)
    result["graphs"] = len(records)
    result["partitions"] = sum(r.partitions for r in records)
    result["eager_ops"] = sum(len(r.eager_ops) for r in records)
    result["ops_left"] = left
    result["failed_partitions"] = [f for r in records for f in r.failed_partitions]
    breaks = torch._dynamo.utils.counters["graph_break"]
    result["graph_breaks"] = {str(k)[:160]: v for k, v in breaks.items()}
    result["whole"] = bool(result.get("status") == "match" and result["partitions"] > 0 and not left
                           and not result["failed_partitions"] and not breaks)


def time_steady(model: torch.nn.Module, inputs: Dict[str, torch.Tensor], result: Dict[str, Any],
                budget_s: float = 3.0) -> None:
    """graphc and eager in interleaved rounds; the least median of each."""
    compiled = torch.compile(model, backend="graphc")
    with torch.no_grad():
        compiled(**inputs)
        start = time.perf_counter()
        model(**inputs)
        once = max(time.perf_counter() - start, 1e-5)
        iterations = max(3, min(50, int(budget_s / 10 / once)))
        eager, graphc_ = [], []
        for _ in range(5):
            eager.append(median_ms(lambda: model(**inputs), iterations))
            graphc_.append(median_ms(lambda: compiled(**inputs), iterations))
    result["eager_ms"], result["graphc_ms"] = min(eager), min(graphc_)


def run_onnx(model: torch.nn.Module, inputs: Dict[str, torch.Tensor], expected: List[torch.Tensor],
             result: Dict[str, Any]) -> None:
    import numpy as np
    import onnxruntime

    import graphc

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        try:
            program = torch.onnx.export(model, (), kwargs=dict(inputs), dynamo=True, verbose=False)
            program.save(path)
        except Exception as e:
            result["onnx"] = "export failed"
            result["onnx_error"] = short(e)
            return
        arrays = {k: v.numpy() for k, v in inputs.items()}
        try:
            session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
            feed = {i.name: arrays[i.name] for i in session.get_inputs() if i.name in arrays}
            ort = [torch.from_numpy(np.asarray(o)) for o in session.run(None, feed)]
            # Judged as graphc's results are: beyond tolerance, against float64.
            result["ort"] = "match" if max_error(ort, expected)["match"] or \
                closer_than_eager_to_float64(model, inputs, ort, expected) else "differs"
        except Exception as e:
            result["ort"] = "error"
            result["ort_error"] = short(e)
        try:
            exe = graphc.compile(path)
            got = exe.run(**{n: arrays[n] for n in exe.input_names})
            got = [torch.from_numpy(np.asarray(o)) for o in got]
            checked = max_error(got, expected)
            if not checked["match"] and "error" not in checked and closer_than_eager_to_float64(model, inputs, got,
                                                                                                 expected):
                checked["match"] = result["onnx_judged_against_float64"] = True
            result["onnx"] = "match" if checked["match"] else "MISMATCH"
            result["onnx_max_abs_error"] = checked.get("max_abs_error")
            if "error" in checked:
                result["onnx_error"] = checked["error"]
        except Exception as e:
            result["onnx"] = "error"
            result["onnx_error"] = short(e)


def run_model(name: str, entries: Dict[str, Any], args: argparse.Namespace) -> Dict[str, Any]:
    result: Dict[str, Any] = {"name": name}
    try:
        model, inputs = catalogue.build(entries[name])
        result["params_m"] = sum(p.numel() for p in model.parameters()) / 1e6
        result["config"] = getattr(model, "zoo_config", None)
        result["inputs"] = {k: list(v.shape) for k, v in inputs.items()}
        with torch.no_grad():
            expected = tensors_of(model(**inputs))
    except Exception as e:
        result["status"] = "eager failed"
        result["error"] = short(e)
        return result
    try:
        run_compiled(model, inputs, expected, result)
        if result["status"] == "match" and not args.no_timing:
            time_steady(model, inputs, result)
    except Exception as e:
        result.setdefault("status", "error")
        result["error"] = short(e)
        result["traceback"] = traceback.format_exc()[-2000:]
    if not args.no_onnx:
        # What torch.compile gave, printed first: a sweep that stops this
        # process for time during the ONNX export keeps it (the last line
        # printed for a model is its result).
        print(json.dumps(dict(result, onnx="timeout", onnx_error="the ONNX export or run ran past the sweep's time")),
              flush=True)
        try:
            run_onnx(model, inputs, expected, result)
        except Exception as e:
            result["onnx"] = "error"
            result["onnx_error"] = short(e)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="+")
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--no-onnx", action="store_true")
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("GRAPHC_ZOO_THREADS", "2")))
    entries = catalogue.catalogue(args.image)
    for name in args.names:
        start = time.perf_counter()
        result = run_model(name, entries, args)
        result["seconds"] = time.perf_counter() - start
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
