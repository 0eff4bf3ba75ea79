// What the ONNX importer (OnnxImporter.cpp) and its op converters (the
// *Ops.cpp files) share; internal to frontend/onnx.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/onnx/OnnxImporter.h"
#include "ir/Graph.h"
#include "runtime/FileIO.h"
#include "runtime/Tensor.h"

namespace graphc::frontend::onnximport {

/// The most elements a tensor the importer computes itself may have (a
/// folded shape computation, a Trilu mask, a Range): beyond it a model is
/// refused rather than allowed to exhaust memory at import time.
inline constexpr int64_t kMaxImportTimeElements = int64_t{1} << 22;

/// ONNX's TensorProto.DataType as a dtype; nullopt for types graphc lacks.
std::optional<ir::DType> dtypeOf(int32_t onnxType);
/// "float", "uint8", ... (what the ONNX spec calls them).
std::string onnxTypeName(int32_t onnxType);
/// Where a model's external tensor data lies: files in the model's folder
/// (what torch.onnx.export writes beside a model as `model.onnx.data`). A
/// location that is absolute, has a `..` component or passes through a
/// symlink is refused, and so is an offset or length that does not lie
/// inside the file. The folder is opened once, at the first external
/// tensor, and every file is opened beneath that descriptor
/// (runtime::Folder), so the folder's contents changing during the import
/// cannot redirect a read outside it.
class ExternalData {
 public:
  /// `folder` empty: the model did not come from a folder, and external
  /// data is refused.
  explicit ExternalData(std::string folder) : folder_(std::move(folder)) {}
  /// Tensor `t`'s data, of `dtype` and `shape`, read from its file (the
  /// file's size checked before the tensor is allocated); throws ir::Error
  /// naming `what`.
  runtime::Tensor read(const onnx::TensorProto& t, ir::DType dtype, const std::vector<int64_t>& shape,
                       const std::string& what) const;

 private:
  std::string folder_;
  /// The folder, opened at the first read.
  mutable std::optional<runtime::Folder> folderHandle_;
};

/// Throws ir::Error naming `what` for a malformed tensor, Unsupported for a
/// dtype graphc lacks. Data stored outside the model is read through
/// `external` (refused without one).
runtime::Tensor tensorFromProto(const onnx::TensorProto& t, const std::string& what,
                                const ExternalData* external = nullptr);

/// A feature of the model graphc does not support; the import records it
/// for the conformance report.
using Unsupported = OnnxUnsupported;

class Importer;

/// An i64 tensor of rank 0 or 1 known at import time up to symbolic sizes:
/// what Shape gives for a tensor with symbolic dims (`[B, 5, 16]`), and
/// what Gather, Slice, Concat, Unsqueeze, Squeeze and Cast make of it. It
/// has no IR value (a graphc tensor holds numbers, not symbols), so it can
/// only be used where a shape is expected: Reshape, Expand, ConstantOfShape,
/// and in the arithmetic exporters do on shapes (Mul, Div, Add, Sub of
/// sizes; Equal and Where that decide at import time; a 1-D Reshape).
struct ShapeValue {
  std::vector<ir::Dim> dims;
  bool scalar = false;
  ir::DType dtype = ir::DType::I64;  // as ONNX has it: Shape's int64, or what a Cast made it
  bool isStatic() const;
};

/// One node being converted: its operands, its attributes, and a builder
/// that appends ops to the region the node is in. Every failure is an
/// exception that the importer reports at the node's line of the listing.
class NodeContext {
 public:
  NodeContext(Importer& importer, const onnx::NodeProto& node, ir::Region& region, ir::SourceLoc loc,
              std::vector<ir::Value*> inputs, std::vector<const ShapeValue*> shapeInputs, int64_t opset);

  Importer& importer;
  const onnx::NodeProto& node;
  ir::Region& region;
  const ir::SourceLoc loc;
  const int64_t opset;  // of the default domain

  size_t numInputs() const { return inputs_.size(); }
  /// Null for an absent optional input. An input that is a ShapeValue is
  /// computed as a tensor (materialize) for an op that reads it as data.
  ir::Value* input(size_t k);
  /// Whether input k is given (as a value or as a ShapeValue).
  bool present(size_t k) const { return k < inputs_.size() && (inputs_[k] || shapeInputs_[k]); }
  /// Whether input k is a ShapeValue with symbolic sizes.
  bool isShape(size_t k) const { return k < shapeInputs_.size() && shapeInputs_[k]; }
  /// Input k as a shape: a ShapeValue, or a known integer tensor of rank
  /// 0 or 1; fails saying `what` it is otherwise.
  ShapeValue shapeInput(size_t k, std::string_view what) const;
  /// Output k as a shape: a constant when every size is static.
  void setShapeOutput(size_t k, const ShapeValue& v);
  /// Fails when input k is absent.
  ir::Value* required(size_t k);
  /// The value of input k when it is known at import time: an initializer,
  /// a Constant, something computed from those alone, or a graph input the
  /// import was given a value for (the graph is then specialised on it).
  std::optional<runtime::Tensor> constant(size_t k) const;
  /// An input that must be known at import time; fails saying `what` it is.
  runtime::Tensor requireConstant(size_t k, std::string_view what) const;
  /// A known integer input as a list (shapes, axes, pads).
  std::vector<int64_t> constantInts(size_t k, std::string_view what) const;

