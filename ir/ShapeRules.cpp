// Type rules of the .graph ops: dtype checks (no implicit promotion),
// NumPy/PyTorch broadcasting over static and symbolic dims, and the shape
// arithmetic of reductions, matmul and the shape ops. The parser, the
// verifier and infer-types all call these, so an op's type has exactly one
// definition.
#include "ir/ShapeRules.h"

#include <algorithm>
#include <cctype>

#include <climits>
#include <fmt/format.h>

#include "ir/SizeMath.h"

namespace graphc::ir::rules {

namespace {

TypeRuleResult fail(std::string message) { return {{}, std::move(message)}; }
TypeRuleResult one(TensorType t) { return {{std::move(t)}, {}}; }

int64_t intAttr(const AttrMap& attrs, std::string_view name, int64_t fallback) {
  const Attribute* a = attrs.find(name);
  return a ? a->i : fallback;
}

std::string dt(DType t) { return std::string(dtypeName(t)); }

/// Operand dtypes must match exactly: graphc never promotes.
std::string sameDType(const OpInfo& op, std::span<const TensorType> operands) {
  for (size_t k = 1; k < operands.size(); ++k)
    if (operands[k].dtype != operands[0].dtype)
      return fmt::format("operand dtypes of '{}' differ: {} vs {} (graphc does not promote; insert a cast)", op.name,
                         dt(operands[0].dtype), dt(operands[k].dtype));
  return {};
}

std::string needFloat(const OpInfo& op, DType t) {
  if (isFloat(t)) return {};
  return fmt::format("'{}' needs a floating-point operand, got {} (insert a cast)", op.name, dt(t));
}

/// A product of sizes kept as an integer times a sorted multiset of symbols,
/// so that reshape can check element counts of symbolic shapes.
/// A shape attribute's entry as a dim: an integer, or a symbolic size's
/// text (`B`, `4*B`); nullopt for anything else.
std::optional<Dim> attrDim(const Attribute& a) {
  if (a.kind == Attribute::Kind::Symbol) return parseDim(a.s);
  if (a.kind == Attribute::Kind::Int) return Dim::of(a.i);
  return std::nullopt;
}

std::vector<TensorType> typesOf(std::span<const TensorType> s) { return {s.begin(), s.end()}; }

}  // namespace

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> reducedAxes(const AttrMap& attrs, int64_t rank) {
  std::vector<int64_t> dims;
  const Attribute* a = attrs.find("dims");
  if (!a || a->list.empty())
    for (int64_t k = 0; k < rank; ++k) dims.push_back(k);
  else
    for (const Attribute& d : a->list) dims.push_back(*normalizeAxis(d.i, rank));
  return dims;
}

std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b, std::string& error) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    // Align trailing dims; a missing leading dim acts as 1.
    const Dim one = Dim::of(1);
    const Dim& da = k < rank - a.size() ? one : a[k - (rank - a.size())];
    const Dim& db = k < rank - b.size() ? one : b[k - (rank - b.size())];
    if (da == db || db.isStatic(1)) {
      out[k] = da;
    } else if (da.isStatic(1)) {
      out[k] = db;
    } else {
      error = fmt::format("shapes {} and {} do not broadcast: size {} vs {}", toString(a), toString(b), toString(da),
                          toString(db));
      return std::nullopt;
    }
  }
  return out;
}

// ---- pointwise -------------------------------------------------------------

TypeRuleResult unarySigned(const OpInfo& op, const TypeRuleInput& in) {
  if (in.operands[0].dtype == DType::Bool) return fail(fmt::format("'{}' does not accept bool operands", op.name));
  return one(in.operands[0]);
}

TypeRuleResult unaryFloat(const OpInfo& op, const TypeRuleInput& in) {
  if (auto e = needFloat(op, in.operands[0].dtype); !e.empty()) return fail(e);
  return one(in.operands[0]);
}

TypeRuleResult gelu(const OpInfo& op, const TypeRuleInput& in) {
  if (const Attribute* a = in.attrs.find("approximate"); a && a->s != "none" && a->s != "tanh")
    return fail(fmt::format("attribute 'approximate' of 'gelu' must be \"none\" or \"tanh\", got {}", toString(*a)));
  return unaryFloat(op, in);
}

TypeRuleResult unaryToBool(const OpInfo&, const TypeRuleInput& in) {
  return one(TensorType{DType::Bool, in.operands[0].shape});
}

TypeRuleResult cast(const OpInfo&, const TypeRuleInput& in) {
  return one(TensorType{in.attrs.find("dtype")->dtype, in.operands[0].shape});
}

namespace {
TypeRuleResult broadcastAll(const OpInfo& op, std::span<const TensorType> operands, DType resultType) {
  Shape shape = operands[0].shape;
  for (size_t k = 1; k < operands.size(); ++k) {
    std::string error;
    auto s = broadcastShapes(shape, operands[k].shape, error);
    if (!s) return fail(fmt::format("operands of '{}': {}", op.name, error));
    shape = *s;
  }
  return one(TensorType{resultType, shape});
}
}  // namespace

TypeRuleResult binaryArith(const OpInfo& op, const TypeRuleInput& in) {
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (in.operands[0].dtype == DType::Bool)
    return fail(fmt::format("'{}' does not accept bool operands (use logical_and/logical_or)", op.name));
  return broadcastAll(op, in.operands, in.operands[0].dtype);
}

TypeRuleResult binaryFloat(const OpInfo& op, const TypeRuleInput& in) {
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (auto e = needFloat(op, in.operands[0].dtype); !e.empty()) return fail(e);
  return broadcastAll(op, in.operands, in.operands[0].dtype);
}

TypeRuleResult compare(const OpInfo& op, const TypeRuleInput& in) {
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  return broadcastAll(op, in.operands, DType::Bool);
}

TypeRuleResult where(const OpInfo& op, const TypeRuleInput& in) {
  if (in.operands[0].dtype != DType::Bool)
    return fail(fmt::format("the condition of 'where' must be bool, got {}", dt(in.operands[0].dtype)));
  if (auto e = sameDType(op, in.operands.subspan(1)); !e.empty()) return fail(e);
  return broadcastAll(op, in.operands, in.operands[1].dtype);
}

