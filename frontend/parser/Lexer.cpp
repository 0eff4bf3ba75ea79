#include "frontend/parser/Lexer.h"

#include <cctype>

namespace graphc::frontend {

std::string_view describe(Tok t) {
  switch (t) {
    case Tok::Eof: return "end of file";
    case Tok::Error: return "invalid token";
    case Tok::Ident: return "identifier";
    case Tok::ValueName: return "value name";
    case Tok::GraphName: return "graph name";
    case Tok::Integer: return "integer";
    case Tok::Float: return "float";
    case Tok::String: return "string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Equal: return "'='";
    case Tok::Arrow: return "'->'";
    case Tok::Star: return "'*'";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Less: return "'<'";
    case Tok::Greater: return "'>'";
  }
  return "?";
}

namespace {
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

/// Whether `word` starts at `at` in `text` and is not the head of a longer name.
bool wordAt(std::string_view text, size_t at, std::string_view word) {
  return text.substr(at, word.size()) == word &&
         (at + word.size() >= text.size() || !isIdentChar(text[at + word.size()]));
}
}  // namespace

Lexer::Lexer(std::shared_ptr<const ir::SourceBuffer> buffer)
    : buffer_(std::move(buffer)), text_(buffer_->text), line_(buffer_->firstLine) {}

char Lexer::advance() {
  char c = text_[pos_++];
  if (c == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  return c;
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < text_.size() && peek() != '\n') advance();
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token t;
  t.line = line_;
  t.col = col_;
  if (pos_ >= text_.size()) return t;
  char c = peek();
  auto single = [&](Tok k) {
    advance();
    t.kind = k;
    return t;
  };
  switch (c) {
    case '(': return single(Tok::LParen);
    case ')': return single(Tok::RParen);
    case '{': return single(Tok::LBrace);
    case '}': return single(Tok::RBrace);
    case '[': return single(Tok::LBracket);
    case ']': return single(Tok::RBracket);
    case ',': return single(Tok::Comma);
    case ':': return single(Tok::Colon);
    case '=': return single(Tok::Equal);
    case '*': return single(Tok::Star);
    case '<': return single(Tok::Less);
    case '>': return single(Tok::Greater);
    case '"': return string(t);
    default: break;
  }
  if (c == '-' && peek(1) == '>') {
    advance();
    advance();
    t.kind = Tok::Arrow;
    return t;
  }
  if (c == '%' || c == '@') {
    advance();
    t.kind = c == '%' ? Tok::ValueName : Tok::GraphName;
    while (isIdentChar(peek())) t.text += advance();
    if (t.text.empty()) {
      t.kind = Tok::Error;
      t.text = std::string("expected a name after '") + c + "'";
    }
    return t;
  }
  if ((c == '+' || c == '-') && !std::isdigit(static_cast<unsigned char>(peek(1))) && peek(1) != '.' &&
      !wordAt(text_, pos_ + 1, "inf") && !wordAt(text_, pos_ + 1, "nan"))
    return single(c == '+' ? Tok::Plus : Tok::Minus);
  if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' ||
      (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1)))))
    return number(t);
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    while (isIdentChar(peek())) t.text += advance();
    t.kind = (t.text == "inf" || t.text == "nan") ? Tok::Float : Tok::Ident;
    return t;
  }
  advance();
  t.kind = Tok::Error;
  if (std::isprint(static_cast<unsigned char>(c)))
    t.text = std::string("unexpected character '") + c + "'";
  else
    t.text = "unexpected byte " + std::to_string(static_cast<unsigned char>(c));
  return t;
}

Token Lexer::number(Token t) {
  std::string s;
  if (peek() == '-' || peek() == '+') s += advance();
  if (std::isalpha(static_cast<unsigned char>(peek()))) {  // -inf, +inf, -nan
    std::string word;
    while (std::isalpha(static_cast<unsigned char>(peek()))) word += advance();
    t.kind = (word == "inf" || word == "nan") ? Tok::Float : Tok::Error;
    t.text = t.kind == Tok::Float ? s + word : "malformed number '" + s + word + "'";
    return t;
  }
  bool isFloat = false, digits = false;
  while (std::isdigit(static_cast<unsigned char>(peek()))) s += advance(), digits = true;
  if (peek() == '.') {
    isFloat = true;
    s += advance();
    while (std::isdigit(static_cast<unsigned char>(peek()))) s += advance(), digits = true;
  }
  if (digits && (peek() == 'e' || peek() == 'E')) {
    isFloat = true;
    s += advance();
    if (peek() == '-' || peek() == '+') s += advance();
    bool expDigits = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) s += advance(), expDigits = true;
    if (!expDigits) digits = false;
  }
  // A number runs into no letters: `12ab` or `1.5.2` is one malformed token.
  while (isIdentChar(peek())) s += advance(), digits = false;
  if (!digits) {
    t.kind = Tok::Error;
    t.text = "malformed number '" + s + "'";
    return t;
  }
  t.kind = isFloat ? Tok::Float : Tok::Integer;
  t.text = s;
  return t;
}

Token Lexer::string(Token t) {
  advance();  // opening quote
  std::string s;
  while (true) {
    if (pos_ >= text_.size() || peek() == '\n') {
      t.kind = Tok::Error;
      t.text = "unterminated string";
      return t;
    }
    char c = advance();
    if (c == '"') break;
    if (c == '\\') {
      if (pos_ >= text_.size()) continue;
      char e = advance();
      switch (e) {
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case '"': s += '"'; break;
        case '\\': s += '\\'; break;
        case 'x': {
          auto hex = [](char h) { return std::isxdigit(static_cast<unsigned char>(h)); };
          if (hex(peek()) && hex(peek(1))) {
            std::string digits{advance(), advance()};
            s += static_cast<char>(std::stoi(digits, nullptr, 16));
            break;
          }
          [[fallthrough]];
        }
        default:
          t.kind = Tok::Error;
          t.text = std::string("unknown escape '\\") + e + "' in string";
          return t;
      }
    } else {
      s += c;
    }
  }
  t.kind = Tok::String;
  t.text = s;
  return t;
}

}  // namespace graphc::frontend
