// Lowering of the ops that read their input at computed indices —
// index_select, gather, gather_nd (indirect indices: a dim indexed by a
// value the kernel loads) and resize (coordinates computed from the output
// index) — and of iota, the output index as a value.
#include <fmt/format.h>

#include "codegen/kernel/Lowerer.h"
#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"

namespace graphc::codegen::kernel {

using namespace ir;

ExprPtr Lowerer::indexed(const Node& n, const Indices& idx) {
  const Value* data = n.operands[0];
  const Value* index = n.operands[1];
  if (n.op == OpId::GatherNd) {
    // out[b..., t..., rest...] = data[b..., index[b..., t..., j] for each j, rest...]
    const Attribute* batchAttr = n.attrs.find("batch_dims");
    const size_t batch = batchAttr ? static_cast<size_t>(batchAttr->i) : 0;
    const size_t tuple = static_cast<size_t>(index->type.rank()) - 1;  // index dims before the last
    const int64_t depth = index->type.shape.back().size;
    Indices dataIdx(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(batch));
    for (int64_t j = 0; j < depth; ++j) {
      Indices at(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(tuple));
      at.push_back(Index::constant(j));
      dataIdx.push_back(Index::indirect(eval(index, at), data->type.shape[batch + static_cast<size_t>(j)]));
    }
    dataIdx.insert(dataIdx.end(), idx.begin() + static_cast<std::ptrdiff_t>(tuple), idx.end());
    return eval(data, dataIdx);
  }
  // index_select's index covers dims [d, d + rank(index)) of the result,
  // gather's has the result's shape.
  const int64_t d = *rules::normalizeAxis(n.attrs.find("dim")->i, data->type.rank());
  Indices dataIdx = idx;
  if (n.op == OpId::IndexSelect) {
    const Indices at(idx.begin() + d, idx.begin() + d + index->type.rank());
    dataIdx.erase(dataIdx.begin() + d, dataIdx.begin() + d + index->type.rank());
    dataIdx.insert(dataIdx.begin() + d, Index::indirect(eval(index, at), data->type.shape[d]));
  } else {
    dataIdx[d] = Index::indirect(eval(index, idx), data->type.shape[d]);
  }
  return eval(data, dataIdx);
}

namespace {

/// Where output index `o` of a resized dim reads in the input, in f64 with
/// the reference's formulas (runtime/reference/ShapeOps.cpp), so both round
/// alike: scale = out / in.
ExprPtr sourceCoordinate(const std::string& mode, const IndexPtr& o, int64_t in, int64_t out) {
  const DType f = DType::F64;
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  ExprPtr x = indexValue(o, f);
  auto half = [&] {
    ExprPtr shifted = opOf(OpId::Add, f, {x, constantOf(f, 0.5)});
    return opOf(OpId::Sub, f, {opOf(OpId::Div, f, {shifted, constantOf(f, scale)}), constantOf(f, 0.5)});
  };
  if (mode == "half_pixel") return half();
  if (mode == "pytorch_half_pixel") return out > 1 ? half() : constantOf(f, 0);
  if (mode == "align_corners") {
    if (out == 1) return constantOf(f, 0);
    ExprPtr stretched = opOf(OpId::Mul, f, {x, constantOf(f, static_cast<double>(in - 1))});
    return opOf(OpId::Div, f, {stretched, constantOf(f, static_cast<double>(out - 1))});
  }
  return opOf(OpId::Div, f, {x, constantOf(f, scale)});  // asymmetric
}

/// The nearest source index of coordinate x (ONNX's nearest_mode), as an
/// indirect index: below 0 it is raised to 0, and the indirect index
/// clamps it below the size.
IndexPtr nearestIndex(const std::string& rounding, const ExprPtr& x, int64_t size) {
  const DType f = DType::F64;
  ExprPtr down = opOf(OpId::Floor, f, {x});
  ExprPtr r;
  if (rounding == "ceil") {
    r = opOf(OpId::Ceil, f, {x});
  } else if (rounding == "floor") {
    r = down;
  } else {  // a half goes down (prefer_floor) or up (prefer_ceil); else to the nearest
    ExprPtr isHalf = opOf(OpId::Eq, DType::Bool, {opOf(OpId::Sub, f, {x, down}), constantOf(f, 0.5)});
    ExprPtr tie = rounding == "round_prefer_floor" ? down : opOf(OpId::Ceil, f, {x});
    r = whereOf(isHalf, tie, opOf(OpId::Round, f, {x}));
  }
  ExprPtr i = opOf(OpId::Maximum, DType::I64, {castTo(r, DType::I64), constantOf(DType::I64, 0)});
  return Index::indirect(i, Dim::of(size));
}

}  // namespace

ExprPtr Lowerer::resized(const Node& n, const Indices& idx) {
  const Value* x = n.operands[0];
  auto attr = [&](const char* name, const char* fallback) {
    const Attribute* a = n.attrs.find(name);
    return a ? a->s : std::string(fallback);
  };
  const bool linear = attr("mode", "nearest") == "linear";
  const std::string coordinates = attr("coordinates", "asymmetric"), rounding = attr("nearest", "floor");
  const Shape& in = x->type.shape;
  const Shape& out = n.result()->type.shape;
  if (in == out) return eval(x, idx);  // nothing resized
  if (!linear) {
    Indices src = idx;
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d] == out[d]) continue;
      const int64_t from = in[d].size, to = out[d].size;
      if (coordinates == "asymmetric" && rounding == "floor" && to % from == 0)
        src[d] = div(idx[d], Index::constant(to / from));  // an integer upscale: o / k exactly
      else
        src[d] = nearestIndex(rounding, sourceCoordinate(coordinates, idx[d], from, to), from);
    }
    return eval(x, src);
  }
  // (Multi)linear: Σ over the corners of the resized dims of the product of
  // their weights times the input there, in f64; a coordinate is clamped
  // into [0, size - 1] first, as torch does.
  const DType f = DType::F64;
  struct Tap {
    size_t dim;
    IndexPtr lo, hi;
    ExprPtr weight;  // of hi
  };
  std::vector<Tap> taps;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == out[d]) continue;
    const int64_t size = in[d].size;
    AttrMap bounds;
    bounds.set("min", Attribute::ofFloat(0));
    bounds.set("max", Attribute::ofFloat(static_cast<double>(size - 1)));
    ExprPtr c = opOf(OpId::Clamp, f, {sourceCoordinate(coordinates, idx[d], size, out[d].size)}, bounds);
    ExprPtr lo = opOf(OpId::Floor, f, {c});
    ExprPtr loIndex = castTo(lo, DType::I64);
    ExprPtr hiIndex = opOf(OpId::Minimum, DType::I64,
                           {opOf(OpId::Add, DType::I64, {loIndex, constantOf(DType::I64, 1)}),
                            constantOf(DType::I64, static_cast<double>(size - 1))});
    taps.push_back({d, Index::indirect(loIndex, in[d]), Index::indirect(hiIndex, in[d]), opOf(OpId::Sub, f, {c, lo})});
  }
  ExprPtr sum;
  for (uint64_t corner = 0; corner < (uint64_t{1} << taps.size()); ++corner) {
    Indices src = idx;
    ExprPtr weight;
    for (size_t t = 0; t < taps.size(); ++t) {
      const bool hi = (corner >> t) & 1;
      src[taps[t].dim] = hi ? taps[t].hi : taps[t].lo;
      ExprPtr w = hi ? taps[t].weight : opOf(OpId::Sub, f, {constantOf(f, 1), taps[t].weight});
      weight = weight ? opOf(OpId::Mul, f, {weight, w}) : w;
    }
    ExprPtr term = opOf(OpId::Mul, f, {weight, castTo(eval(x, src), f)});
    sum = sum ? opOf(OpId::Add, f, {sum, term}) : term;
  }
  return castTo(sum, n.result()->type.dtype);
}

