// infer-shapes: every value gets its dtype and shape.
//
// Requires: graph inputs and params have known types (the frontend and the parser see to it).
// Guarantees: every value's type is known and equals what its op's rule (ir/infer_type.h)
//   gives; a shape error is a model error at the layer, naming it and showing both shapes.
// Idempotent: yes; on a typed graph it changes nothing.
#pragma once

#include "passes/pass.h"

namespace gxc {

class InferShapesPass : public Pass {
 public:
  std::string_view name() const override { return "infer-shapes"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
