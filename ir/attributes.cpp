#include "ir/attributes.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/diagnostic.h"

namespace gxc {

AttrKind attrKind(const AttrValue& value) { return static_cast<AttrKind>(value.index()); }

const char* attrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::Bool:
      return "bool";
    case AttrKind::Int:
      return "int";
    case AttrKind::Float:
      return "float";
    case AttrKind::String:
      return "string";
    case AttrKind::IntList:
      return "int list";
  }
  return "?";
}

namespace {
template <typename T>
const T* lookup(const std::map<std::string, AttrValue>& values, const std::string& name) {
  auto it = values.find(name);
  if (it == values.end()) return nullptr;
  const T* typed = std::get_if<T>(&it->second);
  GXC_CHECK(typed != nullptr, "attribute '{}' has kind {}", name,
            attrKindName(attrKind(it->second)));
  return typed;
}
}  // namespace

bool Attrs::getBool(const std::string& name, bool fallback) const {
  const bool* v = lookup<bool>(values_, name);
  return v ? *v : fallback;
}

int64_t Attrs::getInt(const std::string& name, int64_t fallback) const {
  const int64_t* v = lookup<int64_t>(values_, name);
  return v ? *v : fallback;
}

double Attrs::getFloat(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return *lookup<double>(values_, name);
}

std::string Attrs::getString(const std::string& name, const std::string& fallback) const {
  const std::string* v = lookup<std::string>(values_, name);
  return v ? *v : fallback;
}

std::optional<std::vector<int64_t>> Attrs::getIntList(const std::string& name) const {
  const std::vector<int64_t>* v = lookup<std::vector<int64_t>>(values_, name);
  if (!v) return std::nullopt;
  return *v;
}

std::optional<std::vector<int64_t>> Attrs::getAxes(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return std::vector<int64_t>{*i};
  return getIntList(name);
}

std::string floatString(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

namespace {
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string attrValueString(const AttrValue& value) {
  struct Visitor {
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return floatString(v); }
    std::string operator()(const std::string& v) const { return quoted(v); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return fmt::format("[{}]", fmt::join(v, ", "));
    }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace gxc
