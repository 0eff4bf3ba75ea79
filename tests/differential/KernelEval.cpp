#include "KernelEval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "ir/Diagnostics.h"
#include "ir/SizeMath.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::difftest {

namespace {

using namespace codegen::kernel;

class Evaluator {
 public:
  Evaluator(const Kernel& k, const std::vector<runtime::Tensor>& inputs, const ir::SymbolBindings& sizes)
      : k_(k), inputs_(inputs), sizes_(sizes) {}

  std::vector<runtime::Tensor> run() {
    std::vector<runtime::Tensor> outputs;
    for (const Buffer& b : k_.outputs)
      outputs.emplace_back(b.type.dtype, runtime::concreteShape(ir::substitute(b.type, sizes_)));
    std::vector<int64_t> outer = extents(k_.outer), inner = extents(k_.reduceSizes);
    vars_.assign(outer.size() + std::max<size_t>(inner.size(), 1) + 1, 0);
    forEach(outer, 0, [&] {
      rowValues_.clear();
      for (const Store& s : k_.stores) {
        if (s.insideReduction) continue;
        store(outputs[s.buffer], s);
      }
      forEach(inner, outer.size(), [&] {
        for (const Store& s : k_.stores)
          if (s.insideReduction) store(outputs[s.buffer], s);
      });
    });
    return outputs;
  }

 private:
  std::vector<int64_t> extents(const std::vector<ir::Dim>& dims) {
    std::vector<int64_t> out;
    for (const ir::Dim& d : dims) out.push_back(ir::checkedValue(d, sizes_, "a kernel's loop"));
    return out;
  }

  template <typename Body>
  void forEach(const std::vector<int64_t>& sizes, size_t first, Body body) {
    int64_t total = 1;
    for (int64_t s : sizes) total *= s;
    for (int64_t linear = 0; linear < total; ++linear) {
      int64_t rest = linear;
      for (size_t k = sizes.size(); k-- > 0;) {
        vars_[first + k] = rest % sizes[k];
        rest /= sizes[k];
      }
      ++point_;
      body();
    }
  }

  int64_t index(const IndexPtr& e) {
    switch (e->kind) {
      case Index::Kind::Const: return e->value;
      case Index::Kind::Var: return vars_.at(static_cast<size_t>(e->value));
      case Index::Kind::Sym: return sizes_.at(e->symbol);
      case Index::Kind::Add: return index(e->lhs) + index(e->rhs);
      case Index::Kind::Mul: return index(e->lhs) * index(e->rhs);
      case Index::Kind::Div: return index(e->lhs) / index(e->rhs);
      case Index::Kind::Mod: return index(e->lhs) % index(e->rhs);
      case Index::Kind::Indirect: return wrapIndex(static_cast<int64_t>(value(e->load)), index(e->rhs));
      case Index::Kind::Clamp: return std::clamp<int64_t>(index(e->lhs), 0, index(e->rhs) - 1);
    }
    return 0;
  }

  int64_t offset(const runtime::Tensor& t, const std::vector<IndexPtr>& idx) {
    int64_t linear = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      int64_t i = index(idx[k]);
      if (i < 0 || i >= t.shape()[k]) throw ir::Error("kernel IR index out of bounds");
      linear = linear * t.shape()[k] + i;
    }
    return linear;
  }

  void store(runtime::Tensor& out, const Store& s) { out.setDouble(offset(out, s.index), value(s.value)); }

  /// The value of an expression at the current loop point. Expressions are
  /// DAGs (the lowering shares subexpressions) and reductions and the GEMM
  /// accumulator depend only on the outer loops, so values are cached per
  /// point and per row: evaluating the tree naively is exponential in the
  /// nesting of layer_norm-like chains.
  double value(const ExprPtr& e) {
    if (e->kind == Expr::Kind::Reduce || e->kind == Expr::Kind::Acc) {
      auto it = rowValues_.find(e.get());
      if (it != rowValues_.end()) return it->second;
      const double v = compute(e);
      rowValues_[e.get()] = v;
      return v;
    }
    if (e->kind != Expr::Kind::Op) return compute(e);
    auto& cached = pointValues_[e.get()];
    if (cached.first == point_) return cached.second;
    const double v = compute(e);
    pointValues_[e.get()] = {point_, v};  // compute() may have rehashed the map
    return v;
  }

