// The host's f32 GEMM (runtime/host/onednn_matmul.h) against a double-precision loop: every
// transposition, with and without a bias, sizes that fit no vector width, an empty sum (k = 0)
// and empty results, on one thread and on two (a primitive is made per thread count), and two
// threads running the same shape at once (each keeps its own memory objects and scratchpad).
#include "runtime/host/onednn_matmul.h"

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace gxc {
namespace {

struct Case {
  bool transA, transB, bias;
  int64_t m, n, k;
};

std::vector<float> valuesOf(int64_t count, int seed) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    values[static_cast<size_t>(i)] = static_cast<float>(((i * 37 + seed * 11) % 23) - 11) / 8.0f;
  return values;
}

// Runs onednnSgemm (onednnSgemmConstantB where `constant` is given) on `c`'s operands, B made
// from `seedB`, and checks every element against the sum in double, to 1e-5 of the sum of its
// terms' magnitudes.
void expectMatchesLoop(const Case& c, ConstantWeights* constant = nullptr, int seedB = 2) {
  const std::vector<float> a = valuesOf(c.m * c.k, 1), b = valuesOf(c.k * c.n, seedB),
                           bias = valuesOf(c.n, 3);
  std::vector<float> out(static_cast<size_t>(c.m * c.n), -7.0f);
  if (constant)
    onednnSgemmConstantB(c.transA, c.transB, c.m, c.n, c.k, a.data(), b.data(),
                         c.bias ? bias.data() : nullptr, out.data(), *constant);
  else
    onednnSgemm(c.transA, c.transB, c.m, c.n, c.k, a.data(), b.data(),
                c.bias ? bias.data() : nullptr, out.data());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = c.bias ? bias[static_cast<size_t>(j)] : 0.0, magnitude = std::fabs(sum);
      for (int64_t p = 0; p < c.k; ++p) {
        const float x =
            c.transA ? a[static_cast<size_t>(p * c.m + i)] : a[static_cast<size_t>(i * c.k + p)];
        const float y =
            c.transB ? b[static_cast<size_t>(j * c.k + p)] : b[static_cast<size_t>(p * c.n + j)];
        sum += static_cast<double>(x) * y;
        magnitude += std::fabs(static_cast<double>(x) * y);
      }
      ASSERT_NEAR(out[static_cast<size_t>(i * c.n + j)], sum, 1e-5 * magnitude + 1e-7)
          << "transA " << c.transA << " transB " << c.transB << " bias " << c.bias << " m " << c.m
          << " n " << c.n << " k " << c.k << " at (" << i << ", " << j << ")";
    }
}

TEST(OnednnMatmulTest, EveryTranspositionWithAndWithoutBiasMatchesTheLoop) {
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (bool bias : {false, true})
        for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                               {3, 5, 7},
                               {64, 33, 17},
                               {17, 130, 300}})
          expectMatchesLoop({transA, transB, bias, m, n, k});
}

TEST(OnednnMatmulTest, AnEmptySumIsTheBiasOrZero) {
  expectMatchesLoop({false, true, true, 4, 6, 0});
  expectMatchesLoop({false, false, false, 4, 6, 0});
}

TEST(OnednnMatmulTest, AnEmptyResultWritesNothing) {
  std::vector<float> a(8, 1.0f), b(8, 1.0f), out(4, -7.0f);
  onednnSgemm(false, false, 0, 4, 2, a.data(), b.data(), nullptr, out.data());
  onednnSgemm(false, false, 4, 0, 2, a.data(), b.data(), nullptr, out.data());
  for (float value : out) EXPECT_EQ(value, -7.0f);
}

TEST(OnednnMatmulTest, OneThreadAndTwoGiveTheSameProduct) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    expectMatchesLoop({false, true, true, 96, 160, 200});
  }
  omp_set_num_threads(saved);
}

TEST(OnednnMatmulTest, TwoThreadsRunTheSameShapeAtOnce) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([] {
      for (int repeat = 0; repeat < 5; ++repeat) expectMatchesLoop({true, false, true, 48, 40, 56});
    });
  for (std::thread& thread : threads) thread.join();
}

TEST(OnednnMatmulTest, AConstantBPackedMatchesTheLoop) {
  for (bool transB : {false, true})
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                           {3, 5, 7},
                           {64, 130, 300},
                           {64, 512, 512}}) {
      ConstantWeights constant;
      expectMatchesLoop({false, transB, true, m, n, k}, &constant);
    }
}

TEST(OnednnMatmulTest, APackedBIsReadInsteadOfTheBytesItCameFrom) {
  // The wide MLP's layout: B is a linear layer's [out, in] weights, used transposed.
  const int64_t m = 64, n = 512, k = 512;
  std::vector<float> a = valuesOf(m * k, 1), b = valuesOf(k * n, 2), first(m * n), second(m * n);
  ConstantWeights constant;
  onednnSgemmConstantB(false, true, m, n, k, a.data(), b.data(), nullptr, first.data(), constant);
  ASSERT_GT(constant.packedBytes(), 0) << "oneDNN took B as it was: nothing to test";
  std::fill(b.begin(), b.end(), 0.0f);
  onednnSgemmConstantB(false, true, m, n, k, a.data(), b.data(), nullptr, second.data(), constant);
  EXPECT_EQ(first, second);
  constant.forgetPacked();
  onednnSgemmConstantB(false, true, m, n, k, a.data(), b.data(), nullptr, second.data(), constant);
  EXPECT_EQ(second, std::vector<float>(m * n, 0.0f));
}

}  // namespace
}  // namespace gxc
