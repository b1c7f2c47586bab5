// Row kernels: an anchor that folds many elements into each of its results (the reductions,
// ir/op_kinds.h isReduction, over any axes; softmax and log_softmax along an axis; layer_norm over
// the last dim), with the elementwise members fused around it. One block per row (grid-stride over
// rows): the block's threads share the row's work and meet in gxc_block_sum / gxc_block_max, so the
// same body runs one thread per block on the host.
//
// A row of a reduction is one result element and the elements folded into it; a row of the
// normalizations is one vector along the axis. The members split in two (ir/fused_kernel.h):
//   - the *prologue*, the members that compute the anchor's first operand x. x never exists
//     in memory: wherever the anchor reads x[at] (two or three passes over the row for softmax
//     and layer_norm), the prologue is evaluated at `at` instead, from the kernel's inputs,
//     broadcast. Recomputing elementwise ops costs arithmetic, never memory traffic (XLA's
//     producer duplication into a reduction makes the same trade).
//   - the rest, the *tail* (what reads the anchor's result, and the branches that join it),
//     computed at every element of the root's result that reads the row: the root may be
//     larger than the anchor's result (a mean with keepdim subtracted from the tensor it came
//     from), so each anchor element stands for a "fiber" of root elements, those that
//     broadcasting pairs with it. A prologue member the tail also reads is recomputed there,
//     at the root's index.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"
#include "ir/infer_type.h"

namespace gxc::cuda {
namespace {

RowLayout reductionLayout(const Op& op) {
  const Shape& shape = op.operands[0]->type.shape;
  std::vector<bool> reduced(shape.size(), !op.attrs.getAxes("axis").has_value());
  if (auto axes = op.attrs.getAxes("axis"))
    for (int64_t axis : *axes)
      reduced[*normalizeAxis(axis, static_cast<int64_t>(shape.size()))] = true;
  std::vector<int64_t> strides = rowMajorStrides(shape);
  Shape kept, folded;
  std::vector<int64_t> keptStrides, foldedStrides;
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? folded : kept).push_back(shape[d]);
    (reduced[d] ? foldedStrides : keptStrides).push_back(strides[d]);
  }
  RowLayout layout;
  layout.rows = checkedNumel(kept).value();
  layout.length = checkedNumel(folded).value();
  // Kept dims keep their order, so the row is the flat index of the result (keepdim or not).
  std::string base = "0", index;
  for (size_t d = 0; d < kept.size(); ++d)
    base += fmt::format(" + r{} * {}", d, intLiteral(keptStrides[d]));
  layout.rowSetup =
      unravel("row", kept, "r", "    ", base) + fmt::format("    const gxc_i64 base = {};\n", base);
  index = "base";
  Shape foldedShape = folded;
  for (size_t d = 0; d < folded.size(); ++d) {
    std::vector<int64_t> within = rowMajorStrides(foldedShape);
    std::string coord = within[d] == 1 ? "k" : fmt::format("k / {}", intLiteral(within[d]));
    if (d > 0) coord = fmt::format("({}) % {}", coord, intLiteral(folded[d]));
    index += fmt::format(" + ({}) * {}", coord, intLiteral(foldedStrides[d]));
  }
  layout.elementIndex = index;
  return layout;
}

RowLayout axisLayout(const Op& op, int64_t axis) {
  const Shape& shape = op.operands[0]->type.shape;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t n = shape[axis];
  RowLayout layout{outer * inner, n, "", ""};
  layout.rowSetup = inner == 1
                        ? fmt::format("    const gxc_i64 base = row * {};\n", intLiteral(n))
                        : fmt::format("    const gxc_i64 base = row / {} * {} + row % {};\n",
                                      intLiteral(inner), intLiteral(n * inner), intLiteral(inner));
  layout.elementIndex = inner == 1 ? "base + k" : fmt::format("base + k * {}", intLiteral(inner));
  return layout;
}

