"""Which ops of an ATen graph graphc runs, and the graph rewritten to run
them: ``CapabilityBasedPartitioner`` groups the supported nodes into
partitions, each becomes a submodule, and each submodule is replaced by a
``GraphcKernel`` holding the graphc Executable compiled from it. What is
not supported stays in the graph and runs in eager PyTorch.

A node is supported exactly when it translates (``aten_ops.py``): the
check translates it alone into a scratch graph.
"""

from __future__ import annotations

import hashlib
import heapq
import operator
import os
import time
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Set

import torch
import torch.fx
from torch.fx.experimental.symbolic_shapes import free_symbols
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

import graphc
from graphc import _graphc
from graphc.dynamo import aten_experts, check, logs
from graphc.dynamo.aten_ops import HANDLERS
from graphc.dynamo.translate import Builder, Translation, Unsupported, dtype_name, output_nodes, translate, val

aten = torch.ops.aten

# Assertions torch's decompositions add (one_hot's index bounds): PyTorch
# runs them on graphc's results, raising as eager does. No tensor work.
CHECKS = {
    aten._assert_async.msg, aten._assert_async.default, aten._assert_scalar.default,
    aten._functional_assert_async.msg,
}

# Ops that move no data, and a copy into an input: a partition of only
# these is not worth a call.
SHAPE_OPS = {aten.copy_.default,
    aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.permute.default, aten.t.default,
    aten.transpose.int, aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
    aten.expand.default, aten.clone.default, aten.alias.default, aten.detach.default, aten.slice.Tensor,
    aten.select.int, aten.lift_fresh_copy.default, operator.getitem,
}


