#include "ir/attributes.h"

#include <algorithm>
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

const AttrValue* Attrs::find(std::string_view name) const {
  for (const Entry& entry : values_)
    if (entry.first == name) return &entry.second;
  return nullptr;
}

namespace {
template <typename T>
const T* lookup(const Attrs& attrs, std::string_view name) {
  const AttrValue* value = attrs.find(name);
  if (!value) return nullptr;
  const T* typed = std::get_if<T>(value);
  GXC_CHECK(typed != nullptr, "attribute '{}' has kind {}", name, attrKindName(attrKind(*value)));
  return typed;
}
}  // namespace

void Attrs::set(std::string_view name, AttrValue value) {
  auto at =
      std::lower_bound(values_.begin(), values_.end(), name,
                       [](const Entry& entry, std::string_view key) { return entry.first < key; });
  if (at != values_.end() && at->first == name)
    at->second = std::move(value);
  else
    values_.emplace(at, std::string(name), std::move(value));
}

void Attrs::erase(std::string_view name) {
  std::erase_if(values_, [name](const Entry& entry) { return entry.first == name; });
}

bool Attrs::getBool(std::string_view name, bool fallback) const {
  const bool* v = lookup<bool>(*this, name);
  return v ? *v : fallback;
}

int64_t Attrs::getInt(std::string_view name, int64_t fallback) const {
  const int64_t* v = lookup<int64_t>(*this, name);
  return v ? *v : fallback;
}

double Attrs::getFloat(std::string_view name, double fallback) const {
  const AttrValue* value = find(name);
  if (!value) return fallback;
  if (const int64_t* i = std::get_if<int64_t>(value)) return static_cast<double>(*i);
  return *lookup<double>(*this, name);
}

std::string Attrs::getString(std::string_view name, std::string_view fallback) const {
  const std::string* v = lookup<std::string>(*this, name);
  return v ? *v : std::string(fallback);
}

const std::string& Attrs::getStringOrEmpty(std::string_view name) const {
  static const std::string kEmpty;
  const std::string* v = lookup<std::string>(*this, name);
  return v ? *v : kEmpty;
}

std::optional<std::vector<int64_t>> Attrs::getIntList(std::string_view name) const {
  const std::vector<int64_t>* v = lookup<std::vector<int64_t>>(*this, name);
  if (!v) return std::nullopt;
  return *v;
}

std::optional<std::vector<int64_t>> Attrs::getAxes(std::string_view name) const {
  const AttrValue* value = find(name);
  if (!value) return std::nullopt;
  if (const int64_t* i = std::get_if<int64_t>(value)) return std::vector<int64_t>{*i};
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
