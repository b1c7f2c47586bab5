// Comparing a run's outputs with the reference's: the same names and shapes, and every
// element within `tolerance` relative to max(1, |expected|); a NaN is always a failure.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "runtime/tensor.h"

namespace gxc {

inline void expectOutputsClose(const std::map<std::string, Tensor>& actual,
                               const std::map<std::string, Tensor>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [name, want] : expected) {
    const Tensor& got = actual.at(name);
    ASSERT_EQ(got.shape(), want.shape()) << name;
    double worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      double a = got.loadFloat(i), b = want.loadFloat(i);
      double error = std::abs(a - b) / std::max(1.0, std::abs(b));
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
    EXPECT_LE(worst, tolerance) << name;
  }
}

}  // namespace gxc