ExprPtr Lowerer::iota(const Node& n, const Indices& idx) {
  // start + step · index[dim]: integers in their dtype, floats through f64
  // (as the reference computes them) and rounded once.
  const DType t = n.result()->type.dtype;
  const int64_t d = *rules::normalizeAxis(n.attrs.find("dim")->i, n.result()->type.rank());
  const Attribute* start = n.attrs.find("start");
  const Attribute* step = n.attrs.find("step");
  const DType compute = isFloat(t) ? DType::F64 : t;
  auto number = [&](const Attribute* a, double fallback) {
    if (!a) return constantOf(compute, fallback);
    if (isFloat(compute)) return constantOf(compute, a->asDouble());
    auto c = std::make_shared<Expr>();  // exact, whatever the magnitude
    c->kind = Expr::Kind::Const;
    c->dtype = compute;
    c->intValue = a->i;
    return ExprPtr(c);
  };
  ExprPtr v = indexValue(idx[static_cast<size_t>(d)], compute);
  if (step && step->asDouble() != 1) v = opOf(OpId::Mul, compute, {v, number(step, 1)});
  if (start && start->asDouble() != 0) v = opOf(OpId::Add, compute, {v, number(start, 0)});
  return castTo(v, t);
}

}  // namespace graphc::codegen::kernel
