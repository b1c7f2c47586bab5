#include "runtime/host/host_generated_kernels.h"

#include <cstring>

#include "ir/diagnostic.h"
#include "runtime/host/cpu_gemm.h"

namespace gxc {
namespace {

void checkIndices(const Op& op, const std::map<const Value*, const Tensor*>& tensors) {
  if (const Value* indices = dataIndexOperand(op)) checkDataIndices(op, *tensors.at(indices));
}

Tensor gemm(const Op& op, const std::map<const Value*, const Tensor*>& tensors) {
  std::vector<const Tensor*> operands;
  for (const Value* operand : op.operands) operands.push_back(tensors.at(operand));
  return op.kind == OpKind::Matmul ? cpuMatmul(op, operands) : cpuLinear(op, operands);
}

Tensor view(const Op& op, const Tensor& input) {
  const TensorType& type = op.result->type;
  if (op.kind == OpKind::Reshape) return input.reshaped(type.shape);
  // A slice along axis 0: rows [start, end) are one contiguous range.
  Tensor result(type.dtype, type.shape);
  size_t rowBytes = input.nbytes() / static_cast<size_t>(input.shape()[0]);
  std::memcpy(result.data(),
              input.data() + static_cast<size_t>(op.attrs.getInt("start", 0)) * rowBytes,
              result.nbytes());
  return result;
}

}  // namespace

const Value* dataIndexOperand(const Op& op) {
  if (op.kind == OpKind::Embedding) return op.operands[0];
  if (op.kind == OpKind::CrossEntropy) return op.operands[1];
  return nullptr;
}

void checkDataIndices(const Op& op, const Tensor& indices) {
  if (op.kind == OpKind::Embedding) {
    int64_t rows = op.operands[1]->type.shape[0];
    for (int64_t i = 0; i < indices.numel(); ++i) {
      int64_t row = indices.loadInt(i);
      if (row < 0 || row >= rows)
        runtimeError(op.loc, "layer '{}': embedding index {} is out of range [0, {})",
                     op.layerName(), row, rows);
    }
  }
  if (op.kind == OpKind::CrossEntropy) {
    int64_t classes = op.operands[0]->type.shape[1];
    for (int64_t i = 0; i < indices.numel(); ++i) {
      int64_t t = indices.loadInt(i);
      if (t < 0 || t >= classes)
        runtimeError(op.loc,
                     "layer '{}': cross_entropy target {} of sample {} is out of range [0, {})",
                     op.layerName(), t, i, classes);
    }
  }
}

HostGeneratedKernels::HostGeneratedKernels(const Graph& graph, KernelCache cache)
    : steps_(graph), source_(generateCudaSource(graph)), cache_(std::move(cache)) {
  if (source_.kernels.empty()) return;  // nothing to build: GEMMs, copies and views only
  library_ = std::make_unique<HostKernelLibrary>(source_.text, cache_);
  for (const CudaKernel& kernel : source_.kernels)
    byRoot_[kernel.ops.back()] = {&kernel, library_->kernel(kernel.name)};
}

void HostGeneratedKernels::launch(const Loaded& loaded, Tensor& output,
                                  const std::map<const Value*, const Tensor*>& tensors) const {
  HostKernelArgs args;
  args.p[0] = output.data();
  for (size_t i = 0; i < loaded.kernel->inputs.size(); ++i)
    args.p[i + 1] = const_cast<std::byte*>(tensors.at(loaded.kernel->inputs[i])->data());
  library_->launch(loaded.function, args, loaded.kernel->host.grid);
}

Tensor HostGeneratedKernels::run(const KernelStep& step,
                                 const std::vector<const Tensor*>& inputs) const {
  GXC_CHECK(inputs.size() == step.inputs.size(), "step '{}' given {} tensors for {} inputs",
            step.root()->layerName(), inputs.size(), step.inputs.size());
  std::map<const Value*, const Tensor*> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) tensors[step.inputs[i]] = inputs[i];
  const Op& root = *step.root();
  switch (step.kind) {
    case StepKind::Param:
      GXC_CHECK(false, "param '{}' is materialized, not run", root.layerName());
      break;
    case StepKind::Copy:
      return *inputs.at(0);
    case StepKind::View:
      return view(root, *inputs.at(0));
    case StepKind::Gemm: {
      Tensor product = gemm(*step.first(), tensors);
      if (step.ops.size() == 1) return product;
      // The epilogue reads the GEMM's result as its first input.
      tensors[step.first()->result] = &product;
      Tensor result(root.result->type.dtype, root.result->type.shape);
      launch(byRoot_.at(&root), result, tensors);
      return result;
    }
    case StepKind::Generated: {
      for (const Op* op : step.ops) checkIndices(*op, tensors);
      Tensor result(root.result->type.dtype, root.result->type.shape);
      launch(byRoot_.at(&root), result, tensors);
      return result;
    }
  }
  return {};
}

}  // namespace gxc
