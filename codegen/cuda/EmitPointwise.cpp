// The Pointwise strategy: a grid-stride loop over the flattened outer
// space, with a 16-byte vector path when the last dim and the buffers'
// alignment allow it (checked on the device).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "codegen/cuda/KernelWriter.h"
#include "codegen/cuda/Preamble.h"
#include "codegen/cuda/Syntax.h"
#include "codegen/kernel/Analysis.h"
#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cuda {

using ir::OpId;

bool KernelWriter::isLastVar(const IndexPtr& i) const {
  return i->kind == Index::Kind::Var && i->value == static_cast<int64_t>(k_.outer.size()) - 1;
}

bool KernelWriter::contiguous(const ir::TensorType& t, const std::vector<IndexPtr>& idx) const {
  if (idx.empty() || k_.outer.empty() || !isLastVar(idx.back()) || t.shape.back() != k_.outer.back()) return false;
  for (size_t d = 0; d + 1 < idx.size(); ++d)
    if (readsVar(idx[d], static_cast<int64_t>(k_.outer.size()) - 1)) return false;
  return true;
}

bool KernelWriter::readsVar(const IndexPtr& i, int64_t v) {
  return codegen::kernel::readsVar(i, [v](int64_t var) { return var == v; });
}

void KernelWriter::vectorLoads(const ExprPtr& e, std::vector<const Expr*>& out, std::unordered_set<const Expr*>& seen) {
  if (!seen.insert(e.get()).second) return;
  if (e->kind == Expr::Kind::Select) return;
  if (e->kind == Expr::Kind::Load && contiguous(k_.inputs[static_cast<size_t>(e->buffer)].type, e->index))
    out.push_back(e.get());
  for (const ExprPtr& a : e->args) vectorLoads(a, out, seen);
}

void KernelWriter::pointwise() {
  const size_t rank = k_.outer.size();
  std::vector<const Expr*> loads;
  std::unordered_set<const Expr*> seen;
  std::vector<const Store*> vstores;
  for (const Store& s : k_.stores) {
    vectorLoads(s.value, loads, seen);
    if (contiguous(k_.outputs[static_cast<size_t>(s.buffer)].type, s.index)) vstores.push_back(&s);
  }
  int64_t widest = 0;
  for (const Expr* l : loads)
    widest = std::max<int64_t>(widest, ir::dtypeSize(k_.inputs[static_cast<size_t>(l->buffer)].type.dtype));
  for (const Store* s : vstores)
    widest = std::max<int64_t>(widest, ir::dtypeSize(k_.outputs[static_cast<size_t>(s->buffer)].type.dtype));
  const int width = widest == 0 ? 1 : static_cast<int>(std::min<int64_t>(8, 16 / widest));
  info_.vectorWidth = (rank > 0 && width > 1 && !(loads.empty() && vstores.empty())) ? width : 1;
  signature({"total"});
  line("const i64 stride = (i64)gridDim.x * blockDim.x;");
  line("const i64 first = (i64)blockIdx.x * blockDim.x + threadIdx.x;");
  if (info_.vectorWidth > 1) {
    const int w = info_.vectorWidth;
    std::string aligned = fmt::format("{} % {} == 0", dim(k_.outer.back()), w);
    std::unordered_set<std::string> named;
    auto alignedBuffer = [&](const Buffer& b) {
      if (named.insert(b.name).second)
        aligned += fmt::format(" && (u64){} % {} == 0", b.name, w * ir::dtypeSize(b.type.dtype));
    };
    for (const Expr* l : loads) alignedBuffer(k_.inputs[static_cast<size_t>(l->buffer)]);
    for (const Store* s : vstores) alignedBuffer(k_.outputs[static_cast<size_t>(s->buffer)]);
    line("// {}-wide vector path: the last dim and every vector buffer's address allow it", w);
    open(fmt::format("if ({})", aligned));
    open(fmt::format("for (i64 q = first; q < total / {}; q += stride)", w));
    unravel(fmt::format("q * {}", w), k_.outer, 0);
    const std::string base = vars_[rank - 1];
    // The vector loads, all before any store.
    std::unordered_map<const Expr*, std::string> lanes;
    for (const Expr* l : loads) {
      const Buffer& in = k_.inputs[static_cast<size_t>(l->buffer)];
      const std::string vec = fresh();
      line("const gc::Vec<{0}, {1}> {2} = *reinterpret_cast<const gc::Vec<{0}, {1}>*>({3} + {4});",
           storageType(in.type.dtype), w, vec, in.name, offset(in.type, l->index));
      lanes[l] = vec;
    }
    std::unordered_map<const Store*, std::string> results;
    for (const Store* s : vstores) {
      const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
      results[s] = fresh();
      line("gc::Vec<{}, {}> {};", storageType(out.type.dtype), w, results[s]);
    }
    line("#pragma unroll");
    open(fmt::format("for (int lane = 0; lane < {}; ++lane)", w));
    line("const i64 il = {} + lane;", base);
    vars_[rank - 1] = "il";
    // In the loads' order, not the map's: the source must not depend on addresses.
    for (const Expr* l : loads)
      overrides_[l] =
          define(l->dtype, fromStorage(k_.inputs[static_cast<size_t>(l->buffer)].type.dtype, lanes.at(l) + ".v[lane]"));
    std::vector<std::pair<const Store*, std::string>> values;
    for (const Store& s : k_.stores) values.emplace_back(&s, value(s.value));
    for (auto& [s, v] : values) {
      const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
      if (results.count(s))
        line("{}.v[lane] = {};", results[s], toStorage(out.type.dtype, v));
      else
        line("{}[{}] = {};", out.name, offset(out.type, s->index), toStorage(out.type.dtype, v));
    }
    overrides_.clear();
    close();
    vars_[rank - 1] = base;
    for (const Store* s : vstores) {
      const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
      line("*reinterpret_cast<gc::Vec<{0}, {1}>*>({2} + {3}) = {4};", storageType(out.type.dtype), w, out.name,
           offset(out.type, s->index), results[s]);
    }
    close();
    line("return;");
    close();
  }
  open("for (i64 p = first; p < total; p += stride)");
  unravel("p", k_.outer, 0);
  stores(false);
  close();
  close();
}

}  // namespace graphc::codegen::cuda
