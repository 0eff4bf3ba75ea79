// A recursive-descent parser for the .graph language (docs/language.md):
//
//   graph @name(%p: TYPE, ...) -> (TYPE, ...) { statement* return %v, ... }
//   statement := %r[, %r2] = op(operand, ...) {attr = value, ...} label(params) { ... } ... : TYPE, ...
//
// Names are resolved per region; regions are isolated, so a name found only
// in an enclosing region is reported as such. Numeric literal operands
// (`mul(%x, 0.5)`) become scalar `constant` nodes of the other operand's
// dtype. Every node's types come from the op's type rule (ir/ShapeRules.cpp)
// and are checked against the written ones.
#include "frontend/parser/Parser.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "frontend/parser/Lexer.h"
#include "ir/SizeMath.h"
#include "ir/Verifier.h"
#include "runtime/FileIO.h"

namespace graphc::frontend {

using namespace graphc::ir;

namespace {

constexpr int kMaxNesting = 64;  // regions and nested lists; deeper input is rejected

/// Thrown to unwind after the first diagnostic; never escapes parse().
struct ParseFailure {};

struct Scope {
  struct Entry {
    Value* value;
    SourceLoc loc;
  };
  std::unordered_map<std::string, Entry> names;
  const Scope* enclosing = nullptr;  // only for diagnosing outer-value uses
};

/// An operand as written: a value, or a numeric literal still without a dtype.
struct OperandRef {
  Value* value = nullptr;
  Token literal;
  SourceLoc loc;
};

class Parser {
 public:
  Parser(std::shared_ptr<const SourceBuffer> buffer, DiagnosticEngine& diags)
      : lexer_(buffer), buffer_(std::move(buffer)), diags_(diags) {
    tok_ = lexer_.next();
  }

  std::unique_ptr<Module> module() {
    auto m = std::make_unique<Module>();
    m->source = buffer_;
    std::unordered_map<std::string, SourceLoc> graphNames;
    while (tok_.kind != Tok::Eof) {
      auto g = graph();
      auto [it, fresh] = graphNames.emplace(g->name, g->loc);
      if (!fresh) {
        diags_.error(g->loc, fmt::format("redefinition of graph @{}", g->name)).note(it->second, "first defined here");
        throw ParseFailure{};
      }
      m->graphs.push_back(std::move(g));
    }
    if (m->graphs.empty()) fail(loc(), "expected at least one 'graph'");
    return m;
  }

 private:
  // ---- token helpers ----

  SourceLoc loc() const { return lexer_.loc(tok_); }
  SourceLoc loc(const Token& t) const { return lexer_.loc(t); }

  [[noreturn]] void fail(const SourceLoc& where, std::string message) {
    diags_.error(where, std::move(message));
    throw ParseFailure{};
  }

  [[noreturn]] void unexpected(std::string_view expected) {
    if (tok_.kind == Tok::Error) fail(loc(), tok_.text);
    if (tok_.kind == Tok::Eof) fail(loc(), fmt::format("unexpected end of file, expected {}", expected));
    std::string what = tok_.text.empty() ? std::string(describe(tok_.kind))
                                         : fmt::format("{} '{}{}'", describe(tok_.kind),
                                                       tok_.kind == Tok::ValueName ? "%" : "", tok_.text);
    fail(loc(), fmt::format("expected {}, got {}", expected, what));
  }

  Token take() {
    Token t = std::move(tok_);
    tok_ = lexer_.next();
    return t;
  }

  Token expect(Tok kind, std::string_view what = {}) {
    if (tok_.kind != kind) unexpected(what.empty() ? describe(kind) : what);
    return take();
  }

  bool accept(Tok kind) {
    if (tok_.kind != kind) return false;
    take();
    return true;
  }

  bool atKeyword(std::string_view word) const { return tok_.kind == Tok::Ident && tok_.text == word; }

  // ---- types ----

