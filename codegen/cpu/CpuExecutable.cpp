#include "codegen/cpu/CpuExecutable.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/MxOperands.h"
#include "codegen/StepPlan.h"
#include "codegen/cpu/CompiledKernel.h"
#include "codegen/kernel/KernelIR.h"
#include "ir/Half.h"
#include "ir/Printer.h"
#include "ir/SizeMath.h"
#include "runtime/InputUpdates.h"
#include "runtime/cpu/Attention.h"
#include "runtime/cpu/Eigh.h"
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/reference/Interpreter.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cpu {

namespace {

using runtime::Tensor;

using codegen::RegionPlan;
using codegen::SlotPlan;
using codegen::StepPlan;

int64_t extent(const std::vector<ir::Dim>& dims, const ir::SymbolBindings& sizes) {
  return ir::checkedExtent(dims, sizes, "a kernel's iteration space");
}

// ---- binding: one call's (or one capture's) buffers and arguments ----------

struct BoundRegion;

struct BoundStep {
  const StepPlan* plan = nullptr;
  const CompiledKernel* kernel = nullptr;  // Kernel, Gemm
  std::vector<Tensor> inputs, outputs;
  std::vector<void*> buffers;  // kernel arguments: inputs then outputs
  std::vector<int64_t> sizes;
  int64_t total = 0, grain = 1;
  int64_t cancelPiece = 1;  // outer points between two looks at RunOptions::cancel
  runtime::cpu::GemmProblem gemm;
  std::vector<float> gemmA, gemmB;  // f16/bf16 operands widened to f32
  runtime::cpu::AttentionProblem attention;
  std::unique_ptr<BoundRegion> branches[2];
};

struct BoundRegion {
  std::vector<Tensor> tensors;  // per slot
  std::vector<BoundStep> steps;
};

/// An attention step's data pointers at its tensors.
void pointAttention(BoundStep& b) {
  const codegen::kernel::Kernel& k = *b.plan->kernelIR;
  b.attention.q = b.inputs[static_cast<size_t>(k.gemm->a)].as<float>();
  b.attention.k = b.inputs[static_cast<size_t>(k.gemm->b)].as<float>();
  b.attention.v = b.inputs[static_cast<size_t>(k.attention->v)].as<float>();
  b.attention.out = b.outputs[0].as<float>();
}

/// What a GEMM step's runs share, made when the Executable is built: its
/// constant operands packed, a convolution's geometry.
struct Prepacked {
  std::optional<runtime::cpu::PackedWeights> a, b;
  std::optional<runtime::cpu::MxPanels> mx;  // an MX weight, in panel order
  std::optional<runtime::cpu::gemm::ConvGeometry> conv;
  std::optional<runtime::cpu::gemm::ConvTransposeGeometry> convTranspose;
};
using PrepackedSteps = std::unordered_map<const StepPlan*, Prepacked>;

/// What a kernel reads for each MX weight it gathers from (an embedding
/// table): the weight's bytes as one buffer (codegen/MxOperands.h), made
/// once; the kernel decodes the rows it reads.
using MxBuffers = std::unordered_map<const SlotPlan*, std::vector<std::byte>>;

void collectMxBuffers(const RegionPlan& plan, MxBuffers& out) {
  for (const StepPlan& s : plan.steps) {
    for (const auto& branch : s.branches)
      if (branch) collectMxBuffers(*branch, out);
    if (s.kind != StepPlan::Kind::Kernel) continue;
    for (int in : s.inputs) {
      const SlotPlan& slot = plan.slots[static_cast<size_t>(in)];
      if (slot.mx && !out.count(&slot)) out.emplace(&slot, codegen::mxBuffer(*slot.mx));
    }
  }
}

/// The conv kernel's geometry in the GEMM runtime's terms.
runtime::cpu::gemm::ConvGeometry convGeometry(const codegen::kernel::ConvAsGemm& c) {
  using Pool = runtime::cpu::gemm::PoolWindow::Kind;
  const Pool pool = c.pool == codegen::kernel::PoolKind::Max       ? Pool::Max
                    : c.pool == codegen::kernel::PoolKind::Average ? Pool::Average
                                                                   : Pool::None;
  return {c.depthwise, c.groups, c.channels, c.in,       c.out,
          c.kernel,    c.stride, c.dilation, c.padBegin, {pool, c.padEnd, c.countIncludePad}};
}

/// Packs the constant f32 operands of every GEMM step of `plan` (cond
/// branches included) for the host's micro-kernel: the weights of a
/// linear, a matmul or a convolution are packed once, here, instead of on
/// every call.
void prepack(const RegionPlan& plan, PrepackedSteps& out) {
  for (const StepPlan& s : plan.steps) {
    for (const auto& branch : s.branches)
      if (branch) prepack(*branch, out);
    if (s.kind != StepPlan::Kind::Gemm) continue;
    const codegen::kernel::Gemm& g = *s.kernelIR->gemm;
    auto constant = [&](int input) -> const Tensor* {
      const SlotPlan& slot = plan.slots[static_cast<size_t>(s.inputs[static_cast<size_t>(input)])];
      if (slot.where != SlotPlan::Where::Constant || slot.mx || slot.constant.dtype() != ir::DType::F32) return nullptr;
      return &slot.constant;
    };
    Prepacked p;
    if (g.conv && !g.conv->transposed) p.conv = convGeometry(*g.conv);
    if (const int w = mxWeightInput(*s.kernelIR); w >= 0)
      if (const auto& mx = plan.slots[static_cast<size_t>(s.inputs[static_cast<size_t>(w)])].mx)
        p.mx = g.conv ? runtime::cpu::packMxFilters(*mx, *p.conv) : runtime::cpu::packMxWeightsB(*mx);
    if (g.conv && g.conv->transposed) {  // the filters [channels, outChannels, kernel...]
      const codegen::kernel::ConvAsGemm& c = *g.conv;
      p.convTranspose.emplace(c.channels, c.outChannels, c.in, c.out, c.kernel, c.stride, c.dilation, c.padBegin);
      if (const Tensor* w = constant(g.a))
        p.a = runtime::cpu::packTransposedFilters(w->as<float>(), c.channels,
                                                  w->numel() / std::max<int64_t>(c.channels, 1));
    } else if (g.conv) {  // the filters [M, K] (a pool has none)
      if (const Tensor* w = g.conv->pool == codegen::kernel::PoolKind::None ? constant(g.a) : nullptr) {
        const int64_t m = w->shape()[0], k = w->numel() / std::max<int64_t>(m, 1);
        p.a = g.conv->depthwise ? runtime::cpu::packDepthwiseFilters(w->as<float>(), m, k, *p.conv)
                                : runtime::cpu::packFilters(w->as<float>(), m, k, *p.conv);
      }
    } else if (const Tensor* w = constant(g.b); w && w->shape().size() >= (g.transposeB ? 2u : 1u)) {
      // [..., k, n] matrices (a vector is one column), or a linear's [n, k]
      const std::vector<int64_t>& shape = w->shape();
      const int64_t k = g.transposeB ? shape.back() : shape.size() == 1 ? shape[0] : shape[shape.size() - 2];
      const int64_t n = g.transposeB ? shape[0] : shape.size() == 1 ? 1 : shape.back();
      const int64_t matrices = k * n == 0 ? 0 : w->numel() / (k * n);
      if (matrices > 0) p.b = runtime::cpu::packWeightsB(w->as<float>(), matrices, k, n, g.transposeB);
    }
    if (p.a || p.b || p.mx || p.conv || p.convTranspose) out.emplace(&s, std::move(p));
  }
}

}  // namespace

int mxWeightInput(const codegen::kernel::Kernel& k) {
  if (!k.gemm || k.attention) return -1;  // (attention reads Q, K and V as f32)
  const codegen::kernel::Gemm& g = *k.gemm;
  if (g.conv) return g.conv->transposed || g.conv->depthwise || g.conv->groups > 1 ? -1 : g.a;
  return g.b;
}

namespace {

/// Calls `f` on every load of kernel IR reachable from `e` (indirect
/// indices' loads included).
template <typename F>
void forEachLoad(const codegen::kernel::ExprPtr& e, F&& f);

template <typename F>
void forEachLoadIn(const codegen::kernel::IndexPtr& i, F&& f) {
  if (!i) return;
  if (i->load) forEachLoad(i->load, f);
  forEachLoadIn(i->lhs, f);
  forEachLoadIn(i->rhs, f);
}

template <typename F>
void forEachLoad(const codegen::kernel::ExprPtr& e, F&& f) {
  if (!e) return;
  if (e->kind == codegen::kernel::Expr::Kind::Load) f(*e);
  for (const codegen::kernel::IndexPtr& i : e->index) forEachLoadIn(i, f);
  for (const codegen::kernel::IndexPtr& i : e->sizes) forEachLoadIn(i, f);
  for (const codegen::kernel::ExprPtr& a : e->args) forEachLoad(a, f);
}

bool readsIndirect(const codegen::kernel::IndexPtr& i) {
  return i && (i->kind == codegen::kernel::Index::Kind::Indirect || readsIndirect(i->lhs) || readsIndirect(i->rhs));
}

}  // namespace

bool gathersRows(const codegen::kernel::Kernel& k, int input) {
  if (k.gemm || k.inputs[static_cast<size_t>(input)].type.rank() != 2) return false;
  bool loaded = false, onlyRows = true;
  auto check = [&](const codegen::kernel::Expr& load) {
    if (load.buffer != input) return;
    loaded = true;
    if (load.index.empty() || !readsIndirect(load.index[0])) onlyRows = false;
  };
  for (const codegen::kernel::Store& st : k.stores) {
    for (const codegen::kernel::IndexPtr& i : st.index) forEachLoadIn(i, check);
    forEachLoad(st.value, check);
  }
  return loaded && onlyRows;
}

bool readsMxInput(const codegen::kernel::Kernel& k, int input) {
  if (k.attention) return false;
  if (!k.gemm) return gathersRows(k, input);
  const int64_t rank = k.inputs[static_cast<size_t>(input)].type.rank();
  const bool matmulB = !k.gemm->conv && !k.gemm->transposeB;  // stored transposed: a matrix
  return input == mxWeightInput(k) && rank >= 2 && (!matmulB || rank == 2);
}

namespace {

struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }
};

