// KernelSteps: which ops form one step, and what each step reads from outside it.
#include "ir/kernel_steps.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/diagnostic.h"
#include "ir/parser.h"

namespace gxc {
namespace {

// One fused kernel on the host: a chain of adds over `inputs` graph inputs, x0 first, where
// the member after x`repeatAt` reads x0 again and the last member reads x`repeatAt` again.
std::string chainKernel(int inputs, int repeatAt) {
  std::string params, body;
  for (int i = 0; i < inputs; ++i) params += fmt::format("{}%x{}: f32[4] @cpu", i ? ", " : "", i);
  std::string last = "x0";
  int count = 0;
  auto add = [&](const std::string& operand) {
    std::string name = fmt::format("a{}", count++);
    body += fmt::format("  %{} = add %{}, %{} {{kernel = \"k0\"}} : f32[4] @cpu\n", name, last,
                        operand);
    last = name;
  };
  for (int i = 1; i < inputs; ++i) {
    add(fmt::format("x{}", i));
    if (i == repeatAt) add("x0");
  }
  add(fmt::format("x{}", repeatAt));
  return fmt::format("graph @g({}) -> ({}) {{\n{}  return %{}\n}}", params, last, body, last);
}

std::vector<std::string> inputNames(const KernelStep& step) {
  std::vector<std::string> names;
  for (const Value* input : step.inputs) names.push_back(input->name);
  return names;
}

// Both ways of finding a value already read: the scan of a short list, and the set a long one
// switches to, each given values it has seen.
TEST(KernelStepsTest, AKernelReadsEachOutsideValueOnceInOrderOfFirstUse) {
  for (int inputs : {5, 40}) {
    auto graph = parseGraph(chainKernel(inputs, 3), "g.gxir");
    KernelSteps steps(*graph);
    ASSERT_EQ(steps.steps().size(), 1u);
    const KernelStep& step = steps.steps()[0];
    EXPECT_EQ(step.ops.size(), static_cast<size_t>(inputs + 1));  // and 2 that read again
    std::vector<std::string> expected;
    for (int i = 0; i < inputs; ++i) expected.push_back(fmt::format("x{}", i));
    EXPECT_EQ(inputNames(step), expected) << inputs << " inputs";
    for (const Op* op : step.ops) EXPECT_EQ(&steps.stepOf(op), &step);
    EXPECT_EQ(steps.stepOfRoot(step.root()), &step);
    EXPECT_EQ(steps.stepOfRoot(step.first()), nullptr);
  }
}

TEST(KernelStepsTest, ALoneOpReadsItsOperandsOnce) {
  auto graph = parseGraph(R"(
graph @g(%x: f32[4] @cpu, %y: f32[4] @cpu) -> (c) {
  %a = add %x, %x : f32[4] @cpu
  %b = mul %a, %y {kernel = "k0"} : f32[4] @cpu
  %c = relu %b {kernel = "k0"} : f32[4] @cpu
  return %c
})",
                          "g.gxir");
  KernelSteps steps(*graph);
  ASSERT_EQ(steps.steps().size(), 2u);
  EXPECT_EQ(inputNames(steps.steps()[0]), (std::vector<std::string>{"x"}));
  EXPECT_EQ(inputNames(steps.steps()[1]), (std::vector<std::string>{"a", "y"}));
}

// What KernelSteps says of a malformed kernel: a gxc bug, so an internal error.
std::string internalErrorOf(const std::string& text) {
  auto graph = parseGraph(text, "g.gxir");
  try {
    KernelSteps steps(*graph);
  } catch (const InternalError& error) {
    return error.what();
  }
  return "accepted";
}

TEST(KernelStepsTest, AKernelWhoseMembersAreApartIsAnInternalError) {
  std::string error = internalErrorOf(R"(
graph @g(%x: f32[4] @cpu) -> (c) {
  %a = relu %x {kernel = "k0"} : f32[4] @cpu
  %b = neg %x : f32[4] @cpu
  %c = add %a, %b {kernel = "k0"} : f32[4] @cpu
  return %c
})");
  EXPECT_NE(error.find("kernel k0: its members are not contiguous"), std::string::npos) << error;
}

TEST(KernelStepsTest, AnInternalValueReadOutsideItsKernelIsAnInternalError) {
  std::string error = internalErrorOf(R"(
graph @g(%x: f32[4] @cpu) -> (c) {
  %a = relu %x {kernel = "k0"} : f32[4] @cpu
  %b = neg %a {kernel = "k0"} : f32[4] @cpu
  %c = add %a, %b : f32[4] @cpu
  return %c
})");
  EXPECT_NE(error.find("internal value 'a' is read by 'c'"), std::string::npos) << error;
}

}  // namespace
}  // namespace gxc