TypeRuleResult clamp(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  if (x.dtype == DType::Bool) return fail("'clamp' does not accept bool operands");
  const Attribute* lo = in.attrs.find("min");
  const Attribute* hi = in.attrs.find("max");
  if (!lo && !hi) return fail("'clamp' needs at least one of the attributes 'min' and 'max'");
  for (const Attribute* bound : {lo, hi})
    if (bound && bound->kind == Attribute::Kind::Float && !isFloat(x.dtype))
      return fail(fmt::format("'{}' of {} takes integer bounds, got {}", op.name, dt(x.dtype), toString(*bound)));
  return one(x);
}

// ---- reductions and normalisation -------------------------------------------

TypeRuleResult reduce(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const int64_t rank = x.rank();
  std::vector<bool> reduced(rank, false);
  if (const Attribute* dims = in.attrs.find("dims"); dims && !dims->list.empty()) {
    for (const Attribute& d : dims->list) {
      auto axis = normalizeAxis(d.i, rank);
      if (!axis) return fail(fmt::format("dim {} of '{}' is out of range for rank {}", d.i, op.name, rank));
      if (reduced[*axis])
        return fail(fmt::format("dims {} of '{}' name dim {} twice", toString(*dims), op.name, *axis));
      reduced[*axis] = true;
    }
  } else {
    std::fill(reduced.begin(), reduced.end(), true);  // no dims: reduce everything
  }
  const Attribute* keep = in.attrs.find("keepdim");
  const bool keepdim = keep && keep->b;
  Shape shape;
  for (int64_t k = 0; k < rank; ++k) {
    if (!reduced[k])
      shape.push_back(x.shape[k]);
    else if (keepdim)
      shape.push_back(Dim::of(1));
  }
  DType result = x.dtype;
  if (op.id == OpId::Mean) {
    if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  } else if ((op.id == OpId::Sum || op.id == OpId::Prod) && !isFloat(x.dtype)) {
    result = DType::I64;  // as torch.sum and torch.prod: integer and bool sums and products are i64
  }
  return one(TensorType{result, shape});
}

TypeRuleResult softmax(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  int64_t dim = in.attrs.find("dim")->i;
  if (!normalizeAxis(dim, std::max<int64_t>(x.rank(), 1)))
    return fail(fmt::format("dim {} of '{}' is out of range for rank {}", dim, op.name, x.rank()));
  return one(x);
}

TypeRuleResult argReduce(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const int64_t d = in.attrs.find("dim")->i;
  auto axis = normalizeAxis(d, std::max<int64_t>(x.rank(), 1));
  if (!axis) return fail(fmt::format("dim {} of '{}' is out of range for rank {}", d, op.name, x.rank()));
  if (x.dtype == DType::Bool) return fail(fmt::format("'{}' of a bool tensor: cast it first", op.name));
  const Attribute* keep = in.attrs.find("keepdim");
  Shape shape = x.shape;
  if (x.rank() > 0) {
    if (keep && keep->b)
      shape[static_cast<size_t>(*axis)] = Dim::of(1);
    else
      shape.erase(shape.begin() + *axis);
  }
  return one(TensorType{DType::I64, shape});
}

TypeRuleResult cumsum(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const int64_t d = in.attrs.find("dim")->i;
  if (!normalizeAxis(d, std::max<int64_t>(x.rank(), 1)))
    return fail(fmt::format("dim {} of '{}' is out of range for rank {}", d, op.name, x.rank()));
  // As torch.cumsum: integer and bool inputs sum in i64.
  return one(TensorType{isFloat(x.dtype) ? x.dtype : DType::I64, x.shape});
}

namespace {
/// The normalisations' `eps`, when given, must be positive.
std::string positiveEps(const OpInfo& op, const AttrMap& attrs) {
  if (const Attribute* eps = attrs.find("eps"); eps && !(eps->asDouble() > 0))
    return fmt::format("'eps' of '{}' must be positive, got {}", op.name, toString(*eps));
  return {};
}
}  // namespace

TypeRuleResult layerNorm(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& w = in.operands[1];
  if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (w.rank() == 0 || w.rank() > x.rank())
    return fail(fmt::format("the weight of 'layer_norm' must have rank 1 to {}, got {}", x.rank(), toString(w)));
  Shape trailing(x.shape.end() - w.rank(), x.shape.end());
  if (trailing != w.shape)
    return fail(fmt::format("the weight {} of 'layer_norm' does not match the trailing dims {} of the input",
                            toString(w.shape), toString(trailing)));
  if (in.operands.size() == 3 && in.operands[2].shape != w.shape)
    return fail(fmt::format("the bias {} of 'layer_norm' does not match its weight {}", toString(in.operands[2].shape),
                            toString(w.shape)));
  if (auto e = positiveEps(op, in.attrs); !e.empty()) return fail(e);
  return one(x);
}

TypeRuleResult batchNorm(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (x.rank() < 2) return fail(fmt::format("'batch_norm' needs an input [N, C, ...], got {}", toString(x)));
  static const char* names[] = {"", "mean", "var", "weight", "bias"};
  for (size_t k = 1; k < 5; ++k)
    if (in.operands[k].shape != Shape{x.shape[1]})
      return fail(fmt::format("the {} {} of 'batch_norm' must be [C] = [{}]", names[k], toString(in.operands[k].shape),
                              toString(x.shape[1])));
  if (auto e = positiveEps(op, in.attrs); !e.empty()) return fail(e);
  return one(x);
}

TypeRuleResult groupNorm(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (x.rank() < 2) return fail(fmt::format("'group_norm' needs an input [N, C, ...], got {}", toString(x)));
  const Dim& c = x.shape[1];
  const int64_t groups = in.attrs.find("groups")->i;
  if (!c.isStatic()) return fail(fmt::format("'group_norm' needs a static channel count, got {}", toString(x)));
  if (groups < 1 || c.size % groups != 0)
    return fail(fmt::format("'group_norm' groups {} must divide the {} channels", groups, c.size));
  for (size_t k = 1; k < 3; ++k)
    if (in.operands[k].shape != Shape{c})
      return fail(fmt::format("the {} {} of 'group_norm' must be [C] = [{}]", k == 1 ? "weight" : "bias",
                              toString(in.operands[k].shape), c.size));
  if (auto e = positiveEps(op, in.attrs); !e.empty()) return fail(e);
  return one(x);
}

// ---- windows ------------------------------------------------------------------

