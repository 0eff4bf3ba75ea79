#include "passes/Pass.h"
#include "passes/Passes.h"

namespace graphc::passes {

const std::vector<PassInfo>& registeredPasses() {
  static const std::vector<PassInfo> passes = {
#define GRAPHC_PASS(cls, name, description) \
  {name, description, []() -> std::unique_ptr<Pass> { return std::make_unique<cls>(); }},
#include "passes/Passes.def"
  };
  return passes;
}

std::unique_ptr<Pass> createPass(std::string_view name) {
  for (const PassInfo& p : registeredPasses())
    if (p.name == name) return p.create();
  return nullptr;
}

}  // namespace graphc::passes
