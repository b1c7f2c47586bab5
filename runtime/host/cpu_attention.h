// scaled_dot_product_attention on the host as three library calls: the scores of a group of
// batch entries by one oneDNN batched matmul (q k^T, times the scale), the mask and the
// causal bound applied to them, oneDNN's softmax along the keys, then one batched matmul by v
// straight into the result. Where the generated attention kernel (codegen's FlashAttention
// recurrence) runs one query row per block in scalar double arithmetic, this runs at the
// machine's GEMM rate on every core, at the cost of storing the scores: batch entries go in
// groups whose scores fit kAttentionScratchBytes.
//
// Numbers: f32 throughout (the kernel accumulates in double), so results agree with the
// reference to f32 GEMM rounding, not bit for bit. A query row that attends no key is NaN, as
// the reference and torch give.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

constexpr int64_t kAttentionScratchBytes = int64_t{16} << 20;

// Whether `op` (an attention) runs here rather than in its generated kernel on the host: f32,
// and enough work (q k^T multiply-adds) that the library calls' fixed costs do not dominate.
bool cpuAttentionPays(const Op& op);

// `operands` are q, k, v and the optional mask, as the op's; `result` its result type.
void cpuAttention(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result);

}  // namespace gxc
