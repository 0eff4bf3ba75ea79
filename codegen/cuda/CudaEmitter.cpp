// The module: each kernel's strategy chosen and its function written
// (KernelWriter.h), after the preamble (Preamble.h), with the helper
// kernels cond and eigh need.
#include "codegen/cuda/CudaEmitter.h"

#include <cstring>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/MxOperands.h"
#include "codegen/cuda/KernelWriter.h"
#include "codegen/cuda/Preamble.h"
#include "codegen/cuda/Syntax.h"
#include "ir/Diagnostics.h"

namespace graphc::codegen::cuda {

const char* strategyName(Strategy s) {
  switch (s) {
    case Strategy::Pointwise: return "pointwise";
    case Strategy::WarpPerRow: return "warp-per-row";
    case Strategy::BlockPerRow: return "block-per-row";
    case Strategy::GemmSimt: return "gemm-simt";
    case Strategy::GemmTensorCore: return "gemm-mma";
  }
  return "?";
}

Strategy chooseStrategy(const Kernel& k) {
  if (k.attention)  // the cuda pipeline leaves attention unfused (Backend::attentionKernels)
    throw ir::Error(fmt::format("cuda codegen: '{}' is an attention kernel, which only the cpu backend runs", k.name));
  if (k.gemm) {
    const ir::DType t = k.inputs[static_cast<size_t>(k.gemm->a)].type.dtype;
    return t == DType::F16 || t == DType::BF16 ? Strategy::GemmTensorCore : Strategy::GemmSimt;
  }
  if (k.kind == ir::KernelKind::Reduction) {
    const int64_t row = staticExtent(k.reduceSizes);
    return row >= 0 && row <= kWarpRowMax ? Strategy::WarpPerRow : Strategy::BlockPerRow;
  }
  return Strategy::Pointwise;
}

bool readsMxInput(const Kernel& k, int input) {
  if (!k.gemm || k.gemm->conv || chooseStrategy(k) != Strategy::GemmSimt || input != k.gemm->b) return false;
  const ir::TensorType& b = k.inputs[static_cast<size_t>(input)].type;
  return b.isStatic() && b.rank() == 2;
}

namespace {

/// Throws unless every MX input of `k` is one readsMxInput allows, stored
/// as N rows of K (a linear's [N, K] as it is, a matmul's [K, N]
/// transposed).
void checkMxInputs(const Kernel& k) {
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const std::optional<MxLayout>& mx = k.inputs[i].mx;
    if (!mx) continue;
    const bool fits = [&] {
      if (!readsMxInput(k, static_cast<int>(i)) || mx->transposed == k.gemm->transposeB) return false;
      const ir::TensorType& b = k.inputs[i].type;
      const int64_t n = k.gemm->transposeB ? b.shape[0].size : b.shape[1].size;
      const int64_t kk = k.gemm->transposeB ? b.shape[1].size : b.shape[0].size;
      return mx->rows == n && mx->cols == kk;
    }();
    if (!fits)
      throw ir::Error(fmt::format("cuda codegen: kernel {} cannot read input {} in {} (only an f32 GEMM's weight)",
                                  k.name, i, ir::mxFormatInfo(mx->format).name));
  }
}

/// The decode table of an MX element format, as f32 bit patterns.
std::string mxTable(ir::MxFormat f) {
  const ir::MxFormatInfo& info = ir::mxFormatInfo(f);
  const float* values = ir::mxDecodeTable(f);
  std::vector<std::string> bits;
  for (int code = 0; code < (1 << info.bits); ++code) {
    uint32_t b = 0;
    std::memcpy(&b, &values[code], 4);
    bits.push_back(fmt::format("0x{:08x}u", b));
  }
  return fmt::format("// {}: element code -> f32 bits\n__device__ const unsigned {}[{}] = {{{}}};\n", info.name,
                     mxTableName(f), bits.size(), fmt::join(bits, ", "));
}

}  // namespace

std::string mxTableName(ir::MxFormat f) {
  std::string name(ir::mxFormatInfo(f).name);
  return "gc_mx_" + name.substr(name.find('_') + 1);
}

CudaModule emitModule(const std::vector<const Kernel*>& kernels, const EmitOptions& options) {
  CudaModule m;
  m.source = fmt::format("// graphc: {} kernel{}\n", kernels.size(), kernels.size() == 1 ? "" : "s");
  m.source += kPreamble;
  std::set<ir::MxFormat> tables;
  for (const Kernel* k : kernels)
    for (const Buffer& b : k->inputs)
      if (b.mx && ir::mxHasScales(b.mx->format)) tables.insert(b.mx->format);
  for (ir::MxFormat f : tables) m.source += "\n" + mxTable(f);
  for (const Kernel* k : kernels) {
    CudaKernel info;
    info.name = k->name;
    info.strategy = chooseStrategy(*k);
    checkMxInputs(*k);
    if (info.strategy == Strategy::WarpPerRow) info.rowsPerBlock = info.blockThreads / 32;
    if (info.strategy == Strategy::GemmSimt || info.strategy == Strategy::GemmTensorCore) info.tileM = info.tileN = 128;
    m.source += "\n" + KernelWriter(*k, info).run();
    m.kernels.push_back(std::move(info));
  }
  if (options.conditions) {
    m.hasConditions = true;
    m.source += fmt::format(R"(
// cond under capture: sets the conditional node's value on the device.
extern "C" __device__ __attribute__((cudart_builtin)) void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void {}(cudaGraphConditionalHandle handle, const unsigned char* predicate) {{
  cudaGraphSetConditional(handle, *predicate != 0 ? 1u : 0u);
}}
)",
                            kSetConditionKernel);
  }
  if (options.transpose) {
    m.hasTranspose = true;
    for (const char* t : {"f32", "f64"})
      m.source += fmt::format(R"(
// eigh: cuSOLVER's column-major eigenvectors to row-major, in place; the
// thread of (i, j) with i < j swaps the pair.
extern "C" __global__ void {0}{1}({2}* m, const i64 n, const i64 batch) {{
  const i64 total = n * n * batch;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {{
    const i64 b = e / (n * n), i = (e / n) % n, j = e % n;
    if (i < j) {{
      {2}* base = m + b * n * n;
      const {2} x = base[i * n + j];
      base[i * n + j] = base[j * n + i];
      base[j * n + i] = x;
    }}
  }}
}}
)",
                              kTransposeKernelPrefix, t, std::string(t) == "f32" ? "float" : "double");
    for (const char* t : {"f32", "f64"})
      m.source += fmt::format(R"(
// eigh: flags each matrix with a NaN or Inf in the triangle the solver read
// (row-major input; lower: i >= j), overwriting its info.
extern "C" __global__ void {0}{1}(const {2}* a, const i64 n, const i64 batch, const int lower, int* info) {{
  const i64 total = n * n * batch;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {{
    const i64 b = e / (n * n), i = (e / n) % n, j = e % n;
    if ((lower ? i >= j : i <= j) && !isfinite(a[e])) info[b] = {3};
  }}
}}
)",
                              kEighCheckKernelPrefix, t, std::string(t) == "f32" ? "float" : "double",
                              fmt::format("({} - 1)", kEighNonFiniteInfo + 1));
  }
  return m;
}

}  // namespace graphc::codegen::cuda
