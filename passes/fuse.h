// fuse: chains and trees of elementwise ops on one device become one kernel; softmax,
// log_softmax, layer_norm and the reductions become one kernel with their elementwise
// neighbours; a GEMM's bias, activation and residual add fold into it as the libraries'
// epilogues (oneDNN's post-ops on the host, cuBLASLt's bias and activation on a GPU); a
// convolution's batch_norm, relu and residual add as oneDNN's post-ops.
//
// Requires: every value typed and placed; every edge between devices an explicit copy
//   (after insert-copies and batch-transfers); the op order is the execution order.
// Guarantees: the members of each fused kernel carry `kernel = "kN"`, N numbered from 0 in
//   op order, and every kernel keeps the rules of ir/fused_kernel.h (contiguous, one device,
//   one escaping result, at most one anchor, a GEMM only first and followed only by its
//   epilogue). A kernel has two members or more: an op alone carries no `kernel`, being its
//   own kernel anyway. Nothing else changes but the op order, in which the members of a
//   kernel move down to just before its last member (every operand stays defined before it
//   is used). Ops without a type or a device are left alone.
// Idempotent: yes: the kernels are a function of the dataflow graph, not of the op order, and
//   a fused graph is already in the order the pass would give it.
#pragma once

#include "passes/pass.h"

namespace gxc {

class FusePass : public Pass {
 public:
  std::string_view name() const override { return "fuse"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
