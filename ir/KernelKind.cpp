#include "ir/KernelKind.h"

namespace graphc::ir {

std::string_view kernelKindName(KernelKind k) {
  switch (k) {
    case KernelKind::Pointwise: return "pointwise";
    case KernelKind::Reduction: return "reduction";
    case KernelKind::MatmulEpilogue: return "matmul_epilogue";
    case KernelKind::Attention: return "attention";
  }
  return "";
}

std::optional<KernelKind> parseKernelKind(std::string_view name) {
  for (KernelKind k : {KernelKind::Pointwise, KernelKind::Reduction, KernelKind::MatmulEpilogue, KernelKind::Attention})
    if (kernelKindName(k) == name) return k;
  return std::nullopt;
}

}  // namespace graphc::ir
