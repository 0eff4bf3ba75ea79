// Reference kernels of the shape ops (as strided gathers of whole elements,
// dtype-blind), the indexing ops (index_select, gather, gather_nd), resize,
// and the creation ops constant, full and iota.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"
#include "runtime/reference/Interpreter.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime::reference {

using ir::OpId;

namespace {

/// Copies elements: out[i0, i1, ...] = in[offset + Σ ik * strides[k]].
Tensor gather(const Tensor& in, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
              int64_t offset) {
  Tensor out(in.dtype(), shape);
  const size_t elem = static_cast<size_t>(ir::dtypeSize(in.dtype()));
  forEachStrided(shape, strides, offset, [&](int64_t i, int64_t src) {
    std::memcpy(out.data() + static_cast<size_t>(i) * elem, in.data() + static_cast<size_t>(src) * elem, elem);
  });
  return out;
}

int64_t axisOf(const ir::Node& n, std::string_view attr, int64_t rank) {
  return *ir::rules::normalizeAxis(n.attrs.find(attr)->i, rank);
}

Tensor permuteTensor(const Tensor& x, const std::vector<int64_t>& perm, const std::vector<int64_t>& shape) {
  std::vector<int64_t> inStrides = contiguousStrides(x.shape()), strides;
  for (int64_t p : perm) strides.push_back(inStrides[static_cast<size_t>(p)]);
  return gather(x, shape, strides, 0);
}

Tensor concatTensors(const std::vector<Tensor>& parts, int64_t axis, const std::vector<int64_t>& shape) {
  Tensor out(parts[0].dtype(), shape);
  const size_t elem = static_cast<size_t>(ir::dtypeSize(out.dtype()));
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= shape[k];
  for (size_t k = static_cast<size_t>(axis) + 1; k < shape.size(); ++k) inner *= shape[k];
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor& p : parts) {
      const int64_t block = p.shape()[axis] * inner;
      std::memcpy(out.data() + static_cast<size_t>(dst) * elem, p.data() + static_cast<size_t>(o * block) * elem,
                  static_cast<size_t>(block) * elem);
      dst += block;
    }
  return out;
}

void fillFromList(Tensor& t, const ir::Attribute& value, int64_t& next) {
  if (value.kind == ir::Attribute::Kind::List) {
    for (const ir::Attribute& item : value.list) fillFromList(t, item, next);
    return;
  }
  if (value.kind == ir::Attribute::Kind::Float)
    t.setDouble(next++, value.f);
  else if (value.kind == ir::Attribute::Kind::Bool)
    t.setInt(next++, value.b);
  else
    t.setInt(next++, value.i);
}

/// An index read at run time, negative counting from the end; throws for
/// one outside [-size, size).
int64_t checkedIndex(const ir::Node& n, int64_t i, int64_t size) {
  if (i < -size || i >= size)
    throw ir::LocatedError(n.loc,
                           fmt::format("'{}': index {} is out of range for a dim of size {}", n.name(), i, size));
  return i < 0 ? i + size : i;
}

/// numpy.take(x, index, axis): x[..., index[j...], ...], a block of the
/// trailing dims at a time.
Tensor indexSelect(const ir::Node& n, const Tensor& x, const Tensor& index, int64_t axis,
                   const std::vector<int64_t>& shape) {
  Tensor out(x.dtype(), shape);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.shape()[k];
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[k];
  const int64_t size = x.shape()[axis];
  const size_t elem = static_cast<size_t>(ir::dtypeSize(x.dtype()));
  const size_t block = static_cast<size_t>(inner) * elem;
  std::byte* dst = out.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < index.numel(); ++j, dst += block) {
      const int64_t row = o * size + checkedIndex(n, index.getInt(j), size);
      std::memcpy(dst, x.data() + static_cast<size_t>(row) * block, block);
    }
  return out;
}

/// torch.gather(x, axis, index): out[i] = x[i with dim axis replaced by
/// index[i]]: a strided walk over the index's shape with the axis's stride
/// left out, plus the loaded index times it.
Tensor gatherAlong(const ir::Node& n, const Tensor& x, const Tensor& index, int64_t axis) {
  Tensor out(x.dtype(), index.shape());
  const size_t elem = static_cast<size_t>(ir::dtypeSize(x.dtype()));
  std::vector<int64_t> strides = contiguousStrides(x.shape());
  const int64_t axisStride = strides[static_cast<size_t>(axis)];
  strides[static_cast<size_t>(axis)] = 0;
  forEachStrided(index.shape(), strides, 0, [&](int64_t i, int64_t rest) {
    const int64_t src = rest + checkedIndex(n, index.getInt(i), x.shape()[axis]) * axisStride;
    std::memcpy(out.data() + static_cast<size_t>(i) * elem, x.data() + static_cast<size_t>(src) * elem, elem);
  });
  return out;
}

