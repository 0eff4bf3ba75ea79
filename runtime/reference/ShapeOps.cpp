// Reference kernels of the shape ops (as strided gathers of whole elements,
// dtype-blind) and of the creation ops constant and full.
#include <cstring>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"
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
      int64_t start = startAttr ? startAttr->i : 0;
      if (start < 0) start = std::max<int64_t>(start + size, 0);
      start = std::min(start, size);
      std::vector<int64_t> strides = contiguousStrides(x.shape());
      const int64_t offset = start * strides[axis];
      // A step past the end leaves one element (or none), and the stride is never used.
      if (shape[axis] > 1) strides[axis] *= stepAttr ? stepAttr->i : 1;
      return gather(x, shape, strides, offset);
    }
    case OpId::Concat: return concatTensors(operands, axisOf(n, "dim", rank), shape);
    case OpId::IndexSelect: return indexSelect(n, x, operands[1], axisOf(n, "dim", rank), shape);
    case OpId::Gather: return gatherAlong(n, x, operands[1], axisOf(n, "dim", rank));
    default: throw ir::Error("reference: not a shape op");
  }
}

Tensor creation(const ir::Node& n, ir::DType dtype, const std::vector<int64_t>& shape) {
  Tensor out(dtype, shape);
  const ir::Attribute& value = *n.attrs.find("value");
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
