// Reference kernels of the reductions (sum mean amax amin prod, argmax
// argmin, cumsum), softmax and log_softmax. Accumulation is in f64 for
// floats and in wrapping int64 for integer sums and products.
#include <cmath>
#include <limits>

#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime::reference {

using ir::OpId;

namespace {
/// Which axes of a rank-`rank` input a reduction node reduces.
std::vector<bool> reducedAxes(const ir::Node& n, int64_t rank) {
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t d : ir::rules::reducedAxes(n.attrs, rank)) reduced[static_cast<size_t>(d)] = true;
  return reduced;
}
}  // namespace

Tensor reduction(const ir::Node& n, const Tensor& x, const std::vector<int64_t>& shape) {
  const int64_t rank = x.rank();
  std::vector<bool> reduced = reducedAxes(n, rank);
  // Output index of each input element: drop (or zero) the reduced axes.
  std::vector<int64_t> keptShape;
  for (int64_t k = 0; k < rank; ++k) keptShape.push_back(reduced[k] ? 1 : x.shape()[k]);
  std::vector<int64_t> outStrides = contiguousStrides(keptShape);
  const int64_t outCount = checkedNumel(keptShape);
  std::vector<int64_t> counter(static_cast<size_t>(rank), 0);

  const bool floatMath = ir::isFloat(x.dtype());
  std::vector<double> accF(static_cast<size_t>(outCount), 0.0);
  std::vector<int64_t> accI(static_cast<size_t>(outCount), 0);
  std::vector<int64_t> seen(static_cast<size_t>(outCount), 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = 0;
    for (int64_t k = 0; k < rank; ++k)
      if (!reduced[k]) o += counter[k] * outStrides[k];
    auto slot = static_cast<size_t>(o);
    if (floatMath) {
      double v = x.getDouble(i);
      if (n.op == OpId::Sum || n.op == OpId::Mean)
        accF[slot] += v;
      else if (n.op == OpId::Prod)
        accF[slot] = seen[slot] == 0 ? v : accF[slot] * v;
      else if (seen[slot] == 0 || std::isnan(v))
        accF[slot] = v;  // first element, or NaN propagates
      else if (!std::isnan(accF[slot]))
        accF[slot] = n.op == OpId::Amax ? std::max(accF[slot], v) : std::min(accF[slot], v);
    } else {
      int64_t v = x.getInt(i);
      if (n.op == OpId::Sum)
        accI[slot] = static_cast<int64_t>(static_cast<uint64_t>(accI[slot]) + static_cast<uint64_t>(v));
      else if (n.op == OpId::Prod)
        accI[slot] =
            seen[slot] == 0 ? v : static_cast<int64_t>(static_cast<uint64_t>(accI[slot]) * static_cast<uint64_t>(v));
      else if (seen[slot] == 0)
        accI[slot] = v;
      else
        accI[slot] = n.op == OpId::Amax ? std::max(accI[slot], v) : std::min(accI[slot], v);
    }
    ++seen[slot];
    nextIndex(counter, x.shape());
  }
  Tensor out(n.result()->type.dtype, shape);
  for (int64_t o = 0; o < outCount; ++o) {
    auto slot = static_cast<size_t>(o);
    if ((n.op == OpId::Amax || n.op == OpId::Amin) && seen[slot] == 0)
      throw ir::Error(std::string(n.name()) + " of an empty tensor has no identity");
    if (n.op == OpId::Prod && seen[slot] == 0)
      out.setInt(o, 1);  // the empty product
    else if (floatMath)
      out.setDouble(o, n.op == OpId::Mean ? accF[slot] / static_cast<double>(seen[slot]) : accF[slot]);
    else
      out.setInt(o, accI[slot]);
  }
  return out;
}

namespace {

/// A walk along one axis: `outer` × `inner` lines of `len` elements each,
/// element j of line (o, i) at (o · len + j) · inner + i.
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
  Lines(const std::vector<int64_t>& shape, int64_t axis) {
    for (int64_t k = 0; k < axis; ++k) outer *= shape[static_cast<size_t>(k)];
    if (!shape.empty()) len = shape[static_cast<size_t>(axis)];
    for (size_t k = static_cast<size_t>(axis) + 1; k < shape.size(); ++k) inner *= shape[k];
  }
  int64_t at(int64_t o, int64_t i, int64_t j) const { return (o * len + j) * inner + i; }
};

}  // namespace