def is_view(node: torch.fx.Node) -> bool:
    """Whether `node` is a view op's result (ATen's schema says its result
    aliases its input), or one result of such an op."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return isinstance(node.args[0], torch.fx.Node) and is_view(node.args[0])
    return isinstance(node.target, torch._ops.OpOverload) and any(
        r.alias_info is not None and not r.alias_info.is_write for r in node.target._schema.returns)


def returned_views(graph: torch.fx.Graph) -> Set[torch.fx.Node]:
    """Each view op whose result the graph returns runs in PyTorch, on the
    tensor graphc computed for its base, so that outputs alias each other
    and their inputs as they do in eager (`y` and `y.view(2, 2)`; `x[1:]`):
    graphc's values are fresh buffers. A view op graphc's own ops also
    read is copied for the output, so that the partition keeps it. Returns
    the copies (the nodes to leave to PyTorch); the graph is changed."""
    output = graph.output_node()
    copies: Dict[torch.fx.Node, torch.fx.Node] = {}

    def for_output(node: Any) -> Any:
        if not (isinstance(node, torch.fx.Node) and is_view(node)):
            return node
        if node not in copies:
            base = for_output(node.args[0])
            with graph.inserting_before(output):
                copies[node] = graph.node_copy(node, lambda a: base if a is node.args[0] else a)
        return copies[node]

    output.args = torch.fx.node.map_arg(output.args, for_output)
    return set(copies.values())


# Ops whose result depends on their input's layout, not only its values:
# as_strided reads the storage (the strides, the memory around it); view
# is refused where the strides do not allow it.
LAYOUT_READERS = {aten.as_strided.default, aten.as_strided_.default, aten.as_strided_scatter.default,
                  aten.view.default}


def owns_dense_storage(value: Any) -> bool:
    """Whether eager's tensor is laid out as a fresh graphc buffer is:
    contiguous, at offset 0 of a storage that holds just its elements."""
    try:
        return bool(value.is_contiguous() and value.storage_offset() == 0
                    and value.untyped_storage().nbytes() == value.numel() * value.element_size())
    except Exception:  # a symbolic layout
        return False


def storage_bound(graph: torch.fx.Graph, views: Set[torch.fx.Node]) -> Dict[torch.fx.Node, str]:
    """The nodes PyTorch must compute because an op PyTorch runs depends on
    their layout: an as_strided left to it reads their storage, and a
    `view` it replays (`views`, the returned views) or is left needs
    strides that allow it. graphc's values are dense fresh buffers, so a
    value whose eager layout is another (a transposed view, a slice of a
    larger tensor) would be read at the wrong places or refuse the view.
    From such an op back to the tensors eager lays out as graphc does (or
    to the graph's inputs), every node runs in PyTorch; each maps to the
    reason."""
    bound: Dict[torch.fx.Node, str] = {}

    def walk(node: Any, reader: torch.fx.Node) -> None:
        if not isinstance(node, torch.fx.Node) or node in bound or node.op != "call_function":
            return  # inputs and constants are eager's own tensors
        if node in views:  # replayed by PyTorch: its layout is its base's, wherever that is computed
            walk(node.args[0], reader)
            return
        if owns_dense_storage(val(node)):
            return
        bound[node] = f"{reader.target} in PyTorch needs the layout eager gives it"
        for producer in node.all_input_nodes:
            walk(producer, reader)

    for node in graph.nodes:
        if node.op == "call_function" and node.target in LAYOUT_READERS and \
                (node in views or why_unsupported(node) is not None):
            walk(node.args[0], node)
    return bound


def why_unsupported(node: torch.fx.Node) -> Optional[str]:
    """None if graphc takes `node`, else why not."""
    if node.op == "get_attr":
        value = val(node)
        if isinstance(value, torch.Tensor):  # a tensor constant of the graph
            try:
                dtype_name(value.dtype)
            except Unsupported as e:
                return str(e)
            return None if value.device.type == "cpu" else f"a constant on {value.device}"
        if node.users and all(u.target is torch.ops.higher_order.cond for u in node.users):
            return None  # a cond's branch: goes into the cond's partition with it
        return "a get_attr node"
    if node.op != "call_function":
        return f"a {node.op} node"
    if node.target is operator.getitem:
        producer = node.args[0]
        if not (isinstance(producer, torch.fx.Node) and producer.op == "call_function"
                and producer.target in HANDLERS):
            return "reads the output of an op graphc does not run"
        return why_unsupported(producer)
    if node.target not in HANDLERS:
        return "graphc has no translation for it"
    if node.target is aten.copy_.default:
        reason = why_not_written_in_place(node)
        if reason is not None:
            return reason
    reason, outputs = translate_alone(node)
    if reason is None and isinstance(outputs, tuple):
        # The partitioner keeps getitems with their producer: an output
        # graphc does not compute (max pooling's indices) that is read
        # leaves the op to PyTorch.
        for user in node.users:
            if user.target is operator.getitem and outputs[user.args[1]] is None:
                return f"its output {user.args[1]} is read, which graphc does not compute"
    if reason is None and unstable_sort_indices_escape(node):
        return "a sort without stable=True whose indices PyTorch reads: graphc orders equal elements stably, " \
               "PyTorch its own way, and the two orders would meet"
    return reason


def why_not_written_in_place(node: torch.fx.Node) -> Optional[str]:
    """None if graphc can write ``dst.copy_(src)`` as a result that updates
    the graph input dst in place, else why not: dst must be an input whose
    memory graphc reads as it is (dense, C-ordered: nothing copies it on the
    way in) and nothing may read dst after the copy (graphc's reads of an
    input see the value the call started with)."""
    dst = node.args[0]
    if not (isinstance(dst, torch.fx.Node) and dst.op == "placeholder" and isinstance(val(dst), torch.Tensor)):
        return "a copy_ into a tensor that is not a graph input"
    try:
        dense = bool(val(dst).is_contiguous())
    except Exception:  # a symbolic layout
        dense = False
    if not dense:
        return "a copy_ into a graph input that is not contiguous"
    if any(user > node for user in dst.users if user is not node):  # FX nodes compare by graph order
        return "the graph reads the input after copying into it"
    return None


def unstable_sort_indices_escape(node: torch.fx.Node) -> bool:
    """Whether `node` is a sort without stable=True whose indices something
    graphc does not run reads (or the graph returns): graphc's order of
    ties is one PyTorch allows, but it must not meet PyTorch's own."""
    if node.target is aten.sort.stable:
        if node.kwargs.get("stable", False):
            return False
    elif node.target is not aten.sort.default:
        return False
    for picked in node.users:
        if picked.target is operator.getitem and picked.args[1] == 1:
            for user in picked.users:
                if user.op == "output" or why_unsupported(user) is not None:
                    return True
    return False


def translate_alone(node: torch.fx.Node) -> Any:
    """(None, what it became) if `node` translates into a scratch graph of
    its own, else (why not, None)."""
    values = [val(node)] if not isinstance(val(node), (tuple, list)) else list(val(node))
    values += [val(n) for n in node.all_input_nodes]
    for v in values:
        if isinstance(v, torch.Tensor) and v.device.type != "cpu":
            return f"a tensor on {v.device} (the backend runs host tensors)", None
    b = Builder("check")
    try:
        for n in node.all_input_nodes:
            if n.op == "get_attr":
                b.get_attr(n)
            elif isinstance(val(n), torch.Tensor):
                b.param(n)
        return None, HANDLERS[node.target](b, node)
    except Unsupported as e:
        return str(e), None
    except Exception as e:  # a form the table did not foresee: PyTorch runs it
        return f"{type(e).__name__}: {e}", None


class GraphcSupport(OperatorSupportBase):
    def __init__(self, views: Set[torch.fx.Node], storage_bound: Dict[torch.fx.Node, str]) -> None:
        super().__init__()
        self.reasons: Dict[torch.fx.Node, str] = {}
        self.views = views  # returned views, which PyTorch makes (returned_views)
        self.storage_bound = storage_bound  # what PyTorch computes for the layout its ops need (storage_bound)

    def is_node_supported(self, submodules: Any, node: torch.fx.Node) -> bool:
        if node in self.views or node.target in CHECKS:
            return False
        reason = self.storage_bound.get(node) or why_unsupported(node)
        if reason is not None:
            # Size arithmetic on SymInts (s0 * s1) is no tensor work: it
            # stays in Python without a word.
            # (Nor is picking an output of an op left to PyTorch: the op is counted.)
            if (node.op == "call_function" and node.target is not operator.getitem
                    and not isinstance(val(node), (torch.SymInt, torch.SymFloat, int, float))):
                self.reasons[node] = reason
            return False
        return True


def picker(positions: List[int]) -> Any:
    """args -> [args[i] for i in positions], in C (operator.itemgetter)."""
    if not positions:
        return lambda args: []
    get = operator.itemgetter(*positions)
    return (lambda args: [get(args)]) if len(positions) == 1 else (lambda args: list(get(args)))


def argument_reader(placeholders: List[torch.fx.Node], positions: List[int], layouts_known: bool = True) -> Any:
    """args -> the tensors at `positions`, ready for graphc to read in place.
    What each needs is decided once, from the example Dynamo traced with
    (its guards keep later calls alike): nothing, a detach (a weight that
    requires grad cannot be exported) or a contiguous copy (graphc reads
    dense C-ordered memory); when none needs anything, a picker in C.
    Without `layouts_known` (a training graph's forward and backward,
    whose inputs include tensors saved by another graph: AOTAutograd's
    examples of them need not have their layout at run time), each tensor
    is made contiguous when it is not."""
    plan = []
    for i in positions:
        v = val(placeholders[i])
        try:
            contiguous = bool(v.is_contiguous()) and layouts_known
        except Exception:  # a symbolic layout: made contiguous on each call
            contiguous = False
        plan.append(2 if not contiguous else 1 if v.requires_grad else 0)
    if not any(plan):
        return picker(positions)
    return lambda args: [prepare(args[i], how) for i, how in zip(positions, plan)]


def prepare(arg: torch.Tensor, how: int) -> torch.Tensor:
    if how == 2:
        return arg.detach().contiguous()
    return arg.detach() if how == 1 else arg


_CARRIERS: Dict[int, torch.Tensor] = {}


def size_carrier(size: int) -> torch.Tensor:
    """A tensor of `size` bytes whose only use is its size: how a SymInt no
    other input's shape holds reaches graphc (it binds symbols from shapes)."""
    carrier = _CARRIERS.get(size)
    if carrier is None:
        carrier = _CARRIERS[size] = torch.empty(size, dtype=torch.int8)
    return carrier


# Weight sets one partition compiles frozen executables for before it
# compiles one that takes the weights as inputs (as Dynamo's
# cache_size_limit bounds recompiles); also how many times weights written
# in place behind torch's back are frozen again before they are passed on
# every call instead.
MAX_WEIGHT_SETS = 8
# Elements of each frozen weight compared on every call (SampledBytes).
SAMPLES_PER_WEIGHT = 16


# Tensors go to graphc as DLPack capsules made in C, and come back as NumPy
# arrays that torch.from_numpy wraps: both without copies, and some 2 µs a
# call cheaper than torch's __dlpack__ and from_dlpack, which are Python.
# (bf16 has no NumPy dtype: partitions returning it take the slower road.)
_TO_DLPACK = getattr(torch._C, "_to_dlpack", None)


class PartitionProgram:
    """The executables of one partition. Frozen weights are the tensors the
    graph was compiled with, so each call checks that it brings those same
    tensors (identity, memory), unchanged: their version counters, which
    in-place torch ops bump, and a sample of their elements, which writes
    through ``.data`` or a NumPy view change without a bump (SampledBytes).
    Weights written so are frozen again, up to MAX_WEIGHT_SETS times, then
    passed on every call. Dynamo may call one graph with other weights —
    the same module code for each layer after a graph break, a second
    instance of a model class. Another weight set gets its own frozen
    executable, up to MAX_WEIGHT_SETS, then one executable that takes the
    weights as inputs serves the rest."""

    def __init__(self, name: str, translation: Translation, weight_positions: List[int],
                 placeholders: List[torch.fx.Node], outputs: List[Any], args: Sequence[Any], device: str,
                 dump_dir: str, record: logs.CompileRecord, reference: Optional[torch.fx.GraphModule],
                 layouts_known: bool = True) -> None:
        self.name, self.text, self.params = name, translation.text, translation.params
        self.reference = reference  # the partition's FX graph, run beside graphc in check mode
        self.carriers = translation.carriers
        self.graph_constants = translation.constants  # the graph's own tensor constants, always bound
        self.checks = translation.checks  # what the bool[] outputs after the graph's own say when true
        # The last outputs write these arguments in place; torch is not handed them.
        self.written_positions = translation.updated
        self.updates = len(translation.updated)
        self.device, self.dump_dir, self.record = device, dump_dir, record
        self.weight_positions = weight_positions
        self.pick_weights = picker(weight_positions)
        tensor_positions = [i for i, p in enumerate(self.params) if p is not None]
        runtime_positions = [i for i in tensor_positions if i not in set(weight_positions)]
        self.read_runtime = argument_reader(placeholders, runtime_positions, layouts_known)
        self.read_everything = argument_reader(placeholders, tensor_positions, layouts_known)
        self.via_numpy = _TO_DLPACK is not None and all(val(o).dtype != torch.bfloat16 for o in outputs)
        self.weights = [args[i] for i in weight_positions]
        self.versions = list(map(_version, self.weights))
        self.pointers = list(map(_data_ptr, self.weights))
        self.exe, self.guard = self._frozen(self.weights)
        self.variants: Dict[Any, Any] = {}  # (executable, guard) by the other weights' memory and versions
        self.unfrozen: Optional[graphc.Executable] = None
        self.rewrites = 0  # weights written in place behind torch's back, frozen again

    def _frozen(self, weights: List[torch.Tensor], fresh: bool = False) -> Any:
        """An executable with `weights` frozen in, and the guard on their
        elements; `fresh`: compiled again though the weights' memory and
        versions are those of a cached one (written behind torch's back)."""
        constants = {self.params[i]: w for i, w in zip(self.weight_positions, weights)}
        guard = _graphc.SampledBytes([w.detach() for w in weights], SAMPLES_PER_WEIGHT)
        exe = compile_partition(self.name, self.text, {**self.graph_constants, **constants}, self.device,
                                self.dump_dir, self.record, fresh=fresh)
        return exe, guard

    def same_weights(self, args: Sequence[Any]) -> bool:
        weights = self.pick_weights(args)
        return (all(map(operator.is_, weights, self.weights)) and list(map(_version, weights)) == self.versions
                and list(map(_data_ptr, weights)) == self.pointers)

    def written_behind_torchs_back(self) -> bool:
        """Counts one more rewrite of frozen weights that bumped no version;
        whether to freeze them again (else they are passed on every call)."""
        self.rewrites += 1
        if self.rewrites <= MAX_WEIGHT_SETS:
            logs.log("recompiles", f"{self.name}: frozen weights written in place without a version bump "
                                   f"(through .data or NumPy): frozen again")
            return True
        if self.rewrites == MAX_WEIGHT_SETS + 1:
            logs.log("recompiles", f"{self.name}: frozen weights written in place {MAX_WEIGHT_SETS} times: "
                                   f"passed on every call from now on")
        return False

    def inputs(self, args: Sequence[Any], read: Any) -> List[torch.Tensor]:
        tensors = read(args)
        return tensors + [size_carrier(int(args[i])) for i in self.carriers] if self.carriers else tensors

    def call(self, exe: graphc.Executable, tensors: List[torch.Tensor]) -> List[torch.Tensor]:
        if self.via_numpy:
            outputs = exe.run(*map(_TO_DLPACK, tensors))
            if self.updates:
                del outputs[-self.updates:]  # the inputs written in place, which the caller holds
            return list(map(torch.from_numpy, outputs))
        outputs = exe.run(*tensors)
        if self.updates:
            del outputs[-self.updates:]
        return outputs

    def run(self, args: Sequence[Any]) -> List[torch.Tensor]:
        # The check runs eager on the inputs as they came in; graphc writes some.
        before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args] \
            if self.reference is not None and self.updates else args
        if not self.weight_positions:
            outputs = self.call(self.exe, self.inputs(args, self.read_runtime))
        elif self.same_weights(args) and self.guard.unchanged():
            outputs = self.call(self.exe, self.inputs(args, self.read_runtime))
        elif self.same_weights(args) and self.written_behind_torchs_back():
            self.exe, self.guard = self._frozen(self.weights, fresh=True)
            outputs = self.call(self.exe, self.inputs(args, self.read_runtime))
        elif self.same_weights(args):
            outputs = self.run_unfrozen(args)
        else:
            outputs = self.run_other_weights(args)
        if self.checks:
            outputs = self.raise_on_bad_indices(outputs)
        if self.reference is not None:
            written = [(i, a) for i, a in enumerate(args) if i in self.written_positions]
            check.compare(self.name, self.reference, self.text, self.exe.dump_dir or None, before, outputs, written)
        return outputs

    def raise_on_bad_indices(self, outputs: List[torch.Tensor]) -> List[torch.Tensor]:
        """The graph's own outputs, once the bounds flags after them are
        clear: an index out of range raises IndexError, as in eager."""
        n = len(self.checks)
        for flag, what in zip(outputs[-n:], self.checks):
            if bool(flag):
                raise IndexError(f"graphc: {what}: index out of range (the index tensor holds a value outside the "
                                 f"dim it indexes), as eager PyTorch raises")
        return outputs[:-n]

    def run_other_weights(self, args: Sequence[Any]) -> List[torch.Tensor]:
        weights = self.pick_weights(args)
        key = tuple((w.data_ptr(), w._version, tuple(w.shape)) for w in weights)
        variant = self.variants.get(key)
        if variant is None and len(self.variants) < MAX_WEIGHT_SETS:
            logs.log("recompiles", f"{self.name}: called with other weights: frozen again")
            variant = self.variants[key] = self._frozen(weights)
        elif variant is not None and not variant[1].unchanged():
            if not self.written_behind_torchs_back():
                return self.run_unfrozen(args)
            variant = self.variants[key] = self._frozen(weights, fresh=True)
        if variant is not None:
            return self.call(variant[0], self.inputs(args, self.read_runtime))
        return self.run_unfrozen(args)

    def run_unfrozen(self, args: Sequence[Any]) -> List[torch.Tensor]:
        if self.unfrozen is None:
            logs.log("recompiles", f"{self.name}: weights passed as inputs")
            self.unfrozen = compile_partition(self.name, self.text, self.graph_constants, self.device, self.dump_dir,
                                              self.record)
        return self.call(self.unfrozen, self.inputs(args, self.read_everything))


