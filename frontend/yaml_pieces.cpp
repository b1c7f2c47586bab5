#include "frontend/yaml_pieces.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "frontend/yaml_document.h"

namespace gxc {
namespace {

// Each piece at least half of the least text cut, which yaml-cpp reads in some 20 ms: a
// thread that starts for less does not pay for itself.
constexpr size_t kMinBytesPerPiece = kMinBytesToReadInPieces / 2;
constexpr int kMaxPieces = 8;
// What each later piece starts with, so that it is a document whose root holds the list.
constexpr std::string_view kPieceHeader = "layers:\n";
// The key each piece but the last ends with, at column 0: what shows that the piece's list
// was closed by it (yaml-cpp's root map holds it as its last key).
constexpr std::string_view kPieceEnd = "gxc-piece-end";

int threadsToReadWith() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

size_t leadingSpaces(std::string_view line) {
  size_t spaces = line.find_first_not_of(' ');
  return spaces == std::string_view::npos ? line.size() : spaces;
}

// Blank, or a comment alone: neither opens nor closes a block.
bool blankOrComment(std::string_view line) {
  size_t spaces = leadingSpaces(line);
  return spaces == line.size() || line[spaces] == '#';
}

// `layers:` at column 0 with nothing after it but spaces or a comment.
bool isLayersKey(std::string_view line) {
  constexpr std::string_view kKey = "layers:";
  if (line.substr(0, kKey.size()) != kKey) return false;
  std::string_view rest = line.substr(kKey.size());
  size_t spaces = leadingSpaces(rest);
  return spaces == rest.size() || (spaces > 0 && rest[spaces] == '#');
}

bool refusedLine(std::string_view line) {
  return line.substr(0, 1) == "%" || line.substr(0, 3) == "---" || line.substr(0, 3) == "...";
}

}  // namespace

LayerListCuts findLayerListCuts(std::string_view text, int parts) {
  LayerListCuts cuts;
  if (parts < 2 || text.empty() || text[0] < 0x20 || text[0] > 0x7e ||
      text.find_first_of(std::string_view("\t\r\0", 3)) != std::string_view::npos)
    return cuts;

  enum class Seen { Nothing, LayersKey, Items } seen = Seen::Nothing;
  size_t indent = 0, line = 0;
  int next = 1;  // the share of the text the next cut follows
  for (size_t start = 0; start < text.size(); ++line) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view content = text.substr(start, end - start);
    const size_t offset = start;
    start = end + 1;
    if (refusedLine(content)) return {};
    if (seen == Seen::Nothing) {
      if (isLayersKey(content)) seen = Seen::LayersKey, cuts.layersLine = line;
      continue;
    }
    if (blankOrComment(content) || next == parts) continue;
    size_t spaces = leadingSpaces(content);
    std::string_view rest = content.substr(spaces);
    const bool item = rest == "-" || rest.substr(0, 2) == "- ";
    if (seen == Seen::LayersKey) {
      if (!item) return {};
      seen = Seen::Items, indent = spaces;
      continue;
    }
    if (spaces > indent) continue;  // inside an item
    if (spaces < indent || !item) {
      next = parts;  // the list has ended; the rest is only checked for what is refused
      continue;
    }
    if (rest.substr(0, 2) == "- " &&
        offset >= text.size() / static_cast<size_t>(parts) * static_cast<size_t>(next)) {
      cuts.offsets.push_back(offset);
      ++next;
    }
  }
  return cuts;
}

std::unique_ptr<YamlDocument> YamlDocument::parse(const std::string& text) {
  if (text.size() >= kMinBytesToReadInPieces) {
    const int parts = std::min(
        {threadsToReadWith(), kMaxPieces, static_cast<int>(text.size() / kMinBytesPerPiece)});
    if (std::unique_ptr<YamlDocument> document = parseInParts(text, parts)) return document;
  }
  return parseWhole(text);
}