class Binder {
 public:
  Binder(const ir::SymbolBindings& sizes, const std::vector<std::shared_ptr<const CompiledKernel>>& kernels,
         const PrepackedSteps& prepacked, const MxBuffers& mxBuffers)
      : sizes_(sizes), kernels_(kernels), prepacked_(prepacked), mxBuffers_(mxBuffers) {}

  std::unique_ptr<BoundRegion> bind(const RegionPlan& plan, const std::vector<Tensor>& params,
                                    const std::vector<Tensor>& results, std::byte* arena) {
    auto out = std::make_unique<BoundRegion>();
    for (const SlotPlan& s : plan.slots) {
      const std::vector<int64_t> shape = runtime::concreteShape(ir::substitute(s.type, sizes_));
      switch (s.where) {
        case SlotPlan::Where::Param: out->tensors.push_back(params[static_cast<size_t>(s.index)]); break;
        case SlotPlan::Where::Output: out->tensors.push_back(results[static_cast<size_t>(s.index)]); break;
        case SlotPlan::Where::Constant:
          // An MX weight has no f32 storage: its GEMM reads the MX bytes
          // (prepacked), a gathering kernel its buffer.
          if (s.mx) {
            auto it = mxBuffers_.find(&s);
            out->tensors.push_back(Tensor::wrap(
                s.type.dtype, shape, it == mxBuffers_.end() ? nullptr : const_cast<std::byte*>(it->second.data())));
          } else {
            out->tensors.push_back(s.constant);
          }
          break;
        case SlotPlan::Where::Arena:
          out->tensors.push_back(Tensor::wrap(s.type.dtype, shape, arena + s.offset.evaluate(sizes_)));
          break;
        case SlotPlan::Where::Owned: out->tensors.emplace_back(s.type.dtype, shape); break;
      }
    }
    for (const StepPlan& s : plan.steps) out->steps.push_back(bindStep(s, *out));
    return out;
  }