_version = operator.attrgetter("_version")
_data_ptr = torch.Tensor.data_ptr


class GraphcKernel(torch.nn.Module):
    """A partition compiled by graphc, in place of its submodule: called with
    the partition's arguments, it passes the tensors graphc takes (not the
    frozen weights, not SymInts, whose values the tensors' sizes carry)
    without copies and returns torch tensors over graphc's output buffers."""

    def __init__(self, program: PartitionProgram, returns_tuple: bool) -> None:
        super().__init__()
        self.program = program
        self.returns_tuple = returns_tuple

    def forward(self, *args: Any) -> Any:
        outputs = self.program.run(args)
        return tuple(outputs) if self.returns_tuple else outputs[0]


def direct_call(fused: torch.fx.GraphModule) -> Optional[Any]:
    """When the whole graph is one graphc partition (placeholders, the kernel,
    the picks of its outputs), a function that runs it straight away: no
    GraphModule or nn.Module call around it, which on a small model costs
    more than the run."""
    kernels = [n for n in fused.graph.nodes if n.op == "call_module"]
    if len(kernels) != 1 or not isinstance(getattr(fused, kernels[0].target), GraphcKernel):
        return None
    kernel: GraphcKernel = getattr(fused, kernels[0].target)
    placeholders = [n for n in fused.graph.nodes if n.op == "placeholder"]
    if list(kernels[0].args) != placeholders[:len(kernels[0].args)]:
        return None
    if any(n.op not in ("placeholder", "call_module", "output") and n.target is not operator.getitem
           for n in fused.graph.nodes):
        return None
    returned = fused.graph.output_node().args[0]
    if not isinstance(returned, (tuple, list)):
        return None
    picks: List[int] = []
    for r in returned:
        if r is kernels[0] and not kernel.returns_tuple:
            picks.append(0)
        elif isinstance(r, torch.fx.Node) and r.target is operator.getitem and r.args[0] is kernels[0]:
            picks.append(r.args[1])
        else:
            return None
    program = kernel.program

    def call(*args: Any) -> Any:
        outputs = program.run(args)
        return [outputs[k] for k in picks]

    return call


