// Internal to the ONNX importer's folding (onnx_fold.cpp: the nodes that move or make values;
// onnx_fold_arithmetic.cpp: arithmetic, comparisons and logic): what both use.
#pragma once

#include <optional>
#include <vector>

#include "frontend/onnx_node.h"
#include "tensor/tensor.h"

namespace gxc::onnx_fold {

bool isIntegral(DType dtype);  // i32, i64 and bool: folded in int64
std::vector<int64_t> stridesOf(const Shape& shape);
// The element of a tensor of shape `from`, broadcast to `shape`, at flat index `i` of `shape`.
int64_t broadcastIndex(const Shape& from, const Shape& shape, int64_t i);
// NumPy's broadcast of the inputs' shapes; the node fails where they do not broadcast.
Shape broadcastShape(OnnxNode& node, const std::vector<const Tensor*>& inputs);

// The node's arithmetic, comparison or logic op on its known inputs, in the dtype's own
// arithmetic; nullopt for an op this does not fold.
std::optional<Tensor> foldArithmetic(OnnxNode& node, const std::vector<const Tensor*>& in);

}  // namespace gxc::onnx_fold
