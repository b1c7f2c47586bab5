// conv2d and conv_transpose2d on the host through oneDNN (the library PyTorch's CPU path uses;
// its convolution and deconvolution primitives): the `cpu` and `sim` platforms' convolutions,
// as cpu_gemm.h is their GEMMs. f16/bf16 operands are widened to f32 and the result rounded
// once, as the reference does; f64 is not taken (oneDNN has no f64 convolution: the caller
// runs the generated kernel for it). The result is written into `result` (the op's result
// type, placed by the caller), which must not overlap an operand.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "runtime/host/constant_weights.h"
#include "runtime/host/conv_post_ops.h"
#include "runtime/host/step_tensors.h"
#include "tensor/tensor.h"

namespace gxc {

// `constant`, where given, holds the weights reordered once into the primitive's layout if
// they are constant (f32 only); else they are reordered at every call.
void cpuConvolution(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
                    ConstantWeights* constant = nullptr, const ConvLayouts& layouts = {});

// A fused convolution (ir/fused_kernel.h): conv2d `op` and its epilogue members (batch_norm,
// relu, residual adds, in order) as one oneDNN primitive with post-ops, the convolution's
// result never stored before them, then the clamps and hardswishes that end the chain over the
// result.
// `tensors` holds every value the members read from outside the kernel. Returns false, having
// computed nothing, where the post-ops do not apply (a result other than f32, a clamp before
// another member): the caller runs the convolution and then the epilogue's kernel.
// Whether cpuConvolutionWithEpilogue computes conv2d `op` with `epilogue` (rather than
// returning false): an f32 convolution, clamps only at the end, and for a residual add a fast
// oneDNN implementation.
bool cpuConvolutionTakesEpilogue(const Op& op, const std::vector<const Op*>& epilogue);

bool cpuConvolutionWithEpilogue(const Op& op, const std::vector<ConstTensorView>& operands,
                                TensorView result, ConstantWeights* constant,
                                const std::vector<const Op*>& epilogue, const StepTensors& tensors,
                                const ConvLayouts& layouts = {});

}  // namespace gxc