# Executables by (graph text, device, frozen constants' identity): a graph
# Dynamo hands over again (a recompile, a second model of the same
# structure) is not compiled again.
_CACHE: "OrderedDict[Any, graphc.Executable]" = OrderedDict()
_CACHE_SIZE = 64


def clear_cache() -> None:
    _CACHE.clear()


def compile_partition(name: str, text: str, constants: Dict[str, torch.Tensor], device: str, dump_dir: str,
                      record: logs.CompileRecord, fresh: bool = False) -> graphc.Executable:
    """The partition compiled with `constants` frozen in; from the cache
    unless `fresh` (the constants were written where their memory and
    versions do not show it)."""
    anonymous = text.replace(f"graph @{name}(", "graph @(", 1)  # the same graph under another compile's name
    key = (hashlib.sha256(anonymous.encode()).hexdigest(), device,
           tuple((k, t.data_ptr(), t._version, tuple(t.shape), t.dtype) for k, t in sorted(constants.items())))
    exe = None if fresh else _CACHE.get(key)
    if exe is not None:
        _CACHE.move_to_end(key)
        record.cache_hits += 1
        return exe
    start = time.perf_counter()
    exe = graphc.compile(text, device=device, constants={k: t.detach().contiguous() for k, t in constants.items()},
                         dump_dir=dump_dir or None)
    record.stages["graphc compile"] = record.stages.get("graphc compile", 0.0) + time.perf_counter() - start
    _CACHE[key] = exe
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return exe


