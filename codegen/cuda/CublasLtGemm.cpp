#include "codegen/cuda/CublasLtGemm.h"

#include <cublasLt.h>
#include <fmt/format.h>

#include "codegen/cuda/CudaCheck.h"

namespace graphc::codegen::cuda {

using namespace codegen::kernel;

namespace {

void checkLt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw ir::Error(fmt::format("cublasLt: {}: status {}", what, static_cast<int>(s)));
}

bool isOp(const ExprPtr& e, ir::OpId op) { return e->kind == Expr::Kind::Op && e->op == op; }

/// A load of a 1-D input along the last outer loop (a bias), possibly widened.
int biasLoad(const ExprPtr& e, const Kernel& k) {
  const ExprPtr& load = isOp(e, ir::OpId::Cast) ? e->args[0] : e;
  if (load->kind != Expr::Kind::Load || load->index.size() != 1) return -1;
  const IndexPtr& i = load->index[0];
  if (i->kind != Index::Kind::Var || i->value != static_cast<int64_t>(k.outer.size()) - 1) return -1;
  return k.inputs[static_cast<size_t>(load->buffer)].type.rank() == 1 ? load->buffer : -1;
}

}  // namespace

std::optional<LtEpilogue> matchLtEpilogue(const Kernel& k) {
  if (!k.gemm || !k.gemm->transposeB || k.stores.size() != 1) return std::nullopt;
  const ir::DType t = k.inputs[static_cast<size_t>(k.gemm->a)].type.dtype;
  if (t != ir::DType::F32 && t != ir::DType::F16 && t != ir::DType::BF16) return std::nullopt;
  LtEpilogue out;
  ExprPtr e = k.stores[0].value;
  if (isOp(e, ir::OpId::Relu)) {
    out.kind = LtEpilogue::Kind::ReluBias;
    e = e->args[0];
  }
  if (isOp(e, ir::OpId::Cast)) e = e->args[0];  // the one rounding to the result dtype
  if (!isOp(e, ir::OpId::Add) || e->args[0]->kind != Expr::Kind::Acc) return std::nullopt;
  out.bias = biasLoad(e->args[1], k);
  if (out.bias < 0) return std::nullopt;
  return out;
}

struct LtMatmul::State {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  void* workspace = nullptr;
  size_t workspaceBytes = 32u << 20;
  int64_t m = 0, n = 0, k = 0;
};

LtMatmul::LtMatmul(ir::DType dtype, int64_t m, int64_t n, int64_t k, LtEpilogue epilogue)
    : s_(std::make_unique<State>()) {
  s_->m = m;
  s_->n = n;
  s_->k = k;
  const cudaDataType_t type = dtype == ir::DType::F16    ? CUDA_R_16F
                              : dtype == ir::DType::BF16 ? CUDA_R_16BF
                                                         : CUDA_R_32F;
  checkLt(cublasLtCreate(&s_->handle), "create");
  checkLt(cublasLtMatmulDescCreate(&s_->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor");
  const cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
  checkLt(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof transA), "transa");
  checkLt(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof transB), "transb");
  const cublasLtEpilogue_t e =
      epilogue.kind == LtEpilogue::Kind::ReluBias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  checkLt(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e), "epilogue");
  checkLt(cublasLtMatrixLayoutCreate(&s_->a, type, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k), "layout A");
  checkLt(cublasLtMatrixLayoutCreate(&s_->b, type, static_cast<uint64_t>(k), static_cast<uint64_t>(m), k), "layout B");
  checkLt(cublasLtMatrixLayoutCreate(&s_->d, type, static_cast<uint64_t>(n), static_cast<uint64_t>(m), n), "layout D");
  checkLt(cublasLtMatmulPreferenceCreate(&s_->preference), "preference");
  checkLt(cublasLtMatmulPreferenceSetAttribute(s_->preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &s_->workspaceBytes, sizeof s_->workspaceBytes),
          "workspace preference");
  int found = 0;
  checkLt(cublasLtMatmulAlgoGetHeuristic(s_->handle, s_->desc, s_->a, s_->b, s_->d, s_->d, s_->preference, 1, &s_->algo,
                                         &found),
          "heuristic");
  if (found == 0) throw ir::Error("cublasLt: no algorithm for this GEMM and epilogue");
  check(cudaMalloc(&s_->workspace, s_->workspaceBytes), "cudaMalloc (cuBLASLt workspace)");
}

LtMatmul::~LtMatmul() {
  if (s_->workspace) cudaFree(s_->workspace);
  if (s_->preference) cublasLtMatmulPreferenceDestroy(s_->preference);
  if (s_->d) cublasLtMatrixLayoutDestroy(s_->d);
  if (s_->b) cublasLtMatrixLayoutDestroy(s_->b);
  if (s_->a) cublasLtMatrixLayoutDestroy(s_->a);
  if (s_->desc) cublasLtMatmulDescDestroy(s_->desc);
  if (s_->handle) cublasLtDestroy(s_->handle);
}

void LtMatmul::run(const void* x, const void* w, const void* bias, void* d, void* stream) {
  checkLt(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
          "bias pointer");
  const float one = 1.0f, zero = 0.0f;
  checkLt(cublasLtMatmul(s_->handle, s_->desc, &one, w, s_->a, x, s_->b, &zero, d, s_->d, d, s_->d, &s_->algo.algo,
                         s_->workspace, s_->workspaceBytes, static_cast<cudaStream_t>(stream)),
          "matmul");
}

}  // namespace graphc::codegen::cuda