  TensorType type() {
    Token dtypeTok = expect(Tok::Ident, "a type such as f32[4]");
    auto dtype = parseDType(dtypeTok.text);
    if (!dtype)
      fail(loc(dtypeTok),
           fmt::format("unknown dtype '{}' (expected f16, bf16, f32, f64, i8, i32, i64 or bool)", dtypeTok.text));
    TensorType t{*dtype, {}};
    expect(Tok::LBracket, "'[' after the dtype");
    int64_t elements = 1;
    if (tok_.kind != Tok::RBracket) {
      do {
        Token first = tok_;
        Dim d = dim();
        if (d.isStatic()) {
          std::optional<int64_t> product = ir::mulSizes(elements, d.size);
          if (!product) fail(loc(first), "tensor type has too many elements");
          elements = *product;
        }
        t.shape.push_back(d);
      } while (accept(Tok::Comma));
    }
    expect(Tok::RBracket, "',' or ']' in the shape");
    return t;
  }

  /// A size: an integer, a symbolic NAME, a product of them (`4*B`, `B*S`),
  /// or with sums in parentheses as factors (`(P+1)`, `2*(S-1)`).
  Dim dim() {
    if (tok_.kind != Tok::Integer && tok_.kind != Tok::Ident && tok_.kind != Tok::LParen)
      unexpected("a size (an integer, a symbolic NAME, a product such as 4*B, or a sum such as (P+1))");
    return dimFrom(take());
  }

  /// The rest of a size whose first token, `first`, was taken: its text is
  /// gathered token by token and read by ir::parseDim, the one reader of
  /// sizes, which also makes it canonical.
  Dim dimFrom(const Token& first) {
    std::string text;
    int depth = 0;
    std::function<void(const Token&)> factor = [&](const Token& t) {
      if (t.kind == Tok::LParen) {  // a sum: its first term's first factor, after a sign
        text += '(';
        ++depth;
        if (tok_.kind == Tok::Plus || tok_.kind == Tok::Minus) text += take().kind == Tok::Plus ? '+' : '-';
        factor(take());
        return;
      }
      if (t.kind == Tok::Integer && depth == 0 && integer(t) < 0)
        fail(loc(t), fmt::format("size {} is negative", t.text));
      if (t.kind != Tok::Integer && t.kind != Tok::Ident) {
        tok_ = t;  // report at the token that is not a factor
        unexpected("a size factor (an integer, a NAME or '(')");
      }
      text += t.text;
    };
    factor(first);
    for (;;) {
      if (depth > 0 && (tok_.kind == Tok::Plus || tok_.kind == Tok::Minus)) {
        text += take().kind == Tok::Plus ? '+' : '-';
        factor(take());
      } else if (depth > 0 && tok_.kind == Tok::Integer && (tok_.text[0] == '+' || tok_.text[0] == '-')) {
        text += take().text;  // a signed constant term: (P-1)
      } else if (depth > 0 && tok_.kind == Tok::RParen) {
        take();
        text += ')';
        --depth;
      } else if (accept(Tok::Star)) {
        text += '*';
        factor(take());
      } else if (depth > 0 && (tok_.kind == Tok::Integer || tok_.kind == Tok::Ident || tok_.kind == Tok::LParen)) {
        unexpected("'+', '-', '*' or ')' in a sum of sizes");
      } else {
        break;
      }
      if (text.size() > 4096) fail(loc(first), "size is too long");
    }
    if (depth > 0) unexpected("')' closing a sum of sizes");
    std::optional<Dim> d = ir::parseDim(text);
    if (!d) fail(loc(first), fmt::format("size '{}' is negative or overflows int64", text));
    return *d;
  }

  std::vector<TensorType> typeList() {
    std::vector<TensorType> types;
    bool parens = accept(Tok::LParen);
    if (!(parens && tok_.kind == Tok::RParen)) {
      do types.push_back(type());
      while (accept(Tok::Comma));
    }
    if (parens) expect(Tok::RParen, "',' or ')' after the types");
    return types;
  }

  // ---- numbers and attributes ----

  int64_t integer(const Token& t) {
    int64_t v = 0;
    const char* begin = t.text.data() + (t.text[0] == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(begin, t.text.data() + t.text.size(), v);
    if (ec != std::errc() || end != t.text.data() + t.text.size())
      fail(loc(t), fmt::format("integer '{}' is out of range", t.text));
    return v;
  }

  double floating(const Token& t) {
    std::string s = t.text;
    bool negative = !s.empty() && s[0] == '-';
    std::string_view body = std::string_view(s).substr(!s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0);
    if (body == "inf") return negative ? -INFINITY : INFINITY;
    if (body == "nan") return NAN;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) fail(loc(t), fmt::format("malformed number '{}'", t.text));
    if (errno == ERANGE && std::isinf(v)) fail(loc(t), fmt::format("float '{}' is out of range", t.text));
    return v;
  }

