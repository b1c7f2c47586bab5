// frontend/yaml_document.h: the flat document the frontend reads, against yaml-cpp's own tree
// of the same text (its kinds, scalars, tags, positions and order), and what it adds: aliases
// share their anchor's node, and one inside the node it names is refused.
#include "frontend/yaml_document.h"

#include <gtest/gtest.h>
#include <yaml-cpp/depthguard.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace gxc
