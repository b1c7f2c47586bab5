// frontend/yaml_document.h: the flat document the frontend reads, against yaml-cpp's own tree
// of the same text (its kinds, scalars, tags, positions and order), and what it adds: aliases
// share their anchor's node, and one inside the node it names is refused; a large `layers:`
// list read in pieces (frontend/yaml_pieces.h) reads as yaml-cpp reads the whole text.
#include "frontend/yaml_document.h"

#include <gtest/gtest.h>
#include <yaml-cpp/depthguard.h>

#include <string>
#include <vector>

#include "frontend/yaml_pieces.h"

namespace gxc {
namespace {

// The node's structure as text, with positions: one line per node, depth-first.
void describe(const YamlNode& node, int depth, std::vector<std::string>& out) {
  std::string line(static_cast<size_t>(depth) * 2, ' ');
  line += node.isMap()        ? "map"
          : node.isSequence() ? "list"
          : node.isScalar()   ? "scalar '" + node.scalar() + "'"
          : node.isNull()     ? "null"
                              : "undefined";
  line += " " + node.tag() + " @" + std::to_string(node.line()) + ":" +
          std::to_string(node.column()) + " size " + std::to_string(node.size());
  out.push_back(line);
  for (const auto& item : node) {
    if (node.isMap()) {
      describe(item.first, depth + 1, out);
      describe(item.second, depth + 2, out);
    } else {
      describe(item, depth + 1, out);
    }
  }
}

void describe(const YAML::Node& node, int depth, std::vector<std::string>& out) {
  std::string line(static_cast<size_t>(depth) * 2, ' ');
  line += node.IsMap()        ? "map"
          : node.IsSequence() ? "list"
          : node.IsScalar()   ? "scalar '" + node.Scalar() + "'"
                              : "null";
  line += " " + node.Tag() + " @" + std::to_string(node.Mark().line) + ":" +
          std::to_string(node.Mark().column) + " size " + std::to_string(node.size());
  out.push_back(line);
  for (const auto& item : node) {
    if (node.IsMap()) {
      describe(item.first, depth + 1, out);
      describe(item.second, depth + 2, out);
    } else {
      describe(item, depth + 1, out);
    }
  }
}

constexpr const char* kModel = R"(gxc: 1
name: "quoted"
inputs:
  x: {shape: [2, 3], dtype: f32}
layers:
  - name: h
    op: relu
    inputs: [x]
    extra:
  - {name: g, op: !!str tanh, inputs: [h], name: again}
outputs: [g]
)";

TEST(YamlDocumentTest, ReadsWhatYamlCppsTreeHoldsNodeForNode) {
  std::vector<std::string> ours, theirs;
  describe(YamlDocument::parse(kModel)->root(), 0, ours);
  describe(YAML::Load(kModel), 0, theirs);
  EXPECT_EQ(ours, theirs);
  EXPECT_GT(ours.size(), 30u);
}

TEST(YamlDocumentTest, LooksUpKeysAndItemsAsTheFrontendReadsThem) {
  auto document = YamlDocument::parse(kModel);
  YamlNode root = document->root();
  EXPECT_EQ(root["name"].scalar(), "quoted");
  EXPECT_EQ(root["name"].tag(), "!");  // quoted
  EXPECT_EQ(root["gxc"].tag(), "?");   // plain
  YamlNode layers = root["layers"];
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_TRUE(layers[0]["extra"].isDefined());
  EXPECT_TRUE(layers[0]["extra"].isNull());
  EXPECT_EQ(layers[0]["extra"].line(), 9);  // at the next token, as yaml-cpp marks it
  EXPECT_FALSE(layers[0]["missing"]);
  EXPECT_FALSE(layers[2]);
  EXPECT_FALSE(root["name"]["x"]);  // a scalar has no keys
  EXPECT_EQ(root["name"].size(), 0u);
  EXPECT_EQ(layers[1]["name"].scalar(), "g");  // the first of a repeated key
  EXPECT_EQ(layers[1].size(), 4u);             // both are kept, for the check that refuses them
  EXPECT_EQ(layers[1]["op"].tag(), "tag:yaml.org,2002:str");
  YamlNode shape = root["inputs"]["x"]["shape"];
  EXPECT_EQ(shape[1].scalar(), "3");
  EXPECT_EQ(shape[1].line(), 3);
  EXPECT_EQ(shape[1].column(), 17);
  const auto& first = *root.begin();  // a copy: it outlives the iterator
  EXPECT_EQ(first.first.scalar(), "gxc");
  EXPECT_EQ(first.second.scalar(), "1");
  EXPECT_FALSE(YamlNode().isNull());
  EXPECT_EQ(YamlNode().scalar(), "");
}

TEST(YamlDocumentTest, AnAliasIsItsAnchorsNode) {
  auto document = YamlDocument::parse("a: &spec {shape: [2]}\nb: *spec\n");
  YamlNode a = document->root()["a"], b = document->root()["b"];
  EXPECT_EQ(b["shape"][0].scalar(), "2");
  EXPECT_EQ(b.line(), a.line());  // yaml-cpp's tree shares the node too
  EXPECT_EQ(b.column(), a.column());
}

TEST(YamlDocumentTest, RefusesAnAliasInsideTheNodeItNames) {
  try {
    YamlDocument::parse("a: &x\n  - 1\n  - *x\n");
    FAIL() << "no error";
  } catch (const YAML::ParserException& e) {
    EXPECT_EQ(e.msg, "an alias inside the list or map it names");
    EXPECT_EQ(e.mark.line, 2);
    EXPECT_EQ(e.mark.column, 4);
  }
}

TEST(YamlDocumentTest, KeepsYamlCppsErrorsAndNestingLimit) {
  EXPECT_THROW(YamlDocument::parse("a: [1, 2\n"), YAML::ParserException);
  EXPECT_THROW(YamlDocument::parse(std::string(3000, '[')), YAML::DeepRecursion);
}

TEST(YamlDocumentTest, ANodeTreeInMemoryReadsAsItsTextWouldWithoutPositions) {
  YAML::Node layer;
  layer["name"] = "h";
  layer["inputs"].push_back("x");
  layer["inputs"].push_back("y");
  layer["dim"] = YAML::Node(YAML::NodeType::Null);
  auto document = YamlDocument::fromNode(layer);
  YamlNode root = document->root();
  EXPECT_EQ(root["name"].scalar(), "h");
  EXPECT_EQ(root["inputs"][1].scalar(), "y");
  EXPECT_TRUE(root["dim"].isNull());
  EXPECT_FALSE(root.hasPosition());
  EXPECT_FALSE(root["inputs"][0].hasPosition());
  EXPECT_EQ(YamlDocument::parse("")->root().isDefined(), false);
}

// `count` flow-style layers from l{first} on, each reading the one before.
std::string flowLayers(int first, int count, const std::string& indent = "  ") {
  std::string text;
  for (int i = first; i < first + count; ++i)
    text += indent + "- {name: l" + std::to_string(i) + ", op: relu, inputs: [l" +
            std::to_string(i - 1) + "]}\n";
  return text;
}

// The same structure, positions included, read in pieces and by yaml-cpp's tree of the whole.
void expectReadInPiecesAsWhole(const std::string& text, int parts) {
  SCOPED_TRACE(::testing::Message() << parts << " parts of\n" << text);
  ASSERT_EQ(findLayerListCuts(text, parts).offsets.size(), static_cast<size_t>(parts - 1));
  std::unique_ptr<YamlDocument> document = YamlDocument::parseInParts(text, parts);
  ASSERT_NE(document, nullptr);
  std::vector<std::string> ours, theirs;
  describe(document->root(), 0, ours);
  describe(YAML::Load(text), 0, theirs);
  EXPECT_EQ(ours, theirs);
}

TEST(YamlDocumentTest, ALayerListReadInPiecesReadsAsTheWholeText) {
  // Flow items, keys after the list.
  expectReadInPiecesAsWhole("gxc: 1\nname: chain\ninputs:\n  l-1: {shape: [2]}\nlayers:\n" +
                                flowLayers(0, 40) + "outputs: [l39]\ntrain: {steps: 2}\n",
                            2);
  // Block items at column 0, with comments, blank lines, quoted scalars, an anchor and its
  // alias in one item, a list nested at the items' own indentation, and a block scalar that
  // the next item ends.
  std::string block = "# a model\ninputs: {x: {shape: [2]}}\nlayers:   # the layers\n";
  for (int i = 0; i < 30; ++i) {
    block += "- name: 'l" + std::to_string(i) + "'\n  op: &op" + std::to_string(i) +
             " relu\n  again: *op" + std::to_string(i) + "\n  inputs:\n  - x\n\n# between\n";
    if (i % 7 == 3) block += "  doc: |\n    two lines\n    of text\n";
  }
  expectReadInPiecesAsWhole(block, 2);
  expectReadInPiecesAsWhole(block, 3);
  expectReadInPiecesAsWhole(block + "outputs: [l29]\n", 5);
  // The last piece may be the list alone, with no newline at the end.
  std::string unterminated = "layers:\n" + flowLayers(0, 12, "    ");
  unterminated.pop_back();
  expectReadInPiecesAsWhole(unterminated, 4);
}

TEST(YamlDocumentTest, CutsOnlyBetweenItemsOfTheTopLevelLayerList) {
  const std::string head = "inputs:\n  x: {shape: [2]}\nlayers:\n";
  const std::string items = "  - name: a\n    inputs:\n      - x\n" + flowLayers(0, 20);
  const std::string model = head + items + "outputs: [l19]\n";
  LayerListCuts cuts = findLayerListCuts(model, 3);
  EXPECT_EQ(cuts.layersLine, 2u);
  ASSERT_EQ(cuts.offsets.size(), 2u);
  for (size_t offset : cuts.offsets) EXPECT_EQ(model.substr(offset, 7), "  - {na") << offset;
  EXPECT_LT(cuts.offsets[0], cuts.offsets[1]);
  // Nothing to cut, or what a search by lines cannot tell apart.
  for (const std::string& text :
       {std::string("layers: [a, b]\n"), "inputs: {}\n" + flowLayers(0, 9),
        head + "  x: 1\n" + flowLayers(0, 9), head + flowLayers(0, 9) + "\t\n",
        head + "  - a\r\n  - b\r\n  - c\r\n", "%YAML 1.2\n---\n" + head + flowLayers(0, 9),
        head + flowLayers(0, 9) + "...\n", "\xef\xbb\xbf" + head + flowLayers(0, 9)})
    EXPECT_TRUE(findLayerListCuts(text, 2).offsets.empty()) << text;
  EXPECT_TRUE(findLayerListCuts(head + flowLayers(0, 9), 1).offsets.empty());
}

// A text whose cut falls inside one item that spans lines looking like items.
struct SpanningItem {
  std::string text;
  size_t begin, end;  // of the spanning item
};
SpanningItem cutInside(const std::string& opening, const std::string& closing) {
  SpanningItem item;
  item.text = "layers:\n" + flowLayers(0, 10);
  item.begin = item.text.size();
  item.text += opening;
  for (int i = 0; i < 60; ++i) item.text += "  - fake" + std::to_string(i) + "\n";
  item.text += closing;
  item.end = item.text.size();
  item.text += flowLayers(10, 10);
  return item;
}

TEST(YamlDocumentTest, PiecesThatDoNotReadAsTheirPartAreReadWhole) {
  for (const SpanningItem& item :
       {cutInside("  - name: \"quoted\n", "    \"\n"), cutInside("  - [flow,\n", "    ]\n"),
        cutInside("  - {name: flow,\n", "    }\n")}) {
    LayerListCuts cuts = findLayerListCuts(item.text, 2);
    ASSERT_EQ(cuts.offsets.size(), 1u);
    ASSERT_GT(cuts.offsets[0], item.begin);  // the cut is inside the item: the test's premise
    ASSERT_LT(cuts.offsets[0], item.end);
    EXPECT_EQ(YamlDocument::parseInParts(item.text, 2), nullptr) << item.text;
  }
  // An alias to an anchor in an earlier piece: the later piece alone is refused. A null
  // that ends an item (`key:`, or an item that is only a comment): yaml-cpp marks it at the
  // token after it, which is past the cut.
  std::string nulls = "layers:\n", comments = "layers:\n";
  for (int i = 0; i < 20; ++i) {
    nulls += "  - name: l" + std::to_string(i) + "\n    extra:\n";
    comments += "  - # l" + std::to_string(i) + "\n";
  }
  for (const std::string& text : {"layers:\n  - {name: &first l0, op: relu}\n" + flowLayers(1, 20) +
                                      "  - {name: l21, op: relu, inputs: [*first]}\n",
                                  nulls, comments}) {
    ASSERT_EQ(findLayerListCuts(text, 2).offsets.size(), 1u);
    EXPECT_EQ(YamlDocument::parseInParts(text, 2), nullptr) << text;
    std::vector<std::string> ours, theirs;
    describe(YamlDocument::parse(text)->root(), 0, ours);
    describe(YAML::Load(text), 0, theirs);
    EXPECT_EQ(ours, theirs);
  }
}

TEST(YamlDocumentTest, AMistakeInALargeTextIsReportedWhereTheWholeTextHasIt) {
  // Over the size parse reads in pieces; the unclosed map is in the last piece.
  std::string text = "layers:\n" + flowLayers(0, 7000) + "  - {name: open, op: relu\n" +
                     flowLayers(7000, 10) + "outputs: [l7009]\n";
  ASSERT_GT(text.size(), kMinBytesToReadInPieces);
  int line = -1;
  try {
    YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    line = e.mark.line;
  }
  ASSERT_GT(line, 7000);
  try {
    YamlDocument::parse(text);
    FAIL() << "no error";
  } catch (const YAML::ParserException& e) {
    EXPECT_EQ(e.mark.line, line);
  }
}

}  // namespace
}  // namespace gxc