  bool has(std::string_view attrName) const { return attr(attrName) != nullptr; }
  const onnx::AttributeProto* attr(std::string_view attrName) const;
  int64_t intAttr(std::string_view attrName, int64_t fallback) const;
  float floatAttr(std::string_view attrName, float fallback) const;
  std::string stringAttr(std::string_view attrName, std::string fallback) const;
  std::optional<std::vector<int64_t>> intsAttr(std::string_view attrName) const;
  std::optional<runtime::Tensor> tensorAttr(std::string_view attrName) const;
  const onnx::GraphProto& graphAttr(std::string_view attrName) const;

  /// Appends `op`; a type-rule failure is an error naming the node.
  ir::Value* op(ir::OpId op, std::vector<ir::Value*> operands, ir::AttrMap attrs = {});
  /// v as dtype t (v itself when it is one already).
  ir::Value* cast(ir::Value* v, ir::DType t);
  /// v with `count` size-1 dims appended, to broadcast against more dims.
  ir::Value* withTrailingOnes(ir::Value* v, int64_t count);
  /// A `constant` holding `value`.
  ir::Value* constantOf(const runtime::Tensor& value);
  ir::Value* scalar(ir::DType dtype, double value);
  /// A symbolic size's value as a scalar of an integer dtype: the sum of as
  /// many ones (a size reaches a value only through a shape; the sum is
  /// linear in it, and a decode step's position is small beside its model).
  ir::Value* sizeValue(const ir::Dim& size, ir::DType dtype);
  /// A shape's sizes as a tensor ([n], or [] for a scalar) of its dtype.
  ir::Value* materialize(const ShapeValue& v);
  /// A scalar of v's dtype.
  ir::Value* scalarLike(const ir::Value* v, double value) { return scalar(v->type.dtype, value); }

  size_t numOutputs() const { return static_cast<size_t>(node.output_size()); }
  /// Whether output k exists and has a name (optional outputs may not).
  bool outputWanted(size_t k) const;
  void setOutput(size_t k, ir::Value* v);

  [[noreturn]] void fail(const std::string& message) const;
  /// Fails as an unsupported feature, e.g. unsupported("attribute mode=wrap", "...").
  [[noreturn]] void unsupported(const std::string& feature, const std::string& message) const;

 private:
  mutable std::vector<ir::Value*> inputs_;      // constant() may specialise one
  std::vector<const ShapeValue*> shapeInputs_;  // non-null where the input is a ShapeValue
};

using Converter = void (*)(NodeContext&);

struct OpMapping {
  std::string_view opType;
  Converter convert;
  /// The attributes the converter reads; any other is unsupported.
  std::vector<std::string_view> attributes;
};

// The converters, one table per op family.
std::span<const OpMapping> elementwiseOps();
std::span<const OpMapping> reductionOps();
std::span<const OpMapping> shapeOps();
std::span<const OpMapping> nnOps();
std::span<const OpMapping> windowOps();
std::span<const OpMapping> controlOps();
std::span<const OpMapping> einsumOps();

/// Null when graphc has no converter for the op type (default domain).
const OpMapping* findOp(std::string_view opType);

/// Attributes of one entry: oneAttr("dim", Attribute::ofInt(1)).
ir::AttrMap oneAttr(std::string_view name, ir::Attribute value);
/// A reduction's {dims, keepdim}.
ir::AttrMap reduceAttrs(const std::vector<int64_t>& dims, bool keepdim);
/// `axis` of a rank-`rank` tensor in [0, rank); fails when out of range.
int64_t normalizeAxis(const NodeContext& c, int64_t axis, int64_t rank);
/// a * b and a + b of sizes from the model; fail rather than overflow.
int64_t checkedMul(const NodeContext& c, int64_t a, int64_t b);
int64_t checkedAdd(const NodeContext& c, int64_t a, int64_t b);

/// Fails as unsupported ("Div on i32") unless v is of a floating-point dtype.
void needFloat(const NodeContext& c, const ir::Value* v);

/// x reshaped to `shape` (x itself when it has that shape already).
ir::Value* reshape(NodeContext& c, ir::Value* x, const ir::Shape& shape);

}  // namespace graphc::frontend::onnximport
