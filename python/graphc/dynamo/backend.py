"""The ``graphc`` torch.compile backend, laid out as OpenVINO's
(``openvino.frontend.pytorch.torchdynamo.backend``): Dynamo hands over an
FX graph of torch calls; make_fx lowers it to core ATen with graphc's
decomposition table (on Dynamo's fake tensors and symbolic sizes); the
partitioner splits it into what graphc runs and what stays in PyTorch;
each graphc partition is translated to a ``.graph`` and compiled by the
C++ library; the rewritten graph is what torch calls from then on.

    model = torch.compile(model, backend="graphc")
    model = torch.compile(model, backend="graphc", options={"freezing": False})

Options:
    device     "cpu" (default): where graphc runs the partitions.
    freezing   True (default): parameters and buffers become constants of
               the compiled graphs (packed once, folded where they can be),
               as Inductor's ``freezing`` config; each call checks that it
               brings the same weight tensors, unchanged, and freezes other
               ones again (partition.PartitionProgram). False: weights are
               passed on every call.
    dump_dir   the debug dump folder (default ``$GRAPHC_DEBUG_DIR``): each
               partition's dump also holds the FX graph Dynamo handed over
               (fx_graph.py), the ATen graph (aten_graph.py) and the
               partition (fx_partition.py).

Inference only for now: a graph that needs gradients (grad mode on and an
input requiring grad) runs in eager PyTorch, with one line saying so.
"""

from __future__ import annotations

import copy
import itertools
import operator
import time
from typing import Any, Dict, List, Optional

import torch
import torch.fx
from torch._dynamo.source import is_from_unspecialized_param_buffer_source
from torch.fx.experimental.proxy_tensor import make_fx

from graphc.dynamo import logs
from graphc.dynamo.decompositions import decomposition_table
from graphc.dynamo.partition import direct_call, partition_and_compile

DEFAULT_OPTIONS: Dict[str, Any] = {"device": "cpu", "freezing": True, "dump_dir": ""}
_counter = itertools.count()


def _weights(gm: torch.fx.GraphModule, example_inputs: List[Any]) -> List[bool]:
    """For each input of Dynamo's graph, whether it is a parameter or buffer
    of a module (which Dynamo lifts to graph inputs)."""
    flags = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, example in zip(placeholders, example_inputs):
        grapharg = node.meta.get("grapharg")
        source = getattr(grapharg, "source", None)
        is_weight = isinstance(example, torch.nn.Parameter) or (
            source is not None and is_from_unspecialized_param_buffer_source(source))
        flags.append(bool(is_weight) and isinstance(example, torch.Tensor))
    return flags


