#include "ir/parser.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/ranges.h>

#include "ir/did_you_mean.h"
#include "ir/lexer.h"
#include "ir/verifier.h"

namespace gxc {
namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& fileName, TextPositions* positions)
      : lexer_(text, fileName), fileName_(fileName), positions_(positions) {
    token_ = lexer_.next();
  }

  std::unique_ptr<Graph> parse();

 private:
  template <typename... Args>
  [[noreturn]] void fail(const SourceLoc& loc, fmt::format_string<Args...> format, Args&&... args) {
    modelError(loc, format, std::forward<Args>(args)...);
  }
  Token take() {
    Token current = token_;
    token_ = lexer_.next();
    return current;
  }
  bool isPunct(const char* text) const {
    return token_.kind == TokenKind::Punct && token_.text == text;
  }
  void expectPunct(const char* text) {
    if (!isPunct(text)) fail(token_.loc, "expected '{}'", text);
    take();
  }
  Token expect(TokenKind kind, const char* what) {
    if (token_.kind != kind) fail(token_.loc, "expected {}", what);
    return take();
  }
  int64_t parseInteger(const Token& token) {
    int64_t value = 0;
    auto [end, ec] =
        std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
    if (ec != std::errc() || end != token.text.data() + token.text.size())
      fail(token.loc, "integer '{}' does not fit in 64 bits", token.text);
    return value;
  }

  TensorType parseType();
  AttrValue parseAttrValue();
  Attrs parseAttrs();
  SourceLoc parseOptionalLoc();
  Value* lookup(const Token& name);
  void parseOp();

  Lexer lexer_;
  std::string fileName_;
  TextPositions* positions_;  // null: the caller does not want them
  Token token_;
  std::unique_ptr<Graph> graph_;
};

TensorType Parser::parseType() {
  TensorType type;
  if (isPunct("?")) {
    take();
  } else {
    Token dtype = expect(TokenKind::Identifier, "a type such as f32[2,3] or ?");
    auto parsed = parseDType(dtype.text);
    if (!parsed) fail(dtype.loc, "unknown dtype '{}'{}", dtype.text, unknownDTypeHint(dtype.text));
    type = TensorType::of(*parsed, {});
    expectPunct("[");
    while (!isPunct("]")) {
      if (!type.shape.empty()) expectPunct(",");
      Token dim = expect(TokenKind::Integer, "a dimension");
      type.shape.push_back(parseInteger(dim));
      if (type.shape.back() < 0) fail(dim.loc, "negative dimension {}", dim.text);
    }
    take();
    if (!checkedNumel(type.shape))
      fail(dtype.loc, "shape {} has more elements than fit in 64 bits", shapeString(type.shape));
  }
  Token device = expect(TokenKind::At, "a device such as @cpu, @cuda:0 or @?");
  if (device.text != "?") {
    auto parsed = parseDevice(device.text);
    if (!parsed) fail(device.loc, "unknown device '@{}'", device.text);
    type.device = *parsed;
  }
  return type;
}

AttrValue Parser::parseAttrValue() {
  Token token = take();
  switch (token.kind) {
    case TokenKind::Integer:
      return parseInteger(token);
    case TokenKind::Float:
      return std::stod(token.text);
    case TokenKind::String:
      return token.text;
    case TokenKind::Identifier:
      if (token.text == "true" || token.text == "false") return token.text == "true";
      if (token.text == "inf") return INFINITY;
      if (token.text == "nan") return NAN;
      break;
    case TokenKind::Punct:
      if (token.text == "[") {
        std::vector<int64_t> list;
        while (!isPunct("]")) {
          if (!list.empty()) expectPunct(",");
          list.push_back(parseInteger(expect(TokenKind::Integer, "an integer")));
        }
        take();
        return list;
      }
      break;
    default:
      break;
  }
  if (token.text == "-inf") return -INFINITY;
  fail(token.loc, "expected an attribute value");
}

Attrs Parser::parseAttrs() {
  Attrs attrs;
  if (!isPunct("{")) return attrs;
  take();
  while (!isPunct("}")) {
    if (!attrs.empty()) expectPunct(",");
    Token name = expect(TokenKind::Identifier, "an attribute name");
    if (attrs.has(name.text)) fail(name.loc, "attribute '{}' given twice", name.text);
    expectPunct("=");
    attrs.set(name.text, parseAttrValue());
  }
  take();
  return attrs;
}

SourceLoc Parser::parseOptionalLoc() {
  if (token_.kind != TokenKind::Identifier || token_.text != "loc") return {};
  take();
  expectPunct("(");
  SourceLoc loc;
  loc.file = expect(TokenKind::String, "a file name").text;
  expectPunct(":");
  if (token_.kind == TokenKind::Identifier && token_.text == "node") {  // an ONNX node
    take();
    loc.node = static_cast<int>(parseInteger(expect(TokenKind::Integer, "a node index")));
    loc.nodeName = expect(TokenKind::String, "a node name").text;
    expectPunct(")");
    return loc;
  }
  loc.line = static_cast<int>(parseInteger(expect(TokenKind::Integer, "a line")));
  expectPunct(":");
  loc.col = static_cast<int>(parseInteger(expect(TokenKind::Integer, "a column")));
  expectPunct(")");
  return loc;
}

