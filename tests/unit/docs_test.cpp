// The documentation is held to the code (docs_check.h): a new op without a row in
// docs/model-format.md, a new pass without a row in docs/ir.md, a new option or GXC_
// variable missing from docs/cli.md, a link out of the repository, or an example model that
// does not load fails the suite, naming what to write. Each check is also shown to fail on a
// document with a row taken out.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "docs_check.h"
#include "frontend/model_loader.h"

namespace gxc::docs {
namespace {

using Problems = std::vector<std::string>;

// `text` without its line that starts with `start`; the test fails if there is none.
std::string withoutLine(const std::string& text, const std::string& start) {
  size_t at = text.find("\n" + start);
  EXPECT_NE(at, std::string::npos) << "no line starts with " << start;
  if (at == std::string::npos) return text;
  size_t next = text.find('\n', at + 1);
  return text.substr(0, at) + text.substr(next);
}

// `text` with the first occurrence of `from` (every one, with `all`) replaced by `to`; the
// test fails if there is none.
std::string replaced(std::string text, const std::string& from, const std::string& to,
                     bool all = false) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no " << from;
  for (; at != std::string::npos; at = all ? text.find(from, at + to.size()) : std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

TEST(DocsTest, EveryOpHasARowWithItsAttributes) {
  EXPECT_EQ(opTableProblems(readSource("docs/model-format.md"), readSource("docs/ir.md")),
            Problems{});
}

TEST(DocsTest, OpCheckNamesAnOpWithoutARow) {
  std::string modelFormat = readSource("docs/model-format.md"), ir = readSource("docs/ir.md");
  EXPECT_EQ(opTableProblems(withoutLine(modelFormat, "| `embedding` |"), ir),
            Problems{"docs/model-format.md: op 'embedding' has no row in the table of model ops"});
  // One op left out of a row that names several.
  EXPECT_EQ(opTableProblems(replaced(modelFormat, "| `relu` `sigmoid`", "| `sigmoid`"), ir),
            Problems{"docs/model-format.md: op 'relu' has no row in the table of model ops"});
  EXPECT_EQ(opTableProblems(modelFormat, withoutLine(ir, "| `copy` |")),
            Problems{"docs/ir.md: op 'copy' has no row in the table of internal ops"});
  EXPECT_EQ(opTableProblems(replaced(modelFormat, "<!-- ops: model end -->", ""), ir),
            Problems{"docs/model-format.md: no table between <!-- ops: model begin --> and "
                     "<!-- ops: model end -->"});
}

TEST(DocsTest, OpCheckNamesARowOfNoOpAndAMissingAttribute) {
  std::string modelFormat = readSource("docs/model-format.md"), ir = readSource("docs/ir.md");
  std::string extraRow = replaced(modelFormat, "<!-- ops: model end -->",
                                  "| `convolution` | x | `kernel` | | `F.conv2d` |\n"
                                  "| `param` | | | | |\n<!-- ops: model end -->");
  EXPECT_EQ(opTableProblems(extraRow, ir),
            (Problems{"docs/model-format.md: the row of 'convolution' names no op of the registry "
                      "(ir/op_kinds.cpp)",
                      "docs/model-format.md: 'param' is an op only the compiler makes but has a "
                      "row in the table of model ops"}));
  EXPECT_EQ(opTableProblems(replaced(modelFormat, "`keepdim` (false)", "keepdim"), ir),
            (Problems{"docs/model-format.md: op 'sum': attribute 'keepdim' is not in its row",
                      "docs/model-format.md: op 'mean': attribute 'keepdim' is not in its row",
                      "docs/model-format.md: op 'max': attribute 'keepdim' is not in its row"}));
  EXPECT_EQ(opTableProblems(modelFormat, replaced(ir, "`shard_of", "`shard-of", true)),
            (Problems{"docs/ir.md: attribute 'shard_of' of op 'matmul', which passes set, is not "
                      "described",
                      "docs/ir.md: attribute 'shard_of' of op 'linear', which passes set, is not "
                      "described"}));
}

TEST(DocsTest, EveryPassHasARowAndALitTest) {
  std::string ir = readSource("docs/ir.md");
  EXPECT_EQ(passTableProblems(ir), Problems{});
  EXPECT_EQ(passTableProblems(withoutLine(ir, "| `fuse` |")),
            Problems{"docs/ir.md: pass 'fuse' has no row in the pass table"});
  EXPECT_EQ(passTableProblems(replaced(ir, "\n| `fuse` |", "\n| `fusion` |")),
            (Problems{"docs/ir.md: pass 'fuse' has no row in the pass table",
                      "docs/ir.md: the pass table names 'fusion', no registered pass"}));
}

TEST(DocsTest, CliDocumentsEveryCommandAndOption) {
  std::string cli = readSource("docs/cli.md");
  EXPECT_EQ(cliOptionProblems(cli), Problems{});
  EXPECT_EQ(cliOptionProblems(replaced(cli, "`--trace", "`trace", true)),
            Problems{"docs/cli.md: option --trace of `gxc run` is not described"});
}

TEST(DocsTest, CliDocumentsEveryEnvironmentVariable) {
  std::vector<std::string> variables = environmentVariablesRead();
  for (const char* known : {"GXC_ALLOW_TF32", "GXC_CACHE_DIR", "GXC_DISABLE_KERNEL_CACHE",
                            "GXC_HOST_CXX", "GXC_LAUNCH_BLOCKING"})
    EXPECT_NE(std::find(variables.begin(), variables.end(), known), variables.end())
        << "the scan of the sources missed " << known;
  std::string cli = readSource("docs/cli.md");
  for (const std::string& variable : variables)
    EXPECT_NE(cli.find("`" + variable), std::string::npos)
        << "docs/cli.md does not describe " << variable;
}

TEST(DocsTest, LinksStayInsideTheRepository) {
  std::vector<std::string> documents = {"README.md"};
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GXC_SOURCE_DIR) + "/docs"))
    if (entry.path().extension() == ".md")
      documents.push_back("docs/" + entry.path().filename().string());
  ASSERT_GE(documents.size(), 5u);
  for (const std::string& document : documents)
    EXPECT_EQ(linkProblems(document, readSource(document)), Problems{});
  EXPECT_EQ(linkProblems("README.md",
                         "[spec](../notes/spec.md), [cli](docs/cli.md), "
                         "`../notes/x.md`, [gone](docs/nothing.md)"),
            (Problems{"README.md: '../notes/spec.md' points outside the repository",
                      "README.md: 'docs/nothing.md' does not exist",
                      "README.md: '../notes/x.md' points outside the repository"}));
}

TEST(DocsTest, ExampleModelsLoad) {
  for (const char* document : {"README.md", "docs/model-format.md", "docs/tutorial.md"}) {
    std::vector<std::string> models = completeModelExamples(readSource(document));
    EXPECT_FALSE(models.empty()) << document << " shows no whole model";
    for (const std::string& model : models) {
      try {
        loadModelFromString(model, document, GXC_SOURCE_DIR);
      } catch (const Error& error) {
        ADD_FAILURE() << document << ": an example model does not load: " << formatError(error)
                      << "\n"
                      << model;
      }
    }
  }
}

}  // namespace
}  // namespace gxc::docs
