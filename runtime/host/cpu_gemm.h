// matmul and linear on the host through OpenBLAS (cblas_sgemm): the `cpu` platform's GEMMs.
// f16/bf16 operands are widened to f32 and the result rounded once, as the reference does.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

Tensor cpuMatmul(const Op& op, const std::vector<const Tensor*>& operands);
Tensor cpuLinear(const Op& op, const std::vector<const Tensor*>& operands);

}  // namespace gxc