  /// A product in an attribute (a reshape's `shape = [4*B, 16]`): its
  /// canonical text as a symbol, or the integer it comes to.
  static Attribute sizeAttribute(const Dim& d) {
    return d.isStatic() ? Attribute::ofInt(d.size) : Attribute::ofSymbol(ir::toString(d));
  }

  /// `dense<f32[2, 2], "0x0000803F...">`: a constant's elements as the hex
  /// of their little-endian bytes (after `dense`).
  Attribute dense(const Token& keyword) {
    expect(Tok::Less, "'<' after 'dense'");
    const TensorType t = type();
    if (!t.isStatic()) fail(loc(keyword), "a dense value needs a static shape");
    expect(Tok::Comma, "',' after the dense value's type");
    if (tok_.kind == Tok::Ident && tok_.text == "__elided__")
      fail(loc(),
           "this dense value was elided when the IR was printed (print it with --print-weights to get text "
           "that parses)");
    const Token hex = expect(Tok::String, "the dense value's bytes as a \"0x...\" string");
    expect(Tok::Greater, "'>' after the dense value");
    std::vector<int64_t> sizes;
    for (const Dim& d : t.shape) sizes.push_back(d.size);
    if (hex.text.size() < 2 || hex.text.compare(0, 2, "0x") != 0)
      fail(loc(hex), "a dense value's bytes are written \"0x\" then two hex digits a byte");
    // Compared by division: the type's byte count may not fit in 64 bits.
    const uint64_t digits = hex.text.size() - 2, width = static_cast<uint64_t>(dtypeSize(t.dtype));
    const uint64_t nbytes = digits / 2;
    if (digits % 2 || nbytes % width || nbytes / width != static_cast<uint64_t>(*t.staticNumElements()))
      fail(loc(hex), fmt::format("a dense {} holds {} elements of {} bytes but {} hex digits were given", toString(t),
                                 *t.staticNumElements(), width, digits));
    auto bytes = std::make_shared<std::vector<std::byte>>(nbytes);
    auto digit = [&](char c) -> unsigned {
      if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
      if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
      if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
      fail(loc(hex), fmt::format("'{}' is not a hex digit in a dense value", c));
    };
    for (size_t k = 0; k < nbytes; ++k)
      (*bytes)[k] = static_cast<std::byte>(digit(hex.text[2 + 2 * k]) << 4 | digit(hex.text[3 + 2 * k]));
    const std::byte* data = bytes->data();
    return Attribute::ofDense(t.dtype, sizes, std::move(bytes), data, nbytes);
  }

  Attribute attrValue(int depth) {
    if (depth > kMaxNesting) fail(loc(), "attribute value is nested too deeply");
    switch (tok_.kind) {
      case Tok::Integer: {
        Token t = take();
        if (tok_.kind == Tok::Star) return sizeAttribute(dimFrom(t));
        return Attribute::ofInt(integer(t));
      }
      case Tok::Float: {
        Token t = take();
        return Attribute::ofFloat(floating(t));
      }
      case Tok::String: return Attribute::ofString(take().text);
      case Tok::Ident: {
        Token t = take();
        if (t.text == "dense" && tok_.kind == Tok::Less) return dense(t);
        if (tok_.kind == Tok::Star) return sizeAttribute(dimFrom(t));
        if (t.text == "true" || t.text == "false") return Attribute::ofBool(t.text == "true");
        if (auto d = parseDType(t.text)) return Attribute::ofDType(*d);
        return Attribute::ofSymbol(t.text);
      }
      case Tok::LParen: return sizeAttribute(dimFrom(take()));  // a sum of sizes: (P+1)
      case Tok::LBracket: {
        take();
        std::vector<Attribute> items;
        if (tok_.kind != Tok::RBracket) {
          do items.push_back(attrValue(depth + 1));
          while (accept(Tok::Comma));
        }
        expect(Tok::RBracket, "',' or ']' in the list");
        return Attribute::ofList(std::move(items));
      }
      default: unexpected("an attribute value");
    }
  }

