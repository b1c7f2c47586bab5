#include "target/host_library.h"

#include <algorithm>
#include <optional>

#include "ir/infer_type.h"

namespace gxc {

bool isHostLibraryRowOp(const Op& op) {
  if (op.operands.empty() || !op.result->type.known) return false;
  const TensorType& x = op.operands[0]->type;
  if (!x.known || x.numel() == 0) return false;
  switch (op.kind) {
    case OpKind::LayerNorm:
      return std::all_of(op.operands.begin(), op.operands.end(), [](const Value* operand) {
        return operand->type.known && operand->type.dtype == DType::F32;
      });
    case OpKind::Softmax:
    case OpKind::LogSoftmax: {
      if (x.dtype != DType::F32) return false;
      const int64_t rank = x.rank();
      std::optional<int64_t> axis = normalizeAxis(op.attrs.getInt("axis", -1), rank);
      if (!axis) return false;
      for (int64_t d = *axis + 1; d < rank; ++d)
        if (x.shape[d] != 1) return false;  // an inner axis: oneDNN has only its reference
      return true;
    }
    default:
      return false;
  }
}

}  // namespace gxc
