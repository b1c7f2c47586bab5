// Loss kernels: mse_loss (F.mse_loss) and cross_entropy (F.cross_entropy on [N, C] logits
// with class-index targets and optional class weights), with reductions none, sum and mean.
// With `none` every result element is independent (a grid-stride loop); `sum` and `mean`
// fold everything into one number, so they run as one block whose threads each take a share
// of the elements and meet in gxc_block_sum. Accumulation is in double, as the reference's.
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

std::string reductionOf(const Op& op) { return op.attrs.getString("reduction", "mean"); }

KernelBody mseLossKernel(const Op& op, const KernelArgs& args) {
  const Value* pred = op.operands[0];
  const Value* target = op.operands[1];
  int64_t count = pred->type.numel();
  std::string diff =
      fmt::format("const double d = (double){} - (double){};",
                  loadFloat(pred->type.dtype, fmt::format("in{}", args.indexOf(pred)), "i"),
                  loadFloat(target->type.dtype, fmt::format("in{}", args.indexOf(target)), "i"));
  DType out = op.result->type.dtype;
  std::string reduction = reductionOf(op);
  if (reduction == "none") {
    std::string body = pointerDecls(args) + gridStrideLoop("i", count, "  ") + "    " + diff +
                       "\n    " + storeFloat(out, "out", "i", "(float)(d * d)") + "\n  }\n";
    return {"mse_loss", std::move(body), gpuElementwiseLaunch(count), {1, 1}};
  }
  std::string total = reduction == "sum" ? "total" : fmt::format("total / {}.0", count);
  std::string body = pointerDecls(args) + "  double acc = 0.0;\n" +
                     fmt::format("  for (gxc_i64 i = threadIdx.x; i < {}; i += blockDim.x) {{\n",
                                 intLiteral(count)) +
                     "    " + diff + "\n    acc += d * d;\n  }\n" +
                     "  const double total = gxc_block_sum(acc);\n" + "  if (threadIdx.x == 0) " +
                     storeFloat(out, "out", "0", fmt::format("(float)({})", total)) + "\n";
  return {"mse_loss_" + reduction, std::move(body), gpuRowLaunch(1, count), {1, 1}};
}

KernelBody crossEntropyKernel(const Op& op, const KernelArgs& args) {
  const Value* logits = op.operands[0];
  const Value* target = op.operands[1];
  const Value* weight = op.operands.size() == 3 ? op.operands[2] : nullptr;
  int64_t n = logits->type.shape[0], classes = logits->type.shape[1];
  std::string x = fmt::format("in{}", args.indexOf(logits));
  auto logit = [&](const std::string& column) {
    return loadFloat(logits->type.dtype, x,
                     fmt::format("i * {} + {}", intLiteral(classes), column));
  };
  // One sample, by one thread: w[t] * -log_softmax(logits[i])[t]. A target out of range (the
  // executor checks targets before it launches) gives NaN rather than a read out of bounds.
  std::string sample = fmt::format(
      "    const gxc_i64 t = (gxc_i64)in{0}[i];\n"
      "    double loss = (double)gxc_nan(), w = (double)gxc_nan();\n"
      "    if (t >= 0 && t < {1}) {{\n"
      "      float m = gxc_neg_inf();\n"
      "      for (gxc_i64 c = 0; c < {1}; ++c) m = gxc_max(m, {2});\n"
      "      double s = 0.0;\n"
      "      for (gxc_i64 c = 0; c < {1}; ++c) s += exp((double)({2} - m));\n"
      "      w = {3};\n"
      "      loss = -((double)({4} - m) - log(s)) * w;\n"
      "    }}\n",
      args.indexOf(target), intLiteral(classes), logit("c"),
      weight ? fmt::format("(double){}", loadFloat(weight->type.dtype,
                                                   fmt::format("in{}", args.indexOf(weight)), "t"))
             : "1.0",
      logit("t"));
  DType out = op.result->type.dtype;
  std::string reduction = reductionOf(op);
  if (reduction == "none") {
    std::string body = pointerDecls(args) + gridStrideLoop("i", n, "  ") + sample + "    " +
                       storeFloat(out, "out", "i", "(float)loss") + "\n  }\n";
    return {"cross_entropy", std::move(body), gpuElementwiseLaunch(n), {1, 1}};
  }
  // PyTorch's weighted mean divides by the summed weights of the targets, not by N.
  std::string total = reduction == "sum" ? "total" : "total / weights";
  std::string body =
      pointerDecls(args) + "  double acc = 0.0, acc_w = 0.0;\n" +
      fmt::format("  for (gxc_i64 i = threadIdx.x; i < {}; i += blockDim.x) {{\n", intLiteral(n)) +
      sample + "    acc += loss;\n    acc_w += w;\n  }\n" +
      "  const double total = gxc_block_sum(acc);\n" +
      "  const double weights = gxc_block_sum(acc_w);\n" + "  if (threadIdx.x == 0) " +
      storeFloat(out, "out", "0", fmt::format("(float)({})", total)) + "\n";
  return {"cross_entropy_" + reduction, std::move(body), gpuRowLaunch(1, n), {1, 1}};
}

}  // namespace

KernelBody lossKernel(const Op& op, const KernelArgs& args) {
  if (op.kind == OpKind::MseLoss) return mseLossKernel(op, args);
  GXC_CHECK(op.kind == OpKind::CrossEntropy, "layer '{}': {} is not a loss", op.layerName(),
            opName(op.kind));
  return crossEntropyKernel(op, args);
}

}  // namespace gxc::cuda
