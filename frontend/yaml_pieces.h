// Reading a large model's YAML in pieces, on several threads at once
// (YamlDocument::parseInParts, defined in yaml_pieces.cpp with what is here): yaml-cpp's
// scanner takes about 2,000 instructions a byte, most of what a large model takes to load, and
// nearly all of a large model is its `layers:` list.
//
// A cut is the start of a line that begins an item of the top-level `layers:` block list:
// `layers:` at column 0, then each item at the indentation of the first, `- ` after it. Each
// piece is read by its own yaml-cpp parser: the first as the text before its cut, a later one
// as `layers:` and a line break, then its text. Each piece but the last ends with one more
// line, a key at column 0, which closes the list only if the cut was between two items: inside
// a quoted scalar (which yaml-cpp lets run to the end of its text) the key is swallowed, inside
// a flow collection yaml-cpp refuses it. The pieces are used only where every piece holds the
// list as it should and that key closes it, and no node of a piece is marked at that key (a
// null, which yaml-cpp marks at the token after it); their lines are moved to the whole
// text's and their lists joined. Otherwise the text is read whole, with its own errors.
//
// Finding the cuts is a search by lines, not a YAML scanner. What lines cannot tell apart is
// refused there: a tab, a carriage return or a NUL anywhere (indentation and line numbers
// yaml-cpp might count otherwise, the end of the text for yaml-cpp), a directive (`%`) or a
// document marker (`---`, `...`) at the start of a line, a byte-order mark or a first byte
// outside printable ASCII. fuzz/yaml_pieces_fuzz.cpp holds the pieces to the whole text.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace gxc {

// The least text YamlDocument::parse reads in pieces: 256 KiB, some 4,000 layers, which
// yaml-cpp reads whole in about 40 ms.
constexpr size_t kMinBytesToReadInPieces = size_t{256} << 10;

// The line that holds the top-level `layers:` key and the cuts found: at most parts - 1 byte
// offsets, ascending, each the first after an equal share of the text. No cuts where the text
// has no such list, or is refused above.
struct LayerListCuts {
  size_t layersLine = 0;  // 0-based, as yaml-cpp's marks
  std::vector<size_t> offsets;
};
LayerListCuts findLayerListCuts(std::string_view text, int parts);

}  // namespace gxc
