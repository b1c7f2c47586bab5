// Typed op attributes: name -> value, sorted by name, so printing is deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gxc {

using AttrValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;

enum class AttrKind { Bool, Int, Float, String, IntList };
AttrKind attrKind(const AttrValue& value);
const char* attrKindName(AttrKind kind);

class Attrs {
 public:
  // An op has a few attributes (at most a dozen), kept sorted by name in one vector: a lookup
  // compares a few names side by side in memory, and a copy is one allocation. A std::map made
  // a node per attribute, and its lookups were a tenth of compiling a 100,000-layer chain.
  using Entry = std::pair<std::string, AttrValue>;
  using Entries = std::vector<Entry>;

  // Keys are looked up as they are written (`has("stream")`), with no string made per call.
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // The value of `name`, or null when absent.
  const AttrValue* find(std::string_view name) const;
  void set(std::string_view name, AttrValue value);
  void erase(std::string_view name);
  const Entries& all() const { return values_; }  // sorted by name
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
  Entries values_;
};

// Textual form used by the IR printer: `true`, `-3`, `1.5`, `"text"`, `[1, -1]`.
std::string attrValueString(const AttrValue& value);
void appendAttrValue(std::string& out, const AttrValue& value);  // the same, appended
// A string attribute's text: in double quotes, `"`, `\` and newlines escaped.
void appendQuoted(std::string& out, std::string_view text);
// Shortest text that reads back as the same double, always with a '.', 'e', "inf" or "nan".
std::string floatString(double value);

}  // namespace gxc
