// Small helpers for reading a model file with yaml-cpp: positions as SourceLoc, strict key
// checks and strictly typed scalars, each failing with FILE:LINE:COL.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "ir/diagnostic.h"

namespace gxc {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  // Where the node is in the file; a node made in memory (no position) is located where
  // locateUnmarkedAt() last said, or at the file's start.
  SourceLoc loc(const YAML::Node& node) const;
  void locateUnmarkedAt(SourceLoc at) { unmarkedAt_ = std::move(at); }
  template <typename... Args>
  [[noreturn]] void fail(const YAML::Node& node, fmt::format_string<Args...> format,
                         Args&&... args) const {
    modelError(loc(node), format, std::forward<Args>(args)...);
  }

  // `what` names the node in messages, e.g. "layer 'h'" or "the model".
  void requireMap(const YAML::Node& node, std::string_view what) const;
  void requireSequence(const YAML::Node& node, std::string_view what) const;
  // Unknown and repeated keys are errors, pointing at the key.
  void checkKeys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                 std::string_view what) const {
    checkKeys(map, std::span<const std::string_view>(allowed.begin(), allowed.size()), what);
  }
  void checkKeys(const YAML::Node& map, std::span<const std::string_view> allowed,
                 std::string_view what) const;
  // For maps whose keys are names (inputs, params): a repeated key is an error.
  void checkUniqueKeys(const YAML::Node& map, std::string_view what) const;
  YAML::Node required(const YAML::Node& map, const char* key, std::string_view what) const;

  std::string scalar(const YAML::Node& node, std::string_view what) const;
  int64_t integer(const YAML::Node& node, std::string_view what) const;
  double number(const YAML::Node& node, std::string_view what) const;
  bool boolean(const YAML::Node& node, std::string_view what) const;
  // A name as the model format spells them: [A-Za-z_][A-Za-z0-9_.-]*
  std::string name(const YAML::Node& node, std::string_view what) const;

 private:
  std::string file_;
  SourceLoc unmarkedAt_;
};

// "a map", "a list", "a scalar", "nothing": for messages about the wrong kind of node.
const char* nodeKindName(const YAML::Node& node);

// map[key] when `map` is a map holding `key`. yaml-cpp's own lookup converts every key it
// passes to a string; this compares the scalars in place, which matters at 100,000 layers.
std::optional<YAML::Node> findKey(const YAML::Node& map, std::string_view key);

}  // namespace gxc