  AttrMap attributes() {
    AttrMap attrs;
    expect(Tok::LBrace);
    if (tok_.kind != Tok::RBrace) {
      do {
        Token name = expect(Tok::Ident, "an attribute name");
        if (attrs.find(name.text)) fail(loc(name), fmt::format("attribute '{}' is given twice", name.text));
        expect(Tok::Equal, "'=' after the attribute name");
        attrs.set(name.text, attrValue(0));
      } while (accept(Tok::Comma));
    }
    expect(Tok::RBrace, "',' or '}' after the attribute");
    return attrs;
  }

  // ---- names ----

  void define(Scope& scope, const Token& nameTok, Value* v) {
    auto [it, fresh] = scope.names.emplace(nameTok.text, Scope::Entry{v, loc(nameTok)});
    if (fresh) return;
    diags_.error(loc(nameTok), fmt::format("redefinition of value '%{}'", nameTok.text))
        .note(it->second.loc, "previously defined here");
    throw ParseFailure{};
  }

  Value* lookup(const Scope& scope, const Token& nameTok) {
    if (auto it = scope.names.find(nameTok.text); it != scope.names.end()) return it->second.value;
    for (const Scope* outer = scope.enclosing; outer; outer = outer->enclosing)
      if (auto it = outer->names.find(nameTok.text); it != outer->names.end()) {
        diags_
            .error(loc(nameTok), fmt::format("value '%{}' is defined outside this region; regions are isolated, "
                                             "so pass it in as an operand",
                                             nameTok.text))
            .note(it->second.loc, "defined here");
        throw ParseFailure{};
      }
    fail(loc(nameTok), fmt::format("use of undefined value '%{}'", nameTok.text));
  }

  // ---- graphs, regions, statements ----

  void params(Region& region, Scope& scope) {
    expect(Tok::LParen, "'(' before the parameters");
    if (tok_.kind != Tok::RParen) {
      do {
        Token name = expect(Tok::ValueName, "a parameter such as %x");
        expect(Tok::Colon, "':' and a type after the parameter name");
        Value* v = region.addParam(type(), name.text, loc(name));
        define(scope, name, v);
      } while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "',' or ')' after the parameter");
  }

  /// Statements up to and including `return ...` and the closing brace.
  void regionBody(Region& region, Scope& scope, int depth) {
    expect(Tok::LBrace, "'{' to open the body");
    while (!atKeyword("return")) {
      if (tok_.kind == Tok::RBrace) fail(loc(), "missing 'return' at the end of the body");
      statement(region, scope, depth);
    }
    region.returnLoc = loc();
    take();
    if (tok_.kind == Tok::ValueName) {
      do {
        Token name = expect(Tok::ValueName, "a value to return");
        region.returns.push_back(lookup(scope, name));
      } while (accept(Tok::Comma));
    }
    expect(Tok::RBrace, "'}' after the return (return must be the last statement)");
  }

  /// A result type, and `updates %param` when the result updates that
  /// parameter in place (the verifier checks the pair).
  void resultType(Graph& g, const Scope& params) {
    g.resultTypes.push_back(type());
    if (!atKeyword("updates")) return;
    SourceLoc at = loc();
    take();
    Token name = expect(Tok::ValueName, "the parameter the result updates, such as %w");
    auto it = params.names.find(name.text);
    if (it == params.names.end()) fail(loc(name), fmt::format("'%{}' is not a parameter of @{}", name.text, g.name));
    g.inputUpdates.push_back({g.resultTypes.size() - 1, it->second.value, at});
  }

