// The cuda backend's registry entry (codegen/Backend.h).
#pragma once

#include "codegen/Backend.h"

namespace graphc::codegen::cuda {

const Backend& backend();

}  // namespace graphc::codegen::cuda
