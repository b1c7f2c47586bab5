// The row ops the host runs as oneDNN primitives rather than generated kernels: what the fuse
// pass and the cpu platform (and the host side of sim) must agree on.
//
// An f32 layer_norm, and an f32 softmax or log_softmax along its last axis (or one only dims
// of 1 follow), alone in its step, is one oneDNN primitive on the host
// (runtime/host/cpu_layer_norm.h, cpu_softmax.h): 3-5x faster than the generated row kernel,
// which sums each row in double, one row per block. With a prologue or a tail fused in, the op
// is a generated row kernel, so on the host the fuse pass leaves these ops alone (their
// elementwise neighbours become a kernel of their own: one more pass over the tensor, far less
// than what the library saves). On a GPU, and in other dtypes or along an inner axis, they fuse
// as every row op does.
#pragma once

#include "ir/graph.h"

namespace gxc {

// Whether `op` is a layer_norm, softmax or log_softmax that the host runs in oneDNN when it is
// alone in its step: f32, not empty, and (softmax, log_softmax) along the last axis.
bool isHostLibraryRowOp(const Op& op);

}  // namespace gxc