def keep_reads_before_input_writes(partitions: List[Any], record: logs.CompileRecord) -> None:
    """Takes out of its partition each ``copy_`` into a graph input that a
    node outside the partition reads while depending on the partition: that
    node runs after the partition's call, so graphc writing the input in
    place during the call would change what it reads (eager reads it before
    the copy). The copy then runs in PyTorch, after that read, as eager."""
    for partition in partitions:
        copies = [n for n in partition.nodes if n.target is aten.copy_.default]
        if not copies:
            continue
        downstream: Set[torch.fx.Node] = set()
        frontier = [u for n in partition.nodes for u in n.users if u not in partition.nodes]
        while frontier:
            n = frontier.pop()
            if n not in downstream:
                downstream.add(n)
                frontier.extend(n.users)
        for c in copies:
            dst = c.args[0]
            late = [u for u in dst.users if u is not c and u not in partition.nodes and u in downstream]
            if late:
                del partition.nodes[c]
                reason = f"{late[0].target} ({late[0].name}) in PyTorch reads the input after graphc's partition runs"
                record.eager_ops.append((str(c.target), reason))
                logs.log("graph_breaks", f"{record.name}: {c.target} ({c.name}) runs in PyTorch: {reason}")


def order_reads_before_input_writes(fused: torch.fx.GraphModule) -> None:
    """Puts every other reader of a graph input before the partition call
    that copies into it (eager reads it before the copy; fusing placed the
    call where the partition's last node was, which may be before such a
    reader). A reader that depends on the call was taken care of by
    keep_reads_before_input_writes, so the order exists: a stable
    topological sort with those extra edges."""
    nodes = list(fused.graph.nodes)
    position = {n: i for i, n in enumerate(nodes)}
    before: Dict[torch.fx.Node, List[torch.fx.Node]] = {}  # node -> readers that must run first
    for call in nodes:
        if call.op != "call_module" or not call.target.startswith("fused_"):
            continue
        sub = getattr(fused, call.target)
        inner = [n for n in sub.graph.nodes if n.op == "placeholder"]
        for c in sub.graph.nodes:
            if c.target is aten.copy_.default and c.args[0] in inner:
                outer = call.args[inner.index(c.args[0])]
                late = [u for u in outer.users if u is not call and position[u] > position[call]]
                before.setdefault(call, []).extend(late)
    if not any(before.values()):
        return
    waiting = {n: len(set(n.all_input_nodes) | set(before.get(n, []))) for n in nodes}
    followers: Dict[torch.fx.Node, List[torch.fx.Node]] = {n: list(n.users) for n in nodes}
    for call, readers in before.items():
        for r in set(readers):
            followers[r].append(call)
    ready = [position[n] for n in nodes if waiting[n] == 0]  # a heap of positions: the earliest first
    heapq.heapify(ready)
    order: List[torch.fx.Node] = []
    while ready:
        n = nodes[heapq.heappop(ready)]
        order.append(n)
        for f in followers[n]:
            waiting[f] -= 1
            if waiting[f] == 0:
                heapq.heappush(ready, position[f])
    assert len(order) == len(nodes), "a reader of an input depends on the partition that writes it"
    for prev, n in zip(order, order[1:]):
        prev.append(n)
    fused.graph.lint()