  std::unique_ptr<Graph> graph() {
    if (!atKeyword("graph")) unexpected("'graph'");
    SourceLoc graphLoc = loc();
    take();
    Token name = expect(Tok::GraphName, "a graph name such as @main");
    auto g = std::make_unique<Graph>(name.text);
    g->loc = graphLoc;
    Scope scope;
    params(g->body, scope);
    expect(Tok::Arrow, "'->' and the result types");
    SourceLoc resultsLoc = loc();
    if (accept(Tok::LParen)) {
      if (tok_.kind != Tok::RParen) {
        do resultType(*g, scope);
        while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "',' or ')' after the result type");
    } else {
      resultType(*g, scope);  // `-> f32[4]`: one result, parentheses optional
    }
    regionBody(g->body, scope, 0);
    if (g->body.returnTypes() != g->resultTypes) {
      diags_
          .error(g->body.returnLoc, fmt::format("@{} returns ({}) but its signature says ({})", g->name,
                                                toString(g->body.returnTypes()), toString(g->resultTypes)))
          .note(resultsLoc, "result types declared here");
      throw ParseFailure{};
    }
    return g;
  }

  /// The dtype a literal operand takes: that of the operand it pairs with.
  DType literalDType(OpId op, const std::vector<OperandRef>& operands, size_t k) {
    size_t first = op == OpId::Where ? 1 : 0;  // where's condition decides nothing
    if (op == OpId::Where && k == 0) fail(operands[k].loc, "the condition of 'where' cannot be a literal");
    for (size_t j = first; j < operands.size(); ++j)
      if (operands[j].value) return operands[j].value->type.dtype;
    fail(operands[k].loc, "cannot tell the dtype of this literal: no operand beside it is a value (use constant)");
  }

  Value* materializeLiteral(Region& region, const OperandRef& ref, DType dtype) {
    const Token& t = ref.literal;
    Attribute value;
    if (t.kind == Tok::Integer) {
      int64_t v = integer(t);
      value = isFloat(dtype) ? Attribute::ofFloat(static_cast<double>(v)) : Attribute::ofInt(v);
    } else {
      if (!isFloat(dtype))
        fail(ref.loc, fmt::format("float literal {} used with a {} operand", t.text, dtypeName(dtype)));
      value = Attribute::ofFloat(floating(t));
    }
    if (dtype == DType::Bool) fail(ref.loc, "a numeric literal cannot stand for a bool operand (use constant)");
    AttrMap attrs;
    attrs.set("value", value);
    Node* n = region.append(std::make_unique<Node>(OpId::Constant, std::vector<Value*>{}, attrs, ref.loc));
    n->addResult(TensorType{dtype, {}}, {}, ref.loc);
    return n->result();
  }

  void statement(Region& region, Scope& scope, int depth) {
    if (depth > kMaxNesting) fail(loc(), "regions are nested too deeply");
    std::vector<Token> names;
    do names.push_back(expect(Tok::ValueName, "a statement such as `%y = relu(%x)` or 'return'"));
    while (accept(Tok::Comma));
    expect(Tok::Equal, "'=' after the result names");
    Token opTok = expect(Tok::Ident, "an op name");
    SourceLoc opLoc = loc(opTok);
    auto opId = lookupOp(opTok.text);
    if (!opId) fail(opLoc, fmt::format("unknown op '{}'", opTok.text));
    const OpInfo& info = opInfo(*opId);

    // The operand list may be left out for ops without operands:
    // `constant {value = 1.0}` reads as `constant() {value = 1.0}`.
    std::vector<OperandRef> operands;
    if (tok_.kind != Tok::LBrace || info.maxOperands != 0) {
      expect(Tok::LParen, "'(' before the operands");
      if (tok_.kind != Tok::RParen) {
        do {
          OperandRef ref;
          ref.loc = loc();
          if (tok_.kind == Tok::ValueName)
            ref.value = lookup(scope, take());
          else if (tok_.kind == Tok::Integer || tok_.kind == Tok::Float)
            ref.literal = take();
          else
            unexpected("an operand (a %value or a number)");
          operands.push_back(std::move(ref));
        } while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "',' or ')' after the operand");
    }

    AttrMap attrs;
    if (tok_.kind == Tok::LBrace) attrs = attributes();

    // Regions are built into a detached node and attached after its operands.
    auto node = std::make_unique<Node>(*opId, std::vector<Value*>{}, std::move(attrs), opLoc);
    while (tok_.kind == Tok::Ident && !atKeyword("return")) {
      size_t index = node->regions().size();
      if (index >= info.regions.size() || tok_.text != info.regions[index]) {
        std::string want =
            index < info.regions.size() ? fmt::format("region '{}'", info.regions[index]) : "no further region";
        fail(loc(), fmt::format("'{}' expects {} here, got '{}'", info.name, want, tok_.text));
      }
      Region& r = node->addRegion(take().text);
      Scope inner;
      inner.enclosing = &scope;
      params(r, inner);
      regionBody(r, inner, depth + 1);
    }
    if (node->regions().size() < info.regions.size())
      fail(opLoc, fmt::format("'{}' needs region '{}'", info.name, info.regions[node->regions().size()]));

    std::vector<TensorType> declared;
    SourceLoc typesLoc;
    bool hasTypes = false;
    if (accept(Tok::Colon)) {
      typesLoc = loc();
      hasTypes = true;
      declared = typeList();
    }

    for (size_t k = 0; k < operands.size(); ++k)
      if (!operands[k].value)
        operands[k].value = materializeLiteral(region, operands[k], literalDType(*opId, operands, k));
    for (const OperandRef& ref : operands) node->operands.push_back(ref.value);

    TypeRuleResult inferred = inferTypes(*node, hasTypes ? &declared : nullptr);
    if (!inferred.ok()) fail(opLoc, inferred.error);

    if (names.size() != inferred.types.size())
      fail(loc(names.front()),
           fmt::format("'{}' produces {} result{} but {} name{} given", info.name, inferred.types.size(),
                       inferred.types.size() == 1 ? "" : "s", names.size(), names.size() == 1 ? " is" : "s are"));
    if (hasTypes && declared != inferred.types)
      fail(typesLoc, fmt::format("declared result type{} ({}) but '{}' gives ({})", declared.size() == 1 ? "" : "s",
                                 toString(declared), info.name, toString(inferred.types)));
    Node* n = region.append(std::move(node));
    for (size_t k = 0; k < names.size(); ++k)
      define(scope, names[k], n->addResult(inferred.types[k], names[k].text, loc(names[k])));
  }

