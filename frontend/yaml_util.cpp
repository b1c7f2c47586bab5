#include "frontend/yaml_util.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/ranges.h>

namespace gxc {

const char* nodeKindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

SourceLoc YamlReader::loc(const YAML::Node& node) const {
  YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {file_, 1, 1};
  return {file_, mark.line + 1, mark.column + 1};
}

void YamlReader::requireMap(const YAML::Node& node, std::string_view what) const {
  if (!node.IsMap()) fail(node, "{} must be a map, got {}", what, nodeKindName(node));
}

void YamlReader::requireSequence(const YAML::Node& node, std::string_view what) const {
  if (!node.IsSequence()) fail(node, "{} must be a list, got {}", what, nodeKindName(node));
}

void YamlReader::checkKeys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                           std::string_view what) const {
  checkKeys(map, std::vector<std::string>(allowed.begin(), allowed.end()), what);
}

void YamlReader::checkKeys(const YAML::Node& map, const std::vector<std::string>& allowed,
                           std::string_view what) const {
  checkUniqueKeys(map, what);
  for (const auto& entry : map) {
    std::string key = entry.first.Scalar();
    bool known = false;
    for (const std::string& name : allowed) known |= name == key;
    if (!known)
      fail(entry.first, "unknown key '{}' in {} (expected one of: {})", key, what,
           fmt::join(allowed, ", "));
  }
}

void YamlReader::checkUniqueKeys(const YAML::Node& map, std::string_view what) const {
  std::map<std::string, SourceLoc> seen;
  for (const auto& entry : map) {
    std::string key = scalar(entry.first, "a key");
    auto [first, inserted] = seen.emplace(key, loc(entry.first));
    if (!inserted)
      fail(entry.first, "{} has key '{}' twice (first at line {})", what, key, first->second.line);
  }
}

YAML::Node YamlReader::required(const YAML::Node& map, const char* key,
                                std::string_view what) const {
  YAML::Node node = map[key];
  if (!node.IsDefined() || node.IsNull()) {
    // A key present with no value points at its value's place; an absent key at the map.
    fail(node.IsDefined() ? node : map, "{} needs '{}'", what, key);
  }
  return node;
}

std::string YamlReader::scalar(const YAML::Node& node, std::string_view what) const {
  if (!node.IsScalar()) fail(node, "{} must be a scalar, got {}", what, nodeKindName(node));
  return node.Scalar();
}

int64_t YamlReader::integer(const YAML::Node& node, std::string_view what) const {
  std::string text = scalar(node, what);
  int64_t value = 0;
  const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range)
    fail(node, "{} is {}, which does not fit in 64 bits", what, text);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    fail(node, "{} must be an integer, got '{}'", what, text);
  return value;
}

double YamlReader::number(const YAML::Node& node, std::string_view what) const {
  std::string text = scalar(node, what);
  // YAML spells infinities .inf and -.inf; anything else must be a plain number.
  if (text == ".inf" || text == "+.inf") return INFINITY;
  if (text == "-.inf") return -INFINITY;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isnan(value) ||
      std::isalpha(static_cast<unsigned char>(text[0])))
    fail(node, "{} must be a number, got '{}'", what, text);
  return value;
}

bool YamlReader::boolean(const YAML::Node& node, std::string_view what) const {
  std::string text = scalar(node, what);
  if (text == "true") return true;
  if (text == "false") return false;
  fail(node, "{} must be true or false, got '{}'", what, text);
}

std::string YamlReader::name(const YAML::Node& node, std::string_view what) const {
  std::string text = scalar(node, what);
  bool valid =
      !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_');
  for (char c : text)
    valid &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  if (!valid) fail(node, "{} '{}' is not a valid name ([A-Za-z_][A-Za-z0-9_.-]*)", what, text);
  return text;
}

}  // namespace gxc
