// A tensor of normally distributed values from a fixed seed, for tests that compare a library
// call (cuBLASLt, oneDNN) with the reference interpreter on the same operands.
#pragma once

#include <random>

#include "tensor/tensor.h"

namespace gxc {

inline Tensor randomTensor(DType dtype, const Shape& shape, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  Tensor tensor(dtype, shape);
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.storeFloat(i, normal(generator));
  return tensor;
}

}  // namespace gxc