/// x[b..., index[b..., i..., :], rest...]: the last dim of the index holds
/// the coordinates of x's dims after the `batch_dims` leading ones.
Tensor gatherNd(const ir::Node& n, const Tensor& x, const Tensor& index, const std::vector<int64_t>& shape) {
  const ir::Attribute* batchAttr = n.attrs.find("batch_dims");
  const int64_t batchDims = batchAttr ? batchAttr->i : 0;
  const int64_t depth = index.shape().back();
  int64_t batch = 1, rest = 1, tuples = 1;
  for (int64_t k = 0; k < batchDims; ++k) batch *= x.shape()[k];
  for (int64_t k = batchDims + depth; k < x.rank(); ++k) rest *= x.shape()[k];
  for (int64_t k = batchDims; k + 1 < index.rank(); ++k) tuples *= index.shape()[k];
  int64_t indexed = 1;  // elements of x under one batch index
  for (int64_t k = batchDims; k < x.rank(); ++k) indexed *= x.shape()[k];
  Tensor out(x.dtype(), shape);
  const size_t elem = static_cast<size_t>(ir::dtypeSize(x.dtype()));
  const size_t block = static_cast<size_t>(rest) * elem;
  std::byte* dst = out.data();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < tuples; ++t, dst += block) {
      int64_t at = 0;
      for (int64_t j = 0; j < depth; ++j) {
        const int64_t size = x.shape()[batchDims + j];
        at = at * size + checkedIndex(n, index.getInt((b * tuples + t) * depth + j), size);
      }
      std::memcpy(dst, x.data() + static_cast<size_t>(b * indexed + at * rest) * elem, block);
    }
  return out;
}

/// A copy of x with updates written at the coordinates the last dim of the
/// index holds (ONNX ScatterND), combined with what is there by `reduction`;
/// with none, a later update to the same place wins.
Tensor scatterNd(const ir::Node& n, const Tensor& x, const Tensor& index, const Tensor& updates) {
  Tensor out(x.dtype(), x.shape());
  std::memcpy(out.data(), x.data(), x.nbytes());
  scatterNdInPlace(n, out, index, updates);
  return out;
}

/// Where output index `o` of a resized dim reads in the input (ONNX
/// Resize's coordinate_transformation_mode, with scale = out / in).
double sourceCoordinate(const std::string& mode, int64_t o, int64_t in, int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  const double x = static_cast<double>(o);
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  return x / scale;  // asymmetric
}

int64_t nearestIndex(const std::string& rounding, double x, int64_t size) {
  double r;
  if (rounding == "ceil")
    r = std::ceil(x);
  else if (rounding == "round_prefer_floor")
    r = x - std::floor(x) == 0.5 ? std::floor(x) : std::round(x);
  else if (rounding == "round_prefer_ceil")
    r = std::round(x);  // halves away from zero: up, for the x ≥ -0.5 that matter
  else
    r = std::floor(x);
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, size - 1);
}

/// Nearest or (multi)linear resampling, torch's rules at the edges: a
/// linear source coordinate is clamped into [0, size - 1].
Tensor resizeTensor(const ir::Node& n, const Tensor& x, const std::vector<int64_t>& shape) {
  auto attr = [&](const char* name, const char* fallback) {
    const ir::Attribute* a = n.attrs.find(name);
    return a ? a->s : std::string(fallback);
  };
  const bool linear = attr("mode", "nearest") == "linear";
  const std::string coordinates = attr("coordinates", "asymmetric"), rounding = attr("nearest", "floor");
  const size_t rank = shape.size();
  // Per dim and output index: the two source indices and the second's weight.
  struct Tap {
    int64_t lo, hi;
    double weight;
  };
  std::vector<std::vector<Tap>> taps(rank);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < shape[d]; ++o) {
      const int64_t in = x.shape()[d];
      if (in == shape[d]) {
        taps[d].push_back({o, o, 0.0});
        continue;
      }
      const double c = sourceCoordinate(coordinates, o, in, shape[d]);
      if (!linear) {
        const int64_t i = nearestIndex(rounding, c, in);
        taps[d].push_back({i, i, 0.0});
        continue;
      }
      const double clamped = std::clamp(c, 0.0, static_cast<double>(in - 1));
      const auto lo = static_cast<int64_t>(std::floor(clamped));
      taps[d].push_back({lo, std::min(lo + 1, in - 1), clamped - static_cast<double>(lo)});
    }
  const std::vector<int64_t> inStrides = contiguousStrides(x.shape());
  Tensor out(x.dtype(), shape);
  std::vector<int64_t> o(rank, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (!linear) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += taps[d][static_cast<size_t>(o[d])].lo * inStrides[d];
      if (ir::isFloat(x.dtype()))
        out.setDouble(i, x.getDouble(src));
      else
        out.setInt(i, x.getInt(src));
    } else {
      double v = 0;  // Σ over the 2^rank corners (a dim not resized has weight 0 on hi)
      for (uint64_t corner = 0; corner < (uint64_t{1} << rank); ++corner) {
        double w = 1;
        int64_t src = 0;
        for (size_t d = 0; d < rank; ++d) {
          const Tap& t = taps[d][static_cast<size_t>(o[d])];
          const bool hi = (corner >> d) & 1;
          w *= hi ? t.weight : 1 - t.weight;
          src += (hi ? t.hi : t.lo) * inStrides[d];
        }
        if (w != 0) v += w * x.getDouble(src);
      }
      out.setDouble(i, v);
    }
    nextIndex(o, shape);
  }
  return out;
}

}  // namespace