namespace {

/// A window op's per-dim attribute: `k` values (or 2k for padding: the
/// begins, then the ends), `fallback` when absent.
std::optional<std::vector<int64_t>> windowAttr(const AttrMap& attrs, std::string_view name, size_t count,
                                               int64_t fallback, std::string& error, const OpInfo& op) {
  const Attribute* a = attrs.find(name);
  std::vector<int64_t> out(count, fallback);
  if (!a) return out;
  if (a->list.size() != count) {
    error = fmt::format("'{}' of '{}' needs {} values, got {}", name, op.name, count, a->list.size());
    return std::nullopt;
  }
  for (size_t k = 0; k < count; ++k) out[k] = a->list[k].i;
  return out;
}

}  // namespace

WindowGeometry windowGeometry(const OpInfo& op, const AttrMap& attrs, size_t spatial, std::string& error) {
  WindowGeometry g;
  auto stride = windowAttr(attrs, "stride", spatial, 1, error, op);
  auto padding = stride ? windowAttr(attrs, "padding", 2 * spatial, 0, error, op) : std::nullopt;
  auto dilation = padding ? windowAttr(attrs, "dilation", spatial, 1, error, op) : std::nullopt;
  if (!dilation) return g;
  auto outPad = op.id == OpId::ConvTranspose ? windowAttr(attrs, "output_padding", spatial, 0, error, op)
                                             : std::optional<std::vector<int64_t>>(std::vector<int64_t>(spatial, 0));
  if (!outPad) return g;
  g.stride = *stride;
  g.padBegin.assign(padding->begin(), padding->begin() + static_cast<std::ptrdiff_t>(spatial));
  g.padEnd.assign(padding->begin() + static_cast<std::ptrdiff_t>(spatial), padding->end());
  g.dilation = *dilation;
  g.outputPadding = *outPad;
  for (size_t k = 0; k < spatial; ++k) {
    if (g.stride[k] < 1 || g.dilation[k] < 1 || g.padBegin[k] < 0 || g.padEnd[k] < 0 || g.outputPadding[k] < 0) {
      error = fmt::format("'{}' needs strides and dilations of at least 1 and paddings of at least 0", op.name);
      return g;
    }
  }
  g.valid = true;
  return g;
}

namespace {

/// Checks an input [N, C, *spatial] whose spatial dims are static.
std::string spatialInput(const OpInfo& op, const TensorType& x, size_t spatial) {
  if (static_cast<size_t>(x.rank()) != spatial + 2)
    return fmt::format("'{}' with {} spatial dims needs an input [N, C, {} spatial], got {}", op.name, spatial, spatial,
                       toString(x));
  if (!x.shape[1].isStatic()) return fmt::format("'{}' needs a static channel count, got {}", op.name, toString(x));
  for (size_t k = 2; k < x.shape.size(); ++k)
    if (!x.shape[k].isStatic())
      return fmt::format("'{}' needs static spatial sizes, got {} (a batch size may be symbolic)", op.name,
                         toString(x));
  return {};
}

}  // namespace

TypeRuleResult conv(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& w = in.operands[1];
  if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (w.rank() < 3 || !w.isStatic())
    return fail(
        fmt::format("the weight of '{}' must be a static [O, C/groups, *kernel], got {}", op.name, toString(w)));
  const size_t spatial = static_cast<size_t>(w.rank()) - 2;
  if (auto e = spatialInput(op, x, spatial); !e.empty()) return fail(e);
  std::string error;
  const WindowGeometry g = windowGeometry(op, in.attrs, spatial, error);
  if (!g.valid) return fail(error);
  const int64_t groups = intAttr(in.attrs, "groups", 1);
  const int64_t c = x.shape[1].size;
  const bool transposed = op.id == OpId::ConvTranspose;
  // conv: w [O, C/g, *k]; conv_transpose: w [C, O/g, *k].
  const int64_t inPerGroup = transposed ? w.shape[0].size : w.shape[1].size * groups;
  if (groups < 1 || c % groups != 0 || inPerGroup != c || (transposed && c % groups != 0))
    return fail(fmt::format("'{}' of an input {} with {} groups does not match the weight {}", op.name, toString(x),
                            groups, toString(w)));
  const int64_t out = transposed ? w.shape[1].size * groups : w.shape[0].size;
  if (!transposed && out % groups != 0)
    return fail(fmt::format("'{}': {} output channels do not split into {} groups", op.name, out, groups));
  if (in.operands.size() == 3 && in.operands[2].shape != Shape{Dim::of(out)})
    return fail(fmt::format("the bias {} of '{}' must be [{}]", toString(in.operands[2].shape), op.name, out));
  Shape shape = {x.shape[0], Dim::of(out)};
  for (size_t k = 0; k < spatial; ++k) {
    const int64_t size = x.shape[2 + k].size, kernel = w.shape[2 + k].size;
    const int64_t extent = g.dilation[k] * (kernel - 1) + 1;
    int64_t o;
    if (transposed) {
      o = (size - 1) * g.stride[k] - g.padBegin[k] - g.padEnd[k] + extent + g.outputPadding[k];
      if (g.outputPadding[k] >= std::max(g.stride[k], g.dilation[k]))
        return fail(fmt::format("'{}' output_padding must be smaller than the stride or the dilation", op.name));
    } else {
      const int64_t padded = size + g.padBegin[k] + g.padEnd[k];
      o = padded < extent ? 0 : (padded - extent) / g.stride[k] + 1;
    }
    if (o <= 0)
      return fail(fmt::format("'{}' of {} with kernel {} leaves no output in spatial dim {}", op.name, toString(x),
                              toString(w), k));
    shape.push_back(Dim::of(o));
  }
  return one(TensorType{x.dtype, shape});
}

TypeRuleResult convTranspose(const OpInfo& op, const TypeRuleInput& in) { return conv(op, in); }

