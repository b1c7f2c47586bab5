// matmul and linear on the host: the `cpu` platform's GEMMs. f32 runs oneDNN's matmul
// (onednn_matmul.h), with a fused epilogue as its post-ops; f64 OpenBLAS's cblas_dgemm, in
// double throughout; f16/bf16 operands are widened to f32 and the result rounded once, as the
// reference does.
// The result is written into `result` (the op's result type, already placed by the caller),
// which must not overlap an operand.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "runtime/host/constant_weights.h"
#include "runtime/host/step_tensors.h"
#include "tensor/tensor.h"

namespace gxc {

// `constant`, where given, holds the weights (a linear layer's, a matmul's 2-D B) packed once
// if they are constant (f32 only).
void cpuMatmul(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
               ConstantWeights* constant = nullptr);
void cpuLinear(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
               ConstantWeights* constant = nullptr);

// A fused GEMM kernel (ir/fused_kernel.h) whole: the GEMM `op` with `epilogue`, the members
// after it in order, as oneDNN's bias and post-ops (gelu, residual adds), applied before the
// product is stored; `tensors` holds every value the members read from outside. False, having
// written nothing, where they do not apply (a tensor not f32, an empty GEMM, a relu: oneDNN's
// makes NaN 0): the caller then runs the GEMM and its generated epilogue kernel.
bool cpuGemmWithEpilogue(const Op& op, const std::vector<ConstTensorView>& operands,
                         TensorView result, ConstantWeights* constant,
                         const std::vector<const Op*>& epilogue, const StepTensors& tensors);

}  // namespace gxc
