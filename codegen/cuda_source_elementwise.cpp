// Elementwise kernels: one op, a fused chain or tree of them, or a GEMM's epilogue. One
// thread per element of the root's result, over a grid-stride loop; every member is computed
// at that element (a member of a smaller shape broadcasts into the root's, so its value there
// is its value at the broadcast coordinates; batch_norm reads its per-channel params at the
// channel's coordinate), and only the root is stored.
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

KernelBody elementwiseBody(const std::vector<const Op*>& members, const KernelArgs& args,
                           std::string family) {
  const Value* root = members.back()->result;
  for (const Op* op : members)
    GXC_CHECK(isElementwise(op->kind) || isChannelwise(op->kind),
              "layer '{}': {} in an elementwise kernel", op->layerName(), opName(op->kind));
  int64_t count = root->type.numel();
  int64_t work = elementWork(members);
  std::string body = pointerDecls(args) +
                     gridStrideLoop("i", count, "  ", count >= kHostSimdElements) +
                     elementwiseTail(members, root, args, {}, "i", "    ") + "  }\n";
  return {std::move(family), std::move(body), gpuElementwiseLaunch(count),
          hostElementwiseLaunch(count, work)};
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
