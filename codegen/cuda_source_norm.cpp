// The row statistics of the normalization anchors of a row kernel (cuda_source_rows.cpp):
// layer_norm and rms_norm over the last dims (normalized_shape: rows of contiguous elements;
// the weight and bias indexed by k), and group_norm over each group of channels of one
// sample (contiguous too; the weight and bias indexed by the channel of `at`). Statistics in
// double, biased variance, as the reference and PyTorch; the result is f32, or double for f64.
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"
#include "ir/infer_type.h"

namespace gxc::cuda {
namespace {

RowLayout contiguousRows(int64_t rows, int64_t length) {
  return {rows, length, fmt::format("    const gxc_i64 base = row * {};\n", intLiteral(length)),
          "base + k"};
}

// `value` times the param operand `i` (if the anchor has it) at `index`, or plus it.
std::string withParam(const Op& anchor, size_t i, const KernelArgs& args, const std::string& value,
                      const std::string& index, char operation) {
  if (anchor.operands.size() <= i) return value;
  const Value* param = anchor.operands[i];
  return fmt::format(
      "({} {} (double){})", value, operation,
      loadElement(param->type.dtype, fmt::format("in{}", args.indexOf(param)), index));
}

// Mean and inverse standard deviation of the row: `mean` and `inv_std`.
std::string meanAndInvStd(const RowLayout& layout, const ElementwiseCode& x, double eps) {
  return "    double s = 0.0;\n" + rowSumLoop(layout, x, "s += (double)" + x.value + ";", "s") +
         fmt::format("    const double mean = gxc_block_sum(s) / {}.0;\n", layout.length) +
         "    double q = 0.0;\n" +
         rowSumLoop(layout, x, "const double d = (double)" + x.value + " - mean; q += d * d;",
                    "q") +
         fmt::format("    const double inv_std = 1.0 / sqrt(gxc_block_sum(q) / {}.0 + {:a});\n",
                     layout.length, eps);
}

}  // namespace

RowStats normRowStats(const Op& anchor, const ElementwiseCode& x, const KernelArgs& args) {
  const Shape& shape = anchor.operands[0]->type.shape;
  int64_t numel = checkedNumel(shape).value();
  RowStats row;
  switch (anchor.kind) {
    case OpKind::LayerNorm: {
      int64_t length = checkedNumel(normalizedShapeOf(anchor.attrs, shape)).value();
      row.layout = contiguousRows(numel / length, length);
      row.stats = meanAndInvStd(row.layout, x, anchor.attrs.getFloat("eps", 1e-5));
      row.anchorValue = withParam(
          anchor, 2, args, withParam(anchor, 1, args, "(((double)xk - mean) * inv_std)", "k", '*'),
          "k", '+');
      break;
    }
    case OpKind::RmsNorm: {
      int64_t length = checkedNumel(normalizedShapeOf(anchor.attrs, shape)).value();
      row.layout = contiguousRows(numel / length, length);
      double eps = anchor.attrs.getFloat("eps", rmsNormDefaultEps(anchor.operands[0]->type.dtype));
      row.stats =
          "    double q = 0.0;\n" +
          rowSumLoop(row.layout, x, "const double d = (double)" + x.value + "; q += d * d;", "q") +
          fmt::format("    const double inv_rms = 1.0 / sqrt(gxc_block_sum(q) / {}.0 + {:a});\n",
                      length, eps);
      row.anchorValue = withParam(anchor, 1, args, "((double)xk * inv_rms)", "k", '*');
      break;
    }
    case OpKind::GroupNorm: {
      int64_t groups = anchor.attrs.getInt("num_groups", 1);
      int64_t channels = shape.at(1), spatial = numel / (shape[0] * channels);
      row.layout = contiguousRows(shape[0] * groups, channels / groups * spatial);
      row.stats = meanAndInvStd(row.layout, x, anchor.attrs.getFloat("eps", 1e-5));
      std::string channel =
          fmt::format("(at / {} % {})", intLiteral(spatial), intLiteral(channels));
      row.anchorValue =
          withParam(anchor, 2, args,
                    withParam(anchor, 1, args, "(((double)xk - mean) * inv_std)", channel, '*'),
                    channel, '+');
      break;
    }
    default:
      GXC_CHECK(false, "layer '{}': {} is not a normalization", anchor.layerName(),
                opName(anchor.kind));
  }
  // Rounded to what the kernel computes in: f32, or double for f64.
  row.anchorValue =
      fmt::format("({})", computeType(anchor.operands[0]->type.dtype)) + row.anchorValue;
  return row;
}

}  // namespace gxc::cuda
