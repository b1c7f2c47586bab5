// Param shards (ir/param_shard.h): a shard materializes exactly the slice of the whole
// param's values, under every init and from a weights file, without the whole param; and
// the verifier refuses shard attributes that do not describe the op's type.
#include "ir/param_shard.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "runtime/param_init.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

// A whole param's attributes under `init`.
Attrs paramAttrs(const std::string& init, const std::string& file = "") {
  Attrs attrs;
  attrs.set("name", std::string("layer.weight"));
  attrs.set("init", init);
  attrs.set("seed", int64_t{7});
  if (init == "normal") {
    attrs.set("mean", 0.5);
    attrs.set("std", 2.0);
  }
  if (init == "uniform") {
    attrs.set("low", -1.0);
    attrs.set("high", 3.0);
  }
  if (init == "file") attrs.set("file", file);
  return attrs;
}

// Element `index` (row-major) of the slice [start, end) along `axis` of `whole`.
float sliceElement(const Tensor& whole, int64_t axis, int64_t start, int64_t end, int64_t index) {
  const Shape& shape = whole.shape();
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  int64_t length = end - start;
  int64_t outer = index / (length * inner), within = index % (length * inner);
  return whole.loadFloat((outer * shape[static_cast<size_t>(axis)] + start) * inner + within);
}

// Every shard of a [5,7,3] param along every axis, odd and even starts, equals the slice.
void expectShardsAreSlices(const Attrs& attrs) {
  const Shape full = {5, 7, 3};
  Graph graph("g");
  Op* whole = graph.appendOp(OpKind::Param, {}, "whole", TensorType::of(DType::F32, full), attrs);
  WeightFiles files;
  Tensor wholeValue = materializeParam(*whole, files);
  for (int64_t axis = 0; axis < 3; ++axis)
    for (int64_t start = 0; start < full[static_cast<size_t>(axis)]; ++start)
      for (int64_t end = start + 1; end <= full[static_cast<size_t>(axis)]; end += 2) {
        Attrs shardAttrs = attrs;
        setParamShard(shardAttrs, {full, axis, start, end});
        Shape shape = full;
        shape[static_cast<size_t>(axis)] = end - start;
        Op* shard = graph.appendOp(OpKind::Param, {}, graph.uniqueName("shard"),
                                   TensorType::of(DType::F32, shape), shardAttrs);
        ASSERT_EQ(paramShardProblem(*shard), std::nullopt);
        Tensor value = materializeParam(*shard, files);
        ASSERT_EQ(value.shape(), shape);
        for (int64_t i = 0; i < value.numel(); ++i)
          ASSERT_EQ(value.loadFloat(i), sliceElement(wholeValue, axis, start, end, i))
              << attrs.getString("init", "") << " axis " << axis << " [" << start << ", " << end
              << ") element " << i;
      }
}

TEST(ParamShardTest, InitShardsAreSlicesOfTheWholeParam) {
  for (const char* init : {"normal", "uniform", "ones", "zeros"})
    expectShardsAreSlices(paramAttrs(init));
}

TEST(ParamShardTest, FileShardsReadOnlyTheirSlice) {
  std::string pattern = (fs::temp_directory_path() / "gxc-param-shard-test-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  std::string path = (fs::path(pattern) / "weights.safetensors").string();
  Tensor weights(DType::F32, {5, 7, 3});
  for (int64_t i = 0; i < weights.numel(); ++i) weights.storeFloat(i, static_cast<float>(i) / 4);
  writeSafetensors(path, {{"layer.weight", weights}});
  expectShardsAreSlices(paramAttrs("file", path));
  fs::remove_all(pattern);
}

TEST(ParamShardTest, VerifierRefusesShardsThatAreNotTheirType) {
  auto problem = [](const Attrs& extra, const Shape& shape) {
    Graph graph("g");
    Attrs attrs = paramAttrs("zeros");
    for (const auto& [name, value] : extra.all()) attrs.set(name, value);
    Op* param = graph.appendOp(OpKind::Param, {}, "p", TensorType::of(DType::F32, shape), attrs);
    return schemaProblem(*param).value_or("");
  };
  Attrs good;
  setParamShard(good, {{10, 4}, 1, 1, 3});
  EXPECT_EQ(problem(good, {10, 2}), "");
  EXPECT_EQ(problem(good, {10, 3}), "a shard [1, 3) along axis 1 of [10,4] is [10,2], not [10,3]");
  Attrs partial;
  partial.set("shard_axis", int64_t{0});
  EXPECT_EQ(problem(partial, {10, 4}),
            "a param shard needs all of full_shape, shard_axis, shard_start and shard_end");
  Attrs empty;
  setParamShard(empty, {{10, 4}, 0, 5, 5});
  EXPECT_EQ(problem(empty, {0, 4}), "shard [5, 5) is not a non-empty range of the 10 along axis 0");
  Attrs axis;
  setParamShard(axis, {{10, 4}, 2, 0, 1});
  EXPECT_EQ(problem(axis, {10, 4}), "shard_axis 2 is not an axis of full_shape [10,4]");
}

}  // namespace
}  // namespace gxc
