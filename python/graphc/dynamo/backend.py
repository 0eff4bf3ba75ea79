"""The ``graphc`` torch.compile backend, laid out as OpenVINO's
(``openvino.frontend.pytorch.torchdynamo.backend``): Dynamo hands over an
FX graph of torch calls; AOTAutograd lowers it to one functional graph of
core ATen ops with graphc's decomposition table (on Dynamo's fake tensors
and symbolic sizes); the partitioner splits it into what graphc runs and
what stays in PyTorch;
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
    check      False (default; True when $GRAPHC_CHECK is set and not 0):
               every partition also runs in eager PyTorch on each call and
               a difference beyond the dtype's tolerance raises
               ``graphc.CheckError`` naming the partition and a folder
               holding its graph and inputs (partition.PartitionProgram).

Threads: the first compile moves graphc's parallel loops onto the team
of the OpenMP runtime PyTorch already runs (``_share_pytorch_threads``),
so that graphc's kernels and PyTorch's ops between them do not fight for
the cores; GRAPHC_OWN_THREADS=1 keeps graphc's own pool.

A graph that needs gradients (grad mode on and an input requiring grad)
is a training graph: AOTAutograd traces the joint forward and backward
with graphc's training decompositions (training.py), torch's
min-cut partitioner splits it into a forward that saves what the
backward reads and a backward, and each is partitioned and compiled as
an inference graph is. Weights are never frozen in training graphs: the
optimizer writes them between steps.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any, Callable, Dict, List, Optional

import torch
import torch.fx
from torch._dynamo.source import is_from_unspecialized_param_buffer_source
from torch._functorch.aot_autograd import aot_module_simplified, make_boxed_func
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch._subclasses.fake_tensor import unset_fake_temporarily

from graphc.dynamo import logs
from graphc.dynamo.decompositions import decomposition_table
from graphc.dynamo.partition import direct_call, partition_and_compile
from graphc.dynamo.training import training_decomposition_table

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


def functionalize_and_compile(gm: torch.fx.GraphModule, example_inputs: List[Any], weights: List[bool],
                              compile_graph: Callable[[torch.fx.GraphModule, Dict[str, torch.Tensor], str], Any],
                              record: logs.CompileRecord, training: bool) -> Any:
    """Dynamo's graph as one functional graph of core ATen ops, compiled by
    `compile_graph(aten_gm, frozen, part)`; returns what Dynamo calls.

    AOTAutograd traces `gm` with graphc's decomposition table on Dynamo's
    fake tensors and symbolic sizes, and functionalises it as a whole
    before anything is partitioned: an in-place op becomes its functional
    form, a write through a view a ``slice_scatter`` (or its kin) into the
    view's base, and a mutated graph input's new value a ``copy_`` into it
    at the end of the graph (keep_inference_input_mutations), which graphc
    takes as a result that updates the input in place (aten_ops.py's
    copy_into_input; a module buffer's statistics, a static KV cache) or
    PyTorch runs where graphc cannot. So nothing left to PyTorch between
    graphc partitions can observe or reorder a mutation. Inputs whose
    metadata changes and outputs that eager returns as views of inputs are
    handled by AOTAutograd's runtime wrapper.

    When torch's own metadata of the trace says the wrapper has nothing to
    do (no input mutated, no output aliasing an input or an intermediate,
    no module state passed first), the compiled function is returned
    without it: the wrapper costs some 20 µs a call. Mutated inputs are
    never frozen as constants.

    A `training` graph is traced jointly with its backward and split by
    torch's min-cut partitioner (what to save, what to recompute); the
    forward and the backward (traced when backward first runs) are each
    compiled by `compile_graph`, nothing frozen. AOTAutograd's
    autograd.Function and runtime wrapper stay around them: they connect
    the two and apply the mutations of inputs a training graph returns."""
    start = time.perf_counter()
    built: Dict[str, Any] = {}

    def inference_compiler(aten_gm: torch.fx.GraphModule, _fakes: Any) -> Any:
        record.stages["lower to ATen"] = time.perf_counter() - start
        metadata = torch._guards.TracingContext.get().fw_metadata
        placeholders = [n for n in aten_gm.graph.nodes if n.op == "placeholder"]
        # AOTAutograd passes a GraphModule's own parameters and buffers
        # first (Dynamo lifts a model's to inputs, so there are seldom any).
        lifted = len(placeholders) - len(example_inputs)
        frozen = {}
        for i, node in enumerate(placeholders[lifted:]):
            info = metadata.input_info[lifted + i]
            if weights[i] and not (info.mutates_data or info.mutates_metadata or info.mutates_storage_metadata):
                frozen[node.name] = example_inputs[i]
        # AOTAutograd calls this under its fake mode; graphc compiles with
        # the real weights.
        with unset_fake_temporarily():
            compiled = compile_graph(aten_gm, frozen, "")
        built.update(compiled=compiled, plain=lifted == 0 and wrapper_does_nothing(metadata))
        return compiled

    def training_compiler(part: str) -> Callable[[torch.fx.GraphModule, Any], Any]:
        def compile_part(aten_gm: torch.fx.GraphModule, _fakes: Any) -> Any:
            if part == "fw":
                record.stages["lower to ATen"] = time.perf_counter() - start
            with unset_fake_temporarily():
                return make_boxed_func(compile_graph(aten_gm, {}, part))
        return compile_part

    if training:
        return aot_module_simplified(gm, example_inputs, fw_compiler=training_compiler("fw"),
                                     bw_compiler=training_compiler("bw"),
                                     partition_fn=min_cut_rematerialization_partition,
                                     decompositions=training_decomposition_table(),
                                     keep_inference_input_mutations=True)
    wrapped = aot_module_simplified(gm, example_inputs, fw_compiler=inference_compiler,
                                    inference_compiler=inference_compiler, decompositions=decomposition_table(),
                                    keep_inference_input_mutations=True)
    return built["compiled"] if built["plain"] else wrapped


def wrapper_does_nothing(metadata: Any) -> bool:
    """Whether AOTAutograd's runtime wrapper around a graph of this metadata
    only calls it: no input mutated outside the graph, every output a fresh
    tensor of the graph's own, no intermediate bases, effect tokens or
    tensor subclasses."""
    from torch._functorch._aot_autograd.schemas import MutationType, OutputType, PlainTensorMeta

    return (all(i.mutation_type != MutationType.MUTATED_OUT_GRAPH for i in metadata.input_info)
            and all(o.output_type == OutputType.non_alias and issubclass(o.raw_type, torch.Tensor)
                    for o in metadata.output_info)
            and metadata.num_intermediate_bases == 0 and not metadata.tokens
            and all(isinstance(m, PlainTensorMeta) for m in metadata.subclass_inp_meta if not isinstance(m, int))
            and all(isinstance(m, PlainTensorMeta) for m in metadata.subclass_fw_graph_out_meta
                    if not isinstance(m, int)))


_shared_threads: Optional[str] = None


def _share_pytorch_threads() -> None:
    """Runs graphc's cpu loops on PyTorch's OpenMP team (once per process).

    PyTorch's libgomp threads spin for milliseconds after each op; graphc's
    own workers beside them lose their cores in mid-kernel, which made a
    training step of many graphc calls between PyTorch ops 2-3x slower than
    its kernels. On the team, graphc's chunks run where those threads spin,
    as Inductor's OpenMP kernels do; chunk bounds, and so results, are the
    same bits.
    """
    global _shared_threads
    if _shared_threads is not None:
        return
    if os.environ.get("GRAPHC_OWN_THREADS", "") not in ("", "0"):
        _shared_threads = ""
        return
    from graphc import _graphc

    _shared_threads = _graphc.run_on_loaded_openmp_team()
    logs.log("backend", f"parallel loops on the OpenMP team of {_shared_threads}" if _shared_threads else
             "no OpenMP runtime loaded: graphc's own threads")


def graphc_backend(gm: torch.fx.GraphModule, example_inputs: List[Any], options: Optional[Dict[str, Any]] = None,
                   **_: Any) -> Any:
    opts = dict(DEFAULT_OPTIONS, check=os.environ.get("GRAPHC_CHECK", "") not in ("", "0"))
    unknown = set(options or {}) - set(opts)
    if unknown:
        raise ValueError(f"graphc backend: unknown option(s) {sorted(unknown)}; it has {sorted(opts)}")
    opts.update(options or {})
    record = logs.CompileRecord(name=f"g{next(_counter)}")
    start = time.perf_counter()
    _share_pytorch_threads()

    record.training = torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs)

    # Dynamo lifts a module's parameters and buffers to inputs: those are
    # frozen as constants (unless the options say not to, or it trains).
    weights = _weights(gm, example_inputs) if opts["freezing"] else [False] * len(example_inputs)

    def compile_graph(aten_gm: torch.fx.GraphModule, frozen: Dict[str, torch.Tensor], part: str) -> Any:
        aten_gm.graph.eliminate_dead_code()  # e.g. the statistics outputs of inference batch norms
        aten_gm.recompile()
        dumps = {"fx_graph.py": gm.code, "aten_graph.py": aten_gm.code}
        fused = partition_and_compile(aten_gm, frozen, opts["device"], str(opts["dump_dir"] or ""), record, dumps,
                                      checked=bool(opts["check"]), part=part)
        return direct_call(fused) or fused.forward

    # With dynamic shapes Dynamo lifts a module's float attributes (a
    # LayerNorm's eps) to 0-dim tensor inputs read by .item(); AOTAutograd
    # then asks Dynamo to trace again with them specialised (raising
    # TensorifyScalarRestartAnalysis through here), so their values are
    # constants Dynamo guards on.
    compiled = functionalize_and_compile(gm, example_inputs, weights, compile_graph, record, record.training)
    record.seconds = time.perf_counter() - start
    logs.RECORDS.append(record)
    logs.log("backend", f"{record.name}: {record.partitions} graphc partition(s), {len(record.eager_ops)} op(s) "
                        f"in PyTorch, {record.cache_hits} cache hit(s), {record.seconds:.3f} s")
    return compiled
