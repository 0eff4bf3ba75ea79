// DLPack in and out; see Arrays.h.
#include "Arrays.h"

#include <bit>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nanobind/stl/string.h>

namespace graphc::python {

namespace {

namespace dl = nb::dlpack;

std::optional<DType> dtypeOf(dl::dtype t) {
  if (t.lanes != 1) return std::nullopt;
  switch (static_cast<dl::dtype_code>(t.code)) {
    case dl::dtype_code::Float:
      if (t.bits == 16) return DType::F16;
      if (t.bits == 32) return DType::F32;
      if (t.bits == 64) return DType::F64;
      break;
    case dl::dtype_code::Bfloat:
      if (t.bits == 16) return DType::BF16;
      break;
    case dl::dtype_code::Int:
      if (t.bits == 8) return DType::I8;
      if (t.bits == 32) return DType::I32;
      if (t.bits == 64) return DType::I64;
      break;
    case dl::dtype_code::Bool:
      if (t.bits == 8) return DType::Bool;
      break;
    default: break;
  }
  return std::nullopt;
}

dl::dtype dlpackOf(DType d) {
  switch (d) {
    case DType::F16: return {uint8_t(dl::dtype_code::Float), 16, 1};
    case DType::BF16: return {uint8_t(dl::dtype_code::Bfloat), 16, 1};
    case DType::F32: return {uint8_t(dl::dtype_code::Float), 32, 1};
    case DType::F64: return {uint8_t(dl::dtype_code::Float), 64, 1};
    case DType::I8: return {uint8_t(dl::dtype_code::Int), 8, 1};
    case DType::I32: return {uint8_t(dl::dtype_code::Int), 32, 1};
    case DType::I64: return {uint8_t(dl::dtype_code::Int), 64, 1};
    case DType::Bool: return {uint8_t(dl::dtype_code::Bool), 8, 1};
  }
  throw Error("unknown dtype");
}

/// Whether strides (in elements) describe C order; size-1 dims may have
/// any stride (torch gives them arbitrary ones).
template <typename... Flags>
bool cContiguous(const nb::ndarray<Flags...>& a) {
  int64_t expected = 1;
  for (size_t d = a.ndim(); d-- > 0;) {
    if (a.shape(d) != 1 && a.stride(d) != expected) return a.size() == 0;
    expected *= static_cast<int64_t>(a.shape(d));
  }
  return true;
}

}  // namespace

std::string numpyDtypeName(DType dtype) {
  switch (dtype) {
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::I8: return "int8";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

Framework frameworkOf(nb::handle object) {
  nb::handle type = object.type();
  if (!nb::hasattr(type, "__module__")) return Framework::NumPy;
  const std::string module = nb::cast<std::string>(type.attr("__module__"));
  return module == "torch" || module.starts_with("torch.") ? Framework::PyTorch : Framework::NumPy;
}

namespace {

/// Why `array` is not an ndarray nanobind takes, where a reason can be
/// named: a byte order other than the machine's (NumPy's '>f4'), or a
/// producer whose __dlpack__ raises (its error chained to ours). Returns
/// otherwise.
void explainRefusedArray(nb::handle array, const ArrayName& name) {
  if (nb::hasattr(array, "dtype") && nb::hasattr(array.attr("dtype"), "byteorder")) {
    const std::string order = nb::cast<std::string>(nb::str(array.attr("dtype").attr("byteorder")));
    const bool little = std::endian::native == std::endian::little;
    if ((order == ">" && little) || (order == "<" && !little)) {
      const std::string code = nb::cast<std::string>(nb::str(array.attr("dtype").attr("str")));
      throw nb::value_error(fmt::format("{} is {}-endian ({}); graphc reads the machine's byte order (use "
                                        ".astype('{}{}'))",
                                        name(), order == ">" ? "big" : "little", code, little ? '<' : '>',
                                        code.substr(1))
                                .c_str());
    }
  }
  if (nb::hasattr(array, "__dlpack__")) {
    try {
      array.attr("__dlpack__")();
    } catch (nb::python_error& e) {
      nb::raise_from(e, PyExc_TypeError, "%s: its __dlpack__ raised (above)", name().c_str());
    }
  }
}

}  // namespace

namespace {

/// A Tensor over an array nanobind took (`Flags`: nb::ro, or writable).
template <typename... Flags>
Tensor tensorOver(const nb::ndarray<Flags...>& a, const ArrayName& name) {
  if (a.device_type() != nb::device::cpu::value)
    throw nb::value_error(
        fmt::format("{} is in device memory; graphc takes host arrays (call .cpu())", name()).c_str());
  std::optional<DType> dtype = dtypeOf(a.dtype());
  if (!dtype)
    throw nb::type_error(fmt::format("{} has a dtype graphc does not have (it has float16, bfloat16, float32, float64, "
                                     "int8, int32, int64, bool)",
                                     name())
                             .c_str());
  if (!cContiguous(a))
    throw nb::value_error(
        fmt::format("{} is not C-contiguous; pass a contiguous array (np.ascontiguousarray, .contiguous())", name())
            .c_str());
  std::vector<int64_t> shape(a.ndim());
  for (size_t d = 0; d < a.ndim(); ++d) shape[d] = static_cast<int64_t>(a.shape(d));
  auto* data = const_cast<std::byte*>(static_cast<const std::byte*>(a.data()));
  return Tensor::wrap(*dtype, std::move(shape), data);
}

[[noreturn]] void refuse(nb::handle array, const ArrayName& name) {
  explainRefusedArray(array, name);
  throw nb::type_error(fmt::format("{} is a {}, not an array (anything with __dlpack__ or the buffer protocol)", name(),
                                   nb::cast<std::string>(nb::type_name(array.type())))
                           .c_str());
}

}  // namespace

Tensor wrapArray(nb::handle array, const ArrayName& name) {
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(array, a, /*convert=*/false)) refuse(array, name);
  return tensorOver(a, name);
}

Tensor wrapWritableArray(nb::handle array, const ArrayName& name) {
  // nanobind refuses a read-only buffer or DLPack tensor where nb::ro is
  // not asked for; NumPy's flag is checked too, for exporters that do not
  // say so. One cast: a DLPack capsule is consumed by the first.
  nb::ndarray<> writable;
  if (!nb::try_cast(array, writable, /*convert=*/false)) {
    nb::ndarray<nb::ro> readOnly;
    if (!nb::try_cast(array, readOnly, /*convert=*/false)) refuse(array, name);
    throw nb::value_error(fmt::format("{} is read-only; graphc writes its results into it", name()).c_str());
  }
  if (nb::hasattr(array, "flags")) {
    nb::object flags = array.attr("flags");
    if (nb::hasattr(flags, "writeable") && !nb::cast<bool>(flags.attr("writeable")))
      throw nb::value_error(fmt::format("{} is read-only; graphc writes its results into it", name()).c_str());
  }
  return tensorOver(writable, name);
}

nb::object toArray(Tensor tensor, Framework framework) {
  auto* owned = new Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
  const dl::dtype dtype = dlpackOf(owned->dtype());
  if (framework == Framework::PyTorch)
    return nb::cast(nb::ndarray<nb::pytorch>(owned->data(), shape.size(), shape.data(), owner, nullptr, dtype));
  return nb::cast(nb::ndarray<nb::numpy>(owned->data(), shape.size(), shape.data(), owner, nullptr, dtype));
}

}  // namespace graphc::python