 private:
  BoundStep bindStep(const StepPlan& s, BoundRegion& region) {
    BoundStep b;
    b.plan = &s;
    for (int i : s.inputs) b.inputs.push_back(region.tensors[static_cast<size_t>(i)]);
    for (int o : s.outputs) b.outputs.push_back(region.tensors[static_cast<size_t>(o)]);
    if (s.kind == StepPlan::Kind::Cond) {
      std::vector<Tensor> operands(b.inputs.begin() + 1, b.inputs.end());
      for (int k = 0; k < 2; ++k) b.branches[k] = bind(*s.branches[k], operands, b.outputs, nullptr);
    }
    if (!s.kernelIR) return b;
    codegen::checkKernelSizes(s, sizes_);
    const codegen::kernel::Kernel& k = *s.kernelIR;
    b.kernel = kernels_.at(static_cast<size_t>(s.kernel)).get();
    for (Tensor& t : b.inputs) b.buffers.push_back(t.data());
    for (Tensor& t : b.outputs) b.buffers.push_back(t.data());
    for (const std::string& sym : b.kernel->signature.symbols)
      b.sizes.push_back(ir::checkedValue(ir::Dim{1, sym}, sizes_, "a kernel's size"));
    b.total = extent(k.outer, sizes_);
    if (s.kind == StepPlan::Kind::Kernel) {
      // Chunks of at least ~32k elements of pointwise work, ~8k of a
      // reduction's (an element of a row costs several passes: softmax's
      // max, exp and sum, divide): below that, threads cost more than
      // they save.
      const bool reduction = k.kind == ir::KernelKind::Reduction;
      const int64_t perPoint = reduction ? std::max<int64_t>(extent(k.reduceSizes, sizes_), 1) : 1;
      b.grain = std::max<int64_t>(1, (reduction ? 8192 : 32768) / perPoint);
      b.cancelPiece = std::max<int64_t>(1, runtime::kCancelCheckWork / perPoint);
    } else if (k.attention) {
      bindAttention(k, b);
    } else {
      bindGemm(k, b);
    }
    return b;
  }