TypeRuleResult pool(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  if (op.id == OpId::AvgPool)
    if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  if (x.dtype == DType::Bool) return fail(fmt::format("'{}' of a bool tensor: cast it first", op.name));
  const Attribute& kernelAttr = *in.attrs.find("kernel");
  const size_t spatial = kernelAttr.list.size();
  if (spatial == 0) return fail(fmt::format("'{}' needs a kernel of at least one dim", op.name));
  if (auto e = spatialInput(op, x, spatial); !e.empty()) return fail(e);
  std::string error;
  AttrMap attrs = in.attrs;
  if (!attrs.find("stride")) attrs.set("stride", kernelAttr);  // as torch: the stride defaults to the kernel
  const WindowGeometry g = windowGeometry(op, attrs, spatial, error);
  if (!g.valid) return fail(error);
  const Attribute* ceil = in.attrs.find("ceil_mode");
  Shape shape = {x.shape[0], x.shape[1]};
  for (size_t k = 0; k < spatial; ++k) {
    const int64_t kernel = kernelAttr.list[k].i;
    if (kernel < 1) return fail(fmt::format("'{}' kernel sizes must be at least 1", op.name));
    if (2 * std::max(g.padBegin[k], g.padEnd[k]) > kernel)
      return fail(fmt::format("'{}' padding must be at most half the kernel", op.name));
    const int64_t o = poolOutputSize(x.shape[2 + k].size, kernel, g, k, ceil && ceil->b);
    if (o <= 0)
      return fail(
          fmt::format("'{}' of {} with kernel {} leaves no output in spatial dim {}", op.name, toString(x), kernel, k));
    shape.push_back(Dim::of(o));
  }
  return one(TensorType{x.dtype, shape});
}

int64_t poolOutputSize(int64_t size, int64_t kernel, const WindowGeometry& g, size_t k, bool ceilMode) {
  const int64_t extent = g.dilation[k] * (kernel - 1) + 1;
  // torch's pooling_output_shape: floor((span + (ceil ? stride - 1 : 0)) /
  // stride) + 1, so in ceil mode a kernel longer than the padded input
  // still has one window (HF EfficientNet's AvgPool2d(hidden_dim,
  // ceil_mode=True) over 18×18), clipped to the input as the kernels do.
  const int64_t span = size + g.padBegin[k] + g.padEnd[k] - extent + (ceilMode ? g.stride[k] - 1 : 0);
  if (span < 0) return 0;
  int64_t o = span / g.stride[k] + 1;
  // As torch: the last window must start inside the input or its left padding.
  if (ceilMode && (o - 1) * g.stride[k] >= size + g.padBegin[k]) --o;
  return o;
}

// ---- linear algebra ---------------------------------------------------------

TypeRuleResult matmul(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& a = in.operands[0];
  const TensorType& b = in.operands[1];
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (auto e = needFloat(op, a.dtype); !e.empty()) return fail(e);
  if (a.rank() == 0 || b.rank() == 0) return fail("'matmul' operands must have rank 1 or more");
  // As torch.matmul: a vector operand gains a dim of 1 that the result drops.
  Shape sa = a.shape, sb = b.shape;
  if (a.rank() == 1) sa.insert(sa.begin(), Dim::of(1));
  if (b.rank() == 1) sb.push_back(Dim::of(1));
  const Dim& k1 = sa.back();
  const Dim& k2 = sb[sb.size() - 2];
  if (k1 != k2)
    return fail(fmt::format("'matmul' contraction sizes differ: {} @ {} ({} vs {})", toString(a), toString(b),
                            toString(k1), toString(k2)));
  std::string error;
  auto batch = broadcastShapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2), error);
  if (!batch) return fail("batch dims of 'matmul': " + error);
  Shape out = *batch;
  if (a.rank() > 1) out.push_back(sa[sa.size() - 2]);
  if (b.rank() > 1) out.push_back(sb.back());
  return one(TensorType{a.dtype, out});
}

TypeRuleResult linear(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& w = in.operands[1];
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  if (x.rank() == 0) return fail("the input of 'linear' must have rank 1 or more");
  if (w.rank() != 2) return fail(fmt::format("the weight of 'linear' must be [out, in], got {}", toString(w)));
  if (x.shape.back() != w.shape[1])
    return fail(fmt::format("'linear' input features {} do not match the weight {} ([out, in])",
                            toString(x.shape.back()), toString(w)));
  if (in.operands.size() == 3) {
    const TensorType& b = in.operands[2];
    if (b.rank() != 1 || b.shape[0] != w.shape[0])
      return fail(fmt::format("the bias of 'linear' must be [{}], got {}", toString(w.shape[0]), toString(b)));
  }
  Shape out = x.shape;
  out.back() = w.shape[0];
  return one(TensorType{x.dtype, out});
}

TypeRuleResult eigh(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& a = in.operands[0];
  if (a.dtype != DType::F32 && a.dtype != DType::F64)
    return fail(fmt::format("'eigh' supports f32 and f64, got {}", dt(a.dtype)));
  if (a.rank() < 2 || a.shape[a.rank() - 1] != a.shape[a.rank() - 2])
    return fail(fmt::format("'eigh' needs square matrices [..., n, n], got {}", toString(a)));
  if (const Attribute* uplo = in.attrs.find("uplo"); uplo && uplo->s != "L" && uplo->s != "U")
    return fail(fmt::format("attribute 'uplo' of 'eigh' must be \"L\" or \"U\", got {}", toString(*uplo)));
  Shape values(a.shape.begin(), a.shape.end() - 1);
  return {{TensorType{a.dtype, values}, a}, {}};
}

TypeRuleResult groupedMm(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& w = in.operands[1];
  const TensorType& offs = in.operands[2];
  if (auto e = sameDType(op, in.operands.first(2)); !e.empty()) return fail(e);
  if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  if (x.rank() != 2) return fail(fmt::format("the input of 'grouped_mm' must be [rows, k], got {}", toString(x)));
  const Attribute* transposedAttr = in.attrs.find("transposed");
  const bool transposed = transposedAttr && transposedAttr->b;  // w: [groups, n, k]
  if (w.rank() != 3)
    return fail(fmt::format("the weight of 'grouped_mm' must be [groups, {}], got {}", transposed ? "n, k" : "k, n",
                            toString(w)));
  const Dim& k = w.shape[transposed ? 2 : 1];
  if (x.shape[1] != k)
    return fail(fmt::format("'grouped_mm' contraction sizes differ: {} @ {} ({} vs {})", toString(x), toString(w),
                            toString(x.shape[1]), toString(k)));
  if (offs.rank() != 1 || offs.shape[0] != w.shape[0] || (offs.dtype != DType::I32 && offs.dtype != DType::I64))
    return fail(fmt::format("the offsets of 'grouped_mm' must be i32 or i64 [{}] (one end row per group), got {}",
                            toString(w.shape[0]), toString(offs)));
  return one(TensorType{x.dtype, Shape{x.shape[0], w.shape[transposed ? 1 : 2]}});
}

