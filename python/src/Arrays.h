// Arrays across the Python boundary without copies: any DLPack producer
// (NumPy, PyTorch, JAX, CuPy on the host) in, a Tensor over its memory;
// a Tensor out, a NumPy array or torch tensor over the Tensor's own
// buffer, which the returned array keeps alive.
#pragma once

#include <functional>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "frontend/api/Api.h"

namespace graphc::python {

namespace nb = nanobind;

/// What the returned arrays are.
enum class Framework { NumPy, PyTorch };

/// PyTorch if `object` is a torch.Tensor, else NumPy.
Framework frameworkOf(nb::handle object);

/// How an array is named in errors ("input 2 ('x')"), made only when one
/// is thrown: every call wraps its inputs.
using ArrayName = std::function<std::string()>;

/// A Tensor over `array`'s memory (no copy). `name` names the array in
/// errors. Throws nb::type_error / nb::value_error for
/// what graphc cannot read in place: a dtype it lacks, device memory, a
/// non-contiguous layout.
Tensor wrapArray(nb::handle array, const ArrayName& name);

/// wrapArray for an array graphc writes into (capture()'s outputs): also
/// throws nb::value_error when the array is read-only (an immutable
/// buffer, a read-only mapping, a NumPy array whose writeable flag is off).
Tensor wrapWritableArray(nb::handle array, const ArrayName& name);

/// `tensor` as an array of `framework` that owns the tensor's buffer.
nb::object toArray(Tensor tensor, Framework framework);

/// The dtype names the package uses ("float32", ...), NumPy's.
std::string numpyDtypeName(DType dtype);

}  // namespace graphc::python
