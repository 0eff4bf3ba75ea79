// A seeded generator of random .graph programs that are valid by
// construction (NNSmith's idea, small): pointwise ops with broadcasting,
// reductions, softmax, layer_norm, shape ops, matmul/linear, literals,
// constants and cond. The text is what gets tested, so a failing seed can
// be printed, saved and replayed with `graphc`.
#pragma once

#include <cstdint>
#include <string>

namespace graphc::difftest {

struct RandomGraphOptions {
  int minOps = 6;
  int maxOps = 30;
  bool useF32 = false;  // f64 by default: the comparison then tests structure, not rounding
  /// Also compile the optimised graph for the cpu backend and compare what
  /// it computes (outputs poisoned first) with the reference.
  bool cpuBackend = false;
  /// Results that update parameters of their type in place (`updates %p`):
  /// the cpu backend's run must leave in those inputs what the reference
  /// computes, and the others untouched.
  bool inputUpdates = false;
};

/// The text of one random graph; the same seed gives the same text.
std::string randomGraph(uint64_t seed, const RandomGraphOptions& options = {});

}  // namespace graphc::difftest
