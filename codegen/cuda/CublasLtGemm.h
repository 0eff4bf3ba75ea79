// GEMM + epilogue through cuBLASLt (--matmul=cublaslt): the comparison the
// generated GEMM is measured against. cuBLASLt fuses a bias and an
// activation into its epilogue, so linear kernels whose epilogue is exactly
// bias (CUBLASLT_EPILOGUE_BIAS) or bias + relu (RELU_BIAS) match; the rest
// keep the generated GEMM. GELU_BIAS is never matched: by the time kernels
// exist the decompose pass has expanded gelu into elementwise ops, and
// cuBLASLt's GELU is the tanh form only.
//
// Row-major C[M, N] = X[M, K] · W[N, K]ᵀ + b is, column-major,
// Cᵀ[N, M] = W · Xᵀ: A = W (stored K×N, transposed), B = X (K×M), D N×M,
// and the bias runs along D's rows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::cuda {

struct LtEpilogue {
  enum class Kind { Bias, ReluBias };
  Kind kind = Kind::Bias;
  int bias = -1;  // the input buffer holding the bias
};

/// Whether cuBLASLt can compute kernel `k` (pure: unit-tested).
std::optional<LtEpilogue> matchLtEpilogue(const codegen::kernel::Kernel& k);

/// One bound cuBLASLt matmul: descriptors and the heuristic's algorithm,
/// chosen once per binding.
class LtMatmul {
 public:
  LtMatmul(ir::DType dtype, int64_t m, int64_t n, int64_t k, LtEpilogue epilogue);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  /// D = epilogue(X · Wᵀ + bias) on `stream` (a cudaStream_t).
  void run(const void* x, const void* w, const void* bias, void* d, void* stream);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace graphc::codegen::cuda
