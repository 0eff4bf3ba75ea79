"""An FX graph of core ATen ops as ``.graph`` text.

``translate(gm)`` writes one graphc graph for a partition the partitioner
found supported: each tensor placeholder a parameter, each ATen node one
or a few graphc statements (``aten_ops.py`` says which), the outputs the
``return``. Types come from the nodes' fake-tensor metadata, so a dynamic
size Dynamo traced as the SymInt ``s0`` is the graphc symbol ``s0`` and one
compile serves every size.

Names in the text are generated (``%v12``), never the FX graph's, so no
identifier of the user's model reaches graphc's generated source.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx

DTYPES = {
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float32: "f32",
    torch.float64: "f64",
    torch.int8: "i8",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.bool: "bool",
}


class Unsupported(Exception):
    """A node graphc does not take; the message says why (graph-break logs)."""


def dtype_name(dtype: torch.dtype) -> str:
    if dtype not in DTYPES:
        raise Unsupported(f"dtype {dtype} is not one of graphc's")
    return DTYPES[dtype]


def monomial_text(term: Any) -> str:
    """One term of a size (``3*s0*s1``) as graphc writes it, its sign included."""
    coeff, factors = term.as_coeff_mul()
    names: List[str] = []
    for f in factors:
        if f.is_Symbol:
            names.append(str(f))
        elif f.is_Pow and f.base.is_Symbol and f.exp.is_Integer and int(f.exp) > 0:
            names += [str(f.base)] * int(f.exp)
        else:
            raise Unsupported(f"size {term} is not a sum of products of symbols")
    if not coeff.is_Integer:
        raise Unsupported(f"size {term} has a fractional coefficient")
    c = int(coeff)
    if not names:
        return str(c)
    return "*".join(([str(c)] if c not in (1, -1) else []) + sorted(names)).join(("-" if c == -1 else "", ""))


def dim_text(size: Any) -> str:
    """A static size, or a SymInt as graphc writes it: a symbol (``s0``), a
    factor times symbols (``2*s0``, ``s0*s1``), or a sum of such terms in
    parentheses (``(s0+1)``), which graphc reads into its canonical form."""
    if isinstance(size, int):
        return str(size)
    if isinstance(size, torch.SymInt):
        expr = size.node.expr.expand()
        if expr.is_Integer:
            return str(int(expr))
        if expr.is_Add:
            terms = [monomial_text(t) for t in expr.as_ordered_terms()]
            return "(" + "".join(t if k == 0 or t.startswith("-") else "+" + t for k, t in enumerate(terms)) + ")"
        text = monomial_text(expr)
        if text.startswith("-") or text == "0":
            raise Unsupported(f"size {expr} is not positive")
        return text
    raise Unsupported(f"size {size!r} is not an int or SymInt")


def type_text(val: torch.Tensor) -> str:
    return f"{dtype_name(val.dtype)}[{', '.join(dim_text(s) for s in val.shape)}]"


def literal(value: Any, dtype: torch.dtype) -> str:
    """A Python scalar as a literal of ``dtype``'s kind."""
    if isinstance(value, bool) or dtype == torch.bool:
        return "true" if value else "false"
    if dtype.is_floating_point:
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, float):
        raise Unsupported(f"float {value} used as an integer")
    return str(int(value))


def attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(attr_text(v) for v in value) + "]"
    if isinstance(value, float):
        return literal(value, torch.float32)
    if isinstance(value, Raw):
        return value.text
    return str(value)


@dataclass(frozen=True)
class Raw:
    """Attribute text written as is: a size (``s0``, ``4*s0``) in a reshape's
    shape, a dtype (``i32``)."""

    text: str


Dim = Raw


def val(node: Any) -> Any:
    """The fake value FX recorded for a node (a tensor, SymInt, tuple)."""
    if isinstance(node, torch.fx.Node) and node.op == "get_attr" and "val" not in node.meta:
        return attribute(node)
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else node


def attribute(node: torch.fx.Node) -> Any:
    """What a get_attr node reads: a tensor constant of the graph (a
    ``torch.tensor([0])`` in the model's code), or a cond's branch."""
    value: Any = node.graph.owning_module
    for part in str(node.target).split("."):
        value = getattr(value, part)
    return value