// The members of `step` that `value` is computed from without passing through `stop`, in
// program order (`stop`'s result, when `value` reads it, is given to whoever evaluates them).
std::vector<const Op*> membersFeeding(const KernelStep& step, const Value* value,
                                      const Value* stop) {
  std::set<const Value*> needed = {value};
  std::vector<const Op*> found;
  for (auto it = step.ops.rbegin(); it != step.ops.rend(); ++it) {
    const Op* op = *it;
    if (op->result == stop || !needed.count(op->result)) continue;
    found.push_back(op);
    needed.insert(op->operands.begin(), op->operands.end());
  }
  return {found.rbegin(), found.rend()};
}

// Statements setting `ri` to the flat index in the root's result of element `fiber` of the
// fiber of anchor element `anchorIndex`.
std::string rootIndexOf(const Shape& anchor, const Shape& root, const std::string& anchorIndex,
                        const std::string& fiber, const std::string& indent) {
  if (checkedNumel(anchor) == checkedNumel(root))
    return fmt::format("{}const gxc_i64 ri = {};\n", indent, anchorIndex);
  size_t skipped = root.size() - anchor.size();
  Shape fiberShape;
  for (size_t d = 0; d < root.size(); ++d)
    if (d < skipped || anchor[d - skipped] == 1) fiberShape.push_back(root[d]);
  std::vector<int64_t> strides = rowMajorStrides(root);
  std::string index = "0";
  size_t nextFiber = 0;
  for (size_t d = 0; d < root.size(); ++d) {
    bool fromFiber = d < skipped || anchor[d - skipped] == 1;
    std::string coord =
        fromFiber ? fmt::format("f{}", nextFiber++) : fmt::format("a{}", d - skipped);
    if (root[d] != 1) index += fmt::format(" + {} * {}", coord, intLiteral(strides[d]));
  }
  return unravel(anchorIndex, anchor, "a", indent, index) +
         unravel(fiber, fiberShape, "f", indent, index) +
         fmt::format("{}const gxc_i64 ri = {};\n", indent, index);
}

}  // namespace

// A loop of the block's threads over the row's elements, reading x at each.
std::string rowLoop(const RowLayout& layout, const ElementwiseCode& x,
                    const std::string& statement) {
  return fmt::format(
      "    for (gxc_i64 k = threadIdx.x; k < {}; k += blockDim.x) {{\n"
      "      const gxc_i64 at = {};\n"
      "{}"
      "      {}\n"
      "    }}\n",
      intLiteral(layout.length), layout.elementIndex, x.statements, statement);
}

std::string rowSumLoop(const RowLayout& layout, const ElementwiseCode& x,
                       const std::string& statement, const std::string& sum) {
  return "    GXC_SUM_LOOP(" + sum + ")\n" + rowLoop(layout, x, statement);
}

