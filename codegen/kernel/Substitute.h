// Loop variables replaced by index expressions throughout a kernel's
// expressions (a window point's constants, a merged dim's div/mod), the
// index constructors simplifying as the expressions are rebuilt. Shared
// subexpressions stay shared.
#pragma once

#include <unordered_map>

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::kernel {

class VarSubstitution {
 public:
  /// var number → what replaces it; variables not in the map stay.
  explicit VarSubstitution(std::unordered_map<int64_t, IndexPtr> replace) : replace_(std::move(replace)) {}

  IndexPtr index(const IndexPtr& e);
  ExprPtr expr(const ExprPtr& e);

 private:
  std::unordered_map<int64_t, IndexPtr> replace_;
  std::unordered_map<const Index*, IndexPtr> indices_;
  std::unordered_map<const Expr*, ExprPtr> exprs_;
};

}  // namespace graphc::codegen::kernel