@dataclass
class Builder:
    """The text of one graph being written, and the value of each FX node."""

    name: str
    lines: List[str] = field(default_factory=list)
    params: List[str] = field(default_factory=list)
    values: Dict[torch.fx.Node, Any] = field(default_factory=dict)
    counter: int = 0
    indent: str = "  "

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    constants: Dict[str, torch.Tensor] = field(default_factory=dict)
    # Bounds checks: (a bool[] value, true when an index is out of range;
    # what read it), returned after the graph's outputs (indices.py).
    checks: List[Tuple[str, str]] = field(default_factory=list)
    # Graph inputs written in place (a copy_ into a placeholder): (the new
    # value, the placeholder), returned last, each `updates` its parameter.
    updates: List[Tuple[str, torch.fx.Node]] = field(default_factory=list)
    # SymInt nodes used as numbers, each made an i64[] once (symint).
    sizes: Dict[torch.fx.Node, str] = field(default_factory=dict)

    def param(self, node: torch.fx.Node) -> str:
        name = self.fresh()
        self.params.append(f"{name}: {type_text(val(node))}")
        self.values[node] = name
        return name

    def get_attr(self, node: torch.fx.Node) -> None:
        """A get_attr node: a tensor constant becomes a parameter bound to its
        value when the graph is compiled; a cond's branch stays the node,
        for the cond's handler."""
        value = attribute(node)
        if isinstance(value, torch.Tensor):
            if value.device.type != "cpu":
                raise Unsupported(f"a constant on {value.device}")
            self.constants[self.param(node)[1:]] = value
        else:
            self.values[node] = node

    def emit(self, op: str, operands: Sequence[str], attrs: Optional[Dict[str, Any]] = None, type: str = "",
             results: int = 1) -> Any:
        names = [self.fresh() for _ in range(results)]
        attr = ""
        if attrs:
            attr = " {" + ", ".join(f"{k} = {attr_text(v)}" for k, v in attrs.items() if v is not None) + "}"
        result_type = f" : {type}" if type else ""
        self.lines.append(f"{self.indent}{', '.join(names)} = {op}({', '.join(operands)}){attr}{result_type}")
        return names[0] if results == 1 else tuple(names)

    def value(self, arg: Any) -> str:
        """The graphc value of a tensor argument."""
        if not isinstance(arg, torch.fx.Node) or arg not in self.values:
            raise Unsupported(f"argument {arg!r} is not a tensor of this graph")
        v = self.values[arg]
        if not isinstance(v, str):
            raise Unsupported(f"{arg.name} is not one tensor")
        return v

    def cast_to(self, value: str, have: torch.dtype, want: torch.dtype) -> str:
        """A graphc value of dtype `have` as `want`."""
        return value if have == want else self.emit("cast", [value], {"dtype": Raw(dtype_name(want))})

    def symint(self, node: torch.fx.Node) -> str:
        """A SymInt node's value as an i64[] (a size used as a number: a
        prompt length added to a cache's token count): the count of a
        tensor of that size, since graphc binds sizes from shapes (the
        symbol reaches the graph through a size carrier if nothing else)."""
        if node not in self.sizes:
            ones = self.emit("full", [], {"value": 1}, type=f"i64[{dim_text(val(node))}]")
            self.sizes[node] = self.emit("sum", [ones], {"dims": [0], "keepdim": False})
        return self.sizes[node]

    def cast(self, arg: Any, dtype: torch.dtype) -> str:
        """``arg`` (a tensor node, a SymInt node or a Python scalar) as ``dtype``."""
        if not isinstance(arg, torch.fx.Node):
            return literal(arg, dtype)
        if isinstance(val(arg), torch.SymInt):
            return self.cast_to(self.symint(arg), torch.int64, dtype)
        v = self.value(arg)
        if val(arg).dtype == dtype:
            return v
        return self.emit("cast", [v], {"dtype": Raw(dtype_name(dtype))})


Handler = Callable[[Builder, torch.fx.Node], Any]


