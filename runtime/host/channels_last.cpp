#include "runtime/host/channels_last.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace gxc {
namespace {

// A Conv step whose convolution oneDNN computes: an f32 conv2d.
bool convolvedByOneDnn(const KernelStep& step) {
  return step.kind == StepKind::Conv && step.first()->kind == OpKind::Conv2d &&
         step.first()->result->type.dtype == DType::F32;
}

// One whose epilogue oneDNN computes too: without a residual add, whose post-op may find no
// fast implementation (cpu_conv.cpp), leaving the epilogue to its generated kernel.
bool computedByOneDnn(const KernelStep& step) {
  return convolvedByOneDnn(step) &&
         std::none_of(step.ops.begin() + 1, step.ops.end(),
                      [](const Op* member) { return member->kind == OpKind::Add; });
}

}  // namespace

std::unordered_set<const Value*> channelsLastValues(const Graph& graph, const KernelSteps& steps) {
  std::unordered_map<const Value*, std::vector<const KernelStep*>> readers;
  for (const KernelStep& step : steps.steps())
    for (const Value* input : step.inputs) readers[input].push_back(&step);
  std::unordered_set<const Value*> outputs;
  for (const GraphOutput& output : graph.outputs()) outputs.insert(output.value);

  std::unordered_set<const Value*> kept;
  for (const KernelStep& step : steps.steps()) {
    const Value* value = step.root()->result;
    auto read = readers.find(value);
    if (!computedByOneDnn(step) || outputs.count(value) || read == readers.end()) continue;
    bool onlyAsImage =
        std::all_of(read->second.begin(), read->second.end(), [&](const KernelStep* reader) {
          if (!convolvedByOneDnn(*reader) || reader->first()->operands[0] != value) return false;
          // Read as the image alone: not also as the weights, or by an epilogue member.
          if (reader->first()->operands[1] == value) return false;
          return std::none_of(reader->ops.begin() + 1, reader->ops.end(), [&](const Op* member) {
            return std::find(member->operands.begin(), member->operands.end(), value) !=
                   member->operands.end();
          });
        });
    if (onlyAsImage) kept.insert(value);
  }
  return kept;
}

}  // namespace gxc
