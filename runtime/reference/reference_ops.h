// The reference interpreter: every op computed with plain loops on host tensors.
//
// This is the oracle that every backend (cpu kernels, sim, cuda) is tested against, so it
// favours being obviously right over being fast. f16 and bf16 tensors are stored as such but
// computed in f32 (sums, means and dot products accumulate in double) and rounded once, to
// nearest even, when stored. Data movement ops (reshape, transpose, concat, to, embedding)
// copy elements bit-exactly, whatever their dtype.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

// Computes `op` on host tensors. The op's result type (op.result->type: dtype and shape) has
// already been inferred and checked; the result must have exactly that dtype and shape.
Tensor evaluateReferenceOp(const Op& op, const std::vector<const Tensor*>& operands);

}  // namespace gxc
