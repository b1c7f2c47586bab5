// Loss kernels: the elementwise losses (mse_loss, l1_loss, smooth_l1_loss,
// binary_cross_entropy_with_logits) and the class-index ones (nll_loss and cross_entropy on
// [N, C, d1, ...] with class weights, ignore_index and label smoothing), with reductions
// none, sum and mean, as the reference computes them (runtime/reference/reference_loss*.cpp).
// With `none` every result element is independent (a grid-stride loop); `sum` and `mean`
// fold everything into one number, so they run as one block whose threads each take a share
// of the elements and meet in gxc_block_sum. Accumulation is in double; the result is f32, or
// double for f64 (whose max over the logits is double too).
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

std::string reductionOf(const Op& op) { return op.attrs.getString("reduction", "mean"); }

std::string load(const Value* value, const KernelArgs& args, const std::string& index) {
  return fmt::format("(double){}", loadElement(value->type.dtype,
                                               fmt::format("in{}", args.indexOf(value)), index));
}

// Statements setting `loss` (and `w`, the weight a mean divides by) for element `i`.
std::string elementwiseLoss(const Op& op, const KernelArgs& args) {
  std::string code = fmt::format("    const double x = {}, y = {};\n    double loss, w = 1.0;\n",
                                 load(op.operands[0], args, "i"), load(op.operands[1], args, "i"));
  switch (op.kind) {
    case OpKind::MseLoss:
      return code + "    loss = (x - y) * (x - y);\n";
    case OpKind::L1Loss:
      return code + "    loss = fabs(x - y);\n";
    case OpKind::SmoothL1Loss: {
      double beta = op.attrs.getFloat("beta", 1.0);
      return code + fmt::format(
                        "    const double d = fabs(x - y);\n"
                        "    loss = d < {0:a} ? 0.5 * d * d / {0:a} : d - 0.5 * {0:a};\n",
                        beta);
    }
    case OpKind::BceWithLogits: {
      // PyTorch's stable form (see the reference).
      const Shape& shape = op.operands[0]->type.shape;
      std::string posWeight =
          op.operands.size() == 3
              ? load(op.operands[2], args,
                     fmt::format("i % {}", intLiteral(shape.empty() ? 1 : shape.back())))
              : "1.0";
      return code + fmt::format(
                        "    const double log_weight = 1.0 + ({} - 1.0) * y;\n"
                        "    loss = (1.0 - y) * x + log_weight * (log1p(exp(-fabs(x))) + "
                        "(x < 0.0 ? -x : 0.0));\n",
                        posWeight);
    }
    default:
      GXC_CHECK(false, "{} is not an elementwise loss", opName(op.kind));
  }
  return code;
}

// Statements setting `loss` and `w` for position `i` of the target (sample i / D, position
// i % D of the D = d1 * d2 * ... per sample). An ignored target adds 0 to both; one out of
// range (the executor checks targets before it launches) gives NaN rather than a read out of
// bounds.
std::string classIndexLoss(const Op& op, const KernelArgs& args) {
  const Value* input = op.operands[0];
  const Value* weight = op.operands.size() == 3 ? op.operands[2] : nullptr;
  const Shape& shape = input->type.shape;
  int64_t classes = shape[1], inner = input->type.numel() / (shape[0] * classes);
  double smoothing = op.attrs.getFloat("label_smoothing", 0.0);
  bool logits = op.kind == OpKind::CrossEntropy;
  auto x = [&](const std::string& c) {
    return loadElement(input->type.dtype, fmt::format("in{}", args.indexOf(input)),
                       fmt::format("x0 + ({}) * {}", c, intLiteral(inner)));
  };
  auto logProb = [&](const std::string& c) {
    return logits ? fmt::format("((double)({} - m) - log(s))", x(c)) : "(double)" + x(c);
  };
  auto classWeight = [&](const std::string& c) {
    return weight ? load(weight, args, c) : std::string("1.0");
  };
  std::string code = fmt::format(
      "    const gxc_i64 t = (gxc_i64)in{}[i];\n"
      "    const gxc_i64 x0 = i / {} * {} + i % {};\n"
      "    double loss = 0.0, w = 0.0;\n"
      "    if (t != {}) {{\n"
      "      loss = (double)gxc_nan(), w = (double)gxc_nan();\n"
      "      if (t >= 0 && t < {}) {{\n",
      args.indexOf(op.operands[1]), intLiteral(inner), intLiteral(classes * inner),
      intLiteral(inner), intLiteral(op.attrs.getInt("ignore_index", -100)), intLiteral(classes));
  if (logits)
    code += fmt::format(
        "        {2} m = gxc_neg_inf();\n"
        "        for (gxc_i64 c = 0; c < {0}; ++c) m = gxc_max(m, {1});\n"
        "        double s = 0.0;\n"
        "        for (gxc_i64 c = 0; c < {0}; ++c) s += exp((double)({1} - m));\n",
        intLiteral(classes), x("c"), computeType(input->type.dtype));
  code += fmt::format("        w = {};\n        loss = -w * {};\n", classWeight("t"), logProb("t"));
  if (smoothing != 0.0)
    // PyTorch's: (1 - e) * nll + e / C * smooth, smooth = -sum_c w[c] log p[c]; a mean
    // divides both by the same summed weights, so mixing per position is the same.
    code += fmt::format(
        "        double smooth = 0.0;\n"
        "        for (gxc_i64 c = 0; c < {}; ++c) smooth -= {} * {};\n"
        "        loss = {:a} * loss + {:a} * smooth;\n",
        intLiteral(classes), classWeight("c"), logProb("c"), 1.0 - smoothing,
        smoothing / static_cast<double>(classes));
  return code + "      }\n    }\n";
}

}  // namespace

KernelBody lossKernel(const Op& op, const KernelArgs& args) {
  bool classIndex = op.kind == OpKind::CrossEntropy || op.kind == OpKind::NllLoss;
  std::string element = classIndex ? classIndexLoss(op, args) : elementwiseLoss(op, args);
  int64_t count = op.operands[1]->type.numel();  // target elements
  DType out = op.result->type.dtype;
  std::string reduction = reductionOf(op);
  std::string family(opName(op.kind));
  if (reduction == "none") {
    std::string body = pointerDecls(args) + gridStrideLoop("i", count, "  ") + element + "    " +
                       storeElement(out, "out", "i", fmt::format("({})loss", computeType(out))) +
                       "\n  }\n";
    return {family, std::move(body), gpuElementwiseLaunch(count), hostElementwiseLaunch(count)};
  }
  // PyTorch's mean divides by the summed weights of the targets (not ignored), which is the
  // element count where every weight is 1.
  std::string total = reduction == "sum" ? "total" : "total / weights";
  if (op.attrs.getBool("weight_sum", false)) {  // the denominator of the mean instead
    total = "weights";
    reduction = "weight_sum";
  }
  std::string body =
      pointerDecls(args) + "  double acc = 0.0, acc_w = 0.0;\n" +
      fmt::format("  for (gxc_i64 i = threadIdx.x; i < {}; i += blockDim.x) {{\n",
                  intLiteral(count)) +
      element + "    acc += loss;\n    acc_w += w;\n  }\n" +
      "  const double total = gxc_block_sum(acc);\n" +
      "  const double weights = gxc_block_sum(acc_w);\n" + "  if (threadIdx.x == 0) " +
      storeElement(out, "out", "0", fmt::format("({})({})", computeType(out), total)) + "\n";
  return {family + "_" + reduction, std::move(body), gpuRowLaunch(1, count), {1, 1}};
}

}  // namespace gxc::cuda
