// layer_norm on the host through oneDNN's layer normalization primitive: x seen as rows of the
// normalized dims, each row's mean and variance and the weight and bias (where the op has them)
// in one vectorized pass over the cores. The generated kernel it replaces on the host sums in
// double, one row per block, and took 0.64 ms for a [1024, 512] f32 row set on one thread of
// this project's 2-core AVX-512 machine (two per transformer block).
//
// Numbers: the statistics are f32 (the kernel's are double), so results agree with the
// reference to f32 rounding, as PyTorch's own CPU layer norm does.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

// `op` is a layer_norm the host runs here (isHostLibraryRowOp, target/host_library.h);
// `operands` are x and the optional weight and bias, as the op's; `result` is its result.
void cpuLayerNorm(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result);

}  // namespace gxc
