// The attention kernel: F.scaled_dot_product_attention in one kernel, the scores never
// stored. One block per query row (grid-stride over the rows of every batch); each thread
// takes every blockDim-th key and keeps an online softmax over them (the running max m, the
// sum of exp(score - m), and the value rows weighted by it, rescaled whenever m grows: the
// recurrence of FlashAttention), then the block merges its threads' states in gxc_block_max
// and gxc_block_sum. On the host blockDim is 1 and one thread runs the recurrence over all
// keys. Output columns go in chunks of kChunk, so a thread's accumulator fits in registers;
// a wider value dim recomputes the scores once per chunk. K and V rows are read from global
// memory by every query row's block (through the cache): no shared-memory tiling of K and V
// across query rows yet.
#include <fmt/format.h>

#include <cmath>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

constexpr int64_t kChunk = 64;

}  // namespace

KernelBody attentionKernel(const Op& op, const KernelArgs& args) {
  const Value *q = op.operands[0], *k = op.operands[1], *v = op.operands[2];
  const Value* mask = op.operands.size() == 4 ? op.operands[3] : nullptr;
  const Shape& qs = q->type.shape;
  size_t rank = qs.size();
  int64_t queries = qs[rank - 2], width = qs[rank - 1];
  int64_t keys = k->type.shape[rank - 2], valueWidth = v->type.shape[rank - 1];
  int64_t rows = q->type.numel() / std::max<int64_t>(width, 1);
  double scale = op.attrs.getFloat("scale", 1.0 / std::sqrt(static_cast<double>(width)));
  bool causal = op.attrs.getBool("is_causal", false);
  auto in = [&](const Value* value) { return fmt::format("in{}", args.indexOf(value)); };
  // f64 computes in double throughout; the other dtypes in f32 (the block sums in double).
  const bool wide = q->type.dtype == DType::F64;
  const std::string real = wide ? "double" : "float", zero = wide ? "0.0" : "0.0f";
  const std::string exp = wide ? "exp" : "expf";

  // The score of key s for this row, with the causal mask or the mask applied.
  std::string score = fmt::format(
      "        {4} x = {5};\n"
      "        for (gxc_i64 e = 0; e < {0}; ++e) x += {1} * {2};\n"
      "        x *= {3};\n",
      intLiteral(width), loadElement(q->type.dtype, in(q), "qRow + e"),
      loadElement(k->type.dtype, in(k),
                  fmt::format("(batch * {} + s) * {} + e", intLiteral(keys), intLiteral(width))),
      wide ? doubleLiteral(scale) : floatLiteral(static_cast<float>(scale)), real, zero);
  if (causal) score += "        if (s > l) x = gxc_neg_inf();\n";
  Shape rowShape(qs.begin(), qs.end() - 1);  // a row's coordinates c0, c1, ...: batch..., l
  std::string maskCoords;
  if (mask) {
    Shape scores = rowShape;
    scores.push_back(keys);
    std::string index = broadcastIndex(mask->type.shape, scores, "c");
    maskCoords = unravel("row", rowShape, "c", "    ", index);
    score += fmt::format("        const gxc_i64 c{} = s;\n", rank - 1);
    if (mask->type.dtype == DType::Bool)  // true attends
      score += fmt::format("        if (!{}) x = gxc_neg_inf();\n",
                           loadElement(DType::Bool, in(mask), index));
    else
      score += fmt::format("        x += {};\n", loadElement(mask->type.dtype, in(mask), index));
  }
  std::string body =
      pointerDecls(args) +
      fmt::format(
          "  for (gxc_i64 row = blockIdx.x; row < {0}; row += gridDim.x) {{\n"
          "    const gxc_i64 batch = row / {1}, l = row % {1};\n"
          "    const gxc_i64 qRow = row * {2};\n"
          "{3}"
          "    (void)l;\n"
          "    for (gxc_i64 e0 = 0; e0 < {4}; e0 += {5}) {{\n"
          "      const gxc_i64 columns = {4} - e0 < {5} ? {4} - e0 : {5};\n"
          "      {10} m = gxc_neg_inf(), sum = {11}, acc[{5}];\n"
          "      for (gxc_i64 e = 0; e < columns; ++e) acc[e] = {11};\n"
          "      for (gxc_i64 s = threadIdx.x; s < {6}; s += blockDim.x) {{\n"
          "{7}"
          "        if (x == gxc_neg_inf()) continue;  // attends nothing: weight 0\n"
          "        if (x > m) {{\n"
          "          const {10} shrink = {12}(m - x);\n"
          "          sum *= shrink;\n"
          "          for (gxc_i64 e = 0; e < columns; ++e) acc[e] *= shrink;\n"
          "          m = x;\n"
          "        }}\n"
          "        const {10} p = {12}(x - m);\n"
          "        sum += p;\n"
          "        for (gxc_i64 e = 0; e < columns; ++e)\n"
          "          acc[e] += p * {8};\n"
          "      }}\n"
          "      const {10} blockMax = gxc_block_max(m);\n"
          "      const {10} mine = m == gxc_neg_inf() ? {11} : {12}(m - blockMax);\n"
          "      const {10} total = ({10})gxc_block_sum((double)(sum * mine));\n"
          "      for (gxc_i64 e = 0; e < columns; ++e) {{\n"
          "        const {10} o = ({10})gxc_block_sum((double)(acc[e] * mine));\n"
          "        // A row whose every key is masked out is NaN, as softmax over all -inf is.\n"
          "        if (threadIdx.x == 0) {9}\n"
          "      }}\n"
          "    }}\n"
          "  }}\n",
          intLiteral(rows), intLiteral(queries), intLiteral(width), maskCoords,
          intLiteral(valueWidth), kChunk, intLiteral(keys), score,
          loadElement(v->type.dtype, in(v),
                      fmt::format("(batch * {} + s) * {} + e0 + e", intLiteral(keys),
                                  intLiteral(valueWidth))),
          storeElement(op.result->type.dtype, "out",
                       fmt::format("row * {} + e0 + e", intLiteral(valueWidth)),
                       fmt::format("blockMax == gxc_neg_inf() ? ({})gxc_nan() : o / total", real)),
          real, zero, exp);
  return {"attention", std::move(body), gpuRowLaunch(rows, keys), {std::max<int64_t>(rows, 1), 1}};
}

}  // namespace gxc::cuda
