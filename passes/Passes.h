// Declarations of the registered passes (one class per file in passes/).
#pragma once

#include "passes/Pass.h"

namespace graphc::passes {

#define GRAPHC_PASS(cls, passName, passDescription)                           \
  class cls final : public Pass {                                             \
   public:                                                                    \
    std::string_view name() const override { return passName; }               \
    std::string_view description() const override { return passDescription; } \
    PassResult run(ir::Graph& g, ir::DiagnosticEngine& diags) override;       \
  };
#include "passes/Passes.def"

}  // namespace graphc::passes