def pass_missing_symbols(call: torch.fx.Node, sub: torch.fx.GraphModule,
                         symbol_inputs: Dict[str, torch.fx.Node]) -> None:
    """A partition whose sizes use a symbol none of its inputs carries (its
    value reached the partition only inside a sum, `s0 + s1`, computed in
    Python) gets the graph's SymInt input for it as one more input, which
    the translation passes as a size carrier."""
    needed: Set[str] = set()
    carried: Set[str] = set()
    for n in sub.graph.nodes:
        v = val(n)
        for t in (v if isinstance(v, (tuple, list)) else [v]):
            if isinstance(t, (torch.Tensor, torch.SymInt)):
                needed |= {str(s) for s in free_symbols(t)}
        # What graphc binds: a tensor dim's symbols when it is a product (not
        # a sum), a SymInt input's when it is one symbol (translate's carrier).
        if n.op == "placeholder" and isinstance(v, torch.Tensor):
            for size in v.shape:
                if isinstance(size, torch.SymInt) and not size.node.expr.expand().is_Add:
                    carried |= {str(s) for s in size.node.expr.free_symbols}
        elif n.op == "placeholder" and isinstance(v, torch.SymInt) and v.node.expr.is_Symbol:
            carried.add(str(v.node.expr))
    missing = sorted(s for s in needed - carried if s in symbol_inputs)
    if not missing:
        return
    last = [n for n in sub.graph.nodes if n.op == "placeholder"][-1]
    for symbol in missing:
        with sub.graph.inserting_after(last):
            last = sub.graph.placeholder(f"size_{symbol}")
        last.meta["val"] = val(symbol_inputs[symbol])
        call.args = (*call.args, symbol_inputs[symbol])
    sub.recompile()


