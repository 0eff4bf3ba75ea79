// The ONNX frontend: an ONNX ModelProto (read with Debian's libonnx and
// libprotobuf) becomes an ir::Graph. Initializers become constants; graph
// inputs become parameters (dim_params become symbolic sizes); `If`
// becomes a cond whose branches receive the outer values they use as
// explicit operands; every node maps to ops of the .graph language
// (frontend/onnx/*Ops.cpp, one file per op family).
//
// Some operands must be known when the graph is built: a Reshape's shape, a
// Slice's bounds, reduction axes. Initializers and Constant nodes are, and
// so is anything computed from them alone. A graph input in such a place
// needs a value at import time (ImportOptions::knownInputs, `--input` on
// the command line): the graph is specialised on it, and the input leaves
// the parameters (torch.export's constant specialisation).
//
// Diagnostics are located in a listing of the model that the importer
// makes, one line per node (a subgraph's nodes follow their If), and named
// after the file:
//
//   model.onnx:3:3: error: unsupported op 'Conv' (node 'conv1')
//     conv1: Conv(x, w) -> y
//     ^
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::frontend {

/// A feature of a model that graphc does not support; `feature` names it
/// for reports ("op Conv", "dtype uint8", "Pad mode wrap").
class OnnxUnsupported : public ir::Error {
 public:
  OnnxUnsupported(std::string feature, std::string message) : Error(std::move(message)), feature(std::move(feature)) {}
  std::string feature;
};

struct OnnxImportOptions {
  /// Values of graph inputs (by their ONNX names) that the import may
  /// specialise on when an op needs them at compile time.
  std::map<std::string, runtime::Tensor> knownInputs;
  /// The folder the model was read from: where its external data files
  /// (a `location` of each tensor stored outside the model) must lie.
  /// Empty: a model with external data is refused. importOnnxFile sets it
  /// to the model file's folder.
  std::string dataFolder;
};

struct OnnxImport {
  /// Null when the import failed (the diagnostics say why).
  std::unique_ptr<ir::Module> module;
  /// The ONNX name of each parameter of the entry graph, in order: the
  /// graph inputs that are neither initializers nor specialised.
  std::vector<std::string> inputNames;
  /// The graph inputs the import specialised on their given values.
  std::vector<std::string> specialised;
  /// What the model uses that graphc does not support ("op Conv",
  /// "dtype uint8", "Pad attribute mode=wrap"), each once; empty when the
  /// import failed for another reason (a malformed model).
  std::vector<std::string> unsupported;
};

/// Imports the model in `bytes`, read from `fileName`.
OnnxImport importOnnx(std::string_view bytes, const std::string& fileName, ir::DiagnosticEngine& diags,
                      const OnnxImportOptions& options = {});
/// Reads `path` and imports it, its external data from its folder; an
/// unreadable file is a diagnostic. A regular file is parsed from its
/// descriptor in chunks (no copy of the whole file first); a pipe is read
/// whole, then parsed.
OnnxImport importOnnxFile(const std::string& path, ir::DiagnosticEngine& diags, const OnnxImportOptions& options = {});

/// Whether `path` names an ONNX model (by its extension, `.onnx`).
bool isOnnxPath(std::string_view path);

/// The op types of a model (subgraphs included) that the importer has no
/// converter for, each once, in the order met; empty when every op has one.
/// Throws ir::Error when `bytes` is not a model.
std::vector<std::string> unsupportedOnnxOps(std::string_view bytes);

/// The names of the graph inputs that are not initializers, in order (what
/// a test's input_K.pb files are for); throws ir::Error when `bytes` is not
/// a model.
std::vector<std::string> onnxGraphInputs(std::string_view bytes);

/// A serialized ONNX TensorProto (a test's input_0.pb) as a tensor; throws
/// ir::Error naming `name` when it is malformed, OnnxUnsupported when it is
/// of a dtype graphc lacks.
runtime::Tensor parseTensorProto(std::string_view bytes, const std::string& name);
runtime::Tensor readTensorProtoFile(const std::string& path);
/// The name stored in a serialized TensorProto ("" when it has none).
std::string tensorProtoName(std::string_view bytes);

/// The inputs of an ONNX test data set folder (input_0.pb, input_1.pb, ...
/// up to the first missing one) by graph input name: each file's own name,
/// or for an unnamed file K the model's K-th graph input (`graphInputs`,
/// onnxGraphInputs). Throws as parseTensorProto does.
std::map<std::string, runtime::Tensor> readTestDataInputs(const std::filesystem::path& dataSet,
                                                          const std::vector<std::string>& graphInputs);

}  // namespace graphc::frontend
