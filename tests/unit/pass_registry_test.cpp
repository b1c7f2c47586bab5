// The pass table: sorted, every entry creates the pass it names, unknown names refused.
#include "passes/pass_registry.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "passes/pass_manager.h"
#include "passes/pipeline.h"

namespace gxc {
namespace {

TEST(PassRegistryTest, TableIsSortedAndEachPassKnowsItsName) {
  std::vector<std::string_view> names = registeredPassNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (std::string_view name : names) {
    std::unique_ptr<Pass> pass = createPass(name);
    ASSERT_NE(pass, nullptr) << name;
    EXPECT_EQ(pass->name(), name);
  }
  EXPECT_EQ(createPass("no-such-pass"), nullptr);
}

TEST(PassRegistryTest, DefaultPipelineUsesRegisteredPasses) {
  for (const std::string& name : defaultPipeline()) EXPECT_NE(createPass(name), nullptr) << name;
  for (const std::string& name : trainingPipeline()) EXPECT_NE(createPass(name), nullptr) << name;
}

TEST(PassRegistryTest, PassListRefusesUnknownNamesListingTheValidOnes) {
  EXPECT_EQ(parsePassList("infer-shapes,assign-devices"),
            (std::vector<std::string>{"infer-shapes", "assign-devices"}));
  try {
    parsePassList("infer-shapes,,assign-devices");
    FAIL() << "an empty pass name was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Usage);
    EXPECT_EQ(error.message(),
              "unknown pass '' (passes: assign-devices, assign-streams, autocast, autodiff, "
              "batch-transfers, "
              "data-parallel, fuse, infer-shapes, insert-copies, optimizer, pipeline-stages, "
              "plan-memory, replicate-update, split-layers, train-mode)");
  }
}

}  // namespace
}  // namespace gxc
