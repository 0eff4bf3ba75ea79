// Reference kernels of the window ops: conv, conv_transpose, max_pool and
// avg_pool over the trailing (spatial) dims of an [N, C, *spatial] input,
// torch's semantics (torch.nn.functional.conv{1,2,3}d, conv_transpose*d,
// max_pool*d, avg_pool*d). Elements are read into f64 once and every sum
// accumulates in f64; results are rounded to the dtype once.
//
// Each kernel walks a table of (output point, kernel point) → input point
// (or -1 where the window reads padding), so that the window arithmetic
// lives in one place, for any number of spatial dims.
#include <cmath>
#include <limits>

#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime::reference {

using ir::OpId;

namespace {

std::vector<double> toDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = t.getDouble(i);
  return out;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

/// The window geometry of node `n` (its type rule accepted it).
ir::rules::WindowGeometry geometryOf(const ir::Node& n, size_t spatial) {
  ir::AttrMap attrs = n.attrs;
  if (const ir::Attribute* kernel = n.attrs.find("kernel"); kernel && !attrs.find("stride"))
    attrs.set("stride", *kernel);  // pools: the stride defaults to the kernel
  std::string error;
  return ir::rules::windowGeometry(n.info(), attrs, spatial, error);
}

/// For a walk from `from` points to `to` points through a kernel of
/// `kernel` points: table[p * K + k] = the `to` point that point p reaches
/// through kernel point k, or -1 outside [0, to). `forward`: to = p·s − pad
/// + k·d (conv, pools, from the output); else the scatter of a transposed
/// conv, to = p·s − pad + k·d from the input.
std::vector<int64_t> windowTable(const std::vector<int64_t>& from, const std::vector<int64_t>& to,
                                 const std::vector<int64_t>& kernel, const ir::rules::WindowGeometry& g) {
  const size_t spatial = from.size();
  const int64_t points = product(from), kernelPoints = product(kernel);
  std::vector<int64_t> table(static_cast<size_t>(points * kernelPoints));
  std::vector<int64_t> p(spatial, 0);
  for (int64_t pi = 0; pi < points; ++pi) {
    std::vector<int64_t> k(spatial, 0);
    for (int64_t ki = 0; ki < kernelPoints; ++ki) {
      int64_t linear = 0;
      for (size_t d = 0; d < spatial && linear >= 0; ++d) {
        const int64_t at = p[d] * g.stride[d] - g.padBegin[d] + k[d] * g.dilation[d];
        linear = at < 0 || at >= to[d] ? -1 : linear * to[d] + at;
      }
      table[static_cast<size_t>(pi * kernelPoints + ki)] = linear;
      nextIndex(k, kernel);
    }
    nextIndex(p, from);
  }
  return table;
}

std::vector<int64_t> spatialOf(const std::vector<int64_t>& shape) { return {shape.begin() + 2, shape.end()}; }

Tensor convolution(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape) {
  const Tensor& x = operands[0];
  const Tensor& w = operands[1];
  const std::vector<int64_t> inSpatial = spatialOf(x.shape()), outSpatial = spatialOf(shape),
                             kernel = spatialOf(w.shape());
  const ir::rules::WindowGeometry g = geometryOf(n, kernel.size());
  const ir::Attribute* groupsAttr = n.attrs.find("groups");
  const int64_t groups = groupsAttr ? groupsAttr->i : 1;
  const int64_t batch = x.shape()[0], cin = x.shape()[1], cout = shape[1];
  const int64_t cinG = cin / groups, coutG = cout / groups;
  const int64_t inPoints = product(inSpatial), outPoints = product(outSpatial), kPoints = product(kernel);
  const std::vector<double> xs = toDoubles(x), ws = toDoubles(w);
  std::vector<double> acc(static_cast<size_t>(batch * cout * outPoints), 0.0);
  if (operands.size() == 3)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t co = 0; co < cout; ++co)
        for (int64_t o = 0; o < outPoints; ++o)
          acc[static_cast<size_t>((b * cout + co) * outPoints + o)] = operands[2].getDouble(co);
  if (n.op == OpId::Conv) {
    // out[b, co, o] += x[b, g·cinG + ci, table[o, k]] · w[co, ci, k]
    const std::vector<int64_t> table = windowTable(outSpatial, inSpatial, kernel, g);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t co = 0; co < cout; ++co) {
        const int64_t group = co / coutG;
        double* out = &acc[static_cast<size_t>((b * cout + co) * outPoints)];
        for (int64_t ci = 0; ci < cinG; ++ci) {
          const double* in = &xs[static_cast<size_t>((b * cin + group * cinG + ci) * inPoints)];
          const double* wk = &ws[static_cast<size_t>((co * cinG + ci) * kPoints)];
          for (int64_t o = 0; o < outPoints; ++o)
            for (int64_t k = 0; k < kPoints; ++k)
              if (const int64_t at = table[static_cast<size_t>(o * kPoints + k)]; at >= 0) out[o] += in[at] * wk[k];
        }
      }
  } else {
    // Transposed: x[b, ci, i] scatters into out[b, g·coutG + co, table[i, k]]
    // through w[ci, co, k].
    const std::vector<int64_t> table = windowTable(inSpatial, outSpatial, kernel, g);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t ci = 0; ci < cin; ++ci) {
        const int64_t group = ci / cinG;
        const double* in = &xs[static_cast<size_t>((b * cin + ci) * inPoints)];
        for (int64_t co = 0; co < coutG; ++co) {
          double* out = &acc[static_cast<size_t>((b * cout + group * coutG + co) * outPoints)];
          const double* wk = &ws[static_cast<size_t>((ci * coutG + co) * kPoints)];
          for (int64_t i = 0; i < inPoints; ++i)
            for (int64_t k = 0; k < kPoints; ++k)
              if (const int64_t at = table[static_cast<size_t>(i * kPoints + k)]; at >= 0) out[at] += in[i] * wk[k];
        }
      }
  }
  Tensor out(x.dtype(), shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.setDouble(i, acc[static_cast<size_t>(i)]);
  return out;
}