def lower_to_aten(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Dynamo's graph as a graph of core ATen ops: traced by make_fx with
    graphc's decomposition table, on the fake tensors Dynamo recorded
    (their symbolic sizes and shape environment), then with its in-place
    ops made functional where that is safe (``out_of_place``).

    (AOTAutograd does this too, but traces twice to collect the metadata a
    joint forward/backward graph needs: 3-4x the time on ResNet-18, for
    nothing in inference. torch.func.functionalize would make every
    in-place op functional, but its C++ layer reads sizes as integers,
    which pins Dynamo's symbolic sizes to the first call's.)"""
    fakes = [n.meta["example_value"] for n in gm.graph.nodes if n.op == "placeholder"]
    aten_gm = make_fx(gm, decomposition_table=decomposition_table(), tracing_mode="symbolic")(*fakes)
    out_of_place(aten_gm.graph)
    aten_gm.graph.eliminate_dead_code()  # the statistics outputs of inference batch norms
    aten_gm.recompile()
    return aten_gm


def out_of_place(graph: torch.fx.Graph) -> None:
    """``relu_(x)`` becomes ``relu(x)`` where nothing can see the difference:
    x is an intermediate (not a graph input, not a view of another tensor)
    that no node after it reads. Other in-place ops stay as they are, and
    so stay in PyTorch."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    for node in graph.nodes:
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        name = target._schema.name.split("::")[-1]
        if not name.endswith("_") or name.endswith("__") or not node.args:
            continue
        mutated = node.args[0]
        if not isinstance(mutated, torch.fx.Node) or mutated.op == "placeholder" or is_view(mutated):
            continue
        if any(order[u] > order[node] for u in mutated.users if u is not node):
            continue
        functional = getattr(getattr(torch.ops.aten, name[:-1], None), target._overloadname, None)
        if functional is not None:
            node.target = functional


def is_view(node: torch.fx.Node) -> bool:
    """Whether `node`'s result may alias another tensor (a view op's, or one
    FX cannot tell)."""
    if node.op == "call_function" and node.target is operator.getitem:  # one output of a multi-output op
        return is_view(node.args[0])
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return True
    return any(r.alias_info is not None for r in node.target._schema.returns)


def graphc_backend(gm: torch.fx.GraphModule, example_inputs: List[Any], options: Optional[Dict[str, Any]] = None,
                   **_: Any) -> Any:
    opts = dict(DEFAULT_OPTIONS)
    unknown = set(options or {}) - set(DEFAULT_OPTIONS)
    if unknown:
        raise ValueError(f"graphc backend: unknown option(s) {sorted(unknown)}; it has {sorted(DEFAULT_OPTIONS)}")
    opts.update(options or {})
    record = logs.CompileRecord(name=f"g{next(_counter)}")
    logs.RECORDS.append(record)
    start = time.perf_counter()

    if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs):
        record.fallback = "training"
        logs.warn(f"{record.name}: a training graph (grad mode on, inputs that require grad) runs in eager "
                  "PyTorch: graphc does not differentiate yet; use torch.no_grad() or eval for inference")
        return gm.forward

    scalars, traced = specialize_scalars(gm, example_inputs)
    aten_gm = lower_to_aten(traced)
    record.stages["lower to ATen"] = time.perf_counter() - start
    # make_fx keeps Dynamo's inputs, in order: the weights among them are
    # frozen as constants (unless the options say not to).
    weights = _weights(gm, example_inputs) if opts["freezing"] else [False] * len(example_inputs)
    placeholders = [n for n in aten_gm.graph.nodes if n.op == "placeholder"]
    frozen = {node.name: value for node, is_weight, value in zip(placeholders, weights, example_inputs) if is_weight}
    dumps = {"fx_graph.py": gm.code, "aten_graph.py": aten_gm.code}
    fused = partition_and_compile(aten_gm, frozen, opts["device"], str(opts["dump_dir"] or ""), record, dumps)
    record.seconds = time.perf_counter() - start
    logs.log("backend", f"{record.name}: {record.partitions} graphc partition(s), {len(record.eager_ops)} op(s) "
                        f"in PyTorch, {record.cache_hits} cache hit(s), {record.seconds:.3f} s")
    compiled = direct_call(fused) or fused.forward
    if not scalars:
        return compiled

    def checked(*args: Any) -> Any:
        if all(args[i].item() == value for i, value in scalars):
            return compiled(*args)
        logs.log("recompiles", f"{record.name}: a scalar input changed: this call runs in eager PyTorch")
        return gm.forward(*args)

    return checked


def specialize_scalars(gm: torch.fx.GraphModule, example_inputs: List[Any]) -> Any:
    """With dynamic shapes Dynamo lifts a module's float attributes (an
    embedding's norm_type, a dropout's p) to 0-dim tensor inputs read by
    ``.item()``, a data-dependent value make_fx cannot trace. Each such
    input becomes its value (a copy of the graph is rewritten; `gm` stays
    as it was) and the compiled function checks the values on each call,
    running `gm` eagerly when one differs. Returns ((input index, value),
    ...) and the graph to lower."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    found = []
    for i, (node, example) in enumerate(zip(placeholders, example_inputs)):
        if (isinstance(example, torch.Tensor) and not isinstance(example, torch.nn.Parameter) and example.dim() == 0
                and node.users and all(u.op == "call_method" and u.target == "item" for u in node.users)):
            found.append((i, example.item()))
    if not found:
        return (), gm
    graph = copy.deepcopy(gm.graph)
    copies = [n for n in graph.nodes if n.op == "placeholder"]
    for i, value in found:
        for item in list(copies[i].users):
            for user in list(item.users):
                user.args = torch.fx.node.map_arg(user.args, lambda a, item=item: value if a is item else a)
                user.kwargs = torch.fx.node.map_arg(user.kwargs, lambda a, item=item: value if a is item else a)
            graph.erase_node(item)
    return tuple(found), torch.fx.GraphModule(gm, graph)
