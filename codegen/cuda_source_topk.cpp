// Kernels of `topk` (the values) and `topk_indices` (their positions): one thread per line
// along the axis, which picks its k results in order, each the first element of the line
// after the previous pick in gxc_topk_before's strict order (so ties and NaN come out as the
// reference gives them). k passes over the line and no scratch memory: O(k * size) per line,
// fine for the small k of classifiers and samplers; a block-wide selection over long lines
// would be the next step. The two results are two kernels doing the same selection: a kernel
// has one output (ir/kernel_steps.h).
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"
#include "ir/infer_type.h"

namespace gxc::cuda {

KernelBody topkKernel(const Op& op, const KernelArgs& args) {
  const TensorType& x = op.operands[0]->type;
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", -1), x.rank());
  int64_t k = op.attrs.getInt("k", 0), size = x.shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
  int64_t lines = x.numel() / size;
  std::string largest = op.attrs.getBool("largest", true) ? "true" : "false";
  std::string type = computeType(x.dtype);
  auto at = [&](const std::string& position) {
    return loadElement(x.dtype, "in1", fmt::format("start + {} * {}", position, intLiteral(inner)));
  };
  // The values are x's elements, stored as they are (bit for bit); the indices are i64.
  std::string store = op.kind == OpKind::TopkIndices
                          ? "out[to] = best;"
                          : fmt::format("out[to] = in1[start + best * {}];", intLiteral(inner));
  // Where line `line` starts in x and in the result: lines along the last axis are rows.
  auto lineStart = [&](int64_t length) {
    return inner == 1 ? fmt::format("line * {}", intLiteral(length))
                      : fmt::format("line / {0} * {1} + line % {0}", intLiteral(inner),
                                    intLiteral(length * inner));
  };
  std::string body =
      pointerDecls(args) + gridStrideLoop("line", lines, "  ") +
      fmt::format("    const gxc_i64 start = {};\n    const gxc_i64 out_start = {};\n",
                  lineStart(size), lineStart(k)) +
      fmt::format(
          "    gxc_i64 previous = -1;\n"
          "    for (gxc_i64 j = 0; j < {k}; ++j) {{\n"
          "      gxc_i64 best = -1;\n"
          "      for (gxc_i64 i = 0; i < {size}; ++i) {{\n"
          "        const {type} v = {loadI};\n"
          "        if (previous >= 0 && !gxc_topk_before<{type}>({loadPrevious}, previous, v, i, "
          "{largest})) continue;\n"
          "        if (best < 0 || gxc_topk_before<{type}>(v, i, {loadBest}, best, {largest})) "
          "best = i;\n"
          "      }}\n"
          "      const gxc_i64 to = out_start + j * {inner};\n"
          "      {store}\n"
          "      previous = best;\n"
          "    }}\n"
          "  }}\n",
          fmt::arg("inner", intLiteral(inner)), fmt::arg("k", intLiteral(k)),
          fmt::arg("size", intLiteral(size)), fmt::arg("type", type), fmt::arg("loadI", at("i")),
          fmt::arg("loadPrevious", at("previous")), fmt::arg("loadBest", at("best")),
          fmt::arg("largest", largest), fmt::arg("store", store));
  return {std::string(opName(op.kind)), std::move(body), gpuElementwiseLaunch(lines), {1, 1}};
}

}  // namespace gxc::cuda