  double compute(const ExprPtr& e) {
    switch (e->kind) {
      case Expr::Kind::Load: return inputs_[e->buffer].getDouble(offset(inputs_[e->buffer], e->index));
      case Expr::Kind::Const:  // this evaluator computes in double: exact for the graphs it is given
        return ir::isFloat(e->dtype) ? runtime::reference::roundTo(e->dtype, e->value)
                                     : static_cast<double>(e->intValue);
      case Expr::Kind::Acc: return runtime::reference::roundTo(e->dtype, accumulator());
      case Expr::Kind::Select: {
        const int64_t i = index(e->index[0]);
        for (size_t k = 0; k + 1 < e->args.size(); ++k)
          if (i < index(e->bounds[k])) return value(e->args[k]);
        return value(e->args.back());
      }
      case Expr::Kind::Reduce: return runtime::reference::roundTo(e->dtype, reduce(e));
      case Expr::Kind::InBounds: {
        for (size_t k = 0; k < e->index.size(); ++k) {
          const int64_t i = index(e->index[k]);
          if (i < 0 || i >= index(e->sizes[k])) return 0;
        }
        return 1;
      }
      case Expr::Kind::IndexValue: {
        runtime::Tensor t(e->dtype, {});
        t.setInt(0, index(e->index[0]));
        return t.getDouble(0);
      }
      case Expr::Kind::Op: {
        std::vector<double> args;
        for (const ExprPtr& a : e->args) args.push_back(value(a));
        if (isIntegerDivision(*e)) {  // compiled kernels' rule: a zero divisor gives 0
          const auto a = static_cast<int64_t>(args[0]), b = static_cast<int64_t>(args[1]);
          return b == 0 ? 0.0
                        : runtime::reference::roundTo(
                              e->dtype, static_cast<double>(runtime::reference::divideIntegers(e->op, a, b)));
        }
        return runtime::reference::roundTo(e->dtype, runtime::reference::pointwiseScalar(e->op, e->attrs, args));
      }
    }
    return 0;
  }

  static bool isIntegerDivision(const Expr& e) {
    return ir::isInteger(e.dtype) &&
           (e.op == ir::OpId::Fmod || e.op == ir::OpId::Remainder || e.op == ir::OpId::FloorDivide);
  }

  double reduce(const ExprPtr& e) {
    // The reduction binds the inner variables; keep the caller's for after.
    const std::vector<int64_t> saved = vars_;
    std::vector<int64_t> inner = extents(k_.reduceSizes);
    double acc = e->op == ir::OpId::Amax   ? -INFINITY
                 : e->op == ir::OpId::Amin ? INFINITY
                 : e->op == ir::OpId::Prod ? 1
                                           : 0;
    int64_t count = 0;
    bool nan = false;
    forEach(inner, k_.outer.size(), [&] {
      double v = value(e->args[0]);
      nan |= std::isnan(v);
      if (e->op == ir::OpId::Amax)
        acc = std::max(acc, v);
      else if (e->op == ir::OpId::Amin)
        acc = std::min(acc, v);
      else if (e->op == ir::OpId::Prod)
        acc *= v;
      else
        acc += v;
      ++count;
    });
    vars_ = saved;
    ++point_;
    if (nan && (e->op == ir::OpId::Amax || e->op == ir::OpId::Amin)) return NAN;
    return e->op == ir::OpId::Mean ? acc / static_cast<double>(count) : acc;
  }

  double accumulator() {
    const Gemm& g = *k_.gemm;
    const int64_t kSize = index(g.k);
    double acc = 0;
    for (int64_t k = 0; k < kSize; ++k) {
      vars_[static_cast<size_t>(g.kVar)] = k;
      acc += inputs_[g.a].getDouble(offset(inputs_[g.a], g.aIndex)) *
             inputs_[g.b].getDouble(offset(inputs_[g.b], g.bIndex));
    }
    return acc;
  }

  const Kernel& k_;
  const std::vector<runtime::Tensor>& inputs_;
  const ir::SymbolBindings& sizes_;
  std::vector<int64_t> vars_;
  uint64_t point_ = 1;  // bumped whenever a loop variable changes
  std::unordered_map<const Expr*, std::pair<uint64_t, double>> pointValues_;
  std::unordered_map<const Expr*, double> rowValues_;  // cleared per outer point
};

}  // namespace

std::vector<runtime::Tensor> evaluateKernel(const Kernel& k, const std::vector<runtime::Tensor>& inputs,
                                            const ir::SymbolBindings& sizes) {
  return Evaluator(k, inputs, sizes).run();
}

}  // namespace graphc::difftest