def translate_nodes(b: Builder, nodes: Sequence[torch.fx.Node], handlers: Dict[Any, Handler]) -> List[str]:
    """Translates a graph's nodes into ``b``; returns what its output node returns."""
    outputs: List[str] = []
    for node in nodes:
        if node.op == "placeholder":
            if isinstance(val(node), torch.Tensor):
                b.param(node)
        elif node.op == "get_attr":
            b.get_attr(node)
        elif node.op == "call_function":
            if node.target is operator.getitem:
                src = b.values.get(node.args[0])
                if not isinstance(src, tuple) or src[node.args[1]] is None:
                    raise Unsupported(f"{node.name} reads an output graphc does not compute")
                b.values[node] = src[node.args[1]]
                continue
            handler = handlers.get(node.target)
            if handler is None:
                raise Unsupported(f"{node.target} has no graphc translation")
            b.values[node] = handler(b, node)
        elif node.op == "output":
            returned = node.args[0]
            returned = returned if isinstance(returned, (tuple, list)) else (returned,)
            outputs = [b.value(r) for r in returned]
        else:
            raise Unsupported(f"{node.op} nodes are not translated")
    return outputs


@dataclass
class Translation:
    """A partition as graphc text: `params[i]`, the graphc parameter
    placeholder i became (None for a SymInt); `carriers`, the placeholders
    (SymInts) whose value no tensor's size holds, each passed at run time
    as a tensor of that size, the last parameters (graphc binds symbolic
    sizes from its inputs' shapes); `constants`, the parameters the graph's
    tensor constants became, with their values; `checks`, what each of the
    bool[] outputs after the graph's own says when true (an index out of
    range, which eager PyTorch raises for); `updated`, the placeholders
    written in place by the results after those, one each, in order."""

    text: str
    params: List[Optional[str]]
    carriers: List[int]
    constants: Dict[str, torch.Tensor]
    checks: List[str]
    updated: List[int] = field(default_factory=list)


def translate(gm: torch.fx.GraphModule, name: str, handlers: Dict[Any, Handler]) -> Translation:
    """The ``.graph`` text of ``gm`` (one graph named ``@name``)."""
    b = Builder(name)
    outputs = translate_nodes(b, list(gm.graph.nodes), handlers)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    params = [b.values[n][1:] if n in b.values else None for n in placeholders]
    # The symbols the tensor parameters' shapes bind ("%v3: f32[s0, 2*s1]").
    # A product dim binds its symbols (graphc solves 4*s0 for s0); a sum
    # ((s0+1)) binds none.
    dims = [d.strip() for p in b.params for d in p[p.index("[") + 1:p.rindex("]")].split(",")]
    bound = {symbol for d in dims if "(" not in d for symbol in re.findall(r"[A-Za-z_]\w*", d)}
    carriers = []
    for i, node in enumerate(placeholders):
        v = val(node)
        if isinstance(v, torch.SymInt) and v.node.expr.is_Symbol and str(v.node.expr) not in bound:
            b.params.append(f"{b.fresh()}: i8[{v.node.expr}]")
            bound.add(str(v.node.expr))
            carriers.append(i)
    returned, _ = output_nodes(gm)
    result_types = [type_text(val(node)) for node in returned] + ["bool[]"] * len(b.checks)
    outputs += [flag for flag, _ in b.checks]
    for value, dst in b.updates:
        result_types.append(f"{type_text(val(dst))} updates {b.values[dst]}")
        outputs.append(value)
    body = "\n".join(b.lines)
    text = (f"graph @{name}({', '.join(b.params)}) -> ({', '.join(result_types)}) {{\n"
            f"{body}\n  return {', '.join(outputs)}\n}}\n")
    updated = [placeholders.index(dst) for _, dst in b.updates]
    return Translation(text, params, carriers, b.constants, [what for _, what in b.checks], updated)


def output_nodes(gm: torch.fx.GraphModule) -> Tuple[List[Any], bool]:
    """The nodes ``gm`` returns, and whether it returns them as a tuple."""
    returned = gm.graph.output_node().args[0]
    if isinstance(returned, (tuple, list)):
        return list(returned), True
    return [returned], False