TypeRuleResult solveTriangular(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& a = in.operands[0];
  const TensorType& b = in.operands[1];
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  if (a.dtype != DType::F32 && a.dtype != DType::F64)
    return fail(fmt::format("'solve_triangular' supports f32 and f64, got {}", dt(a.dtype)));
  if (a.rank() < 2 || a.shape[a.rank() - 1] != a.shape[a.rank() - 2])
    return fail(fmt::format("'solve_triangular' needs square matrices [..., n, n], got {}", toString(a)));
  if (b.rank() != a.rank() || !std::equal(a.shape.begin(), a.shape.end() - 1, b.shape.begin()))
    return fail(
        fmt::format("the right-hand sides of 'solve_triangular' must be [..., n, k] with the matrices' "
                    "batch dims and n, got {} for {}",
                    toString(b), toString(a)));
  return one(b);
}

// ---- shape ops --------------------------------------------------------------

TypeRuleResult reshape(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const Attribute& target = *in.attrs.find("shape");
  Shape out;
  int inferred = -1;
  for (size_t k = 0; k < target.list.size(); ++k) {
    const Attribute& d = target.list[k];
    if (d.kind == Attribute::Kind::Int && d.i == -1) {
      if (inferred >= 0) return fail("'reshape' allows only one -1 in its shape");
      inferred = static_cast<int>(k);
      out.push_back(Dim::of(1));  // a placeholder while the others multiply
      continue;
    }
    std::optional<Dim> dim = attrDim(d);
    if (!dim) return fail(fmt::format("'reshape' size {} is not a size", toString(d)));
    if (dim->isStatic() && dim->size < 0) return fail(fmt::format("'reshape' size {} is negative", dim->size));
    out.push_back(*dim);
  }
  std::optional<Dim> known = numElements(out), total = numElements(x.shape);
  if (!known || !total) return fail("'reshape' sizes overflow");
  if (inferred < 0) {
    if (*known != *total)
      return fail(fmt::format("'reshape' cannot turn {} ({} elements) into {} ({} elements)", toString(x.shape),
                              toString(*total), toString(out), toString(*known)));
    return one(TensorType{x.dtype, out});
  }
  // -1: what remains of the input's element count after the known sizes.
  std::optional<Dim> rest = divide(*total, *known);
  if (!rest)
    return fail(fmt::format("'reshape' cannot turn {} ({} elements) into {}", toString(x.shape), toString(*total),
                            toString(target)));
  out[inferred] = *rest;
  return one(TensorType{x.dtype, out});
}

TypeRuleResult permute(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const Attribute& dims = *in.attrs.find("dims");
  if (static_cast<int64_t>(dims.list.size()) != x.rank())
    return fail(fmt::format("'permute' dims {} must list each of the {} dims of {} once", toString(dims), x.rank(),
                            toString(x)));
  Shape out;
  std::vector<bool> seen(x.rank(), false);
  for (const Attribute& d : dims.list) {
    auto axis = normalizeAxis(d.i, x.rank());
    if (!axis || seen[*axis])
      return fail(fmt::format("'permute' dims {} are not a permutation of the {} dims of {}", toString(dims), x.rank(),
                              toString(x)));
    seen[*axis] = true;
    out.push_back(x.shape[*axis]);
  }
  return one(TensorType{x.dtype, out});
}

TypeRuleResult transpose(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  int64_t d0 = in.attrs.find("dim0")->i, d1 = in.attrs.find("dim1")->i;
  auto a = normalizeAxis(d0, x.rank()), b = normalizeAxis(d1, x.rank());
  if (!a || !b) return fail(fmt::format("'transpose' dims {} and {} are out of range for rank {}", d0, d1, x.rank()));
  Shape out = x.shape;
  std::swap(out[*a], out[*b]);
  return one(TensorType{x.dtype, out});
}

TypeRuleResult expand(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const Attribute& target = *in.attrs.find("shape");
  const int64_t rank = static_cast<int64_t>(target.list.size());
  if (rank < x.rank())
    return fail(fmt::format("'expand' shape {} has fewer dims than {}", toString(target), toString(x)));
  Shape out(rank);
  for (int64_t k = 0; k < rank; ++k) {
    const Attribute& t = target.list[k];
    int64_t srcIndex = k - (rank - x.rank());
    if (t.kind == Attribute::Kind::Int && t.i == -1) {
      if (srcIndex < 0) return fail("'expand' allows -1 only for existing dims");
      out[k] = x.shape[srcIndex];
      continue;
    }
    if (t.kind == Attribute::Kind::Int && t.i < 0) return fail(fmt::format("'expand' size {} is negative", t.i));
    Dim want = attrDim(t).value_or(Dim::of(-1));
    if (srcIndex >= 0 && x.shape[srcIndex] != want && !x.shape[srcIndex].isStatic(1))
      return fail(fmt::format("'expand' cannot expand size {} to {} (only size-1 dims expand)",
                              toString(x.shape[srcIndex]), toString(want)));
    out[k] = want;
  }
  return one(TensorType{x.dtype, out});
}

std::string sliceStartError(int64_t start, int64_t size) {
  return fmt::format("'slice' from {} needs a dim of at least {} elements; it has {}", start, -start, size);
}

TypeRuleResult slice(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  int64_t d = in.attrs.find("dim")->i;
  auto axis = normalizeAxis(d, x.rank());
  if (!axis) return fail(fmt::format("'slice' dim {} is out of range for rank {}", d, x.rank()));
  const Attribute* startAttr = in.attrs.find("start");
  const Attribute* endAttr = in.attrs.find("end");
  int64_t start = startAttr ? startAttr->i : 0;
  int64_t end = endAttr ? endAttr->i : INT64_MAX;
  int64_t step = intAttr(in.attrs, "step", 1);
  if (step == 0 || step == INT64_MIN) return fail(fmt::format("'slice' step must be non-zero, got {}", step));
  Shape out = x.shape;
  const Dim& size = x.shape[*axis];
  if (!size.isStatic()) {
    if (step < 0)
      return fail(
          fmt::format("'slice' with a negative step reverses a static dim only; dim {} is {}", *axis, toString(size)));
    // From a static start to the end, or to a static distance before it:
    // the size is a sum, S - start - j, which a run whose S is too small
    // reports as a negative size (Python's slicing would give fewer).
    const int64_t fromEnd = end == INT64_MAX ? 0 : -end;
    if (step == 1 && start >= 0 && fromEnd >= 0) {
      std::optional<Dim> taken = subtract(size, Dim::of(start));
      if (taken) taken = subtract(*taken, Dim::of(fromEnd));
      if (taken) {
        out[*axis] = *taken;
        return one(TensorType{x.dtype, out});
      }
    }
    // From a static distance before the end (`x[:, -1:]`, the last
    // position's logits): a static size, for a run whose dim is at least
    // -start long (the binding checks; sliceStartError).
    if (start < 0 && fromEnd >= 0 && start != INT64_MIN) {
      const int64_t span = -start - fromEnd;
      out[*axis] = Dim::of(span > 0 ? 1 + (span - 1) / step : 0);
      return one(TensorType{x.dtype, out});
    }
    return fail(
        fmt::format("'slice' of the symbolic size {} takes the whole dim, runs with step 1 from a start >= 0 to "
                    "the end or to a negative end, or starts at a negative start",
                    toString(size)));
  }
  out[*axis] = Dim::of(staticSlice(in.attrs, size.size).count);
  return one(TensorType{x.dtype, out});
}

