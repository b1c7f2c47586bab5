#include "ir/lexer.h"

#include <cctype>

namespace gxc {
namespace {
bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}
}  // namespace

Lexer::Lexer(std::string_view text, std::string fileName)
    : text_(text), fileName_(std::move(fileName)) {}

void Lexer::fail(const std::string& message) const { modelError(here(), "{}", message); }

char Lexer::peek(size_t ahead) const {
  return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
}

void Lexer::advance() {
  if (text_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    if (std::isspace(static_cast<unsigned char>(peek()))) {
      advance();
    } else if (peek() == '/' && peek(1) == '/') {  // lit RUN and CHECK lines
      while (pos_ < text_.size() && peek() != '\n') advance();
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token token;
  token.loc = here();
  if (pos_ >= text_.size()) return token;
  char c = peek();
  if (c == '%' || c == '@') {
    token.kind = c == '%' ? TokenKind::Percent : TokenKind::At;
    advance();
    // Devices read as one token: @cuda:0, @?.
    while (isNameChar(peek()) ||
           (token.kind == TokenKind::At && (peek() == ':' || peek() == '?'))) {
      token.text += peek();
      advance();
    }
    if (token.text.empty()) fail(std::string("expected a name after '") + c + "'");
    return token;
  }
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    token.kind = TokenKind::Identifier;
    while (isNameChar(peek())) {
      token.text += peek();
      advance();
    }
    return token;
  }
  if (std::isdigit(static_cast<unsigned char>(c)) || (c == '-' && std::isdigit(peek(1)))) {
    token.kind = TokenKind::Integer;
    auto take = [&] { token.text += peek(), advance(); };
    if (c == '-') take();
    while (std::isdigit(static_cast<unsigned char>(peek()))) take();
    if (peek() == '.') {
      token.kind = TokenKind::Float;
      take();
      while (std::isdigit(static_cast<unsigned char>(peek()))) take();
    }
    if (peek() == 'e' || peek() == 'E') {
      token.kind = TokenKind::Float;
      take();
      if (peek() == '+' || peek() == '-') take();
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("malformed number");
      while (std::isdigit(static_cast<unsigned char>(peek()))) take();
    }
    return token;
  }
  if (c == '-' && peek(1) == 'i') {  // -inf
    advance();
    token = next();
    if (token.text != "inf") fail("expected a number after '-'");
    token.text = "-inf";
    return token;
  }
  if (c == '"') {
    token.kind = TokenKind::String;
    advance();
    while (peek() != '"') {
      if (pos_ >= text_.size() || peek() == '\n') fail("unterminated string");
      if (peek() == '\\') {
        advance();
        char escaped = peek();
        if (escaped != '"' && escaped != '\\' && escaped != 'n') fail("unknown escape in string");
        token.text += escaped == 'n' ? '\n' : escaped;
      } else {
        token.text += peek();
      }
      advance();
    }
    advance();
    return token;
  }
  token.kind = TokenKind::Punct;
  if (c == '-' && peek(1) == '>') {
    token.text = "->";
    advance();
    advance();
    return token;
  }
  if (std::string_view("(){}[],:=?").find(c) == std::string_view::npos)
    fail(std::string("unexpected character '") + c + "'");
  token.text = std::string(1, c);
  advance();
  return token;
}

}  // namespace gxc
