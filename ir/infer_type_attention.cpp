// The shape rule of scaled_dot_product_attention.
#include <algorithm>

#include "ir/infer_type_rules.h"

namespace gxc::infer {

// F.scaled_dot_product_attention: q [..., L, E], k [..., S, E], v [..., S, Ev] with one set
// of batch dims; the mask broadcasts to the scores [..., L, S].
Shape attentionShape(const Op& op) {
  const TensorType &q = operandType(op, 0), &k = operandType(op, 1), &v = operandType(op, 2);
  requireFloat(op, q);
  requireSameDType(op, q, k);
  requireSameDType(op, q, v);
  size_t rank = q.shape.size();
  bool batchesAgree = rank >= 2 && k.rank() == q.rank() && v.rank() == q.rank() &&
                      std::equal(q.shape.begin(), q.shape.end() - 2, k.shape.begin()) &&
                      std::equal(q.shape.begin(), q.shape.end() - 2, v.shape.begin());
  if (!batchesAgree)
    fail(op,
         "needs q [..., L, E], k [..., S, E] and v [..., S, Ev] with the same batch dims, got {}, "
         "{} and {}",
         q.withoutDevice(), k.withoutDevice(), v.withoutDevice());
  if (k.shape.back() != q.shape.back())
    fail(op, "q and k need the same last dim E, got {} and {}", q.withoutDevice(),
         k.withoutDevice());
  if (v.shape[rank - 2] != k.shape[rank - 2])
    fail(op, "k and v need the same number of keys S (dim -2), got {} and {}", k.withoutDevice(),
         v.withoutDevice());
  Shape scores(q.shape.begin(), q.shape.end() - 1);
  scores.push_back(k.shape[rank - 2]);
  if (op.operands.size() == 4) {
    const TensorType& mask = operandType(op, 3);
    if (mask.dtype != q.dtype && mask.dtype != DType::Bool)
      fail(op, "the mask must be bool (true attends) or q's dtype (added to the scores), got {}",
           mask.withoutDevice());
    if (broadcastShapes(mask.shape, scores) != scores)
      fail(op, "the mask {} does not broadcast to the scores' shape {}", mask.withoutDevice(),
           shapeString(scores));
    if (op.attrs.getBool("is_causal", false))
      fail(op, "takes a mask or is_causal, not both (as in PyTorch)");
  }
  Shape result(q.shape.begin(), q.shape.end() - 1);
  result.push_back(v.shape.back());
  return result;
}

}  // namespace gxc::infer
