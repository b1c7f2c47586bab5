// insert-copies: every edge between devices becomes an explicit `copy` op.
//
// Requires: every value placed (after assign-devices).
// Guarantees:
//   - every operand sits on its op's device: an operand from another device is read through
//     one `copy` per (value, destination device), named VALUE.DEVICE (`%h.cuda1`), inserted
//     before its first consumer there and shared by every consumer there;
//   - `to` ops are gone: one that moves its operand becomes that `copy` (keeping the layer's
//     name), one whose operand is already there is dropped and its uses read the operand;
//   - every output is on the host: an output elsewhere is copied back (`%y.cpu`).
//   With --strict, an edge that no `to` op asked for is an error naming the layer and both
//   devices (PyTorch's "Expected all tensors to be on the same device"); outputs still return
//   to the host, as the model format promises.
// Idempotent: yes; after it no edge crosses devices.
#pragma once

#include "passes/pass.h"

namespace gxc {

class InsertCopiesPass : public Pass {
 public:
  std::string_view name() const override { return "insert-copies"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
