#include "ir/attributes.h"

#include <charconv>
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
const T* lookup(const Attrs::Map& values, std::string_view name) {
  auto it = values.find(name);
  if (it == values.end()) return nullptr;
  const T* typed = std::get_if<T>(&it->second);
  GXC_CHECK(typed != nullptr, "attribute '{}' has kind {}", name,
            attrKindName(attrKind(it->second)));
  return typed;
}
}  // namespace

void Attrs::set(std::string_view name, AttrValue value) {
  if (auto it = values_.find(name); it != values_.end())
    it->second = std::move(value);
  else
    values_.emplace(std::string(name), std::move(value));
}

void Attrs::erase(std::string_view name) {
  if (auto it = values_.find(name); it != values_.end()) values_.erase(it);
}

bool Attrs::getBool(std::string_view name, bool fallback) const {
  const bool* v = lookup<bool>(values_, name);
  return v ? *v : fallback;
}

int64_t Attrs::getInt(std::string_view name, int64_t fallback) const {
  const int64_t* v = lookup<int64_t>(values_, name);
  return v ? *v : fallback;
}

double Attrs::getFloat(std::string_view name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return *lookup<double>(values_, name);
}

std::string Attrs::getString(std::string_view name, std::string_view fallback) const {
  const std::string* v = lookup<std::string>(values_, name);
  return v ? *v : std::string(fallback);
}

const std::string& Attrs::getStringOrEmpty(std::string_view name) const {
  static const std::string kEmpty;
  const std::string* v = lookup<std::string>(values_, name);
  return v ? *v : kEmpty;
}

std::optional<std::vector<int64_t>> Attrs::getIntList(std::string_view name) const {
  const std::vector<int64_t>* v = lookup<std::vector<int64_t>>(values_, name);
  if (!v) return std::nullopt;
  return *v;
}

std::optional<std::vector<int64_t>> Attrs::getAxes(std::string_view name) const {
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

void appendInteger(std::string& out, int64_t value) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

}  // namespace

void appendQuoted(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}

std::string attrValueString(const AttrValue& value) {
  std::string out;
  appendAttrValue(out, value);
  return out;
}

void appendAttrValue(std::string& out, const AttrValue& value) {
  struct Visitor {
    std::string& out;
    void operator()(bool v) const { out += v ? "true" : "false"; }
    void operator()(int64_t v) const { appendInteger(out, v); }
    void operator()(double v) const { out += floatString(v); }
    void operator()(const std::string& v) const { appendQuoted(out, v); }
    void operator()(const std::vector<int64_t>& v) const {
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) out += ", ";
        appendInteger(out, v[i]);
      }
      out += ']';
    }
  };
  std::visit(Visitor{out}, value);
}

}  // namespace gxc
