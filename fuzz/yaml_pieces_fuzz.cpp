// Fuzz target for reading a model's YAML in pieces (YamlDocument::parseInParts, the cuts of
// frontend/yaml_pieces.h), against reading it whole: wherever the pieces are read, the whole
// text must read without error into the same document, node for node, with the same
// positions. A text the pieces decline is read whole by the loader, so any answer but null or
// the whole's document is a crash here. Seeded with the example models, whose `layers:` lists
// the mutations keep cutting.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <yaml-cpp/exceptions.h>

#include "frontend/yaml_document.h"

namespace {

// Depth-first over both, each pair of nodes once (aliases make the documents graphs).
bool sameNode(const gxc::YamlNode& a, const gxc::YamlNode& b,
              std::set<std::pair<uint32_t, uint32_t>>& compared) {
  if (!compared.emplace(a.id(), b.id()).second) return true;
  if (a.isNull() != b.isNull() || a.isScalar() != b.isScalar() ||
      a.isSequence() != b.isSequence() || a.isMap() != b.isMap() || a.scalar() != b.scalar() ||
      a.tag() != b.tag() || a.line() != b.line() || a.column() != b.column() ||
      a.size() != b.size())
    return false;
  auto other = b.begin();
  for (const auto& item : a) {
    const auto& otherItem = *other;
    if (a.isMap() ? !sameNode(item.first, otherItem.first, compared) ||
                        !sameNode(item.second, otherItem.second, compared)
                  : !sameNode(item, otherItem, compared))
      return false;
    ++other;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (int parts : {2, 3}) {
    std::unique_ptr<gxc::YamlDocument> pieces = gxc::YamlDocument::parseInParts(text, parts);
    if (!pieces) continue;
    std::unique_ptr<gxc::YamlDocument> whole;
    try {
      whole = gxc::YamlDocument::parse(text);
    } catch (const YAML::Exception& e) {
      std::fprintf(stderr, "read in %d pieces, but the whole text is refused: %s\n", parts,
                   e.what());
      std::abort();
    }
    std::set<std::pair<uint32_t, uint32_t>> compared;
    if (!sameNode(pieces->root(), whole->root(), compared)) {
      std::fprintf(stderr, "read in %d pieces, a document other than the whole text's\n", parts);
      std::abort();
    }
  }
  return 0;
}