std::unique_ptr<YamlDocument> YamlDocument::parseInParts(const std::string& text, int parts) {
  const LayerListCuts cuts = findLayerListCuts(text, parts);
  if (cuts.offsets.empty()) return nullptr;
  const int count = static_cast<int>(cuts.offsets.size()) + 1;
  std::vector<std::unique_ptr<YamlDocument>> pieces(static_cast<size_t>(count));
  // The whole text's lines in each piece, its header and end aside.
  std::vector<int> lines(static_cast<size_t>(count), 0);
  std::atomic<bool> refused = false;
#pragma omp parallel for num_threads(count) schedule(static, 1)
  for (int i = 0; i < count; ++i) {
    const auto at = static_cast<size_t>(i);
    const size_t begin = i == 0 ? 0 : cuts.offsets[at - 1];
    const size_t end = i + 1 == count ? text.size() : cuts.offsets[at];
    // Nothing may leave an OpenMP loop's body by an exception.
    try {
      std::string piece(i == 0 ? std::string_view() : kPieceHeader);
      piece.append(text, begin, end - begin);
      lines[at] = static_cast<int>(std::count(piece.begin(), piece.end(), '\n')) - (i > 0);
      if (i + 1 < count) {
        piece += kPieceEnd;
        piece += ": 0\n";
      }
      pieces[at] = parseWhole(piece);
    } catch (...) {  // the whole text is read again, and gives its own error, if any
      refused = true;
    }
  }
  if (refused) return nullptr;

  // What shows that each piece reads as its part of the whole (yaml_pieces.h): its list, and
  // (but for the last) the key after it that closes it.
  for (int i = 0; i < count; ++i) {
    const YamlDocument& piece = *pieces[static_cast<size_t>(i)];
    if (piece.nodes_.empty() || piece.nodes_[0].kind != YamlKind::Map) return nullptr;
    const uint32_t entries = piece.nodes_[0].count / 2;
    const bool last = i + 1 == count;
    // The list and the piece's end; a middle piece holds nothing else.
    if (entries < (last ? 1u : 2u) || (i > 0 && !last && entries != 2)) return nullptr;
    const uint32_t list = i == 0 ? entries - 2 : 0;
    const int endLine = lines[static_cast<size_t>(i)] + (i > 0);  // the end's, in the piece
    if (!piece.rootEntryIs(list, "layers", i == 0 ? static_cast<int>(cuts.layersLine) : 0) ||
        piece.nodes_[piece.rootValue(list)].kind != YamlKind::Sequence ||
        (!last && !piece.rootEntryIs(list + 1, kPieceEnd, endLine)))
      return nullptr;
    // A node yaml-cpp marks at the token after it (a null: `- # comment`, `key:`) is marked
    // at the piece's end here, where the whole text has the next piece's first item.
    if (!last && std::count_if(piece.nodes_.begin(), piece.nodes_.end(), [&](const Entry& node) {
                   return node.line >= endLine;
                 }) != 2)  // the end's key and value
      return nullptr;
  }

  YamlDocument& whole = *pieces[0];
  const uint32_t rootFirst = whole.nodes_[0].first;
  const uint32_t rootCount = whole.nodes_[0].count - 2;  // without the piece's end
  const uint32_t listIndex = whole.rootValue(rootCount / 2 - 1);
  const Entry listEntry = whole.nodes_[listIndex];
  std::vector<uint32_t> items(whole.children_.begin() + listEntry.first,
                              whole.children_.begin() + listEntry.first + listEntry.count);
  std::vector<uint32_t> rootEntries(whole.children_.begin() + rootFirst,
                                    whole.children_.begin() + rootFirst + rootCount);
  int line = 0;  // where the piece's text starts in the whole text
  for (int i = 1; i < count; ++i) {
    line += lines[static_cast<size_t>(i) - 1];
    // The piece's line 0 is its header; its line 1 is the whole text's `line`.
    whole.appendPiece(std::move(*pieces[static_cast<size_t>(i)]), line - 1, items,
                      i + 1 == count ? &rootEntries : nullptr);
  }
  Entry& merged = whole.nodes_[listIndex];
  merged.first = static_cast<uint32_t>(whole.children_.size());
  merged.count = static_cast<uint32_t>(items.size());
  whole.children_.insert(whole.children_.end(), items.begin(), items.end());
  Entry& root = whole.nodes_[0];
  root.first = static_cast<uint32_t>(whole.children_.size());
  root.count = static_cast<uint32_t>(rootEntries.size());
  whole.children_.insert(whole.children_.end(), rootEntries.begin(), rootEntries.end());
  return std::move(pieces[0]);
}

uint32_t YamlDocument::rootValue(uint32_t entry) const {
  return children_[nodes_[0].first + 2 * entry + 1];
}

bool YamlDocument::rootEntryIs(uint32_t entry, std::string_view key, int line) const {
  const Entry& found = nodes_[children_[nodes_[0].first + 2 * entry]];
  return found.kind == YamlKind::Scalar && scalars_[found.first] == key &&
         tags_[found.tag] == "?" && found.line == line && found.column == 0;
}

void YamlDocument::appendPiece(YamlDocument&& piece, int lineShift, std::vector<uint32_t>& items,
                               std::vector<uint32_t>* rootEntries) {
  const auto nodeShift = static_cast<uint32_t>(nodes_.size());
  const auto childShift = static_cast<uint32_t>(children_.size());
  const auto scalarShift = static_cast<uint32_t>(scalars_.size());
  std::vector<uint32_t> tags;
  for (const std::string& tag : piece.tags_) tags.push_back(tagIndex(tag));
  nodes_.reserve(nodes_.size() + piece.nodes_.size());
  for (Entry entry : piece.nodes_) {
    entry.tag = tags[entry.tag];
    if (entry.line >= 0) entry.line += lineShift;
    if (entry.kind == YamlKind::Scalar) entry.first += scalarShift;
    if (entry.kind == YamlKind::Sequence || entry.kind == YamlKind::Map) entry.first += childShift;
    nodes_.push_back(entry);
  }
  children_.reserve(children_.size() + piece.children_.size());
  for (uint32_t child : piece.children_) children_.push_back(child + nodeShift);
  scalars_.reserve(scalars_.size() + piece.scalars_.size());
  std::move(piece.scalars_.begin(), piece.scalars_.end(), std::back_inserter(scalars_));

  const Entry& root = piece.nodes_[0];
  const Entry& list = piece.nodes_[piece.rootValue(0)];
  for (uint32_t at = list.first; at < list.first + list.count; ++at)
    items.push_back(piece.children_[at] + nodeShift);
  if (rootEntries)
    for (uint32_t at = root.first + 2; at < root.first + root.count; ++at)
      rootEntries->push_back(piece.children_[at] + nodeShift);
}

}  // namespace gxc
