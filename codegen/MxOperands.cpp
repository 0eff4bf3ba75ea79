#include "codegen/MxOperands.h"

#include <cstring>

namespace graphc::codegen {

int64_t mxScalesOffset(const MxLayout& m) { return (m.rows * ir::mxRowBytes(m.format, m.cols) + 16) / 16 * 16; }

int64_t mxBufferBytes(const MxLayout& m) {
  return mxScalesOffset(m) + (ir::mxHasScales(m.format) ? m.rows * ir::mxRowBlocks(m.cols) : 0);
}

std::vector<std::byte> mxBuffer(const ir::MxWeights& w) {
  const MxLayout layout{w.format, w.rows, w.cols, w.transposed};
  std::vector<std::byte> bytes(static_cast<size_t>(mxBufferBytes(layout)));
  std::memcpy(bytes.data(), w.elements.data(), w.elements.size());
  if (!w.scales.empty()) std::memcpy(bytes.data() + mxScalesOffset(layout), w.scales.data(), w.scales.size());
  return bytes;
}

std::optional<MxLayout> mxLayoutOf(const ir::Node& f, size_t i) {
  const ir::Node* def = f.operands[i]->definingNode();
  const ir::Attribute* value = def && def->op == ir::OpId::Constant ? def->attrs.find("value") : nullptr;
  if (!value || value->kind != ir::Attribute::Kind::Dense || !value->dense->mx) return std::nullopt;
  const ir::MxWeights& w = *value->dense->mx;
  return MxLayout{w.format, w.rows, w.cols, w.transposed};
}

}  // namespace graphc::codegen
