// Every case of tests/fixtures/ops.json through the generated CUDA C++, compiled for the host:
// all cases are ops of ONE graph, so one translation unit and one host build (cached) serve
// them all (a convolution, a layer_norm or a softmax runs through oneDNN and through its
// generated kernel, both checked).
// Each case's result is held to the reference interpreter's on the same operands, as
// expectCloseToReference says (op_fixtures.h: f32 1e-5 and f64 1e-12 relative, f16/bf16 1e-2,
// integers exactly, NaN and inf as themselves); and every op that is
// not a GEMM, a copy or a view must have been computed by a generated kernel, not by the
// reference.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/cuda_source.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/reference/reference_ops.h"
#include "tests/unit/op_fixture_graph.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

using fixtures::allOpCases;
using fixtures::expectCloseToReference;
using fixtures::OpCase;

struct FixtureGraph : fixtures::OpFixtureGraph {
  std::unique_ptr<HostGeneratedKernels> kernels;
};

const FixtureGraph& fixtureGraph() {
  static const FixtureGraph built = [] {
    FixtureGraph g{fixtures::buildOpFixtureGraph({Device::cpu()}), nullptr};
    g.kernels = std::make_unique<HostGeneratedKernels>(*g.graph);
    return g;
  }();
  return built;
}

class GeneratedKernelFixtureTest : public testing::TestWithParam<OpCase> {};

TEST_P(GeneratedKernelFixtureTest, GeneratedKernelMatchesTheReference) {
  const OpCase& c = GetParam();
  const FixtureGraph& g = fixtureGraph();
  auto found = g.opOf.find(c.name);
  ASSERT_NE(found, g.opOf.end());
  const Op* op = found->second;
  if (op->kind == OpKind::To) {
    // A `to` the host already satisfies is lowered away: the output is the input itself, with
    // nothing to run.
    for (const GraphOutput& output : g.graph->outputs()) {
      if (output.name == c.name) {
        EXPECT_EQ(output.value->producer, nullptr) << "no op remains";
      }
    }
    return;
  }
  const KernelStep* step = g.kernels->steps().stepOfRoot(op);
  ASSERT_NE(step, nullptr);
  // GEMMs and views (reshape, dropout, a slice along axis 0) run no generated kernel; a
  // convolution runs the library (oneDNN) on the host.
  bool library = isGemm(op->kind) || stepKindOf(*op) == StepKind::View;
  bool convolution = op->kind == OpKind::Conv2d || op->kind == OpKind::ConvTranspose2d;
  EXPECT_EQ(step->kind == StepKind::Conv, convolution) << "op " << c.op;
  EXPECT_EQ(step->kind == StepKind::Generated, !library && !convolution) << "op " << c.op;

  std::vector<ConstTensorView> inputs;
  for (const Value* value : step->inputs) inputs.push_back(g.inputs.at(value->name).view());
  const TensorType& type = op->result->type;
  Tensor got(type.dtype, type.shape);
  if (step->kind == StepKind::View)  // the operand's bytes, from the view's offset on
    got = Tensor(ConstTensorView(type.dtype, type.shape, inputs[0].data() + viewByteOffset(*op)));
  else
    g.kernels->run(*step, inputs, got.view());
  std::vector<const Tensor*> operands;
  for (const Value* value : op->operands) operands.push_back(&g.inputs.at(value->name));
  Tensor want = evaluateReferenceOp(*op, operands);
  expectCloseToReference(got, want, "", c.name);
  if (step->kind == StepKind::Conv || hostLibraryCallFor(*op)) {
    // The library ran it above (oneDNN); its generated kernel (what the cuda platform runs)
    // must agree with the reference too.
    Tensor generated(type.dtype, type.shape);
    g.kernels->runGeneratedKernel(*step, inputs, generated.view());
    expectCloseToReference(generated, want, "generated kernel: ", c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GeneratedKernelFixtureTest, testing::ValuesIn(allOpCases()),
                         [](const testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

TEST(GeneratedKernelFixtures, OneTranslationUnitForAllCases) {
  const FixtureGraph& g = fixtureGraph();
  const CudaSource& source = g.kernels->source();
  EXPECT_EQ(source.text.rfind("#include \"gxc_kernel.h\"\n", 0), 0u);
  // Only the header is included: NVRTC gets nothing else.
  size_t includes = 0;
  for (size_t at = source.text.find("#include"); at != std::string::npos;
       at = source.text.find("#include", at + 1))
    ++includes;
  EXPECT_EQ(includes, 1u);
  EXPECT_GT(source.kernels.size(), 80u);
}

}  // namespace
}  // namespace gxc
