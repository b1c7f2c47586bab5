#include "runtime/host/host_generated_kernels.h"

#include <cstring>

#include "ir/diagnostic.h"
#include "ir/infer_type.h"
#include "runtime/host/channels_last.h"
#include "runtime/host/cpu_attention.h"
#include "runtime/host/cpu_conv.h"
#include "runtime/host/cpu_gemm.h"
#include "runtime/host/cpu_layer_norm.h"
#include "runtime/host/cpu_pool.h"
#include "runtime/host/cpu_softmax.h"
#include "target/host_library.h"

namespace gxc {
namespace {

void checkIndices(const Op& op, const StepTensors& tensors) {
  if (const Value* indices = dataIndexOperand(op)) checkDataIndices(op, tensors.at(indices));
}

// The tensors of `op`'s operands, in order.
std::vector<ConstTensorView> operandsOf(const Op& op, const StepTensors& tensors) {
  std::vector<ConstTensorView> operands;
  for (const Value* operand : op.operands) operands.push_back(tensors.at(operand));
  return operands;
}

void gemm(const Op& op, const StepTensors& tensors, const TensorView& result,
          ConstantWeights* constant) {
  std::vector<ConstTensorView> operands = operandsOf(op, tensors);
  if (op.kind == OpKind::Matmul)
    cpuMatmul(op, operands, result, constant);
  else
    cpuLinear(op, operands, result, constant);
}

void checkResultType(const Op& root, const TensorView& result) {
  const TensorType& type = root.result->type;
  GXC_CHECK(result.dtype() == type.dtype && result.shape() == type.shape,
            "layer '{}': result placed as {}{}, not {}", root.layerName(),
            dtypeName(result.dtype()), shapeString(result.shape()), type.withoutDevice());
}

}  // namespace

const Value* dataIndexOperand(const Op& op) {
  if (op.kind == OpKind::Embedding) return op.operands[0];
  if (op.kind == OpKind::CrossEntropy || op.kind == OpKind::NllLoss) return op.operands[1];
  if (op.kind == OpKind::Gather || op.kind == OpKind::IndexSelect) return op.operands[1];
  if (op.kind == OpKind::OneHot) return op.operands[0];
  return nullptr;
}

void checkDataIndices(const Op& op, const ConstTensorView& indices) {
  if (op.kind == OpKind::Embedding) {
    int64_t rows = op.operands[1]->type.shape[0];
    for (int64_t i = 0; i < indices.numel(); ++i) {
      int64_t row = indices.loadInt(i);
      if (row < 0 || row >= rows)
        runtimeError(op.loc, "layer '{}': embedding index {} is out of range [0, {})",
                     op.layerName(), row, rows);
    }
  }
  if (op.kind == OpKind::Gather || op.kind == OpKind::IndexSelect || op.kind == OpKind::OneHot) {
    // torch refuses negative indices here too (gather's "index -1 is out of bounds").
    int64_t bound = op.kind == OpKind::OneHot
                        ? op.attrs.getInt("num_classes", 0)
                        : op.operands[0]->type.shape.at(static_cast<size_t>(*normalizeAxis(
                              op.attrs.getInt("axis", 0), op.operands[0]->type.rank())));
    for (int64_t i = 0; i < indices.numel(); ++i) {
      int64_t at = indices.loadInt(i);
      if (at < 0 || at >= bound)
        runtimeError(op.loc, "layer '{}': {} index {} is out of range [0, {})", op.layerName(),
                     opName(op.kind), at, bound);
    }
  }
  if (op.kind == OpKind::CrossEntropy || op.kind == OpKind::NllLoss) {
    int64_t classes = op.operands[0]->type.shape[1];
    int64_t ignoreIndex = op.attrs.getInt("ignore_index", -100);
    for (int64_t i = 0; i < indices.numel(); ++i) {
      int64_t t = indices.loadInt(i);
      if ((t < 0 || t >= classes) && t != ignoreIndex)
        runtimeError(op.loc, "layer '{}': {} target {} of sample {} is out of range [0, {})",
                     op.layerName(), opName(op.kind), t, i, classes);
    }
  }
}

HostGeneratedKernels::HostGeneratedKernels(const Graph& graph, KernelCache cache,
                                           HostLaunchMode mode)
    : steps_(graph),
      source_(generateCudaSource(graph)),
      cache_(std::move(cache)),
      mode_(mode),
      channelsLast_(mode.emulateBlocks ? std::unordered_set<const Value*>()
                                       : channelsLastValues(graph, steps_)) {
  if (source_.kernels.empty()) return;  // nothing to build: GEMMs, copies and views only
  library_ = std::make_unique<HostKernelLibrary>(source_.text, cache_, mode_.emulateBlocks);
  for (const CudaKernel& kernel : source_.kernels) {
    const Op* root = kernel.ops.back();
    HostLibraryCall call =
        kernel.ops.size() == 1 && !mode_.emulateBlocks ? hostLibraryCallFor(*root) : nullptr;
    byRoot_[root] = {&kernel, library_->kernel(kernel.name), call};
  }
}

void HostGeneratedKernels::launch(const Loaded& loaded, const TensorView& output,
                                  const StepTensors& tensors) const {
  HostKernelArgs args;
  args.p[0] = output.data();
  for (size_t i = 0; i < loaded.kernel->inputs.size(); ++i)
    args.p[i + 1] = const_cast<std::byte*>(tensors.at(loaded.kernel->inputs[i]).data());
  if (!mode_.emulateBlocks) {
    library_->launch(loaded.function, args, loaded.kernel->host.grid);
    return;
  }
  const LaunchShape& gpu = loaded.kernel->gpu;
  int64_t block = mode_.block > 0 ? mode_.block : gpu.block;
  std::vector<std::pair<const void*, int64_t>> buffers{{output.data(), output.nbytes()}};
  for (const Value* input : loaded.kernel->inputs) {
    const ConstTensorView& tensor = tensors.at(input);
    buffers.push_back({tensor.data(), tensor.nbytes()});
  }
  std::string error = library_->emulatedLaunch(loaded.function, args, gpu.grid, block, buffers);
  if (!error.empty()) {
    const Op& root = *loaded.kernel->ops.back();
    runtimeError(root.loc, "layer '{}': kernel {} ({} blocks of {} threads, emulated): {}",
                 root.layerName(), loaded.kernel->name, gpu.grid, block, error);
  }
}

void HostGeneratedKernels::run(const KernelStep& step, const std::vector<ConstTensorView>& inputs,
                               const TensorView& result, ConstantWeights* constant) const {
  GXC_CHECK(inputs.size() == step.inputs.size(), "step '{}' given {} tensors for {} inputs",
            step.root()->layerName(), inputs.size(), step.inputs.size());
  const Op& root = *step.root();
  checkResultType(root, result);
  StepTensors tensors(step.inputs, inputs);
  switch (step.kind) {
    case StepKind::Param:
      GXC_CHECK(false, "param '{}' is materialized, not run", root.layerName());
      return;
    case StepKind::Copy:
      GXC_CHECK(inputs.at(0).nbytes() == result.nbytes(), "copy '{}' of {} bytes into {}",
                root.layerName(), inputs.at(0).nbytes(), result.nbytes());
      if (result.nbytes() > 0) std::memcpy(result.data(), inputs[0].data(), result.nbytes());
      return;
    case StepKind::Assign: {
      const ConstTensorView& value = tensors.at(root.operands[1]);
      GXC_CHECK(value.nbytes() == result.nbytes(), "assign '{}' of {} bytes into {}",
                root.layerName(), value.nbytes(), result.nbytes());
      if (result.nbytes() > 0 && result.data() != value.data())
        std::memcpy(result.data(), value.data(), result.nbytes());
      return;
    }
    case StepKind::View:
      // Nothing to compute: the executor placed the view on its operand's bytes.
      GXC_CHECK(result.nbytes() == 0 || result.data() == inputs.at(0).data() + viewByteOffset(root),
                "view '{}' is not placed on its operand's bytes", root.layerName());
      return;
    case StepKind::Gemm: {
      // A fused epilogue rides in oneDNN's matmul as post-ops where they apply (f32), else
      // its generated kernel runs on the GEMM's result, in place. Emulating GPU blocks runs
      // the generated epilogue: what the cuda platform runs where cuBLASLt has no epilogue.
      const Op& first = *step.first();
      if (step.ops.size() > 1 && !mode_.emulateBlocks) {
        std::vector<const Op*> epilogue(step.ops.begin() + 1, step.ops.end());
        if (cpuGemmWithEpilogue(first, operandsOf(first, tensors), result, constant, epilogue,
                                tensors))
          return;
      }
      gemm(first, tensors, result, constant);
      if (step.ops.size() == 1) return;
      // The epilogue reads the GEMM's product as its first input, from the result's bytes.
      const ConstTensorView product = result;
      tensors.set(first.result, &product);
      launch(byRoot_.at(&root), result, tensors);
      return;
    }
    case StepKind::Conv: {
      // oneDNN has no f64 convolution: f64 runs the generated direct convolution, in double
      // (a documented dtype rule of the cpu platform, docs/model-format.md). Emulating GPU
      // blocks runs the generated kernels too: what the cuda platform runs where cuDNN does not.
      // A fused epilogue rides in oneDNN's primitive as post-ops where they apply, else its
      // kernel runs on the convolution's result, in place.
      const Op& conv = *step.first();
      if (conv.result->type.dtype == DType::F64 || mode_.emulateBlocks) {
        launch(byRoot_.at(&conv), result, tensors);
      } else {
        std::vector<ConstTensorView> operands = operandsOf(conv, tensors);
        std::vector<const Op*> epilogue(step.ops.begin() + 1, step.ops.end());
        const Value* residual = epilogue.empty() ? nullptr : epilogueResidual(step);
        const ConvLayouts layouts{channelsLast_.count(conv.operands[0]) != 0,
                                  channelsLast_.count(root.result) != 0,
                                  residual && channelsLast_.count(residual) != 0};
        if (!epilogue.empty() && cpuConvolutionWithEpilogue(conv, operands, result, constant,
                                                            epilogue, tensors, layouts))
          return;
        GXC_CHECK(epilogue.empty() || !(layouts.resultChannelsLast || layouts.residualChannelsLast),
                  "layer '{}': channels-last bytes given to a generated epilogue",
                  root.layerName());
        cpuConvolution(conv, operands, result, constant, layouts);
      }
      if (step.ops.size() == 1) return;
      const ConstTensorView product = result;  // the epilogue, on the convolution's result
      tensors.set(conv.result, &product);
      launch(byRoot_.at(&root), result, tensors);
      return;
    }
    case StepKind::Generated: {
      for (const Op* op : step.ops) checkIndices(*op, tensors);
      const Loaded& loaded = byRoot_.at(&root);
      if (loaded.libraryCall && root.kind == OpKind::MaxPool2d)  // its bytes may be channels-last
        cpuMaxPool(
            root, tensors.at(root.operands[0]), result,
            {channelsLast_.count(root.operands[0]) != 0, channelsLast_.count(root.result) != 0});
      else if (loaded.libraryCall)
        loaded.libraryCall(root, operandsOf(root, tensors), result);
      else
        launch(loaded, result, tensors);
      return;
    }
  }
}

HostLibraryCall hostLibraryCallFor(const Op& op) {
  switch (op.kind) {
    case OpKind::ScaledDotProductAttention:
      return cpuAttentionPays(op) ? &cpuAttention : nullptr;
    case OpKind::LayerNorm:
      return isHostLibraryRowOp(op) ? &cpuLayerNorm : nullptr;
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return isHostLibraryRowOp(op) ? &cpuSoftmax : nullptr;
    case OpKind::MaxPool2d:
      return cpuMaxPoolApplies(op) ? &cpuMaxPoolNchw : nullptr;
    default:
      return nullptr;
  }
}

void HostGeneratedKernels::runGeneratedKernel(const KernelStep& step,
                                              const std::vector<ConstTensorView>& inputs,
                                              const TensorView& result) const {
  GXC_CHECK(step.kind == StepKind::Conv || step.kind == StepKind::Generated,
            "step '{}' has no generated kernel", step.root()->layerName());
  GXC_CHECK(inputs.size() == step.inputs.size(), "step '{}' given {} tensors for {} inputs",
            step.root()->layerName(), inputs.size(), step.inputs.size());
  checkResultType(*step.root(), result);
  StepTensors tensors(step.inputs, inputs);
  if (step.kind == StepKind::Generated) {  // one kernel for all its ops
    launch(byRoot_.at(step.root()), result, tensors);
    return;
  }
  launch(byRoot_.at(step.first()), result, tensors);
  if (step.ops.size() == 1) return;
  const ConstTensorView product = result;  // the epilogue, on the convolution's result
  tensors.set(step.first()->result, &product);
  launch(byRoot_.at(step.root()), result, tensors);
}

}  // namespace gxc
