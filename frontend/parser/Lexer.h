// Tokens of the .graph language. The lexer never fails: malformed input
// becomes an Error token whose text says what was wrong, and the parser
// reports it at the token's location.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/Diagnostics.h"

namespace graphc::frontend {

enum class Tok {
  Eof,
  Error,
  Ident,      // relu, f32, then, B, true
  ValueName,  // %x (text without '%')
  GraphName,  // @main (text without '@')
  Integer,    // 42, -1
  Float,      // 0.5, 1e-5, -inf, nan
  String,     // "tanh" (text unescaped)
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Equal,
  Arrow,
  Star,  // '*' in a symbolic size: 4*B
  Plus,  // '+' and '-' between the terms of a sum of sizes, (P+1), (S-T), where no number follows
  Minus,
  Less,  // '<' and '>' around a dense value: dense<f32[2], "0x...">
  Greater,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;
  int line = 1;
  int col = 1;
};

std::string_view describe(Tok t);

class Lexer {
 public:
  explicit Lexer(std::shared_ptr<const ir::SourceBuffer> buffer);
  Token next();
  ir::SourceLoc loc(const Token& t) const { return {buffer_, t.line, t.col}; }

 private:
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  char advance();
  void skipSpaceAndComments();
  Token number(Token t);
  Token string(Token t);

  std::shared_ptr<const ir::SourceBuffer> buffer_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_;
  int col_ = 1;
};

}  // namespace graphc::frontend
