// The oracle executor: a placed graph run op by op through the reference interpreter
// (runtime/reference/reference_ops.h), every value an owned host tensor.
//
// What it does: materializes the params once, at the first run, then computes every op in
// program order, the members of a fused kernel one by one, each into a tensor of its own;
// devices are ignored (a copy copies), and no memory plan is read. It is what every platform
// is tested against, so it shares nothing with them but the params' values.
//
// Requires: a verified graph with every value typed.
// Guarantees: outputs are the reference interpreter's; an error (an index out of range) is a
// runtime error (exit 3) naming the layer.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"
#include "runtime/param_init.h"
#include "tensor/tensor.h"

namespace gxc {

class ReferenceExecutor {
 public:
  explicit ReferenceExecutor(const Graph& graph) : graph_(graph) {}

  // `inputs` holds one tensor per graph input, by name, of the declared type. Returns the
  // outputs by their model names.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);

  // The params by name, and overwriting them (runtime/param_init.h): an assign op of a
  // training step changes them for the next run.
  std::map<std::string, Tensor> paramValues();
  void setParamValues(const std::map<std::string, Tensor>& values);

 private:
  void materializeParams();

  const Graph& graph_;
  WeightFiles weightFiles_;
  std::map<const Value*, Tensor> params_;
  bool paramsReady_ = false;
};

}  // namespace gxc
