// How a backend reaches the registry (codegen/Backends.cpp): as a shared
// module the registry loads on first use, through the C entry point below,
// or linked into a program and registered before main (BuiltinBackend).
#pragma once

#include "codegen/Backend.h"

namespace graphc::codegen {

/// What a module's entry point returns: the ABI it was built for and its
/// backend (which lives as long as the process).
struct BackendPlugin {
  const char* abi = nullptr;
  const Backend* backend = nullptr;
};

using BackendPluginEntry = BackendPlugin (*)();
inline constexpr const char* kBackendPluginEntry = "graphc_backend_plugin";

/// A module works only with the graphc it was built with: the registry
/// compares this string, which names the version and the compiler.
#ifndef GRAPHC_VERSION
#define GRAPHC_VERSION "dev"
#endif
inline constexpr const char* kBackendPluginAbi = "graphc " GRAPHC_VERSION "; " __VERSION__;

/// Registers a backend linked into the program (tests, developer tools);
/// a static object of this type in the backend's builtin file does it.
struct BuiltinBackend {
  explicit BuiltinBackend(const Backend& b);
};

/// Defines a backend module's entry point (one per module).
#define GRAPHC_BACKEND_PLUGIN(backendExpr)                                                                   \
  extern "C" __attribute__((visibility("default"))) graphc::codegen::BackendPlugin graphc_backend_plugin() { \
    return {graphc::codegen::kBackendPluginAbi, &(backendExpr)};                                             \
  }

}  // namespace graphc::codegen
