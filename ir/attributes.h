// Typed op attributes: a sorted name -> value map, so printing is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gxc {

using AttrValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;

enum class AttrKind { Bool, Int, Float, String, IntList };
AttrKind attrKind(const AttrValue& value);
const char* attrKindName(AttrKind kind);

class Attrs {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }
  const std::map<std::string, AttrValue>& all() const { return values_; }
  bool empty() const { return values_.empty(); }

  // Typed getters; the verifier has already checked kinds, so a mismatch is a gxc bug.
  bool getBool(const std::string& name, bool fallback) const;
  int64_t getInt(const std::string& name, int64_t fallback) const;
  double getFloat(const std::string& name, double fallback) const;  // accepts an int too
  std::string getString(const std::string& name, const std::string& fallback) const;
  std::optional<std::vector<int64_t>> getIntList(const std::string& name) const;
  // An int or a list of ints (reduction axes); nullopt when absent.
  std::optional<std::vector<int64_t>> getAxes(const std::string& name) const;

  bool operator==(const Attrs&) const = default;

 private:
  std::map<std::string, AttrValue> values_;
};

// Textual form used by the IR printer: `true`, `-3`, `1.5`, `"text"`, `[1, -1]`.
std::string attrValueString(const AttrValue& value);
// Shortest text that reads back as the same double, always with a '.', 'e', "inf" or "nan".
std::string floatString(double value);

}  // namespace gxc
