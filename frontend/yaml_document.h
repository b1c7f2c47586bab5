// A YAML document as the frontend reads it: yaml-cpp's parser (its scanner, its errors with
// line and column, its nesting limit) feeding one flat array of nodes, instead of yaml-cpp's
// node tree. That tree costs a heap node, a shared pointer and a std::set entry per scalar,
// and every lookup or iteration copies shared pointers: at 100,000 layers, building and
// freeing it took over a third of `gxc compile`. Here a node is an index, a map's entries and
// a list's items are one contiguous run of indices, and the whole document is freed at once.
//
// Read-only. YamlNode is a handle (document, index) that must not outlive its document; the
// frontend reads a document from start to end within one call, so none does.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace gxc {

class YamlDocument;

enum class YamlKind : uint8_t { Null, Scalar, Sequence, Map };

class YamlNode {
 public:
  YamlNode() = default;  // undefined: what looking up an absent key gives

  bool isDefined() const { return document_ != nullptr; }
  explicit operator bool() const { return isDefined(); }
  // An undefined node is none of these.
  bool isNull() const;
  bool isScalar() const;
  bool isSequence() const;
  bool isMap() const;

  // The scalar's text; empty for any other node.
  const std::string& scalar() const;
  // yaml-cpp's tag: "?" for a plain scalar, "!" for a quoted one, or the tag written.
  const std::string& tag() const;
  // 0-based, as yaml-cpp's marks; false for a node made in memory (no place in a file).
  bool hasPosition() const;
  int line() const;
  int column() const;

  // Items of a list, entries of a map; 0 for anything else.
  size_t size() const;
  // The node's place in its document: equal for two handles of one node (an alias and its
  // anchor), different for two nodes.
  uint32_t id() const { return index_; }
  // The value of the first entry whose key is the scalar `key`; undefined when absent or
  // when this is not a map.
  YamlNode operator[](std::string_view key) const;
  // The list's item; undefined past its end or when this is not a list.
  YamlNode operator[](size_t index) const;

  // Iterating a list gives its items; iterating a map gives its entries, each with `first`
  // (the key) and `second` (the value), in the order of the file.
  class Item;
  class Iterator;
  Iterator begin() const;
  Iterator end() const;

 private:
  friend class YamlDocument;
  YamlNode(const YamlDocument* document, uint32_t index) : document_(document), index_(index) {}

  const YamlDocument* document_ = nullptr;
  uint32_t index_ = 0;
};

// What iterating a node yields: for a list, the item itself; for a map, `first` and `second`.
class YamlNode::Item : public YamlNode {
 public:
  YamlNode first, second;

 private:
  friend class YamlNode::Iterator;
  Item(YamlNode item, YamlNode key, YamlNode value) : YamlNode(item), first(key), second(value) {}
  Item() = default;
};

class YamlNode::Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Item;
  using difference_type = std::ptrdiff_t;
  using pointer = const Item*;
  using reference = Item;

  // By value: `const auto& entry = *map.begin()` outlives the iterator.
  Item operator*() const { return current_; }
  const Item* operator->() const { return &current_; }
  Iterator& operator++() {
    position_ += step_;
    load();
    return *this;
  }
  bool operator==(const Iterator& other) const { return position_ == other.position_; }

 private:
  friend class YamlNode;
  // Over the document's children from `position` to `end`, one item (a list) or one key and
  // its value (a map) at a time.
  Iterator(const YamlDocument* document, uint32_t position, uint32_t end, uint32_t step)
      : document_(document), position_(position), end_(end), step_(step) {
    load();
  }
  void load();

  const YamlDocument* document_ = nullptr;
  uint32_t position_ = 0, end_ = 0, step_ = 1;
  Item current_;
};

class YamlDocument {
 public:
  // Reads the first document of `text`, throwing what YAML::Load throws on a mistake
  // (YAML::ParserException, YAML::DeepRecursion), with its mark. Text with no document gives
  // a null root.
  // A text of kMinBytesToReadInPieces or more (yaml_pieces.h) is read as parseInParts reads
  // it, a piece per thread that OpenMP would run (OMP_NUM_THREADS), where it can be cut.
  static std::unique_ptr<YamlDocument> parse(const std::string& text);
  // What parse reads, with the top-level `layers:` list read in up to `parts` pieces at once,
  // on as many threads (the cuts: yaml_pieces.h): the same document node for node, positions
  // included; or null where the text is not cut, or a piece does not read as its part of the
  // whole (a piece refused, or not a map ending or beginning with the `layers:` list), and
  // then parse reads the text whole, with whatever error that gives.
  static std::unique_ptr<YamlDocument> parseInParts(const std::string& text, int parts);
  // The same structure from a tree built in memory with yaml-cpp (the ONNX importer's), each
  // node keeping the position it has, if any.
  static std::unique_ptr<YamlDocument> fromNode(const YAML::Node& node);

  YamlNode root() const { return nodes_.empty() ? YamlNode() : YamlNode(this, 0); }

 private:
  friend class YamlNode;
  friend class YamlNode::Iterator;
  friend class YamlBuilder;

  struct Entry {
    YamlKind kind = YamlKind::Null;
    uint32_t tag = 0;   // into tags_
    int32_t line = -1;  // -1: made in memory
    int32_t column = -1;
    uint32_t first = 0;  // a scalar: into scalars_; a list or map: into children_
    uint32_t count = 0;  // a list: items; a map: keys and values, so twice its entries
  };

  YamlNode node(uint32_t index) const { return YamlNode(this, index); }
  static std::unique_ptr<YamlDocument> parseWhole(const std::string& text);
  // Whether the root map's key number `entry` is the plain scalar `key` at column 0 of `line`.
  bool rootEntryIs(uint32_t entry, std::string_view key, int line) const;
  // The node of the root map's value number `entry`.
  uint32_t rootValue(uint32_t entry) const;
  // Appends the nodes of a later piece of the same text, its lines moved by `lineShift`, and
  // the items of its `layers:` list to `items`; for the last piece, the root's entries after
  // that list to `rootEntries`.
  void appendPiece(YamlDocument&& piece, int lineShift, std::vector<uint32_t>& items,
                   std::vector<uint32_t>* rootEntries);
  uint32_t tagIndex(const std::string& tag);

  std::vector<Entry> nodes_;
  std::vector<uint32_t> children_;
  std::vector<std::string> scalars_;
  std::vector<std::string> tags_;  // each distinct tag once: "?", "!", a few more
};

}  // namespace gxc
