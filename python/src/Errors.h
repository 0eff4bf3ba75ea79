// graphc's C++ exceptions as the Python exceptions of graphc/errors.py:
// CompileError (with each diagnostic's file, line and column), Cancelled,
// and Error for the rest.
#pragma once

#include <nanobind/nanobind.h>

namespace graphc::python {

void registerErrorTranslator();

}  // namespace graphc::python
