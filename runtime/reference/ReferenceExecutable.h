// The reference device's Executable: the interpreter over the graph as
// given (no passes, no kernels), a peer of the cpu and cuda executables
// behind the same interface. capture() runs the graph once to check the
// outputs' types; replay() interprets again into them.
#pragma once

#include <memory>

#include "ir/Graph.h"
#include "runtime/Executable.h"

namespace graphc::runtime {

/// The Executable refers to `g`, which must outlive it.
std::unique_ptr<Executable> interpretingExecutable(const ir::Graph& g);

}  // namespace graphc::runtime
