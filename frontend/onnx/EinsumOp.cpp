// ONNX Einsum → graphc, for one or two operands (what exporters write for
// torch.einsum: attention scores, Mamba-2's state products, relative
// positions). NumPy's semantics, as ONNX states them: an implicit output
// (no "->") is the labels used once, in alphabetical order, after the
// ellipsis dims; "..." stands for the leading dims, aligned at the right
// across operands.
//
// A label only one operand has and the output lacks is summed there first.
// One operand is then a permute. Two are a batched matmul: each operand is
// permuted to [batch, own, contracted] (the other: [batch, contracted,
// own]), its own and contracted dims merged by a reshape, multiplied, and
// the product reshaped and permuted to the output's order.
//
// Not taken (an unsupported-op error naming the node): a label repeated
// within one operand (a diagonal), a label whose sizes differ between
// operands (broadcasting a size-1 dim), more than two operands.
#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "frontend/onnx/ImportContext.h"
#include "ir/Builder.h"

namespace graphc::frontend::onnximport {

namespace {

using ir::OpId;
using Label = int;  // a letter's char, or kEllipsis + k for the k-th ellipsis dim

constexpr Label kEllipsis = 1000;

struct Equation {
  std::vector<std::vector<Label>> inputs;
  std::vector<Label> output;
};

/// Labels of one term (`ab...c`) of an operand of `rank` dims, or of the
/// output (`rank` < 0) given `ellipsisDims`.
std::vector<Label> parseTerm(const NodeContext& c, std::string_view term, int64_t rank, int64_t ellipsisDims) {
  std::vector<Label> labels;
  const size_t dots = term.find("...");
  if (dots != std::string_view::npos && term.find("...", dots + 1) != std::string_view::npos)
    c.fail(fmt::format("the term '{}' has two ellipses", term));
  const int64_t letters = static_cast<int64_t>(term.size()) - (dots == std::string_view::npos ? 0 : 3);
  int64_t own = 0;  // the ellipsis dims of this term
  if (dots != std::string_view::npos) {
    own = rank >= 0 ? rank - letters : ellipsisDims;
    if (own < 0) c.fail(fmt::format("the term '{}' names more dims than its operand's {}", term, rank));
  } else if (rank >= 0 && letters != rank) {
    c.fail(fmt::format("the term '{}' names {} dims of an operand of rank {}", term, letters, rank));
  }
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int64_t k = 0; k < own; ++k) labels.push_back(kEllipsis + static_cast<Label>(ellipsisDims - own + k));
      i += 2;
      continue;
    }
    const char ch = term[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
      c.fail(fmt::format("'{}' in the equation is not a letter", ch));
    labels.push_back(ch);
  }
  return labels;
}

Equation parseEquation(NodeContext& c) {
  std::string text;
  for (char ch : c.stringAttr("equation", ""))
    if (ch != ' ') text += ch;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.numInputs())
    c.fail(fmt::format("the equation has {} operand terms for {} inputs", terms.size(), c.numInputs()));
  if (terms.size() > 2) c.unsupported("three or more operands", "Einsum of more than two operands is not supported");
  int64_t ellipsisDims = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const int64_t rank = c.required(k)->type.rank();
    const int64_t letters =
        static_cast<int64_t>(std::count_if(terms[k].begin(), terms[k].end(), [](char ch) { return ch != '.'; }));
    if (terms[k].find("...") != std::string::npos) ellipsisDims = std::max(ellipsisDims, rank - letters);
  }
  Equation e;
  for (size_t k = 0; k < terms.size(); ++k)
    e.inputs.push_back(parseTerm(c, terms[k], c.required(k)->type.rank(), ellipsisDims));
  if (arrow != std::string::npos) {
    e.output = parseTerm(c, text.substr(arrow + 2), -1, ellipsisDims);
  } else {  // implicit: the ellipsis dims, then the letters used once, sorted
    std::map<Label, int> uses;
    for (const auto& in : e.inputs)
      for (Label l : in) ++uses[l];
    for (Label l = kEllipsis; l < kEllipsis + ellipsisDims; ++l) e.output.push_back(l);
    for (const auto& [l, n] : uses)
      if (l < kEllipsis && n == 1) e.output.push_back(l);
  }
  for (const auto& in : e.inputs)
    for (size_t i = 0; i < in.size(); ++i)
      if (std::count(in.begin(), in.end(), in[i]) > 1)
        c.unsupported("a repeated label", "Einsum with a label repeated in one operand (a diagonal) is not supported");
  for (Label l : e.output) {
    bool found = false;
    for (const auto& in : e.inputs) found |= std::find(in.begin(), in.end(), l) != in.end();
    if (!found || std::count(e.output.begin(), e.output.end(), l) > 1)
      c.fail("an output label is not an input's, or is repeated");
  }
  return e;
}

