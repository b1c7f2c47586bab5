// The geometry of max_pool2d, avg_pool2d and adaptive_avg_pool2d, read from the op's attributes
// (kernel_size, stride, padding and output_size are each an int or an [h, w] pair) and x's
// shape ([N, C, H, W], or [C, H, W] as PyTorch also takes). Every layer (shape inference, the
// reference, the generated kernel, the cost model) reads it from here, so that they agree on
// PyTorch's rules (ATen's pooling_output_shape and pool2d_shape_check):
//   out = floor((in + 2 * pad - kernel + (ceil_mode ? stride - 1 : 0)) / stride) + 1,
//   less one when ceil_mode's last window would start past the input and its left padding;
// padding at most half the kernel; an adaptive window i of `out` over `in` is
//   [floor(i * in / out), ceil((i + 1) * in / out)).
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace gxc {

bool isPool2d(OpKind kind);  // max_pool2d, avg_pool2d, adaptive_avg_pool2d
// max_pool2d_backward, avg_pool2d_backward: (x, dy), the geometry of the pool of x they undo.
bool isPool2dBackward(OpKind kind);

struct PoolGeometry {
  int64_t planes = 0;  // N * C: each [H, W] plane is pooled alone
  int64_t inH = 0, inW = 0, outH = 0, outW = 0;
  // The fixed windows of max_pool2d and avg_pool2d (adaptive_avg_pool2d's are computed).
  int64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, padH = 0, padW = 0;
  bool adaptive = false;
  bool countIncludePad = true;  // avg_pool2d: divide by the window's size, padding included
};

// Requires a pool op (or a pool's backward op) whose operand type is known. Attribute values or
// shapes that do not fit (x not of rank 3 or 4, padding over half the kernel, a kernel larger than
// the padded input) are the model's error, reported at the layer.
PoolGeometry pool2dGeometry(const Op& op);

// The result's shape: x's leading dims, then [outH, outW].
Shape pool2dResultShape(const Op& op, const PoolGeometry& g);

// Shape inference's: a pool's result shape; a pool's backward op's (x, dy) x's shape, once dy
// is of the pool's result's shape and x's dtype (else the model's error at the layer).
Shape inferPool2dShape(const Op& op);

// Where adaptive window `index` of `outSize` over `inSize` starts and ends (exclusive).
inline int64_t adaptiveWindowStart(int64_t index, int64_t inSize, int64_t outSize) {
  return index * inSize / outSize;
}
inline int64_t adaptiveWindowEnd(int64_t index, int64_t inSize, int64_t outSize) {
  return ((index + 1) * inSize + outSize - 1) / outSize;
}

// The elements every output reads, over all outputs (padding not counted): the work of a pool.
double pool2dWindowElements(const PoolGeometry& g);

}  // namespace gxc