/// avg_pool's divisor at each output point: the window's points inside the
/// input, or (count_include_pad) inside the padded input — per dim
/// min(start + kernel, size + padEnd) − start, as torch counts a ceil_mode
/// window that runs past the padding.
std::vector<double> poolDivisors(const std::vector<int64_t>& inSpatial, const std::vector<int64_t>& outSpatial,
                                 const std::vector<int64_t>& kernel, const ir::rules::WindowGeometry& g,
                                 bool includePad) {
  const size_t spatial = kernel.size();
  std::vector<double> out(static_cast<size_t>(product(outSpatial)));
  std::vector<int64_t> o(spatial, 0);
  for (double& divisor : out) {
    double count = 1;
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t start = o[d] * g.stride[d] - g.padBegin[d];
      const int64_t end = std::min(start + kernel[d], inSpatial[d] + g.padEnd[d]);
      count *=
          static_cast<double>(includePad ? end - start : std::min(end, inSpatial[d]) - std::max<int64_t>(start, 0));
    }
    divisor = count;
    nextIndex(o, outSpatial);
  }
  return out;
}

Tensor pooling(const ir::Node& n, const Tensor& x, const std::vector<int64_t>& shape) {
  std::vector<int64_t> kernel;
  for (const ir::Attribute& k : n.attrs.find("kernel")->list) kernel.push_back(k.i);
  const std::vector<int64_t> inSpatial = spatialOf(x.shape()), outSpatial = spatialOf(shape);
  const ir::rules::WindowGeometry g = geometryOf(n, kernel.size());
  const std::vector<int64_t> table = windowTable(outSpatial, inSpatial, kernel, g);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t inPoints = product(inSpatial), outPoints = product(outSpatial), kPoints = product(kernel);
  const bool isMax = n.op == OpId::MaxPool;
  const ir::Attribute* includePad = n.attrs.find("count_include_pad");
  const std::vector<double> divisors =
      isMax ? std::vector<double>{} : poolDivisors(inSpatial, outSpatial, kernel, g, includePad && includePad->b);
  const bool floatMath = ir::isFloat(x.dtype());
  Tensor out(x.dtype(), shape);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < outPoints; ++o) {
      const int64_t dst = p * outPoints + o;
      double sum = 0, best = -std::numeric_limits<double>::infinity();
      int64_t bestInt = std::numeric_limits<int64_t>::min();
      for (int64_t k = 0; k < kPoints; ++k) {
        const int64_t at = table[static_cast<size_t>(o * kPoints + k)];
        if (at < 0) continue;  // padding: never the max, adds nothing
        const int64_t src = p * inPoints + at;
        if (!isMax) {
          sum += x.getDouble(src);
        } else if (floatMath) {
          const double v = x.getDouble(src);
          if (std::isnan(v) || v > best) best = std::isnan(best) ? best : v;  // NaN propagates, as torch
        } else {
          bestInt = std::max(bestInt, x.getInt(src));
        }
      }
      if (!isMax)
        out.setDouble(dst, sum / divisors[static_cast<size_t>(o)]);
      else if (floatMath)
        out.setDouble(dst, best);
      else
        out.setInt(dst, bestInt);
    }
  return out;
}

}  // namespace

Tensor window(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape) {
  if (n.op == OpId::Conv || n.op == OpId::ConvTranspose) return convolution(n, operands, shape);
  return pooling(n, operands[0], shape);
}

}  // namespace graphc::runtime::reference
