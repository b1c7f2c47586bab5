// Reference kernel of scaled_dot_product_attention, as PyTorch documents its math:
// softmax(q @ k^T * scale + bias) @ v, where the bias is 0 or -inf from is_causal (query l
// attends keys s <= l, for any L and S) or from a bool mask (false: -inf), or the float mask
// itself. A query row that attends nothing gets NaN, as torch's softmax of all -inf does. The
// scores of one query row are held in double; nothing here is tiled or fused.
#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor attentionOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 3, 4);
  checkFloatOperands(op, operands, {0, 1, 2});
  const Tensor &q = *operands[0], &k = *operands[1], &v = *operands[2];
  const Tensor* mask = operands.size() == 4 ? operands[3] : nullptr;
  const Shape& qs = q.shape();
  int64_t rank = q.rank();
  GXC_CHECK(rank >= 2 && k.rank() == rank && v.rank() == rank,
            "layer '{}': attention operands of ranks {}, {}, {}", op.layerName(), rank, k.rank(),
            v.rank());
  int64_t queries = qs[rank - 2], width = qs[rank - 1];
  int64_t keys = k.shape()[rank - 2], valueWidth = v.shape()[rank - 1];
  Shape out(qs.begin(), qs.end() - 1);
  out.push_back(valueWidth);
  Tensor result = makeResult(op, out);
  Shape scoresShape(qs.begin(), qs.end() - 1);
  scoresShape.push_back(keys);
  double scale = op.attrs.getFloat("scale", 1.0 / std::sqrt(static_cast<double>(width)));
  bool causal = op.attrs.getBool("is_causal", false);
  int64_t batches = queries * width == 0 ? 0 : q.numel() / (queries * width);
  constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
  std::vector<double> scores(static_cast<size_t>(keys));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t l = 0; l < queries; ++l) {
      int64_t qRow = (b * queries + l) * width;
      double max = kMinusInf;
      for (int64_t s = 0; s < keys; ++s) {
        int64_t kRow = (b * keys + s) * width;
        double dot = 0;
        for (int64_t e = 0; e < width; ++e) dot += q.loadDouble(qRow + e) * k.loadDouble(kRow + e);
        double score = dot * scale;
        if (causal && s > l) score = kMinusInf;
        if (mask) {
          int64_t at = broadcastIndex(unravelIndex((b * queries + l) * keys + s, scoresShape),
                                      mask->shape());
          if (mask->dtype() == DType::Bool)
            score = mask->loadInt(at) != 0 ? score : kMinusInf;
          else
            score += mask->loadDouble(at);
        }
        scores[s] = score;
        max = std::max(max, score);
      }
      double sum = 0;
      for (double& score : scores) sum += score = std::exp(score - max);
      for (int64_t e = 0; e < valueWidth; ++e) {
        double acc = 0;
        for (int64_t s = 0; s < keys; ++s)
          acc += scores[s] * v.loadDouble((b * keys + s) * valueWidth + e);
        storeComputed(result, (b * queries + l) * valueWidth + e, acc / sum);
      }
    }
  }
  return result;
}

}  // namespace gxc::reference
