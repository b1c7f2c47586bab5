// Small helpers for reading a model file (frontend/yaml_document.h): positions as SourceLoc,
// strict key checks and strictly typed scalars, each failing with FILE:LINE:COL.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "frontend/yaml_document.h"
#include "ir/diagnostic.h"

namespace gxc {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  // Where the node is in the file; a node made in memory (no position) is located where
  // locateUnmarkedAt() last said, or at the file's start.
  SourceLoc loc(const YamlNode& node) const;
  void locateUnmarkedAt(SourceLoc at) { unmarkedAt_ = std::move(at); }
  template <typename... Args>
  [[noreturn]] void fail(const YamlNode& node, fmt::format_string<Args...> format,
                         Args&&... args) const {
    modelError(loc(node), format, std::forward<Args>(args)...);
  }

  // `what` names the node in messages, e.g. "layer 'h'" or "the model".
  void requireMap(const YamlNode& node, std::string_view what) const;
  void requireSequence(const YamlNode& node, std::string_view what) const;
  // Unknown and repeated keys are errors, pointing at the key.
  void checkKeys(const YamlNode& map, std::initializer_list<std::string_view> allowed,
                 std::string_view what) const {
    checkKeys(map, std::span<const std::string_view>(allowed.begin(), allowed.size()), what);
  }
  void checkKeys(const YamlNode& map, std::span<const std::string_view> allowed,
                 std::string_view what) const;
  // For maps whose keys are names (inputs, params): a repeated key is an error.
  void checkUniqueKeys(const YamlNode& map, std::string_view what) const;
  YamlNode required(const YamlNode& map, const char* key, std::string_view what) const;

  std::string scalar(const YamlNode& node, std::string_view what) const;
  int64_t integer(const YamlNode& node, std::string_view what) const;
  double number(const YamlNode& node, std::string_view what) const;
  bool boolean(const YamlNode& node, std::string_view what) const;
  // A name as the model format spells them: [A-Za-z0-9_][A-Za-z0-9_.-]*
  std::string name(const YamlNode& node, std::string_view what) const;

 private:
  std::string file_;
  SourceLoc unmarkedAt_;
};

// "a map", "a list", "a scalar", "nothing": for messages about the wrong kind of node.
const char* nodeKindName(const YamlNode& node);

}  // namespace gxc
