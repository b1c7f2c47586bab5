#include "runtime/host/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "ir/diagnostic.h"
#include "runtime/host/cpu_softmax.h"
#include "runtime/host/onednn_matmul.h"

namespace gxc {
namespace {

// Below this many multiply-adds in q k^T, the generated kernel is as fast as the three
// primitives, made once per shape. Measured on gpt_decoder (4 heads of 8, seq 16), one thread:
// at 8,192 (batch 1) the two were level; at 32,768 (batch 4) and 131,072 (batch 16) the
// primitives took 12% and 28% less time. (Made at every call, they cost more than 2^18 did.)
constexpr int64_t kMinWork = int64_t{1} << 12;

struct AttentionShape {
  int64_t batches = 0, queries = 0, keys = 0, width = 0, valueWidth = 0;
};

AttentionShape attentionShape(const Op& op) {
  const Shape& q = op.operands[0]->type.shape;
  size_t rank = q.size();
  AttentionShape s;
  s.queries = q[rank - 2];
  s.width = q[rank - 1];
  s.keys = op.operands[1]->type.shape[rank - 2];
  s.valueWidth = op.operands[2]->type.shape[rank - 1];
  s.batches = s.queries * s.width == 0 ? 0 : op.operands[0]->type.numel() / (s.queries * s.width);
  return s;
}

// Where the mask's element for (batch entry, query, key) is: its strides against the scores'
// shape [batch dims..., L, S], 0 along the dims it broadcasts over.
class MaskIndex {
 public:
  MaskIndex(const Shape& scores, const Shape& mask) : batchDims_(scores.begin(), scores.end() - 2) {
    size_t rank = scores.size(), offset = rank - mask.size();
    strides_.assign(rank, 0);
    int64_t stride = 1;
    for (size_t d = rank; d-- > offset;) {
      if (mask[d - offset] != 1) strides_[d] = stride;
      stride *= mask[d - offset];
    }
  }
  int64_t rowStart(int64_t batch, int64_t query) const {
    int64_t at = query * strides_[strides_.size() - 2];
    for (size_t d = batchDims_.size(); d-- > 0;) {
      at += batch % batchDims_[d] * strides_[d];
      batch /= batchDims_[d];
    }
    return at;
  }
  int64_t keyStride() const { return strides_.back(); }

 private:
  Shape batchDims_;
  std::vector<int64_t> strides_;
};

// The causal bound and the mask, applied to the scores of batch entries [first, first +
// count). A row left with no key to attend is -inf only, which the softmax makes NaN.
void maskScores(const Op& op, const AttentionShape& s, const ConstTensorView* mask, int64_t first,
                int64_t count, float* scores) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const bool causal = op.attrs.getBool("is_causal", false);
  if (!causal && !mask) return;
  Shape scoresShape(op.operands[0]->type.shape.begin(), op.operands[0]->type.shape.end() - 1);
  scoresShape.push_back(s.keys);
  std::optional<MaskIndex> index;
  if (mask) index.emplace(scoresShape, mask->shape());
  for (int64_t b = 0; b < count; ++b) {
    for (int64_t l = 0; l < s.queries; ++l) {
      float* row = scores + (b * s.queries + l) * s.keys;
      if (causal)
        for (int64_t key = l + 1; key < s.keys; ++key) row[key] = kMinusInf;
      if (mask) {
        int64_t at = index->rowStart(first + b, l), step = index->keyStride();
        if (mask->dtype() == DType::Bool) {
          const uint8_t* bits = reinterpret_cast<const uint8_t*>(mask->data());
          for (int64_t key = 0; key < s.keys; ++key)
            if (bits[at + key * step] == 0) row[key] = kMinusInf;
        } else {
          for (int64_t key = 0; key < s.keys; ++key) row[key] += mask->loadFloat(at + key * step);
        }
      }
    }
  }
}

}  // namespace

bool cpuAttentionPays(const Op& op) {
  GXC_CHECK(op.kind == OpKind::ScaledDotProductAttention, "layer '{}': {} is not attention",
            op.layerName(), opName(op.kind));
  for (size_t i = 0; i < 3; ++i)
    if (op.operands[i]->type.dtype != DType::F32) return false;
  if (op.operands.size() == 4 && op.operands[3]->type.dtype != DType::F32 &&
      op.operands[3]->type.dtype != DType::Bool)
    return false;
  AttentionShape s = attentionShape(op);
  return s.batches * s.queries * s.keys * s.width >= kMinWork;
}

void cpuAttention(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result) {
  GXC_CHECK(cpuAttentionPays(op), "layer '{}': attention sent to the library that it does not pay",
            op.layerName());
  GXC_CHECK(operands.size() == op.operands.size(), "layer '{}': attention given {} operands",
            op.layerName(), operands.size());
  const AttentionShape s = attentionShape(op);
  const float scale =
      static_cast<float>(op.attrs.getFloat("scale", 1.0 / std::sqrt(static_cast<double>(s.width))));
  const ConstTensorView* mask = operands.size() == 4 ? &operands[3] : nullptr;
  const float* q = operands[0].as<float>();
  const float* k = operands[1].as<float>();
  const float* v = operands[2].as<float>();
  float* out = result.as<float>();
  const int64_t scoresPerBatch = s.queries * s.keys;
  const int64_t group = std::clamp<int64_t>(
      kAttentionScratchBytes / static_cast<int64_t>(sizeof(float)) / scoresPerBatch, 1, s.batches);
  // Uninitialized: every score is written by the first matmul before anything reads it.
  std::unique_ptr<float[]> scores(new float[static_cast<size_t>(group * scoresPerBatch)]);
  for (int64_t first = 0; first < s.batches; first += group) {
    const int64_t count = std::min(group, s.batches - first);
    onednnBatchedSgemm(count, false, /*transB=*/true, s.queries, s.keys, s.width, scale,
                       q + first * s.queries * s.width, k + first * s.keys * s.width, scores.get());
    maskScores(op, s, mask, first, count, scores.get());
    onednnSoftmax(false, count * s.queries, s.keys, scores.get(), scores.get());
    onednnBatchedSgemm(count, false, false, s.queries, s.valueWidth, s.keys, 1.0f, scores.get(),
                       v + first * s.keys * s.valueWidth, out + first * s.queries * s.valueWidth);
  }
}

}  // namespace gxc
