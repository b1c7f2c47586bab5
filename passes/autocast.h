// autocast: mixed precision as torch.autocast(dtype=torch.bfloat16) trains a module: the
// matmuls and convolutions in bf16, on f32 master weights; everything else in f32.
//
// Requires: a typed graph (after infer-shapes), before train-mode, data-parallel and
//   autodiff (so that the backward of each cast is a cast, and every shard of a split layer
//   computes as the layer did). The graph attribute `autocast`: "bf16", or absent (the pass
//   then changes nothing).
// Guarantees: each linear, matmul, conv2d and conv_transpose2d of an f32 result reads each of
//   its f32 operands (activations, weights, bias) through a `cast` to bf16 named
//   LAYER.autocast (.1, .2, ...), computes in bf16 (torch's autocast list of such ops on the
//   CPU), and its readers and outputs read it through a `cast` back to f32, LAYER.f32. So
//   params stay f32 (their gradients come back through the casts in f32, and the optimizer
//   updates f32 masters), and every other op (norms, softmax, losses, reductions, elementwise
//   ops) runs in f32. Where torch keeps a bf16 activation flowing into the next elementwise op,
//   this gives it f32: the results are those of torch's bf16 run to bf16's precision, not bit
//   for bit. The new ops carry the layer's loc.
// Errors: an `autocast` other than "bf16" (f16 is not supported yet).
// Idempotent: yes: a layer reading bf16 operands is left as it is.
#pragma once

#include "passes/pass.h"

namespace gxc {

class AutocastPass : public Pass {
 public:
  std::string_view name() const override { return "autocast"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