KernelBody rowKernel(const KernelStep& step, const Op& anchor, const KernelArgs& args) {
  const Value* root = step.root()->result;
  const Value* x = anchor.operands[0];
  std::vector<const Op*> tail = membersFeeding(step, root, anchor.result);
  std::vector<const Op*> prologue = membersFeeding(step, x, nullptr);
  std::set<const Op*> placed(tail.begin(), tail.end());
  placed.insert(prologue.begin(), prologue.end());
  placed.insert(&anchor);
  GXC_CHECK(placed.size() == step.ops.size(),
            "kernel {}: a member is in neither the prologue nor the tail of '{}'", step.kernelAttr,
            anchor.layerName());
  const ElementwiseCode read = elementwiseValue(prologue, x, args, {}, "at", "      ", "p");
  const std::string& load = read.value;
  // What the row computes in: double for f64 (sums and statistics are double for every dtype).
  const bool wide = x->type.dtype == DType::F64;
  const std::string real = wide ? "double" : "float";
  const std::string zero = wide ? "0.0" : "0.0f";
  const std::string exp = wide ? "exp" : "expf";
  int64_t fiber = root->type.numel() / anchor.result->type.numel();
  std::string stats, anchorValue, tailLoop;
  RowLayout layout;
  bool perElement = false;  // the anchor's value differs along the row (normalizations)

  // sum, prod, max and min of integers (shape inference admits no other integer anchor): in
  // gxc_i64, never through float; gxc_fold_i64 wraps around as torch.
  const int integerFold = !isInteger(x->type.dtype)     ? -1
                          : anchor.kind == OpKind::Sum  ? 0
                          : anchor.kind == OpKind::Prod ? 1
                          : anchor.kind == OpKind::Max  ? 2
                                                        : 3;
  if (integerFold >= 0) {
    GXC_CHECK(anchor.kind == OpKind::Sum || anchor.kind == OpKind::Prod ||
                  anchor.kind == OpKind::Max || anchor.kind == OpKind::Min,
              "layer '{}': {} of integers", anchor.layerName(), opName(anchor.kind));
    layout = reductionLayout(anchor);
    stats =
        fmt::format("    gxc_i64 acc = gxc_fold_i64_identity({});\n", integerFold) +
        rowLoop(layout, read, fmt::format("acc = gxc_fold_i64(acc, {}, {});", load, integerFold)) +
        fmt::format("    acc = gxc_block_fold_i64(acc, {});\n", integerFold);
    anchorValue = "acc";
  } else {
    switch (anchor.kind) {
      case OpKind::Sum:
      case OpKind::Mean:
        layout = reductionLayout(anchor);
        stats = "    double acc = 0.0;\n" +
                rowSumLoop(layout, read, "acc += (double)" + load + ";", "acc") +
                "    acc = gxc_block_sum(acc);\n";
        anchorValue = anchor.kind == OpKind::Sum
                          ? fmt::format("({})acc", real)
                          : fmt::format("({})(acc / {}.0)", real, layout.length);
        break;
      case OpKind::Max:
        layout = reductionLayout(anchor);
        stats = "    " + real + " m = gxc_neg_inf();\n" +
                rowLoop(layout, read, "m = gxc_max(m, " + load + ");") +
                "    m = gxc_block_max(m);\n";
        anchorValue = "m";
        break;
      case OpKind::Min:
        layout = reductionLayout(anchor);
        stats = "    " + real + " m = -gxc_neg_inf();\n" +
                rowLoop(layout, read, "m = gxc_min(m, " + load + ");") +
                "    m = gxc_block_min(m);\n";
        anchorValue = "m";
        break;
      case OpKind::Prod:
        layout = reductionLayout(anchor);
        stats = "    double acc = 1.0;\n" + rowLoop(layout, read, "acc *= (double)" + load + ";") +
                "    acc = gxc_block_prod(acc);\n";
        anchorValue = fmt::format("({})acc", real);
        break;
      case OpKind::Argmax:
      case OpKind::Argmin: {
        layout = reductionLayout(anchor);
        // k runs upwards in each thread, so a thread keeps its first best; gxc_block_arg then
        // prefers the lower index among the threads' equals.
        std::string largest = anchor.kind == OpKind::Argmax ? "true" : "false";
        stats = fmt::format("    {} best = {};\n    gxc_i64 best_k = -1;\n", real, zero) +
                rowLoop(layout, read,
                        fmt::format("{{ const {} v = {}; if (gxc_arg_better(v, k, best, best_k, "
                                    "{})) {{ best = v; best_k = k; }} }}",
                                    real, load, largest)) +
                fmt::format("    best_k = gxc_block_arg(best, best_k, {});\n", largest);
        break;
      }
      case OpKind::Logsumexp:
        layout = reductionLayout(anchor);
        // torch's: the max subtracted for stability, unless it is infinite (a row of -inf is
        // -inf, not NaN).
        stats = "    " + real + " m = gxc_neg_inf();\n" +
                rowLoop(layout, read, "m = gxc_max(m, " + load + ");") +
                "    m = gxc_block_max(m);\n" +
                fmt::format(
                    "    const {} shift = (m == gxc_neg_inf() || m == -gxc_neg_inf()) ? {} : m;\n",
                    real, zero) +
                "    double s = 0.0;\n" +
                rowSumLoop(layout, read, "s += exp((double)(" + load + " - shift));", "s") +
                "    s = gxc_block_sum(s);\n";
        anchorValue = fmt::format("({})(log(s) + (double)shift)", real);
        break;
      case OpKind::Var:
      case OpKind::Std: {
        layout = reductionLayout(anchor);
        // torch.var: over max(0, n - correction), inf or NaN when that is 0.
        int64_t divisor =
            std::max<int64_t>(0, layout.length - anchor.attrs.getInt("correction", 1));
        stats = "    double s = 0.0;\n" +
                rowSumLoop(layout, read, "s += (double)" + load + ";", "s") +
                fmt::format("    const double mean = gxc_block_sum(s) / {}.0;\n", layout.length) +
                "    double q = 0.0;\n" +
                rowSumLoop(layout, read,
                           "const double d = (double)" + load + " - mean; q += d * d;", "q") +
                fmt::format("    const double var = gxc_block_sum(q) / {}.0;\n", divisor);
        anchorValue =
            fmt::format("({})({})", real, anchor.kind == OpKind::Var ? "var" : "sqrt(var)");
        break;
      }
      case OpKind::Softmax:
      case OpKind::LogSoftmax: {
        int64_t axis = *normalizeAxis(anchor.attrs.getInt("axis", -1), x->type.rank());
        layout = axisLayout(anchor, axis);
        // The max is subtracted so that exp cannot overflow; the result is the same.
        stats = "    " + real + " m = gxc_neg_inf();\n" +
                rowLoop(layout, read, "m = gxc_max(m, " + load + ");") +
                "    m = gxc_block_max(m);\n    double s = 0.0;\n" +
                rowSumLoop(layout, read, "s += (double)" + exp + "(" + load + " - m);", "s") +
                "    s = gxc_block_sum(s);\n";
        anchorValue = anchor.kind == OpKind::Softmax
                          ? fmt::format("({}(xk - m) / ({})s)", exp, real)
                          : fmt::format("((xk - m) - ({})log(s))", real);
        perElement = true;
        break;
      }
      case OpKind::LayerNorm:
      case OpKind::RmsNorm:
      case OpKind::GroupNorm: {
        RowStats norm = normRowStats(anchor, read, args);
        layout = norm.layout;
        stats = norm.stats;
        anchorValue = norm.anchorValue;
        perElement = true;
        break;
      }
      default:
        GXC_CHECK(false, "layer '{}': {} is not a row kernel's anchor", anchor.layerName(),
                  opName(anchor.kind));
    }
  }

  std::string body =
      pointerDecls(args) +
      fmt::format("  for (gxc_i64 row = blockIdx.x; row < {}; row += gridDim.x) {{\n",
                  intLiteral(layout.rows)) +
      layout.rowSetup + stats;
  LaunchShape gpu = gpuRowLaunch(layout.rows, layout.length * fiber);
  LaunchShape host = hostRowLaunch(layout.rows, layout.length);
  if (anchor.kind == OpKind::Argmax || anchor.kind == OpKind::Argmin) {
    // An i64 result: never fused (ir/fused_kernel.h), so the row is the result's index.
    GXC_CHECK(step.ops.size() == 1, "kernel {}: {} with members", step.kernelAttr,
              opName(anchor.kind));
    body += "    if (threadIdx.x == 0) out[row] = best_k;\n  }\n";
    return {familyName(step.ops), std::move(body), gpu, host};
  }

  std::map<const Value*, std::string> given{{anchor.result, "av"}};
  const Shape& anchorShape = anchor.result->type.shape;
  if (perElement) {
    tailLoop = fmt::format(
        "    for (gxc_i64 t = threadIdx.x; t < {0}; t += blockDim.x) {{\n"
        "      const gxc_i64 k = t % {1};\n"
        "      const gxc_i64 at = {2};\n"
        "{3}"
        "      const {4} xk = {5};\n"
        "      const {4} av = {6};\n",
        intLiteral(layout.length * fiber), intLiteral(layout.length), layout.elementIndex,
        read.statements, real, load, anchorValue);
    tailLoop += rootIndexOf(anchorShape, root->type.shape, "at",
                            fmt::format("t / {}", intLiteral(layout.length)), "      ");
  } else {
    tailLoop = fmt::format(
        "    for (gxc_i64 t = threadIdx.x; t < {}; t += blockDim.x) {{\n"
        "      const {} av = {};\n",
        intLiteral(fiber), computeType(anchor.result->type.dtype), anchorValue);
    tailLoop += rootIndexOf(anchorShape, root->type.shape, "row", "t", "      ");
  }
  tailLoop += elementwiseTail(tail, root, args, given, "ri", "      ") + "    }\n";

  body += tailLoop + "  }\n";
  return {familyName(step.ops), std::move(body), gpu, host};
}

}  // namespace gxc::cuda