  static void bindAttention(const codegen::kernel::Kernel& k, BoundStep& b) {
    const Tensor& q = b.inputs[static_cast<size_t>(k.gemm->a)];
    const Tensor& keys = b.inputs[static_cast<size_t>(k.gemm->b)];
    const Tensor& v = b.inputs[static_cast<size_t>(k.attention->v)];
    const runtime::reference::MatmulLayout scores = runtime::reference::matmulLayout(q.shape(), keys.shape());
    std::vector<int64_t> scoreShape = b.outputs[0].shape();  // [batch..., queries, keys]
    scoreShape.back() = scores.n;
    const runtime::reference::MatmulLayout values = runtime::reference::matmulLayout(scoreShape, v.shape());
    runtime::cpu::AttentionProblem& p = b.attention;
    p.batch = static_cast<int64_t>(scores.aOffsets.size());
    p.queries = scores.m;
    p.keys = scores.n;
    p.d = scores.k;
    p.dv = values.n;
    p.nanRowsToZero = k.attention->nanRowsToZero;
    p.minusInfRowsToZero = k.attention->minusInfRowsToZero;
    p.qOffsets = scores.aOffsets;
    p.kOffsets = scores.bOffsets;
    p.vOffsets = values.bOffsets;
    pointAttention(b);
  }

