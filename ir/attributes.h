// Typed op attributes: a sorted name -> value map, so printing is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gxc {

using AttrValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;

enum class AttrKind { Bool, Int, Float, String, IntList };
AttrKind attrKind(const AttrValue& value);
const char* attrKindName(AttrKind kind);

class Attrs {
 public:
  // Keys are looked up as they are written (`has("stream")`), with no string made per call.
  using Map = std::map<std::string, AttrValue, std::less<>>;

  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  void set(std::string_view name, AttrValue value);
  void erase(std::string_view name);
  const Map& all() const { return values_; }
  bool empty() const { return values_.empty(); }

  // Typed getters; the verifier has already checked kinds, so a mismatch is a gxc bug.
  bool getBool(std::string_view name, bool fallback) const;
  int64_t getInt(std::string_view name, int64_t fallback) const;
  double getFloat(std::string_view name, double fallback) const;  // accepts an int too
  std::string getString(std::string_view name, std::string_view fallback) const;
  // The string attribute, or "" when absent, without a copy: kernel names, which several
  // passes read for every op.
  const std::string& getStringOrEmpty(std::string_view name) const;
  std::optional<std::vector<int64_t>> getIntList(std::string_view name) const;
  // An int or a list of ints (reduction axes); nullopt when absent.
  std::optional<std::vector<int64_t>> getAxes(std::string_view name) const;

  bool operator==(const Attrs&) const = default;

 private:
  Map values_;
};

// Textual form used by the IR printer: `true`, `-3`, `1.5`, `"text"`, `[1, -1]`.
std::string attrValueString(const AttrValue& value);
void appendAttrValue(std::string& out, const AttrValue& value);  // the same, appended
// A string attribute's text: in double quotes, `"`, `\` and newlines escaped.
void appendQuoted(std::string& out, std::string_view text);
// Shortest text that reads back as the same double, always with a '.', 'e', "inf" or "nan".
std::string floatString(double value);

}  // namespace gxc
