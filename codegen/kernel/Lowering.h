// Lowering of a `fused` op to the kernel IR (Lowering.cpp): each body
// value is computed on demand at an index, one index expression per dim of
// the value's shape.
#pragma once

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::kernel {

/// Choices a backend makes about the kernel shapes it runs.
struct LowerOptions {
  /// A convolution of groups 1 in f32 with static geometry becomes a GEMM
  /// kernel (Gemm::conv) instead of a window reduction: the cpu backend
  /// runs those on its packed GEMM.
  bool convolutionsAsGemm = false;
  /// A window kernel with a small static window (pooling, a depthwise
  /// convolution) becomes a pointwise kernel, its window unrolled
  /// (UnrollWindows.cpp): the cpu backend vectorises those along the
  /// output's last dim.
  bool unrollSmallWindows = false;
  /// A pointwise or epilogue kernel's short static inner dims are merged
  /// into the dim before (MergeInnerDims.cpp), so that its innermost loop
  /// is long enough to vectorise.
  bool mergeShortInnerDims = false;
};

/// Lowers one fused op; throws ir::Error for a body the lowering cannot
/// express (which the fuse pass does not produce).
Kernel lower(const ir::Node& fused, const LowerOptions& options = {});

}  // namespace graphc::codegen::kernel
