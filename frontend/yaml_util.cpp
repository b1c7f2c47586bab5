#include "frontend/yaml_util.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/ranges.h>

#include "ir/did_you_mean.h"

namespace gxc {

const char* nodeKindName(const YamlNode& node) {
  if (node.isMap()) return "a map";
  if (node.isSequence()) return "a list";
  if (node.isScalar()) return "a scalar";
  return "nothing";
}

SourceLoc YamlReader::loc(const YamlNode& node) const {
  if (!node.hasPosition()) return unmarkedAt_.file.empty() ? SourceLoc{file_, 1, 1} : unmarkedAt_;
  return {file_, node.line() + 1, node.column() + 1};
}

void YamlReader::requireMap(const YamlNode& node, std::string_view what) const {
  if (!node.isMap()) fail(node, "{} must be a map, got {}", what, nodeKindName(node));
}

void YamlReader::requireSequence(const YamlNode& node, std::string_view what) const {
  if (!node.isSequence()) fail(node, "{} must be a list, got {}", what, nodeKindName(node));
}

void YamlReader::checkKeys(const YamlNode& map, std::span<const std::string_view> allowed,
                           std::string_view what) const {
  checkUniqueKeys(map, what);
  for (const auto& entry : map) {
    const std::string& key = entry.first.scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string hint = didYouMean(key, allowed);
      // PyTorch's `dim` is gxc's `axis`: too far apart for spelling to find.
      if (key == "dim" && std::find(allowed.begin(), allowed.end(), "axis") != allowed.end())
        hint = " (did you mean 'axis'?)";
      if (hint.empty()) hint = fmt::format(" (expected one of: {})", fmt::join(allowed, ", "));
      fail(entry.first, "unknown key '{}' in {}{}", key, what, hint);
    }
  }
}

// Maps of a few keys (a layer's) are checked pairwise; those whose keys are names (inputs,
// params: thousands in a big model) through a hash set.
void YamlReader::checkUniqueKeys(const YamlNode& map, std::string_view what) const {
  constexpr size_t kPairwise = 16;
  std::vector<std::pair<std::string_view, YamlNode>> small;
  std::unordered_map<std::string_view, YamlNode> large;
  for (const auto& entry : map) {
    if (!entry.first.isScalar()) scalar(entry.first, "a key");  // fails, saying why
    const std::string& key = entry.first.scalar();  // the document's own: it outlives the loop
    std::optional<YamlNode> first;
    if (small.size() < kPairwise) {
      for (const auto& [seen, node] : small)
        if (seen == key) first = node;
      if (!first) small.emplace_back(key, entry.first);
      if (small.size() == kPairwise) large.insert(small.begin(), small.end());
    } else if (auto [it, inserted] = large.emplace(key, entry.first); !inserted) {
      first = it->second;
    }
    if (first)
      fail(entry.first, "{} has key '{}' twice (first at line {})", what, key, loc(*first).line);
  }
}

YamlNode YamlReader::required(const YamlNode& map, const char* key, std::string_view what) const {
  YamlNode node = map[key];
  // A key present with no value points at its value's place; an absent key at the map.
  if (!node || node.isNull()) fail(node ? node : map, "{} needs '{}'", what, key);
  return node;
}

std::string YamlReader::scalar(const YamlNode& node, std::string_view what) const {
  if (!node.isScalar()) fail(node, "{} must be a scalar, got {}", what, nodeKindName(node));
  return node.scalar();
}

int64_t YamlReader::integer(const YamlNode& node, std::string_view what) const {
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

double YamlReader::number(const YamlNode& node, std::string_view what) const {
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

bool YamlReader::boolean(const YamlNode& node, std::string_view what) const {
  std::string text = scalar(node, what);
  if (text == "true") return true;
  if (text == "false") return false;
  fail(node, "{} must be true or false, got '{}'", what, text);
}

std::string YamlReader::name(const YamlNode& node, std::string_view what) const {
  std::string text = scalar(node, what);
  // A leading digit is allowed: nn.Sequential's params are named 0.weight, 1.bias.
  bool valid =
      !text.empty() && (std::isalnum(static_cast<unsigned char>(text[0])) || text[0] == '_');
  for (char c : text)
    valid &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  if (!valid) fail(node, "{} '{}' is not a valid name ([A-Za-z0-9_][A-Za-z0-9_.-]*)", what, text);
  return text;
}

}  // namespace gxc
