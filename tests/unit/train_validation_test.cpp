// A classifier's validation accuracy counts a target as torch does `(scores.argmax(1) ==
// target)`: the first class of the highest score on ties, the first NaN above any number,
// targets equal to ignore_index left out, and class dims after dim 1 (scores [N, C, L]).
#include <cmath>

#include <gtest/gtest.h>

#include "tools/driver/train_validation.h"

namespace gxc {
namespace {

Tensor classIndices(Shape shape, const std::vector<int64_t>& values) {
  Tensor tensor(DType::I64, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) tensor.storeInt(static_cast<int64_t>(i), values[i]);
  return tensor;
}

TEST(TrainValidationTest, AccuracyPicksClassesAsTorchArgmax) {
  const float nan = std::nanf("");
  // Rows: a clear winner (class 2), a tie of classes 0 and 2 (argmax: 0), a NaN at class 1
  // beside a larger number (argmax: 1), two NaN (the first, 0), and a row left out.
  Tensor scores = Tensor::fromFloats(
      DType::F32, {5, 3},
      {0.1f, 0.2f, 0.9f, 0.5f, -1.0f, 0.5f, 3.0f, nan, 9.0f, nan, 1.0f, nan, 0.0f, 0.0f, 1.0f});
  ClassTally tally = tallyClasses(scores, classIndices({5}, {2, 0, 1, 0, -100}), -100);
  EXPECT_EQ(tally.counted, 4);
  EXPECT_EQ(tally.correct, 4);
  tally = tallyClasses(scores, classIndices({5}, {1, 2, 2, 1, 7}), 7);
  EXPECT_EQ(tally.counted, 4);
  EXPECT_EQ(tally.correct, 0);
}

TEST(TrainValidationTest, AccuracyOfScoresWithDimsAfterTheClasses) {
  // [N = 1, C = 2, L = 3]: position 0 picks class 1, position 1 class 0, position 2 class 1.
  Tensor scores = Tensor::fromFloats(DType::F32, {1, 2, 3}, {0.0f, 5.0f, -2.0f, 1.0f, 4.0f, 3.0f});
  ClassTally tally = tallyClasses(scores, classIndices({1, 3}, {1, 0, 0}), -100);
  EXPECT_EQ(tally.counted, 3);
  EXPECT_EQ(tally.correct, 2);
}

}  // namespace
}  // namespace gxc
