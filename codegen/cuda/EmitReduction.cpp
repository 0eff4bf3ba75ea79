// The row reductions: WarpPerRow (a warp per short static row) and
// BlockPerRow (a block per row, a static row of up to 16 elements per
// thread held in registers across the passes).
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

void KernelWriter::reduction() {
  const bool warp = info_.strategy == Strategy::WarpPerRow;
  const std::vector<const Expr*> order = reductionOrder(k_);
  signature({"rows", "rowLength"});
  if (!warp) line("__shared__ double scratch[32];");
  const std::string threads = warp ? "32" : "(i64)blockDim.x";
  line("const int lane = {};", warp ? "threadIdx.x & 31" : "threadIdx.x");
  if (warp)
    open(fmt::format(
        "for (i64 row = (i64)blockIdx.x * {0} + (threadIdx.x >> 5); row < rows; row += (i64)gridDim.x * {0})",
        info_.rowsPerBlock));
  else
    open("for (i64 row = blockIdx.x; row < rows; row += gridDim.x)");
  unravel("row", k_.outer, 0);
  planRowCache(order, warp ? 32 : info_.blockThreads);
  if (!rowCache_.empty()) {
    // The row's loads, once, into registers; every pass below reads them there.
    for (auto& [load, array] : rowCache_) line("{} {}[{}];", computeType(load->dtype), array, rowChunks_);
    openRowLoop(threads, false);
    for (auto& [load, array] : rowCache_) {
      const Buffer& in = k_.inputs[static_cast<size_t>(load->buffer)];
      line("{}[c] = {};", array,
           fromStorage(in.type.dtype, fmt::format("{}[{}]", in.name, offset(in.type, load->index))));
    }
    closeRowLoop();
  }
  for (const Expr* r : order) overrides_[r] = reduce(*r, warp, threads);
  stores(false, "lane == 0");
  if (std::any_of(k_.stores.begin(), k_.stores.end(), [](const Store& s) { return s.insideReduction; })) {
    openRowLoop(threads, true);
    stores(true);
    closeRowLoop();
  }
  for (const Expr* r : order) overrides_.erase(r);
  close();
  close();
}

void KernelWriter::planRowCache(const std::vector<const Expr*>& reduces, int threads) {
  rowCache_.clear();
  const int64_t row = staticExtent(k_.reduceSizes);
  if (row <= 0) return;
  const int64_t chunks = (row + threads - 1) / threads;
  if (chunks > 16) return;
  std::vector<const Expr*> loads;
  std::unordered_set<const Expr*> seen;
  std::function<void(const Expr*)> visit = [&](const Expr* e) {
    if (!seen.insert(e).second || e->kind == Expr::Kind::Select) return;
    if (e->kind == Expr::Kind::Load) {
      for (const IndexPtr& i : e->index)
        if (readsVarFrom(i, static_cast<int64_t>(k_.outer.size()))) {
          loads.push_back(e);
          break;
        }
      return;
    }
    for (const ExprPtr& a : e->args) visit(a.get());
  };
  for (const Expr* r : reduces) visit(r->args[0].get());
  for (const Store& s : k_.stores)
    if (s.insideReduction) visit(s.value.get());
  if (loads.empty() || static_cast<int64_t>(loads.size()) * chunks > 64) return;  // register budget
  rowChunks_ = chunks;
  rowThreads_ = threads;
  info_.rowChunks = static_cast<int>(chunks);
  for (const Expr* l : loads) rowCache_.emplace_back(l, fmt::format("row{}", rowCache_.size()));
}

bool KernelWriter::readsVarFrom(const IndexPtr& i, int64_t first) {
  return codegen::kernel::readsVar(i, [first](int64_t var) { return var >= first; });
}

void KernelWriter::openRowLoop(const std::string& threads, bool readCache) {
  if (rowCache_.empty()) {
    open(fmt::format("for (i64 e = lane; e < rowLength; e += {})", threads));
  } else {
    line("#pragma unroll");
    open(fmt::format("for (int c = 0; c < {}; ++c)", rowChunks_));
    line("const i64 e = lane + (i64)c * {};", rowThreads_);
    open("if (e < rowLength)");
  }
  unravel("e", k_.reduceSizes, k_.outer.size());
  if (readCache)
    for (auto& [load, array] : rowCache_) scopes_.back()[load] = array + "[c]";
}

void KernelWriter::closeRowLoop() {
  if (!rowCache_.empty()) close();
  close();
}

std::string KernelWriter::reduce(const Expr& e, bool warp, const std::string& threads) {
  const DType argType = e.args[0]->dtype;
  const bool isFloat = ir::isFloat(argType);
  const bool isSum = e.op == OpId::Sum || e.op == OpId::Mean;
  const bool isMax = e.op == OpId::Amax;
  std::string accType, init, combine;
  if (isSum) {
    accType = isFloat ? "double" : "i64";
    init = isFloat ? "0.0" : "0ll";
    combine = "gc::Sum()";
  } else if (e.op == OpId::Prod) {
    accType = isFloat ? "double" : "i64";
    init = isFloat ? "1.0" : "1ll";
    combine = "gc::Prod()";
  } else if (isFloat) {
    accType = argType == DType::F64 ? "double" : "float";
    init = std::string(isMax ? "-" : "") + (argType == DType::F64 ? "gc::inf_f64()" : "gc::inf_f32()");
    combine = isMax ? "gc::FMax()" : "gc::FMin()";
  } else {
    accType = argType == DType::Bool || argType == DType::I8 ? "int" : computeType(argType);
    const char* lowest = argType == DType::I64   ? "(i64)0x8000000000000000ull"
                         : argType == DType::I32 ? "(int)0x80000000u"
                         : argType == DType::I8  ? "-128"
                                                 : "0";
    const char* highest = argType == DType::I64   ? "0x7fffffffffffffffll"
                          : argType == DType::I32 ? "0x7fffffff"
                          : argType == DType::I8  ? "127"
                                                  : "1";
    init = isMax ? lowest : highest;
    combine = isMax ? "gc::IMax()" : "gc::IMin()";
  }
  const std::string acc = fresh();
  line("{} {} = {};", accType, acc, init);
  openRowLoop(threads);
  line("{} = {}({}, ({}){});", acc, combine, acc, accType, value(e.args[0]));
  closeRowLoop();
  line("{} = {};", acc,
       warp ? fmt::format("gc::warp_reduce({}, {})", acc, combine)
            : fmt::format("gc::block_reduce({}, {}, scratch)", acc, combine));
  std::string r = acc;
  if (e.op == OpId::Mean) r = fmt::format("({} / (double)rowLength)", acc);
  if (isFloat) return define(e.dtype, rounded(e.dtype, fmt::format("({})({})", computeType(e.dtype), r)));
  return define(e.dtype, fmt::format("({})({})", computeType(e.dtype), r));
}

}  // namespace graphc::codegen::cuda