Tensor shapeOp(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape) {
  const Tensor& x = operands[0];
  const int64_t rank = x.rank();
  switch (n.op) {
    case OpId::Reshape:
    case OpId::Squeeze:
    case OpId::Unsqueeze: return x.reshaped(shape);
    case OpId::Permute: {
      std::vector<int64_t> perm;
      for (const ir::Attribute& d : n.attrs.find("dims")->list) perm.push_back(*ir::rules::normalizeAxis(d.i, rank));
      return permuteTensor(x, perm, shape);
    }
    case OpId::Transpose: {
      std::vector<int64_t> perm(static_cast<size_t>(rank));
      for (int64_t k = 0; k < rank; ++k) perm[static_cast<size_t>(k)] = k;
      std::swap(perm[static_cast<size_t>(axisOf(n, "dim0", rank))], perm[static_cast<size_t>(axisOf(n, "dim1", rank))]);
      return permuteTensor(x, perm, shape);
    }
    case OpId::Expand: {
      std::vector<int64_t> inStrides = contiguousStrides(x.shape());
      std::vector<int64_t> strides(shape.size(), 0);
      const size_t offset = shape.size() - x.shape().size();
      for (size_t k = offset; k < shape.size(); ++k)
        strides[k] = x.shape()[k - offset] == 1 ? 0 : inStrides[k - offset];
      return gather(x, shape, strides, 0);
    }
    case OpId::Slice: {
      const int64_t axis = axisOf(n, "dim", rank);
      const int64_t size = x.shape()[axis];
      const ir::Attribute* startAttr = n.attrs.find("start");
      const ir::Attribute* stepAttr = n.attrs.find("step");
      const int64_t step = stepAttr ? stepAttr->i : 1;
      const int64_t start = startAttr ? startAttr->i : 0;
      // A symbolic dim's slice from a negative start has a static size: the
      // dim must hold it (ir::rules::sliceStartError).
      if (start < 0 && start + size < 0 && shape[axis] > 0 &&
          !n.operands[0]->type.shape[static_cast<size_t>(axis)].isStatic())
        throw ir::Error(ir::rules::sliceStartError(start, size));
      // Python's bounds on the run's size, for either sign of the step.
      const int64_t first = ir::rules::staticSlice(n.attrs, size).first;
      std::vector<int64_t> strides = contiguousStrides(x.shape());
      const int64_t offset = shape[axis] > 0 ? first * strides[axis] : 0;
      // A step past the end leaves one element (or none), and the stride is never used.
      if (shape[axis] > 1) strides[axis] *= step;
      return gather(x, shape, strides, offset);
    }
    case OpId::Concat: return concatTensors(operands, axisOf(n, "dim", rank), shape);
    case OpId::IndexSelect: return indexSelect(n, x, operands[1], axisOf(n, "dim", rank), shape);
    case OpId::Gather: return gatherAlong(n, x, operands[1], axisOf(n, "dim", rank));
    case OpId::GatherNd: return gatherNd(n, x, operands[1], shape);
    case OpId::ScatterNd: return scatterNd(n, x, operands[1], operands[2]);
    case OpId::Resize: return resizeTensor(n, x, shape);
    default: throw ir::Error("reference: not a shape op");
  }
}