bool has(const std::vector<Label>& labels, Label l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

/// An operand and the label of each of its dims.
struct Operand {
  ir::Value* value;
  std::vector<Label> labels;

  ir::Dim size(Label l) const {
    return value->type.shape[static_cast<size_t>(std::find(labels.begin(), labels.end(), l) - labels.begin())];
  }
};

/// `x` summed over the labels `keep` does not hold.
Operand sumOthers(NodeContext& c, Operand x, const std::function<bool(Label)>& keep) {
  std::vector<int64_t> dims;
  std::vector<Label> kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (keep(x.labels[d]))
      kept.push_back(x.labels[d]);
    else
      dims.push_back(static_cast<int64_t>(d));
  }
  if (dims.empty()) return x;
  return {c.op(OpId::Sum, {x.value}, reduceAttrs(dims, false)), kept};
}

/// `x` with its dims in the order of `order`.
Operand permuted(NodeContext& c, Operand x, const std::vector<Label>& order) {
  if (x.labels == order) return x;
  std::vector<int64_t> perm;
  for (Label l : order)
    perm.push_back(static_cast<int64_t>(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin()));
  return {c.op(OpId::Permute, {x.value}, oneAttr("dims", ir::Attribute::ofInts(perm))), order};
}

ir::Dim product(NodeContext& c, const Operand& x, const std::vector<Label>& labels) {
  ir::Shape sizes;
  for (Label l : labels) sizes.push_back(x.size(l));
  std::optional<ir::Dim> n = ir::numElements(sizes);
  if (!n) c.fail("sizes overflow");
  return *n;
}

void einsum(NodeContext& c) {
  const Equation e = parseEquation(c);
  std::vector<Operand> xs;
  for (size_t k = 0; k < e.inputs.size(); ++k) xs.push_back({c.required(k), e.inputs[k]});
  // Sum away what only one operand has and the output lacks.
  for (size_t k = 0; k < xs.size(); ++k)
    xs[k] = sumOthers(c, xs[k], [&](Label l) {
      if (has(e.output, l)) return true;
      for (size_t j = 0; j < xs.size(); ++j)
        if (j != k && has(xs[j].labels, l)) return true;
      return false;
    });
  if (xs.size() == 1) {
    c.setOutput(0, permuted(c, xs[0], e.output).value);
    return;
  }
  Operand a = xs[0], b = xs[1];
  needFloat(c, a.value);
  std::vector<Label> batch, contracted, aOwn, bOwn;
  for (Label l : e.output) {
    if (has(a.labels, l) && has(b.labels, l))
      batch.push_back(l);
    else if (has(a.labels, l))
      aOwn.push_back(l);
    else
      bOwn.push_back(l);
  }
  for (Label l : a.labels)
    if (has(b.labels, l) && !has(e.output, l)) contracted.push_back(l);
  for (Label l : a.labels)
    if (has(b.labels, l) && a.size(l) != b.size(l))
      c.unsupported("a broadcast label", fmt::format("Einsum whose operands' sizes of a label differ ({} and {}) "
                                                     "is not supported",
                                                     ir::toString(a.size(l)), ir::toString(b.size(l))));
  auto concat = [](std::vector<Label> x, const std::vector<Label>& y, const std::vector<Label>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  a = permuted(c, a, concat(batch, aOwn, contracted));
  b = permuted(c, b, concat(batch, contracted, bOwn));
  ir::Shape batchDims;
  for (Label l : batch) batchDims.push_back(a.size(l));
  const ir::Dim m = product(c, a, aOwn), k = product(c, a, contracted), n = product(c, b, bOwn);
  auto withBatch = [&](std::initializer_list<ir::Dim> dims) {
    ir::Shape s = batchDims;
    s.insert(s.end(), dims.begin(), dims.end());
    return s;
  };
  ir::Value* y = c.op(OpId::Matmul, {reshape(c, a.value, withBatch({m, k})), reshape(c, b.value, withBatch({k, n}))});
  ir::Shape full = batchDims;
  for (Label l : aOwn) full.push_back(a.size(l));
  for (Label l : bOwn) full.push_back(b.size(l));
  c.setOutput(0, permuted(c, {reshape(c, y, full), concat(batch, aOwn, bOwn)}, e.output).value);
}

const OpMapping kOps[] = {
    {"Einsum", einsum, {"equation"}},
};

}  // namespace

std::span<const OpMapping> einsumOps() { return kOps; }

}  // namespace graphc::frontend::onnximport
