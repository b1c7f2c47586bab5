// Tokens of the textual IR.
#pragma once

#include <string>
#include <string_view>

#include "ir/diagnostic.h"

namespace gxc {

enum class TokenKind {
  End,
  Percent,     // %name
  At,          // @name, @cpu, @cuda:0, @?
  Identifier,  // graph, f32, true, names of outputs
  Integer,
  Float,
  String,  // "text", unescaped
  Punct,   // ( ) { } [ ] , : = ? and ->
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // without the % or @ sigil; the unescaped contents of a string
  SourceLoc loc;
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string fileName);
  Token next();

 private:
  [[noreturn]] void fail(const std::string& message) const;
  void skipSpaceAndComments();
  char peek(size_t ahead = 0) const;
  SourceLoc here() const { return {fileName_, line_, col_}; }
  void advance();

  std::string_view text_;
  std::string fileName_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace gxc
