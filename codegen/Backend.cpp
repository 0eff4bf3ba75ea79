#include "codegen/Backend.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/kernel/Lowering.h"
#include "ir/Diagnostics.h"

namespace graphc::codegen {

std::string_view deviceName(Device d) {
  switch (d) {
    case Device::Reference: return "reference";
    case Device::Cpu: return "cpu";
    case Device::Cuda: return "cuda";
  }
  return "";
}

kernel::LowerOptions Backend::lowerOptions() const { return {}; }

bool Backend::readsMxInput(const kernel::Kernel&, int) const { return false; }

std::optional<Device> parseDevice(std::string_view name) {
  for (Device d : {Device::Reference, Device::Cpu, Device::Cuda})
    if (deviceName(d) == name) return d;
  return std::nullopt;
}

std::optional<MatmulImpl> parseMatmulImpl(std::string_view name) {
  if (name == "generated") return MatmulImpl::Generated;
  if (name == "cublaslt") return MatmulImpl::CublasLt;
  return std::nullopt;
}

std::string CompileReport::table() const {
  std::string out = "// ----- compile time (wall clock) -----\n";
  size_t width = 40;  // wider when a name is (a long kernel name marked "(disk cache)")
  for (const Stage& s : stages) width = std::max(width, s.name.size() + (s.detail ? 2 : 0));
  double total = 0;
  for (const Stage& s : stages) {
    out += fmt::format("//   {:<{}} {:>10.3f} ms\n", (s.detail ? "  " : "") + s.name, width, s.seconds * 1e3);
    if (!s.detail) total += s.seconds;
  }
  out += fmt::format("//   {:<{}} {:>10.3f} ms\n", "total", width, total * 1e3);
  return out;
}

std::string Backend::emit(const ir::Graph&, std::string_view kind, const CompileOptions&, CompileReport&) const {
  throw ir::Error(fmt::format("the {} backend does not emit '{}'", name(), kind));
}

std::vector<std::pair<std::string, std::string>> Backend::dumpFiles(const ir::Graph&) const { return {}; }

Backend::ExportedCode Backend::exportCode(const ir::Graph&, const CompileOptions&, CompileReport&) const {
  throw ir::Error(fmt::format("the {} backend cannot export a package", name()));
}

}  // namespace graphc::codegen
