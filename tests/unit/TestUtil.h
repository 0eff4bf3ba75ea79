// Helpers shared by the unit tests: parsing with collected diagnostics,
// the default pipeline, tensors from values, poisoned outputs, and
// closeness with torch's default tolerances.
#pragma once

#include <cctype>
#include <cmath>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "frontend/parser/Parser.h"
#include "passes/PassManager.h"
#include "runtime/Tensor.h"
#include "runtime/reference/Interpreter.h"
#include "tests/support/Tolerance.h"

namespace graphc::testing {

/// Parses `text`; on failure the test fails with the diagnostics.
inline std::unique_ptr<ir::Module> parseOk(const std::string& text) {
  ir::DiagnosticEngine diags;
  auto m = frontend::parseString(text, diags, "test.graph");
  std::string messages;
  for (const auto& d : diags.all()) messages += ir::format(d);
  EXPECT_TRUE(m) << messages;
  return m;
}

/// Parses `text`, which must fail; returns the first diagnostic.
inline ir::Diagnostic parseError(const std::string& text) {
  ir::DiagnosticEngine diags;
  auto m = frontend::parseString(text, diags, "test.graph");
  EXPECT_FALSE(m) << "expected a parse error";
  if (diags.all().empty()) return {};
  return diags.all().front();
}

/// Parses `text` and runs the default pipeline; on failure the test fails.
inline std::unique_ptr<ir::Module> optimisedOk(const std::string& text) {
  auto m = parseOk(text);
  if (!m) return nullptr;
  ir::DiagnosticEngine diags;
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  EXPECT_TRUE(pm.run(*m, diags));
  return m;
}

/// Result tensors of `g` for `inputs`, filled with 0xff bytes (NaN for
/// floats, -1 for integers, 255 for bool) so that an element no kernel
/// writes shows up; a result that updates an input in place is that input,
/// as capture() requires.
inline std::vector<runtime::Tensor> poisonedOutputs(const ir::Graph& g, const std::vector<runtime::Tensor>& inputs) {
  const ir::SymbolBindings sizes = runtime::bindInputs(g, inputs);
  std::vector<runtime::Tensor> out;
  for (size_t k = 0; k < g.resultTypes.size(); ++k) {
    if (const ir::Value* p = g.updatedParam(k)) {
      out.push_back(inputs.at(static_cast<size_t>(p->index())));
      continue;
    }
    out.emplace_back(g.resultTypes[k].dtype, runtime::concreteShape(ir::substitute(g.resultTypes[k], sizes)));
    out.back().fillBytes(0xff);
  }
  return out;
}

/// Copies with their own bytes: each run of a graph that updates inputs in
/// place gets its own (and the oracle's results outlive them).
inline std::vector<runtime::Tensor> copiesOf(const std::vector<runtime::Tensor>& tensors) {
  std::vector<runtime::Tensor> out;
  for (const runtime::Tensor& t : tensors) {
    out.emplace_back(t.dtype(), t.shape());
    if (t.nbytes()) std::memcpy(out.back().data(), t.data(), t.nbytes());
  }
  return out;
}

inline runtime::Tensor tensorOf(ir::DType t, std::vector<int64_t> shape, const std::vector<double>& values) {
  runtime::Tensor out(t, std::move(shape));
  EXPECT_EQ(out.numel(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < out.numel(); ++i)
    out.setDouble(static_cast<int64_t>(i), values[i]);
  return out;
}

/// Like torch.testing.assert_close: same dtype and shape, |a - e| <= atol +
/// rtol |e| everywhere, NaN only where expected NaN, infinities equal.
inline ::testing::AssertionResult allClose(const runtime::Tensor& actual, const runtime::Tensor& expected,
                                           Tolerance tol) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "type " << ir::toString(actual.type()) << " vs expected "
                                         << ir::toString(expected.type());
  int64_t mismatches = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.getDouble(i), e = expected.getDouble(i);
    const bool ok = ir::isFloat(actual.dtype()) ? isClose(a, e, tol) : actual.getInt(i) == expected.getInt(i);
    if (!ok) {
      if (first < 0) first = i;
      ++mismatches;
      worst = std::max(worst, std::fabs(a - e));
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches << " of " << actual.numel()
                                       << " elements differ; greatest difference " << worst << "; first at " << first
                                       << ": " << actual.getDouble(first) << " vs expected "
                                       << expected.getDouble(first);
}

/// A test parameter (a path) as a gtest name: non-alphanumerics become '_'.
inline std::string paramName(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

}  // namespace graphc::testing
