// The step plan of an exported package (plan.json): every slot (where its
// buffer lives, its type, its arena offset) and every step (its kind, its
// kernel, its slots, a cond's branches), plus the kernel table — each
// kernel's symbol in the shared object and the checksum of the kernel IR
// it was compiled from. The runtime plans the loaded graph itself and
// refuses the package unless its plan is this one and every kernel's IR
// has the recorded checksum: the shared object's functions are only ever
// called with the buffers they were compiled for, and a runtime whose
// planner differs from the exporter's says so instead of running.
#pragma once

#include <nlohmann/json.hpp>

#include "codegen/StepPlan.h"

namespace graphc::deploy {

nlohmann::json planToJson(const codegen::RegionPlan& plan);

/// The kernel table: {"symbol", "name", "ir_xxh3_64"} per kernel, in
/// StepPlan::kernel order.
nlohmann::json kernelTable(const codegen::LoweredKernels& lowered);

}  // namespace graphc::deploy
