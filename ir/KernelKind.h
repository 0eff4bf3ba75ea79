// What a `fused` op computes, as its `kind` attribute says and as the
// kernel IR lowers it: a pointwise loop nest, row reductions, a GEMM
// with a pointwise epilogue, or attention — softmax(epilogue(Q · K)) · V
// in one kernel, the score matrix never stored whole. Text only at the edges (the attribute, the
// kernel IR printer); everything in between compares the enum.
#pragma once

#include <optional>
#include <string_view>

namespace graphc::ir {

enum class KernelKind { Pointwise, Reduction, MatmulEpilogue, Attention };

/// "pointwise", "reduction", "matmul_epilogue", "attention".
std::string_view kernelKindName(KernelKind k);
std::optional<KernelKind> parseKernelKind(std::string_view name);

}  // namespace graphc::ir
