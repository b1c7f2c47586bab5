// Comparing a run's outputs with the reference's: the same names and shapes, and every
// element within `tolerance` relative to max(1, |expected|), or, normwise, relative to
// max(1, the largest |expected| of that output); a NaN is always a failure.
//
// Normwise is for runs whose GEMMs are a library's, oneDNN's or OpenBLAS's (the cpu platform,
// and sim, which runs the same generated kernels): a float32 dot product summed in BLAS's order
// differs from the reference's double sum by rounding relative to its terms, not to its result,
// which long sums of N(0, 1) terms can cancel to near zero.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tensor/tensor.h"

namespace gxc {

inline void expectOutputsClose(const std::map<std::string, Tensor>& actual,
                               const std::map<std::string, Tensor>& expected, double tolerance,
                               bool normwise = false) {
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [name, want] : expected) {
    const Tensor& got = actual.at(name);
    ASSERT_EQ(got.shape(), want.shape()) << name;
    ASSERT_EQ(got.dtype(), want.dtype()) << name;
    double largest = 1.0;
    for (int64_t i = 0; normwise && i < want.numel(); ++i)
      largest = std::max(largest, std::abs(want.loadDouble(i)));
    double worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      double a = got.loadDouble(i), b = want.loadDouble(i);  // exact for f64 too
      double error = std::abs(a - b) / std::max(largest, std::abs(b));
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
    EXPECT_LE(worst, tolerance) << name;
  }
}

inline void expectOutputsCloseNormwise(const std::map<std::string, Tensor>& actual,
                                       const std::map<std::string, Tensor>& expected,
                                       double tolerance) {
  expectOutputsClose(actual, expected, tolerance, /*normwise=*/true);
}

}  // namespace gxc