Tensor argReduction(const ir::Node& n, const Tensor& x, const std::vector<int64_t>& shape) {
  const int64_t axis = *ir::rules::normalizeAxis(n.attrs.find("dim")->i, std::max<int64_t>(x.rank(), 1));
  const Lines lines(x.shape(), axis);
  if (lines.len == 0) throw ir::Error(std::string(n.name()) + " of an empty dim has no index");
  const bool isMax = n.op == OpId::Argmax, floatMath = ir::isFloat(x.dtype());
  Tensor out(ir::DType::I64, shape);
  for (int64_t o = 0; o < lines.outer; ++o)
    for (int64_t i = 0; i < lines.inner; ++i) {
      // The first index of the extremum; a NaN is the extremum (torch.argmax).
      int64_t best = 0;
      for (int64_t j = 1; j < lines.len; ++j) {
        bool better;
        if (floatMath) {
          const double v = x.getDouble(lines.at(o, i, j)), b = x.getDouble(lines.at(o, i, best));
          better = !std::isnan(b) && (std::isnan(v) || (isMax ? v > b : v < b));
        } else {
          const int64_t v = x.getInt(lines.at(o, i, j)), b = x.getInt(lines.at(o, i, best));
          better = isMax ? v > b : v < b;
        }
        if (better) best = j;
      }
      out.setInt(o * lines.inner + i, best);
    }
  return out;
}

Tensor cumulativeSum(const ir::Node& n, const Tensor& x) {
  const int64_t axis = *ir::rules::normalizeAxis(n.attrs.find("dim")->i, std::max<int64_t>(x.rank(), 1));
  const Lines lines(x.shape(), axis);
  const ir::Attribute* exclusive = n.attrs.find("exclusive");
  const ir::Attribute* reverse = n.attrs.find("reverse");
  const bool skipOwn = exclusive && exclusive->b, backwards = reverse && reverse->b;
  const ir::DType resultType = n.result()->type.dtype;
  const bool floatMath = ir::isFloat(resultType);
  Tensor out(resultType, x.shape());
  for (int64_t o = 0; o < lines.outer; ++o)
    for (int64_t i = 0; i < lines.inner; ++i) {
      double sumF = 0;
      uint64_t sumI = 0;  // wraps
      for (int64_t step = 0; step < lines.len; ++step) {
        const int64_t at = lines.at(o, i, backwards ? lines.len - 1 - step : step);
        if (skipOwn) floatMath ? out.setDouble(at, sumF) : out.setInt(at, static_cast<int64_t>(sumI));
        if (floatMath)
          sumF += x.getDouble(at);
        else
          sumI += static_cast<uint64_t>(x.getInt(at));
        if (!skipOwn) floatMath ? out.setDouble(at, sumF) : out.setInt(at, static_cast<int64_t>(sumI));
      }
    }
  return out;
}

Tensor softmax(const ir::Node& n, const Tensor& x) {
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  const int64_t dim = *ir::rules::normalizeAxis(n.attrs.find("dim")->i, rank);
  std::vector<int64_t> shape = x.rank() == 0 ? std::vector<int64_t>{1} : x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < dim; ++k) outer *= shape[k];
  for (int64_t k = dim + 1; k < rank; ++k) inner *= shape[k];
  const int64_t len = shape[dim];
  Tensor out(x.dtype(), x.shape());
  const bool logOutput = n.op == OpId::LogSoftmax;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto idx = [&](int64_t j) { return (o * len + j) * inner + in; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) max = std::max(max, x.getDouble(idx(j)));
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) sum += std::exp(x.getDouble(idx(j)) - max);
      for (int64_t j = 0; j < len; ++j) {
        double shifted = x.getDouble(idx(j)) - max;
        out.setDouble(idx(j), logOutput ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  return out;
}

}  // namespace graphc::runtime::reference
