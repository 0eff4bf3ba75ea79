// NumPy .npy files (format versions 1.0-3.0), little-endian, C order.
// dtypes: <f2 <f4 <f8 |i1 <i4 <i8 |b1, and bf16 as the 2-byte void type
// `|V2` (what numpy writes for ml_dtypes.bfloat16 arrays; the bits are the
// bf16 pattern, readable in Python as `np.load(p).view(ml_dtypes.bfloat16)`).
#pragma once

#include <string>

#include "runtime/Tensor.h"

namespace graphc::runtime {

/// Throws ir::Error("PATH: ...") on a missing, malformed or unsupported file.
Tensor readNpy(const std::string& path);
Tensor parseNpy(const std::string& bytes, const std::string& nameForErrors);
/// Writes a new file and renames it over `path` (runtime/FileIO.h: a
/// symlink planted at `path` is replaced, never written through). Throws
/// ir::Error if the file cannot be written.
void writeNpy(const std::string& path, const Tensor& t);
std::string serializeNpy(const Tensor& t);

}  // namespace graphc::runtime
