// Running a Binding: the Executor enqueues each step on the executable's
// streams (kernel launches, cuBLASLt, cuSOLVER, cond, host copies) — into
// a CUDA graph under capture — and the helpers that read back what the
// device reports (eigh's info) and describe a plan.
#pragma once

#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "codegen/cuda/DeviceBinding.h"
#include "runtime/Executable.h"

namespace graphc::codegen::cuda {

/// The streams of one Executable: [0] runs and captures; under capture each
/// nesting level of cond bodies is recorded on its own stream.
struct Streams {
  std::vector<cudaStream_t> s;
  cudaStream_t at(size_t depth) {
    while (s.size() <= depth) {
      cudaStream_t stream;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      s.push_back(stream);
    }
    return s[depth];
  }
  ~Streams() {
    for (cudaStream_t stream : s) cudaStreamDestroy(stream);
  }
};

class Executor {
 public:
  Executor(Module& m, Streams& streams, bool capturing, const runtime::RunOptions& options = {})
      : m_(m), streams_(streams), capturing_(capturing), options_(options) {}

  /// Enqueues the steps; a cancelled run stops enqueuing (the host has
  /// nothing to interrupt on the device), then throws once the queued work
  /// is done.
  void region(BoundRegion& r, size_t depth);

 private:
  void launch(cudaKernel_t fn, dim3 grid, dim3 block, void** args, cudaStream_t stream, const char* what);

  void step(BoundStep& s, size_t depth);

  void eigh(BoundStep& s, cudaStream_t stream);

  void cond(BoundStep& s, size_t depth);

  void host(BoundStep& s, cudaStream_t stream);

  Module& m_;
  Streams& streams_;
  bool capturing_;
  const runtime::RunOptions& options_;
};

/// eigh's per-matrix info, read after the stream's sync; a failure names
/// its batch index. Resets the arrays for the next replay.
void checkEighInfo(BoundRegion& r);

/// The step list of a plan, one per line.
std::string describe(const RegionPlan& plan, const Module& m, int indent);

}  // namespace graphc::codegen::cuda