  void bindGemm(const codegen::kernel::Kernel& k, BoundStep& b) {
    const codegen::kernel::Gemm& g = *k.gemm;
    const Tensor& a = b.inputs[static_cast<size_t>(g.a)];
    const Tensor& w = b.inputs[static_cast<size_t>(g.b)];
    runtime::cpu::GemmProblem& p = b.gemm;
    const ir::DType t = a.dtype();
    p.dtype = t == ir::DType::F64 ? ir::DType::F64 : ir::DType::F32;
    if (auto it = prepacked_.find(b.plan); it != prepacked_.end()) {
      p.packedA = it->second.a ? &*it->second.a : nullptr;
      p.packedB = it->second.b ? &*it->second.b : nullptr;
      p.conv = it->second.conv ? &*it->second.conv : nullptr;
      p.convTranspose = it->second.convTranspose ? &*it->second.convTranspose : nullptr;
      if (it->second.mx) (g.conv ? p.mxA : p.mxB) = &*it->second.mx;
    }
    if (g.conv) {  // a = the filters (the same for every image), b = the images
      int64_t imageFloats = 0;
      if (p.convTranspose) {
        const runtime::cpu::gemm::ConvTransposeGeometry& c = *p.convTranspose;
        p.m = c.outChannels() * c.kernelPoints();
        p.k = c.channels();
        p.n = c.inPositions();
        imageFloats = c.channels() * c.inPositions();
      } else {
        p.m = g.conv->outChannels;
        p.k = p.conv->k();
        p.n = p.conv->positions();
        imageFloats = p.conv->imageFloats();
      }
      const int64_t images = w.shape()[0];
      p.aOffsets.assign(static_cast<size_t>(images), 0);
      for (int64_t i = 0; i < images; ++i) p.bOffsets.push_back(i * imageFloats);
      p.a = a.data();
      p.b = w.data();
      return;
    }
    p.transposeB = g.transposeB;
    p.k = a.shape().back();
    if (g.transposeB || (w.rank() <= 2 && a.rank() >= 2)) {
      // One B for every row of A — a linear's x [..., k] · w [n, k]ᵀ, or a
      // matmul whose B has no batch dims: A's batch dims are more rows of
      // one GEMM, not GEMMs of a few rows each (seq-first attention's
      // [S, B, d] · [d, 3d] would be S GEMMs of B rows).
      p.n = g.transposeB ? w.shape()[0] : w.rank() == 1 ? 1 : w.shape()[1];
      p.m = p.k == 0 ? b.total / std::max<int64_t>(p.n, 1) : a.numel() / std::max<int64_t>(p.k, 1);
      p.aOffsets = {0};
      p.bOffsets = {0};
    } else {  // matmul with broadcast batch dims; vectors as 1-row / 1-column matrices
      runtime::reference::MatmulLayout l = runtime::reference::matmulLayout(a.shape(), w.shape());
      p.m = l.m;
      p.n = l.n;
      p.aOffsets = std::move(l.aOffsets);
      p.bOffsets = std::move(l.bOffsets);
    }
    p.a = a.data();
    p.b = w.data();
    if (t == ir::DType::F16 || t == ir::DType::BF16) {
      b.gemmA.resize(static_cast<size_t>(a.numel()));
      b.gemmB.resize(static_cast<size_t>(w.numel()));
      p.a = b.gemmA.data();
      p.b = b.gemmB.data();
    }
  }

  const ir::SymbolBindings& sizes_;
  const std::vector<std::shared_ptr<const CompiledKernel>>& kernels_;
  const PrepackedSteps& prepacked_;
  const MxBuffers& mxBuffers_;
};

/// Points a region bound for the same sizes at other parameters and
/// results: the slots that are parameters or results, each step's copies
/// of its tensors and their data pointers, a GEMM's operand pointers, a
/// cond's branches. Everything else (the arena's tensors, the kernels'
/// arguments that are sizes, a GEMM's shape, the scratch) stays: a run()
/// with the shapes of the last one rebinds instead of binding afresh.
void rebind(const RegionPlan& plan, BoundRegion& region, const std::vector<Tensor>& params,
            const std::vector<Tensor>& results) {
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const SlotPlan& s = plan.slots[i];
    if (s.where == SlotPlan::Where::Param) region.tensors[i] = params[static_cast<size_t>(s.index)];
    if (s.where == SlotPlan::Where::Output) region.tensors[i] = results[static_cast<size_t>(s.index)];
  }
  for (size_t j = 0; j < plan.steps.size(); ++j) {
    const StepPlan& s = plan.steps[j];
    BoundStep& b = region.steps[j];
    for (size_t k = 0; k < s.inputs.size(); ++k) b.inputs[k] = region.tensors[static_cast<size_t>(s.inputs[k])];
    for (size_t k = 0; k < s.outputs.size(); ++k) b.outputs[k] = region.tensors[static_cast<size_t>(s.outputs[k])];
    if (s.kind == StepPlan::Kind::Cond) {
      const std::vector<Tensor> operands(b.inputs.begin() + 1, b.inputs.end());
      for (int k = 0; k < 2; ++k) rebind(*s.branches[k], *b.branches[k], operands, b.outputs);
    }
    if (!s.kernelIR) continue;
    size_t at = 0;
    for (Tensor& t : b.inputs) b.buffers[at++] = t.data();
    for (Tensor& t : b.outputs) b.buffers[at++] = t.data();
    if (s.kind == StepPlan::Kind::Attention) pointAttention(b);
    if (s.kind == StepPlan::Kind::Gemm && b.gemmA.empty()) {  // (widened operands stay in gemmA/gemmB)
      const codegen::kernel::Gemm& g = *s.kernelIR->gemm;
      b.gemm.a = b.inputs[static_cast<size_t>(g.a)].data();
      b.gemm.b = b.inputs[static_cast<size_t>(g.b)].data();
    }
  }
}

