// Differential testing of the pass pipeline: a random graph runs on the
// reference interpreter before and after the default pipeline, and the
// outputs must agree (Tzer's "optimised vs O0" oracle); optionally the cpu
// backend runs the optimised graph too and must agree with the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "RandomGraph.h"

namespace graphc::difftest {

/// nullopt when the graph of `seed` agrees before and after the pipeline
/// (for f32: after decompose alone and after the whole pipeline, see
/// DiffTest.cpp), and, with options.cpuBackend, on the cpu backend too;
/// else a report holding the graph text and what differed.
std::optional<std::string> checkSeed(uint64_t seed, const RandomGraphOptions& options = {});

}  // namespace graphc::difftest
