// The textual IR round-trips for every example model: for each models/*.yaml (found when the
// test runs, so a new model is covered without touching this file), print, parse and print
// again gives the same text, as the frontend leaves the graph and after the default pipeline.
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> modelFiles() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(std::string(GXC_SOURCE_DIR) + "/models"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

void runDefaultPipeline(Graph& graph) { PassManager(defaultPipeline()).run(graph, PassContext{}); }

// print(parse(text)) must be `text` itself.
void expectRoundTrip(const std::string& text, const std::string& what) {
  std::unique_ptr<Graph> parsed = parseGraph(text, what + ".gxir");
  EXPECT_EQ(printGraph(*parsed), text) << what;
}

class IrRoundTripTest : public testing::TestWithParam<std::string> {};

TEST_P(IrRoundTripTest, PrintParsePrintIsTheIdentity) {
  std::unique_ptr<Graph> graph = loadModel(GetParam());
  std::string loaded = printGraph(*graph);
  expectRoundTrip(loaded, "as loaded");

  runDefaultPipeline(*graph);
  std::string compiled = printGraph(*graph);
  expectRoundTrip(compiled, "after the default pipeline");

  // The parsed graph is the same program, not just the same text: compiling it gives what
  // compiling the loaded graph gave.
  std::unique_ptr<Graph> reparsed = parseGraph(loaded, "loaded.gxir");
  runDefaultPipeline(*reparsed);
  EXPECT_EQ(printGraph(*reparsed), compiled);
}

INSTANTIATE_TEST_SUITE_P(Models, IrRoundTripTest, testing::ValuesIn(modelFiles()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).stem().string();
                         });

TEST(IrRoundTripModels, ExampleModelsAreFound) {
  // The glob must find the models this suite exists for; an empty list would pass vacuously.
  std::vector<std::string> stems;
  for (const std::string& file : modelFiles()) stems.push_back(fs::path(file).stem().string());
  for (const char* model :
       {"mlp", "very_big_module", "very_big_module_small", "transformer_block", "losses"})
    EXPECT_NE(std::find(stems.begin(), stems.end(), model), stems.end()) << model;
}

long maxResidentKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

TEST(IrRoundTripModels, VeryBigModuleBuildsIrWithoutItsWeights) {
  // Its params are 2 x 8 GB: loading and compiling must only describe them.
  long before = maxResidentKiB();
  std::unique_ptr<Graph> graph =
      loadModel(std::string(GXC_SOURCE_DIR) + "/models/very_big_module.yaml");
  runDefaultPipeline(*graph);
  long grownMiB = (maxResidentKiB() - before) / 1024;
  EXPECT_LT(grownMiB, 64) << "peak memory grew by " << grownMiB << " MiB";
  int params = 0;
  for (const Op* op : graph->ops()) {
    if (op->kind != OpKind::Param) continue;
    ++params;
    EXPECT_EQ(op->result->type.bytes(), int64_t{8'000'000'000}) << op->layerName();
    EXPECT_EQ(op->attrs.getString("init", ""), "normal") << op->layerName();
  }
  EXPECT_EQ(params, 2);
}

}  // namespace
}  // namespace gxc
