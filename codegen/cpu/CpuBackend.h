// The cpu backend's registry entry (codegen/Backend.h).
#pragma once

#include "codegen/Backend.h"

namespace graphc::codegen::cpu {

const Backend& backend();

}  // namespace graphc::codegen::cpu
