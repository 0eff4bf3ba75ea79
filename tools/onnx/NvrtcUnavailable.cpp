// A build without the cuda backend has no NVRTC to compile with; main()
// says so before it would call this.
#include "tools/onnx/Conformance.h"

namespace graphc::onnxtest {

void compileWithNvrtc(std::vector<TestResult>& results) {
  for (TestResult& r : results)
    if (r.optimized) r.failures[Backend::Nvrtc] = "this graphc was built without the cuda backend";
}

}  // namespace graphc::onnxtest
