// The reference device's registry entry: the interpreter over the graph as
// given (runtime/reference/ReferenceExecutable.h), with no pipeline and
// nothing to emit.
#pragma once

#include "codegen/Backend.h"

namespace graphc::codegen {

const Backend& referenceBackend();

}  // namespace graphc::codegen
