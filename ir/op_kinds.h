// The op set of model format v1 plus the ops the compiler itself introduces, with the
// schema the verifier checks: how many operands, which attributes of which kind.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/attributes.h"

namespace gxc {

// Format 1.1's reductions, losses and normalizations (a list of their own, so that the ops
// other work adds at the end of GXC_OP_KINDS do not collide with these).
#define GXC_OP_KINDS_REDUCTIONS_LOSSES(X)              \
  X(Min, "min")                                        \
  X(Prod, "prod")                                      \
  X(Argmax, "argmax")                                  \
  X(Argmin, "argmin")                                  \
  X(Logsumexp, "logsumexp")                            \
  X(Var, "var")                                        \
  X(Std, "std")                                        \
  X(NllLoss, "nll_loss")                               \
  X(BceWithLogits, "binary_cross_entropy_with_logits") \
  X(L1Loss, "l1_loss")                                 \
  X(SmoothL1Loss, "smooth_l1_loss")                    \
  X(RmsNorm, "rms_norm")                               \
  X(GroupNorm, "group_norm")                           \
  X(Dropout, "dropout")

// Format 1.1's `topk` layer, whose two results are two ops over the same operand: `topk` the
// values, `topk_indices` (compiler-only: a model names the layer `topk`) their i64 positions.
#define GXC_OP_KINDS_TOPK(X) \
  X(Topk, "topk")            \
  X(TopkIndices, "topk_indices")

#define GXC_OP_KINDS(X)                                        \
  X(Param, "param")                                            \
  X(Matmul, "matmul")                                          \
  X(Linear, "linear")                                          \
  X(Add, "add")                                                \
  X(Sub, "sub")                                                \
  X(Mul, "mul")                                                \
  X(Div, "div")                                                \
  X(Pow, "pow")                                                \
  X(Minimum, "minimum")                                        \
  X(Maximum, "maximum")                                        \
  X(Relu, "relu")                                              \
  X(Sigmoid, "sigmoid")                                        \
  X(Tanh, "tanh")                                              \
  X(Exp, "exp")                                                \
  X(Log, "log")                                                \
  X(Neg, "neg")                                                \
  X(Sqrt, "sqrt")                                              \
  X(Gelu, "gelu")                                              \
  X(Abs, "abs")                                                \
  X(Reciprocal, "reciprocal")                                  \
  X(Rsqrt, "rsqrt")                                            \
  X(Erf, "erf")                                                \
  X(Sin, "sin")                                                \
  X(Cos, "cos")                                                \
  X(Floor, "floor")                                            \
  X(Ceil, "ceil")                                              \
  X(Round, "round")                                            \
  X(Sign, "sign")                                              \
  X(Silu, "silu")                                              \
  X(Hardsigmoid, "hardsigmoid")                                \
  X(Hardswish, "hardswish")                                    \
  X(LeakyRelu, "leaky_relu")                                   \
  X(Elu, "elu")                                                \
  X(Softplus, "softplus")                                      \
  X(Clamp, "clamp")                                            \
  X(Softmax, "softmax")                                        \
  X(LogSoftmax, "log_softmax")                                 \
  X(LayerNorm, "layer_norm")                                   \
  X(Sum, "sum")                                                \
  X(Mean, "mean")                                              \
  X(Max, "max")                                                \
  X(Reshape, "reshape")                                        \
  X(Transpose, "transpose")                                    \
  X(Concat, "concat")                                          \
  X(Embedding, "embedding")                                    \
  X(To, "to")                                                  \
  X(MseLoss, "mse_loss")                                       \
  X(CrossEntropy, "cross_entropy")                             \
  X(Copy, "copy")                                              \
  X(Slice, "slice")                                            \
  X(Eq, "eq")                                                  \
  X(Ne, "ne")                                                  \
  X(Lt, "lt")                                                  \
  X(Le, "le")                                                  \
  X(Gt, "gt")                                                  \
  X(Ge, "ge")                                                  \
  X(LogicalAnd, "logical_and")                                 \
  X(LogicalOr, "logical_or")                                   \
  X(LogicalNot, "logical_not")                                 \
  X(Where, "where")                                            \
  X(MaskedFill, "masked_fill")                                 \
  X(Cast, "cast")                                              \
  X(ScaledDotProductAttention, "scaled_dot_product_attention") \
  /* data movement (format 1.1) */                             \
  X(Split, "split")                                            \
  X(Chunk, "chunk")                                            \
  X(Squeeze, "squeeze")                                        \
  X(Unsqueeze, "unsqueeze")                                    \
  X(Flatten, "flatten")                                        \
  X(Expand, "expand")                                          \
  X(Triu, "triu")                                              \
  X(Tril, "tril")                                              \
  X(Gather, "gather")                                          \
  X(IndexSelect, "index_select")                               \
  X(OneHot, "one_hot")                                         \
  X(Pad, "pad")                                                \
  X(Repeat, "repeat")                                          \
  X(Cumsum, "cumsum")                                          \
  GXC_OP_KINDS_REDUCTIONS_LOSSES(X)                            \
  X(Conv2d, "conv2d")                                          \
  /* pooling (format 1.1) */                                   \
  X(MaxPool2d, "max_pool2d")                                   \
  X(AvgPool2d, "avg_pool2d")                                   \
  X(AdaptiveAvgPool2d, "adaptive_avg_pool2d")                  \
  /* batch_norm (format 1.1) */                                \
  X(BatchNorm, "batch_norm")                                   \
  GXC_OP_KINDS_TOPK(X)                                         \
  X(ConvTranspose2d, "conv_transpose2d")                       \
  /* training (format 1.1): compiler-only */                   \
  X(Assign, "assign")                                          \
  X(MaxPool2dBackward, "max_pool2d_backward")                  \
  X(AvgPool2dBackward, "avg_pool2d_backward")

enum class OpKind {
#define GXC_ENUM(id, name) id,
  GXC_OP_KINDS(GXC_ENUM)
#undef GXC_ENUM
};

// Bit set of the AttrKinds an attribute accepts.
using AttrKindMask = unsigned;
constexpr AttrKindMask maskOf(AttrKind kind) { return 1u << static_cast<unsigned>(kind); }

struct AttrSpec {
  std::string_view name;
  AttrKindMask kinds;
  bool required = false;
  bool compilerOnly = false;  // set by passes, never a key of a model file
};

struct OpSchema {
  OpKind kind;
  std::string_view name;
  int minOperands;
  int maxOperands;  // -1: any number
  std::vector<AttrSpec> attrs;
};

const OpSchema& opSchema(OpKind kind);
std::string_view opName(OpKind kind);
std::optional<OpKind> parseOpKind(std::string_view name);
// Whether a model file may use the op: not `param` (params are declared) nor `copy`,
// `topk_indices`, `assign` or the pools' backward ops, which only the compiler introduces. (`slice`
// is both: a model layer, and how the compiler cuts batches and unpacks batched transfers.)
bool isModelOp(OpKind kind);
// Layers with several results: the frontend lowers `split` and `chunk` into one `slice` per
// result (so they never appear in the IR), `topk` into `topk` and `topk_indices`. (`max` with
// `indices: true` is one too, which its kind alone does not tell: frontend/layer_results.cpp.)
bool isMultiResultLayer(OpKind kind);
// Ops whose result is their operand's bytes seen with another shape (ir/kernel_steps.h).
bool isReshapeView(OpKind kind);  // reshape squeeze unsqueeze flatten
// Names of the ops a model file may use, sorted, for "unknown op" messages.
std::vector<std::string_view> modelOpNames();

// Attributes any op may carry once assign-streams has scheduled it: `stream` (the stream it
// runs on, "cuda:0.compute"), `wait` (event ids it waits for before it starts) and `record`
// (the event id it records when it is done); and once plan-memory has planned it, `offset`
// (an int: where its result starts in its device's arena, in bytes).
bool isScheduleAttr(std::string_view name);
// `kernel` (a string, "k0"), which any op may carry once fuse has made it a member of a fused
// kernel; ir/fused_kernel.h has the rules.
bool isKernelAttr(std::string_view name);

bool isElementwiseBinary(OpKind kind);  // add sub mul div pow minimum maximum
bool isElementwiseUnary(OpKind kind);   // relu ... sqrt, gelu ... softplus
// sum mean max min prod argmax argmin logsumexp var std: fold the elements along `axis` (all
// when absent) into one; argmax and argmin give i64 indices.
bool isReduction(OpKind kind);
bool isComparison(OpKind kind);  // eq ne lt le gt ge
// The elementwise ops whose operands and result may be of any dtype, bool included: the
// comparisons, logical_and logical_or logical_not, where, masked_fill, cast.
bool isElementwiseAnyDType(OpKind kind);
// Every elementwise op: one result element from the operand elements at its coordinates.
bool isElementwise(OpKind kind);
// batch_norm at inference: one result element from x's element and its channel's running
// mean and variance (and weight and bias), the params read at x's dim 1, not by NumPy
// broadcasting; so elementwise to the fuse pass and codegen, but none of the above.
bool isChannelwise(OpKind kind);
// The ops that take two operands, or one operand and the `scalar` attribute: the binary
// elementwise ones, the comparisons, logical_and and logical_or.
bool takesScalar(OpKind kind);

}  // namespace gxc
