// softmax and log_softmax on the host through oneDNN's softmax primitive, along the last axis
// (or one that only dims of 1 follow): x seen as rows along that axis. The generated kernel it
// replaces on the host sums in double, one row per block. On this project's 2-core AVX-512
// machine, a softmax over [8192, 128] then a small linear took 4.6-4.9 ms on one thread with
// the kernel and 1.24 ms here (2.3-2.4 and 0.64-0.99 on two); with log_softmax, 2.45 and
// 1.35-1.52. Along an inner axis oneDNN 2.6 has only its reference implementation (58 ms for
// [64, 128, 128] along axis 1, against the kernel's 8), so the kernel keeps those.
// Attention's scores use it too (cpu_attention.h).
//
// Numbers: f32 throughout (the kernel's sums are double), so results agree with the reference
// to f32 rounding, as PyTorch's own CPU softmax does; a row of -inf only, or holding a NaN or
// +inf, is NaN, as there.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

// Softmax (or, `logarithmic`, log_softmax) of each of `rows` rows of `length` f32 elements,
// dense and row-major, from `in` to `out`, which may be the same. A row holding a NaN or +inf,
// or of -inf only, is NaN, as in torch.
void onednnSoftmax(bool logarithmic, int64_t rows, int64_t length, const float* in, float* out);

// `op` is a softmax or log_softmax the host runs here (isHostLibraryRowOp,
// target/host_library.h); `operands` is x alone, as the op's; `result` is its result.
void cpuSoftmax(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result);

}  // namespace gxc
