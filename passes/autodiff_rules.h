// The gradient rule of each op, for the autodiff pass (passes/autodiff.h).
//
// A rule appends, at the end of the graph, the ops that compute the gradients of an op's
// operands from the gradient of its result (`dy`), out of the forward ops of the op table:
// the backward graph is ordinary IR, placed, fused and planned as the forward is. Every op it
// appends carries the forward op's `loc` and device, so errors and `--print-ir-after autodiff`
// point at the layer differentiated. Saved activations are whatever these ops read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// Appends the ops of one op's backward, each typed by its rule (ir/infer_type.h).
class GradBuilder {
 public:
  // New values are named PREFIX.NAME (NAME: op()'s `base`, else `name`, else the forward
  // op's result).
  GradBuilder(Graph& graph, const Op& forward, std::string prefix = "grad", std::string name = "")
      : graph_(graph), forward_(forward), prefix_(std::move(prefix)), name_(std::move(name)) {}

  const Op& forward() const { return forward_; }
  // A new op on the forward op's device, named after `base`.
  Value* op(OpKind kind, std::vector<Value*> operands, Attrs attrs = {},
            const std::string& base = "");
  Value* scalarOp(OpKind kind, Value* a, double scalar);  // add/mul/gt/... with `scalar`
  Value* cast(Value* x, DType dtype);
  Value* reshape(Value* x, const Shape& shape);
  // `g`, of a broadcast result's shape, summed down to `shape` (NumPy broadcasting undone).
  Value* sumToShape(Value* g, const Shape& shape);
  // `g` (a reduction's result, keepdim or not, over `axes`) broadcast back to `shape`.
  Value* expandFrom(Value* g, const Shape& shape, const std::vector<int64_t>& axes);

 private:
  Graph& graph_;
  const Op& forward_;
  std::string prefix_;
  std::string name_;
};

// Refuses to differentiate `op`: a model error at its layer, "cannot train through OP: WHAT".
[[noreturn]] void refuseGradient(const Op& op, const std::string& what);

// A param the compiler makes for training (`role`), defined before every op, as the model's
// params are: passes that move copies of params earlier (batch-transfers) find it defined.
Value* addTrainingParam(Graph& graph, const std::string& name, const TensorType& type, Attrs attrs,
                        const SourceLoc& loc);

// The gradients of `op`'s operands given `dy` (the gradient of its result), one entry per
// operand: null where the operand needs none (`needed[i]` false) or has none (an index).
// A model error naming the layer when the op, or this use of it, has no rule yet.
std::vector<Value*> gradientsOf(GradBuilder& builder, Value* dy, const std::vector<bool>& needed);

// The reduction's `axis` attribute as non-negative dims of a rank-`rank` operand (all dims
// when absent).
std::vector<int64_t> reductionAxes(const Op& op, int64_t rank);

// Rules of the losses, softmax, log_softmax, embedding and index_select
// (passes/autodiff_rules_loss.cpp); nullopt for other ops.
std::optional<std::vector<Value*>> lossGradients(GradBuilder& builder, Value* dy,
                                                 const std::vector<bool>& needed);

// Rules of gelu, layer_norm, slice, pad, dropout, where and scaled_dot_product_attention
// (passes/autodiff_rules_layers.cpp); nullopt for other ops.
std::optional<std::vector<Value*>> layerGradients(GradBuilder& builder, Value* dy,
                                                  const std::vector<bool>& needed);

// Rules of rms_norm and group_norm (passes/autodiff_rules_norm.cpp); nullopt for other ops.
std::optional<std::vector<Value*>> normGradients(GradBuilder& builder, Value* dy,
                                                 const std::vector<bool>& needed);

// Rules of conv2d (grouped and depthwise too), conv_transpose2d, max_pool2d, avg_pool2d, and
// adaptive_avg_pool2d whose windows tile the input (passes/autodiff_rules_conv.cpp); nullopt
// for other ops.
std::optional<std::vector<Value*>> convGradients(GradBuilder& builder, Value* dy,
                                                 const std::vector<bool>& needed);

}  // namespace gxc
