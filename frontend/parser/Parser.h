// The .graph parser: text → ir::Module, with located diagnostics. It stops
// at the first error of a buffer (as mlir-opt does) and verifies what it
// built before returning it, so a returned module is always valid.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

namespace graphc::frontend {

/// Parses one buffer; null (with diagnostics) on error.
std::unique_ptr<ir::Module> parse(std::shared_ptr<const ir::SourceBuffer> buffer, ir::DiagnosticEngine& diags);

/// Convenience for tests and embedders: parse `text` named `name`.
std::unique_ptr<ir::Module> parseString(std::string text, ir::DiagnosticEngine& diags, std::string name = "<string>");

/// Reads a file into a buffer; null (with a diagnostic) if it cannot be read.
std::shared_ptr<const ir::SourceBuffer> readSourceFile(const std::string& path, ir::DiagnosticEngine& diags);

/// readSourceFile, then parse; null (with diagnostics) on either error.
std::unique_ptr<ir::Module> parseFile(const std::string& path, ir::DiagnosticEngine& diags);

/// Splits a buffer at lines `// -----` (--split-input-file); each chunk keeps
/// the file's line numbers.
std::vector<std::shared_ptr<const ir::SourceBuffer>> splitInputFile(const ir::SourceBuffer& whole);

}  // namespace graphc::frontend
