// The pass interface. A pass rewrites one graph in place and says whether
// it changed anything (XLA's StatusOr<bool> habit); the PassManager uses
// that to decide when to verify and what to print.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

namespace graphc::passes {

struct PassResult {
  bool changed = false;
  bool failed = false;  // a diagnostic was reported; the pipeline stops
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual PassResult run(ir::Graph& g, ir::DiagnosticEngine& diags) = 0;
};

struct PassInfo {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<Pass> (*create)();
};

/// Every registered pass (Passes.def), in registry order.
const std::vector<PassInfo>& registeredPasses();
/// Null if no pass has that name.
std::unique_ptr<Pass> createPass(std::string_view name);

}  // namespace graphc::passes
