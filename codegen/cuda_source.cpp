// From the graph's steps to one translation unit of kernels (see cuda_source.h): each step
// that needs a kernel goes to its family, the kernel is named after its ops and a hash of its
// text, and a text already written under that name is not written again.
#include "codegen/cuda_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"
#include "ir/kernel_steps.h"
#include "ir/pool_geometry.h"

namespace gxc {
namespace {

using cuda::KernelArgs;
using cuda::KernelBody;

bool isRowAnchor(OpKind kind) {
  return isReduction(kind) || kind == OpKind::Softmax || kind == OpKind::LogSoftmax ||
         kind == OpKind::LayerNorm || kind == OpKind::RmsNorm || kind == OpKind::GroupNorm;
}

bool isMovement(OpKind kind) {
  return kind == OpKind::Transpose || kind == OpKind::Slice || kind == OpKind::Concat ||
         kind == OpKind::Embedding || kind == OpKind::Expand || kind == OpKind::Triu ||
         kind == OpKind::Tril;
}

bool isIndexing(OpKind kind) {
  return kind == OpKind::Gather || kind == OpKind::IndexSelect || kind == OpKind::OneHot ||
         kind == OpKind::Pad || kind == OpKind::Repeat || kind == OpKind::Cumsum ||
         kind == OpKind::Dropout;
}

uint64_t fnv1a(std::string_view bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// Whether the step's first op is a library call (cuBLAS, oneDNN, cuDNN) whose result the
// step's generated kernel, its epilogue, reads: a GEMM, or a convolution with members.
bool libraryFirst(const KernelStep& step) {
  return step.kind == StepKind::Gemm || (step.kind == StepKind::Conv && step.ops.size() > 1);
}

// A fused convolution's convolution alone: its generated kernel, which runs where no library
// takes it (f64, emulated GPU blocks, a geometry cuDNN refuses) before the epilogue kernel.
KernelStep convolutionAlone(const KernelStep& step) {
  KernelStep alone{StepKind::Conv, "", {step.first()}, {}};
  for (const Value* operand : step.first()->operands)
    if (std::find(alone.inputs.begin(), alone.inputs.end(), operand) == alone.inputs.end())
      alone.inputs.push_back(operand);
  return alone;
}

// A fused kernel (the representation the fuse pass writes, ir/fused_kernel.h) is a GEMM or a
// convolution with its elementwise epilogue, one row anchor with elementwise members around
// it, or elementwise members only; the anchor, else the first member, decides the family.
KernelBody generate(const KernelStep& step, const KernelArgs& args) {
  const Op& first = *step.first();
  const Op* anchor = nullptr;
  for (const Op* op : step.ops) {
    if (libraryFirst(step) && op == &first) continue;
    if (step.ops.size() > 1 && isRowAnchor(op->kind)) {
      GXC_CHECK(!anchor && !libraryFirst(step), "kernel {}: member '{}' ({}) is a second anchor",
                step.kernelAttr, op->layerName(), opName(op->kind));
      anchor = op;
      continue;
    }
    GXC_CHECK(step.ops.size() == 1 || isElementwise(op->kind) || isChannelwise(op->kind),
              "kernel {}: member '{}' ({}) is neither elementwise nor its anchor", step.kernelAttr,
              op->layerName(), opName(op->kind));
  }
  if (libraryFirst(step)) return cuda::epilogueKernel(step, args);
  if (anchor) return cuda::rowKernel(step, *anchor, args);
  if (isElementwise(first.kind) || isChannelwise(first.kind))
    return cuda::elementwiseKernel(step, args);
  if (isRowAnchor(first.kind)) return cuda::rowKernel(step, first, args);
  GXC_CHECK(step.ops.size() == 1, "kernel {}: {} cannot be fused", step.kernelAttr,
            opName(first.kind));
  if (isMovement(first.kind)) return cuda::movementKernel(first, args);
  if (first.kind == OpKind::ScaledDotProductAttention) return cuda::attentionKernel(first, args);
  if (isIndexing(first.kind)) return cuda::indexingKernel(first, args);
  if (first.kind == OpKind::Conv2d || first.kind == OpKind::ConvTranspose2d)
    return cuda::convKernel(first, args);
  if (isPool2d(first.kind) || isPool2dBackward(first.kind)) return cuda::poolKernel(first, args);
  if (first.kind == OpKind::Topk || first.kind == OpKind::TopkIndices)
    return cuda::topkKernel(first, args);
  return cuda::lossKernel(first, args);
}

KernelArgs argumentsOf(const KernelStep& step) {
  KernelArgs args;
  args.output = step.root()->result;
  if (!libraryFirst(step)) {
    args.inputs = step.inputs;
    return args;
  }
  // An epilogue reads the GEMM's or convolution's result first, then what its own members read from
  // outside.
  args.inputs.push_back(step.first()->result);
  for (size_t i = 1; i < step.ops.size(); ++i)
    for (const Value* operand : step.ops[i]->operands) {
      bool internal = operand->producer && std::find(step.ops.begin(), step.ops.end(),
                                                     operand->producer) != step.ops.end();
      if (!internal &&
          std::find(args.inputs.begin(), args.inputs.end(), operand) == args.inputs.end())
        args.inputs.push_back(operand);
    }
  return args;
}

}  // namespace

CudaSource generateCudaSource(const Graph& graph) {
  KernelSteps steps(graph);
  CudaSource source;
  struct Definition {
    std::string name, body;
    std::vector<std::string> layers;  // the steps it computes, by their root's layer
    LaunchShape gpu, host;
  };
  std::vector<Definition> definitions;
  std::map<std::string, size_t> byName;
  const auto add = [&](const KernelStep& step, bool epilogue) {
    for (const Op* op : step.ops)
      GXC_CHECK(op->result->type.known, "layer '{}' has no type: codegen before infer-shapes",
                op->layerName());
    KernelArgs args = argumentsOf(step);
    if (1 + args.inputs.size() > static_cast<size_t>(kMaxKernelArgs))
      runtimeError(step.root()->loc,
                   "layer '{}': its kernel reads {} tensors; at most {} can be passed",
                   step.root()->layerName(), args.inputs.size(), kMaxKernelArgs - 1);
    KernelBody body = generate(step, args);
    std::string name =
        fmt::format("gxc_{}_{:012x}", body.family, fnv1a(body.body) & 0xffffffffffffull);
    auto [it, fresh] = byName.emplace(name, definitions.size());
    if (fresh) definitions.push_back({name, body.body, {}, body.gpu, body.host});
    Definition& definition = definitions[it->second];
    GXC_CHECK(definition.body == body.body, "two kernels hash to the name {}", name);
    // A fused kernel shows what it computes: "attn (fused k0: scaled, attn)".
    std::vector<std::string> members;
    for (const Op* op : step.ops) members.push_back(op->layerName());
    definition.layers.push_back(step.ops.size() == 1
                                    ? step.root()->layerName()
                                    : fmt::format("{} (fused {}: {})", step.root()->layerName(),
                                                  step.kernelAttr, fmt::join(members, ", ")));
    source.kernels.push_back(
        {name, step.ops, args.output, args.inputs, epilogue, body.gpu, body.host});
  };
  for (const KernelStep& step : steps.steps()) {
    if (step.kind == StepKind::Generated || (step.kind == StepKind::Conv && step.ops.size() == 1))
      add(step, false);
    if (step.kind == StepKind::Conv && step.ops.size() > 1) add(convolutionAlone(step), false);
    if (libraryFirst(step) && step.ops.size() > 1) add(step, true);
  }
  source.text = fmt::format(
      "#include \"gxc_kernel.h\"\n\n// Kernels of graph @{}: {} distinct, {} launches.\n",
      graph.name(), definitions.size(), source.kernels.size());
  for (const Definition& definition : definitions)
    source.text += fmt::format(
        "\n// {}: GPU grid {} x {} threads, host grid {}\n"
        "extern \"C\" __global__ void {}(GxcArgs args) {{\n{}}}\n",
        fmt::join(definition.layers, ", "), definition.gpu.grid, definition.gpu.block,
        definition.host.grid, definition.name, definition.body);
  return source;
}

int definedKernelCount(std::string_view text) {
  constexpr std::string_view kDefinition = "extern \"C\" __global__ void ";
  int count = 0;
  for (size_t at = text.find(kDefinition); at != std::string_view::npos;
       at = text.find(kDefinition, at + kDefinition.size()))
    ++count;
  return count;
}

}  // namespace gxc