Tensor creation(const ir::Node& n, ir::DType dtype, const std::vector<int64_t>& shape) {
  Tensor out(dtype, shape);
  if (n.op == OpId::Iota) {  // start + step · index[dim]
    const int64_t axis = axisOf(n, "dim", static_cast<int64_t>(shape.size()));
    const ir::Attribute* start = n.attrs.find("start");
    const ir::Attribute* step = n.attrs.find("step");
    int64_t inner = 1;
    for (size_t k = static_cast<size_t>(axis) + 1; k < shape.size(); ++k) inner *= shape[k];
    for (int64_t i = 0; i < out.numel(); ++i) {
      const int64_t at = i / inner % shape[static_cast<size_t>(axis)];
      if (ir::isFloat(dtype))
        out.setDouble(i, (start ? start->asDouble() : 0.0) + (step ? step->asDouble() : 1.0) * static_cast<double>(at));
      else
        out.setInt(i, (start ? start->i : 0) + (step ? step->i : 1) * at);
    }
    return out;
  }
  const ir::Attribute& value = *n.attrs.find("value");
  if (value.kind == ir::Attribute::Kind::Dense) {
    // A copy, not a view: the graph's weights stay immutable whatever the
    // caller does with the tensor.
    if (value.dense->nbytes != out.nbytes()) throw ir::LocatedError(n.loc, "'constant' value does not fit its type");
    if (out.nbytes()) std::memcpy(out.data(), value.dense->data, out.nbytes());
    return out;
  }
  if (n.op == OpId::Constant) {
    int64_t next = 0;
    fillFromList(out, value, next);
  } else {
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (value.kind == ir::Attribute::Kind::Float)
        out.setDouble(i, value.f);
      else
        out.setInt(i, value.kind == ir::Attribute::Kind::Bool ? value.b : value.i);
    }
  }
  return out;
}

}  // namespace graphc::runtime::reference

namespace graphc::runtime {

void scatterNdInPlace(const ir::Node& n, Tensor& data, const Tensor& index, const Tensor& updates) {
  const ir::Attribute* r = n.attrs.find("reduction");
  const std::string reduction = r ? r->s : "none";
  const int64_t depth = index.shape().back();
  const int64_t tuples = depth ? index.numel() / depth : 0;
  int64_t rest = 1;
  for (int64_t k = depth; k < data.rank(); ++k) rest *= data.shape()[k];
  // Every index is checked before anything is written: an error leaves the
  // data as it was.
  std::vector<int64_t> places(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t j = 0; j < depth; ++j) {
      const int64_t size = data.shape()[j];
      at = at * size + reference::checkedIndex(n, index.getInt(t * depth + j), size);
    }
    places[static_cast<size_t>(t)] = at;
  }
  // f32/f64 sums and products, typed, without a dispatch per element (a
  // max-pool's backward scatters a million): the same bits as through
  // double, whose 53 bits make rounding a sum or product of two floats
  // twice (to double, then to float) the same as rounding it once.
  const bool typed = (reduction == "add" || reduction == "mul") && data.dtype() == updates.dtype() &&
                     (data.dtype() == ir::DType::F32 || data.dtype() == ir::DType::F64);
  if (typed) {
    const auto rows = [&]<typename T>(T* out, const T* in) {
      const bool add = reduction == "add";
      for (int64_t t = 0; t < tuples; ++t) {
        T* to = out + places[static_cast<size_t>(t)] * rest;
        const T* from = in + t * rest;
        if (add)
          for (int64_t e = 0; e < rest; ++e) to[e] += from[e];
        else
          for (int64_t e = 0; e < rest; ++e) to[e] *= from[e];
      }
    };
    if (data.dtype() == ir::DType::F32)
      rows(reinterpret_cast<float*>(data.data()), reinterpret_cast<const float*>(updates.data()));
    else
      rows(reinterpret_cast<double*>(data.data()), reinterpret_cast<const double*>(updates.data()));
    return;
  }
  const bool real = ir::isFloat(data.dtype());
  for (int64_t t = 0; t < tuples; ++t) {
    const int64_t at = places[static_cast<size_t>(t)];
    if (reduction == "none" && data.dtype() == updates.dtype()) {  // one block of bytes
      const size_t bytes = static_cast<size_t>(rest) * static_cast<size_t>(ir::dtypeSize(data.dtype()));
      std::memcpy(data.data() + static_cast<size_t>(at) * bytes, updates.data() + static_cast<size_t>(t) * bytes,
                  bytes);
      continue;
    }
    for (int64_t e = 0; e < rest; ++e) {
      const int64_t o = at * rest + e, u = t * rest + e;
      if (reduction == "none") {
        if (real)
          data.setDouble(o, updates.getDouble(u));
        else
          data.setInt(o, updates.getInt(u));
      } else if (real) {
        const double a = data.getDouble(o), b = updates.getDouble(u);
        data.setDouble(o, reduction == "add"   ? a + b
                          : reduction == "mul" ? a * b
                          : reduction == "max" ? (std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b))
                                               : (std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b)));
      } else {
        const int64_t a = data.getInt(o), b = updates.getInt(u);
        // Wrapping as the dtype's width does (setInt stores two's complement).
        data.setInt(o, reduction == "add"   ? static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b))
                       : reduction == "mul" ? static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b))
                       : reduction == "max" ? std::max(a, b)
                                            : std::min(a, b));
      }
    }
  }
}

}  // namespace graphc::runtime
