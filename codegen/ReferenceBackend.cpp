#include "codegen/ReferenceBackend.h"

#include "runtime/reference/ReferenceExecutable.h"

namespace graphc::codegen {

namespace {

class ReferenceBackend final : public Backend {
 public:
  Device device() const override { return Device::Reference; }
  bool runsPipeline() const override { return false; }

  std::unique_ptr<runtime::Executable> compile(const ir::Graph& g, const CompileOptions&,
                                               CompileReport&) const override {
    return runtime::interpretingExecutable(g);
  }
};

}  // namespace

const Backend& referenceBackend() {
  static const ReferenceBackend instance;
  return instance;
}

}  // namespace graphc::codegen
