// Integer arithmetic fused with casts and with each other: the fuse pass makes one kernel of
// an i32 and i64 chain, and its generated code (on cpu, and on a virtual GPU) gives bit for
// bit what the reference gives, which is checked here against the chain written out in C++:
// two's complement wraparound (i32 wrapping at each op, not only on the final store), and i64
// values beyond 2^53 kept exact.
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "codegen/cuda_source.h"
#include "frontend/model_loader.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kBound = int64_t{1} << 62;
constexpr int64_t kOffset = (int64_t{1} << 53) + 1;  // not a double

const char* kChain = R"(graph @ints(%x: i64[4,3] @cpu, %y: i64[3] @cpu, %z: i32[4,1] @cpu) -> (r) {
  %a = mul %x, %y : i64[4,3] @cpu
  %b = add %a {scalar = 9007199254740993} : i64[4,3] @cpu
  %c = neg %b : i64[4,3] @cpu
  %d = mul %z {scalar = 65537} : i32[4,1] @cpu
  %e = sub %d, %z : i32[4,1] @cpu
  %f = cast %e {dtype = "i64"} : i64[4,1] @cpu
  %g = maximum %c, %f : i64[4,3] @cpu
  %h = clamp %g {max = 4611686018427387904, min = -4611686018427387904} : i64[4,3] @cpu
  %r = abs %h : i64[4,3] @cpu
  return %r
}
)";

int64_t wrap(uint64_t value) { return static_cast<int64_t>(value); }
int32_t wrap32(int64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(value)); }

// The chain above, element by element.
int64_t expectedAt(int64_t x, int64_t y, int32_t z) {
  int64_t c = wrap(0 - (static_cast<uint64_t>(x) * static_cast<uint64_t>(y) + kOffset));
  int32_t d = wrap32(int64_t{z} * 65537);
  int64_t f = wrap32(int64_t{d} - z);
  int64_t h = std::min(std::max(std::max(c, f), -kBound), kBound);
  return h < 0 ? -h : h;
}

std::map<std::string, Tensor> inputs() {
  const int64_t xs[12] = {kBound + 1, -kBound - 7,  kI64Min, kI64Max, 3,  -5,
                          kOffset,    -kOffset - 2, 1,       0,       -1, (int64_t{1} << 40) + 9};
  const int64_t ys[3] = {3, -1, (int64_t{1} << 40) + 3};
  const int64_t zs[4] = {kI32Max, kI32Min, -40000, 12345};
  std::map<std::string, Tensor> values{{"x", Tensor(DType::I64, {4, 3})},
                                       {"y", Tensor(DType::I64, {3})},
                                       {"z", Tensor(DType::I32, {4, 1})}};
  for (int64_t i = 0; i < 12; ++i) values.at("x").storeInt(i, xs[i]);
  for (int64_t i = 0; i < 3; ++i) values.at("y").storeInt(i, ys[i]);
  for (int64_t i = 0; i < 4; ++i) values.at("z").storeInt(i, zs[i]);
  return values;
}

std::unique_ptr<Graph> fused(const std::string& text, std::vector<Device> devices,
                             std::vector<std::string> passes) {
  auto graph = parseGraph(text, "ints.gxir");
  PassContext context;
  context.target = Target::of(std::move(devices));
  PassManager(passes).run(*graph, context);
  return graph;
}

void expectBitForBit(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_EQ(got.loadInt(i), want.loadInt(i)) << "element " << i;
}

TEST(IntegerElementwiseTest, TheReferenceWrapsAsTwosComplement) {
  auto graph = parseGraph(kChain, "ints.gxir");
  std::map<std::string, Tensor> given = inputs();
  Tensor r = ReferenceExecutor(*graph).run(given).at("r");
  for (int64_t row = 0; row < 4; ++row)
    for (int64_t col = 0; col < 3; ++col)
      EXPECT_EQ(r.loadInt(row * 3 + col),
                expectedAt(given.at("x").loadInt(row * 3 + col), given.at("y").loadInt(col),
                           static_cast<int32_t>(given.at("z").loadInt(row))))
          << "row " << row << " column " << col;
}

TEST(IntegerElementwiseTest, OneFusedKernelOnCpuMatchesTheReference) {
  auto graph = fused(kChain, {Device::cpu()}, {"fuse", "plan-memory"});
  CudaSource source = generateCudaSource(*graph);
  ASSERT_EQ(source.kernels.size(), 1u);
  EXPECT_EQ(source.kernels[0].ops.size(), 9u);
  std::map<std::string, Tensor> given = inputs();
  auto expected = ReferenceExecutor(*parseGraph(kChain, "ints.gxir")).run(given);
  expectBitForBit(HostExecutor(*graph).run(given).at("r"), expected.at("r"));
}

TEST(IntegerElementwiseTest, OneFusedKernelOnAVirtualGpuMatchesTheReference) {
  std::string onGpu = std::regex_replace(kChain, std::regex("@cpu"), "@cuda:0");
  auto graph =
      fused(onGpu, {Device::cuda(0)}, {"insert-copies", "fuse", "plan-memory", "assign-streams"});
  std::map<std::string, Tensor> given = inputs();
  auto expected = ReferenceExecutor(*parseGraph(kChain, "ints.gxir")).run(given);
  SimConfig config;
  config.memoryPerGpu = int64_t{1} << 30;
  expectBitForBit(SimExecutor(*graph, config).run(given).at("r"), expected.at("r"));
}

// From YAML: an integer `scalar` stays an int64 attribute (a double would round 2^53 + 1),
// and the default pipeline on cpu keeps the i64 op integer end to end.
TEST(IntegerElementwiseTest, AYamlIntegerScalarStaysExact) {
  const char* model =
      "gxc: 1\nname: ints\ninputs:\n  x: {shape: [3], dtype: i64}\nlayers:\n"
      "  - {name: y, op: add, inputs: [x], scalar: 9007199254740993}\n"
      "  - {name: z, op: mul, inputs: [y], scalar: -3}\noutputs: [z]\n";
  auto graph = loadModelFromString(model, "ints.yaml", GXC_SOURCE_DIR);
  PassContext context;
  context.target = Target::of({Device::cpu()});
  PassManager(defaultPipeline()).run(*graph, context);
  Tensor x(DType::I64, {3});
  const int64_t xs[3] = {0, -kOffset, kI64Max};
  for (int64_t i = 0; i < 3; ++i) x.storeInt(i, xs[i]);
  Tensor z = HostExecutor(*graph).run({{"x", x}}).at("z");
  ASSERT_EQ(z.dtype(), DType::I64);
  EXPECT_EQ(z.loadInt(0), -3 * kOffset);
  EXPECT_EQ(z.loadInt(1), 0);
  // (2^63 - 1 + 2^53 + 1) wraps to -2^63 + 2^53; times -3, modulo 2^64.
  EXPECT_EQ(z.loadInt(2), wrap(static_cast<uint64_t>(kI64Min + (int64_t{1} << 53)) * -3ULL));
}

}  // namespace
}  // namespace gxc
