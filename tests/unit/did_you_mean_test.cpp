// Tests of the "did you mean" spelling helper: what counts as close, and what does not.
#include "ir/did_you_mean.h"

#include <string_view>

#include <gtest/gtest.h>

namespace gxc {
namespace {

TEST(DidYouMeanTest, DistanceIgnoresCaseAndSeparators) {
  EXPECT_EQ(spellingDistance("Conv2d", "conv2d"), 0u);
  EXPECT_EQ(spellingDistance("batchnorm", "batch_norm"), 0u);
  EXPECT_EQ(spellingDistance("batch-size", "batch_size"), 0u);
  EXPECT_EQ(spellingDistance("relu", "rleu"), 1u);  // a swap of neighbours is one edit
  EXPECT_EQ(spellingDistance("device", "devices"), 1u);
  EXPECT_EQ(spellingDistance("outputs", "inputs"), 3u);
  EXPECT_EQ(spellingDistance("f8", "f16"), 2u);
  EXPECT_EQ(spellingDistance("", "abc"), 3u);
}

TEST(DidYouMeanTest, SuggestsOnlyANearMiss) {
  constexpr std::string_view kOps[] = {"batch_norm", "conv2d",     "cross_entropy",
                                       "inputs",     "max_pool2d", "relu"};
  EXPECT_EQ(closestName("batchnorm", kOps), "batch_norm");
  EXPECT_EQ(closestName("BatchNorm2d", kOps), "batch_norm");
  EXPECT_EQ(closestName("Conv2d", kOps), "conv2d");
  EXPECT_EQ(closestName("MaxPool2d", kOps), "max_pool2d");
  EXPECT_EQ(closestName("CrossEntropyLoss", kOps), "cross_entropy");
  EXPECT_EQ(closestName("rleu", kOps), "relu");
  // Another word of the same shape, or nothing alike: no guess.
  EXPECT_EQ(closestName("outputs", kOps), std::nullopt);
  EXPECT_EQ(closestName("convolution", kOps), std::nullopt);
  EXPECT_EQ(closestName("x", kOps), std::nullopt);
  constexpr std::string_view kDTypes[] = {"f16", "f32", "f64"};
  EXPECT_EQ(closestName("f8", kDTypes), std::nullopt);  // NumPy's f8 is float64, not f16
  EXPECT_EQ(didYouMean("batchnorm", kOps), " (did you mean 'batch_norm'?)");
  EXPECT_EQ(didYouMean("convolution", kOps), "");
}

TEST(DidYouMeanTest, TiesGoToTheEarlierName) {
  constexpr std::string_view kNames[] = {"abcd", "abce"};
  EXPECT_EQ(closestName("abcf", kNames), "abcd");
}

TEST(DidYouMeanTest, DTypeHints) {
  EXPECT_EQ(unknownDTypeHint("float64"), " (did you mean 'f64'?)");
  EXPECT_EQ(unknownDTypeHint("torch.long"), " (did you mean 'i64'?)");
  EXPECT_EQ(unknownDTypeHint("F32"), " (did you mean 'f32'?)");
  EXPECT_EQ(unknownDTypeHint("f8"), " (f32, f64, f16, bf16, i32, i64, bool)");
}

TEST(DidYouMeanTest, OpHints) {
  EXPECT_EQ(unknownOpHint("layernorm"), " (did you mean 'layer_norm'?)");
  EXPECT_EQ(unknownOpHint("convolution"), " (the ops are listed in docs/model-format.md, \"Ops\")");
}

}  // namespace
}  // namespace gxc