SliceRange staticSlice(const AttrMap& attrs, int64_t size) {
  const Attribute* startAttr = attrs.find("start");
  const Attribute* endAttr = attrs.find("end");
  const int64_t step = intAttr(attrs, "step", 1);
  if (step > 0) {
    // Negative bounds count from the end, then clamp into [0, size].
    auto clampIndex = [&](int64_t i) {
      if (i < 0) i = std::max<int64_t>(i + size, 0);
      return std::min(i, size);
    };
    const int64_t start = clampIndex(startAttr ? startAttr->i : 0);
    const int64_t end = clampIndex(endAttr ? endAttr->i : INT64_MAX);
    return {start, end > start ? 1 + (end - start - 1) / step : 0};  // ceil, without overflow
  }
  // Walking down: bounds clamp into [-1, size - 1], -1 being "past the first".
  auto clampIndex = [&](int64_t i) {
    if (i < 0) i = i < -size ? -1 : i + size;
    return std::min(i, size - 1);
  };
  const int64_t start = startAttr ? clampIndex(startAttr->i) : size - 1;
  const int64_t end = endAttr ? clampIndex(endAttr->i) : -1;
  return {start, start > end ? 1 + (start - end - 1) / -step : 0};
}

TypeRuleResult concat(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& first = in.operands[0];
  if (auto e = sameDType(op, in.operands); !e.empty()) return fail(e);
  int64_t d = in.attrs.find("dim")->i;
  auto axis = normalizeAxis(d, first.rank());
  if (!axis) return fail(fmt::format("'concat' dim {} is out of range for rank {}", d, first.rank()));
  Dim total = Dim::of(0);
  for (const TensorType& t : in.operands) {
    if (t.rank() != first.rank())
      return fail(fmt::format("'concat' operands differ in rank: {} vs {}", toString(first), toString(t)));
    for (int64_t k = 0; k < t.rank(); ++k)
      if (k != *axis && t.shape[k] != first.shape[k])
        return fail(fmt::format("'concat' operands differ in dim {}: {} vs {}", k, toString(first), toString(t)));
    std::optional<Dim> sum = add(total, t.shape[*axis]);  // a sum of symbols along a symbolic dim: (P+1)
    if (!sum) return fail("'concat' size overflows");
    total = *sum;
  }
  Shape out = first.shape;
  out[*axis] = total;
  return one(TensorType{first.dtype, out});
}

TypeRuleResult squeeze(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  Shape out;
  if (const Attribute* d = in.attrs.find("dim")) {
    auto axis = normalizeAxis(d->i, x.rank());
    if (!axis) return fail(fmt::format("'squeeze' dim {} is out of range for rank {}", d->i, x.rank()));
    if (!x.shape[*axis].isStatic())
      return fail(fmt::format("'squeeze' of the symbolic size {} is not allowed", toString(x.shape[*axis])));
    out = x.shape;
    if (x.shape[*axis].isStatic(1)) out.erase(out.begin() + *axis);  // as torch: a dim > 1 stays
  } else {
    for (const Dim& dim : x.shape)  // symbolic dims are never squeezed
      if (!dim.isStatic(1)) out.push_back(dim);
  }
  return one(TensorType{x.dtype, out});
}

TypeRuleResult unsqueeze(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  int64_t d = in.attrs.find("dim")->i;
  auto axis = normalizeAxis(d, x.rank() + 1);
  if (!axis) return fail(fmt::format("'unsqueeze' dim {} is out of range for rank {}", d, x.rank()));
  Shape out = x.shape;
  out.insert(out.begin() + *axis, Dim::of(1));
  return one(TensorType{x.dtype, out});
}

// ---- indexing -----------------------------------------------------------------

namespace {
std::string needIndices(const OpInfo& op, const TensorType& index) {
  if (isInteger(index.dtype)) return {};
  return fmt::format("the indices of '{}' must be i8, i32 or i64, got {}", op.name, dt(index.dtype));
}

/// Indices into a dim that is statically empty can only be out of range.
std::string needNonEmpty(const OpInfo& op, const Dim& indexed, const TensorType& index) {
  if (!indexed.isStatic(0) || index.staticNumElements() == 0) return {};
  return fmt::format("'{}' indexes a dim of size 0", op.name);
}
}  // namespace

TypeRuleResult indexSelect(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& index = in.operands[1];
  if (auto e = needIndices(op, index); !e.empty()) return fail(e);
  int64_t d = in.attrs.find("dim")->i;
  auto axis = normalizeAxis(d, x.rank());
  if (!axis) return fail(fmt::format("'{}' dim {} is out of range for rank {}", op.name, d, x.rank()));
  if (auto e = needNonEmpty(op, x.shape[*axis], index); !e.empty()) return fail(e);
  // x[..., index[...], ...]: the indexed dim becomes the index's dims.
  Shape out(x.shape.begin(), x.shape.begin() + *axis);
  out.insert(out.end(), index.shape.begin(), index.shape.end());
  out.insert(out.end(), x.shape.begin() + *axis + 1, x.shape.end());
  return one(TensorType{x.dtype, out});
}

