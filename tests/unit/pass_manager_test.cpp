// The pass manager's verifier: after the last pass always, after every pass when asked
// (GXC_VERIFY_EACH_PASS=1, as the test suite runs), where a problem is blamed on the pass that
// made it.
#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace gxc {
namespace {

// Gives %y a shape its op does not make, or puts the right one back.
class ReshapeY : public Pass {
 public:
  ReshapeY(std::string name, int64_t size) : name_(std::move(name)), size_(size) {}
  std::string_view name() const override { return name_; }
  bool run(Graph& graph, const PassContext&) const override {
    graph.find("y")->type.shape = {size_};
    return true;
  }

 private:
  std::string name_;
  int64_t size_;
};

// What running `passes` on a valid graph reports: empty when nothing.
std::string problemAfter(bool verifyEachPass, std::vector<std::pair<const char*, int64_t>> passes) {
  auto graph = parseGraph(R"(
graph @g(%x: f32[4] @cpu) -> (y) {
  %y = relu %x : f32[4] @cpu
  return %y
})",
                          "g.gxir");
  PassManagerOptions options;
  options.verifyEachPass = verifyEachPass;
  PassManager manager(options);
  for (const auto& [name, size] : passes) manager.add(std::make_unique<ReshapeY>(name, size));
  try {
    manager.run(*graph, PassContext{});
  } catch (const std::exception& error) {
    return error.what();
  }
  return {};
}

TEST(PassManagerTest, VerifiesEveryPassWhenAskedAndBlamesThePassThatBrokeTheGraph) {
  std::string problem = problemAfter(true, {{"breaks", 5}, {"repairs", 4}});
  EXPECT_NE(problem.find("IR invalid after pass breaks"), std::string::npos) << problem;
}

TEST(PassManagerTest, OtherwiseVerifiesTheGraphThePipelineHandsOn) {
  EXPECT_EQ(problemAfter(false, {{"breaks", 5}, {"repairs", 4}}), "");
  std::string problem = problemAfter(false, {{"breaks", 5}, {"keeps", 5}});
  EXPECT_NE(problem.find("IR invalid after pass keeps"), std::string::npos) << problem;
}

TEST(PassManagerTest, TheEnvironmentAsksForEveryPass) {
  // ctest runs the unit tests with GXC_VERIFY_EACH_PASS=1 (tests/CMakeLists.txt).
  const char* value = std::getenv("GXC_VERIFY_EACH_PASS");
  EXPECT_EQ(PassManagerOptions{}.verifyEachPass, value && *value && std::string(value) != "0");
}

}  // namespace
}  // namespace gxc
