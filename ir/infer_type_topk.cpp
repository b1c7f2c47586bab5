// Shape rule of `topk` and `topk_indices` (torch.topk(x, k, dim=axis, largest)): x's shape with
// k along `axis`. The frontend checks k and axis at their own keys first; these checks hold
// IR that did not come from a model file (gxc-opt) to the same rules.
#include "ir/infer_type_rules.h"

namespace gxc::infer {

Shape topkShape(const Op& op) {
  const TensorType& x = operandType(op, 0);
  // torch.topk has no bool kernel; the values are moved as they are, so f64 is as good as f32.
  if (x.dtype == DType::Bool) fail(op, "needs a number operand, got {}", x.withoutDevice());
  int64_t axisGiven = op.attrs.getInt("axis", -1);
  auto axis = normalizeAxis(axisGiven, x.rank());
  if (!axis) fail(op, "axis {} is out of range for {}", axisGiven, x.withoutDevice());
  int64_t k = op.attrs.getInt("k", 0), size = x.shape[*axis];
  // gxc has no tensors of size 0, so k = 0 (torch's empty result) is refused too.
  if (k <= 0) fail(op, "k must be positive, got {}", k);
  if (k > size)
    fail(op, "k = {} is larger than axis {} of {}, of size {}", k, axisGiven, x.withoutDevice(),
         size);
  Shape shape = x.shape;
  shape[*axis] = k;
  return shape;
}

}  // namespace gxc::infer
