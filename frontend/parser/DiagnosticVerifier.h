// --verify-diagnostics: checks the diagnostics produced for a buffer against
// `// expected-error {{text}}` comments in it, as mlir-opt does. A comment
// may aim at another line: `expected-error@+1`, `@-2`, `@above`, `@below`.
// `expected-note` and `expected-warning` work alike. Every produced
// diagnostic (notes included) must be expected, and every expectation met;
// `text` must occur in the message.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/Diagnostics.h"

namespace graphc::frontend {

/// Returns an empty string when produced and expected agree, else a report
/// of each mismatch (`file:line: error: ...`), one per line.
std::string verifyDiagnostics(const ir::SourceBuffer& buffer, const std::vector<ir::Diagnostic>& produced);

}  // namespace graphc::frontend
