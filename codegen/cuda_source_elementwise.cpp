// Elementwise kernels: one op, a fused chain or tree of them, or a GEMM's epilogue. One
// thread per element of the root's result, over a grid-stride loop; every member is computed
// at that element (a member of a smaller shape broadcasts into the root's, so its value there
// is its value at the broadcast coordinates; batch_norm reads its per-channel params at the
// channel's coordinate), and only the root is stored.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

// How many of root's first dims a vectorized host loop keeps outside its runs (InnerRuns):
// the fewest that leave every operand read other than at root's index fixed over a run or
// spanning it, with runs of kHostSimdRun to INT_MAX elements. 0 where there is none, or where
// the flat loop gathers nothing (every read at root's index, or at a constant channel).
size_t outerDimsOfRuns(const std::vector<const Op*>& members, const Value& root) {
  const Shape& rootShape = root.type.shape;
  std::set<const Op*> memberSet(members.begin(), members.end());
  size_t fewest = 1;  // below it, a channelwise op's channel would vary within a run
  bool gathers = false;
  std::vector<const Shape*> broadcast;
  for (const Op* op : members) {
    for (size_t i = 0; i < op->operands.size(); ++i) {
      const Value& operand = *op->operands[i];
      if (isChannelwise(op->kind) && i > 0) {
        if (op->result->type.shape[1] == 1) continue;
        fewest = std::max(fewest, rootShape.size() - op->result->type.shape.size() + 2);
        gathers = true;
      } else if (!(operand.producer && memberSet.count(operand.producer)) &&
                 operand.type.shape != rootShape) {
        broadcast.push_back(&operand.type.shape);
        gathers = true;
      }
    }
  }
  if (!gathers) return 0;
  for (size_t outer = fewest; outer < rootShape.size(); ++outer) {
    int64_t run = 1;
    for (size_t d = outer; d < rootShape.size(); ++d) run *= rootShape[d];
    if (run < kHostSimdRun) break;                        // more outer dims only shorten the runs
    if (run > std::numeric_limits<int>::max()) continue;  // GXC_RUN's index is an int
    bool fits = std::all_of(broadcast.begin(), broadcast.end(), [&](const Shape* shape) {
      return fixedOverInnerDims(*shape, rootShape, outer) ||
             spansInnerDims(*shape, rootShape, outer);
    });
    if (fits) return outer;
  }
  return 0;
}

// The loop of an elementwise kernel over root's elements in `runs` runs of its last dims
// from `outerDims` on.
std::string runsLoop(const std::vector<const Op*>& members, const Value& root,
                     const KernelArgs& args, size_t outerDims, int64_t runs) {
  const Shape& shape = root.type.shape;
  Shape outerShape(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(outerDims));
  const int64_t run = root.type.numel() / runs;
  std::string inner =
      fmt::format("      const gxc_i64 i = o * {} + j;\n", intLiteral(run)) +
      elementwiseTail(members, &root, args, {}, "i", "      ", InnerRuns{outerDims, "j"});
  return fmt::format("  GXC_RUNS(o, j, {}, {}) {{\n", intLiteral(runs), intLiteral(run)) +
         unravel("o", outerShape, "c", "    ", inner) +
         fmt::format("    GXC_RUN(j, {}) {{\n", intLiteral(run)) + inner + "    }\n  }\n";
}

KernelBody elementwiseBody(const std::vector<const Op*>& members, const KernelArgs& args,
                           std::string family) {
  const Value* root = members.back()->result;
  for (const Op* op : members)
    GXC_CHECK(isElementwise(op->kind) || isChannelwise(op->kind),
              "layer '{}': {} in an elementwise kernel", op->layerName(), opName(op->kind));
  const int64_t count = root->type.numel();
  const int64_t work = elementWork(members);
  const bool simd = count * work >= kHostSimdElements;
  LaunchShape host = hostElementwiseLaunch(count, work);
  std::string body = pointerDecls(args);
  // Vectorized on the host, the loop runs in runs where that spares it gathers, else flat.
  if (size_t outerDims = simd ? outerDimsOfRuns(members, *root) : 0; outerDims > 0) {
    int64_t runs = 1;
    for (size_t d = 0; d < outerDims; ++d) runs *= root->type.shape[d];
    host.grid = std::min(host.grid, runs);
    body += runsLoop(members, *root, args, outerDims, runs);
  } else {
    body += gridStrideLoop("i", count, "  ", simd) +
            elementwiseTail(members, root, args, {}, "i", "    ",
                            InnerRuns{0, "", gridStrideIndexType(count, simd)}) +
            "  }\n";
  }
  return {std::move(family), std::move(body), gpuElementwiseLaunch(count), host};
}

}  // namespace

KernelBody elementwiseKernel(const KernelStep& step, const KernelArgs& args) {
  return elementwiseBody(step.ops, args, familyName(step.ops));
}

KernelBody epilogueKernel(const KernelStep& step, const KernelArgs& args) {
  // inputs[0] is the GEMM's result: the members after the GEMM read it as any other input.
  std::vector<const Op*> members(step.ops.begin() + 1, step.ops.end());
  GXC_CHECK(!members.empty(), "GEMM '{}' has no epilogue", step.first()->layerName());
  return elementwiseBody(members, args, familyName(step.ops) + "_epilogue");
}

}  // namespace gxc::cuda
