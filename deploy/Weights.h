// A package's weights (weights.safetensors): every dense constant of the
// graph as a safetensors tensor, named in graph.json by {"dense": "c3"}.
// One DenseElements shared by several nodes is stored once.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "deploy/GraphJson.h"
#include "ir/Mx.h"
#include "runtime/Safetensors.h"

namespace graphc::deploy {

/// The safetensors spelling of a dtype ("F32", "BOOL", ...).
std::string safetensorsDType(ir::DType t);

/// Collects the dense constants of a graph as it is written to JSON.
class WeightsWriter {
 public:
  /// Constants in `quantize` (f32 weights only GEMMs read) are stored in
  /// `format`: "name.elements" (U8 [rows, row bytes]) and "name.scales"
  /// (F8_E8M0 [rows, blocks]), graph.json saying {"mx": format, "elements":
  /// ..., "scales": ..., "shape": [...]}.
  /// (The map says which are a matmul's B [k, n], stored transposed.)
  void quantize(std::map<const ir::DenseElements*, bool> quantize, ir::MxFormat format) {
    quantize_ = std::move(quantize);
    format_ = format;
  }
  /// The callback graphToJson calls for each dense attribute.
  DenseToJson callback();
  /// The weights file of everything collected.
  std::string file() const;
  /// The name a collected constant was given.
  std::string nameOf(const ir::DenseElements& d) const { return names_.at(&d); }

 private:
  std::map<const ir::DenseElements*, std::string> names_;
  std::vector<runtime::SafetensorsTensor> tensors_;
  std::map<const ir::DenseElements*, bool> quantize_;
  ir::MxFormat format_ = ir::MxFormat::E4M3;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> quantized_;  // what the MX tensors' spans point into
};

/// The callback graphFromJson calls: a tensor of `weights` by name, as a
/// dense attribute over its bytes (kept alive by `storage`). Throws
/// ir::Error for a name it lacks or a dtype graphc has not.
DenseFromJson weightsReader(const runtime::SafetensorsFile& weights, std::shared_ptr<const void> storage);

}  // namespace graphc::deploy
