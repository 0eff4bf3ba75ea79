// Where graphc's shared modules are: the backends the compiler loads on
// first use (codegen/Backends.cpp) and the runtime's cuda module
// (deploy/Loader.cpp), as onnxruntime finds its execution providers.
//
//   $GRAPHC_BACKEND_DIR if set, else graphc/ beside the library or program
//   holding this code (lib/graphc/ from lib/libgraphc.so or
//   lib/libgraphc-runtime.so), and ../lib/graphc/ or
//   ../<install libdir>/graphc/ from it (from bin/graphc).
#pragma once

#include <filesystem>
#include <vector>

namespace graphc::runtime {

/// The folders a module may be in, in search order.
std::vector<std::filesystem::path> moduleFolders();

}  // namespace graphc::runtime
