// Internal to the reference interpreter: one function per family of ops, and the index
// arithmetic they share. Only reference_ops.cpp dispatches to these.
//
// Every kernel recomputes the result shape from its operands and attributes and checks it
// against the inferred one: a disagreement between shape inference and the oracle is a gxc
// bug, reported as such rather than silently producing a tensor of the wrong layout.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc::reference {

using Operands = std::vector<const Tensor*>;
using Coords = std::vector<int64_t>;

// A zero-filled tensor of the op's inferred result type, after checking that type against
// the `shape` the kernel computed.
Tensor makeResult(const Op& op, const Shape& shape);
// Every operand in `indices` is a float tensor, all of one dtype (a gxc bug otherwise).
void checkFloatOperands(const Op& op, const Operands& operands, const std::vector<size_t>& indices);
void checkOperandCount(const Op& op, const Operands& operands, size_t min, size_t max);

// `axis` in [-rank, rank) mapped to [0, rank).
int64_t normalizeAxis(const Op& op, int64_t axis, int64_t rank);
// Row-major coordinates of flat `index` in `shape`, and back.
Coords unravelIndex(int64_t index, const Shape& shape);
int64_t ravelIndex(const Coords& coords, const Shape& shape);
// NumPy broadcasting of two shapes (aligned at the last dim; a size-1 dim stretches).
Shape broadcastShapes(const Op& op, const Shape& a, const Shape& b);
// Flat index into a tensor of `shape` of the element that broadcasting pairs with the
// coordinates `outCoords` of the broadcast result (which has at least as many dims).
int64_t broadcastIndex(const Coords& outCoords, const Shape& shape);
// Copies element `srcIndex` of `src` to element `dstIndex` of `dst`, bit for bit.
void copyElement(const Tensor& src, int64_t srcIndex, Tensor& dst, int64_t dstIndex);
// Stores `value`, computed in double, into float tensor `t`: as it is for f64; for the other
// dtypes rounded to f32 first, then to the dtype, as the kernels computing them in f32 round.
void storeComputed(Tensor& t, int64_t index, double value);

// reference_elementwise.cpp
Tensor unaryOp(const Op& op, const Operands& operands);
Tensor binaryOp(const Op& op, const Operands& operands);
// reference_logic.cpp
Tensor compareOp(const Op& op, const Operands& operands);  // eq ne lt le gt ge
Tensor logicalOp(const Op& op, const Operands& operands);  // logical_and logical_or logical_not
Tensor whereOp(const Op& op, const Operands& operands);
Tensor maskedFillOp(const Op& op, const Operands& operands);
Tensor castOp(const Op& op, const Operands& operands);
// reference_matmul.cpp
Tensor matmulOp(const Op& op, const Operands& operands);
Tensor linearOp(const Op& op, const Operands& operands);
// reference_norm.cpp
Tensor softmaxOp(const Op& op, const Operands& operands);  // softmax and log_softmax
Tensor layerNormOp(const Op& op, const Operands& operands);
// reference_reduce.cpp
Tensor reduceOp(const Op& op, const Operands& operands);  // every isReduction op
// reference_movement.cpp
Tensor reshapeOp(const Op& op, const Operands& operands);
Tensor transposeOp(const Op& op, const Operands& operands);
Tensor concatOp(const Op& op, const Operands& operands);
Tensor sliceOp(const Op& op, const Operands& operands);
Tensor copyOp(const Op& op, const Operands& operands);
Tensor embeddingOp(const Op& op, const Operands& operands);
// reference_movement_more.cpp
Tensor expandOp(const Op& op, const Operands& operands);
Tensor triangleOp(const Op& op, const Operands& operands);  // triu and tril
// reference_indexing.cpp
Tensor gatherOp(const Op& op, const Operands& operands);
Tensor indexSelectOp(const Op& op, const Operands& operands);
Tensor oneHotOp(const Op& op, const Operands& operands);
Tensor padOp(const Op& op, const Operands& operands);
Tensor repeatOp(const Op& op, const Operands& operands);
Tensor cumsumOp(const Op& op, const Operands& operands);
// reference_topk.cpp
Tensor topkOp(const Op& op, const Operands& operands);  // topk and topk_indices
// reference_conv.cpp
Tensor conv2dOp(const Op& op, const Operands& operands);
Tensor convTranspose2dOp(const Op& op, const Operands& operands);
// reference_pool.cpp: max_pool2d, avg_pool2d, adaptive_avg_pool2d and their backward ops
Tensor pool2dOp(const Op& op, const Operands& operands);
// max_pool2d_backward, avg_pool2d_backward: (x, dy)
Tensor pool2dBackwardOp(const Op& op, const Operands& operands);
// reference_loss.cpp
enum class LossReduction { None, Sum, Mean };
LossReduction lossReduction(const Op& op);
// mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy_with_logits
Tensor elementwiseLossOp(const Op& op, const Operands& operands);
// reference_loss_class.cpp: nll_loss, cross_entropy
Tensor classIndexLossOp(const Op& op, const Operands& operands);
// reference_norm.cpp (layer_norm above), reference_norm_more.cpp
Tensor rmsNormOp(const Op& op, const Operands& operands);
Tensor groupNormOp(const Op& op, const Operands& operands);
Tensor batchNormOp(const Op& op, const Operands& operands);
Tensor dropoutOp(const Op& op, const Operands& operands);  // both forms
// reference_attention.cpp
Tensor attentionOp(const Op& op, const Operands& operands);

}  // namespace gxc::reference