Value* Parser::lookup(const Token& name) {
  Value* value = graph_->find(name.text);
  if (!value) fail(name.loc, "use of undefined value %{}", name.text);
  return value;
}

void Parser::parseOp() {
  Token result = expect(TokenKind::Percent, "%name = op ... or return");
  if (graph_->find(result.text)) fail(result.loc, "%{} is defined twice", result.text);
  expectPunct("=");
  Token kindToken = expect(TokenKind::Identifier, "an op name");
  auto kind = parseOpKind(kindToken.text);
  if (!kind)
    fail(kindToken.loc, "unknown op '{}'{}", kindToken.text, unknownOpHint(kindToken.text));
  std::vector<Value*> operands;
  while (token_.kind == TokenKind::Percent) {
    operands.push_back(lookup(take()));
    if (!isPunct(",")) break;
    take();
  }
  Attrs attrs = parseAttrs();
  expectPunct(":");
  SourceLoc typeLoc = token_.loc;
  TensorType type = parseType();
  if (*kind == OpKind::Copy) {  // TYPE @SOURCE -> @DESTINATION
    expectPunct("->");
    Token destination = expect(TokenKind::At, "the destination device");
    auto parsed = parseDevice(destination.text);
    if (!parsed) fail(destination.loc, "unknown device '@{}'", destination.text);
    if (operands.size() == 1 && operands[0]->type.device != type.device)
      fail(typeLoc, "copy from @{} but %{} is on @{}", type.device.str(), operands[0]->name,
           operands[0]->type.device.str());
    type.device = *parsed;
  }
  SourceLoc loc = parseOptionalLoc();
  Op* op = graph_->appendOp(*kind, std::move(operands), result.text, type, std::move(attrs), loc);
  if (positions_) (*positions_)[result.text] = result.loc;
  if (auto problem = schemaProblem(*op)) fail(kindToken.loc, "{}", *problem);
  if (*kind == OpKind::Param && !type.known)
    fail(kindToken.loc, "param %{} needs a dtype and shape", result.text);
}

std::unique_ptr<Graph> Parser::parse() {
  Token keyword = expect(TokenKind::Identifier, "'graph'");
  if (keyword.text != "graph") fail(keyword.loc, "expected 'graph'");
  graph_ = std::make_unique<Graph>(expect(TokenKind::At, "@name").text);
  expectPunct("(");
  while (!isPunct(")")) {
    if (!graph_->inputs().empty()) expectPunct(",");
    Token name = expect(TokenKind::Percent, "%input");
    if (graph_->find(name.text)) fail(name.loc, "%{} is defined twice", name.text);
    expectPunct(":");
    TensorType type = parseType();
    if (!type.known) fail(name.loc, "input %{} needs a dtype and shape", name.text);
    graph_->addInput(name.text, type, parseOptionalLoc());
    if (positions_) (*positions_)[name.text] = name.loc;
  }
  take();
  expectPunct("->");
  expectPunct("(");
  std::vector<Token> outputNames;
  while (!isPunct(")")) {
    if (!outputNames.empty()) expectPunct(",");
    outputNames.push_back(expect(TokenKind::Identifier, "an output name"));
  }
  take();
  if (token_.kind == TokenKind::Identifier && token_.text == "attributes") {
    take();
    graph_->attrs() = parseAttrs();
  }
  expectPunct("{");
  while (!(token_.kind == TokenKind::Identifier && token_.text == "return")) parseOp();
  Token returnToken = take();
  std::vector<Token> returned;
  while (token_.kind == TokenKind::Percent) {
    returned.push_back(take());
    if (!isPunct(",")) break;
    take();
  }
  if (returned.size() != outputNames.size())
    fail(returnToken.loc, "return gives {} values for {} outputs", returned.size(),
         outputNames.size());
  for (size_t i = 0; i < returned.size(); ++i)
    graph_->addOutput(outputNames[i].text, lookup(returned[i]));
  expectPunct("}");
  if (token_.kind != TokenKind::End) fail(token_.loc, "expected the end of the file");
  return std::move(graph_);
}

}  // namespace

std::unique_ptr<Graph> parseGraph(const std::string& text, const std::string& fileName,
                                  TextPositions* positions) {
  return Parser(text, fileName, positions).parse();
}

std::unique_ptr<Graph> parseGraphFile(const std::string& path, TextPositions* positions) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Model, {path, 0, 0}, "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  return parseGraph(text.str(), path, positions);
}

}  // namespace gxc
