#include "passes/infer_shapes.h"

#include "ir/infer_type.h"

namespace gxc {

bool InferShapesPass::run(Graph& graph, const PassContext&) const {
  bool changed = false;
  // Ops are in execution order, so each op's operands are typed before it is visited.
  for (Op* op : graph.ops()) {
    TensorType inferred = inferResultType(*op);
    if (inferred != op->result->type) {
      op->result->type = inferred;
      changed = true;
    }
  }
  return changed;
}

}  // namespace gxc