// ---- execution --------------------------------------------------------------

void widen(const Tensor& t, std::vector<float>& out) {
  const auto* bits = t.as<uint16_t>();
  if (t.dtype() == ir::DType::F16)
    for (size_t i = 0; i < out.size(); ++i) out[i] = ir::f16ToFloat(bits[i]);
  else
    for (size_t i = 0; i < out.size(); ++i) out[i] = ir::bf16ToFloat(bits[i]);
}

void execute(BoundRegion& region, runtime::ThreadPool& pool, const runtime::RunOptions& options);

void executeStep(BoundStep& s, runtime::ThreadPool& pool, const runtime::RunOptions& options) {
  switch (s.plan->kind) {
    case StepPlan::Kind::Kernel: {
      auto fn = s.kernel->pointwise();
      if (!options.cancel) {
        pool.parallelFor(s.total, s.grain,
                         [&](int64_t begin, int64_t end, int) { fn(s.buffers.data(), s.sizes.data(), begin, end); });
        return;
      }
      // Each chunk in pieces of bounded work, the flag checked between them.
      pool.parallelFor(s.total, s.grain, [&](int64_t begin, int64_t end, int) {
        for (int64_t at = begin; at < end; at += s.cancelPiece) {
          runtime::checkCancelled(options);
          fn(s.buffers.data(), s.sizes.data(), at, std::min(end, at + s.cancelPiece));
        }
      });
      return;
    }
    case StepPlan::Kind::Gemm: {
      const codegen::kernel::Gemm& g = *s.plan->kernelIR->gemm;
      if (!s.gemmA.empty() || !s.gemmB.empty()) {
        widen(s.inputs[static_cast<size_t>(g.a)], s.gemmA);
        widen(s.inputs[static_cast<size_t>(g.b)], s.gemmB);
      }
      auto fn = s.kernel->epilogue();
      runtime::cpu::gemmWithEpilogue(
          s.gemm,
          [&](int64_t begin, int64_t end, const void* acc) {
            runtime::checkCancelled(options);  // between output tiles
            fn(s.buffers.data(), s.sizes.data(), begin, end, acc);
          },
          runtime::cpu::GemmScratch::forThisThread(), pool);
      return;
    }
    case StepPlan::Kind::Attention: {
      auto fn = s.kernel->scores();
      runtime::cpu::attention(
          s.attention,
          [&](int64_t begin, int64_t end, float* scores) {
            runtime::checkCancelled(options);  // between blocks of scores
            fn(s.buffers.data(), s.sizes.data(), begin, end, scores);
          },
          pool);
      return;
    }
    case StepPlan::Kind::Eigh: runtime::cpu::eigh(s.inputs[0], s.plan->uplo, s.outputs[0], s.outputs[1], pool); return;
    case StepPlan::Kind::Cond: execute(*s.branches[s.inputs[0].getInt(0) != 0 ? 0 : 1], pool, options); return;
    case StepPlan::Kind::Copy: std::memcpy(s.outputs[0].data(), s.inputs[0].data(), s.outputs[0].nbytes()); return;
    case StepPlan::Kind::Host: {
      if (s.plan->node->op == ir::OpId::ScatterNd) {
        // Into the input it updates (BufferAssignment) the updates alone
        // are stored; elsewhere into a copy of it made in the output.
        if (s.outputs[0].data() != s.inputs[0].data())
          std::memcpy(s.outputs[0].data(), s.inputs[0].data(), s.outputs[0].nbytes());
        runtime::scatterNdInPlace(*s.plan->node, s.outputs[0], s.inputs[1], s.inputs[2]);
        return;
      }
      std::vector<std::vector<int64_t>> shapes;
      for (const Tensor& t : s.outputs) shapes.push_back(t.shape());
      std::vector<Tensor> results = runtime::evaluateNode(*s.plan->node, s.inputs, shapes);
      for (size_t k = 0; k < results.size(); ++k)
        std::memcpy(s.outputs[k].data(), results[k].data(), results[k].nbytes());
      return;
    }
  }
}