TypeRuleResult gather(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& index = in.operands[1];
  if (auto e = needIndices(op, index); !e.empty()) return fail(e);
  if (index.rank() != x.rank())
    return fail(fmt::format("the indices {} of '{}' must have the rank of the input {}", toString(index), op.name,
                            toString(x)));
  int64_t d = in.attrs.find("dim")->i;
  auto axis = normalizeAxis(d, x.rank());
  if (!axis) return fail(fmt::format("'{}' dim {} is out of range for rank {}", op.name, d, x.rank()));
  if (auto e = needNonEmpty(op, x.shape[*axis], index); !e.empty()) return fail(e);
  // As torch.gather: along the other dims the indices may not reach
  // further than the input.
  for (int64_t k = 0; k < x.rank(); ++k) {
    if (k == *axis || index.shape[k] == x.shape[k]) continue;
    if (!index.shape[k].isStatic() || !x.shape[k].isStatic() || index.shape[k].size > x.shape[k].size)
      return fail(fmt::format("the indices {} of '{}' are larger than the input {} in dim {}", toString(index), op.name,
                              toString(x), k));
  }
  return one(TensorType{x.dtype, index.shape});
}

TypeRuleResult gatherNd(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& index = in.operands[1];
  if (auto e = needIndices(op, index); !e.empty()) return fail(e);
  const int64_t b = intAttr(in.attrs, "batch_dims", 0);
  if (index.rank() < 1 || !index.shape.back().isStatic())
    return fail(fmt::format("the indices {} of '{}' need a static last dim", toString(index), op.name));
  const int64_t depth = index.shape.back().size;
  if (b < 0 || b >= std::min(x.rank(), index.rank()) || depth < 1 || b + depth > x.rank())
    return fail(fmt::format("'{}' of {} with indices {} and batch_dims {}: the last index dim must be 1 to {}", op.name,
                            toString(x), toString(index), b, x.rank() - b));
  for (int64_t k = 0; k < b; ++k)
    if (x.shape[k] != index.shape[k])
      return fail(fmt::format("the batch dims of '{}' differ: {} vs {}", op.name, toString(x), toString(index)));
  for (int64_t k = b; k < b + depth; ++k)
    if (x.shape[k].isStatic(0)) return fail(fmt::format("'{}' indexes an empty dim of {}", op.name, toString(x)));
  Shape out(index.shape.begin(), index.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + depth, x.shape.end());
  return one(TensorType{x.dtype, out});
}

TypeRuleResult scatterNd(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const TensorType& index = in.operands[1];
  const TensorType& updates = in.operands[2];
  if (auto e = needIndices(op, index); !e.empty()) return fail(e);
  if (index.rank() < 1 || !index.shape.back().isStatic())
    return fail(fmt::format("the indices {} of '{}' need a static last dim", toString(index), op.name));
  const int64_t depth = index.shape.back().size;
  if (depth < 1 || depth > x.rank())
    return fail(fmt::format("'{}' into {} with indices {}: the last index dim must be 1 to {}", op.name, toString(x),
                            toString(index), x.rank()));
  Shape want(index.shape.begin(), index.shape.end() - 1);
  want.insert(want.end(), x.shape.begin() + depth, x.shape.end());
  if (updates.dtype != x.dtype || updates.shape != want)
    return fail(fmt::format("the updates of '{}' into {} at indices {} must be {}, got {}", op.name, toString(x),
                            toString(index), toString(TensorType{x.dtype, want}), toString(updates)));
  const Attribute* r = in.attrs.find("reduction");
  const std::string reduction = r ? r->s : "none";
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    return fail(fmt::format("'{}' reduction must be none, add, mul, max or min, got \"{}\"", op.name, reduction));
  if (x.dtype == DType::Bool && reduction != "none")
    return fail(fmt::format("'{}' of bool takes no reduction", op.name));
  for (int64_t k = 0; k < depth; ++k)
    if (x.shape[k].isStatic(0)) return fail(fmt::format("'{}' indexes an empty dim of {}", op.name, toString(x)));
  return one(x);
}

TypeRuleResult resize(const OpInfo& op, const TypeRuleInput& in) {
  const TensorType& x = in.operands[0];
  const Attribute& size = *in.attrs.find("size");
  if (static_cast<int64_t>(size.list.size()) != x.rank())
    return fail(fmt::format("'resize' size {} must have the rank of the input {}", toString(size), toString(x)));
  Shape out;
  for (int64_t k = 0; k < x.rank(); ++k) {
    const Attribute& d = size.list[static_cast<size_t>(k)];
    Dim dim = attrDim(d).value_or(Dim::of(-1));
    if (dim != x.shape[k] && (!dim.isStatic() || !x.shape[k].isStatic() || dim.size < 1 || x.shape[k].size < 1))
      return fail(
          fmt::format("'resize' of {} to {}: a resized dim must be static and non-empty", toString(x), toString(size)));
    out.push_back(dim);
  }
  const Attribute* mode = in.attrs.find("mode");
  const std::string m = mode ? mode->s : "nearest";
  if (m != "nearest" && m != "linear")
    return fail(fmt::format("'resize' mode must be nearest or linear, got \"{}\"", m));
  if (m == "linear")
    if (auto e = needFloat(op, x.dtype); !e.empty()) return fail(e);
  const Attribute* coords = in.attrs.find("coordinates");
  const std::string c = coords ? coords->s : "asymmetric";
  if (c != "asymmetric" && c != "half_pixel" && c != "pytorch_half_pixel" && c != "align_corners")
    return fail(fmt::format(
        "'resize' coordinates must be asymmetric, half_pixel, pytorch_half_pixel or align_corners, got \"{}\"", c));
  const Attribute* nearest = in.attrs.find("nearest");
  const std::string n = nearest ? nearest->s : "floor";
  if (n != "floor" && n != "ceil" && n != "round_prefer_floor" && n != "round_prefer_ceil")
    return fail(
        fmt::format("'resize' nearest must be floor, ceil, round_prefer_floor or round_prefer_ceil, got \"{}\"", n));
  return one(TensorType{x.dtype, out});
}

// ---- creation ---------------------------------------------------------------