def partition_and_compile(gm: torch.fx.GraphModule, frozen: Dict[str, torch.Tensor], device: str,
                          dump_dir: str, record: logs.CompileRecord, dumps: Dict[str, str],
                          checked: bool = False, part: str = "") -> torch.fx.GraphModule:
    """`gm` with each supported partition replaced by a GraphcKernel;
    `frozen` maps placeholders (by name) to the weights bound as constants;
    `checked`, whether each partition also runs in eager PyTorch on every
    call to compare (check.py); `part`, which graph of a training compile
    `gm` is ("fw", "bw"; "" for an inference graph), in partition names."""
    start = time.perf_counter()
    aten_experts.register_custom_ops()
    views = returned_views(gm.graph)
    support = GraphcSupport(views, storage_bound(gm.graph, views))
    partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    keep_reads_before_input_writes(partitions, record)
    partitions = [p for p in partitions if any(n.target not in SHAPE_OPS for n in p.nodes)]
    for node, reason in support.reasons.items():
        record.eager_ops.append((str(node.target), reason))
        logs.log("graph_breaks", f"{record.name}: {node.target} ({node.name}) runs in PyTorch: {reason}")
    fused = partitioner.fuse_partitions(partitions) if partitions else gm
    order_reads_before_input_writes(fused)
    record.stages["partition"] = time.perf_counter() - start
    symbol_inputs = {str(val(n).node.expr): n for n in fused.graph.nodes
                     if n.op == "placeholder" and isinstance(val(n), torch.SymInt) and val(n).node.expr.is_Symbol}
    for node in list(fused.graph.nodes):
        if node.op != "call_module" or not node.target.startswith("fused_"):
            continue
        sub = getattr(fused, node.target)
        name = f"{record.name}_{part}_{node.target}" if part else f"{record.name}_{node.target}"
        pass_missing_symbols(node, sub, symbol_inputs)
        try:
            start = time.perf_counter()
            translation = translate(sub, name, HANDLERS)
            params = translation.params
            record.stages["translate"] = record.stages.get("translate", 0.0) + time.perf_counter() - start
            placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
            weight_positions = [i for i, outer in enumerate(node.args)
                                if params[i] is not None and isinstance(outer, torch.fx.Node)
                                and outer.op == "placeholder" and outer.name in frozen]
            examples = [frozen[outer.name] if i in weight_positions else None for i, outer in enumerate(node.args)]
            program = PartitionProgram(name, translation, weight_positions, placeholders, output_nodes(sub)[0],
                                       examples, device, dump_dir, record, sub if checked else None,
                                       layouts_known=not part)
        except (Unsupported, graphc.Error) as e:
            record.failed_partitions.append(f"{name}: {e}")
            logs.log("graph_breaks", f"{name} runs in PyTorch: graphc could not compile it: {e}")
            continue
        _, returns_tuple = output_nodes(sub)
        setattr(fused, node.target, GraphcKernel(program, returns_tuple))
        record.graphs.append(translation.text)
        ops = sum(1 for n in sub.graph.nodes if n.op == "call_function")
        record.partitions += 1
        record.graphc_ops += ops
        logs.log("graph_breaks", f"{name}: {ops} ops compiled by graphc ({len(weight_positions)} weights frozen)")
        if program.exe.dump_dir:
            dumps_here = dict(dumps)
            dumps_here["fx_partition.py"] = sub.code
            for file, content in dumps_here.items():
                with open(os.path.join(program.exe.dump_dir, file), "w") as f:
                    f.write(content)
    fused.recompile()
    return fused
