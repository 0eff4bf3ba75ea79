// The public API of graphc, one header (installed as <graphc/graphc.h>):
//
//   Api.h        Tensor, Device, CompileOptions, Graph, compile(), Executable
//   Tracer.h     TracedTensor, one function per op, cond, trace()
//   Compiled.h   compiled(fn): guards, recompiles, the interpreter fallback
//
// Everything else in the source tree is internal. docs/embedding.md is the
// guide.
#pragma once

#include "frontend/api/Api.h"
#include "frontend/api/Compiled.h"
#include "frontend/api/Tracer.h"
