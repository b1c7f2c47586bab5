#include "frontend/yaml_document.h"

#include <algorithm>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

namespace gxc {

// Builds a YamlDocument from yaml-cpp's events (or from a node tree walked in the same order).
// A list or map gets its index when it starts, so it precedes what it holds; its children are
// gathered on a stack while it is open and moved into one run of children_ when it ends.
class YamlBuilder : public YAML::EventHandler {
 public:
  explicit YamlBuilder(YamlDocument& document) : document_(document) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(YamlKind::Null, mark, "", anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor == 0 || anchor >= anchors_.size())
      throw YAML::ParserException(mark, "an alias names no anchor");
    uint32_t target = anchors_[anchor];
    // yaml-cpp's tree would hold a cycle here; a model has no use for one, and every reader
    // of the document would have to guard against it.
    for (const Open& open : open_)
      if (open.index == target)
        throw YAML::ParserException(mark, "an alias inside the list or map it names");
    attach(target);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    uint32_t index = add(YamlKind::Scalar, mark, tag, anchor);
    document_.nodes_[index].first = static_cast<uint32_t>(document_.scalars_.size());
    document_.scalars_.push_back(value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(YamlKind::Sequence, mark, tag, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(YamlKind::Map, mark, tag, anchor);
  }
  void OnMapEnd() override { close(); }

  // The same events from a tree in memory.
  void walk(const YAML::Node& node) {
    YAML::Mark mark = node.Mark();
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        OnScalar(mark, node.Tag(), 0, node.Scalar());
        return;
      case YAML::NodeType::Sequence:
        open(YamlKind::Sequence, mark, node.Tag(), 0);
        for (const YAML::Node& item : node) walk(item);
        close();
        return;
      case YAML::NodeType::Map:
        open(YamlKind::Map, mark, node.Tag(), 0);
        for (const auto& entry : node) {
          walk(entry.first);
          walk(entry.second);
        }
        close();
        return;
      default:  // null, or undefined: a value never assigned reads as null
        add(YamlKind::Null, mark, node.Tag(), 0);
        return;
    }
  }

 private:
  struct Open {
    uint32_t index;
    size_t firstPending;  // where its children start in pending_
  };

  uint32_t add(YamlKind kind, const YAML::Mark& mark, const std::string& tag,
               YAML::anchor_t anchor) {
    auto index = static_cast<uint32_t>(document_.nodes_.size());
    YamlDocument::Entry entry;
    entry.kind = kind;
    entry.tag = document_.tagIndex(tag);
    if (!mark.is_null()) entry.line = mark.line, entry.column = mark.column;
    document_.nodes_.push_back(entry);
    if (anchor != 0) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
      anchors_[anchor] = index;
    }
    attach(index);
    return index;
  }
  void attach(uint32_t index) {
    if (!open_.empty()) pending_.push_back(index);
  }
  void open(YamlKind kind, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
    uint32_t index = add(kind, mark, tag, anchor);
    open_.push_back({index, pending_.size()});
  }
  void close() {
    Open done = open_.back();
    open_.pop_back();
    YamlDocument::Entry& entry = document_.nodes_[done.index];
    entry.first = static_cast<uint32_t>(document_.children_.size());
    entry.count = static_cast<uint32_t>(pending_.size() - done.firstPending);
    document_.children_.insert(document_.children_.end(), pending_.begin() + done.firstPending,
                               pending_.end());
    pending_.resize(done.firstPending);
  }
  YamlDocument& document_;
  std::vector<Open> open_;
  std::vector<uint32_t> pending_;
  std::vector<uint32_t> anchors_;  // by yaml-cpp's anchor number (from 1)
};

uint32_t YamlDocument::tagIndex(const std::string& tag) {
  auto found = std::find(tags_.begin(), tags_.end(), tag);
  if (found != tags_.end()) return static_cast<uint32_t>(found - tags_.begin());
  tags_.push_back(tag);
  return static_cast<uint32_t>(tags_.size() - 1);
}

std::unique_ptr<YamlDocument> YamlDocument::parseWhole(const std::string& text) {
  auto document = std::make_unique<YamlDocument>();
  // About one node per 8 bytes of a flow-style model, one scalar in two nodes' worth.
  document->nodes_.reserve(text.size() / 8);
  document->children_.reserve(text.size() / 8);
  document->scalars_.reserve(text.size() / 8);
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  YamlBuilder builder(*document);
  parser.HandleNextDocument(builder);
  return document;
}

std::unique_ptr<YamlDocument> YamlDocument::fromNode(const YAML::Node& node) {
  auto document = std::make_unique<YamlDocument>();
  YamlBuilder builder(*document);
  builder.walk(node);
  return document;
}

namespace {

const std::string kEmpty;

}  // namespace

bool YamlNode::isNull() const {
  return document_ && document_->nodes_[index_].kind == YamlKind::Null;
}
bool YamlNode::isScalar() const {
  return document_ && document_->nodes_[index_].kind == YamlKind::Scalar;
}
bool YamlNode::isSequence() const {
  return document_ && document_->nodes_[index_].kind == YamlKind::Sequence;
}
bool YamlNode::isMap() const {
  return document_ && document_->nodes_[index_].kind == YamlKind::Map;
}

const std::string& YamlNode::scalar() const {
  if (!isScalar()) return kEmpty;
  return document_->scalars_[document_->nodes_[index_].first];
}

const std::string& YamlNode::tag() const {
  if (!document_) return kEmpty;
  return document_->tags_[document_->nodes_[index_].tag];
}

bool YamlNode::hasPosition() const { return document_ && document_->nodes_[index_].line >= 0; }
int YamlNode::line() const { return document_ ? document_->nodes_[index_].line : -1; }
int YamlNode::column() const { return document_ ? document_->nodes_[index_].column : -1; }

size_t YamlNode::size() const {
  if (isSequence()) return document_->nodes_[index_].count;
  if (isMap()) return document_->nodes_[index_].count / 2;
  return 0;
}

YamlNode YamlNode::operator[](std::string_view key) const {
  if (!isMap()) return {};
  const YamlDocument::Entry& map = document_->nodes_[index_];
  for (uint32_t at = map.first; at < map.first + map.count; at += 2) {
    YamlNode candidate = document_->node(document_->children_[at]);
    if (candidate.isScalar() && candidate.scalar() == key)
      return document_->node(document_->children_[at + 1]);
  }
  return {};
}

YamlNode YamlNode::operator[](size_t index) const {
  if (!isSequence() || index >= size()) return {};
  return document_->node(document_->children_[document_->nodes_[index_].first + index]);
}

YamlNode::Iterator YamlNode::begin() const {
  if (!isSequence() && !isMap()) return Iterator(nullptr, 0, 0, 1);
  const YamlDocument::Entry& entry = document_->nodes_[index_];
  return Iterator(document_, entry.first, entry.first + entry.count, isMap() ? 2 : 1);
}

YamlNode::Iterator YamlNode::end() const {
  if (!isSequence() && !isMap()) return Iterator(nullptr, 0, 0, 1);
  const YamlDocument::Entry& entry = document_->nodes_[index_];
  uint32_t end = entry.first + entry.count;
  return Iterator(document_, end, end, isMap() ? 2 : 1);
}

void YamlNode::Iterator::load() {
  if (position_ >= end_) return;
  const std::vector<uint32_t>& children = document_->children_;
  if (step_ == 2) {
    YamlNode key = document_->node(children[position_]);
    current_ = Item(key, key, document_->node(children[position_ + 1]));
  } else {
    current_ = Item(document_->node(children[position_]), {}, {});
  }
}

}  // namespace gxc
