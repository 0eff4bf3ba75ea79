// Kernels of the reference interpreter, grouped by op family. Each takes
// concrete operand tensors and the result shape the type rule gave.
#pragma once

#include <vector>

#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::runtime::reference {

/// Maps each element of `out` (C order) to the element of `in` it reads
/// under NumPy broadcasting.
std::vector<int64_t> broadcastIndices(const std::vector<int64_t>& out, const std::vector<int64_t>& in);

Tensor pointwise(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape);
Tensor reduction(const ir::Node& n, const Tensor& x, const std::vector<int64_t>& shape);
Tensor softmax(const ir::Node& n, const Tensor& x);
Tensor layerNorm(const ir::Node& n, const std::vector<Tensor>& operands);
Tensor matmul(const Tensor& a, const Tensor& b, const std::vector<int64_t>& shape);
Tensor linear(const std::vector<Tensor>& operands, const std::vector<int64_t>& shape);
std::vector<Tensor> eigh(const ir::Node& n, const Tensor& a);
Tensor shapeOp(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape);
Tensor creation(const ir::Node& n, ir::DType dtype, const std::vector<int64_t>& shape);

}  // namespace graphc::runtime::reference