namespace {
/// Sizes of a nested list, read along its first elements.
std::vector<int64_t> nestedSizes(const Attribute& v) {
  std::vector<int64_t> sizes;
  for (const Attribute* p = &v; p->kind == Attribute::Kind::List; p = &p->list[0]) {
    sizes.push_back(static_cast<int64_t>(p->list.size()));
    if (p->list.empty()) break;
  }
  return sizes;
}

/// Whether every sub-list at each depth has the sizes read off the first path.
bool isRectangular(const Attribute& v, size_t depth, const std::vector<int64_t>& sizes) {
  if (depth == sizes.size()) return v.kind != Attribute::Kind::List;
  if (v.kind != Attribute::Kind::List || static_cast<int64_t>(v.list.size()) != sizes[depth]) return false;
  for (const Attribute& item : v.list)
    if (!isRectangular(item, depth + 1, sizes)) return false;
  return true;
}

void leafKinds(const Attribute& v, bool& anyFloat, bool& anyInt, bool& anyBool) {
  if (v.kind == Attribute::Kind::List) {
    for (const Attribute& item : v.list) leafKinds(item, anyFloat, anyInt, anyBool);
    return;
  }
  anyFloat |= v.kind == Attribute::Kind::Float;
  anyInt |= v.kind == Attribute::Kind::Int;
  anyBool |= v.kind == Attribute::Kind::Bool;
}

std::string valueFitsDType(const OpInfo& op, const Attribute& value, DType t) {
  bool anyFloat = false, anyInt = false, anyBool = false;
  leafKinds(value, anyFloat, anyInt, anyBool);
  if (anyFloat && !isFloat(t)) return fmt::format("'{}' of {} cannot hold a float value", op.name, dt(t));
  if (anyBool && t != DType::Bool) return fmt::format("'{}' of {} cannot hold a bool value", op.name, dt(t));
  if (t == DType::Bool && (anyFloat || anyInt)) return fmt::format("'{}' of bool needs true/false values", op.name);
  return {};
}
}  // namespace

TypeRuleResult constant(const OpInfo& op, const TypeRuleInput& in) {
  const Attribute& value = *in.attrs.find("value");
  if (value.kind == Attribute::Kind::Dense) {  // the bytes say their type
    const DenseElements& d = *value.dense;
    if (in.declared && in.declared->size() == 1 && (*in.declared)[0].dtype != d.dtype)
      return fail(
          fmt::format("'constant' holds {} elements but is declared {}", dt(d.dtype), dt((*in.declared)[0].dtype)));
    return one(TensorType{d.dtype, staticShape(d.shape)});
  }
  std::vector<int64_t> sizes = nestedSizes(value);
  if (!isRectangular(value, 0, sizes)) return fail("'constant' value is a ragged nested list");
  DType t;
  if (in.declared && in.declared->size() == 1) {
    t = (*in.declared)[0].dtype;
  } else {
    bool anyFloat = false, anyInt = false, anyBool = false;
    leafKinds(value, anyFloat, anyInt, anyBool);
    t = anyFloat ? DType::F32 : anyInt ? DType::I64 : anyBool ? DType::Bool : DType::F32;  // as torch.tensor
  }
  if (auto e = valueFitsDType(op, value, t); !e.empty()) return fail(e);
  return one(TensorType{t, staticShape(sizes)});
}

TypeRuleResult full(const OpInfo& op, const TypeRuleInput& in) {
  if (!in.declared || in.declared->size() != 1)
    return fail("'full' needs its result type, e.g. `%z = full() {value = 0.0} : f32[4, 4]`");
  const TensorType& t = (*in.declared)[0];
  const Attribute& value = *in.attrs.find("value");
  if (value.kind == Attribute::Kind::List || value.kind == Attribute::Kind::Dense)
    return fail("'full' takes a scalar value (use constant for a list)");
  if (auto e = valueFitsDType(op, value, t.dtype); !e.empty()) return fail(e);
  return one(t);
}

TypeRuleResult iota(const OpInfo& op, const TypeRuleInput& in) {
  if (!in.declared || in.declared->size() != 1)
    return fail("'iota' needs its result type, e.g. `%i = iota() {dim = 0} : i64[B]`");
  const TensorType& t = (*in.declared)[0];
  if (t.dtype == DType::Bool) return fail("'iota' of bool: make an integer one and compare");
  const int64_t d = in.attrs.find("dim")->i;
  if (!normalizeAxis(d, t.rank()))
    return fail(fmt::format("dim {} of 'iota' is out of range for rank {}", d, t.rank()));
  for (const char* name : {"start", "step"})
    if (const Attribute* a = in.attrs.find(name); a && a->kind == Attribute::Kind::Float && !isFloat(t.dtype))
      return fail(fmt::format("'{}' of {} cannot hold a float {}", op.name, dt(t.dtype), name));
  return one(t);
}

// ---- control flow and fusion ------------------------------------------------

namespace {
std::string regionTakesOperands(std::string_view label, const std::vector<TensorType>& params,
                                std::span<const TensorType> operands) {
  if (params.size() != operands.size())
    return fmt::format("region '{}' takes {} parameters but the op passes {} operands", label, params.size(),
                       operands.size());
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k] != operands[k])
      return fmt::format("parameter {} of region '{}' is {} but the operand passed is {}", k, label,
                         toString(params[k]), toString(operands[k]));
  return {};
}

}  // namespace

TypeRuleResult cond(const OpInfo&, const TypeRuleInput& in) {
  const TensorType& pred = in.operands[0];
  if (pred.dtype != DType::Bool || pred.rank() != 0)
    return fail(fmt::format("the predicate of 'cond' must be bool[], got {}", toString(pred)));
  auto passed = in.operands.subspan(1);
  for (size_t r = 0; r < 2; ++r)
    if (auto e = regionTakesOperands(r == 0 ? "then" : "else", in.regionParams[r], passed); !e.empty()) return fail(e);
  if (in.regionResults[0] != in.regionResults[1])
    return fail(fmt::format("the branches of 'cond' return different types: then ({}) vs else ({})",
                            toString(in.regionResults[0]), toString(in.regionResults[1])));
  return {in.regionResults[0], {}};
}

TypeRuleResult fused(const OpInfo&, const TypeRuleInput& in) {
  const std::string& name = in.attrs.find("name")->s;
  if (name.empty() || !std::all_of(name.begin(), name.end(),
                                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
    return fail(fmt::format("attribute 'name' of 'fused' must be a non-empty [A-Za-z0-9_] name, got \"{}\"", name));
  if (in.attrs.find("kind")->s.empty()) return fail("attribute 'kind' of 'fused' must not be empty");
  if (auto e = regionTakesOperands("body", in.regionParams[0], in.operands); !e.empty()) return fail(e);
  return {typesOf(in.regionResults[0]), {}};
}

}  // namespace graphc::ir::rules