  Lexer lexer_;
  std::shared_ptr<const SourceBuffer> buffer_;
  DiagnosticEngine& diags_;
  Token tok_;
};

}  // namespace

std::unique_ptr<Module> parse(std::shared_ptr<const SourceBuffer> buffer, DiagnosticEngine& diags) {
  std::unique_ptr<Module> m;
  try {
    m = Parser(buffer, diags).module();
  } catch (const ParseFailure&) {
    return nullptr;
  }
  if (!verify(*m, diags)) return nullptr;
  return m;
}

std::unique_ptr<Module> parseString(std::string text, DiagnosticEngine& diags, std::string name) {
  auto buffer = std::make_shared<SourceBuffer>();
  buffer->name = std::move(name);
  buffer->text = std::move(text);
  return parse(buffer, diags);
}

std::shared_ptr<const SourceBuffer> readSourceFile(const std::string& path, DiagnosticEngine& diags) {
  auto buffer = std::make_shared<SourceBuffer>();
  buffer->name = path;
  try {
    buffer->text = runtime::readFile(path);
  } catch (const Error& e) {
    diags.error({}, e.what());
    return nullptr;
  }
  return buffer;
}

std::unique_ptr<Module> parseFile(const std::string& path, DiagnosticEngine& diags) {
  auto buffer = readSourceFile(path, diags);
  return buffer ? parse(buffer, diags) : nullptr;
}

std::vector<std::shared_ptr<const SourceBuffer>> splitInputFile(const SourceBuffer& whole) {
  std::vector<std::shared_ptr<const SourceBuffer>> chunks;
  auto start = [&](int line) {
    auto b = std::make_shared<SourceBuffer>();
    b->name = whole.name;
    b->firstLine = line;
    return b;
  };
  auto current = start(whole.firstLine);
  std::istringstream lines(whole.text);
  std::string line;
  int number = whole.firstLine;
  while (std::getline(lines, line)) {
    std::string_view trimmed = line;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\r')) trimmed.remove_suffix(1);
    while (!trimmed.empty() && trimmed.front() == ' ') trimmed.remove_prefix(1);
    if (trimmed == "// -----") {
      chunks.push_back(current);
      current = start(number + 1);  // the next chunk starts below the separator
    } else {
      current->text += line;
      current->text += '\n';
    }
    ++number;
  }
  chunks.push_back(current);
  return chunks;
}

}  // namespace graphc::frontend