/// A step's name in a profile: its kind and kernel (or op).
std::string profileName(const StepPlan& s) {
  static const char* kinds[] = {"kernel", "gemm", "eigh", "cond", "host", "copy", "attention"};
  return fmt::format("{} {}", kinds[static_cast<int>(s.kind)],
                     s.kernelIR ? s.kernelIR->name
                     : s.node   ? std::string(s.node->name())
                                : "");
}

void execute(BoundRegion& region, runtime::ThreadPool& pool, const runtime::RunOptions& options) {
  for (BoundStep& s : region.steps) {
    runtime::checkCancelled(options);
    if (!options.profile || s.plan->kind == StepPlan::Kind::Cond) {  // a cond's branch steps time themselves
      executeStep(s, pool, options);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    executeStep(s, pool, options);
    options.profile->add(profileName(*s.plan),
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

std::string describe(const RegionPlan& plan, int indent) {
  static const char* kinds[] = {"kernel", "gemm+epilogue", "eigh", "cond", "host", "copy", "attention"};
  std::string out;
  for (const StepPlan& s : plan.steps) {
    std::string what = s.kernelIR ? s.kernelIR->name : s.node ? std::string(s.node->name()) : "";
    out += fmt::format("{:{}}{} {}\n", "", indent, kinds[static_cast<int>(s.kind)], what);
    if (s.kind == StepPlan::Kind::Cond)
      for (int b = 0; b < 2; ++b) {
        out += fmt::format("{:{}}{}:\n", "", indent + 2, b == 0 ? "then" : "else");
        out += describe(*s.branches[b], indent + 4);
      }
  }
  return out;
}

class CpuExecutable final : public runtime::Executable {
 public:
  CpuExecutable(const ir::Graph& g, std::vector<std::shared_ptr<const CompiledKernel>> kernels,
                std::unique_ptr<RegionPlan> plan)
      : graph_(g), kernels_(std::move(kernels)), plan_(std::move(plan)), pool_(runtime::ThreadPool::global()) {
    codegen::checkMxUses(*plan_, readsMxInput);
    prepack(*plan_, prepacked_);
    collectMxBuffers(*plan_, mxBuffers_);
    emptyParams_.resize(graph_.body.params().size());
    emptyResults_.resize(graph_.resultTypes.size());
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const runtime::RunOptions& options) override {
    const ir::SymbolBindings sizes = runtime::bindInputs(graph_, inputs);
    runtime::checkUpdatedInputs(graph_, inputs);
    std::vector<Tensor> outputs = runtime::outputsFor(graph_, inputs, sizes);
    Call call = bind(sizes, inputs, outputs);
    execute(*call.region, pool_, options);
    keepForNextRun(std::move(call), sizes);
    return outputs;
  }

  void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    const ir::SymbolBindings sizes = runtime::bindInputs(graph_, inputs);
    runtime::checkCaptureOutputs(graph_, inputs, outputs, sizes);
    Call call = bind(sizes, inputs, outputs);
    std::lock_guard lock(captureMutex_);
    captured_ = std::move(call);
  }

  void replay(const runtime::RunOptions& options) override {
    // The captured binding's buffers (the GEMM tiles, the arena) serve one
    // replay at a time.
    std::lock_guard lock(captureMutex_);
    if (!captured_.region) throw ir::Error("replay: nothing captured (call capture first)");
    execute(*captured_.region, pool_, options);
  }

  std::string describe() const override { return cpu::describe(*plan_, 0); }

 private:
  struct Call {
    std::unique_ptr<std::byte, AlignedFree> arena;
    int64_t arenaBytes = 0;
    std::unique_ptr<BoundRegion> region;
  };

  Call bind(const ir::SymbolBindings& sizes, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
    Call call;
    {
      // The last run's binding, when it was for these sizes: rebound.
      std::lock_guard lock(spareMutex_);
      if (spare_.region && spareSizes_ == sizes) {
        call = std::move(spare_);
        spare_ = Call();
      }
    }
    if (call.region) {
      rebind(*plan_, *call.region, inputs, outputs);
      return call;
    }
    // The plan's size is a multiple of the alignment (ArenaOffset); one more
    // line keeps a zero-byte arena a valid allocation.
    const int64_t bytes = plan_->arenaSize.evaluate(sizes);
    const int64_t allocation = ir::checkedAdd(bytes, kArenaAlignment, "the arena size");
    {
      std::lock_guard lock(spareMutex_);
      if (spare_.arena && spare_.arenaBytes >= allocation) {  // its arena only: the binding was for other sizes
        call.arena = std::move(spare_.arena);
        call.arenaBytes = spare_.arenaBytes;
        spare_ = Call();
      }
    }
    if (!call.arena) {
      call.arena.reset(static_cast<std::byte*>(std::aligned_alloc(kArenaAlignment, static_cast<size_t>(allocation))));
      if (!call.arena) throw ir::Error(fmt::format("out of memory allocating the {}-byte arena", bytes));
      call.arenaBytes = allocation;
    }
    call.region = Binder(sizes, kernels_, prepacked_, mxBuffers_).bind(*plan_, inputs, outputs, call.arena.get());
    return call;
  }

  /// Keeps a finished run's binding for the next run: its arena (a fresh
  /// allocation of a model's arena costs a page fault per page on every
  /// run) and its bound steps (binding a model's steps afresh costs more
  /// than running its small kernels), which a run with the same sizes
  /// rebinds. The parameters and outputs it points at are released.
  void keepForNextRun(Call call, const ir::SymbolBindings& sizes) {
    rebind(*plan_, *call.region, emptyParams_, emptyResults_);
    std::lock_guard lock(spareMutex_);
    if (spare_.arena && spare_.arenaBytes > call.arenaBytes) return;  // keep the larger arena
    spare_ = std::move(call);
    spareSizes_ = sizes;
  }

  const ir::Graph& graph_;
  std::vector<std::shared_ptr<const CompiledKernel>> kernels_;  // by StepPlan::kernel
  std::unique_ptr<RegionPlan> plan_;
  PrepackedSteps prepacked_;  // read-only after construction: shared by every call
  MxBuffers mxBuffers_;       // likewise
  runtime::ThreadPool& pool_;
  std::mutex captureMutex_;
  Call captured_;
  std::mutex spareMutex_;
  Call spare_;  // a binding no run holds
  ir::SymbolBindings spareSizes_;
  std::vector<Tensor> emptyParams_, emptyResults_;  // what a kept binding points at
};

}  // namespace

std::unique_ptr<runtime::Executable> makeExecutable(const ir::Graph& g, const codegen::LoweredKernels& lowered,
                                                    std::vector<std::shared_ptr<const CompiledKernel>> kernels) {
  if (kernels.size() != lowered.kernels.size())
    throw ir::Error(
        fmt::format("cpu executable: {} compiled kernels for {} fused ops", kernels.size(), lowered.kernels.size()));
  return makeExecutable(g, codegen::planGraph(g, lowered.kernels, lowered.position), std::move(kernels));
}

std::unique_ptr<runtime::Executable> makeExecutable(const ir::Graph& g, std::unique_ptr<RegionPlan> plan,
                                                    std::vector<std::shared_ptr<const CompiledKernel>> kernels) {
  return std::make_unique<CpuExecutable>(g, std::move(kernels), std::move(plan));
}

}  // namespace graphc::codegen::cpu
